/* tail-call-plt.c: functions that end by calling another, so their calls are jumps and
 * leave no frame: relay jumps to fill in the program, fill jumps to libc's raise through
 * the PLT (a tail call into another module). gdb shows both from DWARF call-site records.
 * Built -O2 -g; dies of the SIGSEGV it raises (the kernel's core).
 *
 *   main -> relay (tail call) -> fill (tail call) -> raise -> pthread_kill
 */
#include <signal.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void fill(char *buffer, int size)
{
    memset(buffer, 'x', size);
    raise(SIGSEGV);
}

NOINLINE void relay(char *buffer, int size)
{
    fill(buffer, size);
}

int main(void)
{
    char buffer[64];
    relay(buffer, sizeof buffer);
    return buffer[0];
}
