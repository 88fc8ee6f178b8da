/*
 * open_apple_models.h - C client library for the open-apple-models bridge.
 *
 * libopen_apple_models spawns the bridge executable (`oam stdio`, or
 * `deno run ... cli.ts stdio`) and speaks its JSON-RPC 2.0 protocol over the
 * child's stdin/stdout, one JSON object per line. The wire contract is
 * PROTOCOL.md. The functions keep the C ABI of the reference
 * libOpenAppleModelsFFI, so engine code written against it works unchanged:
 *
 *   static void on_message(const char *json_line, void *user_data) {
 *       // Copy json_line and hand it to your main thread (see THREADING).
 *   }
 *
 *   oam_bridge *bridge = oam_bridge_create(on_message, my_context);
 *   oam_bridge_send(bridge, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}");
 *   char *response = oam_call_blocking(bridge, "{\"method\":\"ping\"}", 5000);
 *   oam_string_free(response);
 *   oam_bridge_destroy(bridge);
 *
 * WHICH BRIDGE IS STARTED
 *   oam_bridge_create() builds the command line from the environment, first
 *   match wins:
 *     OAM_BRIDGE_COMMAND  the whole argv, separated by spaces (no quoting), e.g.
 *                         "deno run --allow-read --allow-env --allow-ffi /path/cli.ts stdio"
 *     OAM_BRIDGE_PATH     path of the compiled `oam` executable; argv is
 *                         "<path> stdio"
 *     otherwise           "oam stdio", looked up on PATH
 *   With OAM_BRIDGE_PATH or the default, OAM_BRIDGE_LOG=debug|info|warning|error
 *   adds "--log-level <level>" (the bridge logs to stderr: see THE BRIDGE'S STDERR).
 *   The values are taken as UTF-8, on Windows too (read as UTF-16 and
 *   converted), so a path with non-ASCII characters works there.
 *   oam_bridge_create_with_command() takes the argv directly (paths with
 *   spaces, custom flags).
 *
 * THE BRIDGE'S STDERR
 *   The bridge writes its log and its startup errors (a misspelt flag, a
 *   missing model file) to stderr. The library reads that pipe on a thread
 *   of its own and passes each line on, unchanged, to this process's stderr
 *   (fd 2; on Windows the handle GetStdHandle(STD_ERROR_HANDLE) gives, as
 *   UTF-16 through WriteConsoleW when it is a console) as it comes, so
 *   what you saw when the bridge wrote there itself you still see, and a
 *   chatty bridge never blocks on a full pipe. It keeps the last 3 lines
 *   that are not blank (each up to 1 KiB, then "...") for the error of a
 *   bridge that exits by itself (see LIFETIME), so a game whose editor shows
 *   no stderr still learns why. The thread ends with the bridge's stderr;
 *   oam_bridge_destroy() stops and joins it (after up to 1 s for a process
 *   the bridge started that still holds the pipe open).
 *
 * MEMORY
 *   - Strings passed IN (json_line, request_json, argv) are borrowed only for
 *     the duration of the call; the library copies what it needs.
 *   - The json_line passed to your callback is valid ONLY until the callback
 *     returns. Copy it if you need it later. Do not free it.
 *   - oam_call_blocking() and oam_json_quote() return a heap string you
 *     own: release it with oam_string_free() (not free(): the host may use
 *     another allocator).
 *     One you forget shows up in a leak checker as allocated on the
 *     library's reader thread (reader_main), which copied the response.
 *   - oam_version() returns a static string. Do not free it.
 *   - user_data is opaque to the library; it must stay valid until
 *     oam_bridge_destroy() returns.
 *
 * THREADING
 *   - All functions may be called from any thread.
 *   - oam_bridge_send() never blocks: it queues one line and returns, and a
 *     writer thread owned by the library writes the queue to the bridge's
 *     stdin. Also a bridge that stopped reading its input (frozen, stopped
 *     in a debugger) with its pipe full does not hold the calling thread
 *     (the game thread): the lines wait in memory until it reads again or
 *     is destroyed. The same goes for the request of oam_call_blocking()
 *     (its timeout counts also while the line waits). The waiting lines are
 *     limited to four of the longest lines the bridge reads (4 times the
 *     --max-line-bytes of its command: 64 MiB by default; build with
 *     -DOAM_MAX_QUEUED_BYTES=<bytes> for a fixed limit): a request or notification that would go past it is
 *     not sent, and oam_bridge_send() returns OAM_ERROR_QUEUE_FULL, or
 *     oam_call_blocking() returns at once a -32010 error response (data.code
 *     "busy", data.limit the limit in bytes, the message "The bridge is not
 *     reading its input (frozen or stopped?): ... '<method>' was not sent.").
 *     A line is always taken when none waits, and a response (the answer to
 *     a tool/call) is always taken. Once the bridge reads again, sends go
 *     again. Requests are handled
 *     in the order they were sent; long ones (session/respond) run
 *     concurrently with later ones.
 *   - The callback runs on one reader thread owned by the library, never
 *     concurrently with itself and never re-entered. For any request, all of
 *     its notifications and tool/call requests arrive before its response.
 *     Engines with a main-thread-only API (Unity, Godot, Unreal) should copy
 *     the line into a thread-safe queue and process it on the main thread.
 *     example_cpp.cpp does this in C++ (a queue, a game tick that drains it).
 *   - From C++, the callback must not throw (make it noexcept): an exception
 *     must not unwind into the library's thread.
 *   - Keep the callback short. It may call oam_bridge_send() (for example to
 *     answer a tool/call right away); that does not deadlock.
 *   - Do not call oam_call_blocking() from inside the callback (it returns a
 *     -32603 error response instead of deadlocking).
 *   - With a main-thread queue, do not call oam_call_blocking() on the main
 *     thread for a request that may cause tool/calls (session/respond,
 *     npc/talk, decision/decide or content/generate with client tools): the
 *     tool/call waits in your queue while the main thread waits for the
 *     response, until the bridge's tool timeout (120 s by default) gives the
 *     model an error output. Send such requests with oam_bridge_send() and
 *     pick their response (same "id") out of the queue, or call
 *     oam_call_blocking() on a worker thread.
 *
 * LIFETIME
 *   - If the bridge process exits unexpectedly, every request still waiting
 *     for its response (sent with oam_bridge_send() or oam_call_blocking())
 *     receives an error response with code -32023 ("shut_down") whose message
 *     names the exit status and ends with the bridge's last lines on stderr
 *     when it wrote any, as the C# and Python clients' errors do:
 *       "The bridge process exited (exit status 2) before answering. Its last
 *       lines on stderr:\nError: Unknown option '--log-levle'; did you mean
 *       '--log-level'? ..."
 *     (up to 3 lines that are not blank, "\n" between them; the library
 *     waits up to 1 s after the exit for them). Later requests get the same
 *     error. Nothing hangs. Log the message of such an error where your
 *     engine shows errors: it says why the bridge did not start.
 *   - oam_bridge_destroy() asks the bridge to shut down (a "shutdown"
 *     request, which cancels running turns and pending tool calls, then a
 *     "ping", which a live bridge fails at once), closes its stdin and waits
 *     for it to exit: a few milliseconds usually, up to about 3 s for a
 *     bridge still answering, then it is killed. The shutdown goes after the
 *     lines sent before it. A bridge that writes nothing within 0.5 s
 *     (frozen, stopped, not reading its input so the request cannot be
 *     written) is killed then, and the lines still queued for it are
 *     dropped. Build with -DOAM_SHUTDOWN_WAIT_MS=<ms> for another
 *     limit than 3000. It
 *     waits for an in-flight callback to finish. Once it returns, the callback
 *     is never called again and the handle is invalid.
 *     So do not hold a lock that your callback takes while you call it.
 *   - Calls of oam_call_blocking() waiting on other threads return at once
 *     with a -32023 error response ("The bridge was closed."), also when
 *     their request still waits to be written, and destroy waits until they
 *     have returned before it frees the handle; a send or call that starts
 *     during destroy does nothing (a call returns the same error). This is
 *     how a worker thread blocked with timeout_ms <= 0 is released when the
 *     game ends.
 *   - Calling oam_bridge_destroy() from inside the callback is allowed: it
 *     returns at once, that callback invocation is the last one, and a
 *     thread of the library does the rest in the background (the same
 *     shutdown, wait and kill, so a frozen bridge is ended too) and frees
 *     the handle once the callback has returned.
 *   - Using a handle after oam_bridge_destroy() has returned (or calling
 *     destroy twice) is undefined behavior: stop the threads that use it
 *     before destroy returns, and do not start new calls after it.
 */

#ifndef OPEN_APPLE_MODELS_H
#define OPEN_APPLE_MODELS_H

#include <stddef.h> /* size_t */

#ifdef __cplusplus
extern "C" {
#endif

/*
 * OAM_API: on Windows, dllexport while building the DLL (OAM_BUILDING_LIBRARY, set by
 * open_apple_models.c) and dllimport for its users. When the sources are compiled straight into your
 * program or game module (no DLL), define OAM_STATIC for every file that includes this header and for
 * the library's own sources (e.g. -DOAM_STATIC, /D OAM_STATIC, or PublicDefinitions in an Unreal
 * Build.cs): OAM_API is then empty.
 */
#if defined(OAM_STATIC)
#  define OAM_API
#elif defined(_WIN32)
#  if defined(OAM_BUILDING_LIBRARY)
#    define OAM_API __declspec(dllexport)
#  else
#    define OAM_API __declspec(dllimport)
#  endif
#else
#  define OAM_API __attribute__((visibility("default")))
#endif

/* Opaque bridge handle. */
typedef struct oam_bridge oam_bridge;

/*
 * Receives every message from the bridge: responses to requests sent with
 * oam_bridge_send(), notifications (session/event, npc/event, world/changed,
 * tool/cancel) and requests from the bridge (tool/call, which you must answer
 * with a JSON-RPC response via oam_bridge_send()). Responses to
 * oam_call_blocking() are returned by that call instead.
 *
 * json_line: one line of UTF-8 JSON without the newline, valid only during
 *            the call.
 * user_data: the pointer given to oam_bridge_create().
 */
typedef void (*oam_message_callback)(const char *json_line, void *user_data);

/* Return codes of oam_bridge_send(). */
#define OAM_OK 0
#define OAM_ERROR_INVALID_ARGUMENT (-1) /* NULL bridge or json_line */
#define OAM_ERROR_INVALID_UTF8 (-2)     /* json_line is not valid UTF-8 */
#define OAM_ERROR_QUEUE_FULL (-3)       /* not sent: the bridge has not read the queue limit sent before (64 MiB by default, see THREADING) */

/* JSON-RPC error codes the library itself produces. */
#define OAM_CODE_SHUT_DOWN (-32023) /* the bridge process exited / was destroyed */
#define OAM_CODE_TIMEOUT (-32024)   /* oam_call_blocking() timed out */
#define OAM_CODE_BUSY (-32010)      /* oam_call_blocking(): not sent, the bridge is not reading (see THREADING) */

/*
 * Starts the bridge process (see WHICH BRIDGE IS STARTED) and the library's
 * threads (reader, writer, stderr reader). Returns NULL if callback is NULL or the process cannot be started
 * (the reason is printed to stderr).
 */
OAM_API oam_bridge *oam_bridge_create(oam_message_callback callback, void *user_data);

/*
 * Like oam_bridge_create(), with an explicit NULL-terminated argv, e.g.
 * {"deno", "run", "--allow-read", "--allow-env", "--allow-ffi", "cli.ts", "stdio", NULL}.
 * argv[0] is looked up on PATH when it contains no '/'. Returns NULL if
 * callback or argv (or argv[0]) is NULL, or the process cannot be started.
 */
OAM_API oam_bridge *oam_bridge_create_with_command(const char *const *argv, oam_message_callback callback,
                                                   void *user_data);

/*
 * Sends one JSON-RPC message (request, notification, or response to a
 * tool/call). Returns OAM_OK when the message was accepted (queued), or
 * OAM_ERROR_QUEUE_FULL when it was not sent because the bridge has not read
 * what was sent before, up to the queue limit (64 MiB by default, see
 * THREADING); malformed JSON is
 * reported asynchronously as a JSON-RPC error (-32700) through the callback.
 * Line breaks in the text (pretty-printed JSON) are sent as spaces, also a
 * raw line break inside a string (invalid JSON: write it as \n), which then
 * arrives as a space. The bridge answers a line it cannot read whole (not
 * JSON, nested deeper than 100 levels, longer than 16 MiB) with "id":null,
 * so such an error names no request; oam_call_blocking() refuses those
 * requests itself, with their id. Text the player typed goes into a request
 * through oam_json_quote() or oam_json_escape() (JSON STRINGS IN HAND-BUILT
 * REQUESTS, below).
 */
OAM_API int oam_bridge_send(oam_bridge *bridge, const char *json_line);

/*
 * Shuts the bridge down and releases the handle (see LIFETIME). NULL is
 * ignored.
 */
OAM_API void oam_bridge_destroy(oam_bridge *bridge);

/* The library version, e.g. "0.1.0". Static storage; do not free. */
OAM_API const char *oam_version(void);

/*
 * Sends request_json (a JSON-RPC request; "jsonrpc" and "id" are optional)
 * and blocks the calling thread until its response is ready or timeout_ms
 * elapses (timeout_ms <= 0 waits forever). Returns the JSON-RPC response line,
 * which you must release with oam_string_free(). Returns NULL only if bridge
 * or request_json is NULL.
 *
 * - The given id is used as the requestId of the request's notifications and
 *   tool/calls; without one the library uses a private id "local-<n>" and
 *   the returned response has "id":null.
 * - Invalid JSON -> -32700 "The request is not valid JSON (at byte N)." (or
 *   "... not valid UTF-8 (at byte N)."; N counts from 0); not an object,
 *   invalid id, missing or empty method -> -32600 (id null), without
 *   contacting the bridge.
 * - What the bridge would refuse without reading its id is refused here, with
 *   the request's id, instead of waiting for a response that cannot come:
 *   nesting deeper than 100 levels -> -32700 "Invalid JSON: nesting deeper
 *   than 100 levels."; a request longer than the bridge reads (16 MiB, or the
 *   --max-line-bytes given in the bridge's argv) -> -32600 "The message is N
 *   bytes, longer than the M bytes the bridge reads; it was not sent." with
 *   data.limit.
 * - On timeout the result is a -32024 error response with data.code
 *   "timeout" and the message "'<method>' did not finish within <ms> ms; it
 *   was cancelled." The late response is dropped. session/respond and
 *   npc/talk are cancelled on the bridge with a session/cancel or npc/cancel
 *   notification (which also cancels the session's or NPC's queued work).
 * - A -32009 "cancelled" error of a call whose session's or NPC's work was
 *   cancelled after it was sent, by this library for a call that timed out
 *   or by an npc/delete or session/delete sent by hand (with either
 *   function), ends with why: "... 'session/respond' was cancelled with the
 *   rest of the work of session 'ford' when its 'session/respond' timed out
 *   after 300 ms (the timeout_ms of oam_call_blocking()): ...", "... when an
 *   'npc/delete' request deleted the NPC.". A cancel sent by hand adds
 *   nothing (its -32009 is the one asked for). Responses to requests sent
 *   with oam_bridge_send() reach the callback as the bridge wrote them.
 * - Notifications and tool/call requests caused by the request still go to
 *   the callback, which may answer tool/calls while this call waits (but see
 *   THREADING about a main-thread queue). Those already on their way when it
 *   timed out or was cancelled still come: drop them by their requestId.
 * - oam_bridge_destroy() on another thread ends the wait with a -32023
 *   "The bridge was closed." error response (see LIFETIME).
 */
OAM_API char *oam_call_blocking(oam_bridge *bridge, const char *request_json, int timeout_ms);

/* Frees a string returned by oam_call_blocking() or oam_json_quote(). NULL is ignored. */
OAM_API void oam_string_free(char *string);

/*
 * JSON STRINGS IN HAND-BUILT REQUESTS
 *   Text the player typed (or any text not written by you) must not be
 *   pasted into a request between quotes as it is: a quote or a backslash in
 *   it makes the line invalid JSON, which the bridge answers with "id":null
 *   (so the request's own response never comes), and a line break is sent
 *   as a space (oam_call_blocking() refuses both). Write it with one of these
 *   instead:
 *
 *     char *prompt = oam_json_quote(player_text);   // "Say \"hi\"\n" with its quotes
 *     snprintf(request, sizeof request,
 *              "{\"id\":2,\"method\":\"session/respond\","
 *              "\"params\":{\"session\":\"guard\",\"prompt\":%s}}", prompt);
 *     oam_string_free(prompt);
 *
 *   Both escape '"' and '\' (as \" and \\), line breaks, tabs, backspace
 *   and form feed (\n \r \t \b \f) and the other control characters
 *   below U+0020 (\u0001 ... \u001f), the way the bridge writes JSON. Valid
 *   UTF-8 (accents, CJK, emoji) is copied unchanged. Invalid UTF-8 (e.g.
 *   Latin-1 bytes, a sequence cut off) is not refused: each byte that does
 *   not begin a valid UTF-8 sequence (overlong forms, UTF-16 surrogates and
 *   code points past U+10FFFF included) becomes U+FFFD (EF BF BD), so the
 *   result is always valid UTF-8 that oam_bridge_send() accepts.
 */

/*
 * Returns text as a JSON string literal, with its quotes: a heap string
 * you release with oam_string_free(). NULL if text is NULL or memory ran
 * out.
 */
OAM_API char *oam_json_quote(const char *text);

/*
 * Writes text escaped as above, WITHOUT the surrounding quotes, into out
 * (out_size bytes, always NUL-terminated when out_size > 0), like
 * snprintf: returns the length of the whole escaped text (without the
 * NUL), so a result >= out_size means it was cut short. A cut-short result
 * ends between two whole escapes or characters, never inside one (it is
 * still valid inside quotes, just shorter). oam_json_escape(text, NULL, 0)
 * only measures. A NULL text counts as "". Allocates nothing.
 */
OAM_API size_t oam_json_escape(const char *text, char *out, size_t out_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OPEN_APPLE_MODELS_H */
