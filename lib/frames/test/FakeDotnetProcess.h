// A hand-built .NET process for unit tests: a runtime module exporting
// DotNetRuntimeContractDescriptor (lib/core/test/data/exports.dll), the
// descriptor and its JSON in the dump's memory, a thread store with one
// thread, and an ExecutionManager code map (range-section map, a code heap
// with its nibble map and code headers, a range of stubs) over JIT-compiled
// code with Windows x64 unwind info. The stack and the thread's Frame chain
// are the test's to write before target() is first called.
//
// The layouts follow dotnet/runtime docs/design/datacontracts
// (ExecutionManager.md, Thread.md, StackWalk.md) as stackwalk reads them; the
// field offsets are this descriptor's own, as RuntimeLayerTest's are.
#pragma once

// Frames, Targets, register numbers and known(), as the unwinder tests make them.
#include "SyntheticStack.h"

#include "stackwalk/core/Target.h"
#include "stackwalk/frames/DotnetRuntime.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace stackwalk::fake {

using namespace stackwalk::synthetic;

constexpr const char *DescriptorJson = R"({
  "version": 1, "baseline": "empty",
  "contracts": {"Thread": 1, "StackWalk": 1, "ExecutionManager": 2},
  "types": {
    "Frame": {"Next": 8},
    "InlinedCallFrame": {"!": 56, "CallSiteSP": 24, "CallerReturnAddress": 32, "CalleeSavedFP": 40},
    "FaultingExceptionFrame": {"TargetContext": 48},
    "ResumableFrame": {"!": 24, "TargetContextPtr": 16},
    "HijackFrame": {"ReturnAddress": 16, "HijackArgsPtr": 24},
    "HijackArgs": {"!": 80, "CalleeSavedRegisters": 16},
    "CalleeSavedRegisters": {"R12": 0, "R13": 8, "R14": 16, "R15": 24, "Rbx": 32, "Rbp": 40},
    "ThreadStore": {"FirstThreadLink": 16},
    "Thread": {"Id": 8, "OSId": 16, "Frame": 24, "LinkNext": [32, "pointer"], "LastThrownObject": [40, "GCHandle"]},
    "RangeSectionMap": {"TopLevelData": 0},
    "RangeSectionFragment": {"Next": 0, "RangeBegin": 8, "RangeEndOpen": 16, "RangeSection": 24},
    "RangeSection": {"RangeBegin": 0, "RangeEndOpen": 8, "Flags": 16, "JitManager": 24, "R2RModule": 32,
                     "HeapList": 40, "NextForDelete": 64},
    "CodeHeapListNode": {"Next": 0, "StartAddress": 16, "EndAddress": 24, "MapBase": 32, "HeaderMap": 40},
    "RealCodeHeader": {"MethodDesc": 24, "NumUnwindInfos": 32, "UnwindInfos": 36},
    "RuntimeFunction": {"!": 12, "BeginAddress": 0, "EndAddress": 4, "UnwindData": 8}
  },
  "globals": {
    "InlinedCallFrameIdentifier": "0x1",
    "ResumableFrameIdentifier": "0x2",
    "FaultingExceptionFrameIdentifier": "0x3",
    "HijackFrameIdentifier": "0x4",
    "StubCodeBlockLast": "0xf",
    "ThreadStore": [[0], "pointer"],
    "ExecutionManagerCodeRangeMapAddress": [[1], "pointer"]
  }
})";

// The runtime module: exports.dll, whose export of that name is at
// ImageBase + 0x3010 (ModuleImageTest); loaded elsewhere than its ImageBase.
constexpr uint64_t RuntimeBase = 0x7ff600000000, DescriptorAt = RuntimeBase + 0x3010;
constexpr uint64_t DescriptorMagic = 0x0043414443434e44; // "DNCCDAC\0"
constexpr uint64_t JsonAt = 0x10000, PointerDataAt = 0x18000;
constexpr uint64_t ThreadStoreVariable = 0x19000, ThreadStoreAt = 0x19100, ThreadAt = 0x19200;
constexpr uint64_t ThreadOsId = 1234;
constexpr uint32_t ManagedThreadId = 7;
// The range-section map and the structures it leads to.
constexpr uint64_t RangeMapAt = 0x20000, LevelTablesAt = 0x21000; // one 4 KiB page per level below the top
constexpr uint64_t JitFragmentAt = 0x30000, StubFragmentAt = 0x30040;
constexpr uint64_t JitSectionAt = 0x31000, StubSectionAt = 0x31100;
constexpr uint64_t HeapNodeAt = 0x32000, NibbleMapAt = 0x33000, CodeHeadersAt = 0x34000;
// JIT-compiled code: one code heap over [JitBegin, JitEnd); stubs in [StubBegin, StubEnd),
// in the same 128 KiB chunk of the map.
constexpr uint64_t JitBegin = 0x7f1000000000, JitEnd = JitBegin + 0x10000;
constexpr uint64_t StubBegin = JitEnd, StubEnd = StubBegin + 0x1000;
// Methods in the heap (RVAs from JitBegin, which RUNTIME_FUNCTIONs are relative to):
//   Method    0x1000-0x1040  push rbx; sub rsp, 0x20; call at 0x1010 (returns to 0x1015)
//   JitStub   0x2000         a code header that is a stub kind (<= StubCodeBlockLast)
//   NoUnwind  0x3000         a code header with no unwind infos
//   LostInfo  0x4000-0x4040  its UNWIND_INFO (RVA 0xf000) is not in the dump
constexpr uint64_t Method = JitBegin + 0x1000, MethodReturn = Method + 0x15, JitStub = JitBegin + 0x2000,
                   NoUnwind = JitBegin + 0x3000, LostInfo = JitBegin + 0x4000;
constexpr uint32_t MethodUnwindInfoRva = 0x800, LostUnwindInfoRva = 0xf000;
// A part of the address space whose map slot leads out of the dump.
constexpr uint64_t BrokenMapAddress = 0x100000000000, BrokenSlotTarget = 0xdead0000;
// The thread's stack.
constexpr uint64_t Stack = 0x7ffd0000, StackSize = 0x2000;
constexpr uint64_t FrameTop = ~uint64_t(0); // the end of a Frame chain
// Frame identifiers, as the descriptor's globals name them.
constexpr uint64_t InlinedCallFrameId = 1, ResumableFrameId = 2, FaultingExceptionFrameId = 3, HijackFrameId = 4,
                   UnnamedFrameId = 0x77;

// Bytes at chosen addresses in 4 KiB pages; contiguous pages become one
// range of the dump, so a read may cross pages.
class SparseMemory {
public:
  void bytes(uint64_t address, const void *data, size_t size) {
    auto *p = static_cast<const uint8_t *>(data);
    for (size_t i = 0; i < size; ++i) {
      uint64_t a = address + i;
      auto &page = pages_[a & ~uint64_t(0xfff)];
      if (page.empty()) page.resize(0x1000);
      page[a & 0xfff] = p[i];
    }
  }
  void bytes(uint64_t address, const std::vector<uint8_t> &data) { bytes(address, data.data(), data.size()); }
  void u64(uint64_t address, uint64_t value) { bytes(address, &value, 8); }
  void u32(uint64_t address, uint32_t value) { bytes(address, &value, 4); }
  void u16(uint64_t address, uint16_t value) { bytes(address, &value, 2); }

  std::unique_ptr<BufferMemory> build() const {
    auto memory = std::make_unique<BufferMemory>();
    std::vector<uint8_t> run;
    uint64_t runStart = 0;
    for (const auto &[page, data] : pages_) {
      if (!run.empty() && runStart + run.size() != page) {
        memory->add(runStart, run);
        run.clear();
      }
      if (run.empty()) runStart = page;
      run.insert(run.end(), data.begin(), data.end());
    }
    if (!run.empty()) memory->add(runStart, run);
    return memory;
  }

private:
  std::map<uint64_t, std::vector<uint8_t>> pages_;
};

// The range-section map's index of an address at a level (5 = top), 64-bit:
// 5 levels of 256 slots over bits 56..17.
inline unsigned mapIndex(uint64_t address, unsigned level) {
  return unsigned((address >> (17 + (level - 1) * 8)) & 0xff);
}

// A Windows x64 CONTEXT (0x4d0 bytes) with ContextFlags claiming the given
// groups (CONTROL 1, INTEGER 2); registers it does not set are 0.
inline std::vector<uint8_t> windowsContext(uint32_t groups, uint64_t rip, uint64_t rsp,
                                           std::map<unsigned, uint64_t> integers = {}) {
  std::vector<uint8_t> context(0x4d0, 0);
  uint32_t flags = 0x100000 | groups;
  std::memcpy(&context[0x30], &flags, 4);
  std::memcpy(&context[0xf8], &rip, 8);
  std::memcpy(&context[0x98], &rsp, 8);
  // Integer registers' offsets, by DWARF number (rsp is CONTROL's).
  static const std::map<unsigned, uint32_t> offsets = {{Rax, 0x78}, {Rcx, 0x80}, {Rdx, 0x88}, {Rbx, 0x90},
                                                       {Rbp, 0xa0}, {Rsi, 0xa8}, {Rdi, 0xb0}, {R12, 0xd8},
                                                       {R13, 0xe0}, {R14, 0xe8}, {R15, 0xf0}};
  for (auto [reg, value] : integers) std::memcpy(&context[offsets.at(reg)], &value, 8);
  return context;
}

// The runtime module's file, as a walk finds one on disk.
inline std::string runtimeModulePath() {
  return (std::filesystem::path(__FILE__).parent_path() / "../../core/test/data/exports.dll").string();
}

struct FakeDotnetProcess {
  SparseMemory memory;
  std::unique_ptr<Target> built;
  std::unique_ptr<frames::DotnetRuntime> opened;

  FakeDotnetProcess() {
    writeDescriptor();
    writeThreadStore();
    writeCodeMap();
    writeCode();
    threadFirstFrame(0);
  }

  // The thread's first Frame (Thread.Frame); 0 for none.
  void threadFirstFrame(uint64_t frame) { memory.u64(ThreadAt + 24, frame); }
  // A Frame's identifier and Next.
  void frame(uint64_t address, uint64_t identifier, uint64_t next) {
    memory.u64(address, identifier);
    memory.u64(address + 8, next);
  }
  // An InlinedCallFrame; a returnAddress of 0 has no active call.
  void inlinedCallFrame(uint64_t address, uint64_t next, uint64_t returnAddress, uint64_t callSiteSp,
                        uint64_t calleeSavedFp) {
    frame(address, InlinedCallFrameId, next);
    memory.u64(address + 24, callSiteSp);
    memory.u64(address + 32, returnAddress);
    memory.u64(address + 40, calleeSavedFp);
  }
  // A FaultingExceptionFrame with its CONTEXT inline (TargetContext, at 48).
  void faultingExceptionFrame(uint64_t address, uint64_t next, const std::vector<uint8_t> &context) {
    frame(address, FaultingExceptionFrameId, next);
    memory.bytes(address + 48, context);
  }
  // A ResumableFrame, whose CONTEXT is elsewhere (TargetContextPtr, at 16).
  void resumableFrame(uint64_t address, uint64_t next, uint64_t contextAddress) {
    frame(address, ResumableFrameId, next);
    memory.u64(address + 16, contextAddress);
  }
  // A HijackFrame: the hijacked return address, and the registers the hijack
  // stub pushed (HijackArgs, 80 bytes: rax and rdx, then CalleeSavedRegisters).
  void hijackFrame(uint64_t address, uint64_t next, uint64_t returnAddress, uint64_t args, uint64_t rbx, uint64_t rbp) {
    frame(address, HijackFrameId, next);
    memory.u64(address + 16, returnAddress);
    memory.u64(address + 24, args);
    memory.u64(args + 16 + 32, rbx);
    memory.u64(args + 16 + 40, rbp);
  }
  void stackWord(uint64_t address, uint64_t value) { memory.u64(address, value); }
  // The mappings the dump records (none unless a test adds them).
  std::vector<MemoryRegion> regions;

  const Target &target() {
    if (built) return *built;
    auto image = ModuleImage::open(runtimeModulePath());
    if (!image) FAIL(runtimeModulePath() << ": " << llvm::toString(image.takeError()));
    std::shared_ptr<ModuleImage> runtimeFile = std::move(*image);
    built = makeTarget(Arch::X86_64, OS::Linux, memory.build(), regions,
                       {makeModule("exports.dll", RuntimeBase, 0x10000, runtimeFile)});
    ThreadInfo thread;
    thread.tid = ThreadOsId;
    built->threads = {thread};
    return *built;
  }

  frames::DotnetRuntime &runtime() {
    if (opened) return *opened;
    auto runtime = frames::DotnetRuntime::open(target());
    if (!runtime) FAIL(llvm::toString(runtime.takeError()));
    opened = std::move(*runtime);
    return *opened;
  }

  // A frame of the walk: ip a return address unless `exact`.
  Frame walkFrame(uint64_t ip, uint64_t sp, bool exact) {
    return makeFrame(target(), ip, sp, exact ? FrameTrust::Context : FrameTrust::UnwindInfo,
                     {Rax, Rbx, Rbp, Rsi, Rdi, R12});
  }

private:
  void writeDescriptor() {
    std::string json = DescriptorJson;
    memory.u64(DescriptorAt, DescriptorMagic);
    memory.u32(DescriptorAt + 8, 1);                  // flags: 64-bit pointers
    memory.u32(DescriptorAt + 12, uint32_t(json.size()));
    memory.u64(DescriptorAt + 16, JsonAt);
    memory.u32(DescriptorAt + 24, 2);                 // pointer data count
    memory.u64(DescriptorAt + 32, PointerDataAt);
    memory.bytes(JsonAt, json.data(), json.size());
    memory.u64(PointerDataAt, ThreadStoreVariable);   // [0]: the ThreadStore variable
    memory.u64(PointerDataAt + 8, RangeMapAt);         // [1]: the range-section map
  }

  void writeThreadStore() {
    memory.u64(ThreadStoreVariable, ThreadStoreAt);
    memory.u64(ThreadStoreAt + 16, ThreadAt + 32); // FirstThreadLink -> the thread's LinkNext
    memory.u32(ThreadAt + 8, ManagedThreadId);
    memory.u64(ThreadAt + 16, ThreadOsId);
    memory.u64(ThreadAt + 32, 0);                  // LinkNext: the last thread
    memory.u64(ThreadAt + 40, 0);                  // LastThrownObject: none
  }

  void writeCodeMap() {
    // Levels 5..2 lead to the next level's table (level 3's pointer with the
    // collectible flag, bit 0, which the reader masks); level 1 to the first
    // fragment of the 128 KiB chunk.
    uint64_t table = RangeMapAt;
    for (unsigned level = 5; level >= 2; --level) {
      uint64_t next = LevelTablesAt + (5 - level) * 0x1000;
      memory.u64(table + mapIndex(JitBegin, level) * 8, next | (level == 3 ? 1 : 0));
      table = next;
    }
    memory.u64(table + mapIndex(JitBegin, 1) * 8, JitFragmentAt);
    // The broken part: its level-4 slot leads out of the dump.
    REQUIRE(mapIndex(BrokenMapAddress, 5) == mapIndex(JitBegin, 5));
    REQUIRE(mapIndex(BrokenMapAddress, 4) != mapIndex(JitBegin, 4));
    memory.u64(LevelTablesAt + mapIndex(BrokenMapAddress, 4) * 8, BrokenSlotTarget);

    fragment(JitFragmentAt, StubFragmentAt, JitBegin, JitEnd, JitSectionAt);
    fragment(StubFragmentAt, 0, StubBegin, StubEnd, StubSectionAt);
    rangeSection(JitSectionAt, JitBegin, JitEnd, 0x02 /* code heap */, HeapNodeAt);
    rangeSection(StubSectionAt, StubBegin, StubEnd, 0x04 /* range list */, 0);

    memory.u64(HeapNodeAt + 0, 0);
    memory.u64(HeapNodeAt + 16, JitBegin);
    memory.u64(HeapNodeAt + 24, JitEnd);
    memory.u64(HeapNodeAt + 32, JitBegin); // MapBase
    memory.u64(HeapNodeAt + 40, NibbleMapAt);
    memory.bytes(NibbleMapAt, std::vector<uint8_t>(0x200, 0));
    for (uint64_t start : {Method, JitStub, NoUnwind, LostInfo}) methodStart(start);
  }

  void fragment(uint64_t at, uint64_t next, uint64_t begin, uint64_t end, uint64_t section) {
    memory.u64(at + 0, next);
    memory.u64(at + 8, begin);
    memory.u64(at + 16, end);
    memory.u64(at + 24, section);
  }
  void rangeSection(uint64_t at, uint64_t begin, uint64_t end, uint32_t flags, uint64_t heapList) {
    memory.u64(at + 0, begin);
    memory.u64(at + 8, end);
    memory.u32(at + 16, flags);
    memory.u64(at + 24, 0);
    memory.u64(at + 32, 0); // not ReadyToRun
    memory.u64(at + 40, heapList);
    memory.u64(at + 64, 0); // not being deleted
  }
  // The nibble map: a method starting at a 32-byte bucket's first 4 bytes is
  // nibble value 1, the bucket's place in its 32-bit unit the nibble's
  // (most significant first).
  void methodStart(uint64_t start) {
    uint64_t relative = start - JitBegin;
    REQUIRE(relative % 32 == 0);
    uint64_t bucket = relative / 32;
    uint64_t unitAt = NibbleMapAt + (bucket / 8) * 4;
    uint32_t unit = uint32_t(1) << (28 - 4 * (bucket % 8));
    memory.u32(unitAt, unit);
  }

  void writeCode() {
    std::vector<uint8_t> int3(0x40, 0xcc);
    // Method: its code header, one RUNTIME_FUNCTION, its UNWIND_INFO and code.
    uint64_t header = CodeHeadersAt;
    memory.u64(Method - 8, header);
    memory.u64(header + 24, 0); // no MethodDesc recorded
    memory.u32(header + 32, 1);
    runtimeFunction(header + 36, 0x1000, 0x1040, MethodUnwindInfoRva);
    // version 1, prolog 5 bytes, 2 codes, no frame register:
    // at 5 UWOP_ALLOC_SMALL (3+1)*8, at 1 UWOP_PUSH_NONVOL rbx (Win64 number 3)
    memory.bytes(JitBegin + MethodUnwindInfoRva, std::vector<uint8_t>{1, 5, 2, 0, 5, 0x32, 1, 0x30});
    memory.bytes(Method, int3);
    memory.bytes(Method, std::vector<uint8_t>{0x53, 0x48, 0x83, 0xec, 0x20});
    memory.bytes(Method + 0x10, std::vector<uint8_t>{0xe8, 0, 0, 0, 0});
    // JitStub: the header pointer is a stub kind.
    memory.u64(JitStub - 8, 5);
    // NoUnwind: a header with no unwind infos.
    memory.u64(NoUnwind - 8, header + 0x100);
    memory.u64(header + 0x100 + 24, 0);
    memory.u32(header + 0x100 + 32, 0);
    memory.bytes(NoUnwind, int3);
    // LostInfo: its UNWIND_INFO is not in the dump.
    memory.u64(LostInfo - 8, header + 0x200);
    memory.u64(header + 0x200 + 24, 0);
    memory.u32(header + 0x200 + 32, 1);
    runtimeFunction(header + 0x200 + 36, 0x4000, 0x4040, LostUnwindInfoRva);
    memory.bytes(LostInfo, int3);
  }
  void runtimeFunction(uint64_t at, uint32_t begin, uint32_t end, uint32_t unwind) {
    memory.u32(at, begin);
    memory.u32(at + 4, end);
    memory.u32(at + 8, unwind);
  }
};

} // namespace stackwalk::fake
