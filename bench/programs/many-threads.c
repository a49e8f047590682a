/* many-threads.c: the benchmark's subject. Built -O2 -g by bench/run.sh and bench/big-core.sh.
 *
 *     many-threads [NTHREADS [HEAP_MIB]]      defaults: 200 threads, no extra heap
 *
 * Starts NTHREADS (200) threads. Each thread recurses through four different functions
 * (descend_a -> descend_b -> descend_c -> descend_d -> descend_a ...) to a depth of 20-30
 * frames, chosen per thread deterministically from its index, then blocks in read() on a
 * pipe that is never written. When all of them are there, the main thread does the same
 * (depth 25) and, once it too is at the bottom, prints "READY <pid>" on stdout. So all 201
 * threads of the process are 20+ frames deep, asleep in read().
 *
 * The descend_* functions are noinline and do work after the recursive call (the checksum
 * is combined with a local array the compiler cannot drop), so -O2 neither turns the
 * recursion into a loop nor makes it a tail call: every level is a real frame on the stack.
 * One small static inline helper (mix) sits inside each level so that a symbolizer with
 * inline support has inline chains to report for the call sites in the recursion.
 *
 * Thread stacks are small (256 KiB) and malloc uses one arena so that the core stays small.
 * With HEAP_MIB > 0 (bench/big-core.sh), main first allocates that many MiB in 32 MiB blocks
 * and writes a non-zero pattern into every page, so the core holds that much real data.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_NTHREADS 200
#define HEAP_BLOCK_MIB 32
#define MIN_DEPTH 20
#define MAX_DEPTH 30

static int nthreads = DEFAULT_NTHREADS;
static int block_pipe[2];
static atomic_int blocked;
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;

/* Never true at run time; keeps the compiler from reasoning the recursion away. */
volatile int never;

static unsigned descend_a(int depth, unsigned seed);
static unsigned descend_b(int depth, unsigned seed);
static unsigned descend_c(int depth, unsigned seed);
static unsigned descend_d(int depth, unsigned seed);

static inline __attribute__((always_inline)) unsigned mix(unsigned x, const volatile unsigned *buf)
{
    return (x * 2654435761u) ^ buf[x & 3];
}

static __attribute__((noinline)) unsigned block_here(unsigned seed)
{
    char c;
    /* Tell main this thread is at the bottom, then sleep forever in read(). The last one
     * to arrive is the main thread itself, which announces readiness. */
    pthread_mutex_lock(&ready_lock);
    if (atomic_fetch_add(&blocked, 1) + 1 == nthreads + 1) {
        printf("READY %d\n", (int)getpid());
        fflush(stdout);
    }
    pthread_cond_signal(&ready_cond);
    pthread_mutex_unlock(&ready_lock);
    ssize_t n = read(block_pipe[0], &c, 1);
    return seed + (unsigned)n;
}

/* Each level picks the next function from a hash of (seed, depth), so threads take different
 * paths; each descend_* passes on a different new seed.
 * Always inlined into the descend_* functions: their recursive call sites are inside it. */
static inline __attribute__((always_inline)) unsigned next_level(int depth, unsigned seed)
{
    if (depth <= 1)
        return block_here(seed);
    switch (((seed * 2654435761u) >> 28 ^ (unsigned)depth) & 3) {
    case 0: return descend_a(depth - 1, seed);
    case 1: return descend_b(depth - 1, seed);
    case 2: return descend_c(depth - 1, seed);
    default: return descend_d(depth - 1, seed);
    }
}

static __attribute__((noinline)) unsigned descend_a(int depth, unsigned seed)
{
    volatile unsigned buf[4] = {seed, seed + 1, seed + 2, (unsigned)depth};
    unsigned r = next_level(depth, seed * 9u + 5u);
    return mix(r, buf) + buf[0];
}

static __attribute__((noinline)) unsigned descend_b(int depth, unsigned seed)
{
    volatile unsigned buf[4] = {(unsigned)depth, seed, seed ^ 0x55u, seed >> 1};
    unsigned r = next_level(depth, seed * 5u + 1u);
    return mix(r, buf) ^ buf[1];
}

static __attribute__((noinline)) unsigned descend_c(int depth, unsigned seed)
{
    volatile unsigned buf[4] = {seed * 3u, (unsigned)depth, seed, 7u};
    unsigned r = next_level(depth, seed * 3u + 2u);
    if (never)
        r += descend_a(depth, seed);
    return mix(r, buf) - buf[2];
}

static __attribute__((noinline)) unsigned descend_d(int depth, unsigned seed)
{
    volatile unsigned buf[8] = {seed, 1, 2, 3, (unsigned)depth, 5, 6, seed + 7};
    unsigned r = next_level(depth, seed * 7u + 3u);
    return mix(r, buf + 4) + buf[7];
}

static void *worker(void *arg)
{
    unsigned index = (unsigned)(unsigned long)arg;
    /* Deterministic depth in [MIN_DEPTH, MAX_DEPTH]: a fixed permutation of the index. */
    int depth = MIN_DEPTH + (int)((index * 7u + 3u) % (MAX_DEPTH - MIN_DEPTH + 1));
    unsigned r = descend_a(depth, index);
    return (void *)(unsigned long)r;
}

/* Allocates heap_mib MiB in HEAP_BLOCK_MIB blocks and dirties every page with a pattern. */
static int fill_heap(long heap_mib)
{
    unsigned long sum = 0;
    for (long done = 0; done < heap_mib; done += HEAP_BLOCK_MIB) {
        long mib = heap_mib - done < HEAP_BLOCK_MIB ? heap_mib - done : HEAP_BLOCK_MIB;
        size_t size = (size_t)mib << 20;
        unsigned char *block = malloc(size);
        if (block == NULL) {
            fprintf(stderr, "malloc %ld MiB failed after %ld MiB\n", mib, done);
            return -1;
        }
        for (size_t off = 0; off < size; off += 4096) {
            memset(block + off, (int)((off >> 12) & 0x7f) | 1, 64);
            sum += block[off];
        }
    }
    return (int)(sum & 1);
}

int main(int argc, char **argv)
{
    pthread_t *threads;
    pthread_attr_t attr;
    long heap_mib = 0;

    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        heap_mib = atol(argv[2]);
    if (nthreads < 1 || heap_mib < 0) {
        fprintf(stderr, "usage: many-threads [NTHREADS [HEAP_MIB]]\n");
        return 2;
    }
    mallopt(M_ARENA_MAX, 1);
    if (heap_mib > 0 && fill_heap(heap_mib) < 0)
        return 1;
    threads = calloc((size_t)nthreads, sizeof *threads);
    if (threads == NULL) {
        perror("calloc");
        return 1;
    }
    if (pipe(block_pipe) != 0) {
        perror("pipe");
        return 1;
    }
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (int i = 0; i < nthreads; i++) {
        int err = pthread_create(&threads[i], &attr, worker, (void *)(unsigned long)i);
        if (err != 0) {
            fprintf(stderr, "pthread_create %d: %s\n", i, strerror(err));
            return 1;
        }
    }
    pthread_attr_destroy(&attr);

    pthread_mutex_lock(&ready_lock);
    while (atomic_load(&blocked) < nthreads)
        pthread_cond_wait(&ready_cond, &ready_lock);
    pthread_mutex_unlock(&ready_lock);

    /* Main goes down too, and the last arrival at the bottom prints READY. */
    unsigned r = descend_a(25, (unsigned)nthreads);

    for (int i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    return (int)(r & 1);
}
