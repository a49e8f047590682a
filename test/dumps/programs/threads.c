/* threads.c: five threads, each blocked in a different way at a different call depth.
 * Built twice: threads-O0-fp (-O0 -fno-omit-frame-pointer) and threads-O2-nofp
 * (-O2 -fomit-frame-pointer). At -O2 the static inline helpers of the reader thread
 * (reader_outer -> reader_middle -> reader_inner) are inlined, so the DWARF has an
 * inline chain at the read() call site; at -O0 they are real frames.
 *
 *   main        pthread_join(cond thread)                       (futex wait)
 *   cond        cond_worker -> cond_level1 -> cond_level2 -> pthread_cond_wait
 *   reader      reader_worker -> [inline reader_outer -> reader_middle -> reader_inner] -> read
 *   sleeper     sleeper_worker -> sleep_step(n) recursion x4 -> nanosleep
 *   locker      locker_worker -> take_lock -> pthread_mutex_lock (held by main)
 *   poller      poller_worker -> poll (no timeout) on a pipe nobody writes
 */
#include "common.h"
#include <poll.h>

#define NOINLINE __attribute__((noinline))

static pthread_mutex_t cond_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond_cv = PTHREAD_COND_INITIALIZER;
static volatile int cond_flag;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile long sink;

NOINLINE static int cond_level2(int x)
{
    pthread_mutex_lock(&cond_mu);
    sem_post(&sw_started);
    while (!cond_flag)
        pthread_cond_wait(&cond_cv, &cond_mu);
    pthread_mutex_unlock(&cond_mu);
    return x * 3;
}

NOINLINE static int cond_level1(int x)
{
    int r = cond_level2(x + 1);
    sink = r;
    return r + 1;
}

static void *cond_worker(void *arg)
{
    sink = cond_level1((int)(long)arg);
    return NULL;
}

static inline long reader_inner(int fd, char *buf, int n)
{
    sem_post(&sw_started);
    return read(fd, buf, (size_t)n);
}

static inline long reader_middle(int fd, char *buf, int n)
{
    long r = reader_inner(fd, buf, n - 1);
    sink += r;
    return r;
}

static inline long reader_outer(int fd)
{
    char buf[64];
    long r = reader_middle(fd, buf, (int)sizeof buf);
    sink += buf[0];
    return r;
}

static void *reader_worker(void *arg)
{
    (void)arg;
    sink = reader_outer(sw_never_fd());
    return NULL;
}

NOINLINE static int sleep_step(int n)
{
    if (n == 0) {
        sem_post(&sw_started);
        while (!cond_flag) {
            struct timespec ts = {100000, 0};
            nanosleep(&ts, NULL);
        }
        return 0;
    }
    int r = sleep_step(n - 1);
    sink = r;
    return r + n;
}

static void *sleeper_worker(void *arg)
{
    sink = sleep_step((int)(long)arg);
    return NULL;
}

NOINLINE static int take_lock(pthread_mutex_t *mu)
{
    sem_post(&sw_started);
    int r = pthread_mutex_lock(mu);
    sink = r;
    return r;
}

static void *locker_worker(void *arg)
{
    (void)arg;
    sink = take_lock(&held_mu);
    return NULL;
}

static void *poller_worker(void *arg)
{
    (void)arg;
    struct pollfd p = {sw_never_fd(), POLLIN, 0};
    sem_post(&sw_started);
    sink = poll(&p, 1, -1);
    return NULL;
}

int main(void)
{
    sw_init();
    sw_never_fd();
    pthread_mutex_lock(&held_mu);
    pthread_t cond = sw_thread(cond_worker, (void *)7L);
    sw_thread(reader_worker, NULL);
    sw_thread(sleeper_worker, (void *)4L);
    sw_thread(locker_worker, NULL);
    sw_thread(poller_worker, NULL);
    sw_wait_started(5);
    sw_ready();
    pthread_join(cond, NULL);
    return 0;
}
