// Walking the records of an ELF note segment or section (cores' PT_NOTE,
// NT_GNU_BUILD_ID in modules).
//
// Written by hand: LLVM's Elf_Note accessors assert on the p_align of 0 that
// Linux cores use, and return wrong bytes without asserts (FIELD-NOTES).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

namespace stackwalk {

struct ElfNote {
  std::string_view name; // without its terminating NUL
  uint32_t type;
  std::span<const uint8_t> desc;
};

// Calls `visit` for each well-formed note; stops at the first malformed one
// and returns false in that case. `visit` returns false to stop early.
bool forEachElfNote(std::span<const uint8_t> bytes, const std::function<bool(const ElfNote &)> &visit);

// The NT_GNU_BUILD_ID descriptor among the notes, empty when absent.
std::span<const uint8_t> findGnuBuildId(std::span<const uint8_t> noteBytes);

} // namespace stackwalk
