/* Shared helpers for the Windows test programs (MinGW-w64, run under Wine).
 * Every parked thread prints one line "READY <what> tid=<n>" just before it blocks; the
 * capture script waits for all of them, then for the threads to settle. */
#ifndef STACKWALK_WIN_COMMON_H
#define STACKWALK_WIN_COMMON_H
#include <windows.h>
#include <stdio.h>

#define NOINLINE __attribute__((noinline, noclone))
/* The work after each call keeps GCC from turning it into a tail call (a jmp), so every
 * level of a call chain is a real frame at -O2 too. */
static volatile LONG g_sink;
#define KEEP(x) (g_sink += (LONG)(x))

static inline void ready(const char *what)
{
    printf("READY %s tid=%lu\n", what, (unsigned long)GetCurrentThreadId());
    fflush(stdout);
}

/* A manual-reset event nobody ever sets: waiting on it blocks forever. */
static inline HANDLE never_event(void)
{
    static HANDLE h;
    if (!h)
        h = CreateEventA(NULL, TRUE, FALSE, NULL);
    return h;
}

static inline HANDLE start_thread(LPTHREAD_START_ROUTINE fn, void *arg, SIZE_T stack)
{
    HANDLE h = CreateThread(NULL, stack, fn, arg, stack ? STACK_SIZE_PARAM_IS_A_RESERVATION : 0, NULL);
    if (!h) {
        fprintf(stderr, "CreateThread failed: %lu\n", (unsigned long)GetLastError());
        ExitProcess(2);
    }
    return h;
}
#endif
