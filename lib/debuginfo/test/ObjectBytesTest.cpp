#include "ObjectBytes.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using Kind = DwarfLocationPiece::Kind;

namespace {

DwarfLocationPiece piece(Kind kind, uint64_t value, std::optional<uint64_t> bits = std::nullopt) {
  DwarfLocationPiece p;
  p.kind = kind;
  p.value = value;
  p.sizeInBits = bits;
  return p;
}

struct Frame {
  BufferMemory memory;
  RegisterFile regs{Arch::X86_64};
  Frame() {
    memory.add(0x1000, {1, 2, 3, 4, 5, 6, 7, 8});
    regs.set(3, 0x1122334455667788); // rbx
  }
  ObjectSource source(bool callerFrame) { return {&memory, &regs, callerFrame, OS::Linux}; }
};

} // namespace

TEST_CASE("an object in memory, in a register, or computed") {
  Frame frame;
  ObjectBytes object = gatherObject({piece(Kind::Memory, 0x1000)}, 4, frame.source(true));
  CHECK(object.allKnown(0, 4));
  CHECK(object.unsignedAt(0, 4) == 0x04030201);
  CHECK(object.address == 0x1000u);
  object = gatherObject({piece(Kind::Register, 3)}, 8, frame.source(true));
  CHECK(object.unsignedAt(0, 8) == 0x1122334455667788);
  object = gatherObject({piece(Kind::Value, 199)}, 4, frame.source(true));
  CHECK(object.unsignedAt(0, 4) == 199);
}

TEST_CASE("a register the frame does not have: why, and caller-saved ones in caller frames named so") {
  Frame frame;
  ObjectBytes object = gatherObject({piece(Kind::Register, 5)}, 4, frame.source(true)); // rdi
  CHECK_FALSE(object.allKnown(0, 4));
  CHECK(object.problem == "held in rdi, a caller-saved register that this caller frame does not preserve");
  object = gatherObject({piece(Kind::Register, 12)}, 4, frame.source(true)); // r12: callee-saved, not recovered
  CHECK(object.problem == "held in r12, which is not known in this frame");
  object = gatherObject({piece(Kind::Register, 5)}, 4, frame.source(false));
  CHECK(object.problem == "held in rdi, which is not known in this frame");
}

TEST_CASE("pieces: parts from several places, missing parts marked") {
  Frame frame;
  ObjectBytes object = gatherObject({piece(Kind::Register, 3, 32), piece(Kind::Empty, 0, 32), piece(Kind::Memory, 0x1004, 32)},
                                    12, frame.source(true));
  CHECK(object.unsignedAt(0, 4) == 0x55667788);
  CHECK(object.allKnown(0, 4));
  CHECK_FALSE(object.allKnown(4, 4));
  CHECK(object.allKnown(8, 4));
  CHECK(object.unsignedAt(8, 4) == 0x08070605);
  CHECK(object.problem == "optimized out");
  object = gatherObject({piece(Kind::Memory, 0x1000, 3)}, 1, frame.source(true));
  CHECK(object.problem == "a bit-sized piece");
}

TEST_CASE("unreadable memory, implicit pointers and large objects say why") {
  Frame frame;
  CHECK(gatherObject({piece(Kind::Memory, 0x5000)}, 4, frame.source(true)).problem == "memory at 0x5000 is not in the dump");
  CHECK(gatherObject({piece(Kind::ImplicitPointer, 0)}, 8, frame.source(true)).problem.find("DW_OP_implicit_pointer") !=
        std::string::npos);
  ObjectBytes big = gatherObject({piece(Kind::Memory, 0x1000)}, 1 << 20, frame.source(true));
  CHECK(big.bytes.empty());
  CHECK(big.address == 0x1000u);
  CHECK(describeLocation({piece(Kind::Register, 3, 32), piece(Kind::Memory, 0x1004, 32)}, Arch::X86_64) ==
        "pieces: rbx, memory 0x1004");
}
