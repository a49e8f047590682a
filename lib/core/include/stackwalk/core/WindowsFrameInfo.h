// A 32-bit x86 Windows function's frame as its PDB describes it (FPO_DATA,
// type 0; FrameData, type 4): the sizes of its parameters, saved registers
// and locals, and either a program that recovers the caller's registers
// ("$T0 $ebp = $eip $T0 4 + ^ = ...") or whether it uses ebp for its own
// purposes. Read from a Breakpad symbol file's STACK WIN records (which
// dump_syms makes of the PDB's streams) or from the PDB itself (PdbFrameData).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace stackwalk {

struct WindowsFrameInfo {
  enum Type : uint32_t { Fpo = 0, FrameData = 4 };
  Type type = Fpo;
  uint64_t start = 0, size = 0;
  uint32_t prologSize = 0, epilogSize = 0, parameterSize = 0, savedRegisterSize = 0, localSize = 0,
           maxStackSize = 0;
  bool allocatesBasePointer = false;
  std::string program; // empty when the record has none
};

// How far back from the last record that starts at or below an offset to
// look for one that covers it: a function's frame data records overlap by
// a few (one per push of its prolog); a bound keeps a hostile file cheap.
constexpr size_t OverlappingFrameDataRecords = 16;

// Of records sorted by start, the one that covers `offset` and starts last
// (the function's record for that point of its prolog, as the PDB's readers
// choose); null when none does. `start` and `size` read a record's extent.
template <class Record, class Start, class Size>
const Record *lastRecordCovering(const std::vector<Record> &sorted, uint64_t offset, Start start, Size size) {
  auto after = std::upper_bound(sorted.begin(), sorted.end(), offset,
                                [&](uint64_t a, const Record &r) { return a < start(r); });
  for (size_t looked = 0; after != sorted.begin() && looked < OverlappingFrameDataRecords; ++looked) {
    --after;
    if (offset - start(*after) < size(*after)) return &*after;
  }
  return nullptr;
}

// The record for an offset of a function that has both kinds: FrameData
// (type 4) before FPO (type 0), as Breakpad and the PDB's readers prefer them.
template <class Record, class Start, class Size>
const Record *frameDataOrFpoCovering(const std::vector<Record> &frameData, const std::vector<Record> &fpo,
                                     uint64_t offset, Start start, Size size) {
  if (const Record *record = lastRecordCovering(frameData, offset, start, size)) return record;
  return lastRecordCovering(fpo, offset, start, size);
}

} // namespace stackwalk
