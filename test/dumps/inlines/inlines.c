// Inlined calls at both ends of a crashing stack, built by breakpad_symbols_test.py
// with -O2 -gdwarf-4 (dump_syms writes INLINE records for DWARF 4, not 5): the
// faulting write is in `store`, inlined into `crash` (the context frame's
// inline chain), and `crash` is called from `step`, inlined through `walk` into
// `run` (an inline chain at a return address, looked up one byte before it).
#include <stdio.h>

int *volatile target; // null: the write in store() faults
volatile int sink;

static inline __attribute__((always_inline)) void store(int value) {
  *target = value;
}

__attribute__((noinline)) void crash(int value) {
  store(value * 3);
  sink = value;
}

static inline __attribute__((always_inline)) void step(int value) {
  crash(value + 1);
  sink += value;
}

static inline __attribute__((always_inline)) void walk(int value) {
  step(value * 2);
  sink -= 1;
}

__attribute__((noinline)) void run(int value) {
  walk(value);
  sink += 7;
}

int main(int argc, char **argv) {
  (void)argv;
  run(argc);
  printf("%d\n", sink);
  return 0;
}
