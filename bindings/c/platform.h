/*
 * platform.h - the small OS layer of libopen_apple_models (internal).
 *
 * Processes with piped stdin/stdout/stderr, threads, a mutex, a condition variable,
 * a monotonic clock and environment variables as UTF-8. platform_posix.c implements it for Linux and macOS,
 * platform_windows.c for Windows (CreateProcessW, pipes, SRWLOCK,
 * CONDITION_VARIABLE); compile exactly one of them. test_platform.c checks
 * either against test_echo_child.c.
 */
#ifndef OAM_PLATFORM_H
#define OAM_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#include <windows.h>
typedef SRWLOCK oam_mutex;
typedef CONDITION_VARIABLE oam_cond;
/* The handle and the id: the id stays valid after oam_thread_join/detach close the handle. */
typedef struct {
    HANDLE handle;
    DWORD id;
} oam_thread;
typedef DWORD oam_thread_id;
#else
#include <pthread.h>
typedef pthread_mutex_t oam_mutex;
typedef pthread_cond_t oam_cond;
typedef pthread_t oam_thread;
typedef pthread_t oam_thread_id;
#endif

/* C names also when only some of the sources are compiled as C++ (renamed to .cpp). */
#ifdef __cplusplus
extern "C" {
#endif

/* A child process whose stdin, stdout and stderr are pipes. */
typedef struct oam_process oam_process;

/*
 * Starts argv (NULL-terminated; argv[0] searched on PATH when it has no
 * slash). Returns 0 and sets *out, or an errno-style code; on failure a
 * message is written to err (err_size bytes). The child inherits this
 * process's environment; on POSIX OAM_EXIT_WITH_PARENT=1 is added when that
 * variable is unset, so the bridge stops when the game exits or crashes. On
 * Windows nothing is added: the bridge cannot see its parent exit there, and
 * the job object it runs in ends it with the game instead.
 */
int oam_process_spawn(const char *const *argv, oam_process **out, char *err, size_t err_size);

/* Writes all bytes to the child's stdin. 0 on success, -1 if the pipe is closed (never raises SIGPIPE). */
int oam_process_write(oam_process *process, const char *data, size_t length);

/*
 * Reads up to capacity bytes of the child's stdout, blocking until data
 * arrives. Returns the count, 0 at end of output or after
 * oam_process_wake_reader(), -1 on a read error.
 */
long oam_process_read(oam_process *process, char *buffer, size_t capacity);

/*
 * Reads up to capacity bytes of the child's stderr, as oam_process_read() does its stdout: blocks until data
 * arrives; the count, 0 at end of output (the child and every process that inherited its stderr closed it) or
 * after oam_process_wake_reader(), -1 on a read error. One thread at a time (the library's stderr reader).
 */
long oam_process_read_stderr(oam_process *process, char *buffer, size_t capacity);

/*
 * Writes bytes to this process's own stderr (fd 2; on Windows the handle GetStdHandle(STD_ERROR_HANDLE) gives
 * now), where the child's stderr went when it was inherited. Errors are ignored (no stderr, a closed pipe: the
 * bytes are dropped). Call it on a thread of oam_thread_start (SIGPIPE blocked).
 */
void oam_write_own_stderr(const char *data, size_t length);

/* Makes a blocked (and every later) oam_process_read() and oam_process_read_stderr() return 0. */
void oam_process_wake_reader(oam_process *process);

/*
 * Writes data (a last line) and closes the child's stdin, giving up after
 * timeout_ms when the child stops reading or another write is stuck behind
 * it. 0 when done, -1 when it gave up (stdin may stay open: kill the child,
 * which also ends the stuck write).
 */
int oam_process_end_input(oam_process *process, const char *data, size_t length, int timeout_ms);

/* Closes the child's stdin (the bridge sees end of input). Idempotent. */
void oam_process_close_stdin(oam_process *process);

/*
 * Waits up to timeout_ms (< 0: forever) for the child to exit. Returns 1 and
 * a description ("exit status 1", "signal 9") when it exited, 0 on timeout.
 */
int oam_process_wait(oam_process *process, int timeout_ms, char *description, size_t description_size);

/* Asks the child to stop (force = 0) or kills it (force = 1). */
void oam_process_kill(oam_process *process, int force);

/* Releases the handle; kills and reaps the child if it is still running. */
void oam_process_free(oam_process *process);

/* Threads. The entry point returns nothing. */
int oam_thread_start(oam_thread *thread, void (*entry)(void *), void *argument);
void oam_thread_join(oam_thread thread);
void oam_thread_detach(oam_thread thread);
oam_thread_id oam_thread_current(void);
int oam_thread_equal(oam_thread_id a, oam_thread_id b);
oam_thread_id oam_thread_id_of(oam_thread thread);

/* A non-recursive mutex and a condition variable. */
void oam_mutex_init(oam_mutex *mutex);
void oam_mutex_destroy(oam_mutex *mutex);
void oam_mutex_lock(oam_mutex *mutex);
void oam_mutex_unlock(oam_mutex *mutex);
void oam_cond_init(oam_cond *cond);
void oam_cond_destroy(oam_cond *cond);
void oam_cond_broadcast(oam_cond *cond);
/* Waits until signalled or the monotonic clock reaches deadline_ms (< 0: no deadline). */
void oam_cond_wait_until(oam_cond *cond, oam_mutex *mutex, int64_t deadline_ms);

/* Milliseconds of a monotonic clock. */
int64_t oam_now_ms(void);

/*
 * The value of an environment variable as a new UTF-8 string (free() it), or NULL when it is unset, empty
 * or out of memory. POSIX: getenv's bytes. Windows: read as UTF-16 from the process environment (what
 * SetEnvironmentVariableW, _wputenv and _putenv set) and converted, where getenv would give the ANSI code
 * page and lose what it cannot hold.
 */
char *oam_getenv_utf8(const char *name);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* OAM_PLATFORM_H */
