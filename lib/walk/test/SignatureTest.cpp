#include "stackwalk/walk/Signature.h"

#include <catch2/catch.hpp>

using namespace stackwalk;

namespace {

struct ThreadBuilder {
  ReportThread thread;
  Module libc{}, coreclr{};
  ThreadBuilder(uint64_t coreclrBase = 0x7f0000000000) {
    libc.name = "libc.so.6";
    libc.base = 0x7e0000000000;
    libc.size = coreclr.size = 0x100000;
    coreclr.name = "libcoreclr.so";
    coreclr.base = coreclrBase;
  }
  // A frame at `offset` into the module.
  ThreadBuilder &native(const Module &module, std::string function = "", uint64_t offset = 0x1000) {
    ReportFrame frame;
    frame.module = &module;
    frame.ip = module.base + offset;
    frame.function = std::move(function);
    thread.frames.push_back(std::move(frame));
    return *this;
  }
  ThreadBuilder &managed(std::string method) {
    ReportFrame frame;
    frame.kind = FrameKind::Managed;
    frame.moduleName = "App.dll";
    frame.function = std::move(method) + "(Int32)";
    thread.frames.push_back(std::move(frame));
    return *this;
  }
  ThreadBuilder &runtime(std::string name) {
    ReportFrame frame;
    frame.kind = FrameKind::Runtime;
    frame.frameName = std::move(name);
    thread.frames.push_back(std::move(frame));
    return *this;
  }
};

} // namespace

TEST_CASE("an unhandled .NET exception's signature starts at the method that raised it") {
  ThreadBuilder b;
  b.native(b.libc, "__GI___wait4").native(b.coreclr, "", 0x1234).native(b.coreclr, "", 0x5678);
  b.runtime("SoftwareExceptionFrame").native(b.coreclr, "", 0x9abc);
  b.managed("App.Throw").managed("App.Caller").runtime("InlinedCallFrame").managed("App.Main");
  CHECK(threadSignature(b.thread, 5) == "App.dll!App.Throw < App.dll!App.Caller < App.dll!App.Main");
  CHECK(topFrames(b.thread, 5) == "libc.so.6!__GI___wait4 < libcoreclr.so+0x1234 < libcoreclr.so+0x5678 < "
                                  "[SoftwareExceptionFrame] < libcoreclr.so+0x9abc");
}

TEST_CASE("a fault in managed code (FaultingExceptionFrame) starts at the faulting method") {
  ThreadBuilder b;
  b.native(b.libc, "__GI___wait4").native(b.coreclr).runtime("FaultingExceptionFrame").managed("App.Dereference");
  b.managed("App.Main");
  CHECK(threadSignature(b.thread, 5) == "App.dll!App.Dereference < App.dll!App.Main");
}

TEST_CASE("Environment.FailFast starts at its caller: the runtime's dump-writing and abort frames above it say nothing") {
  ThreadBuilder b;
  b.native(b.libc, "__GI___wait4").native(b.coreclr, "", 0x1234).native(b.coreclr, "", 0x5678);
  b.runtime("InlinedCallFrame");
  for (const char *overload : {"(System.Runtime.CompilerServices.StackCrawlMarkHandle, System.String)", "(System.String)"}) {
    b.managed("System.Environment.FailFast");
    b.thread.frames.back().function = std::string("System.Environment.FailFast") + overload;
  }
  b.managed("App.GiveUp").managed("App.Main");
  CHECK(threadSignature(b.thread, 5) == "App.dll!App.GiveUp < App.dll!App.Main");
}

TEST_CASE("a crash in a catch handler keeps its own frames: managed code runs above the throw's Frame") {
  ThreadBuilder b;
  b.native(b.libc, "memcpy").managed("App.Handler").native(b.coreclr, "", 0x42).runtime("SoftwareExceptionFrame");
  b.native(b.coreclr).managed("App.Throw");
  CHECK(threadSignature(b.thread, 3) == "libc.so.6!memcpy < App.dll!App.Handler < libcoreclr.so+0x42");
}

TEST_CASE("native crash machinery is skipped as before; runtime Frames never count") {
  ThreadBuilder b;
  b.native(b.libc, "__pthread_kill_implementation").native(b.libc, "raise").native(b.libc, "abort");
  b.runtime("InlinedCallFrame").managed("App.Native").managed("App.Main");
  CHECK(threadSignature(b.thread, 2) == "App.dll!App.Native < App.dll!App.Main");
}

TEST_CASE("unnamed frames are told apart by their place in the module, the same at any load address") {
  auto signature = [](uint64_t base, uint64_t crashOffset) {
    ThreadBuilder b(base);
    b.native(b.coreclr, "", crashOffset).native(b.coreclr, "", 0x2000).native(b.libc, "__libc_start_main");
    return threadSignature(b.thread, 3);
  };
  CHECK(signature(0x7f0000000000, 0x1111) == "libcoreclr.so+0x1111 < libcoreclr.so+0x2000 < libc.so.6!__libc_start_main");
  CHECK(signature(0x7f1234560000, 0x1111) == signature(0x7f0000000000, 0x1111)); // ASLR
  CHECK(signature(0x7f0000000000, 0x1111) != signature(0x7f0000000000, 0x3333)); // another crash
}

TEST_CASE("C++ names: the whole name without parameters; lambdas, functors and templates stay apart") {
  auto top = [](std::string function) {
    ThreadBuilder b;
    b.native(b.libc, std::move(function));
    return threadSignature(b.thread, 1);
  };
  CHECK(top("main::{lambda(int)#1}::operator()(int) const") == "libc.so.6!main::{lambda(int)#1}::operator()");
  CHECK(top("main::{lambda(int)#1}::operator()(int) const") != top("main::{lambda(int)#2}::operator()(int) const"));
  CHECK(top("Writer::operator()(int)") == "libc.so.6!Writer::operator()");
  CHECK(top("std::function<void (int)>::operator()(int) const") == "libc.so.6!std::function<void (int)>::operator()");
  CHECK(top("void Box<int>::fill(int)") != top("void Box<long>::fill(long)"));
  // Overloads a crash does not tell apart share a bucket.
  CHECK(top("parse(char const*)") == top("parse(std::string const&)"));
  // Skipped by their whole name, parameters or not.
  ThreadBuilder b;
  b.native(b.libc, "std::terminate()").native(b.libc, "handler(int)");
  CHECK(threadSignature(b.thread, 1) == "libc.so.6!handler");
}

TEST_CASE("a file whose identity the dump does not record names no frame in a signature unless trusted") {
  ThreadBuilder b;
  b.libc.identityUnchecked = true; // used, but perhaps another build than the crashed process's
  b.native(b.libc, "memcpy", 0x2345).native(b.coreclr, "Run", 0x10);
  CHECK(threadSignature(b.thread, 5) == "libc.so.6+0x2345 < libcoreclr.so!Run");
  CHECK(threadSignature(b.thread, 5, /*trustUncheckedFiles=*/true) == "libc.so.6!memcpy < libcoreclr.so!Run");
  CHECK(topFrames(b.thread, 5) == "libc.so.6!memcpy < libcoreclr.so!Run"); // a display of the walk keeps them
}
