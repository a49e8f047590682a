/* jit-gdb.c: threads running JIT code registered through gdb's JIT interface.
 *
 * Built -O2 -g. At start it reads the JIT code, the ELF executable jit-gdb-code next to its
 * own executable (built by make-dumps.sh from jit-gdb-code.c, linked at 0x7e0000000000),
 * into heap memory, maps one RWX anonymous region at exactly its PT_LOAD addresses
 * (MAP_FIXED_NOREPLACE; page-rounded from the first PT_LOAD's vaddr to the end of the
 * last), copies each segment there, and registers the whole file image (the heap copy) as
 * the symfile of a jit_code_entry through the GDB JIT interface (gdb manual, "JIT
 * Compilation Interface"): link the entry, set relevant_entry and action_flag =
 * JIT_REGISTER_FN, call __jit_debug_register_code(). Nothing else (no __register_frame, no
 * perf map) tells anyone about the code.
 *
 * Two JIT threads each call the ELF's entry point through a function pointer:
 *
 *   jit_thread -> jit_entry -> jit_middle -> jit_dispatch -> host_block -> read
 *
 * host_block (a host function the JIT code calls back through ctx->callback) blocks in
 * read() on a pipe nobody writes to. The main thread blocks in pthread_join.
 *
 * stdout, for make-dumps.sh (copied into dumps.json):
 *   JIT load lo hi entry E symfile A size N descriptor D
 *                        the mapped region, the entry point, the registered image
 *   JITSTACK tid a...    that thread's return addresses, innermost first: host_block's (into
 *                        jit_dispatch, __builtin_return_address(0)), jit_dispatch's (into
 *                        jit_middle), jit_middle's (into jit_entry), jit_entry's (into
 *                        jit_thread) (each recorded by the JIT function itself), then
 *                        jit_thread's (into start_thread) and the further ones from
 *                        glibc's backtrace() taken in jit_thread before the call (checked
 *                        against __builtin_return_address(0))
 *   JITSLOTS tid s...    the stack address holding each of them (searched upwards from
 *                        host_block's locals)
 *   JITREADY tid         that thread is about to block
 *   READY                (sw_ready) every other thread is asleep
 */
#include "common.h"

#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define NOINLINE __attribute__((noinline, noclone))
#define NJIT 2
#define MAXFRAMES 16

/* ---- GDB JIT interface (names and layout as in gdb's manual) ---- */
typedef enum { JIT_NOACTION = 0, JIT_REGISTER_FN, JIT_UNREGISTER_FN } jit_actions_t;

struct jit_code_entry {
    struct jit_code_entry *next_entry;
    struct jit_code_entry *prev_entry;
    const char *symfile_addr;
    uint64_t symfile_size;
};

struct jit_descriptor {
    uint32_t version;
    uint32_t action_flag; /* a jit_actions_t */
    struct jit_code_entry *relevant_entry;
    struct jit_code_entry *first_entry;
};

void __attribute__((noinline)) __jit_debug_register_code(void);
void __attribute__((noinline)) __jit_debug_register_code(void)
{
    __asm__ volatile("" ::: "memory");
}

struct jit_descriptor __jit_debug_descriptor = {1, 0, 0, 0};

/* ---- the JIT code's calling convention (as in jit-gdb-code.c) ---- */
struct jit_ctx {
    long (*callback)(struct jit_ctx *ctx, long x);
    void *ret[4];
    long value;
};
typedef long (*jit_fn)(struct jit_ctx *ctx, long x);

struct jit_thread_rec {
    struct jit_ctx ctx; /* first: host_block gets back to its record from ctx */
    int index;
    void *outer[MAXFRAMES]; /* jit_thread's return address and the further ones */
    int nouter;
    /* host_block's record (here, not on the stack, so that its search finds only the real
     * return address slots) */
    void *frames[4 + MAXFRAMES];
    uintptr_t slots[4 + MAXFRAMES];
};

static jit_fn jit_entry_fn;
static pthread_mutex_t print_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int flag;
static volatile long sink;

static void load_jit(const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        sw_die(path);
    char *image = malloc(st.st_size); /* the symfile: stays in the heap */
    if (!image)
        sw_die("malloc");
    for (off_t got = 0; got < st.st_size;) {
        ssize_t n = read(fd, image + got, st.st_size - got);
        if (n <= 0)
            sw_die("read jit code");
        got += n;
    }
    close(fd);

    Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_type != ET_EXEC)
        sw_die("jit code: not an ELF executable");
    Elf64_Phdr *ph = (Elf64_Phdr *)(image + eh->e_phoff);
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        if (ph[i].p_vaddr < lo)
            lo = ph[i].p_vaddr;
        if (ph[i].p_vaddr + ph[i].p_memsz > hi)
            hi = ph[i].p_vaddr + ph[i].p_memsz;
    }
    long page = sysconf(_SC_PAGESIZE);
    lo &= ~(uintptr_t)(page - 1);
    hi = (hi + page - 1) & ~(uintptr_t)(page - 1);
    void *m = mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m == MAP_FAILED || m != (void *)lo)
        sw_die("mmap jit code");
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD)
            memcpy((void *)ph[i].p_vaddr, image + ph[i].p_offset, ph[i].p_filesz);
    jit_entry_fn = (jit_fn)eh->e_entry;

    /* Register the whole file image with the debugger. */
    struct jit_code_entry *e = calloc(1, sizeof *e);
    if (!e)
        sw_die("calloc");
    e->symfile_addr = image;
    e->symfile_size = st.st_size;
    e->next_entry = __jit_debug_descriptor.first_entry;
    if (e->next_entry)
        e->next_entry->prev_entry = e;
    __jit_debug_descriptor.first_entry = e;
    __jit_debug_descriptor.relevant_entry = e;
    __jit_debug_descriptor.action_flag = JIT_REGISTER_FN;
    __jit_debug_register_code();

    printf("JIT load %#lx %#lx entry %p symfile %p size %ld descriptor %p\n", (unsigned long)lo,
           (unsigned long)hi, (void *)jit_entry_fn, (void *)image, (long)st.st_size,
           (void *)&__jit_debug_descriptor);
    fflush(stdout);
}

/* Called back by jit_dispatch: record this thread's stack, then block. */
static long host_block(struct jit_ctx *ctx, long x)
{
    volatile long local = x;
    struct jit_thread_rec *t = (struct jit_thread_rec *)ctx;
    void **frames = t->frames;
    uintptr_t *slots = t->slots;
    int n = 0;
    ctx->ret[0] = __builtin_return_address(0);
    for (int i = 0; i < 4; i++)
        frames[n++] = ctx->ret[i];
    for (int i = 0; i < t->nouter; i++)
        frames[n++] = t->outer[i];

    uintptr_t p = (uintptr_t)&local;
    for (int i = 0; i < n; i++) {
        uintptr_t end = p + 32 * 1024;
        while (p < end && *(void *volatile *)p != frames[i])
            p += sizeof(void *);
        if (p >= end) {
            fprintf(stderr, "return address %d (%p) not found on the stack\n", i, frames[i]);
            _exit(97);
        }
        slots[i] = p;
        p += sizeof(void *);
    }

    long tid = syscall(SYS_gettid);
    pthread_mutex_lock(&print_mu);
    printf("JITSTACK %ld", tid);
    for (int i = 0; i < n; i++)
        printf(" %p", frames[i]);
    printf("\nJITSLOTS %ld", tid);
    for (int i = 0; i < n; i++)
        printf(" %#lx", (unsigned long)slots[i]);
    printf("\nJITREADY %ld thread %d\n", tid, t->index);
    fflush(stdout);
    pthread_mutex_unlock(&print_mu);

    sem_post(&sw_started);
    char buf[16];
    long r = 0;
    while (!flag)
        r += read(sw_never_fd(), buf, sizeof buf);
    return r + local;
}

static void *jit_thread(void *arg)
{
    struct jit_thread_rec *t = arg;
    void *bt[MAXFRAMES + 1];
    int n = backtrace(bt, MAXFRAMES + 1);
    /* bt[0] is in jit_thread itself; bt[1] must be its own return address */
    if (n < 2 || bt[1] != __builtin_return_address(0)) {
        fprintf(stderr, "backtrace()[1] = %p, __builtin_return_address gave %p\n",
                n > 1 ? bt[1] : NULL, __builtin_return_address(0));
        _exit(98);
    }
    t->nouter = n - 1;
    for (int i = 1; i < n; i++)
        t->outer[i - 1] = bt[i];
    explicit_bzero(bt, sizeof bt); /* so that host_block's search does not find these copies */
    t->ctx.callback = host_block;
    sink = jit_entry_fn(&t->ctx, t->index);
    return NULL;
}

int main(void)
{
    static char path[4096];
    static struct jit_thread_rec recs[NJIT];
    pthread_t th[NJIT];

    sw_init();
    sw_never_fd();
    ssize_t len = readlink("/proc/self/exe", path, sizeof path - 32);
    if (len <= 0)
        sw_die("readlink /proc/self/exe");
    path[len] = 0;
    strcpy(strrchr(path, '/') + 1, "jit-gdb-code");
    load_jit(path);

    for (int i = 0; i < NJIT; i++) {
        recs[i].index = i + 1;
        th[i] = sw_thread(jit_thread, &recs[i]);
    }
    sw_wait_started(NJIT);
    sw_ready();
    for (int i = 0; i < NJIT; i++)
        pthread_join(th[i], NULL);
    return (int)(sink & 1);
}
