// Bounds-checked access to a minidump's header, stream directory, strings and
// lists. Uses LLVM's struct definitions (llvm/BinaryFormat/Minidump.h) as typed
// views, but not llvm::object::MinidumpFile, which rejects a whole dump for
// one stream that runs past the end of the file.
#pragma once

#include "llvm/Support/ConvertUTF.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/BinaryFormat/Minidump.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stackwalk::minidump {

using llvm::minidump::LocationDescriptor;
using llvm::minidump::StreamType;

class Reader {
public:
  static llvm::Expected<Reader> create(std::span<const uint8_t> file, std::vector<std::string> &warnings);

  uint32_t timeDateStamp() const { return timeDateStamp_; }

  // The first stream of a type, clipped to the file (with a warning).
  std::optional<std::span<const uint8_t>> stream(StreamType type) const;
  // What the file lacks of the first stream of a type ("the Exception stream
  // (0x6) lies outside the file"), as stream()'s warning says; nullopt when
  // the file holds all of it, or the dump has no such stream.
  std::optional<std::string> streamCut(StreamType type) const;
  // Bytes a location descriptor names; empty (with a warning) when outside the file.
  std::span<const uint8_t> slice(LocationDescriptor location, const std::string &what) const;
  std::span<const uint8_t> slice(uint64_t rva, uint64_t size, const std::string &what) const;
  // The part of [rva, rva + size) that the file holds, without a warning (for
  // callers that say once what a whole list lost).
  std::span<const uint8_t> clip(uint64_t rva, uint64_t size) const;

  template <typename T> std::optional<T> read(std::span<const uint8_t> bytes, uint64_t offset) const {
    if (offset > bytes.size() || sizeof(T) > bytes.size() - offset) return std::nullopt;
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
  }
  template <typename T> std::optional<T> readAt(uint64_t rva) const { return read<T>(file_, rva); }

  // A MINIDUMP_STRING (u32 byte length, UTF-16LE) as UTF-8.
  std::optional<std::string> string(uint64_t rva) const;
  // UTF-16 as Windows names hold it: a lone surrogate (NTFS allows any 16-bit
  // unit) becomes U+FFFD, so the rest of the name survives.
  static std::string utf16ToUtf8(std::vector<llvm::UTF16> units);
  // A Crashpad MinidumpUTF8String (u32 length, bytes).
  std::optional<std::string> utf8String(uint64_t rva) const;
  // True once the dump's strings have used their per-dump budget: lists of
  // string RVAs may name one long string many times, so without it a small
  // file decodes to gigabytes of text. Readers of such lists stop early.
  bool stringBudgetSpent() const { return stringBytesLeft_ == 0; }

  // The entries of a list stream {u32 count; T entries[]}, tolerating the
  // 4 bytes of padding some writers put after the count; a count that does
  // not fit is cut to what the stream holds (with a warning).
  template <typename T> std::vector<T> list(std::span<const uint8_t> stream, const std::string &what) const {
    return listOf<T>(stream, sizeof(T), what);
  }
  template <typename T>
  std::vector<T> listOf(std::span<const uint8_t> stream, size_t entrySize, const std::string &what) const;

  // The entries of a list that declares its own sizes: {u32 SizeOfHeader;
  // u32 SizeOfEntry; u32 or u64 NumberOfEntries} (MemoryInfoList,
  // UnloadedModuleList). Entries must be at least minEntrySize bytes; a count
  // that does not fit is cut (with a warning).
  std::vector<std::span<const uint8_t>> sizedEntries(std::span<const uint8_t> stream, bool count64, size_t minEntrySize,
                                                     const std::string &what) const;

  // Kept up to a bound: a hostile list can fail once per entry. A message
  // given before is not kept again: a hostile dump repeats one damage in
  // every entry of a list, and a stream read twice (the thread list, for
  // threads and for their stacks' memory) would say the same twice.
  void warn(std::string message) const;

private:
  Reader(std::span<const uint8_t> file, std::vector<std::string> &warnings);
  // Takes length bytes from the string budget; false (with one warning) when spent.
  bool takeStringBytes(uint32_t length) const;
  // The directory's first entry for a stream type, or null.
  const llvm::minidump::Directory *entry(StreamType type) const;
  // What the file lacks of [rva, rva + size), named `what`; nullopt when it holds all of it.
  std::optional<std::string> cut(uint64_t rva, uint64_t size, const std::string &what) const;

  std::span<const uint8_t> file_;
  std::vector<llvm::minidump::Directory> directory_;
  uint32_t timeDateStamp_ = 0;
  std::vector<std::string> &warnings_;
  mutable size_t warningsGiven_ = 0;
  mutable llvm::StringSet<> given_;
  mutable uint64_t stringBytesLeft_;
};

template <typename T>
std::vector<T> Reader::listOf(std::span<const uint8_t> stream, size_t entrySize, const std::string &what) const {
  std::vector<T> out;
  auto count = read<uint32_t>(stream, 0);
  if (!count || entrySize < sizeof(T)) return out;
  size_t start = 4;
  if (uint64_t(*count) * entrySize + 8 == stream.size()) start = 8;
  uint64_t fit = (stream.size() - start) / entrySize;
  if (*count > fit) warn(what + ": " + std::to_string(*count) + " entries claimed, " + std::to_string(fit) + " present");
  for (uint64_t i = 0; i < std::min<uint64_t>(*count, fit); ++i) out.push_back(*read<T>(stream, start + i * entrySize));
  return out;
}

} // namespace stackwalk::minidump
