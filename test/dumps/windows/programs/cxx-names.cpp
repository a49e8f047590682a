// cxx-names.cpp: C++ at -O0: namespaces, a class template, virtual functions, an operator,
// a lambda and a recursive function template on the stacks, so symbolizers have to produce
// (and demangle) C++ names; every function is a real frame with a frame pointer (-O0).
#include "common.h"

namespace app {

struct Task {
    virtual ~Task() {}
    virtual DWORD run() = 0;
};

template <typename T>
struct Worker : Task {
    T seed;
    explicit Worker(T s) : seed(s) {}
    template <int N>
    DWORD descend(T v) { return descend<N - 1>(v + 1) + 1; }
    DWORD run() override { return descend<3>(seed); }
};

// The bottom of the recursion: each instantiation parks its thread its own way.
template <> template <> DWORD Worker<int>::descend<0>(int v)
{
    auto park = [v](const char *what) -> DWORD {
        ready(what);
        return WaitForSingleObject(never_event(), INFINITE) + (DWORD)v;
    };
    return park("worker-int");
}
template <> template <> DWORD Worker<double>::descend<0>(double v)
{
    ready("worker-double");
    SleepEx(INFINITE, TRUE);
    return (DWORD)v;
}

struct Counter {
    long n = 0;
    Counter &operator+=(long k)
    {
        n += k;
        if (n > 100) {
            ready("operator");
            Sleep(INFINITE);
        }
        return *this;
    }
};

namespace detail {
DWORD WINAPI thread_entry(void *p) { return static_cast<Task *>(p)->run(); }
DWORD WINAPI counter_entry(void *p)
{
    Counter &c = *static_cast<Counter *>(p);
    c += 1000;
    return (DWORD)c.n;
}
} // namespace detail

class Runner {
public:
    DWORD wait_all(HANDLE *t, DWORD n)
    {
        ready("main");
        return WaitForMultipleObjects(n, t, TRUE, INFINITE);
    }
    int run()
    {
        static Worker<int> wi(1);
        static Worker<double> wd(2.5);
        static Counter counter;
        HANDLE t[3];
        t[0] = start_thread(detail::thread_entry, static_cast<Task *>(&wi), 0);
        Sleep(100);
        t[1] = start_thread(detail::thread_entry, static_cast<Task *>(&wd), 0);
        Sleep(100);
        t[2] = start_thread(detail::counter_entry, &counter, 0);
        Sleep(100);
        return (int)wait_all(t, 3);
    }
};

} // namespace app

int main()
{
    app::Runner r;
    return r.run();
}
