/*
 * test_echo_child.c - the child program test_platform.c starts.
 *
 * Prints "arg <n> <value>" for each argument, then "ready", then echoes every stdin line back until end of
 * input and exits with status 3. A line "exit <n>" exits with status n at once; "hang" stops reading stdin
 * (and sleeps until killed); "err <text>" writes <text> (and its newline) to stderr instead. On Windows the arguments are taken from GetCommandLineW() through
 * CommandLineToArgvW() and printed as UTF-8, so the quoting of platform_windows.c is checked against the
 * system's own parser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#include <fcntl.h>
#include <io.h>
#include <windows.h>
#include <shellapi.h>
static void sleep_forever(void) {
    for (;;) Sleep(1000);
}
#else
#include <unistd.h>
static void sleep_forever(void) {
    for (;;) sleep(1);
}
#endif

int main(int argc, char **argv) {
    char line[65536];
    int k;
#if defined(_WIN32)
    int wide_count = 0;
    wchar_t **wide = CommandLineToArgvW(GetCommandLineW(), &wide_count);
    _setmode(_fileno(stdin), _O_BINARY);
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    (void)argc, (void)argv;
    for (k = 1; wide && k < wide_count; k++) {
        char utf8[4096];
        int n = WideCharToMultiByte(CP_UTF8, 0, wide[k], -1, utf8, (int)sizeof utf8, NULL, NULL);
        printf("arg %d %s\n", k, n > 0 ? utf8 : "<unconvertible>");
    }
    LocalFree(wide);
#else
    for (k = 1; k < argc; k++) printf("arg %d %s\n", k, argv[k]);
#endif
    printf("ready\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "exit ", 5) == 0) exit(atoi(line + 5));
        if (strcmp(line, "hang\n") == 0) sleep_forever();
        if (strncmp(line, "err ", 4) == 0) {
            fputs(line + 4, stderr);
            fflush(stderr);
            continue;
        }
        fputs(line, stdout);
        fflush(stdout);
    }
    return 3;
}
