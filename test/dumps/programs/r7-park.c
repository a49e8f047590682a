/* r7-park.c: built without unwind tables, a function parked in read while r7
 * (Thumb's frame pointer, which -O2 code uses as any other register) holds the
 * address of a local array {0, the program's load address}: read as a frame
 * record (saved r7, lr) it gives a return address at the ELF header, which is
 * no caller's (zstd's armhf main thread had one).
 *
 *   main -> park (blocks in read; main may tail-call it)
 */
#include "common.h"

#include <stdint.h>

extern const char __ehdr_start[];

__attribute__((noinline)) int park(int fd)
{
    volatile uintptr_t record[4] = {0, (uintptr_t)__ehdr_start, 2, 5};
#if defined(__arm__) && defined(__thumb__)
    register volatile uintptr_t *held asm("r7") = record;
#else
    volatile uintptr_t *held = record;
#endif
    char c;
    sw_ready();
    int n = read(fd, &c, 1);
    __asm__ volatile("" ::"r"(held));
    return n + (int)held[2];
}

int main(void) { return park(sw_never_fd()); }
