/*
 * test_platform.c - checks the OS layer (platform.h) against test_echo_child.c, with either
 * platform_posix.c or platform_windows.c: spawning with awkward arguments (spaces, quotes, backslashes,
 * UTF-8, empty) and a program path with spaces, PATH search, writing and reading lines, waking a blocked
 * reader, reading the child's stderr (and waking that reader), ending input with a timeout, a write stuck until the child is killed, wait with a timeout, exit
 * statuses, threads, the clock and environment variables read as UTF-8.
 *
 *   test_platform <path of the echo child> <name of the echo child on PATH>
 *
 * Prints "ok <check>" or "FAIL <check>: <detail>" per check and "passed N failed M"; exit status 1 on a
 * failure.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200112L /* setenv, unsetenv */
#endif

#include "platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(condition, ...)                                                                                   \
    do {                                                                                                         \
        if (condition) {                                                                                         \
            passed++;                                                                                            \
            printf("ok %s\n", #condition);                                                                       \
        } else {                                                                                                 \
            failed++;                                                                                            \
            printf("FAIL %s (line %d): ", #condition, __LINE__);                                                 \
            printf(__VA_ARGS__);                                                                                 \
            printf("\n");                                                                                        \
        }                                                                                                        \
        fflush(stdout);                                                                                          \
    } while (0)

static void pause_ms(int ms) {
    oam_mutex mutex;
    oam_cond cond;
    int64_t deadline = oam_now_ms() + ms;
    oam_mutex_init(&mutex);
    oam_cond_init(&cond);
    oam_mutex_lock(&mutex);
    while (oam_now_ms() < deadline) oam_cond_wait_until(&cond, &mutex, deadline);
    oam_mutex_unlock(&mutex);
    oam_cond_destroy(&cond);
    oam_mutex_destroy(&mutex);
}

/* Lines of a child's stdout. */
typedef struct {
    oam_process *process;
    char buffer[8192];
    size_t used;
} lines;

/* The next line without its newline (valid until the next call), or NULL at end of output. */
static const char *next_line(lines *l) {
    static char line[8192];
    for (;;) {
        char *newline = (char *)memchr(l->buffer, '\n', l->used);
        long n;
        if (newline) {
            size_t length = (size_t)(newline - l->buffer);
            memcpy(line, l->buffer, length);
            line[length] = '\0';
            memmove(l->buffer, newline + 1, l->used - length - 1);
            l->used -= length + 1;
            return line;
        }
        if (l->used == sizeof l->buffer) return NULL;
        n = oam_process_read(l->process, l->buffer + l->used, sizeof l->buffer - l->used);
        if (n <= 0) return NULL;
        l->used += (size_t)n;
    }
}

typedef struct {
    oam_process *process;
    long result;
    char buffer[64];
} read_call;

static void read_main(void *raw) {
    read_call *call = (read_call *)raw;
    call->result = oam_process_read(call->process, call->buffer, sizeof call->buffer);
}

static void read_stderr_main(void *raw) {
    read_call *call = (read_call *)raw;
    call->result = oam_process_read_stderr(call->process, call->buffer, sizeof call->buffer);
}

typedef struct {
    oam_process *process;
    const char *data;
    size_t length;
    int result;
} write_call;

static void write_main(void *raw) {
    write_call *call = (write_call *)raw;
    call->result = oam_process_write(call->process, call->data, call->length);
}

static const char *const AWKWARD[] = {
    "two words", "say \"hi\"", "trailing\\", "C:\\dir with space\\", "a\\\\\"b", "\\\\server\\share", "", "tab\there",
    "h\xc3\xa9llo \xe2\x9c\x93", "plain", NULL};

static void check_arguments_and_echo(const char *child) {
    const char *argv[16];
    char err[256] = "", expected[256], description[64] = "";
    oam_process *process = NULL;
    lines out;
    const char *line;
    read_call blocked;
    oam_thread reader;
    int k, rc;

    argv[0] = child;
    for (k = 0; AWKWARD[k]; k++) argv[k + 1] = AWKWARD[k];
    argv[k + 1] = NULL;
    rc = oam_process_spawn(argv, &process, err, sizeof err);
    CHECK(rc == 0 && process, "spawn '%s' failed: %d %s", child, rc, err);
    if (!process) return;
    memset(&out, 0, sizeof out);
    out.process = process;
    for (k = 0; AWKWARD[k]; k++) {
        line = next_line(&out);
        snprintf(expected, sizeof expected, "arg %d %s", k + 1, AWKWARD[k]);
        CHECK(line && strcmp(line, expected) == 0, "argument %d: expected [%s], got [%s]", k + 1, expected,
              line ? line : "(end of output)");
    }
    line = next_line(&out);
    CHECK(line && strcmp(line, "ready") == 0, "expected [ready], got [%s]",
          line ? line : "(end of output)");

    CHECK(oam_process_write(process, "hello\n", 6) == 0, "write failed");
    line = next_line(&out);
    CHECK(line && strcmp(line, "hello") == 0, "echo: got [%s]", line ? line : "(end of output)");
    CHECK(oam_process_wait(process, 50, description, sizeof description) == 0, "the child exited early: %s",
          description);

    /* A reader blocked on a silent child wakes up with 0, and so does every later read. */
    memset(&blocked, 0, sizeof blocked);
    blocked.process = process;
    blocked.result = -2;
    CHECK(oam_thread_start(&reader, read_main, &blocked) == 0, "thread start failed");
    pause_ms(200);
    oam_process_wake_reader(process);
    oam_thread_join(reader);
    CHECK(blocked.result == 0, "woken read returned %ld", blocked.result);
    CHECK(oam_process_read(process, blocked.buffer, sizeof blocked.buffer) == 0, "a read after the wake did not return 0");

    /* A last line and end of input: the child echoes it and exits with status 3. */
    CHECK(oam_process_end_input(process, "bye\n", 4, 5000) == 0, "end_input gave up");
    CHECK(oam_process_write(process, "late\n", 5) == -1, "a write after end_input did not fail");
    description[0] = '\0';
    CHECK(oam_process_wait(process, 10000, description, sizeof description) == 1, "the child did not exit");
    CHECK(strcmp(description, "exit status 3") == 0, "description [%s]", description);
    oam_process_close_stdin(process); /* idempotent */
    oam_process_free(process);
}

static void check_exit_status_and_path_search(const char *name_on_path) {
    const char *argv[2];
    char err[256] = "", description[64] = "";
    oam_process *process = NULL;
    lines out;
    const char *line;
    int rc;

    argv[0] = name_on_path;
    argv[1] = NULL;
    rc = oam_process_spawn(argv, &process, err, sizeof err);
    CHECK(rc == 0 && process, "spawn '%s' (on PATH) failed: %d %s", name_on_path, rc, err);
    if (!process) return;
    memset(&out, 0, sizeof out);
    out.process = process;
    line = next_line(&out);
    CHECK(line && strcmp(line, "ready") == 0, "got [%s]", line ? line : "(end of output)");
    CHECK(oam_process_write(process, "exit 7\n", 7) == 0, "write failed");
    line = next_line(&out);
    CHECK(line == NULL, "expected end of output, got [%s]", line);
    CHECK(oam_process_wait(process, -1, description, sizeof description) == 1, "wait failed");
    CHECK(strcmp(description, "exit status 7") == 0, "description [%s]", description);
    oam_process_kill(process, 1); /* after the exit: harmless */
    CHECK(oam_process_write(process, "x\n", 2) == -1, "a write to an exited child did not fail");
    oam_process_free(process);
}

static void check_stuck_writes_and_kill(const char *child) {
    const char *argv[2];
    char err[256] = "", description[64] = "";
    oam_process *process = NULL;
    lines out;
    const char *line;
    size_t big = 4 * 1024 * 1024;
    char *data = (char *)malloc(big);
    write_call stuck;
    oam_thread writer;
    int rc;

    argv[0] = child;
    argv[1] = NULL;
    rc = oam_process_spawn(argv, &process, err, sizeof err);
    CHECK(rc == 0 && process, "spawn failed: %d %s", rc, err);
    if (!process || !data) return;
    memset(data, 'x', big);
    data[big - 1] = '\n';
    memset(&out, 0, sizeof out);
    out.process = process;
    line = next_line(&out);
    CHECK(line && strcmp(line, "ready") == 0, "got [%s]", line ? line : "(end of output)");
    CHECK(oam_process_write(process, "hang\n", 5) == 0, "write failed");

    /* The child stops reading: ending the input with more than a pipe holds gives up after the timeout. */
    CHECK(oam_process_end_input(process, data, big, 300) == -1, "end_input did not give up");
    /* A blocking write stays stuck until the child is killed, then fails. */
    memset(&stuck, 0, sizeof stuck);
    stuck.process = process;
    stuck.data = data;
    stuck.length = big;
    stuck.result = 1;
    CHECK(oam_thread_start(&writer, write_main, &stuck) == 0, "thread start failed");
    pause_ms(200);
    CHECK(oam_process_end_input(process, "bye\n", 4, 200) == -1, "end_input behind a stuck write did not give up");
    CHECK(oam_process_wait(process, 0, description, sizeof description) == 0, "the child exited: %s", description);
    oam_process_kill(process, 1);
    oam_thread_join(writer);
    CHECK(stuck.result == -1, "the stuck write returned %d after the kill", stuck.result);
    CHECK(oam_process_wait(process, -1, description, sizeof description) == 1, "wait failed");
#if defined(_WIN32)
    CHECK(strcmp(description, "killed") == 0, "description [%s]", description);
#else
    CHECK(strcmp(description, "signal 9") == 0, "description [%s]", description);
#endif
    oam_process_free(process);
    free(data);
}

/* The child's stderr is a pipe of its own: what it writes there is read (not mixed into its stdout), the read
 * returns 0 at its end, and a read blocked on it is woken. */
static void check_stderr(const char *child) {
    const char *argv[2];
    char err[256] = "", got[256], description[64] = "";
    oam_process *process = NULL;
    lines out;
    const char *line;
    read_call blocked;
    oam_thread reader;
    size_t used = 0;
    long n = 0;
    int rc;

    argv[0] = child;
    argv[1] = NULL;
    rc = oam_process_spawn(argv, &process, err, sizeof err);
    CHECK(rc == 0 && process, "spawn failed: %d %s", rc, err);
    if (!process) return;
    memset(&out, 0, sizeof out);
    out.process = process;
    line = next_line(&out);
    CHECK(line && strcmp(line, "ready") == 0, "got [%s]", line ? line : "(end of output)");
    CHECK(oam_process_write(process, "err to stderr\nto stdout\n", 24) == 0, "write failed");
    line = next_line(&out);
    CHECK(line && strcmp(line, "to stdout") == 0, "stdout got [%s]", line ? line : "(end of output)");
    while (used < sizeof got - 1 && !memchr(got, '\n', used)) {
        n = oam_process_read_stderr(process, got + used, sizeof got - 1 - used);
        if (n <= 0) break;
        used += (size_t)n;
    }
    got[used] = '\0';
    CHECK(strcmp(got, "to stderr\n") == 0, "stderr got [%s] (last read %ld)", got, n);
    CHECK(oam_process_write(process, "exit 4\n", 7) == 0, "write failed");
    CHECK(oam_process_read_stderr(process, got, sizeof got) == 0, "no end of stderr after the exit");
    CHECK(oam_process_wait(process, -1, description, sizeof description) == 1, "wait failed");
    CHECK(strcmp(description, "exit status 4") == 0, "description [%s]", description);
    oam_process_free(process);

    process = NULL;
    rc = oam_process_spawn(argv, &process, err, sizeof err);
    CHECK(rc == 0 && process, "spawn failed: %d %s", rc, err);
    if (!process) return;
    memset(&blocked, 0, sizeof blocked);
    blocked.process = process;
    blocked.result = 99;
    CHECK(oam_thread_start(&reader, read_stderr_main, &blocked) == 0, "thread start failed");
    pause_ms(100);
    oam_process_wake_reader(process);
    oam_thread_join(reader);
    CHECK(blocked.result == 0, "a woken stderr read returned %ld", blocked.result);
    oam_process_free(process);
}

static void check_missing_program(void) {
    const char *argv[] = {"oam-no-such-program-here", NULL};
    const char *argv_path[] = {"./no/such/dir/program", NULL};
    char err[256] = "";
    oam_process *process = (oam_process *)&err;
    int rc = oam_process_spawn(argv, &process, err, sizeof err);
    CHECK(rc != 0 && process == NULL && strstr(err, "oam-no-such-program-here"), "rc %d, err [%s]", rc, err);
    err[0] = '\0';
    rc = oam_process_spawn(argv_path, &process, err, sizeof err);
    CHECK(rc != 0 && process == NULL && err[0], "rc %d, err [%s]", rc, err);
}

static void check_threads_and_clock(void) {
    int64_t start = oam_now_ms(), end;
    oam_thread_id self = oam_thread_current();
    CHECK(oam_thread_equal(self, oam_thread_current()), "thread ids differ");
    pause_ms(30);
    end = oam_now_ms();
    CHECK(end >= start + 30, "the clock moved %lld ms over a 30 ms wait", (long long)(end - start));
}

/*
 * Sets (utf8_value != NULL) or removes an environment variable with the platform's own API: setenv or
 * unsetenv; on Windows _wputenv (the C runtime's copy and the process environment), or for an empty value,
 * which _wputenv cannot set, SetEnvironmentVariableW (the process environment only).
 */
static int set_variable(const char *name, const char *utf8_value) {
#if defined(_WIN32)
    char assignment[128];
    wchar_t wide[128];
    size_t equals = strlen(name);
    snprintf(assignment, sizeof assignment, "%s=%s", name, utf8_value ? utf8_value : "");
    if (!MultiByteToWideChar(CP_UTF8, 0, assignment, -1, wide, 128)) return -1;
    if (utf8_value && !*utf8_value) {
        wide[equals] = 0;
        return SetEnvironmentVariableW(wide, L"") ? 0 : -1;
    }
    return _wputenv(wide);
#else
    return utf8_value ? setenv(name, utf8_value, 1) : unsetenv(name);
#endif
}

static void check_environment(void) {
    const char *name = "OAM_TEST_PLATFORM_VARIABLE";
    const char *zoe = "C:\\Users\\Zo\xc3\xab\\\xe2\x9c\x93\\oam.exe"; /* no ANSI code page holds U+2713 */
    char *value;

    CHECK(set_variable(name, "C:\\plain\\oam.exe") == 0, "cannot set %s", name);
    value = oam_getenv_utf8(name);
    CHECK(value && strcmp(value, "C:\\plain\\oam.exe") == 0, "an ASCII value came back as [%s]",
          value ? value : "(NULL)");
    free(value);

    CHECK(set_variable(name, zoe) == 0, "cannot set %s", name);
    value = oam_getenv_utf8(name);
    CHECK(value && strcmp(value, zoe) == 0, "a non-ASCII value came back as [%s]", value ? value : "(NULL)");
    free(value);

    CHECK(set_variable(name, "") == 0, "cannot set %s", name);
    value = oam_getenv_utf8(name);
    CHECK(value == NULL, "an empty variable gave [%s]", value);
    free(value);

    CHECK(set_variable(name, NULL) == 0, "cannot remove %s", name);
    value = oam_getenv_utf8(name);
    CHECK(value == NULL, "an unset variable gave [%s]", value);
    free(value);

#if defined(_WIN32)
    /* A game may set the variable with SetEnvironmentVariableW, which the C runtime's copy never sees. */
    CHECK(SetEnvironmentVariableW(L"OAM_TEST_PLATFORM_VARIABLE", L"set by the game"), "cannot set it");
    value = oam_getenv_utf8(name);
    CHECK(value && strcmp(value, "set by the game") == 0, "a value set with SetEnvironmentVariableW came back as [%s]",
          value ? value : "(NULL)");
    free(value);
    SetEnvironmentVariableW(L"OAM_TEST_PLATFORM_VARIABLE", NULL);
#endif
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_platform <path of the echo child> <its name on PATH>\n");
        return 2;
    }
    check_threads_and_clock();
    check_environment();
    check_arguments_and_echo(argv[1]);
    check_exit_status_and_path_search(argv[2]);
    check_stuck_writes_and_kill(argv[1]);
    check_stderr(argv[1]);
    check_missing_program();
    printf("passed %d failed %d\n", passed, failed);
    return failed ? 1 : 0;
}
