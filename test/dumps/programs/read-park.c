/* read-park.c: a process of one thread, parked in read. With no other thread
 * glibc's read makes no cancellation call around its system call, so on arm64
 * its code has pushed its frame record (stp x29, x30, [sp, #-48]!; mov x29, sp)
 * and still holds the return address in lr as well: walked without libc's file,
 * the frame-pointer unwinder must take the record, not lr with the callee's
 * own frame pointer (which gave the caller twice, then stale frames).
 *
 *   main -> wait_for_byte -> read (blocks)
 */
#include "common.h"

static volatile long sink;

__attribute__((noinline)) static long wait_for_byte(int fd)
{
    char c = 0;
    sw_ready();
    long r = read(fd, &c, 1);
    sink = c;
    return r;
}

int main(void)
{
    return (int)wait_for_byte(sw_never_fd()) + 1;
}
