/*
 * fm_double_driver.c — exercises the test double's ABI from C, for valgrind/ASan runs (see ffi/README.md):
 *
 *   gcc -g -O0 -pthread -Wall -o .build/fm_double_driver ffi/fm_double_driver.c ffi/fm_double.c
 *   valgrind --leak-check=full --show-leak-kinds=all --error-exitcode=9 .build/fm_double_driver
 *
 * Exits 0 when every check passed; prints the failed check otherwise.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oamfm.h"

static int failures = 0;

#define CHECK(cond, what)                                   \
  do {                                                      \
    if (!(cond)) {                                          \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); \
      failures++;                                           \
    }                                                       \
  } while (0)

/* Polls until an event containing `needle` arrives (or 2 s pass); returns the concatenated batches. */
static char *poll_until(oamfm *h, const char *needle) {
  size_t cap = 1024, n = 0;
  char *all = calloc(1, cap);
  for (int i = 0; i < 200; i++) {
    char *batch = oamfm_poll(h, 10);
    if (!batch) continue;
    size_t l = strlen(batch);
    if (n + l + 1 > cap) {
      while (n + l + 1 > cap) cap *= 2;
      all = realloc(all, cap);
    }
    memcpy(all + n, batch, l + 1);
    n += l;
    oamfm_free(batch);
    if (strstr(all, needle)) break;
  }
  return all;
}

static int count(const char *s, const char *needle) {
  int c = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) c++;
  return c;
}

typedef struct {
  oamfm *h;
  char *result;
} poller_arg;

static void *blocked_poll(void *arg) {
  poller_arg *a = arg;
  a->result = oamfm_poll(a->h, -1);
  return NULL;
}

int main(void) {
  CHECK(oamfm_abi_version() == 0x10001u, "abi 1.1");
  CHECK(oamfm_open(NULL) == NULL, "open NULL");
  CHECK(oamfm_open("not json") == NULL, "open invalid JSON");
  CHECK(oamfm_open("{\"abi\":{\"major\":2}}") == NULL, "open refuses major 2");

  oamfm *h = oamfm_open("{\"abi\":{\"major\":1,\"minor\":1},\"x-double\":{\"availability\":{\"available\":false,"
                        "\"reason\":\"model_not_ready\",\"contextSize\":4096,\"supportedLanguages\":[]}}}");
  CHECK(h != NULL, "open");

  /* transport errors */
  CHECK(oamfm_submit(h, NULL) == OAMFM_E_ARG, "submit NULL");
  CHECK(oamfm_submit(h, "[1,2]") == OAMFM_E_REQUEST, "submit array");
  CHECK(oamfm_submit(h, "{\"op\":\"step\"}") == OAMFM_E_REQUEST, "submit without id");
  CHECK(oamfm_submit(h, "{\"id\":\"bad id\",\"op\":\"step\"}") == OAMFM_E_REQUEST, "submit invalid id");
  CHECK(oamfm_submit(h, "{\"id\":\"a\",\"op\":\"step\"") == OAMFM_E_REQUEST, "submit truncated");
  CHECK(oamfm_cancel(h, "nope") == OAMFM_NOT_FOUND, "cancel unknown");

  /* availability from the open options */
  CHECK(oamfm_submit(h, "{\"id\":\"av\",\"op\":\"availability\"}") == OAMFM_OK, "submit availability");
  char *all = poll_until(h, "model_not_ready");
  CHECK(strstr(all, "{\"id\":\"av\",\"type\":\"result\"") != NULL, "availability result");
  free(all);

  /* streaming with echo, coalescing and one terminal event */
  CHECK(oamfm_submit(h, "{\"id\":\"s1\",\"op\":\"step\",\"x-double\":{\"echo\":true,\"stream\":{\"count\":500,"
                        "\"chunk\":\"ab\"},\"result\":{\"kind\":\"text\",\"text\":\"done\"}}}") == OAMFM_OK,
        "submit stream");
  usleep(20000);
  all = poll_until(h, "\"type\":\"result\"");
  CHECK(count(all, "\"type\":\"echo\"") == 1, "one echo");
  CHECK(count(all, "\"type\":\"result\"") == 1, "one terminal");
  CHECK(count(all, "\"type\":\"text\"") >= 1 && count(all, "\"type\":\"text\"") < 500, "snapshots coalesced");
  free(all);

  /* duplicate id while in flight, cancel mid-stream */
  const char *hang = "{\"id\":\"h1\",\"op\":\"step\",\"x-double\":{\"events\":[{\"type\":\"text\",\"text\":\"a\"}],"
                     "\"hang\":true}}";
  CHECK(oamfm_submit(h, hang) == OAMFM_OK, "submit hang");
  CHECK(oamfm_submit(h, hang) == OAMFM_E_DUPLICATE, "duplicate id");
  all = poll_until(h, "\"text\":\"a\"");
  free(all);
  CHECK(oamfm_cancel(h, "h1") == OAMFM_OK, "cancel in flight");
  CHECK(oamfm_cancel(h, "h1") == OAMFM_NOT_FOUND, "cancel twice");
  all = poll_until(h, "cancelled");
  CHECK(count(all, "\"id\":\"h1\",\"type\":\"error\"") == 1, "cancelled terminal");
  free(all);

  /* invalid UTF-8 is refused, not repaired */
  CHECK(oamfm_submit(h, "{\"id\":\"u8\",\"op\":\"step\",\"prompt\":\"\xc0\xaf\"}") == OAMFM_E_REQUEST, "overlong UTF-8");
  CHECK(oamfm_cancel(h, "\xff") == OAMFM_E_ARG, "cancel invalid UTF-8");
  CHECK(oamfm_open("{\"client\":\"\xed\xa0\x80\"}") == NULL, "open with a surrogate");

  /* native sessions: kept after a text answer, continued with the same instructions and history length */
  CHECK(oamfm_submit(h, "{\"id\":\"n1\",\"op\":\"step\",\"instructions\":\"I.\",\"history\":[],\"prompt\":\"p\","
                        "\"native\":{\"key\":\"k\"},\"x-double\":{\"result\":{\"kind\":\"text\",\"text\":\"a\"}}}") == OAMFM_OK,
        "submit native step");
  all = poll_until(h, "\"id\":\"n1\",\"type\":\"result\"");
  CHECK(strstr(all, "\"native\":{\"key\":\"k\",\"rebuilt\":true,\"reason\":\"new\",\"evaluatedEntries\":2,\"kept\":true}") != NULL,
        "native report of a new session");
  free(all);
  CHECK(oamfm_submit(h, "{\"id\":\"n2\",\"op\":\"step\",\"instructions\":\"I.\",\"history\":[{},{}],\"prompt\":\"q\","
                        "\"native\":{\"key\":\"k\",\"continue\":true},\"x-double\":{\"result\":{\"kind\":\"text\"}}}") == OAMFM_OK,
        "submit native continuation");
  all = poll_until(h, "\"id\":\"n2\",\"type\":\"result\"");
  CHECK(strstr(all, "\"reason\":\"continued\",\"evaluatedEntries\":1,\"kept\":true") != NULL, "continued");
  free(all);

  /* unknown op */
  CHECK(oamfm_submit(h, "{\"id\":\"u1\",\"op\":\"frobnicate\"}") == OAMFM_OK, "submit unknown op");
  all = poll_until(h, "unsupported");
  CHECK(strstr(all, "unsupported") != NULL, "unknown op error");
  free(all);

  /* close wakes a blocked poll; in-flight requests get a terminal event */
  CHECK(oamfm_submit(h, "{\"id\":\"h2\",\"op\":\"step\",\"x-double\":{\"hang\":true}}") == OAMFM_OK, "submit h2");
  poller_arg pa = {h, NULL};
  pthread_t t;
  pthread_create(&t, NULL, blocked_poll, &pa);
  usleep(50000);
  oamfm_close(h);
  pthread_join(t, NULL);
  CHECK(pa.result != NULL, "blocked poll woke");
  if (pa.result) {
    if (!strstr(pa.result, "closed")) {
      /* the poll may have returned before close; poll once more is not allowed (handle closed) */
      CHECK(strstr(pa.result, "h2") == NULL || strstr(pa.result, "cancelled") != NULL, "h2 terminal");
    }
    oamfm_free(pa.result);
  }
  CHECK(oamfm_poll(h, 0) == NULL, "poll after close");
  CHECK(oamfm_submit(h, "{\"id\":\"x\",\"op\":\"step\"}") == OAMFM_E_CLOSED, "submit after close");
  CHECK(oamfm_cancel(h, "x") == OAMFM_E_CLOSED, "cancel after close");
  oamfm_close(h); /* idempotent */
  oamfm_free(NULL);

  /* at close, a waiting poll gets at most 63 events and the closed marker */
  oamfm *h3 = oamfm_open("{}");
  for (int i = 0; i < 70; i++) {
    char r[96];
    snprintf(r, sizeof r, "{\"id\":\"c%d\",\"op\":\"step\",\"x-double\":{\"hang\":true}}", i);
    CHECK(oamfm_submit(h3, r) == OAMFM_OK, "submit hanging");
  }
  poller_arg pb = {h3, NULL};
  pthread_t t3;
  pthread_create(&t3, NULL, blocked_poll, &pb);
  usleep(50000);
  oamfm_close(h3);
  pthread_join(t3, NULL);
  if (pb.result) {
    CHECK(count(pb.result, "\"type\":") == 64, "64 events in the last batch");
    CHECK(strstr(pb.result, "{\"type\":\"closed\"}]") != NULL, "closed marker last");
    oamfm_free(pb.result);
  }

  /* a second handle with many short requests, closed while they run */
  oamfm *h2 = oamfm_open("{}");
  CHECK(h2 != NULL, "open 2");
  char req[128];
  for (int i = 0; i < 20; i++) {
    snprintf(req, sizeof req, "{\"id\":\"m%d\",\"op\":\"step\",\"x-double\":{\"delayMs\":%d}}", i, i % 5);
    CHECK(oamfm_submit(h2, req) == OAMFM_OK, "submit many");
  }
  all = poll_until(h2, "\"id\":\"m0\",\"type\":\"result\"");
  free(all);
  oamfm_close(h2);
  usleep(100000); /* let the detached workers finish before exit (valgrind) */

  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("fm_double_driver: all checks passed\n");
  return 0;
}
