/* handler-park.c: a process of one thread parked in select inside a signal
 * handler, which raise ran at once:
 *
 *   main -> send_signal -> raise ... [signal frame] -> on_signal -> block -> select
 *
 * Before it blocks, litter() leaves dead words where libc's frames then lie:
 * on i386, position-independent code starts with a call of a get-pc thunk
 * (mov (%esp), reg; ret), whose return address stays behind. Walked without
 * libc's file, the scan above libc's frame must pass over those words, and
 * take block's true return address although its callers by unwind data reach
 * the signal trampoline, which follows no call. As sigcontext.c, the handler
 * first prints its SIGCONTEXT line (sw_print_sigcontext: the return address into main).
 */
#include "common.h"

#include <alloca.h>
#include <signal.h>
#include <sys/select.h>

#define NOINLINE __attribute__((noinline))

volatile int counter;
static void *main_return;

NOINLINE void touch(void) { counter++; }

NOINLINE void litter(int n)
{
    volatile char *pad = alloca(n * 4);
    pad[0] = 0;
    touch();
}

NOINLINE static void block(void)
{
    for (int n = 0; n < 80; n++)
        litter(n);
    sw_ready();
    select(0, NULL, NULL, NULL, NULL);
    counter++;
}

static void on_signal(int sig, siginfo_t *info, void *context)
{
    (void)sig;
    (void)info;
    sw_print_sigcontext(context, main_return);
    block();
}

NOINLINE static void send_signal(void)
{
    main_return = __builtin_extract_return_addr(__builtin_return_address(0));
    raise(SIGUSR1);
    counter++;
}

int main(void)
{
    struct sigaction action = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO};
    sigaction(SIGUSR1, &action, NULL);
    send_signal();
    return counter;
}
