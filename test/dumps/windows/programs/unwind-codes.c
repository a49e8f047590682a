/* unwind-codes.c: threads parked in functions whose Win64 unwind info uses different codes.
 *   bigstack : a 64 KiB frame and a 640 KiB frame (prolog calls ___chkstk_ms; unwind info
 *              UWOP_ALLOC_LARGE with its 16-bit form and its 32-bit form)
 *   frameptr : a function that keeps %rbp as frame pointer and alloca()s a dynamic amount
 *              (UWOP_SET_FPREG; %rsp is not a fixed distance from the frame's CFA)
 *   xmm      : doubles live across the call, so xmm6/xmm7 are saved (UWOP_SAVE_XMM128)
 *   leaf-asm : spins in a leaf written in assembly with no .pdata entry at all (frame 0's
 *              return address is at [rsp]; unwinders must treat it as a leaf)
 *   leaf-c   : spins in a C leaf: no stack frame, a .pdata entry whose unwind info has no codes
 * Built -O2. */
#include "common.h"
#include <malloc.h>

static volatile LONG g_stop;   /* never set: the spinning leaves wait on it */

/* ---- bigstack */
NOINLINE static DWORD bigstack_wait(volatile char *a, volatile char *b)
{
    ready("bigstack");
    DWORD r = WaitForSingleObject(never_event(), INFINITE);
    KEEP(a[0] + b[0] + r);
    return r;
}
NOINLINE static DWORD huge_frame_640k(volatile char *outer)
{
    volatile char buf[640 * 1024];
    buf[0] = outer[1];
    buf[sizeof buf - 1] = 2;
    DWORD r = bigstack_wait(buf, outer);
    KEEP(buf[sizeof buf - 1] + r);
    return r;
}
NOINLINE static DWORD big_frame_64k(int seed)
{
    volatile char buf[64 * 1024];
    buf[0] = (char)seed;
    buf[1] = (char)(seed + 1);
    buf[sizeof buf - 1] = 3;
    DWORD r = huge_frame_640k(buf);
    KEEP(buf[sizeof buf - 1] + r);
    return r;
}
static DWORD WINAPI bigstack_thread(void *arg) { (void)arg; DWORD r = big_frame_64k(7); KEEP(r); return r; }

/* ---- frameptr */
NOINLINE static DWORD fp_inner(volatile char *p)
{
    ready("frameptr");
    Sleep(INFINITE);
    KEEP(p[0]);
    return 0;
}
static volatile int g_alloca_size = 200;
__attribute__((noinline, noclone, optimize("no-omit-frame-pointer")))
static DWORD fp_frame(int n)
{
    volatile char *p = alloca(g_alloca_size + n);
    p[0] = (char)n;
    DWORD r = fp_inner(p);
    KEEP(p[0] + r);
    return r;
}
NOINLINE static DWORD fp_outer(int n) { DWORD r = fp_frame(n); KEEP(r); return r; }
static DWORD WINAPI frameptr_thread(void *arg) { (void)arg; DWORD r = fp_outer(5); KEEP(r); return r; }

/* ---- xmm */
static volatile double g_d = 1.5;
NOINLINE static DWORD xmm_wait(void)
{
    ready("xmm");
    DWORD r = SleepEx(INFINITE, FALSE);
    KEEP(r);
    return r;
}
NOINLINE static double xmm_frame(double x)
{
    double a = x * g_d, b = x + g_d, c = x - g_d;
    DWORD r = xmm_wait();            /* a, b, c live across the call: in xmm6..xmm8 */
    return a * b + c + r;
}
static DWORD WINAPI xmm_thread(void *arg) { (void)arg; double d = xmm_frame(2.0); KEEP(d); return 0; }

/* ---- leaf-asm: no .seh_proc, so no RUNTIME_FUNCTION for it in .pdata */
void spin_leaf_asm(volatile LONG *flag);
__asm__(".text\n"
        ".globl spin_leaf_asm\n"
        ".def spin_leaf_asm; .scl 2; .type 32; .endef\n"
        "spin_leaf_asm:\n"
        "1:\tpause\n"
        "\tcmpl $0, (%rcx)\n"
        "\tje 1b\n"
        "\tret\n");
NOINLINE static void leaf_asm_caller(void) { ready("leaf-asm"); spin_leaf_asm(&g_stop); KEEP(1); }
NOINLINE static void leaf_asm_outer(void) { leaf_asm_caller(); KEEP(2); }
static DWORD WINAPI leaf_asm_thread(void *arg) { (void)arg; leaf_asm_outer(); KEEP(3); return 0; }

/* ---- leaf-c: a C leaf, no frame, no calls */
NOINLINE static int spin_leaf_c(volatile LONG *flag)
{
    int n = 0;
    while (!*flag) {
        __builtin_ia32_pause();
        n++;
    }
    return n;
}
NOINLINE static void leaf_c_caller(void) { ready("leaf-c"); int n = spin_leaf_c(&g_stop); KEEP(n); }
NOINLINE static void leaf_c_outer(void) { leaf_c_caller(); KEEP(2); }
static DWORD WINAPI leaf_c_thread(void *arg) { (void)arg; leaf_c_outer(); KEEP(3); return 0; }

/* ---- main */
NOINLINE static DWORD main_wait(HANDLE *threads, DWORD n)
{
    ready("main");
    DWORD r = WaitForMultipleObjects(n, threads, TRUE, INFINITE);
    KEEP(r);
    return r;
}

int main(void)
{
    HANDLE t[5];
    t[0] = start_thread(bigstack_thread, NULL, 4 << 20);   /* room for the 704 KiB of frames */
    Sleep(100);
    LPTHREAD_START_ROUTINE fns[4] = {frameptr_thread, xmm_thread, leaf_asm_thread, leaf_c_thread};
    for (int i = 0; i < 4; i++) {
        t[i + 1] = start_thread(fns[i], NULL, 0);
        Sleep(100);
    }
    DWORD r = main_wait(t, 5);
    KEEP(r);
    return (int)r;
}
