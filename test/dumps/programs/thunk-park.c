/* thunk-park.c: a process of one thread parked in select, called from main
 * right after litter() has left dead words at every depth below main's frame:
 * on i386, position-independent code starts with a call of a get-pc thunk
 * (mov (%esp), reg; ret), whose return address (touch+5) stays behind where
 * libc's frames then lie. Walked without libc's file, the scan above libc's
 * frame must pass over them to main.
 *
 *   main -> select (blocks)
 */
#include "common.h"

#include <alloca.h>
#include <sys/select.h>

#define NOINLINE __attribute__((noinline))

volatile int counter;

NOINLINE void touch(void) { counter++; }

NOINLINE void litter(int n)
{
    volatile char *pad = alloca(n * 4);
    pad[0] = 0;
    touch();
}

int main(void)
{
    sw_ready(); // first: its own calls would overwrite the words (the capture waits until main sleeps)
    for (int n = 0; n < 80; n++)
        litter(n);
    struct timeval forever = {1 << 30, 0}; // select's 64-bit time path, whose frames cover the words
    select(0, NULL, NULL, NULL, &forever);
    return counter;
}
