/*
 * open_apple_models.c - libopen_apple_models: the C ABI of open_apple_models.h
 * implemented by spawning the bridge (`oam stdio`) and talking JSON lines over
 * its stdin/stdout. One reader thread pumps the bridge's stdout into the
 * callback; responses to oam_call_blocking() are routed to their waiters.
 * One writer thread writes the bridge's stdin from a queue: sending only
 * queues the line, so it never blocks the caller on a bridge that stopped
 * reading with its input pipe full.
 * OS specifics live in platform_posix.c or platform_windows.c (see platform.h).
 */
#define OAM_BUILDING_LIBRARY 1
#include "open_apple_models.h"
#include "platform.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OAM_VERSION "0.1.0"
#define MAX_SAFE_INTEGER 9007199254740991.0
#define MAX_JSON_DEPTH 512
/* How long destroy waits for the bridge to exit after asking it to shut down, before killing it. */
#ifndef OAM_SHUTDOWN_WAIT_MS
#define OAM_SHUTDOWN_WAIT_MS 3000
#endif
#define SHUTDOWN_WAIT_MS OAM_SHUTDOWN_WAIT_MS
/*
 * How long destroy waits for the bridge's first output after the shutdown: a ping follows it, which a live bridge
 * fails at once (PROTOCOL.md, shutdown), also while the shutdown waits for cancelled work. A bridge that writes
 * nothing in that time (frozen, stopped, not reading its input) is killed then instead of after SHUTDOWN_WAIT_MS.
 */
#define SHUTDOWN_ANSWER_MS 500
/* The bridge's last stderr lines (not blank) that the error of a bridge that exits by itself ends with, as in the
 * C# and Python clients; each is kept up to LOG_LINE_KEPT bytes (then "..."), so a huge line costs no memory. */
#define EXIT_LOG_LINES 3
#define LOG_LINE_KEPT 1024
/* How long the reader waits, after the bridge exited, for its stderr to end (its last lines to be in): a process
 * the bridge started may hold the pipe open, so not for ever. Destroy waits as long before it stops the reader. */
#define LOG_END_WAIT_MS 1000
/* Longest piece of a stderr line held back to pass it on whole; a longer line is passed on in pieces. */
#define LOG_PIECE_BYTES 65536
/*
 * Bytes that may wait in the outbox for a bridge that does not read its input (frozen, stopped in a debugger):
 * past them a request or notification is refused (OAM_ERROR_QUEUE_FULL, or a -32010 busy response) instead of
 * growing the game's memory without end. A line is always taken when none waits, and answers to the bridge's
 * tool/calls are always taken (as many as it sent). Four of the longest lines the bridge reads (its
 * --max-line-bytes: 64 MiB by default), unless the library is built with -DOAM_MAX_QUEUED_BYTES=<bytes>.
 */
static size_t max_queued_bytes_for(double max_line_bytes) {
#ifdef OAM_MAX_QUEUED_BYTES
    (void)max_line_bytes;
    return (size_t)OAM_MAX_QUEUED_BYTES;
#else
    double limit = 4 * max_line_bytes;
    return limit >= (double)SIZE_MAX ? SIZE_MAX : (size_t)limit;
#endif
}
/* What the bridge reads (PROTOCOL.md, README "Limits"): it answers a deeper or longer line with id null. */
#define BRIDGE_MAX_DEPTH 100
#define BRIDGE_MAX_LINE_BYTES 16777216.0

/* ------------------------------------------------------------------ */
/* Growable strings                                                    */
/* ------------------------------------------------------------------ */

typedef struct {
    char *data;
    size_t length;
    size_t capacity;
    int failed;
} text;

/* An empty text (all members spelled out: {0} warns in C++ with -Wextra). */
#define TEXT_EMPTY {NULL, 0, 0, 0}

static void text_reserve(text *t, size_t extra) {
    size_t need = t->length + extra + 1;
    char *grown;
    if (t->failed || need <= t->capacity) return;
    {
        size_t capacity = t->capacity ? t->capacity : 64;
        while (capacity < need) capacity *= 2;
        grown = (char *)realloc(t->data, capacity);
        if (!grown) {
            t->failed = 1;
            return;
        }
        t->data = grown;
        t->capacity = capacity;
    }
}

static void text_add(text *t, const char *data, size_t length) {
    text_reserve(t, length);
    if (t->failed) return;
    memcpy(t->data + t->length, data, length);
    t->length += length;
    t->data[t->length] = '\0';
}

static void text_put(text *t, const char *s) { text_add(t, s, strlen(s)); }

static void text_printf(text *t, const char *format, ...) {
    char buffer[256];
    va_list args;
    int n;
    va_start(args, format);
    n = vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    if (n > 0) text_add(t, buffer, (size_t)n < sizeof buffer ? (size_t)n : sizeof buffer - 1);
}

/* Takes the buffer (never NULL unless allocation failed). */
static char *text_take(text *t) {
    char *data;
    if (t->failed) {
        free(t->data);
        return NULL;
    }
    if (!t->data) text_reserve(t, 0);
    data = t->data;
    t->data = NULL;
    t->length = t->capacity = 0;
    return data;
}

static char *copy_span(const char *data, size_t length) {
    char *copy = (char *)malloc(length + 1);
    if (!copy) return NULL;
    memcpy(copy, data, length);
    copy[length] = '\0';
    return copy;
}

/* Appends s as a JSON string literal. */
static void text_json_string(text *t, const char *s) {
    text_put(t, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': text_put(t, "\\\""); break;
        case '\\': text_put(t, "\\\\"); break;
        case '\n': text_put(t, "\\n"); break;
        case '\r': text_put(t, "\\r"); break;
        case '\t': text_put(t, "\\t"); break;
        default:
            if (c < 0x20) {
                text_printf(t, "\\u%04x", c);
            } else {
                text_add(t, s, 1);
            }
        }
    }
    text_put(t, "\"");
}

/* ------------------------------------------------------------------ */
/* UTF-8 and a validating JSON scanner                                 */
/* ------------------------------------------------------------------ */

/* The length (1 to 4) of the valid UTF-8 sequence at s, or 0 when s does not begin one. s is not at its NUL. */
static int utf8_sequence_length(const unsigned char *s) {
    unsigned char c = *s;
    int extra, k;
    unsigned int cp, min;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) {
        extra = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        extra = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        extra = 3, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (k = 1; k <= extra; k++) { /* stops at a NUL: it is no continuation byte */
        if ((s[k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return extra + 1;
}

OAM_API size_t oam_json_escape(const char *text, char *out, size_t out_size) {
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    size_t needed = 0, written = 0;
    int full = 0; /* a piece did not fit: nothing more is written */
    while (*s) {
        char escape[8];
        const char *piece = escape;
        size_t length;
        int sequence = utf8_sequence_length(s);
        switch (*s) {
        case '"': piece = "\\\""; length = 2; break;
        case '\\': piece = "\\\\"; length = 2; break;
        case '\b': piece = "\\b"; length = 2; break;
        case '\f': piece = "\\f"; length = 2; break;
        case '\n': piece = "\\n"; length = 2; break;
        case '\r': piece = "\\r"; length = 2; break;
        case '\t': piece = "\\t"; length = 2; break;
        default:
            if (*s < 0x20) {
                snprintf(escape, sizeof escape, "\\u%04x", (unsigned int)*s);
                length = 6;
            } else if (sequence == 0) {
                piece = "\xEF\xBF\xBD"; /* U+FFFD for a byte that does not begin a valid sequence */
                length = 3;
                sequence = 1;
            } else {
                piece = (const char *)s;
                length = (size_t)sequence;
            }
        }
        s += sequence;
        needed += length;
        if (!full && out && written + length < out_size) {
            memcpy(out + written, piece, length);
            written += length;
        } else {
            full = 1;
        }
    }
    if (out && out_size > 0) out[written] = '\0';
    return needed;
}

OAM_API char *oam_json_quote(const char *text) {
    size_t length;
    char *quoted;
    if (!text) return NULL;
    length = oam_json_escape(text, NULL, 0);
    quoted = (char *)malloc(length + 3);
    if (!quoted) return NULL;
    quoted[0] = '"';
    oam_json_escape(text, quoted + 1, length + 1);
    quoted[length + 1] = '"';
    quoted[length + 2] = '\0';
    return quoted;
}

/* -1 when s is valid UTF-8, else the offset of the first byte of the first bad sequence. */
static long invalid_utf8_at(const unsigned char *start) {
    const unsigned char *s = start;
    while (*s) {
        int sequence = utf8_sequence_length(s);
        if (sequence == 0) return (long)(s - start);
        s += sequence;
    }
    return -1;
}

typedef struct {
    const char *s;
    size_t n;
    size_t i;
    int deepest; /* deepest container level seen (the top-level object or array is level 1) */
} scanner;

static void skip_space(scanner *sc) {
    while (sc->i < sc->n) {
        char c = sc->s[sc->i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        sc->i++;
    }
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int scan_string(scanner *sc) {
    if (sc->i >= sc->n || sc->s[sc->i] != '"') return -1;
    sc->i++;
    while (sc->i < sc->n) {
        unsigned char c = (unsigned char)sc->s[sc->i++];
        if (c == '"') return 0;
        if (c < 0x20) return -1;
        if (c == '\\') {
            char e;
            if (sc->i >= sc->n) return -1;
            e = sc->s[sc->i++];
            if (e == 'u') {
                int k;
                for (k = 0; k < 4; k++) {
                    if (sc->i >= sc->n || hex_value(sc->s[sc->i]) < 0) return -1;
                    sc->i++;
                }
            } else if (!strchr("\"\\/bfnrt", e)) {
                return -1;
            }
        }
    }
    return -1;
}

static int scan_number(scanner *sc) {
    size_t start = sc->i;
    if (sc->i < sc->n && sc->s[sc->i] == '-') sc->i++;
    if (sc->i >= sc->n) return -1;
    if (sc->s[sc->i] == '0') {
        sc->i++;
    } else if (sc->s[sc->i] >= '1' && sc->s[sc->i] <= '9') {
        while (sc->i < sc->n && sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9') sc->i++;
    } else {
        return -1;
    }
    if (sc->i < sc->n && sc->s[sc->i] == '.') {
        sc->i++;
        if (sc->i >= sc->n || sc->s[sc->i] < '0' || sc->s[sc->i] > '9') return -1;
        while (sc->i < sc->n && sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9') sc->i++;
    }
    if (sc->i < sc->n && (sc->s[sc->i] == 'e' || sc->s[sc->i] == 'E')) {
        sc->i++;
        if (sc->i < sc->n && (sc->s[sc->i] == '+' || sc->s[sc->i] == '-')) sc->i++;
        if (sc->i >= sc->n || sc->s[sc->i] < '0' || sc->s[sc->i] > '9') return -1;
        while (sc->i < sc->n && sc->s[sc->i] >= '0' && sc->s[sc->i] <= '9') sc->i++;
    }
    return sc->i > start ? 0 : -1;
}

static int scan_literal(scanner *sc, const char *word) {
    size_t length = strlen(word);
    if (sc->n - sc->i < length || memcmp(sc->s + sc->i, word, length) != 0) return -1;
    sc->i += length;
    return 0;
}

static int scan_value(scanner *sc, int depth) {
    char c;
    skip_space(sc);
    if (depth > MAX_JSON_DEPTH) {
        sc->deepest = depth + 1;
        return -1;
    }
    if (sc->i >= sc->n) return -1;
    c = sc->s[sc->i];
    if (c == '"') return scan_string(sc);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        if (depth + 1 > sc->deepest) sc->deepest = depth + 1;
        sc->i++;
        skip_space(sc);
        if (sc->i < sc->n && sc->s[sc->i] == close) {
            sc->i++;
            return 0;
        }
        for (;;) {
            if (c == '{') {
                skip_space(sc);
                if (scan_string(sc) != 0) return -1;
                skip_space(sc);
                if (sc->i >= sc->n || sc->s[sc->i] != ':') return -1;
                sc->i++;
            }
            if (scan_value(sc, depth + 1) != 0) return -1;
            skip_space(sc);
            if (sc->i >= sc->n) return -1;
            if (sc->s[sc->i] == ',') {
                sc->i++;
                continue;
            }
            if (sc->s[sc->i] == close) {
                sc->i++;
                return 0;
            }
            return -1;
        }
    }
    if (c == 't') return scan_literal(sc, "true");
    if (c == 'f') return scan_literal(sc, "false");
    if (c == 'n') return scan_literal(sc, "null");
    return scan_number(sc);
}

/* Decodes a JSON string literal (with quotes) to UTF-8. Returns a heap string or NULL. */
static char *decode_string(const char *raw, size_t length) {
    text out = TEXT_EMPTY;
    size_t i = 1;
    if (length < 2 || raw[0] != '"') return NULL;
    while (i < length - 1) {
        char c = raw[i++];
        if (c != '\\') {
            text_add(&out, &c, 1);
            continue;
        }
        c = raw[i++];
        switch (c) {
        case 'b': text_put(&out, "\b"); break;
        case 'f': text_put(&out, "\f"); break;
        case 'n': text_put(&out, "\n"); break;
        case 'r': text_put(&out, "\r"); break;
        case 't': text_put(&out, "\t"); break;
        case 'u': {
            unsigned int cp = 0;
            char utf8[4];
            int k, count;
            for (k = 0; k < 4 && i < length - 1; k++) cp = (cp << 4) | (unsigned int)hex_value(raw[i++]);
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= length - 1 && raw[i] == '\\' && raw[i + 1] == 'u') {
                unsigned int low = 0;
                for (k = 0; k < 4; k++) low = (low << 4) | (unsigned int)hex_value(raw[i + 2 + k]);
                if (low >= 0xDC00 && low <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    i += 6;
                }
            }
            if (cp < 0x80) {
                utf8[0] = (char)cp, count = 1;
            } else if (cp < 0x800) {
                utf8[0] = (char)(0xC0 | (cp >> 6)), utf8[1] = (char)(0x80 | (cp & 0x3F)), count = 2;
            } else if (cp < 0x10000) {
                utf8[0] = (char)(0xE0 | (cp >> 12)), utf8[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                utf8[2] = (char)(0x80 | (cp & 0x3F)), count = 3;
            } else {
                utf8[0] = (char)(0xF0 | (cp >> 18)), utf8[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                utf8[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), utf8[3] = (char)(0x80 | (cp & 0x3F)), count = 4;
            }
            text_add(&out, utf8, (size_t)count);
            break;
        }
        default: text_add(&out, &c, 1); break;
        }
    }
    return text_take(&out);
}

/* A top-level member of a JSON object: raw key literal and raw value text. */
typedef struct {
    const char *key;
    size_t key_length;
    const char *value;
    size_t value_length;
} member;

#define MAX_MEMBERS 64

typedef struct {
    int is_object;
    int deepest;    /* deepest container level (0 for a scalar) */
    size_t error_at; /* where the scan stopped when the text is not valid JSON */
    int count;      /* members recorded (at most MAX_MEMBERS) */
    member members[MAX_MEMBERS];
} object_view;

/*
 * Validates text as one JSON value and, when it is an object, records its
 * top-level members. Returns 0 if valid JSON, -1 otherwise.
 */
static int parse_view(const char *s, size_t n, object_view *view) {
    scanner sc = {s, n, 0, 0};
    int valid;
    view->is_object = 0;
    view->deepest = 0;
    view->count = 0;
    skip_space(&sc);
    if (sc.i < n && s[sc.i] == '{') {
        view->is_object = 1;
        sc.deepest = 1;
        sc.i++;
        skip_space(&sc);
        if (sc.i < n && s[sc.i] == '}') {
            sc.i++;
        } else {
            for (;;) {
                member m;
                size_t start;
                skip_space(&sc);
                start = sc.i;
                if (scan_string(&sc) != 0) {
                    view->deepest = sc.deepest;
                    view->error_at = sc.i;
                    return -1;
                }
                m.key = s + start;
                m.key_length = sc.i - start;
                skip_space(&sc);
                if (sc.i >= n || s[sc.i] != ':') {
                    view->deepest = sc.deepest;
                    view->error_at = sc.i;
                    return -1;
                }
                sc.i++;
                skip_space(&sc);
                start = sc.i;
                if (scan_value(&sc, 1) != 0) {
                    view->deepest = sc.deepest;
                    view->error_at = sc.i;
                    return -1;
                }
                m.value = s + start;
                m.value_length = sc.i - start;
                if (view->count < MAX_MEMBERS) view->members[view->count++] = m;
                skip_space(&sc);
                if (sc.i < n && s[sc.i] == ',') {
                    sc.i++;
                    continue;
                }
                if (sc.i < n && s[sc.i] == '}') {
                    sc.i++;
                    break;
                }
                view->deepest = sc.deepest;
                view->error_at = sc.i;
                return -1;
            }
        }
    } else if (scan_value(&sc, 0) != 0) {
        view->deepest = sc.deepest;
        view->error_at = sc.i;
        return -1;
    }
    skip_space(&sc);
    valid = sc.i == n ? 0 : -1;
    view->deepest = sc.deepest;
    view->error_at = sc.i;
    return valid;
}

/* The last member named name (duplicate keys: last wins), or NULL. */
static const member *find_member(const object_view *view, const char *name) {
    const member *found = NULL;
    int k;
    for (k = 0; k < view->count; k++) {
        const member *m = &view->members[k];
        size_t length = strlen(name);
        if (m->key_length == length + 2 && memcmp(m->key + 1, name, length) == 0) {
            found = m;
        } else if (memchr(m->key, '\\', m->key_length)) {
            char *decoded = decode_string(m->key, m->key_length);
            if (decoded && strcmp(decoded, name) == 0) found = m;
            free(decoded);
        }
    }
    return found;
}

static int is_null(const member *m) { return m && m->value_length == 4 && memcmp(m->value, "null", 4) == 0; }
static int is_string(const member *m) { return m && m->value_length >= 2 && m->value[0] == '"'; }

/* Request id identity: "s<text>" or "n<canonical number>"; wire form in *wire. */
typedef enum { ID_OK, ID_ABSENT, ID_INVALID, ID_TOO_LARGE } id_status;

static id_status make_id(const member *m, char **key, char **wire) {
    *key = *wire = NULL;
    if (!m || is_null(m)) return ID_ABSENT;
    if (is_string(m)) {
        char *decoded = decode_string(m->value, m->value_length);
        text k = TEXT_EMPTY;
        if (!decoded) return ID_INVALID;
        text_put(&k, "s");
        text_put(&k, decoded);
        free(decoded);
        *key = text_take(&k);
        *wire = copy_span(m->value, m->value_length);
        return ID_OK;
    }
    if (m->value[0] == '-' || (m->value[0] >= '0' && m->value[0] <= '9')) {
        char *number = copy_span(m->value, m->value_length);
        char buffer[64];
        double x;
        if (!number) return ID_INVALID;
        x = strtod(number, NULL);
        free(number);
        if (!isfinite(x) || fabs(x) > MAX_SAFE_INTEGER) return ID_TOO_LARGE;
        if (x == floor(x)) {
            snprintf(buffer, sizeof buffer, "%lld", (long long)x);
        } else {
            snprintf(buffer, sizeof buffer, "%.17g", x);
        }
        {
            text k = TEXT_EMPTY;
            text_put(&k, "n");
            text_put(&k, buffer);
            *key = text_take(&k);
        }
        *wire = copy_span(buffer, strlen(buffer));
        return ID_OK;
    }
    return ID_INVALID;
}

/*
 * {"jsonrpc":"2.0","id":<wire_id>,"error":{"code":<code>,"message":<message>,"data":{"code":<data_code><extra>}}}
 * where extra is NULL or more members of data, starting with a comma.
 */
static char *error_response_with(const char *wire_id, int code, const char *data_code, const char *message,
                                 const char *extra) {
    text t = TEXT_EMPTY;
    text_put(&t, "{\"jsonrpc\":\"2.0\",\"id\":");
    text_put(&t, wire_id ? wire_id : "null");
    text_printf(&t, ",\"error\":{\"code\":%d,\"message\":", code);
    text_json_string(&t, message);
    text_put(&t, ",\"data\":{\"code\":");
    text_json_string(&t, data_code);
    if (extra) text_put(&t, extra);
    text_put(&t, "}}}");
    return text_take(&t);
}

static char *error_response(const char *wire_id, int code, const char *data_code, const char *message) {
    return error_response_with(wire_id, code, data_code, message, NULL);
}

/* ------------------------------------------------------------------ */
/* The bridge                                                          */
/* ------------------------------------------------------------------ */

typedef struct waiter {
    char *key;
    const char *wire; /* JSON text of the id on the wire */
    char *response;   /* set by the reader */
    int null_id;    /* the caller sent no id: answer with "id":null */
    const char *method;           /* the request's method (owned by the call) */
    const char *work;             /* "npc <id>" / "session <id>" whose work it is (see work_of), or NULL */
    unsigned long cancels_before; /* the bridge's `cancels` when it was sent (see explain_cancelled_locked) */
    struct waiter *next;
} waiter;

/*
 * A cancel of all of an NPC's or session's work ("npc gorm") that this library sent, or saw sent, for a reason the
 * bridge's -32009 does not show (a blocking call's timeout, a delete), numbered: the blocking calls of that work sent
 * before it then say why (see explain_cancelled_locked). The latest CANCEL_NOTES_KEPT are kept, newest first.
 */
typedef struct cancel_note {
    char *work;
    char *why;
    unsigned long number;
    struct cancel_note *next;
} cancel_note;

#define CANCEL_NOTES_KEPT 256

typedef struct entry {
    char *key;
    char *wire; /* JSON text of the id, or a whole queued message */
    struct entry *next;
} entry;

/* A line waiting for the writer thread (with its newline). */
typedef struct outgoing {
    char *data;
    size_t length;
    struct outgoing *next;
} outgoing;

struct oam_bridge {
    oam_message_callback callback;
    void *user_data;
    oam_process *process;
    oam_thread reader;
    oam_thread writer;
    oam_thread log_reader; /* reads the bridge's stderr (log_main) */
    int log_reader_started;
    oam_mutex lock;
    oam_cond changed;
    oam_cond outbox_changed; /* a line was queued or input_ending set (under lock) */
    int closing;           /* destroy started: no more callbacks */
    int heard_closing;     /* the bridge wrote something after destroy started */
    int dead;              /* the bridge's output ended (exit_description is final once set) */
    int reader_cleans_up;  /* destroy was called from inside the callback and could not start its teardown thread */
    int users;             /* threads inside oam_call_blocking(): destroy waits for them */
    double max_line_bytes; /* the longest line the bridge reads (--max-line-bytes of its argv, or 16 MiB) */
    size_t max_queued_bytes; /* what may wait in the outbox (max_queued_bytes_for) */
    char exit_description[64];
    char *exit_message;    /* the message of exited_error, made once when the bridge is marked dead (or NULL) */
    char *log_tail[EXIT_LOG_LINES]; /* the bridge's last stderr lines that are not blank, oldest first */
    int log_tail_count;
    int log_ended;         /* the bridge's stderr ended, or its reader stopped */
    waiter *waiters;       /* blocking calls waiting for a response */
    cancel_note *cancel_notes; /* why the work of an NPC or session was cancelled (see cancel_note) */
    unsigned long cancels;     /* the number of the last cancel_note */
    entry *dropped;        /* ids of timed-out blocking calls: drop their late responses */
    entry *pending;        /* ids of requests sent with oam_bridge_send() */
    entry *queue_head;     /* messages synthesized after the bridge died */
    entry *queue_tail;
    /*
     * Lines waiting for the writer thread, in the order they were sent. Sending only queues (under lock), so a
     * bridge that stops reading (frozen, stopped in a debugger) with its input pipe full never blocks the
     * caller (the game's main thread): the writer thread is the one stuck in the write, and the lines wait
     * here until the bridge reads again or destroy kills it.
     */
    outgoing *outbox_head;
    outgoing *outbox_tail;
    size_t outbox_bytes; /* bytes of the lines in the outbox (not the one being written) */
    int input_ending; /* the writer closes the bridge's stdin once the outbox is empty, then ends */
    unsigned long long next_local;
};

static void free_outgoing(outgoing *o) {
    while (o) {
        outgoing *next = o->next;
        free(o->data);
        free(o);
        o = next;
    }
}

/* Queues a line made by make_line for the writer thread (which frees it). Lock held. */
static void post_line_locked(oam_bridge *bridge, outgoing *line) {
    if (!line) return;
    if (bridge->outbox_tail) {
        bridge->outbox_tail->next = line;
    } else {
        bridge->outbox_head = line;
    }
    bridge->outbox_tail = line;
    bridge->outbox_bytes += line->length;
    oam_cond_broadcast(&bridge->outbox_changed);
}

/* True when a line of `length` bytes would take the outbox past max_queued_bytes (never when it is empty). Lock held. */
static int outbox_full_locked(const oam_bridge *bridge, size_t length) {
    return bridge->outbox_head && bridge->outbox_bytes + length > bridge->max_queued_bytes;
}

/* The writer closes the bridge's stdin after the lines queued before this, and ends. Lock held. */
static void end_input_locked(oam_bridge *bridge) {
    bridge->input_ending = 1;
    oam_cond_broadcast(&bridge->outbox_changed);
}

/*
 * Writes the queued lines to the bridge's stdin, one at a time, outside the lock: a write blocks while the
 * bridge does not read (only this thread waits then). Once a write failed (the bridge is gone: the reader
 * reports it to every waiting request), later lines are dropped. Ends after closing stdin.
 */
static void writer_main(void *argument) {
    oam_bridge *bridge = (oam_bridge *)argument;
    int broken = 0;
    oam_mutex_lock(&bridge->lock);
    for (;;) {
        outgoing *line;
        while (!bridge->outbox_head && !bridge->input_ending) {
            oam_cond_wait_until(&bridge->outbox_changed, &bridge->lock, -1);
        }
        line = bridge->outbox_head;
        if (!line) break; /* input_ending, and every line written */
        bridge->outbox_head = line->next;
        if (!bridge->outbox_head) bridge->outbox_tail = NULL;
        bridge->outbox_bytes -= line->length;
        line->next = NULL;
        oam_mutex_unlock(&bridge->lock);
        if (!broken) broken = oam_process_write(bridge->process, line->data, line->length) != 0;
        free_outgoing(line);
        oam_mutex_lock(&bridge->lock);
    }
    oam_mutex_unlock(&bridge->lock);
    oam_process_close_stdin(bridge->process);
}

/* Ends the writer thread after it has written (or dropped) the queued lines. Not under lock. */
static void stop_writer(oam_bridge *bridge) {
    oam_mutex_lock(&bridge->lock);
    end_input_locked(bridge);
    oam_mutex_unlock(&bridge->lock);
    oam_thread_join(bridge->writer);
}

static void free_entries(entry *e) {
    while (e) {
        entry *next = e->next;
        free(e->key);
        free(e->wire);
        free(e);
        e = next;
    }
}

static int push_entry(entry **list, char *key, char *wire) {
    entry *e = (entry *)malloc(sizeof *e);
    if (!e) {
        free(key);
        free(wire);
        return -1;
    }
    e->key = key;
    e->wire = wire;
    e->next = *list;
    *list = e;
    return 0;
}

/* Removes the first entry with key; returns it (caller frees) or NULL. */
static entry *take_entry(entry **list, const char *key) {
    entry **link;
    for (link = list; *link; link = &(*link)->next) {
        if (strcmp((*link)->key, key) == 0) {
            entry *found = *link;
            *link = found->next;
            found->next = NULL;
            return found;
        }
    }
    return NULL;
}

/* Queues a message for delivery by the reader after the bridge died. Lock held. */
static void enqueue_locked(oam_bridge *bridge, char *message) {
    entry *e = (entry *)malloc(sizeof *e);
    if (!e) {
        free(message);
        return;
    }
    e->key = NULL;
    e->wire = message;
    e->next = NULL;
    if (bridge->queue_tail) {
        bridge->queue_tail->next = e;
    } else {
        bridge->queue_head = e;
    }
    bridge->queue_tail = e;
    oam_cond_broadcast(&bridge->changed);
}

/*
 * "The bridge process exited (exit status 2) before answering.", and when it wrote any, " Its last lines on
 * stderr:\n" and those lines (what it said last, "Error: Unknown option '--log-levle'; did you mean ...", tells
 * the developer why, also in an engine editor that shows no stderr). NULL when out of memory. Lock held.
 */
static char *make_exit_message_locked(const oam_bridge *bridge) {
    text t = TEXT_EMPTY;
    int k;
    text_printf(&t, "The bridge process exited (%s) before answering.",
                bridge->exit_description[0] ? bridge->exit_description : "output closed");
    if (bridge->log_tail_count > 0) text_put(&t, " Its last lines on stderr:");
    for (k = 0; k < bridge->log_tail_count; k++) {
        text_put(&t, "\n");
        text_put(&t, bridge->log_tail[k]);
    }
    return text_take(&t);
}

/* The error response for a request the dead bridge cannot answer. Lock held. */
static char *exited_error(oam_bridge *bridge, const char *wire_id) {
    char message[160];
    if (bridge->exit_message) return error_response(wire_id, OAM_CODE_SHUT_DOWN, "shut_down", bridge->exit_message);
    snprintf(message, sizeof message, "The bridge process exited (%s) before answering.",
             bridge->exit_description[0] ? bridge->exit_description : "output closed");
    return error_response(wire_id, OAM_CODE_SHUT_DOWN, "shut_down", message);
}

/* Waits up to ms for the bridge's stderr to end. Lock held. */
static void wait_log_end_locked(oam_bridge *bridge, int ms) {
    int64_t deadline = oam_now_ms() + ms;
    while (!bridge->log_ended && oam_now_ms() < deadline) {
        oam_cond_wait_until(&bridge->changed, &bridge->lock, deadline);
    }
}

/* Keeps a line of the bridge's stderr (without its newline) for the exit error, unless it is blank. */
static void keep_log_line(oam_bridge *bridge, const char *line, size_t length) {
    size_t k, kept;
    char *copy;
    int blank = 1;
    while (length > 0 && line[length - 1] == '\r') length--;
    for (k = 0; k < length && blank; k++) {
        blank = line[k] == ' ' || line[k] == '\t' || line[k] == '\r' || line[k] == '\f' || line[k] == '\v';
    }
    if (blank) return;
    kept = length;
    if (kept > LOG_LINE_KEPT) {
        kept = LOG_LINE_KEPT;
        while (kept > 0 && ((unsigned char)line[kept] & 0xC0) == 0x80) kept--; /* not inside a UTF-8 sequence */
    }
    copy = (char *)malloc(kept + 4);
    if (!copy) return;
    memcpy(copy, line, kept);
    strcpy(copy + kept, kept < length ? "..." : "");
    oam_mutex_lock(&bridge->lock);
    if (bridge->log_tail_count == EXIT_LOG_LINES) {
        free(bridge->log_tail[0]);
        memmove(bridge->log_tail, bridge->log_tail + 1, (EXIT_LOG_LINES - 1) * sizeof bridge->log_tail[0]);
        bridge->log_tail_count--;
    }
    bridge->log_tail[bridge->log_tail_count++] = copy;
    oam_mutex_unlock(&bridge->lock);
}

/*
 * The stderr reader thread: passes each line the bridge writes to stderr (its log) on to the game's stderr as it
 * comes, unchanged (a line longer than LOG_PIECE_BYTES in pieces), so the bridge never blocks on a full pipe and
 * the game sees what it saw when the bridge wrote there itself; keeps the last lines for the exit error. Ends when
 * the bridge's stderr ends (it exited, and nothing it started holds the pipe) or destroy wakes it.
 */
static void log_main(void *argument) {
    oam_bridge *bridge = (oam_bridge *)argument;
    char *piece = (char *)malloc(LOG_PIECE_BYTES);
    char small[512];
    size_t used = 0;
    int continuing = 0; /* the held bytes continue a line whose start was passed on (and kept) already */
    for (;;) {
        long n;
        size_t start = 0, k;
        if (!piece) { /* out of memory: pass the bytes on as they come, keep nothing */
            n = oam_process_read_stderr(bridge->process, small, sizeof small);
            if (n <= 0) break;
            oam_write_own_stderr(small, (size_t)n);
            continue;
        }
        n = oam_process_read_stderr(bridge->process, piece + used, LOG_PIECE_BYTES - used);
        if (n <= 0) break;
        for (k = used; k < used + (size_t)n; k++) {
            if (piece[k] != '\n') continue;
            oam_write_own_stderr(piece + start, k + 1 - start);
            if (!continuing) keep_log_line(bridge, piece + start, k - start);
            continuing = 0;
            start = k + 1;
        }
        used += (size_t)n;
        if (start > 0) {
            memmove(piece, piece + start, used - start);
            used -= start;
        } else if (used == LOG_PIECE_BYTES) {
            oam_write_own_stderr(piece, used);
            if (!continuing) keep_log_line(bridge, piece, used);
            continuing = 1;
            used = 0;
        }
    }
    if (piece && used > 0) { /* a last line without its newline */
        oam_write_own_stderr(piece, used);
        oam_write_own_stderr("\n", 1);
        if (!continuing) keep_log_line(bridge, piece, used);
    }
    free(piece);
    oam_mutex_lock(&bridge->lock);
    bridge->log_ended = 1;
    oam_cond_broadcast(&bridge->changed);
    oam_mutex_unlock(&bridge->lock);
}

/* Ends the stderr reader (after the bridge has exited or been killed): gives its last lines up to LOG_END_WAIT_MS
 * to come in, then wakes it and joins it. */
static void stop_log_reader(oam_bridge *bridge) {
    if (!bridge->log_reader_started) return;
    oam_mutex_lock(&bridge->lock);
    wait_log_end_locked(bridge, LOG_END_WAIT_MS);
    oam_mutex_unlock(&bridge->lock);
    oam_process_wake_reader(bridge->process);
    oam_thread_join(bridge->log_reader);
    bridge->log_reader_started = 0;
}

static void free_log_tail(oam_bridge *bridge) {
    int k;
    for (k = 0; k < bridge->log_tail_count; k++) free(bridge->log_tail[k]);
    bridge->log_tail_count = 0;
    free(bridge->exit_message);
    bridge->exit_message = NULL;
}

/* The error response of a request that oam_bridge_destroy() ended. */
static char *closed_error(const char *wire_id) {
    return error_response(wire_id, OAM_CODE_SHUT_DOWN, "shut_down", "The bridge was closed.");
}

/* A thread leaves oam_call_blocking(); destroy may be waiting for it. Lock held. */
static void leave_locked(oam_bridge *bridge) {
    bridge->users--;
    if (bridge->closing) oam_cond_broadcast(&bridge->changed);
}

/* Calls the callback unless the bridge is closing. Runs on the reader thread only. */
static void deliver(oam_bridge *bridge, const char *line) {
    int closing;
    oam_mutex_lock(&bridge->lock);
    closing = bridge->closing;
    oam_mutex_unlock(&bridge->lock);
    if (!closing) bridge->callback(line, bridge->user_data);
}

/* Replaces the id value of a response line with null. */
static char *with_null_id(const char *line, const member *id) {
    text t = TEXT_EMPTY;
    size_t before = (size_t)(id->value - line);
    text_add(&t, line, before);
    text_put(&t, "null");
    text_put(&t, id->value + id->value_length);
    return text_take(&t);
}

/* ------------------------------------------------------------------ */
/* Why a blocking call was cancelled                                   */
/* ------------------------------------------------------------------ */

/*
 * "npc <id>" for an npc/... method whose params name the NPC with a string, "session <id>" for a session/... one,
 * else NULL: the work the bridge queues and cancels as a whole (npc/cancel, npc/delete, ...). A heap string.
 */
static char *work_of(const char *method, const member *params) {
    static const char *const kinds[] = {"npc", "session"};
    object_view view;
    size_t k;
    if (!method || !params || parse_view(params->value, params->value_length, &view) != 0 || !view.is_object) {
        return NULL;
    }
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t n = strlen(kinds[k]);
        if (strncmp(method, kinds[k], n) == 0 && method[n] == '/') {
            const member *target = find_member(&view, kinds[k]);
            char *id = is_string(target) ? decode_string(target->value, target->value_length) : NULL;
            text t = TEXT_EMPTY;
            if (!id) return NULL;
            text_put(&t, kinds[k]);
            text_put(&t, " ");
            text_put(&t, id);
            free(id);
            return text_take(&t);
        }
    }
    return NULL;
}

/* Why the other requests of the NPC or session a delete sent by hand names were cancelled; NULL for other methods. */
static const char *deleted_why(const char *method, int request) {
    if (method && strcmp(method, "npc/delete") == 0) {
        return request ? "an 'npc/delete' request deleted the NPC." : "an 'npc/delete' notification deleted the NPC.";
    }
    if (method && strcmp(method, "session/delete") == 0) {
        return request ? "a 'session/delete' request deleted the session."
                       : "a 'session/delete' notification deleted the session.";
    }
    return NULL;
}

static void free_cancel_notes(cancel_note *note) {
    while (note) {
        cancel_note *next = note->next;
        free(note->work);
        free(note->why);
        free(note);
        note = next;
    }
}

/*
 * Notes, before it is sent, a cancel of all of work's requests (work: see work_of; taken, NULL does nothing): the
 * -32009 of its blocking calls sent before then ends with "when " + why. Lock held.
 */
static void note_cancel_locked(oam_bridge *bridge, char *work, const char *why) {
    cancel_note **link, *note;
    size_t kept = 0;
    if (!work) return;
    for (link = &bridge->cancel_notes; *link; link = &(*link)->next) {
        if (strcmp((*link)->work, work) == 0) {
            note = *link;
            *link = note->next;
            note->next = NULL;
            free_cancel_notes(note);
            break;
        }
    }
    note = (cancel_note *)malloc(sizeof *note);
    if (!note || !(note->why = copy_span(why, strlen(why)))) {
        free(note);
        free(work);
        return; /* out of memory: the -32009 says only what the bridge said */
    }
    note->work = work;
    note->number = ++bridge->cancels;
    note->next = bridge->cancel_notes;
    bridge->cancel_notes = note;
    for (link = &bridge->cancel_notes; *link; link = &(*link)->next) {
        if (++kept > CANCEL_NOTES_KEPT) {
            free_cancel_notes(*link);
            *link = NULL;
            break;
        }
    }
}

/*
 * The -32009 response of blocking call w that a cancel noted after it was sent caused (the protocol cancels the
 * running turn of an NPC or session and the requests queued behind it together), with why added to its message as
 * the other clients say it: "... 'npc/talk' was cancelled with the rest of the work of NPC 'gorm' when an
 * 'npc/delete' request deleted the NPC.". A heap line, or NULL when there is nothing to add. Lock held.
 */
static char *explain_cancelled_locked(oam_bridge *bridge, const waiter *w, const char *line) {
    object_view view, error;
    const member *found, *code, *message;
    const cancel_note *note;
    text plain = TEXT_EMPTY, escaped = TEXT_EMPTY, out = TEXT_EMPTY;
    size_t length = strlen(line), at;
    char *added;
    if (!w->work) return NULL;
    for (note = bridge->cancel_notes; note && strcmp(note->work, w->work) != 0; note = note->next) {
    }
    if (!note || note->number <= w->cancels_before) return NULL;
    if (parse_view(line, length, &view) != 0 || !(found = find_member(&view, "error")) ||
        parse_view(found->value, found->value_length, &error) != 0 || !error.is_object) {
        return NULL;
    }
    code = find_member(&error, "code");
    message = find_member(&error, "message");
    if (!code || code->value_length != 6 || memcmp(code->value, "-32009", 6) != 0 || !is_string(message)) return NULL;
    text_put(&plain, " '");
    text_put(&plain, w->method);
    text_put(&plain, "' was cancelled with the rest of the work of ");
    text_put(&plain, strncmp(w->work, "npc ", 4) == 0 ? "NPC '" : "session '");
    text_put(&plain, strchr(w->work, ' ') + 1);
    text_put(&plain, "' when ");
    text_put(&plain, note->why);
    added = text_take(&plain);
    if (!added) return NULL;
    text_json_string(&escaped, added);
    free(added);
    if (escaped.failed || escaped.length < 2) {
        free(text_take(&escaped));
        return NULL;
    }
    at = (size_t)(message->value + message->value_length - 1 - line); /* the message's closing quote */
    text_add(&out, line, at);
    text_add(&out, escaped.data + 1, escaped.length - 2);
    text_add(&out, line + at, length - at);
    free(text_take(&escaped));
    return text_take(&out);
}

static void handle_line(oam_bridge *bridge, const char *line, size_t length) {
    object_view view;
    if (parse_view(line, length, &view) == 0 && view.is_object && !find_member(&view, "method")) {
        const member *id = find_member(&view, "id");
        if (id && (find_member(&view, "result") || find_member(&view, "error"))) {
            char *key = NULL, *wire = NULL;
            if (make_id(id, &key, &wire) == ID_OK) {
                waiter *w;
                entry *e;
                int consumed = 0;
                oam_mutex_lock(&bridge->lock);
                for (w = bridge->waiters; w; w = w->next) {
                    if (!w->response && strcmp(w->key, key) == 0) {
                        char *explained;
                        w->response = w->null_id ? with_null_id(line, id) : copy_span(line, length);
                        explained = w->response ? explain_cancelled_locked(bridge, w, w->response) : NULL;
                        if (explained) free(w->response), w->response = explained;
                        oam_cond_broadcast(&bridge->changed);
                        consumed = 1;
                        break;
                    }
                }
                if (!consumed && (e = take_entry(&bridge->dropped, key)) != NULL) {
                    free_entries(e); /* a late response to a timed-out blocking call */
                    consumed = 1;
                }
                if (!consumed && (e = take_entry(&bridge->pending, key)) != NULL) free_entries(e);
                oam_mutex_unlock(&bridge->lock);
                free(key);
                free(wire);
                if (consumed) return;
            }
        }
    }
    deliver(bridge, line);
}

static void finish_destroy(oam_bridge *bridge);

#ifdef OAM_COUNT_SCANNED
/*
 * Test builds only (-DOAM_COUNT_SCANNED): how many bytes the reader has searched for a newline, so a test can
 * check that a long line's bytes are each searched once, not again with every chunk that extends it.
 */
static size_t scanned_bytes;
OAM_API size_t oam_debug_scanned_bytes(void) { return __atomic_load_n(&scanned_bytes, __ATOMIC_RELAXED); }
#endif

static void reader_main(void *argument) {
    oam_bridge *bridge = (oam_bridge *)argument;
    text pending = TEXT_EMPTY;
    char chunk[16384];
    waiter *w;
    entry *e;

    for (;;) {
        long n = oam_process_read(bridge->process, chunk, sizeof chunk);
        /* Only the new bytes are searched for a newline: a long line arrives in many chunks. */
        size_t start = 0, k = pending.length;
        if (n <= 0) break;
        oam_mutex_lock(&bridge->lock);
        if (bridge->closing && !bridge->heard_closing) {
            bridge->heard_closing = 1; /* teardown: the bridge is alive */
            oam_cond_broadcast(&bridge->changed);
        }
        oam_mutex_unlock(&bridge->lock);
        text_add(&pending, chunk, (size_t)n);
        if (pending.failed) break;
#ifdef OAM_COUNT_SCANNED
        __atomic_add_fetch(&scanned_bytes, pending.length - k, __ATOMIC_RELAXED);
#endif
        for (; k < pending.length; k++) {
            if (pending.data[k] == '\n') {
                size_t end = k;
                if (end > start && pending.data[end - 1] == '\r') end--;
                pending.data[end] = '\0';
                if (end > start) handle_line(bridge, pending.data + start, end - start);
                start = k + 1;
            }
        }
        if (start > 0) {
            memmove(pending.data, pending.data + start, pending.length - start);
            pending.length -= start;
            pending.data[pending.length] = '\0';
        }
    }
    free(text_take(&pending));

    /*
     * The bridge's output ended. First find out why (outside the lock: the exit may take a moment), then,
     * under the lock, record the description and only then mark the bridge dead: whoever sees `dead` reads
     * a complete description. Until then calls still go to the waiter and pending lists, which are failed
     * below with the same description.
     */
    {
        char description[sizeof bridge->exit_description];
        int closing;
        description[0] = '\0';
        oam_mutex_lock(&bridge->lock);
        closing = bridge->closing;
        oam_mutex_unlock(&bridge->lock);
        if (!closing && !oam_process_wait(bridge->process, 2000, description, sizeof description)) {
            snprintf(description, sizeof description, "output closed");
        }
        oam_mutex_lock(&bridge->lock);
        /* Its stderr ends with it (unless a process it started holds it open): its last lines are in first. */
        if (!closing) wait_log_end_locked(bridge, LOG_END_WAIT_MS);
        memcpy(bridge->exit_description, description, sizeof description);
        bridge->exit_message = make_exit_message_locked(bridge);
        bridge->dead = 1;
    }
    for (w = bridge->waiters; w; w = w->next) {
        if (!w->response) w->response = exited_error(bridge, w->null_id ? NULL : w->wire);
    }
    oam_cond_broadcast(&bridge->changed);
    while ((e = bridge->pending) != NULL) {
        bridge->pending = e->next;
        enqueue_locked(bridge, exited_error(bridge, e->wire));
        e->next = NULL;
        free_entries(e);
    }
    /* Deliver synthesized messages until destroy. */
    for (;;) {
        char *message;
        while (!bridge->closing && !bridge->queue_head) oam_cond_wait_until(&bridge->changed, &bridge->lock, -1);
        if (bridge->closing) break;
        e = bridge->queue_head;
        bridge->queue_head = e->next;
        if (!bridge->queue_head) bridge->queue_tail = NULL;
        message = e->wire;
        free(e);
        oam_mutex_unlock(&bridge->lock);
        deliver(bridge, message);
        free(message);
        oam_mutex_lock(&bridge->lock);
    }
    {
        int cleans_up = bridge->reader_cleans_up;
        oam_mutex_unlock(&bridge->lock);
        if (cleans_up) finish_destroy(bridge);
    }
}

/* Splits OAM_BRIDGE_COMMAND on spaces/tabs into a NULL-terminated argv (one allocation each). */
static char **split_command(const char *command) {
    size_t count = 0, k = 0;
    const char *p = command;
    char **argv;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        count++;
        while (*p && *p != ' ' && *p != '\t') p++;
    }
    if (count == 0) return NULL;
    argv = (char **)calloc(count + 1, sizeof *argv);
    if (!argv) return NULL;
    p = command;
    while (*p) {
        const char *start;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        start = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        argv[k++] = copy_span(start, (size_t)(p - start));
    }
    return argv;
}

static void free_argv(char **argv) {
    size_t k;
    if (!argv) return;
    for (k = 0; argv[k]; k++) free(argv[k]);
    free(argv);
}

/* The value of --max-line-bytes in the bridge's argv (as `oam stdio` reads it), or the bridge's default. */
static double max_line_bytes_of(const char *const *argv) {
    static const char flag[] = "--max-line-bytes";
    double limit = BRIDGE_MAX_LINE_BYTES;
    size_t k;
    for (k = 1; argv[k]; k++) {
        const char *value = NULL;
        char *end;
        double x;
        if (strcmp(argv[k], flag) == 0) {
            value = argv[k + 1];
        } else if (strncmp(argv[k], flag, sizeof flag - 1) == 0 && argv[k][sizeof flag - 1] == '=') {
            value = argv[k] + sizeof flag;
        }
        if (!value) continue;
        x = strtod(value, &end);
        if (end != value && *end == '\0' && x >= 1) limit = x;
    }
    return limit;
}

/* Frees a bridge whose threads did not all start (the writer, if started, has been stopped). */
static void discard_unstarted(oam_bridge *bridge) {
    oam_process_kill(bridge->process, 1); /* its stderr ends: the stderr reader, if started, stops */
    stop_log_reader(bridge);
    free_log_tail(bridge);
    oam_process_free(bridge->process);
    oam_cond_destroy(&bridge->outbox_changed);
    oam_cond_destroy(&bridge->changed);
    oam_mutex_destroy(&bridge->lock);
    free(bridge);
}

/*
 * oam_bridge_create_with_command(); `hint` (or NULL) follows the reason on the error line when the process cannot be
 * started: where the command came from, what to set instead.
 */
static oam_bridge *create_bridge(const char *const *argv, oam_message_callback callback, void *user_data,
                                 const char *hint) {
    oam_bridge *bridge;
    char error[256];
    if (!callback || !argv || !argv[0]) return NULL;
    bridge = (oam_bridge *)calloc(1, sizeof *bridge);
    if (!bridge) return NULL;
    bridge->callback = callback;
    bridge->user_data = user_data;
    bridge->max_line_bytes = max_line_bytes_of(argv);
    bridge->max_queued_bytes = max_queued_bytes_for(bridge->max_line_bytes);
    if (oam_process_spawn(argv, &bridge->process, error, sizeof error) != 0) {
        fprintf(stderr, "[open-apple-models] error: %s%s\n", error, hint ? hint : "");
        free(bridge);
        return NULL;
    }
    oam_mutex_init(&bridge->lock);
    oam_cond_init(&bridge->changed);
    oam_cond_init(&bridge->outbox_changed);
    if (oam_thread_start(&bridge->log_reader, log_main, bridge) != 0) {
        fprintf(stderr, "[open-apple-models] error: cannot start the stderr reader thread\n");
        discard_unstarted(bridge);
        return NULL;
    }
    bridge->log_reader_started = 1;
    if (oam_thread_start(&bridge->writer, writer_main, bridge) != 0) {
        fprintf(stderr, "[open-apple-models] error: cannot start the writer thread\n");
        discard_unstarted(bridge);
        return NULL;
    }
    if (oam_thread_start(&bridge->reader, reader_main, bridge) != 0) {
        fprintf(stderr, "[open-apple-models] error: cannot start the reader thread\n");
        stop_writer(bridge); /* nothing was queued: it closes the bridge's stdin and ends */
        discard_unstarted(bridge);
        return NULL;
    }
    return bridge;
}

OAM_API oam_bridge *oam_bridge_create_with_command(const char *const *argv, oam_message_callback callback,
                                                   void *user_data) {
    return create_bridge(argv, callback, user_data, NULL);
}

OAM_API oam_bridge *oam_bridge_create(oam_message_callback callback, void *user_data) {
    /* As UTF-8 also on Windows, where getenv would give the ANSI code page. */
    char *command, *path, *log;
    oam_bridge *bridge = NULL;
    if (!callback) return NULL;
    command = oam_getenv_utf8("OAM_BRIDGE_COMMAND");
    if (command) {
        char **argv = split_command(command);
        if (argv) {
            bridge = create_bridge((const char *const *)argv, callback, user_data, " (from OAM_BRIDGE_COMMAND)");
            free_argv(argv);
        } else {
            fprintf(stderr, "[open-apple-models] error: OAM_BRIDGE_COMMAND is empty\n");
        }
        free(command);
        return bridge;
    }
    path = oam_getenv_utf8("OAM_BRIDGE_PATH");
    log = oam_getenv_utf8("OAM_BRIDGE_LOG");
    {
        const char *argv[5];
        int k = 0;
        argv[k++] = path ? path : "oam";
        argv[k++] = "stdio";
        if (log) {
            argv[k++] = "--log-level";
            argv[k++] = log;
        }
        argv[k] = NULL;
        bridge = create_bridge(argv, callback, user_data,
                               path ? " (from OAM_BRIDGE_PATH)"
                                    : " (no bridge was named, so 'oam stdio' was looked up on PATH: set "
                                      "OAM_BRIDGE_COMMAND=\"deno run -A /path/to/cli.ts stdio\" to run the bridge "
                                      "from a checkout, or OAM_BRIDGE_PATH to the compiled oam)");
    }
    free(path);
    free(log);
    return bridge;
}

/* One message as a line for the outbox: CR/LF become spaces, a newline is appended. NULL when out of memory. */
static outgoing *make_line(const char *json, size_t length) {
    outgoing *line = (outgoing *)malloc(sizeof *line);
    size_t k;
    if (!line) return NULL;
    line->data = (char *)malloc(length + 1);
    if (!line->data) {
        free(line);
        return NULL;
    }
    for (k = 0; k < length; k++) line->data[k] = (json[k] == '\n' || json[k] == '\r') ? ' ' : json[k];
    line->data[length] = '\n';
    line->length = length + 1;
    line->next = NULL;
    return line;
}

OAM_API int oam_bridge_send(oam_bridge *bridge, const char *json_line) {
    object_view view;
    size_t length;
    char *key = NULL, *wire = NULL;
    int answer = 0; /* a response to a tool/call: never refused by the queue limit */
    const char *deleted = NULL; /* an npc/delete or session/delete: why the work it names was cancelled */
    char *deleted_work = NULL;
    outgoing *line;
    if (!bridge || !json_line) return OAM_ERROR_INVALID_ARGUMENT;
    if (invalid_utf8_at((const unsigned char *)json_line) >= 0) return OAM_ERROR_INVALID_UTF8;
    length = strlen(json_line);
    /* Track requests so they can be failed if the bridge dies before answering. */
    if (parse_view(json_line, length, &view) == 0 && view.is_object) {
        const member *method = find_member(&view, "method");
        /* make_id allocates only when it returns ID_OK. */
        if (is_string(method) && make_id(find_member(&view, "id"), &key, &wire) != ID_OK) key = wire = NULL;
        answer = !method && find_member(&view, "id") != NULL;
        if (is_string(method)) {
            char *name = decode_string(method->value, method->value_length);
            deleted = deleted_why(name, find_member(&view, "id") != NULL);
            if (deleted) deleted_work = work_of(name, find_member(&view, "params"));
            if (!deleted_work) deleted = NULL;
            free(name);
        }
    }
    line = make_line(json_line, length); /* out of memory: not sent (as a write that failed) */
    oam_mutex_lock(&bridge->lock);
    if (bridge->closing || bridge->dead) {
        /* Closing: no callback will come, so the message is dropped. */
        if (key && !bridge->closing) enqueue_locked(bridge, exited_error(bridge, wire));
        oam_mutex_unlock(&bridge->lock);
        free_outgoing(line);
        free(key);
        free(wire);
        free(deleted_work);
        return OAM_OK;
    }
    if (!answer && outbox_full_locked(bridge, length + 1)) {
        /* The bridge has not read what was sent before: refused, so the caller knows it was not sent. */
        oam_mutex_unlock(&bridge->lock);
        free_outgoing(line);
        free(key);
        free(wire);
        free(deleted_work);
        return OAM_ERROR_QUEUE_FULL;
    }
    if (key) push_entry(&bridge->pending, key, wire);
    if (deleted) note_cancel_locked(bridge, deleted_work, deleted);
    /* Queued for the writer thread: never waits for the bridge to read. A broken pipe shows up as end of output. */
    post_line_locked(bridge, line);
    oam_mutex_unlock(&bridge->lock);
    return OAM_OK;
}

OAM_API const char *oam_version(void) { return OAM_VERSION; }

OAM_API void oam_string_free(char *string) { free(string); }

/*
 * Sends session/cancel or npc/cancel for a turn that timed out after timeout_ms; the -32009 of the blocking calls of
 * that session or NPC sent before it (cancelled with the turn) then says so.
 */
static void cancel_on_bridge(oam_bridge *bridge, const char *method, const member *params, int timeout_ms) {
    const char *kind = NULL, *cancel = NULL;
    object_view view;
    const member *target;
    text t = TEXT_EMPTY;
    if (strcmp(method, "session/respond") == 0) {
        kind = "session", cancel = "session/cancel";
    } else if (strcmp(method, "npc/talk") == 0) {
        kind = "npc", cancel = "npc/cancel";
    } else {
        return;
    }
    if (!params || parse_view(params->value, params->value_length, &view) != 0 || !view.is_object) return;
    target = find_member(&view, kind);
    if (!is_string(target)) return;
    text_printf(&t, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",\"params\":{\"%s\":", cancel, kind);
    text_add(&t, target->value, target->value_length);
    text_put(&t, "}}");
    if (!t.failed) {
        outgoing *line = make_line(t.data, t.length);
        char why[400];
        snprintf(why, sizeof why,
                 "its '%s' timed out after %d ms (the timeout_ms of oam_call_blocking()): the protocol cancels the "
                 "running turn and every request queued behind it together (there is no cancel for one request). "
                 "Send it again if you still need it.",
                 method, timeout_ms);
        oam_mutex_lock(&bridge->lock);
        if (!bridge->closing && !bridge->dead) {
            note_cancel_locked(bridge, work_of(method, params), why);
            post_line_locked(bridge, line);
            line = NULL;
        }
        oam_mutex_unlock(&bridge->lock);
        free_outgoing(line);
    }
    free(text_take(&t));
}

/* The answer to a request refused because the bridge has not read the `limit` bytes (max_queued_bytes) sent before it. */
static char *queue_full_error(const char *wire_id, const char *method, size_t limit) {
    char extra[64], *result, *message;
    text t = TEXT_EMPTY;
    text_printf(&t, "The bridge is not reading its input (frozen or stopped?): %.0f bytes sent before wait to be "
                    "written to it; '", (double)limit);
    text_put(&t, method);
    text_put(&t, "' was not sent.");
    message = text_take(&t);
    snprintf(extra, sizeof extra, ",\"limit\":%.0f", (double)limit);
    result = error_response_with(wire_id, OAM_CODE_BUSY, "busy", message ? message : "Not sent.", extra);
    free(message);
    return result;
}

/* The bridge's own answer to a line nested too deeply (it could not echo the id; this does). */
static char *too_deep_error(const char *wire_id) {
    char message[80];
    snprintf(message, sizeof message, "Invalid JSON: nesting deeper than %d levels.", BRIDGE_MAX_DEPTH);
    return error_response(wire_id, -32700, "parse_error", message);
}

OAM_API char *oam_call_blocking(oam_bridge *bridge, const char *request_json, int timeout_ms) {
    object_view view;
    const member *method_member, *params, *id_member;
    char *key = NULL, *wire = NULL, *method = NULL, *result = NULL;
    int null_id = 0;
    long bad_byte;
    id_status status;
    waiter w;
    text line = TEXT_EMPTY;
    outgoing *queued = NULL;
    int64_t deadline;
    char *work = NULL;

    if (!bridge || !request_json) return NULL;
    view.deepest = 0;
    if (oam_thread_equal(oam_thread_current(), oam_thread_id_of(bridge->reader))) {
        return error_response(NULL, -32603, "internal_error",
                              "oam_call_blocking() must not be called from inside the callback.");
    }
    bad_byte = invalid_utf8_at((const unsigned char *)request_json);
    if (bad_byte >= 0 || parse_view(request_json, strlen(request_json), &view) != 0) {
        char message[96];
        if (bad_byte < 0 && view.deepest > BRIDGE_MAX_DEPTH) return too_deep_error(NULL);
        snprintf(message, sizeof message, "The request is not valid %s (at byte %lu).",
                 bad_byte >= 0 ? "UTF-8" : "JSON", bad_byte >= 0 ? (unsigned long)bad_byte : (unsigned long)view.error_at);
        return error_response(NULL, -32700, "parse_error", message);
    }
    if (!view.is_object) {
        return error_response(NULL, -32600, "invalid_message", "A JSON-RPC message must be an object.");
    }
    id_member = find_member(&view, "id");
    status = make_id(id_member, &key, &wire);
    if (status == ID_INVALID) {
        return error_response(NULL, -32600, "invalid_message", "'id' must be a string or a number.");
    }
    if (status == ID_TOO_LARGE) {
        return error_response(NULL, -32600, "invalid_message",
                              "A numeric 'id' must be finite and at most 2^53-1 (9007199254740991) "
                              "in magnitude so it can be echoed exactly; use a string id.");
    }
    if (view.deepest > BRIDGE_MAX_DEPTH) {
        result = too_deep_error(status == ID_OK ? wire : NULL);
        free(key), free(wire);
        return result;
    }
    method_member = find_member(&view, "method");
    if (is_string(method_member)) method = decode_string(method_member->value, method_member->value_length);
    if (!method || !*method) {
        result = error_response(status == ID_OK ? wire : NULL, -32600, "invalid_message",
                                "'method' must be a non-empty string.");
        free(key), free(wire), free(method);
        return result;
    }
    if (status == ID_ABSENT) {
        char local[48];
        oam_mutex_lock(&bridge->lock);
        snprintf(local, sizeof local, "local-%llu", ++bridge->next_local);
        oam_mutex_unlock(&bridge->lock);
        {
            text k = TEXT_EMPTY, v = TEXT_EMPTY;
            text_put(&k, "s");
            text_put(&k, local);
            text_json_string(&v, local);
            key = text_take(&k);
            wire = text_take(&v);
        }
        null_id = 1;
    }
    params = find_member(&view, "params");
    text_put(&line, "{\"jsonrpc\":\"2.0\",\"id\":");
    text_put(&line, wire);
    text_put(&line, ",\"method\":");
    text_add(&line, method_member->value, method_member->value_length);
    if (params && !is_null(params)) {
        text_put(&line, ",\"params\":");
        text_add(&line, params->value, params->value_length);
    }
    text_put(&line, "}");

    if (line.failed) {
        result = error_response(null_id ? NULL : wire, -32603, "internal_error", "Out of memory.");
        goto done;
    }
    if ((double)line.length > bridge->max_line_bytes) {
        /* The bridge would skip the line and answer with id null: refuse it here, with the id. A world's state
         * (most often a saved one being loaded) is told how to send it in parts, as the other clients do. */
        static const char in_parts[] =
            " A world's state this large loads in parts: world/create with part of it, then world/merge the rest, "
            "a few keys at a time (docs/PROTOCOL.md \xC2\xA7" "6, 'Saving a world').";
        int world_write = method && (strcmp(method, "world/create") == 0 || strcmp(method, "world/set") == 0 ||
                                     strcmp(method, "world/merge") == 0);
        char message[400], extra[64];
        snprintf(message, sizeof message,
                 "The message is %lu bytes, longer than the %.0f bytes the bridge reads; it was not sent.%s",
                 (unsigned long)line.length, bridge->max_line_bytes, world_write ? in_parts : "");
        snprintf(extra, sizeof extra, ",\"limit\":%.0f", bridge->max_line_bytes);
        result = error_response_with(null_id ? NULL : wire, -32600, "invalid_message", message, extra);
        goto done;
    }

    queued = make_line(line.data, line.length);
    if (!queued) {
        result = error_response(null_id ? NULL : wire, -32603, "internal_error", "Out of memory.");
        goto done;
    }
    memset(&w, 0, sizeof w);
    w.key = key;
    w.wire = wire;
    w.null_id = null_id;
    w.method = method;
    w.work = work = work_of(method, params);
    oam_mutex_lock(&bridge->lock);
    if (bridge->closing) {
        result = closed_error(null_id ? NULL : wire);
        oam_mutex_unlock(&bridge->lock);
        goto done;
    }
    if (bridge->dead) {
        result = exited_error(bridge, null_id ? NULL : wire);
        oam_mutex_unlock(&bridge->lock);
        goto done;
    }
    if (outbox_full_locked(bridge, queued->length)) {
        oam_mutex_unlock(&bridge->lock);
        result = queue_full_error(null_id ? NULL : wire, method, bridge->max_queued_bytes);
        goto done;
    }
    w.next = bridge->waiters;
    bridge->waiters = &w;
    bridge->users++;
    w.cancels_before = bridge->cancels;
    if (work && deleted_why(method, 1)) note_cancel_locked(bridge, copy_span(work, strlen(work)), deleted_why(method, 1));
    post_line_locked(bridge, queued); /* the writer thread writes it; a broken pipe shows up as end of output */
    queued = NULL;
    oam_mutex_unlock(&bridge->lock);

    deadline = timeout_ms > 0 ? oam_now_ms() + timeout_ms : -1;
    oam_mutex_lock(&bridge->lock);
    while (!w.response && (deadline < 0 || oam_now_ms() < deadline)) {
        oam_cond_wait_until(&bridge->changed, &bridge->lock, deadline);
    }
    {
        waiter **link;
        for (link = &bridge->waiters; *link; link = &(*link)->next) {
            if (*link == &w) {
                *link = w.next;
                break;
            }
        }
    }
    result = w.response;
    if (!result) push_entry(&bridge->dropped, copy_span(key, strlen(key)), NULL);
    oam_mutex_unlock(&bridge->lock);

    if (!result) {
        char message[512];
        cancel_on_bridge(bridge, method, params, timeout_ms);
        snprintf(message, sizeof message, "'%s' did not finish within %d ms; it was cancelled.", method,
                 timeout_ms);
        result = error_response(null_id ? NULL : wire, OAM_CODE_TIMEOUT, "timeout", message);
    }
    oam_mutex_lock(&bridge->lock);
    leave_locked(bridge);
    oam_mutex_unlock(&bridge->lock);
done:
    free_outgoing(queued);
    free(text_take(&line));
    free(work);
    free(key);
    free(wire);
    free(method);
    return result;
}

/* Stops the process and frees the handle. The reader thread has finished or is the caller. */
static void finish_destroy(oam_bridge *bridge) {
    /* Calls that were waiting have their answer ("The bridge was closed."): let them return first. */
    oam_mutex_lock(&bridge->lock);
    while (bridge->users > 0) oam_cond_wait_until(&bridge->changed, &bridge->lock, -1);
    oam_mutex_unlock(&bridge->lock);
    if (!oam_process_wait(bridge->process, SHUTDOWN_WAIT_MS, NULL, 0)) {
        oam_process_kill(bridge->process, 1);
    }
    /* The bridge has ended or is killed, which also ends a write it left stuck: the writer finishes. */
    stop_writer(bridge);
    stop_log_reader(bridge);
    free_log_tail(bridge);
    oam_process_free(bridge->process);
    {
        waiter *w;
        for (w = bridge->waiters; w; w = w->next) free(w->response);
    }
    free_entries(bridge->dropped);
    free_entries(bridge->pending);
    free_cancel_notes(bridge->cancel_notes);
    free_entries(bridge->queue_head);
    free_outgoing(bridge->outbox_head); /* none left: the writer drained it */
    oam_cond_destroy(&bridge->outbox_changed);
    oam_cond_destroy(&bridge->changed);
    oam_mutex_destroy(&bridge->lock);
    free(bridge);
}

/*
 * Cancels everything on the bridge, ends its input (it exits after answering), gives it ~3 s, kills it otherwise,
 * stops the reader and the writer and frees the handle. A bridge that writes nothing within SHUTDOWN_ANSWER_MS
 * (frozen, stopped in a debugger, not reading its input, maybe with the writer thread stuck behind it) is killed
 * then, which also ends the stuck write; the lines still queued for it are dropped. Not on the reader thread.
 */
static void teardown(oam_bridge *bridge) {
    static const char shutdown_request[] = "{\"jsonrpc\":\"2.0\",\"id\":\"oam-destroy\",\"method\":\"shutdown\"}";
    static const char ping_request[] = "{\"jsonrpc\":\"2.0\",\"id\":\"oam-destroy-ping\",\"method\":\"ping\"}";
    int64_t now = oam_now_ms(), deadline = now + SHUTDOWN_WAIT_MS, answer_by = now + SHUTDOWN_ANSWER_MS, left;
    int answered;
    outgoing *shutdown_line = make_line(shutdown_request, sizeof shutdown_request - 1);
    outgoing *ping_line = make_line(ping_request, sizeof ping_request - 1);
    /* Behind the lines sent before (out of memory: stdin closes without them, and the bridge exits on that). */
    oam_mutex_lock(&bridge->lock);
    post_line_locked(bridge, shutdown_line);
    post_line_locked(bridge, ping_line);
    end_input_locked(bridge);
    oam_mutex_unlock(&bridge->lock);
    /* The reader drains (and discards) output while the bridge shuts down; the first of it shows it is alive. */
    oam_mutex_lock(&bridge->lock);
    while (!bridge->heard_closing && !bridge->dead && oam_now_ms() < answer_by) {
        oam_cond_wait_until(&bridge->changed, &bridge->lock, answer_by);
    }
    answered = bridge->heard_closing || bridge->dead;
    oam_mutex_unlock(&bridge->lock);
    left = answered ? deadline - oam_now_ms() : 0;
    if (!oam_process_wait(bridge->process, left > 0 ? (int)left : 0, NULL, 0)) {
        oam_process_kill(bridge->process, 1);
        oam_process_wait(bridge->process, -1, NULL, 0);
    }
    /* What it wrote to stderr while shutting down is passed on before the readers are woken. */
    oam_mutex_lock(&bridge->lock);
    wait_log_end_locked(bridge, LOG_END_WAIT_MS);
    oam_mutex_unlock(&bridge->lock);
    oam_process_wake_reader(bridge->process);
    oam_thread_join(bridge->reader); /* from inside the callback: once the callback has returned */
    finish_destroy(bridge);
}

static void teardown_main(void *argument) { teardown((oam_bridge *)argument); }

OAM_API void oam_bridge_destroy(oam_bridge *bridge) {
    if (!bridge) return;
    oam_mutex_lock(&bridge->lock);
    bridge->closing = 1;
    {
        /* Calls waiting on other threads return now. */
        waiter *w;
        for (w = bridge->waiters; w; w = w->next) {
            if (!w->response) w->response = closed_error(w->null_id ? NULL : w->wire);
        }
    }
    oam_cond_broadcast(&bridge->changed);
    oam_mutex_unlock(&bridge->lock);
    if (oam_thread_equal(oam_thread_current(), oam_thread_id_of(bridge->reader))) {
        /*
         * From inside the callback: the reader cannot wait for the bridge (it must drain its output and return
         * from the callback), so a thread of its own does the teardown and frees the handle after the callback.
         */
        oam_thread reaper;
        if (oam_thread_start(&reaper, teardown_main, bridge) == 0) {
            oam_thread_detach(reaper);
            return;
        }
        /* No thread to be had: kill the bridge now; the reader frees the handle when its output ends. */
        oam_mutex_lock(&bridge->lock);
        bridge->reader_cleans_up = 1;
        oam_mutex_unlock(&bridge->lock);
        oam_process_kill(bridge->process, 1);
        oam_thread_detach(bridge->reader);
        return;
    }
    teardown(bridge);
}
