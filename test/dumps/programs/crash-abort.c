/* crash-abort.c: a failed assert() -> __assert_fail -> abort() -> raise(SIGABRT) in the
 * main thread, while two other threads are blocked. Built -O0 -g -fno-omit-frame-pointer.
 * Kernel core.
 *
 *   main     main -> check_table -> check_entry -> __assert_fail -> abort -> raise
 *            -> __pthread_kill_implementation (SIGABRT)
 *   cond     cond_worker -> pthread_cond_wait
 *   reader   reader_worker -> read
 */
#undef NDEBUG
#include "common.h"
#include <assert.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int flag;
static volatile long sink;

static void *cond_worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    sem_post(&sw_started);
    while (!flag)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void *reader_worker(void *arg)
{
    char c;
    (void)arg;
    sem_post(&sw_started);
    sink = read(sw_never_fd(), &c, 1);
    return NULL;
}

static void check_entry(const int *table, int i)
{
    assert(table[i] == i * i);
    sink += table[i];
}

static void check_table(const int *table, int n)
{
    for (int i = 0; i < n; i++)
        check_entry(table, i);
}

int main(void)
{
    static const int table[] = {0, 1, 4, 9, 15, 25};
    sw_init();
    sw_never_fd();
    sw_thread(cond_worker, NULL);
    sw_thread(reader_worker, NULL);
    sw_wait_started(2);
    sw_wait_others_asleep();
    check_table(table, 6);
    return 0;
}
