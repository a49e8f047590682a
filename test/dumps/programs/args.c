/* args.c: function arguments for a debugger's `bt` (gdb's "frame args"), one source built
 * twice: args-O0 (-O0 -g: every parameter in its stack slot) and args-O2 (-O2 -g: registers,
 * spills, stack-passed arguments, DW_OP_entry_value and DW_TAG_call_site values).
 *
 * Six threads, each parked in a blocking call at the bottom of a chain of the program's own
 * functions, so that the interesting functions are callers (frame 1, 2, ...). Every value
 * passed is a recognizable constant:
 *
 *   main     main -> join_workers(ids=&ids[0] (main's local array), count=5) -> pthread_join
 *   scalars  scalars_worker -> scalar_args(i=-7, ul=0x5eed (24301), c='q', b=true,
 *                                          e=COLOR_GREEN)
 *                           -> pointer_args(local_p=&local (scalars_worker's), global_p=&args_global)
 *                           -> wait_read(fd, buf (pointer_args' local), len=16) -> read
 *   structs  structs_worker -> struct_args(p={x = 3, y = 4}, b={id = 48879, count = 1000000,
 *                                          kind = -2, flags = 165, weight = 0.5, tail = 77}
 *                                          (40 bytes: passed in memory), f=3.5, d=1.1)
 *                           -> wait_cond(id=2) -> pthread_cond_wait
 *   stack    stack_worker -> stack_args(a1=11, a2=22, a3=33, a4=44, a5=55, a6=66 in registers,
 *                                       a7=77, a8=88, a9=99 on the stack) -> wait_pause(why=3)
 *                         -> pause
 *   inline   inline_worker -> inline_host(fd, k=5)
 *                          -> [inline_reader(fd, limit=4096, tag='z'), always_inline, so an
 *                              inline frame at -O0 too] -> read
 *   entry    entry_worker -> entry_outer(seed=42) -> entry_changed(m=7, then 22)
 *                         -> entry_lost(v=31, then scramble(31) = 155) -> entry_leaf(n=199)
 *                         -> park(tag=9) -> read
 *
 * At -O2 the entry thread shows gdb's three entry-value forms (`set print entry-values
 * default`): entry_leaf's n is dead after its first statement, so its location after that is
 * DW_OP_entry_value(DW_OP_reg5 (rdi)) and the value comes from entry_lost's
 * DW_TAG_call_site (DW_AT_call_value 199 for rdi): `n=n@entry=199`. entry_changed changes m
 * before its call and keeps it in rbx: `m=22, m@entry=7`. entry_lost overwrites v with
 * scramble(v), whose result dies before the call: v has no location there, only its entry
 * value (31, from entry_changed's call site): `v=<optimized out>, v@entry=31`. entry_outer's
 * call site passes seed - 35 as DW_OP_breg3 (rbx) - 35, so m@entry needs entry_outer's rbx,
 * restored from entry_changed's CFI.
 *
 * The functions have external linkage and are noinline + noclone, so that gcc's
 * interprocedural constant propagation and SRA keep their parameters (no .constprop / .isra
 * clones, no constants substituted into the callee), and each does something after its call
 * (no tail calls: every frame stays on the stack). As in the other programs, each thread
 * posts sw_started just before it blocks and main signals READY once all are asleep.
 */
#include "common.h"

#include <stdbool.h>

#define NOINLINE __attribute__((noinline, noclone))

enum color { COLOR_RED = 1, COLOR_GREEN = 7, COLOR_BLUE = 9 };

struct point {
    int x, y;
};

struct big { /* 40 bytes: the x86-64 ABI passes it in memory */
    long id;
    long count;
    int kind;
    int flags;
    double weight;
    long tail;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int flag; /* never set: every loop below blocks for ever, but gcc cannot tell */
volatile long sink;
volatile int salt; /* never written: 0, but gcc cannot tell */
long args_global = 0x600d;

/* Declared here, defined below; all external, so gcc may not assume it knows every call. */
NOINLINE long wait_read(int fd, char *buf, unsigned long len);
NOINLINE long pointer_args(int *local_p, long *global_p);
NOINLINE long scalar_args(int i, unsigned long ul, char c, bool b, enum color e);
NOINLINE int wait_cond(int id);
NOINLINE double struct_args(struct point p, struct big b, float f, double d);
NOINLINE long wait_pause(int why);
NOINLINE long stack_args(int a1, int a2, int a3, int a4, int a5, int a6, int a7, long a8, long a9);
NOINLINE long inline_host(int fd, int k);
NOINLINE long park(int tag);
NOINLINE int entry_leaf(int n);
NOINLINE int scramble(int v);
NOINLINE int entry_lost(int v);
NOINLINE int entry_changed(int m);
NOINLINE int entry_outer(int seed);
NOINLINE int join_workers(pthread_t *ids, unsigned count);

/* ---------------------------------------------------------------- scalars */
long wait_read(int fd, char *buf, unsigned long len)
{
    long r = 0;
    sem_post(&sw_started);
    while (!flag)
        r += read(fd, buf, len);
    sink = r;
    return r + buf[0];
}

long pointer_args(int *local_p, long *global_p)
{
    char buf[16];
    long r = wait_read(sw_never_fd(), buf, sizeof buf);
    sink = *local_p + *global_p;
    return r;
}

long scalar_args(int i, unsigned long ul, char c, bool b, enum color e)
{
    int local = 0x10ca1;
    long r = pointer_args(&local, &args_global);
    sink = i + (long)ul + c + b + e + local;
    return r;
}

static void *scalars_worker(void *arg)
{
    (void)arg;
    sink = scalar_args(-7, 0x5eed, 'q', true, COLOR_GREEN);
    return NULL;
}

/* ---------------------------------------------------------------- structs, float, double */
int wait_cond(int id)
{
    pthread_mutex_lock(&mu);
    sem_post(&sw_started);
    while (!flag)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    sink = id;
    return id + 1;
}

double struct_args(struct point p, struct big b, float f, double d)
{
    int r = wait_cond(2);
    sink = p.x * p.y + b.id + b.count + b.kind + b.flags + b.tail;
    return r + f * d + b.weight;
}

static void *structs_worker(void *arg)
{
    (void)arg;
    struct point p = {3, 4};
    struct big b = {0xbeef, 1000000, -2, 0xa5, 0.5, 77};
    sink = (long)struct_args(p, b, 3.5f, 1.1);
    return NULL;
}

/* ---------------------------------------------------------------- more arguments than registers */
long wait_pause(int why)
{
    sem_post(&sw_started);
    while (!flag)
        pause();
    sink = why;
    return why;
}

long stack_args(int a1, int a2, int a3, int a4, int a5, int a6, int a7, long a8, long a9)
{
    long r = wait_pause(3);
    sink = a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
    return r;
}

static void *stack_worker(void *arg)
{
    (void)arg;
    sink = stack_args(11, 22, 33, 44, 55, 66, 77, 88, 99);
    return NULL;
}

/* ---------------------------------------------------------------- an inlined callee */
static inline __attribute__((always_inline)) long inline_reader(int fd, long limit, char tag)
{
    char buf[32];
    long r = 0;
    sem_post(&sw_started);
    while (!flag && r < limit)
        r += read(fd, buf, sizeof buf);
    sink = tag + buf[0];
    return r;
}

long inline_host(int fd, int k)
{
    long r = inline_reader(fd, 4096, 'z');
    sink = r * k;
    return r + k;
}

static void *inline_worker(void *arg)
{
    (void)arg;
    sink = inline_host(sw_never_fd(), 5);
    return NULL;
}

/* ---------------------------------------------------------------- entry values */
long park(int tag)
{
    char buf[8];
    long r = 0;
    sem_post(&sw_started);
    while (!flag)
        r += read(sw_never_fd(), buf, sizeof buf);
    sink = tag;
    return r;
}

int entry_leaf(int n)
{
    sink = n * 3; /* n's last use: afterwards only its entry value tells it */
    long r = park(9);
    sink = r;
    return 0;
}

int scramble(int v)
{
    return v * 5 + salt;
}

int entry_lost(int v)
{
    v = scramble(v); /* v's entry value is gone from the frame, its new value dies below */
    sink = v;
    int r = entry_leaf(199);
    sink = r;
    return r;
}

int entry_changed(int m)
{
    m = m * 3 + 1;
    int r = entry_lost(31);
    sink = m;
    return r;
}

int entry_outer(int seed)
{
    int r = entry_changed(seed - 35);
    sink = seed;
    return r + 1;
}

static void *entry_worker(void *arg)
{
    (void)arg;
    sink = entry_outer(42);
    return NULL;
}

/* ---------------------------------------------------------------- main */
int join_workers(pthread_t *ids, unsigned count)
{
    sw_ready();
    int r = pthread_join(ids[0], NULL);
    sink = r + count;
    return r;
}

int main(void)
{
    sw_init();
    sw_never_fd();
    pthread_t ids[5];
    ids[0] = sw_thread(scalars_worker, NULL);
    ids[1] = sw_thread(structs_worker, NULL);
    ids[2] = sw_thread(stack_worker, NULL);
    ids[3] = sw_thread(inline_worker, NULL);
    ids[4] = sw_thread(entry_worker, NULL);
    sw_wait_started(5);
    int r = join_workers(ids, 5);
    sink = r;
    return 0;
}
