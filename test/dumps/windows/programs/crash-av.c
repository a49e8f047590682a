/* crash-av.c: an access violation (a write through a bad pointer) in a secondary thread,
 * caught the way crash reporters do it: SetUnhandledExceptionFilter's filter writes the
 * process's minidump with MiniDumpWriteDump (dbghelp), passing the exception pointers, so the
 * dump has an Exception stream with the faulting context. Then the filter prints its ready
 * line and blocks forever, so a debugger can take its own backtrace of the live process
 * (the crashing thread is then inside the filter, below KiUserExceptionDispatcher).
 * Two other threads are parked. Built -O2. The dump goes to crash-av.dmp in the current
 * directory (or argv[1]). */
#include "common.h"
#include <dbghelp.h>

static const char *g_dump_path = "crash-av.dmp";

static LONG WINAPI crash_filter(EXCEPTION_POINTERS *ep)
{
    HANDLE f = CreateFileA(g_dump_path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    if (f == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "crash-av: cannot create %s: %lu\n", g_dump_path, (unsigned long)GetLastError());
        fflush(stderr);
    } else {
        MINIDUMP_EXCEPTION_INFORMATION mei;
        mei.ThreadId = GetCurrentThreadId();
        mei.ExceptionPointers = ep;
        mei.ClientPointers = FALSE;
        if (!MiniDumpWriteDump(GetCurrentProcess(), GetCurrentProcessId(), f, MiniDumpNormal, &mei, NULL, NULL)) {
            fprintf(stderr, "crash-av: MiniDumpWriteDump failed: %lu\n", (unsigned long)GetLastError());
            fflush(stderr);
        }
        CloseHandle(f);
    }
    printf("READY crashed tid=%lu code=%#lx address=%p\n", (unsigned long)GetCurrentThreadId(),
           (unsigned long)ep->ExceptionRecord->ExceptionCode, ep->ExceptionRecord->ExceptionAddress);
    fflush(stdout);
    WaitForSingleObject(never_event(), INFINITE);
    return EXCEPTION_CONTINUE_SEARCH;
}

struct record { int kind; int *target; };

NOINLINE static void store_value(int *where, int value)
{
    *where = value;                     /* the faulting write: where = 0x10 */
    KEEP(value);
}
NOINLINE static void apply_record(const struct record *r) { store_value(r->target, r->kind); KEEP(r->kind); }
NOINLINE static void process_records(const struct record *r, int n)
{
    for (int i = 0; i < n; i++)
        apply_record(&r[i]);
    KEEP(n);
}
static DWORD WINAPI crash_thread(void *arg)
{
    (void)arg;
    Sleep(200);                         /* let the others park first */
    static int ok_target;
    struct record recs[2] = {{1, &ok_target}, {2, (int *)(ULONG_PTR)0x10}};
    process_records(recs, 2);
    return 0;
}

NOINLINE static DWORD waiter_level2(void)
{
    ready("waiter");
    DWORD r = WaitForSingleObject(never_event(), INFINITE);
    KEEP(r);
    return r;
}
NOINLINE static DWORD waiter_level1(void) { DWORD r = waiter_level2(); KEEP(r); return r; }
static DWORD WINAPI waiter_thread(void *arg) { (void)arg; DWORD r = waiter_level1(); KEEP(r); return r; }

NOINLINE static DWORD main_wait(HANDLE *t, DWORD n)
{
    ready("main");
    DWORD r = WaitForMultipleObjects(n, t, TRUE, INFINITE);
    KEEP(r);
    return r;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_dump_path = argv[1];
    SetUnhandledExceptionFilter(crash_filter);
    HANDLE t[2];
    t[0] = start_thread(waiter_thread, NULL, 0);
    Sleep(100);
    t[1] = start_thread(crash_thread, NULL, 0);
    return (int)main_wait(t, 2);
}
