#include "ZlibStream.h"

#include "stackwalk/core/Fail.h"

#include <isa-l/igzip_lib.h>

#include "llvm/Support/Endian.h"

#include <algorithm>
#include <dlfcn.h>

namespace stackwalk {
namespace {

// The soname of Debian's libisal2 (ISA-L 2.x), whose inflate_state layout
// the header compiled against gives.
constexpr const char *IsalSoname = "libisal.so.2";

struct IsalLibrary {
  decltype(&::isal_inflate_init) inflateInit = nullptr;
  decltype(&::isal_read_zlib_header) readZlibHeader = nullptr;
  decltype(&::isal_inflate) inflate = nullptr;
  decltype(&::isal_adler32) adler32 = nullptr;

  // Loaded once per process; null when it cannot be.
  static const IsalLibrary *get() {
    static const IsalLibrary library = load();
    return library.inflate ? &library : nullptr;
  }

private:
  // Opened with dlopen itself, not LLVM's DynamicLibrary, whose handles are
  // closed by a static destructor when the process exits: a single dump's walk
  // leaves its threads to the exit (LeftToExit.h), and one still inflating
  // would then run code that is no longer mapped. This handle is never closed.
  static IsalLibrary load() {
    IsalLibrary loaded;
    void *library = dlopen(IsalSoname, RTLD_NOW | RTLD_LOCAL);
    if (!library) return loaded;
    loaded.inflateInit = reinterpret_cast<decltype(inflateInit)>(dlsym(library, "isal_inflate_init"));
    loaded.readZlibHeader = reinterpret_cast<decltype(readZlibHeader)>(dlsym(library, "isal_read_zlib_header"));
    loaded.inflate = reinterpret_cast<decltype(inflate)>(dlsym(library, "isal_inflate"));
    loaded.adler32 = reinterpret_cast<decltype(adler32)>(dlsym(library, "isal_adler32"));
    if (!loaded.inflateInit || !loaded.readZlibHeader || !loaded.adler32) loaded.inflate = nullptr;
    return loaded;
  }
};

} // namespace

struct ZlibStream::State {
  const IsalLibrary &isal;
  inflate_state inflater;
  llvm::ArrayRef<uint8_t> input;
  bool failed = false;
};

ZlibStream::ZlibStream(std::unique_ptr<State> state) : state_(std::move(state)) {}
ZlibStream::~ZlibStream() = default;

std::unique_ptr<ZlibStream> ZlibStream::open(llvm::ArrayRef<uint8_t> input) {
  const IsalLibrary *isal = IsalLibrary::get();
  if (!isal || input.size() > UINT32_MAX) return nullptr; // ISA-L counts its input in 32 bits
  auto state = std::unique_ptr<State>(new State{*isal, {}, input});
  inflate_state &inflater = state->inflater;
  isal->inflateInit(&inflater);
  inflater.next_in = const_cast<uint8_t *>(input.data());
  inflater.avail_in = uint32_t(input.size());
  // The header read here, then raw deflate (ISA-L's default): with ISAL_ZLIB
  // it would compute the Adler-32 as it inflates, and a walk that reads only
  // the first units never reaches the trailer to compare it with.
  isal_zlib_header header{};
  if (isal->readZlibHeader(&inflater, &header) != ISAL_DECOMP_OK || header.dict_flag) return nullptr;
  inflater.crc_flag = ISAL_DEFLATE;
  return std::unique_ptr<ZlibStream>(new ZlibStream(std::move(state)));
}

llvm::Expected<size_t> ZlibStream::inflate(llvm::MutableArrayRef<uint8_t> out) {
  inflate_state &inflater = state_->inflater;
  if (state_->failed) return fail("the stream failed before");
  size_t written = 0;
  // ISA-L counts its output in 32 bits too: a piece at a time.
  while (written < out.size() && !finished()) {
    size_t piece = std::min<size_t>(out.size() - written, UINT32_MAX);
    inflater.next_out = out.data() + written;
    inflater.avail_out = uint32_t(piece);
    int result = state_->isal.inflate(&inflater);
    written += piece - inflater.avail_out;
    if (result != ISAL_DECOMP_OK) {
      state_->failed = true;
      return fail("the stream is not deflate");
    }
    if (!finished() && inflater.avail_out != 0) { // all input read, the stream not ended
      state_->failed = true;
      return fail("the stream ends early");
    }
  }
  return written;
}

bool ZlibStream::finished() const { return state_->inflater.block_state == ISAL_BLOCK_FINISH; }

size_t ZlibStream::consumed() const { return state_->input.size() - state_->inflater.avail_in; }

bool ZlibStream::checksumMatches(llvm::ArrayRef<uint8_t> inflated) const {
  const inflate_state &inflater = state_->inflater;
  if (!finished() || inflater.read_in_length < 0 || uint32_t(inflated.size()) != inflater.total_out)
    return false; // (ISA-L counts its output in 32 bits)
  // The trailer follows the deflate data's last byte; ISA-L may have taken
  // whole bytes past it into its bit buffer.
  size_t end = consumed() - size_t(inflater.read_in_length / 8);
  if (end > state_->input.size() || state_->input.size() - end < 4) return false;
  uint32_t trailer = llvm::support::endian::read32be(state_->input.data() + end);
  return state_->isal.adler32(1, inflated.data(), inflated.size()) == trailer;
}

} // namespace stackwalk
