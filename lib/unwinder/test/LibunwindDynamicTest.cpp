#include "stackwalk/unwinder/LibunwindDynamic.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;

namespace {

constexpr uint64_t Code = 0x5000, Regions = 0x9000, Stack = 0x10000, ReturnAddress = 0x7777;
constexpr uint64_t Entry = Stack + 0x100; // the stack pointer G2 was entered with
enum : int8_t { Stop = 0, SaveReg = 1, SpillFpRel = 2, SpillSpRel = 3, Add = 4, LabelState = 6, CopyState = 7 };
constexpr int16_t Rsp = 7, Rbp = 6, R12 = 12;

struct Op {
  int8_t tag;
  int16_t reg;
  int32_t when;
  int64_t val;
};

struct Fixture {
  std::vector<uint8_t> regions = std::vector<uint8_t>(0x400, 0);
  std::vector<uint8_t> stack = std::vector<uint8_t>(0x200, 0);
  size_t used = 0;

  // Appends a unw_dyn_region_info_t and returns its address; links the previous one to it.
  uint64_t region(int32_t insnCount, std::vector<Op> ops, std::optional<uint64_t> previous = std::nullopt) {
    uint64_t at = Regions + used;
    size_t o = used;
    std::memcpy(&regions[o + 8], &insnCount, 4);
    uint32_t count = uint32_t(ops.size());
    std::memcpy(&regions[o + 12], &count, 4);
    for (size_t i = 0; i < ops.size(); ++i) {
      uint8_t *p = &regions[o + 16 + i * 16];
      p[0] = uint8_t(ops[i].tag);
      std::memcpy(p + 2, &ops[i].reg, 2);
      std::memcpy(p + 4, &ops[i].when, 4);
      std::memcpy(p + 8, &ops[i].val, 8);
    }
    used += 16 + ops.size() * 16;
    if (previous) std::memcpy(&regions[*previous - Regions], &at, 8);
    return at;
  }
  void word(uint64_t address, uint64_t value) { std::memcpy(&stack[address - Stack], &value, 8); }

  // G2: push rbp; mov rbp,rsp; push r12; sub rsp,24 | call rsi; add rsp,24 | pop r12; pop rbp; ret
  uint64_t procedureG2() {
    uint64_t prologue = region(10, {{Add, Rsp, 10, -24}, {SpillFpRel, R12, 6, -8}, {SaveReg, Rsp, 4, Rbp},
                                    {Add, Rsp, 6, -8}, {SpillSpRel, Rbp, 1, 0}, {Add, Rsp, 1, -8}});
    uint64_t body = region(6, {}, prologue);
    region(-4, {}, body);
    word(Entry, ReturnAddress);
    word(Entry - 8, 0xb0b0);  // saved rbp
    word(Entry - 16, 0xc1c1); // saved r12
    return prologue;
  }

  UnwindResult unwind(uint64_t firstRegion, uint64_t offset, uint64_t sp, std::optional<uint64_t> rbp, bool exact) {
    auto memory = std::make_unique<BufferMemory>();
    memory->add(Regions, regions);
    memory->add(Stack, stack);
    target = std::make_unique<Target>(Arch::X86_64, OS::Linux, "test", std::move(memory));
    DynamicProcedure procedure;
    procedure.start = Code;
    procedure.end = Code + 20;
    procedure.name = "jit_frame_fn";
    procedure.regions = firstRegion;
    LibunwindDynamicUnwinder unwinder({procedure});
    Frame frame;
    frame.regs = RegisterFile(Arch::X86_64);
    frame.ip = Code + offset;
    frame.sp = sp;
    frame.ipIsExact = exact;
    frame.regs.setPc(frame.ip);
    frame.regs.setSp(sp);
    if (rbp) frame.regs.set(Rbp, *rbp);
    frame.regs.set(R12, 0x1212);
    return unwinder.unwind(frame, *target);
  }
  std::unique_ptr<Target> target;
};

} // namespace

TEST_CASE("proc-info: the body of a frame-pointer function, ops in any order") {
  Fixture fx;
  uint64_t first = fx.procedureG2();
  // Returned to after `call rsi` (bytes 10-12): rsp is 40 below the entry.
  UnwindResult r = fx.unwind(first, 12, Entry - 40, Entry - 8, false);
  REQUIRE(r.status == UnwindResult::Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Entry + 8);
  CHECK(r.caller.get(Rbp) == 0xb0b0u);
  CHECK(r.caller.get(R12) == 0xc1c1u);
}

TEST_CASE("proc-info: inside the prologue only the ops whose instruction ran apply") {
  Fixture fx;
  uint64_t first = fx.procedureG2();
  // At byte 4 (push r12 not yet run): rbp = rsp = entry - 8; r12 still its own.
  UnwindResult r = fx.unwind(first, 4, Entry - 8, Entry - 8, true);
  REQUIRE(r.status == UnwindResult::Status::Caller);
  CHECK(r.caller.sp() == Entry + 8);
  CHECK(r.caller.get(Rbp) == 0xb0b0u);
  CHECK(r.caller.get(R12) == 0x1212u);
  // At byte 1 (only push rbp run), rbp is not yet the frame pointer.
  UnwindResult early = fx.unwind(first, 1, Entry - 8, std::nullopt, true);
  REQUIRE(early.status == UnwindResult::Status::Caller);
  CHECK(early.caller.pc() == ReturnAddress);
  CHECK(early.caller.get(Rbp) == 0xb0b0u);
}

TEST_CASE("proc-info: a region with a negative count covers the end of the procedure") {
  Fixture fx;
  // Prologue/body as before, but the epilogue region says the frame is popped
  // (LABEL/COPY restore the entry state, where the return address is at rsp).
  uint64_t first = fx.region(10, {{LabelState, 0, 0, 1}, {Add, Rsp, 1, -8}, {SaveReg, Rsp, 4, Rbp}});
  uint64_t body = fx.region(6, {}, first);
  fx.region(-1, {{CopyState, 0, 0, 1}}, body);
  fx.word(Entry, ReturnAddress);
  UnwindResult r = fx.unwind(first, 19, Entry, std::nullopt, true); // at `ret`
  REQUIRE(r.status == UnwindResult::Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Entry + 8);
}

TEST_CASE("proc-info: looping regions and absurd op counts end in no info, not a hang") {
  Fixture fx;
  uint64_t first = fx.region(10, {});
  std::memcpy(&fx.regions[0], &first, 8); // next points to itself
  CHECK(fx.unwind(first, 12, Entry, std::nullopt, false).status == UnwindResult::Status::NoInfo);
  Fixture absurd;
  uint64_t region = absurd.region(10, {});
  uint32_t huge = 1u << 30;
  std::memcpy(&absurd.regions[12], &huge, 4);
  CHECK(absurd.unwind(region, 12, Entry, std::nullopt, false).status == UnwindResult::Status::NoInfo);
}

TEST_CASE("proc-info: stack adjustments that overflow end in no info (found by fuzz_libunwind_dynamic)") {
  Fixture fx;
  uint64_t region = fx.region(10, {{Add, Rsp, 0, INT64_MAX}, {Add, Rsp, 0, INT64_MAX}});
  CHECK(fx.unwind(region, 12, Entry, std::nullopt, false).status == UnwindResult::Status::NoInfo);
  Fixture spill;
  region = spill.region(10, {{Add, Rsp, 0, INT64_MIN}, {SpillSpRel, Rbp, 0, INT64_MIN}});
  CHECK(spill.unwind(region, 12, Entry, std::nullopt, false).status == UnwindResult::Status::NoInfo);
}
