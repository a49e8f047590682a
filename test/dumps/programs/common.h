/* Shared helpers for the stackwalk test programs (test/dumps/programs).
 *
 * Every program starts its threads, lets each one post `sw_started` just before it
 * enters its blocking call, and then calls sw_ready() from the last thread to block.
 * sw_ready() waits until every *other* thread of the process is asleep in the kernel
 * (state 'S' in /proc/self/task/TID/stat), then writes "READY\n" to fd 1. The capture
 * script (make-dumps.sh) waits for that line and for every thread to be asleep before
 * it runs gcore, so each core shows each thread in its blocking call, deterministically.
 * Crash programs call sw_wait_others_asleep() before they crash, for the same reason.
 */
#ifndef SW_COMMON_H
#define SW_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* arm64's PTHREAD_STACK_MIN is 128 KiB. */
#if defined(__aarch64__)
#define SW_STACK_SIZE (192 * 1024)
#else
#define SW_STACK_SIZE (96 * 1024)
#endif
#define SW_FN static __attribute__((unused))

static sem_t sw_started;

SW_FN void sw_die(const char *what)
{
    perror(what);
    _exit(99);
}

SW_FN void sw_init(void)
{
    /* One malloc arena: per-thread arenas reserve 64 MiB each, which gcore writes out. */
    mallopt(M_ARENA_MAX, 1);
    if (sem_init(&sw_started, 0, 0) != 0)
        sw_die("sem_init");
}

/* Start a thread with a small stack, so that cores stay small. */
SW_FN pthread_t sw_thread(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, SW_STACK_SIZE) != 0)
        sw_die("pthread_attr");
    if (pthread_create(&t, &attr, fn, arg) != 0)
        sw_die("pthread_create");
    pthread_attr_destroy(&attr);
    return t;
}

/* Wait until n threads have posted sw_started. */
SW_FN void sw_wait_started(int n)
{
    for (int i = 0; i < n; i++)
        while (sem_wait(&sw_started) != 0)
            ;
}

SW_FN char sw_task_state(const char *tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return (p && p[1] == ' ') ? p[2] : '?';
}

/* Return when every thread but the caller is asleep ('S') in the kernel. */
SW_FN void sw_wait_others_asleep(void)
{
    long self = syscall(SYS_gettid);
    int calm = 0;
    while (calm < 3) {
        int all = 1;
        DIR *d = opendir("/proc/self/task");
        if (!d)
            sw_die("opendir");
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' || atol(e->d_name) == self)
                continue;
            if (sw_task_state(e->d_name) != 'S')
                all = 0;
        }
        closedir(d);
        calm = all ? calm + 1 : 0;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Tell the capture script that the process is (about to be) in its final state. */
SW_FN void sw_ready(void)
{
    sw_wait_others_asleep();
    static const char msg[] = "READY\n";
    if (write(1, msg, sizeof msg - 1) < 0)
        sw_die("write");
}

/* From a signal handler (SA_SIGINFO): what the kernel saved of the interrupted
 * code, and a return address below the signal frame that the program recorded,
 * as one line the tests check a walk past the trampoline by:
 *   SIGCONTEXT <interrupted pc> <interrupted sp> <return address below> */
SW_FN void sw_print_sigcontext(const void *context, const void *below)
{
    const ucontext_t *uc = (const ucontext_t *)context;
#if defined(__aarch64__)
    unsigned long pc = uc->uc_mcontext.pc, sp = uc->uc_mcontext.sp;
#elif defined(__x86_64__)
    unsigned long pc = uc->uc_mcontext.gregs[REG_RIP], sp = uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__i386__)
    unsigned long pc = uc->uc_mcontext.gregs[REG_EIP], sp = uc->uc_mcontext.gregs[REG_ESP];
#elif defined(__arm__)
    unsigned long pc = uc->uc_mcontext.arm_pc, sp = uc->uc_mcontext.arm_sp;
#else
#error "which registers hold pc and sp here?"
#endif
    printf("SIGCONTEXT %#lx %#lx %p\n", pc, sp, below);
    fflush(stdout);
}

/* A pipe nobody ever writes to: read() on it blocks forever. */
SW_FN int sw_never_fd(void)
{
    static int fds[2] = {-1, -1};
    if (fds[0] < 0 && pipe(fds) != 0)
        sw_die("pipe");
    return fds[0];
}

#ifdef __cplusplus
}
#endif
#endif
