// cxx-throw.cpp: C++ exceptions in flight at the moment of the dump (MinGW-w64 g++, SEH
// exception model: __cxa_throw -> _Unwind_RaiseException -> RaiseException, dispatched by
// ntdll to _GCC_specific_handler, which runs phase 2 through RtlUnwindEx).
//   cleanup   : a destructor run by a cleanup landing pad blocks. With SEH, RtlUnwindEx has
//               already restored the context to the landing pad, so the unwinder's frames are
//               gone: Guard::~Guard <- throw_through_guard (landing pad) <- ...
//   terminate : an exception thrown through a noexcept function: when ntdll's dispatcher
//               calls _GCC_specific_handler for that frame, __gxx_personality_seh0 finds no
//               call site and calls __cxa_call_terminate -> std::terminate -> our handler,
//               which blocks.
//               The stack goes through the personality routine, ntdll's dispatcher
//               (call_handler / call_stack_handlers / dispatch_exception, called by
//               RtlRaiseException in Wine 8), RaiseException and __cxa_throw. GCC's
//               personality calls terminate already in phase 1 (the search), so RtlUnwindEx
//               is not on this stack.
//   unwind    : an exception passes through a frame that has its own language-specific
//               handler (.seh_handler unwind_blocker, @unwind), caught further out. In phase 2
//               RtlUnwindEx calls that handler with EXCEPTION_UNWINDING, and it blocks: the
//               stack is unwind_blocker <- ntdll's RtlUnwindEx <- _GCC_specific_handler <-
//               __gxx_personality_seh0 <- ntdll's dispatcher <- RtlRaiseException <-
//               RaiseException <- _Unwind_RaiseException <- __cxa_throw <- thrower <-
//               frame_with_seh_handler <- unwind_catcher. (This is where an MSVC program's
//               destructors run: __CxxFrameHandler calls them from inside RtlUnwindEx.)
//   catch     : blocked inside a catch block, the exception object still alive.
// Built -O2.
#include "common.h"
#include <exception>
#include <stdexcept>

static void block_forever(const char *what)
{
    ready(what);
    WaitForSingleObject(never_event(), INFINITE);
}

struct Guard {
    int id;
    explicit Guard(int i) : id(i) {}
    NOINLINE ~Guard() { block_forever("cleanup"); KEEP(id); }
};

NOINLINE static void thrower(int n)
{
    KEEP(n);
    throw std::runtime_error("thrown on purpose");
}

// ---- cleanup
NOINLINE static void throw_through_guard(int n)
{
    Guard g(n);
    thrower(n);
    KEEP(g.id);
}
NOINLINE static void cleanup_outer(int n) { throw_through_guard(n + 1); KEEP(n); }
static DWORD WINAPI cleanup_thread(void *) {
    try {
        cleanup_outer(1);
    } catch (...) {
        KEEP(2);
    }
    return 0;
}

// ---- terminate
[[noreturn]] static void terminate_handler()
{
    block_forever("terminate");
    ExitProcess(3);
}
NOINLINE static void nothrow_frame(int n) noexcept { thrower(n); KEEP(n); }
NOINLINE static void terminate_outer(int n) { nothrow_frame(n + 1); KEEP(n); }
static DWORD WINAPI terminate_thread(void *) { terminate_outer(10); return 0; }

// ---- unwind
extern "C" EXCEPTION_DISPOSITION unwind_blocker(EXCEPTION_RECORD *rec, void *frame, CONTEXT *ctx, void *disp)
{
    (void)frame; (void)ctx; (void)disp;
    if (rec->ExceptionFlags & 2 /* EXCEPTION_UNWINDING */)
        block_forever("unwind");
    return ExceptionContinueSearch;
}
NOINLINE static void frame_with_seh_handler(int n)
{
    __asm__ volatile(".seh_handler unwind_blocker, @unwind");
    thrower(n);
    KEEP(n);
}
NOINLINE static void unwind_catcher(int n)
{
    try {
        frame_with_seh_handler(n + 1);
    } catch (...) {
        KEEP(n);
    }
}
static DWORD WINAPI unwind_thread(void *) { unwind_catcher(30); return 0; }

// ---- catch
NOINLINE static void in_catch(const std::exception &e) { block_forever("catch"); KEEP(e.what()[0]); }
NOINLINE static void catcher(int n)
{
    try {
        thrower(n);
    } catch (const std::exception &e) {
        in_catch(e);
    }
    KEEP(n);
}
static DWORD WINAPI catch_thread(void *) { catcher(20); return 0; }

NOINLINE static DWORD main_wait(HANDLE *t, DWORD n)
{
    ready("main");
    DWORD r = WaitForMultipleObjects(n, t, TRUE, INFINITE);
    KEEP(r);
    return r;
}

int main()
{
    std::set_terminate(terminate_handler);
    HANDLE t[4];
    LPTHREAD_START_ROUTINE fns[4] = {cleanup_thread, terminate_thread, unwind_thread, catch_thread};
    for (int i = 0; i < 4; i++) {
        t[i] = start_thread(fns[i], nullptr, 0);
        Sleep(100);
    }
    return (int)main_wait(t, 4);
}
