/* sigcontext.c: a thread blocked in a signal handler that prints what the kernel
 * saved of the interrupted code, so that a walk past the signal trampoline can be
 * checked against the program's own record where no debugger can walk it (qemu-user
 * gives arm64 guests a trampoline without CFI: eu-stack and gdb-multiarch go wrong),
 * and where they can (i386, through glibc's __restore_rt and its CFI).
 *
 *   main     pause()
 *   signal   signal_worker -> send_to_self -> pthread_kill(self, SIGUSR1)
 *              => [signal frame] usr1_handler -> handler_block -> read (never returns)
 *
 * Before it blocks, the handler prints one line:
 *   SIGCONTEXT <interrupted pc> <interrupted sp> <return address into signal_worker>
 * (the last recorded by send_to_self itself). Then READY, as every test program.
 */
#include "common.h"
#include <signal.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;
static void *worker_return;

NOINLINE static void handler_block(int sig)
{
    char c;
    sem_post(&sw_started);
    sink = read(sw_never_fd(), &c, 1) + sig;
}

static void usr1_handler(int sig, siginfo_t *info, void *context)
{
    (void)info;
    sw_print_sigcontext(context, worker_return);
    handler_block(sig);
    sink++;
}

NOINLINE static void send_to_self(int sig)
{
    worker_return = __builtin_return_address(0);
    pthread_kill(pthread_self(), sig);
    sink++;
}

static void *signal_worker(void *arg)
{
    (void)arg;
    send_to_self(SIGUSR1);
    sink++;
    return NULL;
}

int main(void)
{
    sw_init();
    sw_never_fd();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = usr1_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        sw_die("sigaction");
    sw_thread(signal_worker, NULL);
    sw_wait_started(1);
    sw_ready();
    for (;;)
        pause();
}
