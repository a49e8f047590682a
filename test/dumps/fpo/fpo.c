/* fpo.c: 32-bit Windows code compiled without frame pointers (clang, -O2
 * -fomit-frame-pointer): each function's frame is described only by the PDB's
 * frame data (FPO), and ebp is an ordinary register. Each function records its
 * own return address (the program's record of its stack) before calling on;
 * level3 then stops at a trap. level2 keeps a decoy on its stack: the address
 * just after a call, which a stack scan would take for a return address. level1
 * calls level2 through an inlined function. */
typedef unsigned long uptr;
#define NOINLINE __attribute__((noinline))
volatile uptr sink;
NOINLINE uptr after_call(void) { return (uptr)__builtin_return_address(0); }

NOINLINE int level3(uptr *record, int a, int b, int c) {
    volatile int local[7];
    record[0] = (uptr)__builtin_return_address(0);
    for (int i = 0; i < 7; ++i) local[i] = a * i + b - c;
    __builtin_trap();
    return local[3];
}

NOINLINE int level2(uptr *record, int x) {
    volatile uptr decoy[2];
    record[1] = (uptr)__builtin_return_address(0);
    decoy[0] = after_call();
    decoy[1] = decoy[0];
    int p = x * 3, q = x ^ 0x55, r = x + 7, s = x * x, t = x - 9;
    int v = level3(record, p + q, r * s, t);
    return v + p + q + r + s + t + (int)decoy[1];
}

/* Inlined into level1: the return address into level1 lies in this call, which
 * the PDB records as an inline site (S_INLINESITE). */
static inline __attribute__((always_inline)) int relay(uptr *record, int x) {
    int r = level2(record, x + 5); /* the inlined call */
    sink = r;
    return r;
}

NOINLINE int level1(uptr *record, int x) {
    record[2] = (uptr)__builtin_return_address(0);
    int r = relay(record, x);
    return r + 1;
}

__attribute__((dllexport)) int fpo_top(uptr *record, int x) {
    record[3] = (uptr)__builtin_return_address(0);
    return level1(record, x) * 2;
}
