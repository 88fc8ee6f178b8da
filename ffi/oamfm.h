/*
 * oamfm.h — the one-step FoundationModels plugin ABI, version 1.1.
 *
 * Implemented by the Swift plugin (swift/, libOAMFoundationModels.dylib) and by the C test double
 * (ffi/fm_double.c, .build/libfm_double.so). Loaded from Deno with Deno.dlopen (ffi/symbols.ts).
 * The JSON payloads (requests, events, error codes) are described in ffi/README.md.
 *
 * All strings are NUL-terminated UTF-8 JSON. Invalid UTF-8 is refused, never repaired: oamfm_open returns NULL,
 * oamfm_submit OAMFM_E_REQUEST, oamfm_cancel OAMFM_E_ARG.
 *
 * Memory:   strings passed in are borrowed for the duration of the call (the plugin copies what it keeps).
 *           The only strings returned are the batches from oamfm_poll; free each exactly once with oamfm_free.
 * Threads:  every function may be called from any thread. Only oamfm_poll waits; everything else returns
 *           promptly and never waits for model work or for the caller.
 * Handles:  an oamfm* is an opaque token, never dereferenced by the caller. The plugin resolves it through
 *           an internal table, so a call with a closed (or garbage) handle is safe: it fails with
 *           OAMFM_E_CLOSED, OAMFM_NOT_FOUND or returns NULL. A poll already in progress when the handle is
 *           closed keeps the handle's state alive (reference count) until it returns.
 * Events:   every accepted request gets exactly one terminal event ("result" or "error"), also when it is
 *           cancelled (error code "cancelled") and when the handle is closed (error code "cancelled").
 * 1.1:      adds native sessions (a step's or prewarm's "native" member, the result's "native" report, the
 *           open option "nativeSessions"); a 1.0 client simply never sends them. See ffi/README.md.
 */
#ifndef OAMFM_H
#define OAMFM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oamfm oamfm; /* opaque handle */

#define OAMFM_ABI_MAJOR 1
#define OAMFM_ABI_MINOR 1

/* (major << 16) | minor. Callable before open. A client must refuse a library whose major differs. */
uint32_t oamfm_abi_version(void);

/* options_json: {"abi":{"major":1,"minor":1},"client":"oam-deno/0.1.0","nativeSessions":8} (unknown fields
   ignored; nativeSessions: live sessions kept, 0–32, default 8, 0 keeps none).
   Returns NULL if the JSON is not an object or the requested major version is not supported. */
oamfm *oamfm_open(const char *options_json);

/* Queues one request: {"id":"<1-64 of [A-Za-z0-9._:-]>","op":"availability"|"step"|"countTokens"|…, …}.
   Never blocks on model work. Returns OAMFM_OK or a transport error below; op-level failures (unknown op,
   invalid fields, model errors) arrive later as the request's "error" event. */
int32_t oamfm_submit(oamfm *h, const char *request_json);

/* Cancels an in-flight request. Returns OAMFM_OK when the request was still in flight: its terminal event
   {"type":"error","error":{"code":"cancelled",…}} is queued before this call returns and no other event of
   that id follows. Returns OAMFM_NOT_FOUND when the id is unknown or already terminated (its terminal event
   — possibly a result that won the race — is then already queued or delivered). */
int32_t oamfm_cancel(oamfm *h, const char *request_id);

/* Waits up to timeout_ms (<0: until an event arrives or the handle is closed; 0: no wait) and returns a JSON
   array of 1..64 event objects (heap string, free with oamfm_free), or NULL on timeout.
   Snapshot events ("text", "partial") of one request that are still queued are coalesced: a newer snapshot
   replaces the request's newest queued event when that is a snapshot of the same kind (snapshots are
   cumulative, nothing is lost).
   A poll that is waiting (or starts before close finished) when the handle is closed returns the oldest
   remaining events, at most 63, followed by {"type":"closed"} (64 in all); events that do not fit are dropped
   with the handle. Any poll on a closed handle returns NULL at once. */
char *oamfm_poll(oamfm *h, int32_t timeout_ms);

/* Frees a string returned by oamfm_poll. NULL is ignored. */
void oamfm_free(char *s);

/* Cancels all in-flight requests (each gets its terminal "cancelled" event), wakes every waiting poll and
   invalidates the handle. Returns immediately. Idempotent; unknown handles are ignored. */
void oamfm_close(oamfm *h);

#define OAMFM_OK 0
#define OAMFM_NOT_FOUND 1  /* cancel: no such in-flight request */
#define OAMFM_E_ARG -1       /* NULL argument */
#define OAMFM_E_CLOSED -2    /* unknown or closed handle */
#define OAMFM_E_REQUEST -3   /* not a JSON object, or missing/invalid "id" or "op" */
#define OAMFM_E_DUPLICATE -4 /* "id" already in flight */

#ifdef __cplusplus
}
#endif

#endif /* OAMFM_H */
