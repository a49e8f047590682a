/* smashed-stack.c: a thread whose innermost frame has overwritten the top of its own stack.
 *
 * Built -O2 -g (no frame pointers). The main thread goes
 *
 *   main -> run_job -> stage_one -> stage_two -> stage_three -> smash_and_block -> read
 *
 * Before it smashes anything, smash_and_block writes the program's own record of its stack
 * to stdout (make-dumps.sh copies it into dumps.json):
 *
 *   TID n          the smashed thread (the main thread: tid == pid)
 *   FRAMES a...    the return addresses, innermost caller first: smash_and_block's (into
 *                  stage_three), stage_three's (into stage_two), stage_two's (into stage_one),
 *                  stage_one's (into run_job), run_job's (into main), main's (into
 *                  __libc_start_call_main), each taken with __builtin_return_address(0) in
 *                  that function, then the further ones from glibc's backtrace()
 *                  (__libc_start_call_main's into __libc_start_main_impl, and so on to _start)
 *   SLOTS s...     the stack address holding each of those return addresses (found by
 *                  searching the stack upwards from smash_and_block's locals)
 *   SMASH lo hi n  the bytes [lo, hi) that get overwritten (0x41 each), and how many of the
 *                  FRAMES slots lie in it
 *
 * It then fills SMASH_BYTES bytes with 0x41, starting at its own return address slot (so
 * the return address into stage_three, stage_three's saved registers and locals, and its
 * return address into stage_two are all 0x4141414141414141), through a volatile pointer so
 * the stores are kept, and blocks in read() on a pipe nobody writes to, without returning.
 * The return addresses into stage_one, run_job, main, __libc_start_call_main, ... are still
 * on the stack above the smashed bytes: an unwinder that only follows CFI from frame 0 gets
 * 0x4141414141414141 as the second caller and stops (or goes wrong) there; one that scans
 * the stack can recover the outer frames.
 *
 * The other thread is an ordinary one blocked in worker -> worker_wait -> pthread_cond_wait.
 */
#include "common.h"

#include <execinfo.h>
#include <stdint.h>

#define NOINLINE __attribute__((noinline, noclone))
#define NFRAMES 6      /* return addresses taken with __builtin_return_address */
#define MAXFRAMES 16
#define SMASH_BYTES 48 /* from smash_and_block's return address slot upwards */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int flag;
static volatile long sink;

/* The program's own record of the main thread's return addresses, innermost first. */
static void *frames[MAXFRAMES];
static uintptr_t slots[MAXFRAMES];
static int nframes;

NOINLINE static int worker_wait(int x)
{
    pthread_mutex_lock(&mu);
    sem_post(&sw_started);
    while (!flag)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return x + 1;
}

static void *worker(void *arg)
{
    sink = worker_wait((int)(long)arg);
    return NULL;
}

NOINLINE static void announce_ready(void)
{
    sw_ready();
}

NOINLINE static long smash_and_block(long x)
{
    volatile long local = x;
    frames[0] = __builtin_return_address(0);

    /* The outer return addresses, as glibc's unwinder sees them before the smash:
     * bt[0] is in smash_and_block itself, bt[1..NFRAMES] must be frames[0..NFRAMES-1]. */
    void *bt[MAXFRAMES + 1];
    int n = backtrace(bt, MAXFRAMES + 1);
    for (int i = 0; i < NFRAMES; i++)
        if (i + 1 >= n || bt[i + 1] != frames[i]) {
            fprintf(stderr, "backtrace()[%d] = %p, __builtin_return_address gave %p\n", i + 1,
                    i + 1 < n ? bt[i + 1] : NULL, frames[i]);
            _exit(98);
        }
    nframes = n - 1;
    for (int i = NFRAMES; i < nframes; i++)
        frames[i] = bt[i + 1];
    explicit_bzero(bt, sizeof bt); /* so that the search below does not find these copies */

    /* Where each return address sits: search upwards from our locals, each one above the
     * previous one. */
    uintptr_t p = (uintptr_t)&local;
    for (int i = 0; i < nframes; i++) {
        uintptr_t end = p + 64 * 1024;
        while (p < end && *(void *volatile *)p != frames[i])
            p += sizeof(void *);
        if (p >= end) {
            fprintf(stderr, "return address %d (%p) not found on the stack\n", i, frames[i]);
            _exit(97);
        }
        slots[i] = p;
        p += sizeof(void *);
    }
    uintptr_t lo = slots[0], hi = slots[0] + SMASH_BYTES;
    int nsmashed = 0;
    for (int i = 0; i < nframes; i++)
        nsmashed += slots[i] < hi;

    printf("TID %ld\nFRAMES", (long)syscall(SYS_gettid));
    for (int i = 0; i < nframes; i++)
        printf(" %p", frames[i]);
    printf("\nSLOTS");
    for (int i = 0; i < nframes; i++)
        printf(" %#lx", (unsigned long)slots[i]);
    printf("\nSMASH %#lx %#lx %d\n", (unsigned long)lo, (unsigned long)hi, nsmashed);
    fflush(stdout);

    /* Overwrite our return address slot and what lies above it (the caller's frame). */
    volatile unsigned char *s = (volatile unsigned char *)lo;
    for (int i = 0; i < SMASH_BYTES; i++)
        s[i] = 0x41;

    announce_ready();
    char buf[16];
    long r = 0;
    /* (not an endless loop: gcc must not infer noreturn and drop the callers' epilogues) */
    while (!flag)
        r += read(sw_never_fd(), buf, sizeof buf);
    return r + local;
}

NOINLINE static long stage_three(long x)
{
    frames[1] = __builtin_return_address(0);
    long r = smash_and_block(x * 3);
    sink = r;
    return r + x;
}

NOINLINE static long stage_two(long x)
{
    volatile long pad[6];
    pad[0] = x;
    pad[5] = sink;
    frames[2] = __builtin_return_address(0);
    long r = stage_three(x + 2);
    sink = pad[0] + pad[5];
    return r + 2;
}

NOINLINE static long stage_one(long x)
{
    long a = sink, b = sink * 5, c = sink ^ x;
    frames[3] = __builtin_return_address(0);
    long r = stage_two(x + 1);
    sink = a + b + c + r;
    return r + 1;
}

NOINLINE static long run_job(long id)
{
    volatile char name[32];
    name[0] = (char)id;
    frames[4] = __builtin_return_address(0);
    long r = stage_one(id * 10 + name[0]);
    sink = r + name[0];
    return r;
}

int main(void)
{
    sw_init();
    sw_never_fd();
    sw_thread(worker, (void *)3L);
    sw_wait_started(1);
    frames[5] = __builtin_return_address(0);
    long r = run_job(7);
    sink = r;
    return (int)(sink & 1);
}
