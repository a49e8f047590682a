/* threads.c: six threads, each parked in its own call chain in a different blocking call.
 * Built twice: threads-O0 (-O0) and threads-O2 (-O2; the reader's static inline helpers are
 * inlined there, so its ReadFile call site sits in a DWARF inline chain). */
#include "common.h"

static HANDLE g_pipe_read, g_pipe_write;
static CRITICAL_SECTION g_lock;          /* held by main forever */

/* ---- waiter: WaitForSingleObject on an event nobody sets */
NOINLINE static DWORD waiter_level3(HANDLE h)
{
    ready("waiter");
    DWORD r = WaitForSingleObject(h, INFINITE);
    KEEP(r);
    return r;
}
NOINLINE static DWORD waiter_level2(HANDLE h) { DWORD r = waiter_level3(h); KEEP(r); return r + 1; }
NOINLINE static DWORD waiter_level1(HANDLE h) { DWORD r = waiter_level2(h); KEEP(r); return r + 1; }
static DWORD WINAPI waiter_thread(void *arg) { (void)arg; DWORD r = waiter_level1(never_event()); KEEP(r); return r; }

/* ---- sleeper: Sleep(INFINITE) at the bottom of a 5-deep recursion */
NOINLINE static int sleep_recursive(int depth)
{
    if (depth == 0) {
        ready("sleeper");
        Sleep(INFINITE);
        return 0;
    }
    int r = sleep_recursive(depth - 1);
    KEEP(r);
    return r + depth;
}
static DWORD WINAPI sleeper_thread(void *arg) { (void)arg; int r = sleep_recursive(4); KEEP(r); return r; }

/* ---- reader: ReadFile on an anonymous pipe nobody writes to */
NOINLINE static DWORD reader_inner(HANDLE pipe, char *buf, DWORD len)
{
    DWORD got = 0;
    ready("reader");
    BOOL ok = ReadFile(pipe, buf, len, &got, NULL);
    KEEP(ok);
    return got;
}
static inline DWORD reader_middle(HANDLE pipe, char *buf) { DWORD r = reader_inner(pipe, buf, 64); KEEP(r); return r; }
static inline DWORD reader_outer(HANDLE pipe) { char buf[64]; DWORD r = reader_middle(pipe, buf); KEEP(buf[0]); return r; }
static DWORD WINAPI reader_thread(void *arg) { (void)arg; DWORD r = reader_outer(g_pipe_read); KEEP(r); return r; }

/* ---- alertable: SleepEx(INFINITE, TRUE), no APC ever queued */
NOINLINE static DWORD alert_level2(void)
{
    ready("alertable");
    DWORD r = SleepEx(INFINITE, TRUE);
    KEEP(r);
    return r;
}
NOINLINE static DWORD alert_level1(void) { DWORD r = alert_level2(); KEEP(r); return r + 1; }
static DWORD WINAPI alertable_thread(void *arg) { (void)arg; DWORD r = alert_level1(); KEEP(r); return r; }

/* ---- locker: EnterCriticalSection on a lock main holds */
NOINLINE static void lock_level2(CRITICAL_SECTION *cs)
{
    ready("locker");
    EnterCriticalSection(cs);
    KEEP(1);
    LeaveCriticalSection(cs);
}
NOINLINE static void lock_level1(CRITICAL_SECTION *cs) { lock_level2(cs); KEEP(2); }
static DWORD WINAPI locker_thread(void *arg) { (void)arg; lock_level1(&g_lock); KEEP(3); return 0; }

/* ---- main: WaitForMultipleObjects on all the threads */
NOINLINE static DWORD main_wait_inner(HANDLE *threads, DWORD n)
{
    ready("main");
    DWORD r = WaitForMultipleObjects(n, threads, TRUE, INFINITE);
    KEEP(r);
    return r;
}
NOINLINE static DWORD main_wait(HANDLE *threads, DWORD n) { DWORD r = main_wait_inner(threads, n); KEEP(r); return r; }

int main(void)
{
    HANDLE t[5];
    InitializeCriticalSection(&g_lock);
    EnterCriticalSection(&g_lock);
    if (!CreatePipe(&g_pipe_read, &g_pipe_write, NULL, 0))
        return 2;
    /* Started one after the other, each once the previous one is parked, so the thread ids
     * and the order of the ready lines are the same on every run. */
    LPTHREAD_START_ROUTINE fns[5] = {waiter_thread, sleeper_thread, reader_thread, alertable_thread, locker_thread};
    for (int i = 0; i < 5; i++) {
        t[i] = start_thread(fns[i], NULL, 0);
        Sleep(100);
    }
    DWORD r = main_wait(t, 5);
    KEEP(r);
    return (int)r;
}
