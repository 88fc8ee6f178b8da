/*
 * fm_double.c — a test double of the one-step FoundationModels plugin (ffi/oamfm.h), for Linux and CI.
 *
 * Build: gcc -shared -fPIC -O2 -pthread -Wall -o .build/libfm_double.so ffi/fm_double.c   (deno task build:double)
 *
 * It implements the real transport semantics of the ABI (handle table and reference counts, one terminal
 * event per request, cancellation mid-stream, close waking a blocked poll, coalesced snapshots, duplicate ids,
 * submit after close) and plays scripted behaviour per request. See "The C test double" in ffi/README.md.
 *
 * Script sources, first match wins:
 *   1. the request's own "x-double" object;
 *   2. op "availability": the availability from the open options ({"x-double":{"availability":{…}}}) or
 *      from the OAM_FM_DOUBLE environment variable ({"availability":{…},"steps":[…]}), else a default;
 *   3. op "step": the next entry of the open options' or OAM_FM_DOUBLE's "steps" queue, else a default text;
 *   4. other ops: error "unsupported".
 * Script fields: "events" [objects], "delayMs" n (before each event and before the terminal event),
 * "result" {…} | "error" {…}, "echo" true (first event {"type":"echo","request":<request>}),
 * "hang" true (no terminal event until cancel/close), "coalesce" false, "echoAsText" true (the result is
 * {"kind":"text","text":<the verbatim request as a string>}),
 * "stream" {"count": n, "chunk": "x"} (n cumulative text snapshots, before "events").
 *
 * Native sessions (ABI 1.1, see "Native sessions" in ffi/README.md) are modelled like the plugin keeps them:
 * a per-handle table of live sessions (key, the instructions + tools text, the number of history entries the
 * session's transcript holds), least recently used evicted past the capacity (open option
 * "nativeSessions", default 8, 0 disables keeping). A step's {"native":{"key","continue"}} takes its live
 * session out of the table, continues it when the instructions/tools match and the history has exactly the
 * entries it holds, else rebuilds; a text or structured result of a step with a non-empty prompt keeps the
 * session (history + 2 entries); the result gets {"native":{"key","rebuilt","reason","evaluatedEntries",
 * "kept"}}. "prewarm" with a native key keeps a session that holds the request's history.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oamfm.h"

#define MAX_DEPTH 200
#define MAX_BATCH 64 /* events per poll batch, including the final {"type":"closed"} */
#define NATIVE_MAX 32
#define NATIVE_DEFAULT 8

/* ------------------------------------------------------------------------------------------------ */
/* A tiny JSON scanner: validates syntax and finds value spans; never allocates.                     */

typedef struct {
  const char *s;
  size_t n;
  size_t i;
  int depth;
} scan_t;

static void skip_ws(scan_t *c) {
  while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
    c->i++;
}

static int scan_value(scan_t *c);

static int scan_string(scan_t *c) {
  if (c->i >= c->n || c->s[c->i] != '"') return 0;
  c->i++;
  while (c->i < c->n) {
    unsigned char ch = (unsigned char)c->s[c->i];
    if (ch == '"') {
      c->i++;
      return 1;
    }
    if (ch < 0x20) return 0;
    if (ch == '\\') {
      c->i++;
      if (c->i >= c->n) return 0;
      char e = c->s[c->i];
      if (e == 'u') {
        for (int k = 1; k <= 4; k++) {
          if (c->i + k >= c->n) return 0;
          char h = c->s[c->i + k];
          if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) return 0;
        }
        c->i += 4;
      } else if (!strchr("\"\\/bfnrt", e)) {
        return 0;
      }
    }
    c->i++;
  }
  return 0;
}

static int scan_number(scan_t *c) {
  size_t start = c->i;
  if (c->i < c->n && c->s[c->i] == '-') c->i++;
  size_t digits = c->i;
  while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
  if (c->i == digits) return 0;
  if (c->i < c->n && c->s[c->i] == '.') {
    c->i++;
    size_t f = c->i;
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
    if (c->i == f) return 0;
  }
  if (c->i < c->n && (c->s[c->i] == 'e' || c->s[c->i] == 'E')) {
    c->i++;
    if (c->i < c->n && (c->s[c->i] == '+' || c->s[c->i] == '-')) c->i++;
    size_t f = c->i;
    while (c->i < c->n && c->s[c->i] >= '0' && c->s[c->i] <= '9') c->i++;
    if (c->i == f) return 0;
  }
  return c->i > start;
}

static int scan_literal(scan_t *c, const char *lit) {
  size_t l = strlen(lit);
  if (c->n - c->i < l || memcmp(c->s + c->i, lit, l) != 0) return 0;
  c->i += l;
  return 1;
}

static int scan_container(scan_t *c, char open, char close) {
  if (++c->depth > MAX_DEPTH) return 0;
  c->i++; /* open */
  skip_ws(c);
  if (c->i < c->n && c->s[c->i] == close) {
    c->i++;
    c->depth--;
    return 1;
  }
  for (;;) {
    skip_ws(c);
    if (open == '{') {
      if (!scan_string(c)) return 0;
      skip_ws(c);
      if (c->i >= c->n || c->s[c->i] != ':') return 0;
      c->i++;
      skip_ws(c);
    }
    if (!scan_value(c)) return 0;
    skip_ws(c);
    if (c->i >= c->n) return 0;
    if (c->s[c->i] == ',') {
      c->i++;
      continue;
    }
    if (c->s[c->i] == close) {
      c->i++;
      c->depth--;
      return 1;
    }
    return 0;
  }
}

static int scan_value(scan_t *c) {
  skip_ws(c);
  if (c->i >= c->n) return 0;
  switch (c->s[c->i]) {
    case '{': return scan_container(c, '{', '}');
    case '[': return scan_container(c, '[', ']');
    case '"': return scan_string(c);
    case 't': return scan_literal(c, "true");
    case 'f': return scan_literal(c, "false");
    case 'n': return scan_literal(c, "null");
    default: return scan_number(c);
  }
}

/* A span [p, p+n) of JSON text. */
typedef struct {
  const char *p;
  size_t n;
} span_t;

/* True when text is exactly one JSON object (surrounding whitespace allowed); *obj receives its span. */
static int json_object(const char *text, size_t len, span_t *obj) {
  scan_t c = {text, len, 0, 0};
  skip_ws(&c);
  if (c.i >= c.n || c.s[c.i] != '{') return 0;
  size_t start = c.i;
  if (!scan_value(&c)) return 0;
  size_t end = c.i;
  skip_ws(&c);
  if (c.i != c.n) return 0;
  obj->p = text + start;
  obj->n = end - start;
  return 1;
}

/* Finds member `key` (plain ASCII, no escapes) of a valid object span. */
static int json_get(span_t obj, const char *key, span_t *out) {
  if (obj.n < 2 || obj.p[0] != '{') return 0;
  scan_t c = {obj.p, obj.n, 1, 0};
  size_t klen = strlen(key);
  for (;;) {
    skip_ws(&c);
    if (c.i >= c.n || c.s[c.i] == '}') return 0;
    size_t ks = c.i;
    if (!scan_string(&c)) return 0;
    size_t ke = c.i;
    skip_ws(&c);
    c.i++; /* ':' */
    skip_ws(&c);
    size_t vs = c.i;
    if (!scan_value(&c)) return 0;
    size_t ve = c.i;
    if (ke - ks - 2 == klen && memcmp(c.s + ks + 1, key, klen) == 0) {
      out->p = c.s + vs;
      out->n = ve - vs;
      return 1;
    }
    skip_ws(&c);
    if (c.i < c.n && c.s[c.i] == ',') c.i++;
  }
}

/* Iterates the elements of a valid array span: *pos starts at 0; returns 0 at the end. */
static int json_next(span_t arr, size_t *pos, span_t *elem) {
  if (arr.n < 2 || arr.p[0] != '[') return 0;
  scan_t c = {arr.p, arr.n, *pos == 0 ? 1 : *pos, 0};
  skip_ws(&c);
  if (c.i < c.n && c.s[c.i] == ',') c.i++;
  skip_ws(&c);
  if (c.i >= c.n || c.s[c.i] == ']') return 0;
  size_t vs = c.i;
  if (!scan_value(&c)) return 0;
  elem->p = c.s + vs;
  elem->n = c.i - vs;
  *pos = c.i;
  return 1;
}

/* Copies a JSON string value without escapes into buf; returns 0 for escapes, non-strings or overflow. */
static int json_plain_string(span_t v, char *buf, size_t cap) {
  if (v.n < 2 || v.p[0] != '"') return 0;
  size_t l = v.n - 2;
  if (l + 1 > cap || memchr(v.p + 1, '\\', l)) return 0;
  memcpy(buf, v.p + 1, l);
  buf[l] = 0;
  return 1;
}

static long json_long(span_t v, long dflt) {
  if (v.n == 0 || !((v.p[0] >= '0' && v.p[0] <= '9') || v.p[0] == '-')) return dflt;
  char tmp[32];
  size_t l = v.n < sizeof tmp - 1 ? v.n : sizeof tmp - 1;
  memcpy(tmp, v.p, l);
  tmp[l] = 0;
  return strtol(tmp, NULL, 10);
}

static int json_is_true(span_t v) { return v.n == 4 && memcmp(v.p, "true", 4) == 0; }
static int json_is_false(span_t v) { return v.n == 5 && memcmp(v.p, "false", 5) == 0; }

/* Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF), as the Swift plugin decodes. */
static int utf8_valid(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len;
    unsigned long cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return 0;
    }
    if (i + len > n) return 0;
    for (size_t k = 1; k < len; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
    i += len;
  }
  return 1;
}

/* Number of elements of an array span (0 for anything else). */
static long json_count(span_t arr) {
  size_t pos = 0;
  span_t e;
  long n = 0;
  while (json_next(arr, &pos, &e)) n++;
  return n;
}

static char *dup_span(span_t v) {
  char *s = malloc(v.n + 1);
  if (!s) return NULL;
  memcpy(s, v.p, v.n);
  s[v.n] = 0;
  return s;
}

/* Appends JSON-escaped text to a growable buffer. */
typedef struct {
  char *p;
  size_t n, cap;
} buf_t;

static int buf_put(buf_t *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return 0;
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
  return 1;
}

static int buf_str(buf_t *b, const char *s) { return buf_put(b, s, strlen(s)); }

/* Appends `s` as a JSON string literal. */
static int buf_json_string(buf_t *b, const char *s) {
  if (!buf_str(b, "\"")) return 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    if (*p == '"' || *p == '\\') {
      esc[0] = '\\';
      esc[1] = (char)*p;
      if (!buf_put(b, esc, 2)) return 0;
    } else if (*p < 0x20) {
      snprintf(esc, sizeof esc, "\\u%04x", *p);
      if (!buf_str(b, esc)) return 0;
    } else if (!buf_put(b, (const char *)p, 1)) {
      return 0;
    }
  }
  return buf_str(b, "\"");
}

/* ------------------------------------------------------------------------------------------------ */
/* Handles, requests and the event queue.                                                           */

enum { EV_OTHER = 0, EV_TEXT = 1, EV_PARTIAL = 2 };

typedef struct event {
  struct event *next;
  char *json;      /* one event object */
  char req_id[72]; /* "" for handle-level events */
  int kind;
} event_t;

typedef struct request request_t;

/* A live native session: what the plugin keeps between steps (see the header comment). */
typedef struct {
  char key[72];
  char *signature;     /* instructions and tools JSON text */
  long history;        /* history entries its transcript holds (after the instructions entry) */
  unsigned long stamp; /* last use, for least-recently-used eviction */
} native_t;

typedef struct fm {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* signalled on new events, cancellation and close */
  int refs;            /* owner (until close) + running polls + workers */
  int closed;
  int closed_delivered;
  event_t *head, *tail;
  request_t *inflight; /* linked through request_t.next */
  char *availability;  /* JSON object text */
  char *steps;         /* JSON array text of step scripts (may be NULL) */
  size_t step_pos;
  native_t native[NATIVE_MAX];
  int native_count;
  int native_cap;
  unsigned long native_clock;
} fm_t;

struct request {
  request_t *next;
  fm_t *h;
  char id[72];
  int done; /* terminal event queued (by the worker, cancel or close) */
  int coalesce;
  char *request; /* verbatim request JSON */
  char *script;  /* script object JSON (owned) */
  /* Native session of a step or prewarm with {"native":{"key",…}} (0: none, 1: step, 2: prewarm). */
  int native;
  char native_key[72];
  int native_rebuilt;
  const char *native_reason;
  long native_evaluated;
  char *native_signature; /* kept with the session when the step keeps it (owned until then) */
  long native_history;    /* history entries the session holds after this request */
  int native_keepable;    /* a step with a non-empty prompt, or a prewarm */
};

typedef struct slot {
  struct slot *next;
  uintptr_t token;
  fm_t *h;
} slot_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static slot_t *g_slots;
static uintptr_t g_next_token = 1;

static fm_t *acquire(oamfm *token) {
  fm_t *h = NULL;
  pthread_mutex_lock(&g_lock);
  for (slot_t *s = g_slots; s; s = s->next) {
    if (s->token == (uintptr_t)token) {
      h = s->h;
      pthread_mutex_lock(&h->lock);
      h->refs++;
      pthread_mutex_unlock(&h->lock);
      break;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return h;
}

static void free_events(event_t *e) {
  while (e) {
    event_t *n = e->next;
    free(e->json);
    free(e);
    e = n;
  }
}

static void release(fm_t *h) {
  pthread_mutex_lock(&h->lock);
  int last = --h->refs == 0;
  pthread_mutex_unlock(&h->lock);
  if (!last) return;
  free_events(h->head);
  free(h->availability);
  free(h->steps);
  for (int i = 0; i < h->native_count; i++) free(h->native[i].signature);
  pthread_mutex_destroy(&h->lock);
  pthread_cond_destroy(&h->cond);
  free(h);
}

/* Queues an event (lock held). `body` is an object text; the request id is injected as its first member. */
static void enqueue_locked(fm_t *h, const char *req_id, int kind, int coalesce, const char *body, size_t body_len) {
  buf_t b = {0};
  if (req_id && req_id[0]) {
    buf_str(&b, "{\"id\":\"");
    buf_str(&b, req_id);
    buf_str(&b, "\"");
    /* body is "{...}": append a comma unless it is empty */
    size_t i = 1;
    while (i < body_len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\t' || body[i] == '\r')) i++;
    if (i < body_len && body[i] != '}') buf_str(&b, ",");
    buf_put(&b, body + 1, body_len - 1);
  } else {
    buf_put(&b, body, body_len);
  }
  if (!b.p) return;
  if (coalesce && (kind == EV_TEXT || kind == EV_PARTIAL)) {
    event_t *last = NULL;
    for (event_t *e = h->head; e; e = e->next)
      if (strcmp(e->req_id, req_id) == 0) last = e;
    if (last && last->kind == kind) {
      free(last->json);
      last->json = b.p;
      return;
    }
  }
  event_t *e = calloc(1, sizeof *e);
  if (!e) {
    free(b.p);
    return;
  }
  e->json = b.p;
  e->kind = kind;
  if (req_id) snprintf(e->req_id, sizeof e->req_id, "%s", req_id);
  if (h->tail)
    h->tail->next = e;
  else
    h->head = e;
  h->tail = e;
  pthread_cond_broadcast(&h->cond);
}

static void enqueue_str_locked(fm_t *h, const char *req_id, int kind, int coalesce, const char *body) {
  enqueue_locked(h, req_id, kind, coalesce, body, strlen(body));
}

static void unlink_inflight_locked(fm_t *h, request_t *r) {
  for (request_t **pp = &h->inflight; *pp; pp = &(*pp)->next) {
    if (*pp == r) {
      *pp = r->next;
      r->next = NULL;
      return;
    }
  }
}

static const char CANCELLED[] = "{\"type\":\"error\",\"error\":{\"code\":\"cancelled\",\"message\":\"The request was cancelled.\"}}";
static const char CLOSED_CANCEL[] = "{\"type\":\"error\",\"error\":{\"code\":\"cancelled\",\"message\":\"The plugin was closed.\"}}";

/* ------------------------------------------------------------------------------------------------ */
/* Native sessions (lock held in all of these).                                                      */

/* Removes the live session under `key` into *out; returns 1 when there was one. */
static int native_take(fm_t *h, const char *key, native_t *out) {
  for (int i = 0; i < h->native_count; i++) {
    if (strcmp(h->native[i].key, key) == 0) {
      *out = h->native[i];
      h->native[i] = h->native[--h->native_count];
      return 1;
    }
  }
  return 0;
}

/* Keeps a live session under `key` (takes `signature`), evicting the least recently used one when full. */
static void native_keep(fm_t *h, const char *key, char *signature, long history) {
  native_t old;
  if (native_take(h, key, &old)) free(old.signature);
  if (h->native_cap <= 0) {
    free(signature);
    return;
  }
  if (h->native_count >= h->native_cap) {
    int oldest = 0;
    for (int i = 1; i < h->native_count; i++)
      if (h->native[i].stamp < h->native[oldest].stamp) oldest = i;
    free(h->native[oldest].signature);
    h->native[oldest] = h->native[--h->native_count];
  }
  native_t *n = &h->native[h->native_count++];
  snprintf(n->key, sizeof n->key, "%s", key);
  n->signature = signature;
  n->history = history;
  n->stamp = ++h->native_clock;
}

static int valid_id(const char *id);

/* Reads a step's or prewarm's "native" member and decides between continuing and rebuilding. */
static void native_begin(fm_t *h, request_t *r, span_t req, int is_step) {
  span_t v, k, c, instr, tools, hist, prompt;
  if (!json_get(req, "native", &v) || v.n == 0 || v.p[0] != '{') return;
  if (!json_get(v, "key", &k) || !json_plain_string(k, r->native_key, sizeof r->native_key) ||
      !valid_id(r->native_key))
    return;
  r->native = is_step ? 1 : 2;
  int has_instr = json_get(req, "instructions", &instr) && !(instr.n == 4 && memcmp(instr.p, "null", 4) == 0);
  int has_tools = json_get(req, "tools", &tools) && json_count(tools) > 0;
  long history = json_get(req, "history", &hist) ? json_count(hist) : 0;
  buf_t sig = {0};
  if (has_instr) buf_put(&sig, instr.p, instr.n);
  buf_str(&sig, "\x1f");
  if (has_tools) buf_put(&sig, tools.p, tools.n);
  r->native_signature = sig.p;

  int want = is_step && json_get(v, "continue", &c) && json_is_true(c);
  native_t live;
  int found = native_take(h, r->native_key, &live);
  if (!want) {
    r->native_reason = "new";
  } else if (!found) {
    r->native_reason = "missing";
  } else if (!sig.p || strcmp(live.signature, sig.p) != 0 || live.history != history) {
    r->native_reason = "changed";
  } else {
    r->native_reason = "continued";
  }
  if (found) free(live.signature);
  r->native_rebuilt = strcmp(r->native_reason, "continued") != 0;
  int prompt_entry = is_step ? 1 : 0;
  r->native_evaluated = r->native_rebuilt ? (has_instr || has_tools ? 1 : 0) + history + prompt_entry : 1;
  int has_prompt = json_get(req, "prompt", &prompt) && prompt.n > 2 && prompt.p[0] == '"';
  r->native_keepable = is_step ? has_prompt : 1;
  r->native_history = is_step ? history + 2 : history;
}

/* Appends a result object with the request's native report added; keeps the session when it may. */
static void native_result(fm_t *h, request_t *r, buf_t *b, span_t res) {
  span_t kind;
  int kept = 0;
  if (r->native_keepable && h->native_cap > 0 && r->native_signature) {
    if (r->native == 2) {
      kept = 1;
    } else if (json_get(res, "kind", &kind)) {
      kept = (kind.n == 6 && memcmp(kind.p, "\"text\"", 6) == 0) ||
             (kind.n == 12 && memcmp(kind.p, "\"structured\"", 12) == 0);
    }
  }
  if (kept) {
    native_keep(h, r->native_key, r->native_signature, r->native_history);
    r->native_signature = NULL;
  }
  /* res is "{…}": copy all but the closing brace, then the report. */
  buf_put(b, res.p, res.n - 1);
  size_t i = 1;
  while (i < res.n - 1 && (res.p[i] == ' ' || res.p[i] == '\n' || res.p[i] == '\t' || res.p[i] == '\r')) i++;
  if (i < res.n - 1) buf_str(b, ",");
  char report[256];
  snprintf(report, sizeof report,
           "\"native\":{\"key\":\"%s\",\"rebuilt\":%s,\"reason\":\"%s\",\"evaluatedEntries\":%ld,\"kept\":%s}}",
           r->native_key, r->native_rebuilt ? "true" : "false", r->native_reason, r->native_evaluated,
           kept ? "true" : "false");
  buf_str(b, report);
}

/* ------------------------------------------------------------------------------------------------ */
/* Workers: one detached thread per request plays its script.                                        */

static void deadline_after(struct timespec *ts, long ms) {
  clock_gettime(CLOCK_MONOTONIC, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

/* Waits ms (lock held) unless the request ends; returns 1 when it may continue. */
static int wait_locked(request_t *r, long ms) {
  if (ms <= 0) return !r->done;
  struct timespec ts;
  deadline_after(&ts, ms);
  while (!r->done) {
    int rc = pthread_cond_timedwait(&r->h->cond, &r->h->lock, &ts);
    if (rc == ETIMEDOUT) break;
  }
  return !r->done;
}

static int classify(span_t ev) {
  span_t t;
  char type[16];
  if (json_get(ev, "type", &t) && json_plain_string(t, type, sizeof type)) {
    if (strcmp(type, "text") == 0) return EV_TEXT;
    if (strcmp(type, "partial") == 0) return EV_PARTIAL;
  }
  return EV_OTHER;
}

/* Sleeps `delay` ms unless the request ends, then queues `body` (an object) for it. Returns 0 once ended. */
static int emit(request_t *r, long delay, int kind, const char *body, size_t len) {
  fm_t *h = r->h;
  pthread_mutex_lock(&h->lock);
  int ok = wait_locked(r, delay);
  if (ok) enqueue_locked(h, r->id, kind, r->coalesce, body, len);
  pthread_mutex_unlock(&h->lock);
  return ok;
}

static void *worker(void *arg) {
  request_t *r = arg;
  fm_t *h = r->h;
  span_t script = {r->script, strlen(r->script)}, v;
  long delay = json_get(script, "delayMs", &v) ? json_long(v, 0) : 0;
  int alive = 1;

  if (json_get(script, "echo", &v) && json_is_true(v)) {
    buf_t b = {0};
    buf_str(&b, "{\"type\":\"echo\",\"request\":");
    buf_str(&b, r->request);
    buf_str(&b, "}");
    if (b.p) alive = emit(r, 0, EV_OTHER, b.p, b.n);
    free(b.p);
  }
  if (alive && json_get(script, "stream", &v)) {
    span_t cnt, chunk;
    long count = json_get(v, "count", &cnt) ? json_long(cnt, 0) : 0;
    char piece[64] = "x";
    if (json_get(v, "chunk", &chunk)) json_plain_string(chunk, piece, sizeof piece);
    size_t plen = strlen(piece);
    buf_t text = {0};
    buf_str(&text, "{\"type\":\"text\",\"text\":\"");
    size_t prefix = text.n;
    for (long k = 0; k < count && alive; k++) {
      text.n = prefix + (size_t)k * plen; /* cumulative: keep the previous pieces */
      buf_str(&text, piece);
      buf_str(&text, "\"}");
      alive = emit(r, delay, EV_TEXT, text.p, text.n);
    }
    free(text.p);
  }
  span_t events;
  if (alive && json_get(script, "events", &events)) {
    size_t pos = 0;
    span_t ev;
    while (alive && json_next(events, &pos, &ev)) {
      if (ev.n < 2 || ev.p[0] != '{') continue;
      alive = emit(r, delay, classify(ev), ev.p, ev.n);
    }
  }

  pthread_mutex_lock(&h->lock);
  if (alive && json_get(script, "hang", &v) && json_is_true(v)) {
    while (!r->done) pthread_cond_wait(&h->cond, &h->lock);
  }
  if (wait_locked(r, delay)) {
    span_t res;
    buf_t b = {0};
    if (json_get(script, "echoAsText", &res) && json_is_true(res)) {
      buf_t text = {0};
      buf_str(&text, "{\"kind\":\"text\",\"text\":");
      buf_json_string(&text, r->request);
      buf_str(&text, ",\"usage\":null}");
      buf_str(&b, "{\"type\":\"result\",\"result\":");
      if (r->native && text.p) {
        native_result(h, r, &b, (span_t){text.p, text.n});
      } else if (text.p) {
        buf_put(&b, text.p, text.n);
      }
      free(text.p);
    } else if (json_get(script, "error", &res)) {
      buf_str(&b, "{\"type\":\"error\",\"error\":");
      buf_put(&b, res.p, res.n);
    } else if (json_get(script, "result", &res)) {
      buf_str(&b, "{\"type\":\"result\",\"result\":");
      if (r->native && res.n >= 2 && res.p[0] == '{') {
        native_result(h, r, &b, res);
      } else {
        buf_put(&b, res.p, res.n);
      }
    } else {
      buf_str(&b, "{\"type\":\"result\",\"result\":");
      if (r->native) {
        native_result(h, r, &b, (span_t){"{}", 2});
      } else {
        buf_str(&b, "{}");
      }
    }
    buf_str(&b, "}");
    if (b.p) enqueue_locked(h, r->id, EV_OTHER, 0, b.p, b.n);
    free(b.p);
    r->done = 1;
    unlink_inflight_locked(h, r);
  }
  pthread_mutex_unlock(&h->lock);

  free(r->request);
  free(r->script);
  free(r->native_signature);
  free(r);
  release(h);
  return NULL;
}

/* ------------------------------------------------------------------------------------------------ */
/* The ABI.                                                                                          */

uint32_t oamfm_abi_version(void) { return ((uint32_t)OAMFM_ABI_MAJOR << 16) | OAMFM_ABI_MINOR; }

static const char DEFAULT_AVAILABILITY[] =
    "{\"available\":true,\"contextSize\":4096,\"variant\":\"fm_double\",\"supportedLanguages\":[\"en\"],"
    "\"plugin\":{\"impl\":\"c-double\",\"version\":\"0.2.0\",\"abi\":\"1.1\"},"
    "\"features\":{\"toolCallingMode\":true,\"usage\":false,\"tokenCount\":false,\"variant\":true,"
    "\"nativeSessions\":true}}";

oamfm *oamfm_open(const char *options_json) {
  if (!options_json) return NULL;
  span_t opts, v, dbl;
  size_t options_len = strlen(options_json);
  if (!utf8_valid((const unsigned char *)options_json, options_len)) return NULL;
  if (!json_object(options_json, options_len, &opts)) return NULL;
  if (json_get(opts, "abi", &v)) {
    span_t major;
    if (json_get(v, "major", &major) && json_long(major, -1) != OAMFM_ABI_MAJOR) return NULL;
  }
  fm_t *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  pthread_mutex_init(&h->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&h->cond, &ca);
  pthread_condattr_destroy(&ca);
  h->refs = 1;
  h->native_cap = NATIVE_DEFAULT;
  if (json_get(opts, "nativeSessions", &v)) {
    long cap = json_long(v, NATIVE_DEFAULT);
    h->native_cap = cap < 0 ? 0 : cap > NATIVE_MAX ? NATIVE_MAX : (int)cap;
  }

  /* Behaviour: open options' "x-double", else the OAM_FM_DOUBLE environment variable. */
  span_t config = {0};
  int have = json_get(opts, "x-double", &dbl) && dbl.n > 0 && dbl.p[0] == '{';
  if (have) {
    config = dbl;
  } else {
    const char *env = getenv("OAM_FM_DOUBLE");
    if (env && json_object(env, strlen(env), &dbl)) {
      config = dbl;
      have = 1;
    }
  }
  if (have && json_get(config, "availability", &v) && v.p[0] == '{') h->availability = dup_span(v);
  if (have && json_get(config, "steps", &v) && v.p[0] == '[') h->steps = dup_span(v);
  if (!h->availability) h->availability = strdup(DEFAULT_AVAILABILITY);

  pthread_mutex_lock(&g_lock);
  uintptr_t token = (g_next_token++) << 4;
  slot_t *s = calloc(1, sizeof *s);
  if (!s || !h->availability) {
    pthread_mutex_unlock(&g_lock);
    free(s);
    release(h);
    return NULL;
  }
  s->token = token;
  s->h = h;
  s->next = g_slots;
  g_slots = s;
  pthread_mutex_unlock(&g_lock);
  return (oamfm *)token;
}

static int valid_id(const char *id) {
  size_t l = strlen(id);
  if (l < 1 || l > 64) return 0;
  for (size_t i = 0; i < l; i++) {
    char c = id[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == ':' || c == '-'))
      return 0;
  }
  return 1;
}

int32_t oamfm_submit(oamfm *token, const char *request_json) {
  if (!token || !request_json) return OAMFM_E_ARG;
  fm_t *h = acquire(token);
  if (!h) return OAMFM_E_CLOSED;
  span_t req, v;
  char id[72], op[64];
  size_t request_len = strlen(request_json);
  if (!utf8_valid((const unsigned char *)request_json, request_len) ||
      !json_object(request_json, request_len, &req) || !json_get(req, "id", &v) ||
      !json_plain_string(v, id, sizeof id) || !valid_id(id) || !json_get(req, "op", &v) ||
      !json_plain_string(v, op, sizeof op) || op[0] == 0) {
    release(h);
    return OAMFM_E_REQUEST;
  }
  request_t *r = calloc(1, sizeof *r);
  if (!r) {
    release(h);
    return OAMFM_E_ARG;
  }
  snprintf(r->id, sizeof r->id, "%s", id);
  r->h = h; /* the acquired reference now belongs to the worker */
  r->coalesce = 1;
  r->request = dup_span(req);

  pthread_mutex_lock(&h->lock);
  if (h->closed) {
    pthread_mutex_unlock(&h->lock);
    free(r->request);
    free(r);
    release(h);
    return OAMFM_E_CLOSED;
  }
  for (request_t *x = h->inflight; x; x = x->next) {
    if (strcmp(x->id, id) == 0) {
      pthread_mutex_unlock(&h->lock);
      free(r->request);
      free(r);
      release(h);
      return OAMFM_E_DUPLICATE;
    }
  }
  /* Pick the script. */
  if (json_get(req, "x-double", &v) && v.p[0] == '{') {
    r->script = dup_span(v);
  } else if (strcmp(op, "availability") == 0) {
    buf_t b = {0};
    buf_str(&b, "{\"result\":");
    buf_str(&b, h->availability);
    buf_str(&b, "}");
    r->script = b.p;
  } else if (strcmp(op, "prewarm") == 0) {
    r->script = strdup("{\"result\":{}}");
  } else if (strcmp(op, "step") == 0) {
    span_t steps = {h->steps, h->steps ? strlen(h->steps) : 0}, elem;
    size_t pos = h->step_pos;
    if (h->steps && json_next(steps, &pos, &elem) && elem.p[0] == '{') {
      h->step_pos = pos;
      r->script = dup_span(elem);
    } else {
      r->script = strdup("{\"result\":{\"kind\":\"text\",\"text\":\"Hello from the test double.\",\"usage\":null}}");
    }
  } else {
    buf_t b = {0};
    buf_str(&b, "{\"error\":{\"code\":\"unsupported\",\"message\":\"The test double does not support '");
    buf_str(&b, op);
    buf_str(&b, "'.\"}}");
    r->script = b.p;
  }
  span_t script = {r->script, r->script ? strlen(r->script) : 0};
  if (script.n && json_get(script, "coalesce", &v) && json_is_false(v)) r->coalesce = 0;
  if (!r->script || !r->request) {
    pthread_mutex_unlock(&h->lock);
    free(r->script);
    free(r->request);
    free(r);
    release(h);
    return OAMFM_E_ARG;
  }
  if (strcmp(op, "step") == 0 || strcmp(op, "prewarm") == 0) native_begin(h, r, req, strcmp(op, "step") == 0);
  r->next = h->inflight;
  h->inflight = r;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  int rc = pthread_create(&t, &attr, worker, r);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    unlink_inflight_locked(h, r);
    enqueue_str_locked(h, r->id, EV_OTHER, 0,
                       "{\"type\":\"error\",\"error\":{\"code\":\"busy\",\"message\":\"No thread available.\"}}");
    pthread_mutex_unlock(&h->lock);
    free(r->script);
    free(r->request);
    free(r->native_signature);
    free(r);
    release(h);
    return OAMFM_OK;
  }
  pthread_mutex_unlock(&h->lock);
  return OAMFM_OK;
}

int32_t oamfm_cancel(oamfm *token, const char *request_id) {
  if (!token || !request_id || !utf8_valid((const unsigned char *)request_id, strlen(request_id))) return OAMFM_E_ARG;
  fm_t *h = acquire(token);
  if (!h) return OAMFM_E_CLOSED;
  int32_t rc = OAMFM_NOT_FOUND;
  pthread_mutex_lock(&h->lock);
  for (request_t *r = h->inflight; r; r = r->next) {
    if (strcmp(r->id, request_id) == 0) {
      r->done = 1;
      unlink_inflight_locked(h, r);
      enqueue_str_locked(h, r->id, EV_OTHER, 0, CANCELLED);
      rc = OAMFM_OK;
      break;
    }
  }
  pthread_mutex_unlock(&h->lock);
  release(h);
  return rc;
}

char *oamfm_poll(oamfm *token, int32_t timeout_ms) {
  if (!token) return NULL;
  fm_t *h = acquire(token);
  if (!h) return NULL;
  char *out = NULL;
  pthread_mutex_lock(&h->lock);
  if (!h->closed_delivered) {
    if (timeout_ms < 0) {
      while (!h->head && !h->closed) pthread_cond_wait(&h->cond, &h->lock);
    } else if (timeout_ms > 0) {
      struct timespec ts;
      deadline_after(&ts, timeout_ms);
      while (!h->head && !h->closed) {
        if (pthread_cond_timedwait(&h->cond, &h->lock, &ts) == ETIMEDOUT) break;
      }
    }
    if (h->head || h->closed) {
      buf_t b = {0};
      buf_str(&b, "[");
      int count = 0;
      /* A closed handle's last batch ends with the closed marker, which counts against the 64. */
      int room = h->closed ? MAX_BATCH - 1 : MAX_BATCH;
      while (h->head && count < room) {
        event_t *e = h->head;
        h->head = e->next;
        if (!h->head) h->tail = NULL;
        if (count++) buf_str(&b, ",");
        buf_str(&b, e->json);
        free(e->json);
        free(e);
      }
      if (h->closed) {
        /* Events that did not fit are dropped with the handle (freed by the last release). */
        if (count++) buf_str(&b, ",");
        buf_str(&b, "{\"type\":\"closed\"}");
        h->closed_delivered = 1;
      }
      buf_str(&b, "]");
      out = b.p;
    }
  }
  pthread_mutex_unlock(&h->lock);
  release(h);
  return out;
}

void oamfm_free(char *s) { free(s); }

void oamfm_close(oamfm *token) {
  if (!token) return;
  fm_t *h = NULL;
  pthread_mutex_lock(&g_lock);
  for (slot_t **pp = &g_slots; *pp; pp = &(*pp)->next) {
    if ((*pp)->token == (uintptr_t)token) {
      slot_t *s = *pp;
      h = s->h;
      *pp = s->next;
      free(s);
      break;
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (!h) return;
  pthread_mutex_lock(&h->lock);
  h->closed = 1;
  while (h->inflight) {
    request_t *r = h->inflight;
    r->done = 1;
    unlink_inflight_locked(h, r);
    enqueue_str_locked(h, r->id, EV_OTHER, 0, CLOSED_CANCEL);
  }
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->lock);
  release(h); /* the owner reference */
}
