// Test inputs with compressed DWARF: this test program's file with a
// .debug_str section added and zlib-compressed by LLVM's objcopy, as debug
// packages have theirs; a temporary directory; file contents.
#pragma once

#include "stackwalk/core/ModuleImage.h"

#include "llvm/ObjCopy/CommonConfig.h"
#include "llvm/ObjCopy/ELF/ELFConfig.h"
#include "llvm/ObjCopy/ELF/ELFObjcopy.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace stackwalk::test {

inline llvm::SmallVector<char, 0> objcopy(llvm::StringRef bytes, const llvm::objcopy::CommonConfig &common) {
  auto input = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, "input"));
  REQUIRE(bool(input));
  llvm::objcopy::ELFConfig elf;
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream stream(out);
  REQUIRE_FALSE(bool(llvm::objcopy::elf::executeObjcopyOnBinary(
      common, elf, llvm::cast<llvm::object::ELFObjectFileBase>(**input), stream)));
  return out;
}

// This test program's file without its DWARF, with a .debug_str section of `text` (and the
// `more` sections) added, then zlib-compressed (as Debian's debug files have theirs), written to `path`.
inline std::unique_ptr<ModuleImage> compressedFile(const std::string &path, const std::string &text,
                                                   const std::vector<std::pair<std::string, std::string>> &more = {}) {
  std::ifstream self("/proc/self/exe", std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(self), std::istreambuf_iterator<char>()};
  llvm::objcopy::CommonConfig add, compress;
  add.StripDebug = true; // a build with -g has DWARF of its own
  add.AddSection.emplace_back(".debug_str", llvm::MemoryBuffer::getMemBufferCopy(text));
  for (const auto &[name, contents] : more)
    add.AddSection.emplace_back(name, llvm::MemoryBuffer::getMemBufferCopy(contents));
  compress.CompressionType = llvm::DebugCompressionType::Zlib;
  auto added = objcopy(bytes, add);
  auto compressed = objcopy(llvm::StringRef(added.data(), added.size()), compress);
  std::ofstream(path, std::ios::binary).write(compressed.data(), compressed.size());
  auto image = ModuleImage::open(path);
  REQUIRE(bool(image));
  return std::move(*image);
}

struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> dir;
    REQUIRE_FALSE(bool(llvm::sys::fs::createUniqueDirectory("inflated-test", dir)));
    path = std::string(dir);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name) const { return path + "/" + name; }
};

inline std::string debugStr(const ModuleImage &image) {
  auto section = image.section(".debug_str");
  return section ? section->data.str() : "";
}

inline std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void damage(const std::string &path, bool truncate) {
  std::string bytes = contents(path);
  if (truncate) bytes.resize(bytes.size() / 2);
  else bytes[bytes.size() / 2] ^= 0x55;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}


} // namespace stackwalk::test
