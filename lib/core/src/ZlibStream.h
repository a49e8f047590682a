// A zlib stream inflated a piece at a time, in order, by ISA-L's igzip
// (Debian's libisal2): what lets a walk read the first units of a debug
// file's .debug_info while the rest still inflates (PrefetchedTwin.h).
// libdeflate, which inflates every other section, has no streaming
// interface; zlib's inflate streams at half the speed (libc's .debug_info:
// 23 ms against ISA-L's 11 and libdeflate's 10.5, 2026-11-29). ISA-L is
// loaded when a stream is first opened rather than linked, as libcurl is
// (CurlLibrary.h): each library linked costs every run its loading, and most
// runs inflate nothing.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>

namespace stackwalk {

class ZlibStream {
public:
  // A stream over a zlib stream's bytes (a header, deflate data, an Adler-32
  // trailer), which must outlive it; null when libisal.so.2 cannot be loaded
  // or the header is not a zlib header without a preset dictionary.
  static std::unique_ptr<ZlibStream> open(llvm::ArrayRef<uint8_t> input);
  ~ZlibStream();

  // Inflates the next bytes of the stream into `out`, filling it unless the
  // stream ends first; how many bytes it wrote. An error when the data is
  // not deflate, or when the stream ends before `out` is full or past the
  // end of the input. The checksum is not checked here (checksumMatches).
  llvm::Expected<size_t> inflate(llvm::MutableArrayRef<uint8_t> out);
  // Whether the deflate data's end has been read.
  bool finished() const;
  // Once finished: whether `inflated`, all the stream inflated, has the
  // Adler-32 the trailer gives. Computed over the whole at the end, not as
  // the pieces come, so that a reader that needs only the first pieces (a
  // walk's first units of .debug_info) spends nothing on it.
  bool checksumMatches(llvm::ArrayRef<uint8_t> inflated) const;
  // How many bytes of the input it has read, which it reads no more.
  size_t consumed() const;

private:
  struct State;
  explicit ZlibStream(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace stackwalk
