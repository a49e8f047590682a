/* recursion-alloca.c: deep recursion through frames with variable-size stack allocations.
 * Built -O2 -fomit-frame-pointer: rec_alloca (alloca) and rec_vla (a VLA) still set up
 * %rbp as a frame pointer because their frame size is only known at run time; rec_plain
 * does not. The three call each other in a cycle:
 *
 *   main      main -> rec_alloca -> rec_vla -> rec_plain -> rec_alloca ... 300 frames
 *             -> bottom -> read (blocks)
 *   worker    worker -> rec_alloca ... 60 frames -> bottom -> nanosleep (blocks)
 *
 * The alloca'd size varies with depth: 16 + (depth % 7) * 40 bytes.
 */
#include "common.h"
#include <alloca.h>

#define NOINLINE __attribute__((noinline))
#define MAIN_DEPTH 300
#define WORKER_DEPTH 60

static volatile long sink;

NOINLINE static long bottom(int is_main)
{
    if (is_main) {
        char c;
        sw_wait_started(1);
        sw_ready();
        return read(sw_never_fd(), &c, 1);
    }
    sem_post(&sw_started);
    for (;;) {
        struct timespec ts = {100000, 0};
        nanosleep(&ts, NULL);
    }
}

NOINLINE static long rec_alloca(int depth, int is_main);

NOINLINE static long rec_plain(int depth, int is_main)
{
    volatile int local = depth;
    long r = rec_alloca(depth - 1, is_main);
    return r + local;
}

NOINLINE static long rec_vla(int depth, int is_main)
{
    char vla[8 + (depth % 5) * 24];
    memset(vla, depth & 0x7f, sizeof vla);
    long r = rec_plain(depth - 1, is_main);
    sink = vla[depth % sizeof vla];
    return r + vla[0];
}

NOINLINE static long rec_alloca(int depth, int is_main)
{
    if (depth <= 0)
        return bottom(is_main);
    size_t n = 16 + (size_t)(depth % 7) * 40;
    char *p = alloca(n);
    memset(p, depth & 0x7f, n);
    long r = rec_vla(depth - 1, is_main);
    sink = p[n - 1];
    return r + p[0];
}

static void *worker(void *arg)
{
    (void)arg;
    sink = rec_alloca(WORKER_DEPTH, 0);
    return NULL;
}

int main(void)
{
    sw_init();
    sw_never_fd();
    sw_thread(worker, NULL);
    sink = rec_alloca(MAIN_DEPTH, 1);
    return 0;
}
