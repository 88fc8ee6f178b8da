/*
 * platform_posix.c - processes, threads and clocks for Linux and macOS.
 * See platform.h for the contract.
 */
#if !defined(_WIN32)

#if defined(__linux__) && !defined(_GNU_SOURCE) /* g++ predefines it */
#define _GNU_SOURCE
#endif

#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct oam_process {
    pid_t pid;
    int stdin_fd;  /* our write end of the child's stdin, -1 when closed */
    int stdout_fd; /* our read end of the child's stdout */
    int stderr_fd; /* our read end of the child's stderr */
    int wake[2];   /* self-pipe that interrupts a blocked read */
    int reaped;
    int status;
    oam_mutex lock;       /* guards reaped and status */
    oam_mutex write_lock; /* guards stdin_fd; held through a write, which the child may leave stuck */
};

static int make_pipe(int fds[2]) {
#if defined(__linux__)
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

static void close_fd(int *fd) {
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/* The child's environment: ours plus OAM_EXIT_WITH_PARENT=1 when that variable is unset (a value the game
 * set, "0" included, is kept). NULL means ours as it is (also when out of memory). free() the array only. */
static char **child_environment(void) {
    static char exit_with_parent[] = "OAM_EXIT_WITH_PARENT=1";
    size_t n = 0;
    char **env;
    if (getenv("OAM_EXIT_WITH_PARENT")) return NULL;
    while (environ[n]) n++;
    env = (char **)malloc((n + 2) * sizeof *env);
    if (!env) return NULL;
    memcpy(env, environ, n * sizeof *env);
    env[n] = exit_with_parent;
    env[n + 1] = NULL;
    return env;
}

int oam_process_spawn(const char *const *argv, oam_process **out, char *err, size_t err_size) {
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, wake[2] = {-1, -1};
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    sigset_t signals;
    int rc;
    pid_t pid;
    oam_process *process;
    char **env;

    *out = NULL;
    if (make_pipe(in_pipe) != 0 || make_pipe(out_pipe) != 0 || make_pipe(err_pipe) != 0 || make_pipe(wake) != 0) {
        rc = errno;
        snprintf(err, err_size, "cannot create pipes: %s", strerror(rc));
        close_fd(&in_pipe[0]), close_fd(&in_pipe[1]), close_fd(&out_pipe[0]), close_fd(&out_pipe[1]);
        close_fd(&err_pipe[0]), close_fd(&err_pipe[1]), close_fd(&wake[0]), close_fd(&wake[1]);
        return rc;
    }
    posix_spawn_file_actions_init(&actions);
    /* dup2 clears FD_CLOEXEC on the target; every other pipe end closes on exec. */
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
    /* The child starts with no blocked signals and default SIGPIPE/SIGINT/SIGTERM handling. */
    posix_spawnattr_init(&attributes);
    sigemptyset(&signals);
    posix_spawnattr_setsigmask(&attributes, &signals);
    sigaddset(&signals, SIGPIPE);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    posix_spawnattr_setsigdefault(&attributes, &signals);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    env = child_environment();
    rc = posix_spawnp(&pid, argv[0], &actions, &attributes, (char *const *)argv, env ? env : environ);
    free(env);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    close_fd(&in_pipe[0]);
    close_fd(&out_pipe[1]);
    close_fd(&err_pipe[1]);
    if (rc != 0) {
        snprintf(err, err_size, "cannot start '%s': %s", argv[0], strerror(rc));
        close_fd(&in_pipe[1]), close_fd(&out_pipe[0]), close_fd(&err_pipe[0]), close_fd(&wake[0]), close_fd(&wake[1]);
        return rc;
    }
    process = (oam_process *)calloc(1, sizeof *process);
    if (!process) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close_fd(&in_pipe[1]), close_fd(&out_pipe[0]), close_fd(&err_pipe[0]), close_fd(&wake[0]), close_fd(&wake[1]);
        snprintf(err, err_size, "out of memory");
        return ENOMEM;
    }
    process->pid = pid;
    process->stdin_fd = in_pipe[1];
    process->stdout_fd = out_pipe[0];
    process->stderr_fd = err_pipe[0];
    process->wake[0] = wake[0];
    process->wake[1] = wake[1];
    oam_mutex_init(&process->lock);
    oam_mutex_init(&process->write_lock);
    *out = process;
    return 0;
}

/* Writes with SIGPIPE blocked on this thread; a SIGPIPE raised by the write is consumed. */

/* A write to a closed pipe raised SIGPIPE while it was blocked for this thread: take it from the pending set
 * before the old mask comes back, so it is never delivered (the default action would end the game). */
static void consume_pending_sigpipe(const sigset_t *block) {
    sigset_t pending;
    sigpending(&pending);
    if (!sigismember(&pending, SIGPIPE)) return;
#if defined(__APPLE__)
    int signal_number;
    sigwait(block, &signal_number);
#else
    struct timespec zero = {0, 0};
    sigtimedwait(block, NULL, &zero);
#endif
}
int oam_process_write(oam_process *process, const char *data, size_t length) {
    sigset_t block, old;
    int result = 0, broken = 0;

    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    oam_mutex_lock(&process->write_lock);
    if (process->stdin_fd < 0) {
        result = -1;
    }
    while (result == 0 && length > 0) {
        ssize_t n = write(process->stdin_fd, data, length);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EPIPE) broken = 1;
            result = -1;
            break;
        }
        data += n;
        length -= (size_t)n;
    }
    oam_mutex_unlock(&process->write_lock);
    if (broken) consume_pending_sigpipe(&block);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return result;
}

int oam_process_end_input(oam_process *process, const char *data, size_t length, int timeout_ms) {
    int64_t deadline = oam_now_ms() + timeout_ms;
    sigset_t block, old;
    int result = 0, broken = 0;
    /* Another thread may hold the lock inside a write the child does not read: poll for it. */
    while (pthread_mutex_trylock(&process->write_lock) != 0) {
        struct timespec pause = {0, 5 * 1000 * 1000};
        if (oam_now_ms() >= deadline) return -1;
        nanosleep(&pause, NULL);
    }
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    while (process->stdin_fd >= 0 && length > 0) {
        struct pollfd fd;
        int64_t left = deadline - oam_now_ms();
        ssize_t n;
        fd.fd = process->stdin_fd;
        fd.events = POLLOUT;
        fd.revents = 0;
        if (left <= 0) {
            result = -1;
            break;
        }
        n = poll(&fd, 1, (int)left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            result = -1;
            break;
        }
        /* A pipe that polls writable takes PIPE_BUF bytes without blocking. */
        n = write(process->stdin_fd, data, length < PIPE_BUF ? length : PIPE_BUF);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            if (errno == EPIPE) broken = 1;
            break; /* the child is gone: closing is all that is left */
        }
        data += n;
        length -= (size_t)n;
    }
    if (result == 0) close_fd(&process->stdin_fd);
    oam_mutex_unlock(&process->write_lock);
    if (broken) consume_pending_sigpipe(&block);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return result;
}

/* Reads fd (the child's stdout or stderr) as oam_process_read describes. */
static long read_output(oam_process *process, int fd, char *buffer, size_t capacity) {
    for (;;) {
        struct pollfd fds[2];
        fds[0].fd = fd;
        fds[0].events = POLLIN;
        fds[0].revents = 0;
        fds[1].fd = process->wake[0];
        fds[1].events = POLLIN;
        fds[1].revents = 0;
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (fds[1].revents) return 0;
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = read(fd, buffer, capacity);
            if (n < 0 && errno == EINTR) continue;
            return (long)n;
        }
    }
}

long oam_process_read(oam_process *process, char *buffer, size_t capacity) {
    return read_output(process, process->stdout_fd, buffer, capacity);
}

long oam_process_read_stderr(oam_process *process, char *buffer, size_t capacity) {
    return read_output(process, process->stderr_fd, buffer, capacity);
}

void oam_write_own_stderr(const char *data, size_t length) {
    /* The calling thread has SIGPIPE blocked (oam_thread_start), so a closed stderr pipe only fails the write. */
    while (length > 0) {
        ssize_t n = write(STDERR_FILENO, data, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return; /* no stderr (closed, a broken pipe): the line is dropped, as the child's would be */
        data += n;
        length -= (size_t)n;
    }
}

void oam_process_wake_reader(oam_process *process) {
    char byte = 1;
    ssize_t ignored = write(process->wake[1], &byte, 1);
    (void)ignored;
}

void oam_process_close_stdin(oam_process *process) {
    oam_mutex_lock(&process->write_lock);
    close_fd(&process->stdin_fd);
    oam_mutex_unlock(&process->write_lock);
}

static void describe(int status, char *description, size_t size) {
    if (!description || size == 0) return;
    if (WIFEXITED(status)) {
        snprintf(description, size, "exit status %d", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        snprintf(description, size, "signal %d", WTERMSIG(status));
    } else {
        snprintf(description, size, "status %d", status);
    }
}

int oam_process_wait(oam_process *process, int timeout_ms, char *description, size_t description_size) {
    int64_t deadline = timeout_ms < 0 ? -1 : oam_now_ms() + timeout_ms;
    for (;;) {
        int status = 0;
        pid_t done;
        oam_mutex_lock(&process->lock);
        if (process->reaped) {
            describe(process->status, description, description_size);
            oam_mutex_unlock(&process->lock);
            return 1;
        }
        done = waitpid(process->pid, &status, WNOHANG);
        if (done == process->pid || (done < 0 && errno == ECHILD)) {
            process->reaped = 1;
            process->status = done == process->pid ? status : 0;
            describe(process->status, description, description_size);
            oam_mutex_unlock(&process->lock);
            return 1;
        }
        oam_mutex_unlock(&process->lock);
        if (deadline >= 0 && oam_now_ms() >= deadline) return 0;
        {
            struct timespec pause = {0, 5 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
}

void oam_process_kill(oam_process *process, int force) {
    oam_mutex_lock(&process->lock);
    if (!process->reaped) kill(process->pid, force ? SIGKILL : SIGTERM);
    oam_mutex_unlock(&process->lock);
}

void oam_process_free(oam_process *process) {
    if (!process) return;
    if (!oam_process_wait(process, 0, NULL, 0)) {
        oam_process_kill(process, 1);
        oam_process_wait(process, -1, NULL, 0);
    }
    oam_process_close_stdin(process);
    close_fd(&process->stdout_fd);
    close_fd(&process->stderr_fd);
    close_fd(&process->wake[0]);
    close_fd(&process->wake[1]);
    oam_mutex_destroy(&process->lock);
    oam_mutex_destroy(&process->write_lock);
    free(process);
}

/* ---- threads ---- */

typedef struct {
    void (*entry)(void *);
    void *argument;
} thread_start;

static void *thread_main(void *raw) {
    thread_start start = *(thread_start *)raw;
    free(raw);
    start.entry(start.argument);
    return NULL;
}

int oam_thread_start(oam_thread *thread, void (*entry)(void *), void *argument) {
    thread_start *start = (thread_start *)malloc(sizeof *start);
    sigset_t all, old;
    int rc;
    if (!start) return ENOMEM;
    start->entry = entry;
    start->argument = argument;
    /* The reader thread must not take the host's signals. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(thread, NULL, thread_main, start);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) free(start);
    return rc;
}

void oam_thread_join(oam_thread thread) { pthread_join(thread, NULL); }
void oam_thread_detach(oam_thread thread) { pthread_detach(thread); }
oam_thread_id oam_thread_current(void) { return pthread_self(); }
int oam_thread_equal(oam_thread_id a, oam_thread_id b) { return pthread_equal(a, b); }
oam_thread_id oam_thread_id_of(oam_thread thread) { return thread; }

/* ---- synchronization ---- */

void oam_mutex_init(oam_mutex *mutex) { pthread_mutex_init(mutex, NULL); }
void oam_mutex_destroy(oam_mutex *mutex) { pthread_mutex_destroy(mutex); }
void oam_mutex_lock(oam_mutex *mutex) { pthread_mutex_lock(mutex); }
void oam_mutex_unlock(oam_mutex *mutex) { pthread_mutex_unlock(mutex); }

void oam_cond_init(oam_cond *cond) {
#if defined(__APPLE__)
    pthread_cond_init(cond, NULL);
#else
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attributes);
    pthread_condattr_destroy(&attributes);
#endif
}

void oam_cond_destroy(oam_cond *cond) { pthread_cond_destroy(cond); }
void oam_cond_broadcast(oam_cond *cond) { pthread_cond_broadcast(cond); }

void oam_cond_wait_until(oam_cond *cond, oam_mutex *mutex, int64_t deadline_ms) {
    if (deadline_ms < 0) {
        pthread_cond_wait(cond, mutex);
        return;
    }
    {
        int64_t left = deadline_ms - oam_now_ms();
        if (left <= 0) return;
#if defined(__APPLE__)
        struct timespec relative;
        relative.tv_sec = (time_t)(left / 1000);
        relative.tv_nsec = (long)(left % 1000) * 1000000L;
        pthread_cond_timedwait_relative_np(cond, mutex, &relative);
#else
        struct timespec absolute;
        absolute.tv_sec = (time_t)(deadline_ms / 1000);
        absolute.tv_nsec = (long)(deadline_ms % 1000) * 1000000L;
        pthread_cond_timedwait(cond, mutex, &absolute);
#endif
    }
}

int64_t oam_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

char *oam_getenv_utf8(const char *name) {
    const char *value = getenv(name);
    size_t length;
    char *copy;
    if (!value || !*value) return NULL;
    length = strlen(value);
    copy = (char *)malloc(length + 1);
    if (copy) memcpy(copy, value, length + 1);
    return copy;
}

#endif /* !_WIN32 */
