#include "stackwalk/walk/ManagedRuntime.h"
#include "stackwalk/walk/UnwindPolicy.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using enum UnwindStep;

namespace {

// An unwinder that only says which one it is.
class NamedUnwinder : public Unwinder {
public:
  explicit NamedUnwinder(FrameTrust trust) : trust_(trust) {}
  FrameTrust trust() const override { return trust_; }
  UnwindResult unwind(const Frame &, const Target &) override { return UnwindResult::noInfo("test"); }

private:
  FrameTrust trust_;
};

class FakeManagedThread : public ManagedThreadWalk {
public:
  explicit FakeManagedThread(bool withTransitions) : withTransitions_(withTransitions) {}
  Unwinder *codeUnwinder() override { return &code; }
  Unwinder *hijackUnwinder() override { return withTransitions_ ? &hijack : nullptr; }
  Unwinder *transitionUnwinder() override { return withTransitions_ ? &transitions : nullptr; }
  std::vector<ReportFrame> transitionFramesBelow(std::optional<uint64_t>, const Frame &) override { return {}; }
  std::optional<ReportFrame> managedFrame(const Frame &, const std::vector<ReportFrame> &) override {
    return std::nullopt;
  }
  NamedUnwinder code{FrameTrust::UnwindInfo}, hijack{FrameTrust::RuntimeFrame}, transitions{FrameTrust::RuntimeFrame};

private:
  bool withTransitions_;
};

// A dump's unwinders: a real CFI unwinder, and one in place of the dynamic one.
struct Dump {
  Dump(Arch arch, OS os) : target(arch, os, "test", std::make_unique<BufferMemory>()) {}
  Target target;
  CfiUnwinder cfi;
  NamedUnwinder dynamic{FrameTrust::Dynamic};
  DumpUnwinders unwinders{target, cfi, dynamic};
};

std::vector<FrameTrust> trusts(const std::vector<Unwinder *> &chain) {
  std::vector<FrameTrust> out;
  for (Unwinder *unwinder : chain) out.push_back(unwinder->trust());
  return out;
}

} // namespace

TEST_CASE("x86-64 Linux: managed code and the runtime's hijack stub, Go's cgo calls, a new thread's first "
          "instruction, CFI (a file's, the entry function, a symbol file's), dynamic info, runtime Frames, a signal "
          "frame without CFI, code analysed by its instructions, then the fallbacks") {
  CHECK(unwindPolicy(Arch::X86_64, OS::Linux) ==
        std::vector<UnwindStep>{ManagedCode, HijackedReturn, GoStackSwitch, ThreadBirth, Cfi, EntryFunction,
                                SymbolFileCfi, Dynamic, RuntimeTransitions, Sigreturn, CodeAnalysis, BadCall,
                                FramePointer, Scan});
  // A dump whose OS is not recorded is walked as a Linux one.
  CHECK(unwindPolicy(Arch::X86_64, OS::Unknown) == unwindPolicy(Arch::X86_64, OS::Linux));
}

TEST_CASE("x86-64 Windows: function tables (or a symbol file's STACK CFI), no DWARF CFI and no frame-pointer chain") {
  CHECK(unwindPolicy(Arch::X86_64, OS::Windows) ==
        std::vector<UnwindStep>{ManagedCode, HijackedReturn, Win64UnwindInfo, SymbolFileCfi, RuntimeTransitions, BadCall,
                                Scan});
}

TEST_CASE("arm64 Linux: as x86-64 Linux, with signal trampolines known by their code before CFI (the vDSO's follows only a frame record)") {
  CHECK(unwindPolicy(Arch::Arm64, OS::Linux) ==
        std::vector<UnwindStep>{ManagedCode, HijackedReturn, Sigreturn, ThreadBirth, Cfi, EntryFunction, SymbolFileCfi,
                                Dynamic, RuntimeTransitions, BadCall, FramePointer, Scan});
  // macOS, iOS and unknown systems: the same chain (their frame pointers and symbol files do the work).
  for (OS os : {OS::MacOS, OS::IOS, OS::Unknown}) CHECK(unwindPolicy(Arch::Arm64, os) == unwindPolicy(Arch::Arm64, OS::Linux));
}

TEST_CASE("x86 Windows: the PDB's frame data as STACK WIN, STACK CFI, then the ebp chain and the scan (Breakpad's order)") {
  CHECK(unwindPolicy(Arch::X86, OS::Windows) == std::vector<UnwindStep>{StackWin, SymbolFileCfi, BadCall, FramePointer, Scan});
}

TEST_CASE("i386 Linux: as x86-64 Linux without the managed and dynamic steps") {
  CHECK(unwindPolicy(Arch::X86, OS::Linux) ==
        std::vector<UnwindStep>{Cfi, EntryFunction, SymbolFileCfi, Sigreturn, CodeAnalysis, BadCall, FramePointer, Scan});
}

TEST_CASE("32-bit ARM Linux: the signal restorers, CFI, the exception index table, then as i386") {
  CHECK(unwindPolicy(Arch::Arm, OS::Linux) == std::vector<UnwindStep>{Sigreturn, Cfi, ArmExidx, EntryFunction,
                                                                      SymbolFileCfi, BadCall, FramePointer, Scan});
}

TEST_CASE("architectures stackwalk cannot unwind yet get no unwinder") {
  for (OS os : {OS::Linux, OS::Windows}) CHECK(unwindPolicy(Arch::Unknown, os).empty());
}

TEST_CASE("arm64 Windows: function tables, then the frame-pointer chain the ABI keeps") {
  CHECK(unwindPolicy(Arch::Arm64, OS::Windows) ==
        std::vector<UnwindStep>{ManagedCode, HijackedReturn, Win64UnwindInfo, SymbolFileCfi, RuntimeTransitions,
                                BadCall, FramePointer, Scan});
}

TEST_CASE("a thread without a managed runtime leaves the managed steps out") {
  Dump dump(Arch::X86_64, OS::Linux);
  std::vector<Unwinder *> chain = dump.unwinders.chainFor(nullptr);
  REQUIRE(chain.size() == 11);
  CHECK(chain[2] == &dump.cfi);
  CHECK(chain[5] == &dump.dynamic);
  CHECK(trusts(chain) == std::vector<FrameTrust>{FrameTrust::RuntimeFrame, FrameTrust::Cfi, FrameTrust::Cfi,
                                                  FrameTrust::Cfi, FrameTrust::Cfi, FrameTrust::Dynamic,
                                                  FrameTrust::Context, FrameTrust::CodeAnalysis, FrameTrust::Scan,
                                                  FrameTrust::FramePointer, FrameTrust::Scan});
}

TEST_CASE("a managed thread's code unwinder and hijack stub come first, its Frames after the native unwind info") {
  FakeManagedThread managed(/*withTransitions=*/true);
  SECTION("Linux") {
    Dump dump(Arch::X86_64, OS::Linux);
    std::vector<Unwinder *> chain = dump.unwinders.chainFor(&managed);
    REQUIRE(chain.size() == 14);
    CHECK(chain[0] == &managed.code);
    CHECK(chain[1] == &managed.hijack);
    CHECK(chain[4] == &dump.cfi);
    CHECK(chain[7] == &dump.dynamic);
    CHECK(chain[8] == &managed.transitions);
  }
  SECTION("Windows") {
    Dump dump(Arch::X86_64, OS::Windows);
    std::vector<Unwinder *> chain = dump.unwinders.chainFor(&managed);
    REQUIRE(chain.size() == 7);
    CHECK(chain[0] == &managed.code);
    CHECK(chain[1] == &managed.hijack);
    CHECK(trusts(chain) == std::vector<FrameTrust>{FrameTrust::UnwindInfo, FrameTrust::RuntimeFrame,
                                                    FrameTrust::UnwindInfo, FrameTrust::Cfi, FrameTrust::RuntimeFrame,
                                                    FrameTrust::Scan, FrameTrust::Scan});
    CHECK(chain[4] == &managed.transitions);
  }
}

TEST_CASE("a managed thread without a Frame chain has no transition or hijack step") {
  Dump dump(Arch::X86_64, OS::Linux);
  FakeManagedThread managed(/*withTransitions=*/false);
  std::vector<Unwinder *> chain = dump.unwinders.chainFor(&managed);
  REQUIRE(chain.size() == 12);
  CHECK(chain[0] == &managed.code);
  CHECK(std::find(chain.begin(), chain.end(), &managed.transitions) == chain.end());
  CHECK(std::find(chain.begin(), chain.end(), &managed.hijack) == chain.end());
}

TEST_CASE("an architecture without a policy walks no unwinder, even for a managed thread") {
  Dump dump(Arch::Unknown, OS::Linux);
  FakeManagedThread managed(true);
  CHECK(dump.unwinders.chainFor(&managed).empty());
}
