// The module images a session has opened, kept for its whole length, so that
// every cache keyed by an image (symbols, CFI) stays valid for the session
// and is shared by its dumps with nothing to forget between them.
//
// An image is keyed by what determines everything read from it: a file by
// its path (the resolver checked its identity against the dump); an image
// read from a dump's memory (the vDSO, a GDB JIT object, a PE or ELF image
// rebuilt from a full-memory dump) by its name and the BLAKE3 hash of its
// bytes (a cryptographic hash, as fast as a copy: a full dump's rebuilt images
// are tens of MB), so identical bytes are one image whichever dump they came
// from. A build-id alone is not
// such a key: a stripped and an unstripped file share one, and a hostile dump
// can claim any build-id for its memory.
#pragma once

#include "stackwalk/core/BreakpadSymbolFile.h"
#include "stackwalk/core/ModuleImage.h"

#include <map>
#include <memory>
#include <string>

namespace stackwalk {

class ImageCache {
public:
  // The image opened earlier for this path, or null.
  std::shared_ptr<ModuleImage> file(const std::string &path) const;
  void addFile(const std::string &path, std::shared_ptr<ModuleImage> image);
  // The session's image with the same name and bytes as `image`, which
  // becomes it when there is none yet. Images with a file are returned as
  // they are.
  std::shared_ptr<ModuleImage> intern(std::shared_ptr<ModuleImage> image);
  // The Breakpad symbol file read earlier from this path, or null.
  std::shared_ptr<const BreakpadSymbolFile> symbolFile(const std::string &path) const;
  void addSymbolFile(const std::string &path, std::shared_ptr<const BreakpadSymbolFile> file);

private:
  std::map<std::string, std::shared_ptr<ModuleImage>> files_;
  std::map<std::string, std::shared_ptr<ModuleImage>> memory_; // by name and BLAKE3
  std::map<std::string, std::shared_ptr<const BreakpadSymbolFile>> symbolFiles_;
};

} // namespace stackwalk
