// The bytes of an object whose location DWARF describes: gathered from memory,
// registers, computed values and implicit values, piece by piece, with a mark
// on every byte that could not be recovered and the reason why.
#pragma once

#include "stackwalk/core/DwarfExpression.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

struct ObjectBytes {
  std::vector<uint8_t> bytes;
  std::vector<bool> known;         // one mark per byte
  std::optional<uint64_t> address; // where the whole object lives, when it is in memory
  std::string problem;             // why some bytes are unknown: the first reason met

  bool allKnown(uint64_t offset, uint64_t size) const;
  uint64_t unsignedAt(uint64_t offset, uint64_t size) const; // little-endian, size <= 8
};

struct ObjectSource {
  const MemorySource *memory = nullptr;
  const RegisterFile *registers = nullptr;
  bool callerFrame = false; // registers a callee may clobber are not this frame's
  OS os = OS::Linux;
};

// Objects larger than this are not read: their address is enough.
constexpr uint64_t MaxObjectBytes = 4096;

ObjectBytes gatherObject(const DwarfLocation &location, uint64_t size, const ObjectSource &source);

// Where the object lives, as people read it: "rdi", "memory 0x7ffd...",
// "computed value", "pieces: rbx, memory 0x7ffd...".
std::string describeLocation(const DwarfLocation &location, Arch arch);

// "rdi", or "register 40" for a number this architecture does not name.
std::string registerName(Arch arch, uint64_t number);

} // namespace stackwalk
