/* exit-park.c: a process parked in a destructor, which the dynamic linker runs at exit,
 * while a worker sleeps. Since glibc 2.34 the program's own destructors are called by
 * ld.so's _dl_fini, so the main thread's stack runs through the dynamic linker:
 *
 *   main     main returns -> __libc_start_call_main -> exit -> __run_exit_handlers
 *            -> _dl_fini (ld.so) -> park_at_exit -> park_level1 -> read (blocks)
 *   worker   worker -> pause (blocks)
 */
#include "common.h"

#define NOINLINE __attribute__((noinline))

static volatile long sink;

NOINLINE static long park_level1(int fd)
{
    char c;
    sw_wait_started(1);
    sw_ready();
    long r = read(fd, &c, 1);
    sink = c;
    return r;
}

__attribute__((destructor)) static void park_at_exit(void)
{
    sink = park_level1(sw_never_fd());
}

static void *worker(void *arg)
{
    (void)arg;
    sem_post(&sw_started);
    for (;;)
        pause();
    return NULL;
}

int main(void)
{
    sw_init();
    sw_thread(worker, NULL);
    return 0;
}
