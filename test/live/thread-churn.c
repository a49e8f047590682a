// A process whose threads come and go while stackwalk --pid stops it
// (test/scripts/live_test.py): four threads parked in read() on a pipe
// nobody writes, through park_outer -> park_inner, and one thread that
// starts short-lived threads without end (each sleeps 200 us and exits), so
// threads appear and exit while the others are being stopped. The main thread
// prints READY, then answers each line on stdin with the number of threads
// started so far: the test's proof that the process runs on.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { Parked = 4 };

static int pipe_ends[2];
static atomic_long started;
static atomic_int parked;

__attribute__((noinline)) static void park_inner(void) {
  char byte;
  atomic_fetch_add(&parked, 1);
  while (read(pipe_ends[0], &byte, 1) != 0) {
  }
}

__attribute__((noinline)) static void park_outer(void) {
  park_inner();
  __asm__ volatile("" ::: "memory"); // not a tail call: the frame stays
}

static void *parked_thread(void *unused) {
  (void)unused;
  park_outer();
  return NULL;
}

static void *short_lived(void *unused) {
  (void)unused;
  usleep(200);
  return NULL;
}

static void *spawner(void *unused) {
  (void)unused;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 << 10);
  for (;;) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, short_lived, NULL) == 0) atomic_fetch_add(&started, 1);
    usleep(50);
  }
  return NULL;
}

int main(void) {
  if (pipe(pipe_ends) != 0) return 1;
  pthread_t thread;
  for (int i = 0; i < Parked; ++i) pthread_create(&thread, NULL, parked_thread, NULL);
  while (atomic_load(&parked) < Parked) usleep(1000);
  pthread_create(&thread, NULL, spawner, NULL);
  printf("READY %d\n", getpid());
  fflush(stdout);
  char line[256];
  while (fgets(line, sizeof line, stdin)) {
    printf("STARTED %ld\n", atomic_load(&started));
    fflush(stdout);
  }
  return 0;
}
