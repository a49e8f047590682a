#include "stackwalk/walk/Signature.h"

#include <catch2/catch.hpp>

using namespace stackwalk;

namespace {

struct ThreadBuilder {
  ReportThread thread;
  Module libc{}, coreclr{};
  ThreadBuilder() {
    libc.name = "libc.so.6";
    coreclr.name = "libcoreclr.so";
  }
  ThreadBuilder &native(const Module &module, std::string function = "") {
    ReportFrame frame;
    frame.module = &module;
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
  b.native(b.libc, "__GI___wait4").native(b.coreclr).native(b.coreclr).runtime("SoftwareExceptionFrame").native(b.coreclr);
  b.managed("App.Throw").managed("App.Caller").runtime("InlinedCallFrame").managed("App.Main");
  CHECK(threadSignature(b.thread, 5) == "App.dll!App.Throw < App.dll!App.Caller < App.dll!App.Main");
  CHECK(topFrames(b.thread, 5) ==
        "libc.so.6!__GI___wait4 < libcoreclr.so!? < libcoreclr.so!? < [SoftwareExceptionFrame] < libcoreclr.so!?");
}

TEST_CASE("a fault in managed code (FaultingExceptionFrame) starts at the faulting method") {
  ThreadBuilder b;
  b.native(b.libc, "__GI___wait4").native(b.coreclr).runtime("FaultingExceptionFrame").managed("App.Dereference");
  b.managed("App.Main");
  CHECK(threadSignature(b.thread, 5) == "App.dll!App.Dereference < App.dll!App.Main");
}

TEST_CASE("a crash in a catch handler keeps its own frames: managed code runs above the throw's Frame") {
  ThreadBuilder b;
  b.native(b.libc, "memcpy").managed("App.Handler").native(b.coreclr).runtime("SoftwareExceptionFrame");
  b.native(b.coreclr).managed("App.Throw");
  CHECK(threadSignature(b.thread, 3) == "libc.so.6!memcpy < App.dll!App.Handler < libcoreclr.so!?");
}

TEST_CASE("native crash machinery is skipped as before; runtime Frames never count") {
  ThreadBuilder b;
  b.native(b.libc, "__pthread_kill_implementation").native(b.libc, "raise").native(b.libc, "abort");
  b.runtime("InlinedCallFrame").managed("App.Native").managed("App.Main");
  CHECK(threadSignature(b.thread, 2) == "App.dll!App.Native < App.dll!App.Main");
}
