/*
 * test_bridge.c - tests libopen_apple_models against the real bridge process.
 *
 * The bridge command comes from OAM_BRIDGE_COMMAND or OAM_BRIDGE_PATH (see
 * open_apple_models.h). Exit status 0 when every test passed. Game-method
 * tests print "SKIP <name>: <reason>" when the bridge does not serve them.
 */
#define _DEFAULT_SOURCE 1
#define _POSIX_C_SOURCE 200809L
#include "open_apple_models.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static int failures = 0;
static int checks = 0;
static const char *current_test = "";

#define CHECK(condition, ...)                                                                                 \
    do {                                                                                                      \
        checks++;                                                                                             \
        if (!(condition)) {                                                                                   \
            failures++;                                                                                       \
            fprintf(stderr, "FAIL %s (%s:%d): %s\n  ", current_test, __FILE__, __LINE__, #condition);         \
            fprintf(stderr, __VA_ARGS__);                                                                     \
            fprintf(stderr, "\n");                                                                            \
        }                                                                                                     \
    } while (0)

/*
 * The bridge a test holds stopped (SIGSTOP), or 0. When this program is ended meanwhile (SIGTERM from a
 * timeout, SIGINT, SIGHUP), the handler kills it: a stopped bridge would otherwise never read the end of
 * its input and stay for ever, holding this program's stderr open. (A SIGKILL cannot be caught: the tests
 * in tests/bindings/ kill the program's whole process group, this bridge included.)
 */
static volatile sig_atomic_t stopped_bridge = 0;

/*
 * True when every thread of `pid` is stopped (state T or t in /proc/<pid>/task/<tid>/stat), or when there is no
 * /proc to tell (not Linux).
 */
static int all_threads_stopped(pid_t pid) {
    char path[320];
    DIR *tasks;
    struct dirent *task;
    int stopped = 1;
    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    tasks = opendir(path);
    if (!tasks) return 1;
    while (stopped && (task = readdir(tasks)) != NULL) {
        char stat[512];
        const char *state;
        FILE *f;
        size_t n;
        if (task->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/%ld/task/%s/stat", (long)pid, task->d_name);
        f = fopen(path, "r");
        if (!f) continue; /* the thread ended */
        n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = '\0';
        state = strrchr(stat, ')'); /* "tid (name) S ...": the name may hold spaces and parentheses */
        stopped = !state || state[1] != ' ' || state[2] == 'T' || state[2] == 't' || state[2] == 'Z' || state[2] == 'X';
    }
    closedir(tasks);
    return stopped;
}

/*
 * Stops the bridge `pid` (SIGSTOP) and returns once all its threads have stopped. kill() only sends the signal:
 * a thread the loaded machine has not run yet may still read the bridge's stdin before it stops, which took a
 * line off a queue the tests had just filled to its limit, so a blocking call found room and waited for ever.
 */
static void stop_bridge(pid_t pid) {
    stopped_bridge = (sig_atomic_t)pid;
    kill(pid, SIGSTOP);
    while (!all_threads_stopped(pid)) usleep(1000);
}

/* Kills the stopped bridge if it is still there; the tests call this once they no longer need it. */
static void end_stopped_bridge(pid_t pid) {
    if (pid > 0 && kill(pid, 0) == 0) kill(pid, SIGKILL);
    stopped_bridge = 0;
}

static void on_ending_signal(int signal_number) {
    pid_t pid = (pid_t)stopped_bridge;
    if (pid > 0) kill(pid, SIGKILL);
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

static int contains(const char *haystack, const char *needle) { return haystack && strstr(haystack, needle); }

/* printf("%s", NULL) may become fputs(NULL): never pass NULL to %s. */
static const char *show(const char *s) { return s ? s : "(null)"; }

/* ---- a recording callback ---- */

enum tool_mode { TOOL_OK, TOOL_ERROR, TOOL_IGNORE };

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    char **lines;
    int count;
    int capacity;
    enum tool_mode tool_mode;
    oam_bridge *bridge;
    int destroy_on_line; /* destroy the bridge from inside the callback when a line contains "destroy-me" */
    int destroyed;       /* the callback has called destroy (and touches the recorder no more) */
    pid_t stop_before_destroy; /* SIGSTOP this process (the bridge) in the callback right before destroying */
    char *blocking_result_in_callback;
} recorder;

static void recorder_init(recorder *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
}

static void recorder_free(recorder *r) {
    int k;
    for (k = 0; k < r->count; k++) free(r->lines[k]);
    free(r->lines);
    free(r->blocking_result_in_callback);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->changed);
}

static int string_field(const char *json, const char *key, char *out, size_t size) {
    char pattern[64];
    const char *start, *end;
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    start = strstr(json, pattern);
    if (!start) return 0;
    start += strlen(pattern);
    end = strchr(start, '"');
    if (!end || (size_t)(end - start) >= size) return 0;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return 1;
}

static void on_message(const char *json_line, void *user_data) {
    recorder *r = user_data;
    pthread_mutex_lock(&r->lock);
    if (r->count == r->capacity) {
        r->capacity = r->capacity ? r->capacity * 2 : 32;
        r->lines = realloc(r->lines, sizeof(char *) * (size_t)r->capacity);
    }
    r->lines[r->count++] = strdup(json_line);
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);

    if (contains(json_line, "\"method\":\"tool/call\"")) {
        char id[64], reply[512];
        if (!string_field(json_line, "id", id, sizeof id)) return;
        if (r->tool_mode == TOOL_OK) {
            snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"output\":{\"opened\":true}}}",
                     id);
            oam_bridge_send(r->bridge, reply);
        } else if (r->tool_mode == TOOL_ERROR) {
            snprintf(reply, sizeof reply,
                     "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"error\":{\"code\":-32000,\"message\":\"Gate subsystem offline\"}}",
                     id);
            oam_bridge_send(r->bridge, reply);
        }
    }
    if (contains(json_line, "blocking-in-callback")) {
        r->blocking_result_in_callback = oam_call_blocking(r->bridge, "{\"method\":\"ping\"}", 1000);
    }
    if (r->destroy_on_line && contains(json_line, "destroy-me")) {
        if (r->stop_before_destroy > 0) stop_bridge(r->stop_before_destroy); /* a bridge that froze */
        oam_bridge_destroy(r->bridge);
        pthread_mutex_lock(&r->lock);
        r->destroyed = 1;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
}

/* Waits up to timeout_ms for a recorded line containing every needle; returns a copy or NULL. */
static char *wait_line(recorder *r, int timeout_ms, const char *needle, const char *needle2) {
    struct timespec deadline;
    char *found = NULL;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) deadline.tv_sec++, deadline.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        int k;
        for (k = 0; k < r->count && !found; k++) {
            if (contains(r->lines[k], needle) && (!needle2 || contains(r->lines[k], needle2))) found = strdup(r->lines[k]);
        }
        if (found || pthread_cond_timedwait(&r->changed, &r->lock, &deadline) == ETIMEDOUT) break;
    }
    if (!found) {
        int k;
        for (k = 0; k < r->count && !found; k++) {
            if (contains(r->lines[k], needle) && (!needle2 || contains(r->lines[k], needle2))) found = strdup(r->lines[k]);
        }
    }
    pthread_mutex_unlock(&r->lock);
    return found;
}

static int count_lines(recorder *r, const char *needle, const char *needle2) {
    int k, n = 0;
    pthread_mutex_lock(&r->lock);
    for (k = 0; k < r->count; k++) {
        if (contains(r->lines[k], needle) && (!needle2 || contains(r->lines[k], needle2))) n++;
    }
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* ---- bridge command ---- */

static char bridge_command[4096];

/* command (the configured one when NULL), prefixed so the shell writes the process's pid to pid_file. */
static oam_bridge *start_command_with_pid(recorder *r, const char *pid_file, const char *command) {
    char script[4600];
    const char *argv[4];
    snprintf(script, sizeof script, "echo $$ > '%s'; exec %s", pid_file, command ? command : bridge_command);
    argv[0] = "/bin/sh", argv[1] = "-c", argv[2] = script, argv[3] = NULL;
    r->bridge = oam_bridge_create_with_command(argv, on_message, r);
    return r->bridge;
}

static pid_t read_pid(const char *pid_file) {
    int attempt;
    for (attempt = 0; attempt < 200; attempt++) {
        FILE *f = fopen(pid_file, "r");
        long pid = 0;
        if (f) {
            int ok = fscanf(f, "%ld", &pid) == 1;
            fclose(f);
            if (ok && pid > 0) return (pid_t)pid;
        }
        usleep(10000);
    }
    return 0;
}

/* Starts a bridge for the current test; when it does not start, the test fails and the recorder is freed. */
static oam_bridge *start(recorder *r) {
    recorder_init(r);
    r->bridge = oam_bridge_create(on_message, r);
    if (r->bridge == NULL) {
        CHECK(0, "bridge did not start");
        recorder_free(r);
    }
    return r->bridge;
}

static char *call(recorder *r, const char *json, int timeout_ms) { return oam_call_blocking(r->bridge, json, timeout_ms); }

static int has_method(oam_bridge *bridge, const char *method) {
    char needle[128];
    char *response = oam_call_blocking(bridge, "{\"method\":\"initialize\"}", 5000);
    int found;
    snprintf(needle, sizeof needle, "\"%s\"", method);
    found = contains(response, needle) != 0;
    oam_string_free(response);
    return found;
}

#define GATE_TOOL                                                                                             \
    "{\"name\":\"open_gate\",\"description\":\"Open a named gate.\",\"parameters\":{\"type\":\"object\","       \
    "\"properties\":{\"gate\":{\"type\":\"string\"}},\"required\":[\"gate\"]}"

/* ---- tests ---- */

/* {"id":"deep","method":"ping","params":{"x":[[…]]}} with n arrays. */
static void text_of_depth(char *out, size_t n) {
    size_t k;
    out += sprintf(out, "{\"id\":\"deep\",\"method\":\"ping\",\"params\":{\"x\":");
    for (k = 0; k < n; k++) *out++ = '[';
    for (k = 0; k < n; k++) *out++ = ']';
    strcpy(out, "}}");
}

static void test_arguments(void) {
    current_test = "arguments";
    CHECK(strcmp(oam_version(), "0.1.0") == 0, "version %s", oam_version());
    CHECK(oam_bridge_create(NULL, NULL) == NULL, "NULL callback");
    CHECK(oam_bridge_send(NULL, "{}") == OAM_ERROR_INVALID_ARGUMENT, "NULL bridge");
    CHECK(oam_call_blocking(NULL, "{}", 10) == NULL, "NULL bridge");
    oam_string_free(NULL);
    oam_bridge_destroy(NULL);
    {
        const char *argv[] = {"/nonexistent/oam-bridge", "stdio", NULL};
        recorder r;
        recorder_init(&r);
        r.bridge = oam_bridge_create_with_command(argv, on_message, &r);
        if (r.bridge) {
            /* Where spawn cannot report exec failures (e.g. under valgrind) the child exits with 127. */
            char *response = oam_call_blocking(r.bridge, "{\"id\":1,\"method\":\"ping\"}", 0);
            CHECK(contains(response, "-32023") && contains(response, "exit status 127"), "%s", show(response));
            oam_string_free(response);
            oam_bridge_destroy(r.bridge);
        }
        recorder_free(&r);
    }
}

static void test_plain_turn_and_invalid_input(void) {
    recorder r;
    char *response;
    current_test = "plain turn";
    if (!start(&r)) return;
    CHECK(oam_bridge_send(r.bridge, NULL) == OAM_ERROR_INVALID_ARGUMENT, "NULL line");
    CHECK(oam_bridge_send(r.bridge, "{\"id\":\"\xC3\x28\"}") == OAM_ERROR_INVALID_UTF8, "invalid UTF-8");

    response = call(&r, "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"session/create\",\"params\":{\"session\":\"plain\","
                        "\"model\":{\"type\":\"scripted\",\"steps\":[{\"text\":\"Halt! Who goes there?\"}]}}}",
                    5000);
    CHECK(contains(response, "\"id\":\"c1\"") && contains(response, "\"session\":\"plain\""), "%s", show(response));
    oam_string_free(response);
    response = call(&r, "{\"id\":7,\"method\":\"session/respond\",\"params\":{\"session\":\"plain\",\"prompt\":\"Hi\"}}", 5000);
    CHECK(contains(response, "\"id\":7,") && contains(response, "\"text\":\"Halt! Who goes there?\""), "%s", show(response));
    oam_string_free(response);

    /* Pretty-printed JSON is sent as one line. */
    response = call(&r, "{\n  \"id\": \"pretty\",\n  \"method\": \"ping\"\n}", 5000);
    CHECK(contains(response, "\"id\":\"pretty\"") && contains(response, "\"result\":{}"), "%s", show(response));
    oam_string_free(response);

    current_test = "invalid requests";
    response = call(&r, "not json", 1000);
    CHECK(contains(response, "-32700") && contains(response, "\"id\":null"), "%s", show(response));
    oam_string_free(response);
    /* Hand-built JSON: the message says where it went wrong. */
    response = call(&r, "{\"id\":1,\"method\":\"ping\",}", 1000);
    CHECK(contains(response, "-32700") && contains(response, "\"The request is not valid JSON (at byte 24).\""), "%s",
          show(response));
    oam_string_free(response);
    response = call(&r, "{\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xC3\x28\"}}", 1000);
    CHECK(contains(response, "-32700") && contains(response, "\"The request is not valid UTF-8 (at byte 39).\""), "%s",
          show(response));
    oam_string_free(response);
    response = call(&r, "[1]", 1000);
    CHECK(contains(response, "-32600"), "%s", show(response));
    oam_string_free(response);
    response = call(&r, "{\"id\":true,\"method\":\"ping\"}", 1000);
    CHECK(contains(response, "-32600") && contains(response, "'id' must be a string or a number."), "%s", show(response));
    oam_string_free(response);
    response = call(&r, "{\"id\":9007199254740993,\"method\":\"ping\"}", 1000);
    CHECK(contains(response, "-32600") && contains(response, "2^53-1"), "%s", show(response));
    oam_string_free(response);
    response = call(&r, "{\"id\":4}", 1000);
    CHECK(contains(response, "-32600") && contains(response, "'method' must be a non-empty string.") &&
              contains(response, "\"id\":4,"),
          "%s", show(response));
    oam_string_free(response);
    response = call(&r, "{\"id\":5,\"method\":\"no/such\"}", 5000);
    CHECK(contains(response, "-32601") && contains(response, "method_not_found"), "%s", show(response));
    oam_string_free(response);

    /* A malformed line sent raw comes back through the callback. */
    CHECK(oam_bridge_send(r.bridge, "{oops") == OAM_OK, "send");
    {
        char *line = wait_line(&r, 5000, "-32700", NULL);
        CHECK(line != NULL, "no parse error through the callback");
        free(line);
    }
    oam_bridge_destroy(r.bridge);
    recorder_free(&r);
}

static void test_tool_round_trip_streaming(void) {
    recorder r;
    char *response, *line;
    current_test = "tool round trip";
    if (!start(&r)) return;
    r.tool_mode = TOOL_OK;
    response = call(&r, "{\"id\":1,\"method\":\"session/create\",\"params\":{\"session\":\"guard\",\"tools\":[" GATE_TOOL
                        "}],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"open_gate\","
                        "\"arguments\":{\"gate\":\"north\"}}]},{\"template\":\"Gate: {toolOutput}\"}]}}}",
                    5000);
    oam_string_free(response);
    response = call(&r, "{\"id\":\"turn-1\",\"method\":\"session/respond\",\"params\":{\"session\":\"guard\","
                        "\"prompt\":\"Open the north gate.\",\"stream\":true}}",
                    10000);
    CHECK(contains(response, "\"text\":\"Gate: {\\\"opened\\\":true}\""), "%s", show(response));
    CHECK(contains(response, "\"isError\":false"), "%s", show(response));
    oam_string_free(response);

    current_test = "streaming events";
    line = wait_line(&r, 1000, "\"method\":\"tool/call\"", "\"requestId\":\"turn-1\"");
    CHECK(line != NULL, "tool/call with requestId turn-1");
    free(line);
    CHECK(count_lines(&r, "\"type\":\"text\"", "\"requestId\":\"turn-1\"") >= 2, "text deltas: %d",
          count_lines(&r, "\"type\":\"text\"", NULL));
    CHECK(count_lines(&r, "\"type\":\"toolCallCompleted\"", NULL) == 1, "toolCallCompleted");
    CHECK(count_lines(&r, "\"id\":\"turn-1\"", "\"result\"") == 0, "blocking response also given to the callback");

    current_test = "tool raises";
    r.tool_mode = TOOL_ERROR;
    response = call(&r, "{\"id\":2,\"method\":\"session/create\",\"params\":{\"session\":\"guard2\",\"tools\":[" GATE_TOOL
                        "}],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"open_gate\","
                        "\"arguments\":{\"gate\":\"east\"}}]},{\"template\":\"Gate: {toolOutput}\"}]}}}",
                    5000);
    oam_string_free(response);
    response = call(&r, "{\"id\":3,\"method\":\"session/respond\",\"params\":{\"session\":\"guard2\",\"prompt\":\"Open\"}}",
                    10000);
    CHECK(contains(response, "\"isError\":true") && contains(response, "Gate subsystem offline"), "%s", show(response));
    oam_string_free(response);

    current_test = "tool never answers";
    r.tool_mode = TOOL_IGNORE;
    response = call(&r, "{\"id\":4,\"method\":\"session/create\",\"params\":{\"session\":\"guard3\",\"tools\":[" GATE_TOOL
                        ",\"timeoutSeconds\":0.3}],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":"
                        "\"open_gate\",\"arguments\":{\"gate\":\"west\"}}]},{\"template\":\"{toolOutput}\"}]}}}",
                    5000);
    oam_string_free(response);
    response = call(&r, "{\"id\":5,\"method\":\"session/respond\",\"params\":{\"session\":\"guard3\",\"prompt\":\"Open\"}}",
                    10000);
    CHECK(contains(response, "\"isError\":true") && contains(response, "timed out"), "%s", show(response));
    oam_string_free(response);
    line = wait_line(&r, 1000, "\"method\":\"tool/cancel\"", NULL);
    CHECK(line != NULL, "tool/cancel notification");
    free(line);

    oam_bridge_destroy(r.bridge);
    recorder_free(&r);
}

/* A blocking call that waits for its response (forever) on a thread of its own, as a game's worker thread does. */
typedef struct {
    recorder *r;
    const char *request;
    char *response;
} held_call;

static void *hold_call(void *raw) {
    held_call *c = raw;
    c->response = oam_call_blocking(c->r->bridge, c->request, 0);
    return NULL;
}

/*
 * Starts `turn` (a blocking session/respond on session `session`, whose scripted model calls open_gate, which the
 * recorder leaves unanswered) on a thread, and returns once its tool/call has come: the turn then holds the
 * session, with its tool call pending.
 */
static int hold_turn(recorder *r, held_call *c, pthread_t *thread, const char *session, const char *turn) {
    char request[1024], *response, *line;
    snprintf(request, sizeof request,
             "{\"id\":\"%s-create\",\"method\":\"session/create\",\"params\":{\"session\":\"%s\",\"tools\":["
             GATE_TOOL "}],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"open_gate\","
             "\"arguments\":{\"gate\":\"north\"}}]}],\"fallback\":{\"text\":\"Zzz.\",\"delayMs\":60000}}}}",
             session, session);
    response = call(r, request, 5000);
    CHECK(contains(response, "\"result\""), "%s", show(response));
    oam_string_free(response);
    c->r = r, c->request = turn, c->response = NULL;
    pthread_create(thread, NULL, hold_call, c);
    snprintf(request, sizeof request, "\"session\":\"%s\"", session);
    line = wait_line(r, 10000, "\"method\":\"tool/call\"", request);
    CHECK(line != NULL, "no tool/call for session %s", session);
    free(line);
    return line != NULL;
}

/*
 * A session's (or NPC's) work is cancelled as a whole: a blocking call that times out sends session/cancel, and a
 * delete sent by hand ends the session. The blocking calls of that session sent before (a turn whose tool call was
 * pending) fail with -32009, whose message says why, as in the other clients.
 */
static void test_cancel_reasons(recorder *r) {
    static const char given_up[] =
        ": the protocol cancels the running turn and every request queued behind it together (there is no cancel for "
        "one request). Send it again if you still need it.";
    held_call held;
    pthread_t thread;
    char *response, expected[600];
    r->tool_mode = TOOL_IGNORE;

    current_test = "a turn cancelled with one that timed out says why";
    if (hold_turn(r, &held, &thread, "ford",
                  "{\"id\":\"ford-1\",\"method\":\"session/respond\",\"params\":{\"session\":\"ford\",\"prompt\":\"x\"}}")) {
        response = call(r, "{\"id\":\"ford-2\",\"method\":\"session/respond\",\"params\":{\"session\":\"ford\","
                           "\"prompt\":\"y\"}}",
                        300);
        CHECK(contains(response, "\"code\":-32024"), "%s", show(response));
        oam_string_free(response);
        pthread_join(thread, NULL);
        snprintf(expected, sizeof expected,
                 " 'session/respond' was cancelled with the rest of the work of session 'ford' when its "
                 "'session/respond' timed out after 300 ms (the timeout_ms of oam_call_blocking())%s\"", given_up);
        CHECK(contains(held.response, "{\"jsonrpc\":\"2.0\",\"id\":\"ford-1\",\"error\":{\"code\":-32009,") &&
                  contains(held.response, expected) && contains(held.response, "\"data\":{\"code\":\"cancelled\""),
              "%s\n  expected %s", show(held.response), expected);
        oam_string_free(held.response);
    }

    current_test = "a turn a session/delete sent by hand cancelled says why";
    if (hold_turn(r, &held, &thread, "mill",
                  "{\"id\":\"mill-1\",\"method\":\"session/respond\",\"params\":{\"session\":\"mill\",\"prompt\":\"x\"}}")) {
        response = call(r, "{\"id\":\"mill-del\",\"method\":\"session/delete\",\"params\":{\"session\":\"mill\"}}",
                        5000);
        CHECK(contains(response, "\"result\""), "%s", show(response));
        oam_string_free(response);
        pthread_join(thread, NULL);
        CHECK(contains(held.response, "\"code\":-32009,") &&
                  contains(held.response, " 'session/respond' was cancelled with the rest of the work of session 'mill' "
                                          "when a 'session/delete' request deleted the session.\""),
              "%s", show(held.response));
        oam_string_free(held.response);
    }

    current_test = "a turn a session/delete notification cancelled says why";
    if (hold_turn(r, &held, &thread, "weir",
                  "{\"method\":\"session/respond\",\"params\":{\"session\":\"weir\",\"prompt\":\"x\"}}")) {
        CHECK(oam_bridge_send(r->bridge, "{\"jsonrpc\":\"2.0\",\"method\":\"session/delete\",\"params\":{\"session\":"
                                         "\"weir\"}}") == OAM_OK,
              "session/delete not sent");
        pthread_join(thread, NULL);
        CHECK(contains(held.response, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32009,") &&
                  contains(held.response, " 'session/respond' was cancelled with the rest of the work of session 'weir' "
                                          "when a 'session/delete' notification deleted the session.\""),
              "%s", show(held.response));
        oam_string_free(held.response);
    }

    current_test = "a cancel sent by hand adds nothing (its -32009 is the one the game asked for)";
    if (hold_turn(r, &held, &thread, "quay",
                  "{\"id\":\"quay-1\",\"method\":\"session/respond\",\"params\":{\"session\":\"quay\",\"prompt\":\"x\"}}")) {
        response = call(r, "{\"id\":\"quay-c\",\"method\":\"session/cancel\",\"params\":{\"session\":\"quay\"}}",
                        5000);
        oam_string_free(response);
        pthread_join(thread, NULL);
        CHECK(contains(held.response, "\"code\":-32009,") && !contains(held.response, "was cancelled with the rest"),
              "%s", show(held.response));
        oam_string_free(held.response);
    }
    r->tool_mode = TOOL_OK;
}

static void test_blocking_timeout(void) {
    recorder r;
    char *response;
    current_test = "blocking timeout";
    if (!start(&r)) return;
    response = call(&r, "{\"id\":1,\"method\":\"session/create\",\"params\":{\"session\":\"slow\",\"model\":{\"type\":"
                        "\"scripted\",\"steps\":[{\"text\":\"late\",\"delayMs\":3000},{\"text\":\"second\"}]}}}",
                    5000);
    oam_string_free(response);
    response = call(&r, "{\"id\":\"slow-1\",\"method\":\"session/respond\",\"params\":{\"session\":\"slow\",\"prompt\":\"x\"}}",
                    200);
    CHECK(contains(response, "{\"jsonrpc\":\"2.0\",\"id\":\"slow-1\",\"error\":{\"code\":-32024,"), "%s", show(response));
    CHECK(contains(response, "\"message\":\"'session/respond' did not finish within 200 ms; it was cancelled.\""), "%s",
          show(response));
    CHECK(contains(response, "\"data\":{\"code\":\"timeout\"}"), "%s", show(response));
    oam_string_free(response);
    /* The turn was cancelled on the bridge (it does not hold the session for 3 s), and the next turn of the
     * session is answered after the cancelled one, so its late response has been read (and dropped) by now. */
    response = call(&r, "{\"id\":\"slow-2\",\"method\":\"session/respond\",\"params\":{\"session\":\"slow\",\"prompt\":\"y\"}}",
                    2500);
    CHECK(contains(response, "\"result\""), "%s", show(response));
    oam_string_free(response);
    CHECK(count_lines(&r, "slow-1", NULL) == 0, "the late response reached the callback");

    current_test = "local ids";
    response = call(&r, "{\"method\":\"session/create\",\"params\":{\"session\":\"anon\",\"model\":{\"type\":\"scripted\","
                        "\"steps\":[{\"text\":\"Aye.\"}]}}}",
                    5000);
    CHECK(contains(response, "\"id\":null,\"result\""), "%s", show(response));
    oam_string_free(response);
    response = call(&r, "{\"method\":\"session/respond\",\"params\":{\"session\":\"anon\",\"prompt\":\"x\",\"stream\":true}}",
                    5000);
    CHECK(contains(response, "\"id\":null,\"result\"") && contains(response, "Aye."), "%s", show(response));
    oam_string_free(response);
    CHECK(count_lines(&r, "\"requestId\":\"local-", NULL) > 0, "events carry a local-<n> requestId");

    test_cancel_reasons(&r);

    current_test = "blocking call inside the callback";
    oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"blocking-in-callback\",\"method\":\"ping\"}");
    free(wait_line(&r, 5000, "blocking-in-callback", NULL));
    oam_bridge_destroy(r.bridge); /* waits for the callback, so the field is set */
    CHECK(contains(r.blocking_result_in_callback, "-32603"), "%s", show(r.blocking_result_in_callback));
    recorder_free(&r);
}

static void test_npc_world_decision(void) {
    recorder r;
    char *response, *line;
    current_test = "npc talk + world change";
    if (!start(&r)) return;
    if (!has_method(r.bridge, "npc/talk") || !has_method(r.bridge, "world/subscribe")) {
        printf("SKIP npc talk + world change: the bridge does not serve npc/talk and world/subscribe yet\n");
    } else {
        response = call(&r, "{\"id\":1,\"method\":\"world/create\",\"params\":{\"world\":\"village\",\"state\":"
                            "{\"player\":{\"gold\":60}}}}",
                        5000);
        CHECK(contains(response, "\"result\""), "%s", show(response));
        oam_string_free(response);
        response = call(&r, "{\"id\":2,\"method\":\"world/subscribe\",\"params\":{\"world\":\"village\",\"path\":\"player\"}}",
                        5000);
        CHECK(contains(response, "\"subscription\""), "%s", show(response));
        oam_string_free(response);
        response = call(&r, "{\"id\":3,\"method\":\"npc/create\",\"params\":{\"npc\":\"gorm\",\"persona\":{\"name\":\"Gorm\","
                            "\"role\":\"the village blacksmith\"},\"world\":\"village\",\"options\":{\"replyFormat\":\"text\","
                            "\"worldWritable\":[\"player\"]},\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{"
                            "\"name\":\"update_world_state\",\"arguments\":{\"path\":\"player.gold\",\"value\":\"45\"}}]},"
                            "{\"text\":\"[proud] That will be 15 gold.\"}]}}}",
                        5000);
        CHECK(contains(response, "\"result\""), "%s", show(response));
        oam_string_free(response);
        response = call(&r, "{\"id\":\"talk-1\",\"method\":\"npc/talk\",\"params\":{\"npc\":\"gorm\",\"line\":\"A sword, please.\","
                            "\"stream\":true}}",
                        10000);
        CHECK(contains(response, "\"line\":\"That will be 15 gold.\"") && contains(response, "\"emotion\":\"proud\""), "%s",
              show(response));
        oam_string_free(response);
        line = wait_line(&r, 1000, "\"method\":\"world/changed\"", "\"newValue\":45");
        CHECK(contains(line, "\"oldValue\":60"), "%s", show(line));
        free(line);
        CHECK(count_lines(&r, "\"method\":\"npc/event\"", "\"requestId\":\"talk-1\"") > 0, "npc/event notifications");
    }

    current_test = "decision";
    if (!has_method(r.bridge, "decision/decide")) {
        printf("SKIP decision: the bridge does not serve decision/decide yet\n");
    } else {
        response = call(&r, "{\"id\":4,\"method\":\"decision/decide\",\"params\":{\"situation\":\"A wolf blocks the path.\","
                            "\"options\":[\"fight\",\"flee\"],\"model\":{\"type\":\"scripted\",\"steps\":[{\"json\":{"
                            "\"reasoning\":\"Too dangerous.\",\"choice\":\"flee\",\"confidence\":80}}]}}}",
                        10000);
        CHECK(contains(response, "\"optionID\":\"flee\"") && contains(response, "\"confidence\":80"), "%s", show(response));
        oam_string_free(response);
    }
    oam_bridge_destroy(r.bridge);
    recorder_free(&r);
}

/* Requests the bridge would refuse without reading their id come back at once, with their id. */
static void test_limits(void) {
    recorder r;
    char *response, *request;
    size_t k, n;
    current_test = "nesting deeper than the bridge reads";
    if (!start(&r)) return;
    /* The object is level 1 and params level 2, so 98 arrays reach level 100 (allowed) and 99 reach 101. */
    request = malloc(256);
    for (n = 98; n <= 99; n++) {
        text_of_depth(request, n);
        response = call(&r, request, 5000);
        if (n == 98) {
            CHECK(contains(response, "\"id\":\"deep\",\"result\""), "%s", show(response));
        } else {
            CHECK(contains(response, "\"id\":\"deep\",\"error\":{\"code\":-32700") &&
                      contains(response, "nesting deeper than 100 levels"),
                  "%s", show(response));
        }
        oam_string_free(response);
    }
    free(request);

    current_test = "a message longer than the bridge reads";
    n = 16u * 1024 * 1024;
    request = malloc(n + 128);
    k = (size_t)sprintf(request, "{\"id\":\"huge\",\"method\":\"ping\",\"params\":{\"x\":\"");
    memset(request + k, 'a', n);
    strcpy(request + k + n, "\"}}");
    response = call(&r, request, 5000);
    CHECK(contains(response, "\"id\":\"huge\",\"error\":{\"code\":-32600") &&
              contains(response, "longer than the 16777216 bytes the bridge reads; it was not sent"),
          "%.300s", show(response));
    oam_string_free(response);
    free(request);
    /* A world's state that large (a saved world being loaded) is told how to load it in parts. */
    request = malloc(n + 128);
    k = (size_t)sprintf(request, "{\"id\":\"save\",\"method\":\"world/create\",\"params\":{\"state\":{\"lore\":\"");
    memset(request + k, 'a', n);
    strcpy(request + k + n, "\"}}}");
    response = call(&r, request, 5000);
    CHECK(contains(response, "\"id\":\"save\",\"error\":{\"code\":-32600") &&
              contains(response, "it was not sent. A world's state this large loads in parts: world/create with part of "
                                 "it, then world/merge the rest, a few keys at a time (docs/PROTOCOL.md \xC2\xA7" "6, 'Saving a world')."),
          "%.400s", show(response));
    oam_string_free(response);
    free(request);
    response = call(&r, "{\"id\":\"after\",\"method\":\"ping\"}", 5000);
    CHECK(contains(response, "\"id\":\"after\",\"result\""), "%s", show(response));
    oam_string_free(response);
    oam_bridge_destroy(r.bridge);
    recorder_free(&r);

    current_test = "--max-line-bytes of the command";
    recorder_init(&r);
    {
        char command[4200], *argv[64], *p;
        int argc = 0;
        snprintf(command, sizeof command, "%s --max-line-bytes=4096", bridge_command);
        for (p = strtok(command, " \t"); p && argc < 63; p = strtok(NULL, " \t")) argv[argc++] = p;
        argv[argc] = NULL;
        r.bridge = oam_bridge_create_with_command((const char *const *)argv, on_message, &r);
    }
    if (!r.bridge) {
        CHECK(0, "bridge did not start");
        recorder_free(&r);
        return;
    }
    request = malloc(8192);
    k = (size_t)sprintf(request, "{\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"");
    memset(request + k, 'a', 5000);
    strcpy(request + k + 5000, "\"}}");
    response = call(&r, request, 5000);
    CHECK(contains(response, "\"id\":7,\"error\":{\"code\":-32600") && contains(response, "the 4096 bytes the bridge reads"),
          "%.300s", show(response));
    oam_string_free(response);
    free(request);
    oam_bridge_destroy(r.bridge);
    recorder_free(&r);
}

typedef struct {
    recorder *r;
    int index;
    char *response;
} waiting_call;

static void *wait_for_turn(void *raw) {
    waiting_call *c = raw;
    char request[256];
    snprintf(request, sizeof request,
             "{\"id\":\"w%d\",\"method\":\"session/respond\",\"params\":{\"session\":\"long\",\"prompt\":\"x\"}}", c->index);
    c->response = oam_call_blocking(c->r->bridge, request, 0 /* forever */);
    return NULL;
}

/* Ending the game while worker threads wait in oam_call_blocking(): they return, then the handle is freed. */
static void test_destroy_with_waiting_calls(void) {
    recorder r;
    char *response, *line;
    pthread_t threads[4];
    waiting_call calls[4];
    int k;
    current_test = "destroy while calls wait";
    if (!start(&r)) return;
    response = call(&r, "{\"id\":1,\"method\":\"session/create\",\"params\":{\"session\":\"long\",\"model\":{\"type\":"
                        "\"scripted\",\"steps\":[{\"text\":\"never\",\"delayMs\":60000}]}}}",
                    5000);
    oam_string_free(response);
    for (k = 0; k < 4; k++) {
        calls[k].r = &r, calls[k].index = k, calls[k].response = NULL;
        pthread_create(&threads[k], NULL, wait_for_turn, &calls[k]);
    }
    /* The turns are queued on the bridge once it has answered a request sent after them. */
    oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"queued\",\"method\":\"session/list\"}");
    line = wait_line(&r, 5000, "\"id\":\"queued\"", NULL);
    CHECK(line != NULL, "no answer to session/list");
    free(line);
    oam_bridge_destroy(r.bridge);
    for (k = 0; k < 4; k++) {
        char id[64];
        pthread_join(threads[k], NULL);
        snprintf(id, sizeof id, "\"id\":\"w%d\",\"error\":{\"code\":-32023", k);
        CHECK(contains(calls[k].response, id) && contains(calls[k].response, "The bridge was closed."), "%s",
              show(calls[k].response));
        oam_string_free(calls[k].response);
    }
    recorder_free(&r);
}

#ifdef OAM_COUNT_SCANNED
size_t oam_debug_scanned_bytes(void); /* the library's test builds only */
#endif

/*
 * A 10 MB response (the bridge echoes the prompt) arrives whole. Prints the time it took and, in a library
 * built with -DOAM_COUNT_SCANNED, how many bytes the reader searched for a newline meanwhile: the slow tier
 * (tests/slow/bindings_c_slow.ts) checks that each byte was searched once, which caught the reader searching
 * the whole unfinished line after every 16 KB read (3 s instead of 0.3 s).
 */
static void test_big_response(void) {
    recorder r;
    char *response, *request;
    size_t k, n = 10u * 1024 * 1024;
    size_t scanned = 0;
    struct timespec a, b;
    current_test = "big response";
    if (!start(&r)) return;
    response = call(&r, "{\"id\":1,\"method\":\"session/create\",\"params\":{\"session\":\"echo\",\"model\":{\"type\":"
                        "\"scripted\",\"steps\":[{\"template\":\"{prompt}\"}]}}}",
                    5000);
    oam_string_free(response);
    request = malloc(n + 128);
    k = (size_t)sprintf(request, "{\"id\":\"big\",\"method\":\"session/respond\",\"params\":{\"session\":\"echo\",\"prompt\":\"");
    memset(request + k, 'a', n);
    strcpy(request + k + n, "\"}}");
#ifdef OAM_COUNT_SCANNED
    scanned = oam_debug_scanned_bytes();
#endif
    clock_gettime(CLOCK_MONOTONIC, &a);
    response = call(&r, request, 60000);
    clock_gettime(CLOCK_MONOTONIC, &b);
#ifdef OAM_COUNT_SCANNED
    scanned = oam_debug_scanned_bytes() - scanned;
#endif
    CHECK(contains(response, "\"id\":\"big\",\"result\"") && strlen(response) > n, "%.300s", show(response));
    printf("big response: %ld ms\n", (long)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000));
    if (scanned > 0) printf("big response: %zu bytes searched for newlines, %zu received\n", scanned, strlen(response));
    oam_string_free(response);
    free(request);
    oam_bridge_destroy(r.bridge);
    recorder_free(&r);
}

/* A mkstemp template in $TMPDIR (or the system's temporary directory). */
static void temp_template(char *out, size_t size) {
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0') dir = P_tmpdir;
    snprintf(out, size, "%s/oam-c-test-pid-XXXXXX", dir);
}

/* Starts r's bridge (command, or the configured one when NULL) with a fresh pid file (its path left in
 * pid_file) and returns the bridge's pid (0 when it never wrote it); -1, after a failed check, with r freed,
 * when the bridge did not start. */
static pid_t start_recorded_command(recorder *r, char *pid_file, size_t size, const char *command) {
    int fd;
    temp_template(pid_file, size);
    fd = mkstemp(pid_file);
    if (fd >= 0) close(fd);
    if (!start_command_with_pid(r, pid_file, command)) {
        CHECK(0, "bridge did not start");
        recorder_free(r);
        unlink(pid_file);
        return -1;
    }
    return read_pid(pid_file);
}

/* start_recorded_command with the configured bridge. */
static pid_t start_recorded(recorder *r, char *pid_file, size_t size) {
    return start_recorded_command(r, pid_file, size, NULL);
}

/* start_recorded, then checks that the bridge answers a ping (before a test stops it from reading). */
static pid_t start_answering(recorder *r, char *pid_file, size_t size) {
    char *response;
    pid_t pid = start_recorded(r, pid_file, size);
    if (pid < 0) return pid;
    response = call(r, "{\"id\":1,\"method\":\"ping\"}", 5000);
    CHECK(contains(response, "\"result\""), "%s", show(response));
    oam_string_free(response);
    CHECK(pid > 0, "pid");
    return pid;
}

static void test_bridge_dies_mid_turn(void) {
    recorder r;
    char pid_file[4096];
    char *response, *line;
    pid_t pid;
    current_test = "bridge dies mid-turn";
    recorder_init(&r);
    pid = start_recorded(&r, pid_file, sizeof pid_file);
    if (pid < 0) return;
    CHECK(pid > 0, "pid");
    response = call(&r, "{\"id\":1,\"method\":\"session/create\",\"params\":{\"session\":\"doomed\",\"model\":{\"type\":"
                        "\"scripted\",\"steps\":[{\"text\":\"never\",\"delayMs\":10000}]}}}",
                    5000);
    oam_string_free(response);
    oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"async-1\",\"method\":\"session/respond\","
                              "\"params\":{\"session\":\"doomed\",\"prompt\":\"x\"}}");
    if (pid > 0) kill(pid, SIGKILL);
    response = call(&r, "{\"id\":\"blocking-1\",\"method\":\"session/respond\",\"params\":{\"session\":\"doomed\",\"prompt\":\"y\"}}",
                    0 /* forever: must not hang */);
    CHECK(contains(response, "\"id\":\"blocking-1\",\"error\":{\"code\":-32023") && contains(response, "signal 9"), "%s",
          show(response));
    oam_string_free(response);
    line = wait_line(&r, 3000, "\"id\":\"async-1\"", "-32023");
    CHECK(contains(line, "\"data\":{\"code\":\"shut_down\"}"), "%s", show(line));
    free(line);
    /* Later requests fail the same way; notifications are ignored. */
    CHECK(oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\"}") == OAM_OK, "send after death");
    line = wait_line(&r, 3000, "\"id\":99,", "-32023");
    CHECK(line != NULL, "error for a request sent after death");
    free(line);
    oam_bridge_destroy(r.bridge);
    recorder_free(&r);
    unlink(pid_file);
}

static void test_destroy_ends_process(void) {
    recorder r;
    char pid_file[4096];
    char *response;
    pid_t pid;
    current_test = "destroy ends the bridge";
    recorder_init(&r);
    pid = start_recorded(&r, pid_file, sizeof pid_file);
    if (pid < 0) return;
    response = call(&r, "{\"id\":1,\"method\":\"session/create\",\"params\":{\"session\":\"busy\",\"model\":{\"type\":"
                        "\"scripted\",\"steps\":[{\"text\":\"never\",\"delayMs\":20000}]}}}",
                    5000);
    oam_string_free(response);
    oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"busy-1\",\"method\":\"session/respond\","
                              "\"params\":{\"session\":\"busy\",\"prompt\":\"x\"}}");
    {
        struct timespec a, b;
        long ms;
        clock_gettime(CLOCK_MONOTONIC, &a);
        oam_bridge_destroy(r.bridge); /* a turn is running: shutdown cancels it */
        clock_gettime(CLOCK_MONOTONIC, &b);
        ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
        CHECK(ms < 3500, "destroy took %ld ms", ms);
    }
    CHECK(pid > 0 && kill(pid, 0) != 0 && errno == ESRCH, "the bridge process %d still exists", (int)pid);
    CHECK(count_lines(&r, "busy-1", NULL) == 0, "callback after destroy");
    recorder_free(&r);
    unlink(pid_file);

    current_test = "destroy from inside the callback";
    recorder_init(&r);
    r.destroy_on_line = 1;
    pid = start_recorded(&r, pid_file, sizeof pid_file);
    if (pid < 0) return;
    oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"destroy-me\",\"method\":\"ping\"}");
    {
        char *line = wait_line(&r, 5000, "destroy-me", NULL);
        int ran = line != NULL;
        CHECK(ran, "callback ran");
        free(line);
        /* The recorder may go once the callback no longer uses it (a sleep would not tell ThreadSanitizer). */
        pthread_mutex_lock(&r.lock);
        while (ran && !r.destroyed) pthread_cond_wait(&r.changed, &r.lock);
        pthread_mutex_unlock(&r.lock);
    }
    {
        /* The reader thread reaps the bridge and frees the handle in the background. */
        int waited;
        for (waited = 0; waited < 500 && pid > 0 && kill(pid, 0) == 0; waited++) usleep(10000);
        CHECK(pid > 0 && kill(pid, 0) != 0, "the bridge process %d still exists", (int)pid);
        usleep(200000);
    }
    recorder_free(&r);
    unlink(pid_file);

    current_test = "destroy from inside the callback of a bridge that froze";
    recorder_init(&r);
    r.destroy_on_line = 1;
    pid = start_recorded(&r, pid_file, sizeof pid_file);
    if (pid < 0) return;
    CHECK(pid > 0, "pid");
    r.stop_before_destroy = pid;
    oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"destroy-me\",\"method\":\"ping\"}");
    {
        char *line = wait_line(&r, 5000, "destroy-me", NULL);
        int ran = line != NULL, waited;
        CHECK(ran, "callback ran");
        free(line);
        pthread_mutex_lock(&r.lock);
        while (ran && !r.destroyed) pthread_cond_wait(&r.changed, &r.lock);
        pthread_mutex_unlock(&r.lock);
        /* The frozen bridge answers nothing and never ends its output: it is killed after the 0.5 s it gets. */
        for (waited = 0; waited < 1000 && pid > 0 && kill(pid, 0) == 0; waited++) usleep(10000);
        CHECK(pid > 0 && kill(pid, 0) != 0, "the frozen bridge process %d was left running", (int)pid);
        end_stopped_bridge(pid);
        usleep(200000);
    }
    recorder_free(&r);
    unlink(pid_file);

    /* A game that quits from its tool/call handler while the main thread waits for the turn. */
    current_test = "destroy from inside the callback ends a call waiting on another thread";
    recorder_init(&r);
    r.destroy_on_line = 1;
    r.tool_mode = TOOL_IGNORE;
    pid = start_recorded(&r, pid_file, sizeof pid_file);
    if (pid < 0) return;
    response = call(&r, "{\"id\":1,\"method\":\"session/create\",\"params\":{\"session\":\"quit\",\"tools\":[" GATE_TOOL
                        "}],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":[{\"name\":\"open_gate\","
                        "\"arguments\":{\"gate\":\"north\"}}]}]}}}",
                    5000);
    CHECK(contains(response, "\"result\""), "%s", show(response));
    oam_string_free(response);
    /* Its tool/call carries "requestId":"destroy-me": the callback destroys the bridge, this call returns. */
    response = call(&r, "{\"id\":\"destroy-me\",\"method\":\"session/respond\",\"params\":{\"session\":\"quit\","
                        "\"prompt\":\"Open the gate.\"}}",
                    0);
    CHECK(contains(response, "\"id\":\"destroy-me\"") && contains(response, "-32023") &&
              contains(response, "The bridge was closed."),
          "%s", show(response));
    oam_string_free(response);
    {
        int waited;
        pthread_mutex_lock(&r.lock);
        while (!r.destroyed) pthread_cond_wait(&r.changed, &r.lock);
        pthread_mutex_unlock(&r.lock);
        for (waited = 0; waited < 500 && pid > 0 && kill(pid, 0) == 0; waited++) usleep(10000);
        CHECK(pid > 0 && kill(pid, 0) != 0, "the bridge process %d still exists", (int)pid);
        usleep(200000);
    }
    recorder_free(&r);
    unlink(pid_file);
}

/* The value of OAM_EXIT_WITH_PARENT in the environment of process pid (Linux /proc) into out; 0 when the
 * process has no such variable, -1 when the environment cannot be read. */
static int environment_value(pid_t pid, const char *name, char *out, size_t size) {
    char path[64], data[65536];
    size_t n, k, name_length = strlen(name);
    FILE *f;
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    f = fopen(path, "rb");
    if (!f) return -1;
    n = fread(data, 1, sizeof data - 1, f);
    fclose(f);
    data[n] = '\0';
    for (k = 0; k < n; k += strlen(data + k) + 1) {
        if (strncmp(data + k, name, name_length) == 0 && data[k + name_length] == '=') {
            snprintf(out, size, "%s", data + k + name_length + 1);
            return 1;
        }
    }
    return 0;
}

/* The bridge is started with OAM_EXIT_WITH_PARENT=1 (it stops when the game exits), unless the game set it. */
static void test_exit_with_parent(void) {
    static const char *const values[] = {NULL, "0"};
    size_t v;
    for (v = 0; v < sizeof values / sizeof values[0]; v++) {
        recorder r;
        char pid_file[4096], value[256] = "";
        pid_t pid;
        int found;
        current_test = values[v] ? "OAM_EXIT_WITH_PARENT set by the game is kept" : "OAM_EXIT_WITH_PARENT=1";
        if (values[v]) setenv("OAM_EXIT_WITH_PARENT", values[v], 1);
        recorder_init(&r);
        pid = start_recorded(&r, pid_file, sizeof pid_file);
        if (values[v]) unsetenv("OAM_EXIT_WITH_PARENT");
        if (pid < 0) return;
        CHECK(pid > 0, "pid");
        /* Answered: the shell has become the bridge (during the exec its environment reads as empty). */
        {
            char *response = call(&r, "{\"id\":1,\"method\":\"ping\"}", 10000);
            CHECK(contains(response, "\"result\""), "%s", show(response));
            oam_string_free(response);
        }
        found = pid > 0 ? environment_value(pid, "OAM_EXIT_WITH_PARENT", value, sizeof value) : -1;
#if defined(__linux__)
        CHECK(found == 1 && strcmp(value, values[v] ? values[v] : "1") == 0, "OAM_EXIT_WITH_PARENT is '%s' (%d)",
              value, found);
#else
        (void)found; /* no /proc to read another process's environment */
#endif
        oam_bridge_destroy(r.bridge);
        recorder_free(&r);
        unlink(pid_file);
    }
}

typedef struct {
    oam_bridge *bridge;
    int rc;
} stuck_send;

static void *send_big_line(void *raw) {
    stuck_send *s = raw;
    size_t n = 1024 * 1024, k;
    char *line = malloc(n + 128);
    k = (size_t)sprintf(line, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":{\"x\":\"");
    memset(line + k, 'a', n);
    strcpy(line + k + n, "\"}}");
    s->rc = oam_bridge_send(s->bridge, line);
    free(line);
    return NULL;
}

/* A bridge that stopped reading (frozen, or stopped in a debugger) while a 1 MB line waits on the full pipe
 * (in the library's writer thread; a send on the caller's thread used to). */
static void test_destroy_stuck_bridge(void) {
    recorder r;
    char pid_file[4096];
    pid_t pid;
    pthread_t thread;
    stuck_send s;
    current_test = "destroy a bridge that stopped reading";
    recorder_init(&r);
    pid = start_answering(&r, pid_file, sizeof pid_file);
    if (pid < 0) return;
    if (pid > 0) stop_bridge(pid);
    printf("stopped the bridge (pid %d)\n", (int)pid); /* tests/bindings/c_test.ts signals this program now */
    s.bridge = r.bridge, s.rc = -99;
    pthread_create(&thread, NULL, send_big_line, &s);
    usleep(200000); /* let the line fill the pipe (a hang below, not a failed check, shows the bug) */
    oam_bridge_destroy(r.bridge); /* it answers nothing: killed after 0.5 s */
    pthread_join(thread, NULL);
    CHECK(s.rc == OAM_OK, "send returned %d", s.rc);
    CHECK(pid > 0 && kill(pid, 0) != 0 && errno == ESRCH, "the bridge process %d still exists", (int)pid);
    end_stopped_bridge(pid);
    recorder_free(&r);
    unlink(pid_file);
}

/*
 * A hang guard for the calling thread (the game's main thread): when watchdog_disarm() has not been called
 * within WATCHDOG_MS, the test fails and the program exits, after killing the process the test holds (a stopped
 * bridge or one that does not read). Far above what the guarded calls take: only a call that never returns
 * (blocked on a bridge that does not read its input) reaches it.
 */
#define WATCHDOG_MS 20000
/*
 * The guard of filling a frozen bridge's queue (64 MiB sent in 1 MiB lines, each checked and copied by the
 * library): 0.6 s alone, 7 s under ThreadSanitizer, over 20 s under ThreadSanitizer on a machine busy with other
 * test runs, where WATCHDOG_MS fired though the sends went on.
 */
#define FILL_WATCHDOG_MS 120000

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int disarmed;
    int ms; /* WATCHDOG_MS unless armed with watchdog_arm_for */
    const char *what;
    pthread_t thread;
} watchdog;

static void *watchdog_main(void *raw) {
    watchdog *w = raw;
    struct timespec deadline;
    int fired = 0;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += w->ms / 1000;
    pthread_mutex_lock(&w->lock);
    while (!w->disarmed && !fired) fired = pthread_cond_timedwait(&w->changed, &w->lock, &deadline) == ETIMEDOUT;
    fired = !w->disarmed;
    pthread_mutex_unlock(&w->lock);
    if (fired) {
        pid_t pid = (pid_t)stopped_bridge;
        fprintf(stderr, "FAIL %s: %s did not return (the calling thread is stuck)\n", current_test, w->what);
        if (pid > 0) kill(pid, SIGKILL);
        printf("%d groups, %d checks, %d failures\n", 0, checks, failures + 1);
        _exit(1);
    }
    return NULL;
}

static void watchdog_arm_for(watchdog *w, const char *what, int ms) {
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->changed, NULL);
    w->disarmed = 0;
    w->ms = ms;
    w->what = what;
    pthread_create(&w->thread, NULL, watchdog_main, w);
}

static void watchdog_arm(watchdog *w, const char *what) { watchdog_arm_for(w, what, WATCHDOG_MS); }

static void watchdog_disarm(watchdog *w) {
    pthread_mutex_lock(&w->lock);
    w->disarmed = 1;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->changed);
}

#define PADDED_REQUESTS 4
#define PADDING_BYTES 100000

/*
 * Sends PADDED_REQUESTS requests of 100 KB ("id":"<prefix>-<k>"), far past the 64 KiB of a pipe nobody reads,
 * and a notification, on this thread (the game's main thread) under the watchdog: each send must return OAM_OK.
 */
static void send_past_a_full_pipe(oam_bridge *bridge, const char *prefix) {
    watchdog w;
    char *line = malloc(PADDING_BYTES + 256);
    int k, rc;
    watchdog_arm(&w, "oam_bridge_send to a bridge that does not read its input");
    for (k = 0; k < PADDED_REQUESTS; k++) {
        size_t n = (size_t)sprintf(line, "{\"jsonrpc\":\"2.0\",\"id\":\"%s-%d\",\"method\":\"ping\","
                                         "\"params\":{\"padding\":\"",
                                   prefix, k);
        memset(line + n, 'x', PADDING_BYTES);
        strcpy(line + n + PADDING_BYTES, "\"}}");
        rc = oam_bridge_send(bridge, line);
        CHECK(rc == OAM_OK, "send %d returned %d", k, rc);
    }
    rc = oam_bridge_send(bridge, "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"session\":\"s\"}}");
    CHECK(rc == OAM_OK, "the notification returned %d", rc);
    watchdog_disarm(&w);
    free(line);
}

typedef struct {
    oam_bridge *bridge;
    char *response;
} blocking_ping;

static void *call_ping_forever(void *raw) {
    blocking_ping *c = raw;
    c->response = oam_call_blocking(c->bridge, "{\"id\":\"queued-call\",\"method\":\"ping\"}", 0 /* forever */);
    return NULL;
}

/* Sending never blocks the caller on a bridge that stopped reading its input with the pipe full. */
static void test_send_to_bridge_not_reading(void) {
    recorder r;
    char pid_file[4096];
    char *response;
    pid_t pid;
    int k;

    current_test = "sends to a frozen bridge return at once";
    recorder_init(&r);
    pid = start_answering(&r, pid_file, sizeof pid_file);
    if (pid < 0) return;
    if (pid > 0) {
        pthread_t thread;
        blocking_ping c;
        watchdog w;
        stop_bridge(pid);
        {
            /* A call whose request is larger than the pipe holds times out instead of hanging in the write. */
            size_t padding = 1024 * 1024;
            char *request = malloc(padding + 256);
            size_t n = (size_t)sprintf(request, "{\"id\":\"timed\",\"method\":\"ping\",\"params\":{\"padding\":\"");
            memset(request + n, 'x', padding);
            strcpy(request + n + padding, "\"}}");
            watchdog_arm(&w, "oam_call_blocking with a timeout on a frozen bridge");
            response = call(&r, request, 300);
            watchdog_disarm(&w);
            CHECK(contains(response, "\"id\":\"timed\",\"error\":{\"code\":-32024"), "%.300s", show(response));
            oam_string_free(response);
            free(request);
        }
        send_past_a_full_pipe(r.bridge, "frozen");
        /* A call waiting on another thread, its request queued behind the others, is ended by destroy. */
        c.bridge = r.bridge, c.response = NULL;
        pthread_create(&thread, NULL, call_ping_forever, &c);
        watchdog_arm(&w, "oam_bridge_destroy of a frozen bridge");
        oam_bridge_destroy(r.bridge); /* it answers nothing: killed after 0.5 s */
        watchdog_disarm(&w);
        pthread_join(thread, NULL);
        CHECK(contains(c.response, "\"id\":\"queued-call\",\"error\":{\"code\":-32023") &&
                  contains(c.response, "The bridge was closed."),
              "%s", show(c.response));
        oam_string_free(c.response);
        CHECK(kill(pid, 0) != 0 && errno == ESRCH, "the frozen bridge %d still exists", (int)pid);
        CHECK(count_lines(&r, "frozen-", NULL) == 0, "a callback after destroy");
        end_stopped_bridge(pid);
    } else {
        oam_bridge_destroy(r.bridge);
    }
    recorder_free(&r);
    unlink(pid_file);

    /* Not a bridge: `sleep` never reads its stdin and writes nothing. */
    current_test = "requests to a process that never reads its input";
    recorder_init(&r);
    pid = start_recorded_command(&r, pid_file, sizeof pid_file, "sleep 600");
    if (pid < 0) return;
    CHECK(pid > 0, "pid");
    stopped_bridge = (sig_atomic_t)pid; /* killed if this program is ended meanwhile */
    send_past_a_full_pipe(r.bridge, "unread");
    /* It ends by itself (killed here): the queued requests fail through the callback. */
    if (pid > 0) kill(pid, SIGKILL);
    for (k = 0; k < PADDED_REQUESTS; k++) {
        char id[64];
        char *line;
        snprintf(id, sizeof id, "\"id\":\"unread-%d\"", k);
        line = wait_line(&r, 10000, id, "-32023");
        CHECK(contains(line, "The bridge process exited (signal 9) before answering."), "%s: %s", id, show(line));
        free(line);
    }
    {
        watchdog w;
        watchdog_arm(&w, "oam_bridge_destroy after the process was killed");
        oam_bridge_destroy(r.bridge);
        watchdog_disarm(&w);
    }
    CHECK(pid > 0 && kill(pid, 0) != 0 && errno == ESRCH, "the process %d still exists", (int)pid);
    stopped_bridge = 0;
    recorder_free(&r);
    unlink(pid_file);

    current_test = "destroy a process that never reads its input";
    recorder_init(&r);
    pid = start_recorded_command(&r, pid_file, sizeof pid_file, "sleep 600");
    if (pid < 0) return;
    CHECK(pid > 0, "pid");
    stopped_bridge = (sig_atomic_t)pid;
    send_past_a_full_pipe(r.bridge, "never");
    {
        watchdog w;
        watchdog_arm(&w, "oam_bridge_destroy of a process that does not read");
        oam_bridge_destroy(r.bridge); /* it writes nothing: killed after 0.5 s */
        watchdog_disarm(&w);
    }
    CHECK(pid > 0 && kill(pid, 0) != 0 && errno == ESRCH, "the process %d still exists", (int)pid);
    end_stopped_bridge(pid);
    recorder_free(&r);
    unlink(pid_file);
}

/* A bridge that stopped reading: destroy ends it, and sends to it return at once. */
static void test_bridge_not_reading(void) {
    test_destroy_stuck_bridge();
    test_send_to_bridge_not_reading();
}

/*
 * Waits until the pipe into the stopped bridge `pid` holds bytes, that is until the library's writer thread has
 * taken a line off the queue and is writing it; it stays there, as the bridge (all of its threads stopped) reads
 * nothing, and a line longer than the pipe holds does not fit. Without this, a test that fills the queue races the
 * writer thread, which under valgrind (threads run one at a time) or on a loaded machine may take its first line only
 * after the queue was found full. The caller's watchdog bounds the wait. Linux (/proc); elsewhere it returns at once.
 */
static void wait_writer_blocked(pid_t pid) {
    char path[64];
    int fd, n = 0;
    snprintf(path, sizeof path, "/proc/%ld/fd/0", (long)pid);
    fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return;
    while (ioctl(fd, FIONREAD, &n) == 0 && n <= 0) usleep(1000);
    close(fd);
}

/*
 * Sends pings padded with `padding` bytes (ids full-0, full-1, ...) to the stopped bridge `pid` until one is
 * refused or 1000 went; `request` holds padding + 256 bytes. Returns the last send's code, `*accepted` the number
 * accepted.
 */
static int fill_frozen_queue(recorder *r, pid_t pid, size_t padding, char *request, int *accepted) {
    watchdog w;
    int k, rc = OAM_OK;
    watchdog_arm_for(&w, "sends to a frozen bridge up to the queue limit", FILL_WATCHDOG_MS);
    for (k = 0; k < 1000 && rc == OAM_OK; k++) {
        size_t n = (size_t)sprintf(request, "{\"jsonrpc\":\"2.0\",\"id\":\"full-%d\",\"method\":\"ping\","
                                            "\"params\":{\"padding\":\"", k);
        memset(request + n, 'x', padding);
        strcpy(request + n + padding, "\"}}");
        rc = oam_bridge_send(r->bridge, request);
        if (rc == OAM_OK) *accepted = k + 1;
        if (k == 0) wait_writer_blocked(pid); /* the first line is being written: the queue holds the rest */
    }
    watchdog_disarm(&w);
    return rc;
}

/*
 * A bridge that stopped reading does not let the lines wait without end: past the queue limit (64 MiB waiting
 * to be written) requests and notifications are refused with an error the caller sees, answers to the bridge's
 * tool/calls still go; once it reads again, sending works again.
 */
static void test_queue_limit(void) {
    recorder r;
    char pid_file[4096];
    char *response, *line;
    pid_t pid;
    int k, rc = OAM_OK, accepted = 0;
    size_t padding = 1024 * 1024;
    char *request;
    char last_id[64];
    watchdog w;

    current_test = "sends past the queue limit of a frozen bridge are refused";
    recorder_init(&r);
    pid = start_answering(&r, pid_file, sizeof pid_file);
    if (pid <= 0) {
        if (pid == 0) oam_bridge_destroy(r.bridge);
        recorder_free(&r);
        return;
    }
    stop_bridge(pid);
    request = malloc(padding + 256);
    /* 1 MiB requests until one is refused: a bound far below the loop's end is what is checked. */
    rc = fill_frozen_queue(&r, pid, padding, request, &accepted);
    CHECK(rc == OAM_ERROR_QUEUE_FULL, "the send after %d accepted ones returned %d", accepted, rc);
    /* 64 MiB wait in the queue (63 lines) behind the line being written (the 64 KiB pipe holds less than one). */
    CHECK(accepted == 64, "%d requests of 1 MiB were queued, not 63 behind the one being written", accepted);
    snprintf(last_id, sizeof last_id, "\"id\":\"full-%d\"", accepted - 1);
    /* The limit counts bytes: short lines fill what is left of it (less than 1 MiB), then they are refused too. */
    watchdog_arm(&w, "short sends up to the queue limit");
    for (k = 0, rc = OAM_OK; k < 100000 && rc == OAM_OK; k++) {
        rc = oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}");
    }
    watchdog_disarm(&w);
    CHECK(rc == OAM_ERROR_QUEUE_FULL && k <= 1048576 / 34 + 1, "a 34-byte send %d returned %d", k, rc);
    /* A longer notification is refused; an answer to a tool/call the bridge is waiting for still goes. */
    rc = oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"session\":\"s\"}}");
    CHECK(rc == OAM_ERROR_QUEUE_FULL, "the notification returned %d", rc);
    rc = oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"t-999\",\"result\":{\"output\":\"ok\"}}");
    CHECK(rc == OAM_OK, "the tool/call answer returned %d", rc);
    /* A blocking call answers at once with its id, -32010 busy and the limit. */
    watchdog_arm(&w, "oam_call_blocking past the queue limit");
    response = call(&r, "{\"id\":\"over\",\"method\":\"ping\"}", 0 /* forever: it must not wait */);
    watchdog_disarm(&w);
    CHECK(contains(response, "\"id\":\"over\",\"error\":{\"code\":-32010") &&
              contains(response, "\"data\":{\"code\":\"busy\",\"limit\":67108864}") &&
              contains(response, "'ping' was not sent"),
          "%s", show(response));
    oam_string_free(response);
    /* Reading again, the bridge answers every accepted request (none of the refused ones), and sends go again. */
    kill(pid, SIGCONT);
    stopped_bridge = 0;
    line = wait_line(&r, 60000, last_id, "\"result\"");
    CHECK(line != NULL, "no response to the last accepted request %s", last_id);
    free(line);
    CHECK(count_lines(&r, "\"id\":\"full-", NULL) == accepted, "%d responses to %d accepted requests",
          count_lines(&r, "\"id\":\"full-", NULL), accepted);
    CHECK(count_lines(&r, "\"id\":\"over\"", NULL) == 0, "the refused call reached the bridge");
    rc = oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":\"again\",\"method\":\"ping\"}");
    CHECK(rc == OAM_OK, "a send after the bridge read again returned %d", rc);
    line = wait_line(&r, 10000, "\"id\":\"again\"", "\"result\"");
    CHECK(line != NULL, "no response to the request sent after the bridge read again");
    free(line);
    oam_bridge_destroy(r.bridge);
    free(request);
    recorder_free(&r);
    unlink(pid_file);
}

/*
 * The queue limit is four of the longest lines the bridge reads: one started with --max-line-bytes=262144 lets 1 MiB
 * wait (one with a higher limit as many of its longest lines as the default bridge). The flag is an argument of its
 * own, after the shell's script, as the library reads it (the script passes it on to the bridge).
 */
static void test_queue_limit_scales(void) {
    recorder r;
    char pid_file[4096], script[8400], *response;
    const char *argv[6];
    pid_t pid;
    int k, rc = OAM_OK, accepted = 0, fd;
    size_t padding = 100 * 1024;
    char *request;
    watchdog w;

    current_test = "the queue limit is four times the bridge's --max-line-bytes";
    recorder_init(&r);
    temp_template(pid_file, sizeof pid_file);
    fd = mkstemp(pid_file);
    if (fd >= 0) close(fd);
    snprintf(script, sizeof script, "echo $$ > '%s'; exec %s \"$@\"", pid_file, bridge_command);
    argv[0] = "/bin/sh", argv[1] = "-c", argv[2] = script, argv[3] = "sh", argv[4] = "--max-line-bytes=262144";
    argv[5] = NULL;
    r.bridge = oam_bridge_create_with_command(argv, on_message, &r);
    pid = r.bridge ? read_pid(pid_file) : -1;
    if (pid <= 0) {
        CHECK(0, "bridge did not start");
        if (r.bridge) oam_bridge_destroy(r.bridge);
        recorder_free(&r);
        unlink(pid_file);
        return;
    }
    response = call(&r, "{\"id\":1,\"method\":\"ping\"}", 5000);
    CHECK(contains(response, "\"result\""), "%s", show(response));
    oam_string_free(response);
    stop_bridge(pid);
    request = malloc(padding + 256);
    rc = fill_frozen_queue(&r, pid, padding, request, &accepted);
    /* 1 MiB waits in the queue (ten of these lines) behind the line being written (the 64 KiB pipe holds less). */
    CHECK(rc == OAM_ERROR_QUEUE_FULL && accepted == 11,
          "%d requests of 100 KiB were queued, not ten behind the one being written (%d)", accepted, rc);
    /* A blocking call of the same size answers at once with the limit (less than one such line is left). */
    k = sprintf(request, "{\"id\":\"over\",\"method\":\"ping\",\"params\":{\"padding\":\"");
    memset(request + k, 'x', padding);
    strcpy(request + k + padding, "\"}}");
    watchdog_arm(&w, "oam_call_blocking past the queue limit");
    response = call(&r, request, 0 /* forever: it must not wait */);
    watchdog_disarm(&w);
    CHECK(contains(response, "\"data\":{\"code\":\"busy\",\"limit\":1048576}"), "%.300s", show(response));
    oam_string_free(response);
    kill(pid, SIGCONT);
    stopped_bridge = 0;
    oam_bridge_destroy(r.bridge);
    free(request);
    recorder_free(&r);
    unlink(pid_file);
}

/* Checks oam_json_escape(text) into a buffer of every size from 0 to one past the full length, and oam_json_quote. */
static void check_escape(const char *text, const char *expected) {
    char buffer[256];
    size_t size, full = strlen(expected);
    char *quoted;
    CHECK(oam_json_escape(text, NULL, 0) == full, "length of the escaped '%s': %lu, expected %lu", text,
          (unsigned long)oam_json_escape(text, NULL, 0), (unsigned long)full);
    for (size = 1; size <= full + 1 && size <= sizeof buffer; size++) {
        size_t n;
        memset(buffer, 'X', sizeof buffer);
        n = oam_json_escape(text, buffer, size);
        CHECK(n == full, "escape of '%s' into %lu bytes returned %lu", text, (unsigned long)size, (unsigned long)n);
        /* What fits is a prefix that ends between two escapes (never half of one, or half a character). */
        CHECK(strlen(buffer) < size && strncmp(buffer, expected, strlen(buffer)) == 0 &&
                  (size <= full || strcmp(buffer, expected) == 0),
              "escape of '%s' into %lu bytes: '%s', expected '%s'", text, (unsigned long)size, buffer, expected);
        CHECK(strlen(buffer) + 6 >= size - 1 || size > full, "escape of '%s' into %lu bytes stopped early: '%s'", text,
              (unsigned long)size, buffer);
    }
    quoted = oam_json_quote(text);
    CHECK(quoted && quoted[0] == '"' && strncmp(quoted + 1, expected, full) == 0 && quoted[full + 1] == '"' &&
              quoted[full + 2] == '\0',
          "quote of '%s': %s", text, show(quoted));
    oam_string_free(quoted);
}

static void test_json_escape(void) {
    recorder r;
    char request[1024], *response, *line, *prompt, *expected;
    /* What a player may type: quotes, a backslash, a line break, a tab, an emoji, accents, CJK. */
    const char *player = "Say \"open\" \\ now!\nTab:\there \xF0\x9F\x97\x9D\xEF\xB8\x8F caf\xC3\xA9 \xE9\x96\x80";
    current_test = "json escape";
    check_escape("", "");
    check_escape("plain text", "plain text");
    check_escape("a \"quoted\" word", "a \\\"quoted\\\" word");
    check_escape("back\\slash and /slash", "back\\\\slash and /slash");
    check_escape("line\nbreak\r\ttab\b\f", "line\\nbreak\\r\\ttab\\b\\f");
    check_escape("\x01\x1F\x7F", "\\u0001\\u001f\x7F");
    check_escape("\xF0\x9F\x98\x80 caf\xC3\xA9 \xE2\x80\xA8", "\xF0\x9F\x98\x80 caf\xC3\xA9 \xE2\x80\xA8");
    /* Invalid UTF-8: every byte that does not begin a valid sequence becomes U+FFFD. */
    check_escape("a\xC3(b", "a\xEF\xBF\xBD(b");
    check_escape("\xFF\xFE", "\xEF\xBF\xBD\xEF\xBF\xBD");
    check_escape("\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD");               /* overlong '/' */
    check_escape("\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* a UTF-16 surrogate */
    check_escape("\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* past U+10FFFF */
    check_escape("end\xE2\x82", "end\xEF\xBF\xBD\xEF\xBF\xBD");          /* cut off */
    CHECK(oam_json_quote(NULL) == NULL, "quote of NULL");
    {
        char buffer[4] = "abc";
        CHECK(oam_json_escape(NULL, buffer, sizeof buffer) == 0 && buffer[0] == '\0', "escape of NULL: '%s'", buffer);
    }

    /* The player's line in a request built by hand reaches the model as typed, and the response names the request. */
    current_test = "json escape round trip";
    if (!start(&r)) return;
    response = call(&r, "{\"id\":\"esc1\",\"method\":\"session/create\",\"params\":{\"session\":\"echo\","
                        "\"model\":{\"type\":\"scripted\",\"steps\":[{\"template\":\"{prompt}\"}]}}}",
                    5000);
    CHECK(contains(response, "\"session\":\"echo\""), "%s", show(response));
    oam_string_free(response);
    prompt = oam_json_quote(player);
    CHECK(prompt != NULL, "quote");
    snprintf(request, sizeof request,
             "{\"jsonrpc\":\"2.0\",\"id\":\"esc2\",\"method\":\"session/respond\",\"params\":{\"session\":\"echo\","
             "\"prompt\":%s}}",
             show(prompt));
    CHECK(oam_bridge_send(r.bridge, request) == OAM_OK, "send %s", request);
    line = wait_line(&r, 10000, "\"id\":\"esc2\"", NULL);
    /* The bridge writes JSON as JSON.stringify does, which escapes the same way. */
    expected = malloc(strlen(show(prompt)) + 16);
    sprintf(expected, "\"text\":%s", show(prompt));
    CHECK(contains(line, "\"result\"") && contains(line, expected), "%s\n  expected %s", show(line), expected);
    free(expected);
    free(line);
    oam_string_free(prompt);
    oam_bridge_destroy(r.bridge);
    recorder_free(&r);
}

/*
 * A bridge that exits by itself before answering (a misspelt flag, a missing model file, a wrong
 * OAM_BRIDGE_COMMAND) says why on its stderr, which a game engine's editor may show nowhere: the -32023 error
 * that waiting and later requests get ends with its last three lines on stderr that are not blank, each kept up to
 * 1 KiB. The library passes every line on to this program's stderr as it comes: tests/bindings/c_test.ts checks
 * that for the lines written here (the 5000-digit one whole), and for a line of a bridge that keeps running.
 */
static void test_exit_stderr(void) {
    static const char expected[] =
        "The bridge process exited (exit status 2) before answering. Its last lines on stderr:\\n"
        "stderr line two\\nstderr line three\\nError: Unknown option '--log-levle'; did you mean '--log-level'?";
    recorder r;
    char script[8448], pid_file[4096], long_tail[1200];
    const char *argv[4];
    char *response, *line;
    pid_t holder;
    watchdog guard;
    int fd;
    current_test = "exit-stderr";
    argv[0] = "/bin/sh", argv[1] = "-c", argv[2] = script, argv[3] = NULL;

    /* Four lines and a blank one before the bridge's own: the last three that are not blank are kept. */
    recorder_init(&r);
    snprintf(script, sizeof script,
             "printf 'stderr line one\\nstderr line two\\n\\nstderr line three\\n' >&2; exec %s --log-levle debug",
             bridge_command);
    r.bridge = oam_bridge_create_with_command(argv, on_message, &r);
    if (!r.bridge) {
        CHECK(0, "bridge did not start");
        recorder_free(&r);
        return;
    }
    response = call(&r, "{\"id\":7,\"method\":\"ping\"}", 0 /* forever: must not hang */);
    CHECK(contains(response, "\"id\":7,\"error\":{\"code\":-32023") && contains(response, expected), "%s",
          show(response));
    CHECK(!contains(response, "line one"), "%s", show(response));
    oam_string_free(response);
    /* A request sent later (not waiting when it exited) gets the same message. */
    CHECK(oam_bridge_send(r.bridge, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}") == OAM_OK, "send after exit");
    line = wait_line(&r, 5000, "\"id\":8,", "-32023");
    CHECK(contains(line, expected), "%s", show(line));
    free(line);
    oam_bridge_destroy(r.bridge);
    recorder_free(&r);

    /* A 5000-byte line is kept as its first 1024 bytes and "...". */
    recorder_init(&r);
    snprintf(script, sizeof script, "printf '%%05000d\\n' 0 >&2; exit 2");
    r.bridge = oam_bridge_create_with_command(argv, on_message, &r);
    if (!r.bridge) {
        CHECK(0, "sh did not start");
        recorder_free(&r);
        return;
    }
    response = call(&r, "{\"id\":9,\"method\":\"ping\"}", 0);
    memcpy(long_tail, "Its last lines on stderr:\\n", 27);
    memset(long_tail + 27, '0', 1024);
    memcpy(long_tail + 27 + 1024, "...\"", 5);
    CHECK(contains(response, long_tail), "%s", show(response));
    oam_string_free(response);
    oam_bridge_destroy(r.bridge);
    recorder_free(&r);

    /*
     * A bridge that keeps running: its line is passed on while it runs (c_test.ts looks for it). A process it
     * started holds its stderr open after it ended: destroy still returns (under the watchdog).
     */
    recorder_init(&r);
    temp_template(pid_file, sizeof pid_file);
    fd = mkstemp(pid_file);
    if (fd >= 0) close(fd);
    snprintf(script, sizeof script,
             "echo 'a running bridge says hello on stderr' >&2; sleep 60 >&2 & echo $! > '%s'; exec %s", pid_file,
             bridge_command);
    r.bridge = oam_bridge_create_with_command(argv, on_message, &r);
    if (!r.bridge) {
        CHECK(0, "bridge did not start");
        recorder_free(&r);
        unlink(pid_file);
        return;
    }
    holder = read_pid(pid_file);
    response = call(&r, "{\"id\":10,\"method\":\"ping\"}", 5000);
    CHECK(contains(response, "\"result\""), "%s", show(response));
    oam_string_free(response);
    watchdog_arm(&guard, "oam_bridge_destroy() while a child of the bridge holds its stderr open");
    oam_bridge_destroy(r.bridge);
    watchdog_disarm(&guard);
    if (holder > 0) kill(holder, SIGKILL);
    recorder_free(&r);
    unlink(pid_file);
}

/* The test groups; `test_bridge [name...]` runs only the named ones (e.g. `test_bridge dies-mid-turn`). */
static const struct {
    const char *name;
    void (*run)(void);
    int named_only; /* runs only when named on the command line */
} groups[] = {
    {"arguments", test_arguments, 0},
    {"plain-turn", test_plain_turn_and_invalid_input, 0},
    {"tools", test_tool_round_trip_streaming, 0},
    {"blocking", test_blocking_timeout, 0},
    {"game", test_npc_world_decision, 0},
    {"dies-mid-turn", test_bridge_dies_mid_turn, 0},
    {"destroy", test_destroy_ends_process, 0},
    {"limits", test_limits, 0},
    {"destroy-waiting", test_destroy_with_waiting_calls, 0},
    {"destroy-stuck", test_bridge_not_reading, 0},
    {"exit-with-parent", test_exit_with_parent, 0},
    {"json-escape", test_json_escape, 0},
    {"queue-limit", test_queue_limit, 0},
    {"queue-limit-scales", test_queue_limit_scales, 0},
    {"exit-stderr", test_exit_stderr, 0},
    {"big-response", test_big_response, 1},
};

int main(int argc, char **argv) {
    const char *command = getenv("OAM_BRIDGE_COMMAND");
    const char *path = getenv("OAM_BRIDGE_PATH");
    size_t g;
    int a, ran = 0;
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGTERM, on_ending_signal);
    signal(SIGINT, on_ending_signal);
    signal(SIGHUP, on_ending_signal);
    if (command && *command) {
        snprintf(bridge_command, sizeof bridge_command, "%s", command);
    } else if (path && *path) {
        snprintf(bridge_command, sizeof bridge_command, "%s stdio", path);
    } else {
        snprintf(bridge_command, sizeof bridge_command, "oam stdio");
    }
    for (a = 1; a < argc; a++) {
        int known = 0;
        for (g = 0; g < sizeof groups / sizeof groups[0]; g++) known |= strcmp(argv[a], groups[g].name) == 0;
        if (!known) {
            fprintf(stderr, "unknown test group '%s'; the groups are:", argv[a]);
            for (g = 0; g < sizeof groups / sizeof groups[0]; g++) fprintf(stderr, " %s", groups[g].name);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    for (g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        int selected = argc == 1 && !groups[g].named_only;
        for (a = 1; a < argc; a++) selected |= strcmp(argv[a], groups[g].name) == 0;
        if (!selected) continue;
        groups[g].run();
        ran++;
    }
    printf("%d groups, %d checks, %d failures\n", ran, checks, failures);
    return failures == 0 ? 0 : 1;
}
