/*
 * platform_windows.c - processes, threads and clocks for Windows (Windows 8 or later).
 * See platform.h for the contract. Compiled with MSVC or MinGW-w64; links only kernel32 and the C runtime.
 *
 * How it meets the contract:
 *   - Spawning: argv (UTF-8) is converted to UTF-16 and joined into one command line quoted by the rules
 *     the Microsoft C runtime and CommandLineToArgvW use to split it again (quote_argument below), then
 *     started with CreateProcessW. Only the child's three pipe ends (stdin, stdout, stderr) are inherited
 *     (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), so a concurrent spawn elsewhere in the game never inherits our
 *     pipes. The child's stderr is a pipe too: the library reads it (oam_process_read_stderr) and passes
 *     it on to the game's stderr (oam_write_own_stderr: the handle GetStdHandle gives, as UTF-16 through
 *     WriteConsoleW when it is a console, so UTF-8 text shows right whatever the console's code page).
 *   - PATH search: argv[0] without '\', '/' or ':' is looked up in the directories of PATH only (like
 *     execvp; not the current directory or the game's own directory unless PATH lists them). As with
 *     CreateProcess, ".exe" is appended when the name has no extension. Batch files (.cmd, .bat) are
 *     refused: cmd.exe re-parses their arguments with other rules, so they cannot be passed safely; start
 *     "cmd.exe /d /c script.cmd" yourself if you must.
 *   - Pipes: each pipe is a uniquely named pipe (what CreatePipe makes too) whose end on our side is opened
 *     for overlapped I/O and the child's end for ordinary blocking I/O. Overlapped I/O lets a read be woken
 *     (oam_process_wake_reader sets an event both reads, stdout's and stderr's, wait on next to the pipe,
 *     then the read cancels itself with CancelIoEx) and lets oam_process_end_input give up after its timeout (the write is
 *     cancelled). There is no SIGPIPE: a write to a child that is gone fails with ERROR_NO_DATA or
 *     ERROR_BROKEN_PIPE and returns -1.
 *   - Killing: the child runs in a job object that kills everything in it when it is closed, so a bridge
 *     started through a launcher does not leave its real process behind. oam_process_kill terminates the
 *     job (or the process when it could not be put in one); Windows has no polite stop signal for a piped
 *     child, so force = 0 does the same. The bridge ends by itself when its stdin closes.
 *   - The environment is inherited as it is. The POSIX layer adds OAM_EXIT_WITH_PARENT=1 (the bridge stops
 *     when the game exits); here the game's end closes its handle to the job, which kills the bridge at
 *     once, and the bridge could not act on the variable anyway (a Windows process's parent pid never
 *     changes).
 *   - oam_process_wait describes the exit as "exit status N", "exception 0xC0000005" (an unhandled
 *     exception) or "killed" (after oam_process_kill).
 *   - oam_getenv_utf8 reads the variable with GetEnvironmentVariableW and converts it to UTF-8.
 */
#if defined(_WIN32)

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#if !defined(_WIN32_WINNT) || _WIN32_WINNT < 0x0602
#undef _WIN32_WINNT
#define _WIN32_WINNT 0x0602 /* Windows 8: CancelIoEx, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, nested jobs */
#endif

#include "platform.h"

#include <errno.h>
#include <process.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define PIPE_BUFFER_BYTES 65536

struct oam_process {
    HANDLE process;
    HANDLE job;         /* NULL when the child could not be put in a job */
    HANDLE stdin_pipe;  /* our write end of the child's stdin, NULL when closed */
    HANDLE stdout_pipe; /* our read end of the child's stdout */
    HANDLE stderr_pipe; /* our read end of the child's stderr */
    HANDLE wake;        /* manual-reset event: set by oam_process_wake_reader */
    HANDLE read_done;   /* manual-reset event of the overlapped read of stdout */
    HANDLE stderr_done; /* manual-reset event of the overlapped read of stderr */
    HANDLE write_done;  /* manual-reset event of the overlapped writes (used under write_lock) */
    volatile LONG killed;
    oam_mutex write_lock; /* guards stdin_pipe; held through a write, which the child may leave stuck */
};

static void close_handle(HANDLE *handle) {
    if (*handle && *handle != INVALID_HANDLE_VALUE) CloseHandle(*handle);
    *handle = NULL;
}

/* Writes "what: <system message>" to err. */
static void format_error(char *err, size_t err_size, const char *what, DWORD code) {
    char message[256];
    DWORD n;
    if (!err || err_size == 0) return;
    n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, message,
                       (DWORD)sizeof message, NULL);
    while (n > 0 && (message[n - 1] == '\r' || message[n - 1] == '\n' || message[n - 1] == ' ')) n--;
    message[n] = '\0';
    if (n == 0) snprintf(message, sizeof message, "error %lu", (unsigned long)code);
    snprintf(err, err_size, "%s: %s", what, message);
}

static int errno_of(DWORD code) {
    switch (code) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND: return ENOENT;
    case ERROR_ACCESS_DENIED: return EACCES;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY: return ENOMEM;
    case ERROR_BAD_EXE_FORMAT: return ENOEXEC;
    default: return EINVAL;
    }
}

/* UTF-8 to a new UTF-16 string (free() it); NULL on invalid UTF-8 or no memory. */
static wchar_t *to_wide(const char *text) {
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, text, -1, NULL, 0);
    wchar_t *wide;
    if (n <= 0) return NULL;
    wide = (wchar_t *)malloc((size_t)n * sizeof *wide);
    if (wide && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, text, -1, wide, n) != n) {
        free(wide);
        return NULL;
    }
    return wide;
}

/* A growing UTF-16 string; `failed` once an allocation failed. */
typedef struct {
    wchar_t *text;
    size_t length, capacity;
    int failed;
} wide_buffer;

static void append(wide_buffer *b, const wchar_t *text, size_t count) {
    if (b->failed) return;
    if (b->length + count + 1 > b->capacity) {
        size_t capacity = (b->length + count + 1) * 2;
        wchar_t *grown = (wchar_t *)realloc(b->text, capacity * sizeof *grown);
        if (!grown) {
            b->failed = 1;
            return;
        }
        b->text = grown;
        b->capacity = capacity;
    }
    memcpy(b->text + b->length, text, count * sizeof *text);
    b->length += count;
    b->text[b->length] = L'\0';
}

static void append_repeated(wide_buffer *b, wchar_t c, size_t count) {
    while (count-- > 0) append(b, &c, 1);
}

/*
 * Appends one argument (not the first) so that the C runtime's argv parser and CommandLineToArgvW give it
 * back unchanged: quoted when empty or holding a space, tab, newline, vertical tab or quote; inside quotes
 * backslashes are literal except before a quote, where 2n backslashes + '"' stand for n backslashes and the
 * end of the quoting, so n backslashes before a literal quote become 2n+1, and n before the closing quote 2n.
 */
static void quote_argument(wide_buffer *b, const wchar_t *argument) {
    const wchar_t *p;
    if (argument[0] != L'\0' && !wcspbrk(argument, L" \t\n\v\"")) {
        append(b, argument, wcslen(argument));
        return;
    }
    append(b, L"\"", 1);
    for (p = argument;; p++) {
        size_t backslashes = 0;
        while (*p == L'\\') {
            backslashes++;
            p++;
        }
        if (*p == L'\0') {
            append_repeated(b, L'\\', backslashes * 2);
            break;
        }
        if (*p == L'"') {
            append_repeated(b, L'\\', backslashes * 2 + 1);
        } else {
            append_repeated(b, L'\\', backslashes);
        }
        append(b, p, 1);
    }
    append(b, L"\"", 1);
}

/*
 * The program name (argv[0]) is split by other rules: up to the next quote when it starts with one, else up
 * to the first space or tab, with no backslash escapes. So it is quoted whole, and may not hold a quote.
 */
static int quote_program(wide_buffer *b, const wchar_t *program) {
    if (wcschr(program, L'"')) return -1;
    append(b, L"\"", 1);
    append(b, program, wcslen(program));
    append(b, L"\"", 1);
    return 0;
}

static int is_file(const wchar_t *path) {
    DWORD attributes = GetFileAttributesW(path);
    return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
}

/* Whether the last component of path has an extension. */
static int has_extension(const wchar_t *path) {
    const wchar_t *name = path, *p;
    for (p = path; *p; p++) {
        if (*p == L'\\' || *p == L'/' || *p == L':') name = p + 1;
    }
    return wcschr(name, L'.') != NULL;
}

/* dir + '\' + name (+ ".exe" when name has no extension) into a new string. */
static wchar_t *candidate(const wchar_t *dir, size_t dir_length, const wchar_t *name) {
    wide_buffer b = {NULL, 0, 0, 0};
    append(&b, dir, dir_length);
    if (dir_length > 0 && dir[dir_length - 1] != L'\\' && dir[dir_length - 1] != L'/') append(&b, L"\\", 1);
    append(&b, name, wcslen(name));
    if (!has_extension(name)) append(&b, L".exe", 4);
    if (b.failed) {
        free(b.text);
        return NULL;
    }
    return b.text;
}

/* The file to start for program (see the top of this file); a new string, or NULL when none exists. */
static wchar_t *resolve_program(const wchar_t *program) {
    wchar_t *path, *found = NULL;
    const wchar_t *p;
    DWORD n;
    if (wcspbrk(program, L"\\/:")) {
        found = candidate(L"", 0, program);
        if (found && !is_file(found)) {
            free(found);
            found = NULL;
        }
        return found;
    }
    n = GetEnvironmentVariableW(L"PATH", NULL, 0);
    if (n == 0) return NULL;
    path = (wchar_t *)malloc((size_t)n * sizeof *path);
    if (!path || GetEnvironmentVariableW(L"PATH", path, n) >= n) {
        free(path);
        return NULL;
    }
    for (p = path; *p && !found;) {
        const wchar_t *end = wcschr(p, L';');
        size_t length = end ? (size_t)(end - p) : wcslen(p);
        const wchar_t *dir = p;
        if (length >= 2 && dir[0] == L'"' && dir[length - 1] == L'"') dir++, length -= 2; /* "C:\My Tools" */
        if (length > 0) {
            found = candidate(dir, length, program);
            if (found && !is_file(found)) {
                free(found);
                found = NULL;
            }
        }
        p = end ? end + 1 : p + length;
    }
    free(path);
    return found;
}

static int is_batch_file(const wchar_t *path) {
    size_t n = wcslen(path);
    return n >= 4 && (_wcsicmp(path + n - 4, L".cmd") == 0 || _wcsicmp(path + n - 4, L".bat") == 0);
}

/*
 * A pipe: *ours is the overlapped end for this process (writing when outbound), *childs the inheritable
 * blocking end for the child. Returns 0 or a Windows error code.
 */
static DWORD make_pipe(int outbound, HANDLE *ours, HANDLE *childs) {
    static volatile LONG counter;
    wchar_t name[96];
    SECURITY_ATTRIBUTES inherit;
    DWORD code;
    swprintf(name, sizeof name / sizeof name[0], L"\\\\.\\pipe\\open-apple-models-%lu-%ld-%llu",
             (unsigned long)GetCurrentProcessId(), (long)InterlockedIncrement(&counter),
             (unsigned long long)GetTickCount64());
    *ours = CreateNamedPipeW(name,
                             (outbound ? PIPE_ACCESS_OUTBOUND : PIPE_ACCESS_INBOUND) | FILE_FLAG_OVERLAPPED |
                                 FILE_FLAG_FIRST_PIPE_INSTANCE,
                             PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS, 1,
                             PIPE_BUFFER_BYTES, PIPE_BUFFER_BYTES, 0, NULL);
    if (*ours == INVALID_HANDLE_VALUE) {
        *ours = NULL;
        return GetLastError();
    }
    inherit.nLength = sizeof inherit;
    inherit.lpSecurityDescriptor = NULL;
    inherit.bInheritHandle = TRUE;
    /* The access CreatePipe gives its ends: the child may query and set the pipe's state. */
    *childs = CreateFileW(name, outbound ? GENERIC_READ | FILE_WRITE_ATTRIBUTES : GENERIC_WRITE | FILE_READ_ATTRIBUTES,
                          0, &inherit, OPEN_EXISTING, 0, NULL);
    if (*childs == INVALID_HANDLE_VALUE) {
        code = GetLastError();
        *childs = NULL;
        close_handle(ours);
        return code;
    }
    return 0;
}

int oam_process_spawn(const char *const *argv, oam_process **out, char *err, size_t err_size) {
    HANDLE stdin_ours = NULL, stdin_childs = NULL, stdout_ours = NULL, stdout_childs = NULL, stderr_ours = NULL;
    HANDLE stderr_childs = NULL, inherited[3], wake = NULL, read_done = NULL, stderr_done = NULL, write_done = NULL;
    HANDLE job = NULL;
    wchar_t *program = NULL, *application = NULL;
    wide_buffer command = {NULL, 0, 0, 0};
    STARTUPINFOEXW startup;
    PROCESS_INFORMATION info;
    SIZE_T list_size = 0;
    DWORD code, flags;
    oam_process *process = NULL;
    int rc = 0;
    size_t k;

    *out = NULL;
    memset(&startup, 0, sizeof startup);
    memset(&info, 0, sizeof info);
    if (!argv || !argv[0] || !argv[0][0]) {
        snprintf(err, err_size, "cannot start: empty command");
        return EINVAL;
    }

    /* The command line, in UTF-16. */
    program = to_wide(argv[0]);
    if (!program || quote_program(&command, program) != 0) {
        snprintf(err, err_size, "cannot start '%s': %s", argv[0],
                 program ? "a program name cannot contain '\"' on Windows" : "not valid UTF-8");
        rc = EINVAL;
        goto done;
    }
    for (k = 1; argv[k]; k++) {
        wchar_t *argument = to_wide(argv[k]);
        if (!argument) {
            snprintf(err, err_size, "cannot start '%s': argument %u is not valid UTF-8", argv[0], (unsigned)k);
            rc = EINVAL;
            goto done;
        }
        append(&command, L" ", 1);
        quote_argument(&command, argument);
        free(argument);
    }
    if (command.failed) {
        snprintf(err, err_size, "out of memory");
        rc = ENOMEM;
        goto done;
    }
    if (command.length >= 32767) {
        snprintf(err, err_size, "cannot start '%s': the command line is longer than Windows allows (32767)",
                 argv[0]);
        rc = E2BIG;
        goto done;
    }
    application = resolve_program(program);
    if (!application) {
        snprintf(err, err_size, "cannot start '%s': No such file or directory%s", argv[0],
                 wcspbrk(program, L"\\/:") ? "" : " (searched PATH, adding .exe when it has no extension)");
        rc = ENOENT;
        goto done;
    }
    if (is_batch_file(application)) {
        snprintf(err, err_size,
                 "cannot start '%s': a batch file (.cmd, .bat) cannot take arguments safely; start the program "
                 "it runs, or \"cmd.exe /d /c\" explicitly",
                 argv[0]);
        rc = ENOEXEC;
        goto done;
    }

    /* Pipes and events. */
    if ((code = make_pipe(1, &stdin_ours, &stdin_childs)) != 0 || (code = make_pipe(0, &stdout_ours, &stdout_childs)) != 0 ||
        (code = make_pipe(0, &stderr_ours, &stderr_childs)) != 0) {
        format_error(err, err_size, "cannot create pipes", code);
        rc = errno_of(code);
        goto done;
    }
    wake = CreateEventW(NULL, TRUE, FALSE, NULL);
    read_done = CreateEventW(NULL, TRUE, FALSE, NULL);
    stderr_done = CreateEventW(NULL, TRUE, FALSE, NULL);
    write_done = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (!wake || !read_done || !stderr_done || !write_done) {
        format_error(err, err_size, "cannot create events", GetLastError());
        rc = ENOMEM;
        goto done;
    }
    inherited[0] = stdin_childs;
    inherited[1] = stdout_childs;
    inherited[2] = stderr_childs;

    /* Only these handles are inherited. */
    InitializeProcThreadAttributeList(NULL, 1, 0, &list_size);
    startup.lpAttributeList = (LPPROC_THREAD_ATTRIBUTE_LIST)malloc(list_size);
    if (!startup.lpAttributeList || !InitializeProcThreadAttributeList(startup.lpAttributeList, 1, 0, &list_size)) {
        free(startup.lpAttributeList);
        startup.lpAttributeList = NULL;
        snprintf(err, err_size, "out of memory");
        rc = ENOMEM;
        goto done;
    }
    if (!UpdateProcThreadAttribute(startup.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited,
                                   sizeof inherited, NULL, NULL)) {
        format_error(err, err_size, "cannot start (handle list)", GetLastError());
        rc = EINVAL;
        goto done;
    }
    startup.StartupInfo.cb = sizeof startup;
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    startup.StartupInfo.hStdInput = stdin_childs;
    startup.StartupInfo.hStdOutput = stdout_childs;
    startup.StartupInfo.hStdError = stderr_childs;

    /* Suspended until it is in the job, so nothing it starts escapes the job. A game without a console
     * (Unity, Unreal) would otherwise open a console window for the bridge: all three of its standard handles
     * are our pipes, so it needs none. */
    flags = EXTENDED_STARTUPINFO_PRESENT | CREATE_UNICODE_ENVIRONMENT | CREATE_SUSPENDED;
    if (!GetConsoleWindow()) flags |= CREATE_NO_WINDOW;
    if (!CreateProcessW(application, command.text, NULL, NULL, TRUE, flags, NULL, NULL, &startup.StartupInfo,
                        &info)) {
        char what[300];
        code = GetLastError();
        snprintf(what, sizeof what, "cannot start '%s'", argv[0]);
        format_error(err, err_size, what, code);
        rc = errno_of(code);
        goto done;
    }
    job = CreateJobObjectW(NULL, NULL);
    if (job) {
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits;
        memset(&limits, 0, sizeof limits);
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof limits) ||
            !AssignProcessToJobObject(job, info.hProcess)) {
            close_handle(&job); /* still works, without taking the bridge's own children along on kill */
        }
    }
    ResumeThread(info.hThread);
    CloseHandle(info.hThread);

    process = (oam_process *)calloc(1, sizeof *process);
    if (!process) {
        if (job) TerminateJobObject(job, 1);
        TerminateProcess(info.hProcess, 1);
        WaitForSingleObject(info.hProcess, INFINITE);
        CloseHandle(info.hProcess);
        close_handle(&job);
        snprintf(err, err_size, "out of memory");
        rc = ENOMEM;
        goto done;
    }
    process->process = info.hProcess;
    process->job = job;
    process->stdin_pipe = stdin_ours;
    process->stdout_pipe = stdout_ours;
    process->stderr_pipe = stderr_ours;
    process->wake = wake;
    process->read_done = read_done;
    process->stderr_done = stderr_done;
    process->write_done = write_done;
    oam_mutex_init(&process->write_lock);
    stdin_ours = stdout_ours = stderr_ours = wake = read_done = stderr_done = write_done = NULL; /* now the process's */
    *out = process;

done:
    if (startup.lpAttributeList) {
        DeleteProcThreadAttributeList(startup.lpAttributeList);
        free(startup.lpAttributeList);
    }
    close_handle(&stdin_childs);
    close_handle(&stdout_childs);
    close_handle(&stderr_childs);
    close_handle(&stdin_ours);
    close_handle(&stdout_ours);
    close_handle(&stderr_ours);
    close_handle(&wake);
    close_handle(&read_done);
    close_handle(&stderr_done);
    close_handle(&write_done);
    free(program);
    free(application);
    free(command.text);
    return rc;
}

/*
 * One overlapped write of up to a DWORD's worth, waiting up to timeout_ms (INFINITE: forever). Returns the
 * bytes written, -1 when the pipe is closed or broken, -2 on timeout (the write was cancelled; some bytes may
 * have gone through).
 */
static long write_some(oam_process *process, const char *data, size_t length, DWORD timeout_ms) {
    OVERLAPPED overlapped;
    DWORD written = 0, chunk = length > 0x40000000u ? 0x40000000u : (DWORD)length;
    memset(&overlapped, 0, sizeof overlapped);
    overlapped.hEvent = process->write_done;
    ResetEvent(process->write_done);
    if (!WriteFile(process->stdin_pipe, data, chunk, NULL, &overlapped) && GetLastError() != ERROR_IO_PENDING) {
        return -1;
    }
    if (WaitForSingleObject(process->write_done, timeout_ms) != WAIT_OBJECT_0) {
        CancelIoEx(process->stdin_pipe, &overlapped);
        GetOverlappedResult(process->stdin_pipe, &overlapped, &written, TRUE);
        return -2;
    }
    if (!GetOverlappedResult(process->stdin_pipe, &overlapped, &written, TRUE)) return -1;
    return (long)written;
}

int oam_process_write(oam_process *process, const char *data, size_t length) {
    int result = 0;
    oam_mutex_lock(&process->write_lock);
    if (!process->stdin_pipe) result = -1;
    while (result == 0 && length > 0) {
        long n = write_some(process, data, length, INFINITE);
        if (n < 0) {
            result = -1;
            break;
        }
        data += n;
        length -= (size_t)n;
    }
    oam_mutex_unlock(&process->write_lock);
    return result;
}

int oam_process_end_input(oam_process *process, const char *data, size_t length, int timeout_ms) {
    int64_t deadline = oam_now_ms() + timeout_ms;
    int result = 0;
    /* Another thread may hold the lock inside a write the child does not read: poll for it. */
    while (!TryAcquireSRWLockExclusive(&process->write_lock)) {
        if (oam_now_ms() >= deadline) return -1;
        Sleep(5);
    }
    while (process->stdin_pipe && length > 0) {
        int64_t left = deadline - oam_now_ms();
        long n;
        if (left <= 0) {
            result = -1;
            break;
        }
        n = write_some(process, data, length, left >= (int64_t)INFINITE ? INFINITE - 1 : (DWORD)left);
        if (n == -2) {
            result = -1;
            break;
        }
        if (n < 0) break; /* the child is gone: closing is all that is left */
        data += n;
        length -= (size_t)n;
    }
    if (result == 0) close_handle(&process->stdin_pipe);
    oam_mutex_unlock(&process->write_lock);
    return result;
}

/* Reads pipe (the child's stdout or stderr, with done the event of its reads) as oam_process_read describes. */
static long read_pipe(oam_process *process, HANDLE pipe, HANDLE done, char *buffer, size_t capacity) {
    OVERLAPPED overlapped;
    HANDLE events[2];
    DWORD got = 0, chunk = capacity > 0x40000000u ? 0x40000000u : (DWORD)capacity;
    if (WaitForSingleObject(process->wake, 0) == WAIT_OBJECT_0) return 0;
    memset(&overlapped, 0, sizeof overlapped);
    overlapped.hEvent = done;
    ResetEvent(done);
    if (!ReadFile(pipe, buffer, chunk, NULL, &overlapped)) {
        DWORD code = GetLastError();
        if (code == ERROR_BROKEN_PIPE || code == ERROR_PIPE_NOT_CONNECTED) return 0; /* the child closed its end */
        if (code != ERROR_IO_PENDING) return -1;
    }
    events[0] = done;
    events[1] = process->wake;
    if (WaitForMultipleObjects(2, events, FALSE, INFINITE) != WAIT_OBJECT_0) {
        /* Woken (or the wait failed): cancel the read and wait until it has let go of the buffer. */
        CancelIoEx(pipe, &overlapped);
        GetOverlappedResult(pipe, &overlapped, &got, TRUE);
        return 0;
    }
    if (!GetOverlappedResult(pipe, &overlapped, &got, TRUE)) {
        DWORD code = GetLastError();
        return code == ERROR_BROKEN_PIPE || code == ERROR_PIPE_NOT_CONNECTED || code == ERROR_OPERATION_ABORTED ? 0 : -1;
    }
    if (WaitForSingleObject(process->wake, 0) == WAIT_OBJECT_0) return 0;
    return (long)got;
}

long oam_process_read(oam_process *process, char *buffer, size_t capacity) {
    return read_pipe(process, process->stdout_pipe, process->read_done, buffer, capacity);
}

long oam_process_read_stderr(oam_process *process, char *buffer, size_t capacity) {
    return read_pipe(process, process->stderr_pipe, process->stderr_done, buffer, capacity);
}

void oam_write_own_stderr(const char *data, size_t length) {
    HANDLE own = GetStdHandle(STD_ERROR_HANDLE);
    DWORD mode, written;
    if (!own || own == INVALID_HANDLE_VALUE || length == 0) return; /* no stderr (a GUI game): dropped */
    if (length <= 0x10000000u && GetConsoleMode(own, &mode)) {
        /* A console: as UTF-16, which it shows whatever its code page (invalid UTF-8 becomes U+FFFD). */
        int count = MultiByteToWideChar(CP_UTF8, 0, data, (int)length, NULL, 0);
        wchar_t *wide = count > 0 ? (wchar_t *)malloc((size_t)count * sizeof *wide) : NULL;
        if (wide && MultiByteToWideChar(CP_UTF8, 0, data, (int)length, wide, count) == count) {
            const wchar_t *p = wide;
            while (count > 0 && WriteConsoleW(own, p, (DWORD)count, &written, NULL) && written > 0) {
                p += written;
                count -= (int)written;
            }
            free(wide);
            return;
        }
        free(wide); /* out of memory: the bytes as they are, below */
    }
    while (length > 0) {
        DWORD chunk = length > 0x40000000u ? 0x40000000u : (DWORD)length;
        if (!WriteFile(own, data, chunk, &written, NULL) || written == 0) return; /* a closed pipe: dropped */
        data += written;
        length -= written;
    }
}

void oam_process_wake_reader(oam_process *process) { SetEvent(process->wake); }

void oam_process_close_stdin(oam_process *process) {
    oam_mutex_lock(&process->write_lock);
    close_handle(&process->stdin_pipe);
    oam_mutex_unlock(&process->write_lock);
}

int oam_process_wait(oam_process *process, int timeout_ms, char *description, size_t description_size) {
    DWORD code = 0;
    if (WaitForSingleObject(process->process, timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms) != WAIT_OBJECT_0) {
        return 0;
    }
    if (description && description_size > 0) {
        GetExitCodeProcess(process->process, &code);
        if (process->killed) {
            snprintf(description, description_size, "killed");
        } else if (code >= 0xC0000000u) {
            snprintf(description, description_size, "exception 0x%08lX", (unsigned long)code);
        } else {
            snprintf(description, description_size, "exit status %lu", (unsigned long)code);
        }
    }
    return 1;
}

void oam_process_kill(oam_process *process, int force) {
    (void)force; /* no polite stop for a piped child on Windows: see the top of this file */
    if (WaitForSingleObject(process->process, 0) == WAIT_OBJECT_0) return;
    InterlockedExchange(&process->killed, 1);
    if (process->job) TerminateJobObject(process->job, 1);
    TerminateProcess(process->process, 1);
}

void oam_process_free(oam_process *process) {
    if (!process) return;
    if (!oam_process_wait(process, 0, NULL, 0)) {
        oam_process_kill(process, 1);
        oam_process_wait(process, -1, NULL, 0);
    }
    oam_process_close_stdin(process);
    close_handle(&process->stdout_pipe);
    close_handle(&process->stderr_pipe);
    close_handle(&process->job); /* kills what the bridge itself left running */
    close_handle(&process->process);
    close_handle(&process->wake);
    close_handle(&process->read_done);
    close_handle(&process->stderr_done);
    close_handle(&process->write_done);
    oam_mutex_destroy(&process->write_lock);
    free(process);
}

/* ---- threads ---- */

typedef struct {
    void (*entry)(void *);
    void *argument;
} thread_start;

static unsigned __stdcall thread_main(void *raw) {
    thread_start start = *(thread_start *)raw;
    free(raw);
    start.entry(start.argument);
    return 0;
}

int oam_thread_start(oam_thread *thread, void (*entry)(void *), void *argument) {
    thread_start *start = (thread_start *)malloc(sizeof *start);
    uintptr_t handle;
    unsigned id = 0;
    if (!start) return ENOMEM;
    start->entry = entry;
    start->argument = argument;
    /* _beginthreadex (not CreateThread) sets up the C runtime for the thread. */
    handle = _beginthreadex(NULL, 0, thread_main, start, 0, &id);
    if (handle == 0) {
        int rc = errno ? errno : EAGAIN;
        free(start);
        return rc;
    }
    thread->handle = (HANDLE)handle;
    thread->id = (DWORD)id;
    return 0;
}

void oam_thread_join(oam_thread thread) {
    WaitForSingleObject(thread.handle, INFINITE);
    CloseHandle(thread.handle);
}
void oam_thread_detach(oam_thread thread) { CloseHandle(thread.handle); }
oam_thread_id oam_thread_current(void) { return GetCurrentThreadId(); }
int oam_thread_equal(oam_thread_id a, oam_thread_id b) { return a == b; }
oam_thread_id oam_thread_id_of(oam_thread thread) { return thread.id; }

/* ---- synchronization ---- */

void oam_mutex_init(oam_mutex *mutex) { InitializeSRWLock(mutex); }
void oam_mutex_destroy(oam_mutex *mutex) { (void)mutex; /* an SRWLOCK holds no resources */ }
void oam_mutex_lock(oam_mutex *mutex) { AcquireSRWLockExclusive(mutex); }
void oam_mutex_unlock(oam_mutex *mutex) { ReleaseSRWLockExclusive(mutex); }

void oam_cond_init(oam_cond *cond) { InitializeConditionVariable(cond); }
void oam_cond_destroy(oam_cond *cond) { (void)cond; /* a CONDITION_VARIABLE holds no resources */ }
void oam_cond_broadcast(oam_cond *cond) { WakeAllConditionVariable(cond); }

void oam_cond_wait_until(oam_cond *cond, oam_mutex *mutex, int64_t deadline_ms) {
    if (deadline_ms < 0) {
        SleepConditionVariableSRW(cond, mutex, INFINITE, 0);
        return;
    }
    {
        int64_t left = deadline_ms - oam_now_ms();
        if (left <= 0) return;
        /* Returns on a signal, a spurious wake or the timeout: callers re-check, as with pthreads. */
        SleepConditionVariableSRW(cond, mutex, left >= (int64_t)INFINITE ? INFINITE - 1 : (DWORD)left, 0);
    }
}

int64_t oam_now_ms(void) {
    static LARGE_INTEGER frequency; /* fixed at boot; a racing first call stores the same value */
    LARGE_INTEGER now;
    if (frequency.QuadPart == 0) QueryPerformanceFrequency(&frequency);
    QueryPerformanceCounter(&now);
    return (int64_t)(now.QuadPart / frequency.QuadPart) * 1000 +
           (int64_t)(now.QuadPart % frequency.QuadPart) * 1000 / frequency.QuadPart;
}

/*
 * Read from the process environment as UTF-16, not with getenv: the C runtime's narrow copy is in the ANSI
 * code page (a character it cannot hold becomes '?') and misses what SetEnvironmentVariableW set later.
 */
char *oam_getenv_utf8(const char *name) {
    wchar_t *wide_name = to_wide(name), *value = NULL;
    char *utf8 = NULL;
    DWORD size = 0, needed;
    int n;
    if (!wide_name) return NULL;
    /* Retried while another thread makes the value longer between the two calls. */
    for (;;) {
        needed = GetEnvironmentVariableW(wide_name, value, size);
        if (needed == 0 || needed < size) break; /* unset or empty (0), or read (the length without the NUL) */
        free(value);
        size = needed;
        value = (wchar_t *)malloc((size_t)size * sizeof *value);
        if (!value) break;
    }
    if (value && needed > 0 && needed < size) {
        n = WideCharToMultiByte(CP_UTF8, 0, value, -1, NULL, 0, NULL, NULL);
        if (n > 0) utf8 = (char *)malloc((size_t)n);
        if (utf8 && WideCharToMultiByte(CP_UTF8, 0, value, -1, utf8, n, NULL, NULL) != n) {
            free(utf8);
            utf8 = NULL;
        }
    }
    free(value);
    free(wide_name);
    return utf8;
}

#endif /* _WIN32 */
