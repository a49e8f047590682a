/* crash-segv.c: SIGSEGV in a secondary thread (a write through a wild pointer), while
 * the other threads are blocked. Captured as the kernel's core (the crashing thread's
 * NT_PRSTATUS comes first). Built -O2 -g; store_field's caller parse_record is a
 * static inline function, so the crashing frame has an inline chain.
 *
 *   main     main -> pthread_join (futex)
 *   blocked  blocked_worker -> read
 *   crasher  crasher_worker -> [inline parse_record] -> store_field: *(int *)0x10 = v  (SIGSEGV)
 */
#include "common.h"

#define NOINLINE __attribute__((noinline))

static volatile long sink;
static int *volatile wild = (int *)0x10;

NOINLINE static void store_field(int *base, int index, int v)
{
    base[index] = v; /* base == (int *)0x10: SEGV_MAPERR at 0x10 + 4*index */
    sink = v;
}

static inline void parse_record(int id)
{
    sw_wait_others_asleep();
    store_field(wild, 0, id * 11);
    sink += id;
}

static void *crasher_worker(void *arg)
{
    parse_record((int)(long)arg);
    return NULL;
}

static void *blocked_worker(void *arg)
{
    char c;
    (void)arg;
    sem_post(&sw_started);
    sink = read(sw_never_fd(), &c, 1);
    return NULL;
}

int main(void)
{
    sw_init();
    sw_never_fd();
    sw_thread(blocked_worker, NULL);
    sw_wait_started(1);
    pthread_t t = sw_thread(crasher_worker, (void *)3L);
    pthread_join(t, NULL);
    return 0;
}
