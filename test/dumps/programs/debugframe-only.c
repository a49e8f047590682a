/* debugframe-only.c: the program's own functions have CFI only in .debug_frame.
 *
 * Built -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables, so
 * gcc emits no .eh_frame FDE for any function of this file (only glibc's crt1.o / crti.o /
 * crtbegin.o may still contribute a few, for _start and friends); the CFI goes to
 * .debug_frame instead. The debug info (with .debug_frame) is then moved to
 * debugframe-only.debug (objcopy --only-keep-debug), the executable is stripped of it
 * (strip --strip-debug --strip-unneeded) and gets a .gnu_debuglink. An unwinder must
 * find the separate debug file (next to the executable by .gnu_debuglink, or by build-id
 * under debug/.build-id) to step out of any of the program's frames without guessing.
 *
 * Frames are non-trivial without a frame pointer: local arrays (sub $N,%rsp) and
 * callee-saved registers live across the calls, and every call is followed by work so
 * none of them is a tail call.
 *
 *   main     main -> main_collect -> main_join -> pthread_join (futex)
 *   waiter   waiter_worker -> waiter_level1 -> waiter_level2 -> waiter_level3
 *            -> pthread_cond_wait
 *   reader   reader_worker -> reader_level1 -> reader_level2 -> read
 */
#include "common.h"

#define NOINLINE __attribute__((noinline, noclone))

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int flag;
static volatile long sink;

NOINLINE static int waiter_level3(int x)
{
    pthread_mutex_lock(&mu);
    sem_post(&sw_started);
    while (!flag)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return x + 3;
}

NOINLINE static int waiter_level2(int x)
{
    volatile char pad[200];
    pad[0] = (char)x;
    pad[199] = (char)(x >> 8);
    int r = waiter_level3(x * 2 + pad[0]);
    sink = r + pad[199];
    return r + 2;
}

NOINLINE static int waiter_level1(int x)
{
    long a = sink, b = sink * 3, c = sink ^ x;
    int r = waiter_level2(x + 1);
    sink = a + b + c + r;
    return r + 1;
}

static void *waiter_worker(void *arg)
{
    sink = waiter_level1((int)(long)arg);
    return NULL;
}

NOINLINE static long reader_level2(int fd)
{
    char buf[64];
    sem_post(&sw_started);
    long r = read(fd, buf, sizeof buf);
    sink = buf[0];
    return r;
}

NOINLINE static long reader_level1(int fd)
{
    volatile long pad[40];
    pad[0] = fd;
    pad[39] = sink;
    long r = reader_level2(fd);
    sink = pad[0] + pad[39];
    return r + 1;
}

static void *reader_worker(void *arg)
{
    (void)arg;
    sink = reader_level1(sw_never_fd());
    return NULL;
}

NOINLINE static void main_join(pthread_t t)
{
    sw_ready();
    pthread_join(t, NULL);
    sink++;
}

NOINLINE static void main_collect(pthread_t t)
{
    volatile char pad[96];
    pad[0] = 1;
    sw_wait_started(2);
    main_join(t);
    sink += pad[0];
}

int main(void)
{
    sw_init();
    sw_never_fd();
    pthread_t t = sw_thread(waiter_worker, (void *)7L);
    sw_thread(reader_worker, NULL);
    main_collect(t);
    return 0;
}
