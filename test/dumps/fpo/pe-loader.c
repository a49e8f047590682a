/* pe-loader.c: runs an exported function of a 32-bit PE DLL that imports
 * nothing (fpo.dll) inside an i386 Linux process, so that its code runs as
 * compiled and the kernel's core holds its real stack. The DLL is mapped at
 * its preferred base (it has no relocations to apply), each section with its
 * own protection; its entry point is called as cdecl fpo_top(record, x), and
 * the DLL's functions write their return addresses into record, whose address
 * is printed first ("RECORD 0x..."): the test reads them from the core that the
 * DLL's trap makes the kernel write. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint32_t record[4];

static uint32_t u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[1]); return 1; }
    uint8_t *file = malloc(st.st_size);
    if (read(fd, file, st.st_size) != st.st_size) return 1;
    const uint8_t *nt = file + u32(file + 0x3c);
    unsigned sections = u16(nt + 6), optional = u16(nt + 20);
    const uint8_t *opt = nt + 24;
    uint32_t base = u32(opt + 28), image = u32(opt + 56), entry = u32(opt + 16);
    uint8_t *at = mmap((void *)base, image, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (at != (void *)base) { perror("mmap at the image base"); return 1; }
    memcpy(at, file, u32(opt + 60)); /* the headers */
    const uint8_t *section = opt + optional;
    for (unsigned i = 0; i < sections; ++i, section += 40) {
        uint32_t va = u32(section + 12), raw = u32(section + 16), offset = u32(section + 20), flags = u32(section + 36);
        memcpy(at + va, file + offset, raw);
        uint32_t size = (u32(section + 8) + 0xfff) & ~0xfffu;
        mprotect(at + va, size, (flags & 0x20000000 ? PROT_EXEC : 0) | PROT_READ | (flags & 0x80000000 ? PROT_WRITE : 0));
    }
    printf("RECORD %p\n", (void *)record);
    fflush(stdout);
    int (*top)(uint32_t *, int) = (int (*)(uint32_t *, int))(at + entry);
    return top(record, argc);
}
