// demangledName: libiberty for Rust's legacy names and D's, LLVM for the rest.
#include "stackwalk/core/Demangle.h"

#include "llvm/Demangle/Demangle.h"

#include <catch2/catch.hpp>

#include <string>

using stackwalk::demangledName;

TEST_CASE("Rust's legacy names: escapes decoded, the hash left out, as gdb and nm -C give them") {
  CHECK(demangledName("_ZN8rthreads7recurse17h7d246a2b1126a816E") == "rthreads::recurse");
  CHECK(demangledName("_ZN3std6thread9lifecycle18JoinInner$LT$T$GT$4join17h79faeae37ea33044E") ==
        "std::thread::lifecycle::JoinInner<T>::join");
  CHECK(demangledName("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$"
                      "$GT$17h2e58e5d1ee10d5d2E") == "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
}

TEST_CASE("D names, which LLVM 19 leaves as they are") {
  CHECK(demangledName("_D3fib3recFiZv") == "fib.rec(int)");
  CHECK(demangledName("_D4core6thread8osthread6Thread5sleepFNbNiSQBo4time8DurationZv") ==
        "core.thread.osthread.Thread.sleep(core.time.Duration)");
  CHECK(llvm::demangle("_D3fib3recFiZv") == "_D3fib3recFiZv"); // why libiberty reads them
}

TEST_CASE("everything else as LLVM demangles it") {
  for (std::string name : {"_ZN3foo3barEv", "_ZN3foo3barE", "_ZNK3std6vectorIiSaIiEE4sizeEv", "_RNvCs1234_7mycrate3foo",
                           "?f@@YAXXZ", "main", "_Dnot_d", "_ZN3foo17h0123456789abcdefE_", ""})
    CHECK(demangledName(name) == llvm::demangle(name));
  // A C++ name whose last component looks like a hash but is not 16 hex digits.
  CHECK(demangledName("_ZN3foo17hxyz456789abcdefgE") == llvm::demangle("_ZN3foo17hxyz456789abcdefgE"));
  // libiberty reads C strings: a name holding a NUL goes to LLVM whole.
  std::string withNul("_D3fib3recFiZv\0x", 16);
  CHECK(demangledName(withNul) == llvm::demangle(withNul));
}
