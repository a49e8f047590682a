/* pdb-threads.c: built with clang (MinGW target) as CodeView, symbols in a PDB written by
 * lld (-Wl,--pdb=), not DWARF. Four threads parked in distinct call chains:
 * main in WaitForMultipleObjects, waiter in WaitForSingleObject 4 levels down, sleeper in
 * Sleep(INFINITE) 3 levels down, reader in ReadFile on an empty pipe 5 levels down. */
#include "common.h"

static HANDLE g_pipe_read, g_pipe_write;

/* ---- waiter: WaitForSingleObject on an event nobody sets */
NOINLINE static DWORD pdb_waiter_level3(HANDLE h)
{
    ready("waiter");
    DWORD r = WaitForSingleObject(h, INFINITE);
    KEEP(r);
    return r;
}
NOINLINE static DWORD pdb_waiter_level2(HANDLE h) { DWORD r = pdb_waiter_level3(h); KEEP(r); return r + 1; }
NOINLINE static DWORD pdb_waiter_level1(HANDLE h) { DWORD r = pdb_waiter_level2(h); KEEP(r); return r + 1; }
NOINLINE static DWORD WINAPI pdb_waiter_thread(void *arg) { (void)arg; DWORD r = pdb_waiter_level1(never_event()); KEEP(r); return r; }

/* ---- sleeper: Sleep(INFINITE) */
NOINLINE static void pdb_sleep_forever(void)
{
    ready("sleeper");
    Sleep(INFINITE);
    KEEP(1);
}
NOINLINE static void pdb_sleep_middle(void) { pdb_sleep_forever(); KEEP(2); }
NOINLINE static DWORD WINAPI pdb_sleeper_thread(void *arg) { (void)arg; pdb_sleep_middle(); KEEP(3); return 0; }

/* ---- reader: ReadFile on an anonymous pipe nobody writes to */
NOINLINE static DWORD pdb_reader_inner(HANDLE pipe, char *buf, DWORD len)
{
    DWORD got = 0;
    ready("reader");
    BOOL ok = ReadFile(pipe, buf, len, &got, NULL);
    KEEP(ok);
    return got;
}
NOINLINE static DWORD pdb_reader_middle(HANDLE pipe, char *buf) { DWORD r = pdb_reader_inner(pipe, buf, 64); KEEP(r); return r; }
NOINLINE static DWORD pdb_reader_outer(HANDLE pipe) { char buf[64]; DWORD r = pdb_reader_middle(pipe, buf); KEEP(buf[0]); return r; }
NOINLINE static DWORD pdb_reader_top(HANDLE pipe) { DWORD r = pdb_reader_outer(pipe); KEEP(r); return r + 1; }
NOINLINE static DWORD WINAPI pdb_reader_thread(void *arg) { (void)arg; DWORD r = pdb_reader_top(g_pipe_read); KEEP(r); return r; }

/* ---- main: WaitForMultipleObjects on all the threads */
NOINLINE static DWORD pdb_main_wait_inner(HANDLE *threads, DWORD n)
{
    ready("main");
    DWORD r = WaitForMultipleObjects(n, threads, TRUE, INFINITE);
    KEEP(r);
    return r;
}
NOINLINE static DWORD pdb_main_wait(HANDLE *threads, DWORD n) { DWORD r = pdb_main_wait_inner(threads, n); KEEP(r); return r; }

int main(void)
{
    HANDLE t[3];
    if (!CreatePipe(&g_pipe_read, &g_pipe_write, NULL, 0))
        return 2;
    /* One after the other, each once the previous one is parked, so the thread ids and the
     * order of the ready lines are the same on every run. */
    LPTHREAD_START_ROUTINE fns[3] = {pdb_waiter_thread, pdb_sleeper_thread, pdb_reader_thread};
    for (int i = 0; i < 3; i++) {
        t[i] = start_thread(fns[i], NULL, 0);
        Sleep(100);
    }
    DWORD r = pdb_main_wait(t, 3);
    KEEP(r);
    return (int)r;
}
