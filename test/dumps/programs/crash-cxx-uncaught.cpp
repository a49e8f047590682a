// crash-cxx-uncaught.cpp: an exception that nothing catches, thrown in a secondary
// thread: __cxa_throw -> _Unwind_RaiseException finds no handler -> std::terminate ->
// __gnu_cxx::__verbose_terminate_handler -> abort (SIGABRT). Built -O2 -g. Kernel core.
//
//   main     main -> pthread_join (futex)
//   blocked  blocked_worker -> read
//   thrower  thrower_worker -> load_config -> parse_value -> __cxa_throw -> ... -> abort
#include "common.h"

#include <stdexcept>
#include <string>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

NOINLINE static int parse_value(const std::string &text)
{
    if (text.empty() || text[0] != '#')
        throw std::invalid_argument("bad value: " + text);
    return (int)text.size();
}

NOINLINE static int load_config(int n)
{
    std::string line = n > 0 ? "value=" + std::to_string(n) : "#";
    int r = parse_value(line);
    sink = r;
    return r + 1;
}

static void *thrower_worker(void *)
{
    sw_wait_others_asleep();
    sink = load_config(5);
    return nullptr;
}

static void *blocked_worker(void *)
{
    char c;
    sem_post(&sw_started);
    sink = read(sw_never_fd(), &c, 1);
    return nullptr;
}

int main()
{
    sw_init();
    sw_never_fd();
    sw_thread(blocked_worker, nullptr);
    sw_wait_started(1);
    pthread_t t = sw_thread(thrower_worker, nullptr);
    pthread_join(t, nullptr);
    return 0;
}
