// A dump's file, read two ways: mapped, for the loaders that parse its headers,
// notes and streams in place, and through a cache of small blocks read with
// pread, for the process memory it holds, which a walk reads in scattered
// pieces (a word of each stack, a frame record, an instruction). Read through
// the mapping, each page touched made the kernel map the 64 KiB around it
// (fault-around), all of which counts in the walk's RSS: a 201-thread core's
// stacks mapped 13.5 MiB of its 52 MiB, the walk's peak 37.9 MiB; read in
// blocks, 25.7 MiB.
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

namespace stackwalk {

class DumpFile {
public:
  static constexpr size_t BlockSize = 4096;
  // Reads at least this long go straight to the caller's buffer, uncached.
  static constexpr size_t DirectReadSize = 4 * BlockSize;
  // Blocks kept at most (16 MiB); the cache starts again empty past it.
  static constexpr size_t MaxBlocks = 4096;

  // The file at `path`: a regular file is mapped and kept open for block
  // reads; anything else (a pipe, standard input as "-") is read whole.
  static llvm::Expected<std::shared_ptr<DumpFile>> open(const std::string &path);
  // Bytes already in memory (tests, fuzz targets): copies come from them.
  explicit DumpFile(std::unique_ptr<llvm::MemoryBuffer> bytes, int descriptor = -1);
  ~DumpFile();
  DumpFile(const DumpFile &) = delete;
  DumpFile &operator=(const DumpFile &) = delete;

  const llvm::MemoryBuffer &buffer() const { return *bytes_; }
  std::span<const uint8_t> bytes() const {
    return {reinterpret_cast<const uint8_t *>(bytes_->getBufferStart()), bytes_->getBufferSize()};
  }

  // Copies the file's bytes [offset, offset + out.size()), which must lie in
  // bytes(); false when the file no longer holds them (shortened since it was
  // opened).
  bool copy(uint64_t offset, std::span<uint8_t> out) const;

private:
  using Block = std::array<uint8_t, BlockSize>;
  bool readFully(uint64_t offset, std::span<uint8_t> out) const;
  const Block *blockAt(uint64_t index) const; // with mutex_ held

  std::unique_ptr<llvm::MemoryBuffer> bytes_;
  int descriptor_; // -1: copies come from bytes_
  mutable std::mutex mutex_;
  mutable std::unordered_map<uint64_t, std::unique_ptr<Block>> blocks_; // by offset / BlockSize
};

} // namespace stackwalk
