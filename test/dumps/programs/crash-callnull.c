/* crash-callnull.c: SIGSEGV from a call through a null function pointer, so the
 * crashing frame has IP 0 (no module, no unwind info) and the caller's return address
 * sits at [rsp]. Built -O0 -g -fno-omit-frame-pointer. Kernel core.
 *
 *   main     main -> dispatch -> (*handler)(...) with handler == NULL  (SIGSEGV at 0)
 *   blocked  blocked_worker -> nanosleep
 */
#include "common.h"

typedef int (*handler_fn)(int);

struct command {
    const char *name;
    handler_fn handler;
};

static volatile long sink;

static int run_known(int x) { return x + 1; }

static struct command commands[] = {
    {"known", run_known},
    {"missing", NULL},
};

static int dispatch(const char *name, int arg)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return commands[i].handler(arg);
    return -1;
}

static void *blocked_worker(void *arg)
{
    (void)arg;
    sem_post(&sw_started);
    for (;;) {
        struct timespec ts = {100000, 0};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(void)
{
    sw_init();
    sw_thread(blocked_worker, NULL);
    sw_wait_started(1);
    sw_wait_others_asleep();
    sink = dispatch("known", 1);
    sink = dispatch("missing", 2);
    return 0;
}
