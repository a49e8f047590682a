/* stripped.c: built twice, both with no symbol table in the executable:
 *   stripped            -O2, no -g, then `strip --strip-all`: only libc frames have names.
 *   stripped-debuglink  -O2 -g, debug info moved to stripped-debuglink.debug
 *                       (objcopy --only-keep-debug), executable stripped with
 *                       strip --strip-all, then objcopy --add-gnu-debuglink. The .debug file
 *                       is found next to the executable by its .gnu_debuglink name (CRC
 *                       checked) or by build-id (debug/.build-id/xx/yyyy.debug).
 *
 *   main     main -> wait_for_workers -> pthread_join (futex)
 *   waiter   waiter_worker -> waiter_level1 -> waiter_level2 -> pthread_cond_wait
 *   reader   reader_worker -> reader_level1 -> read
 */
#include "common.h"

#define NOINLINE __attribute__((noinline))

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int flag;
static volatile long sink;

NOINLINE static int waiter_level2(int x)
{
    pthread_mutex_lock(&mu);
    sem_post(&sw_started);
    while (!flag)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return x + 2;
}

NOINLINE static int waiter_level1(int x)
{
    int r = waiter_level2(x * 2);
    sink = r;
    return r + 1;
}

static void *waiter_worker(void *arg)
{
    sink = waiter_level1((int)(long)arg);
    return NULL;
}

NOINLINE static long reader_level1(int fd)
{
    char buf[32];
    sem_post(&sw_started);
    long r = read(fd, buf, sizeof buf);
    sink = buf[0];
    return r;
}

static void *reader_worker(void *arg)
{
    (void)arg;
    sink = reader_level1(sw_never_fd());
    return NULL;
}

NOINLINE static void wait_for_workers(pthread_t t)
{
    sw_wait_started(2);
    sw_ready();
    pthread_join(t, NULL);
    sink++;
}

int main(void)
{
    sw_init();
    sw_never_fd();
    pthread_t t = sw_thread(waiter_worker, (void *)5L);
    sw_thread(reader_worker, NULL);
    wait_for_workers(t);
    return 0;
}
