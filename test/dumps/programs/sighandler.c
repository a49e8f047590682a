/* sighandler.c: threads blocked inside signal handlers, so their stacks run through
 * glibc's __restore_rt signal trampoline (a frame whose CFI uses DW_OP_breg7 expressions).
 *
 *   main     pause()
 *   usr1     usr1_worker -> send_to_self -> pthread_kill(self, SIGUSR1)
 *              => [signal frame] usr1_handler -> handler_block -> read (never returns)
 *   altstack altstack_worker -> raise(SIGUSR2); the SIGUSR2 handler runs on a
 *            sigaltstack (heap memory, not the thread stack), raises SIGWINCH from inside
 *            the handler (SA_NODEFER, also on the alternate stack), so this thread has two
 *            nested signal frames:
 *              altstack_worker -> raise => usr2_handler -> raise => winch_handler -> sigsuspend
 */
#include "common.h"
#include <signal.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

NOINLINE static void handler_block(int sig)
{
    char c;
    sem_post(&sw_started);
    sink = read(sw_never_fd(), &c, 1) + sig;
}

static void usr1_handler(int sig)
{
    handler_block(sig);
    sink++;
}

static void winch_handler(int sig)
{
    sigset_t none;
    sigemptyset(&none);
    sem_post(&sw_started);
    sink = sig;
    for (;;)
        sigsuspend(&none); /* no handled signal ever arrives: blocks forever */
}

static void usr2_handler(int sig)
{
    volatile char on_alt_stack[256];
    on_alt_stack[0] = (char)sig;
    raise(SIGWINCH);
    sink = on_alt_stack[0];
}

NOINLINE static void send_to_self(int sig)
{
    pthread_kill(pthread_self(), sig);
    sink++;
}

static void *usr1_worker(void *arg)
{
    (void)arg;
    send_to_self(SIGUSR1);
    return NULL;
}

static void *altstack_worker(void *arg)
{
    (void)arg;
    stack_t ss;
    ss.ss_sp = malloc(64 * 1024);
    ss.ss_size = 64 * 1024;
    ss.ss_flags = 0;
    if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
        sw_die("sigaltstack");
    raise(SIGUSR2);
    sink++;
    return NULL;
}

static void on(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0)
        sw_die("sigaction");
}

int main(void)
{
    sw_init();
    sw_never_fd();
    on(SIGUSR1, usr1_handler, 0);
    on(SIGUSR2, usr2_handler, SA_ONSTACK);
    on(SIGWINCH, winch_handler, SA_ONSTACK | SA_NODEFER);
    sw_thread(usr1_worker, NULL);
    sw_thread(altstack_worker, NULL);
    sw_wait_started(2);
    sw_ready();
    for (;;)
        pause();
}
