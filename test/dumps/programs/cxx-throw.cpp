// cxx-throw.cpp: C++ exceptions in flight at the moment of the dump.
//
//   main       main -> pthread_join (futex)
//   cleanup    cleanup_worker -> catcher -> throw_with_guard: a std::runtime_error is being
//              unwound; the landing pad of throw_with_guard (at -O2 in the split-off
//              throw_with_guard.cold part) runs Guard::~Guard, which blocks in read().
//              _Unwind_Resume has not been called yet.
//   terminate  terminate_worker -> must_not_throw (noexcept) -> thrower -> __cxa_throw
//              -> _Unwind_RaiseException -> (phase 2) __gxx_personality_v0 finds the
//              noexcept frame -> __cxa_call_terminate -> __terminate -> blocking_terminate
//              (the std::set_terminate handler), which blocks in read(). So libgcc_s's
//              unwinder and libstdc++'s throw machinery are on the stack.
#include "common.h"

#include <exception>
#include <stdexcept>
#include <string>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

struct Guard {
    int id;
    explicit Guard(int i) : id(i) {}
    NOINLINE ~Guard()
    {
        char c;
        sem_post(&sw_started);
        sink = read(sw_never_fd(), &c, 1) + id;
    }
};

NOINLINE static void throw_with_guard(int n)
{
    Guard g(n);
    if (sink >= 0)
        throw std::runtime_error("unwinding through Guard #" + std::to_string(n));
    sink = n;
}

NOINLINE static int catcher(int n)
{
    try {
        throw_with_guard(n);
    } catch (const std::exception &e) {
        sink = (long)e.what()[0];
        return 1;
    }
    return 0;
}

static void *cleanup_worker(void *)
{
    sink = catcher(42);
    return nullptr;
}

[[noreturn]] static void blocking_terminate()
{
    char c;
    sem_post(&sw_started);
    for (;;)
        sink = read(sw_never_fd(), &c, 1);
}

NOINLINE static void thrower(int n)
{
    if (sink >= 0)
        throw std::logic_error("thrown through a noexcept frame");
    sink = n;
}

NOINLINE static void must_not_throw(int n) noexcept
{
    thrower(n + 1);
    sink = n;
}

static void *terminate_worker(void *)
{
    must_not_throw(7);
    return nullptr;
}

int main()
{
    sw_init();
    sw_never_fd();
    std::set_terminate(blocking_terminate);
    pthread_t t = sw_thread(cleanup_worker, nullptr);
    sw_wait_started(1);
    sw_thread(terminate_worker, nullptr);
    sw_wait_started(1);
    sw_ready();
    pthread_join(t, nullptr);
    return 0;
}
