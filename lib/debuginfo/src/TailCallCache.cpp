#include "stackwalk/debuginfo/TailCallCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/DataExtractor.h"
#include "llvm/Support/Endian.h"

using namespace llvm;

namespace stackwalk {
namespace {

// The frames of an entry: callee (0) or caller (1), then as TailCallFrame.
constexpr uint8_t InCallee = 0, InCaller = 1;

void put32(std::string &out, uint32_t value) {
  char bytes[4];
  support::endian::write32le(bytes, value);
  out.append(bytes, 4);
}

} // namespace

TailCallCache::TailCallCache(std::string dir, uint64_t maxBytes)
    : entries_(std::move(dir), ".tailcalls", ".frames", {'S', 'W', 'T', 'A', 'I', 'L', '0', '1'}, maxBytes) {}

std::string TailCallCache::entryPath(Symbolizer &symbolizer, std::span<const Frame> frames, size_t index) const {
  const Frame &callee = frames[index], &caller = frames[index + 1];
  if (!callee.module || !caller.module || !callee.module->image || !caller.module->image) return "";
  std::string calleeMap = symbolizer.symbolMapIdentity(*callee.module->image);
  std::string callerMap = symbolizer.symbolMapIdentity(*caller.module->image);
  if (calleeMap.empty() || callerMap.empty()) return "";
  uint64_t calleeBias = callee.module->loadBias(), callerBias = caller.module->loadBias();
  std::string key = "stackwalk tail calls 1;callee:" + calleeMap + ":" + utohexstr(callee.symbolAddress() - calleeBias) +
                    ";caller:" + callerMap + ":" + utohexstr(caller.ip - callerBias) + ":" +
                    utohexstr(caller.symbolAddress() - callerBias) +
                    (callee.module == caller.module ? ";one module" : ";two modules");
  return entries_.entryPath(arrayRefFromStringRef(key));
}

std::optional<std::vector<TailCallFrame>> TailCallCache::read(const std::string &path, std::span<const Frame> frames,
                                                              size_t index) const {
  std::unique_ptr<MemoryBuffer> entry = entries_.read(path);
  if (!entry) return std::nullopt;
  DataExtractor data(CacheDirectory::body(*entry), /*IsLittleEndian=*/true, 8);
  DataExtractor::Cursor cursor(0);
  std::vector<PlacedTailCall> found;
  bool known = true;
  for (uint32_t count = data.getU32(cursor); cursor && known && found.size() < count;) {
    PlacedTailCall frame;
    uint8_t where = data.getU8(cursor);
    known = where == InCallee || where == InCaller;
    frame.inCallee = where == InCallee;
    frame.fileAddress = data.getU64(cursor);
    if (data.getU8(cursor)) frame.line = data.getU32(cursor);
    frame.file = data.getBytes(cursor, data.getU32(cursor)).str();
    found.push_back(std::move(frame));
  }
  bool whole = cursor && known && data.eof(cursor);
  consumeError(cursor.takeError());
  return whole ? std::optional(placeInDump(found, frames, index)) : std::nullopt;
}

void TailCallCache::store(const std::string &path, const std::vector<TailCallFrame> &found,
                          std::span<const Frame> frames, size_t index) const {
  std::string bytes;
  put32(bytes, uint32_t(found.size()));
  for (const PlacedTailCall &frame : placeInFiles(found, frames, index)) {
    bytes.push_back(char(frame.inCallee ? InCallee : InCaller));
    char address[8];
    support::endian::write64le(address, frame.fileAddress);
    bytes.append(address, 8);
    bytes.push_back(char(frame.line.has_value()));
    if (frame.line) put32(bytes, *frame.line);
    put32(bytes, uint32_t(frame.file.size()));
    bytes += frame.file;
  }
  entries_.store(path, arrayRefFromStringRef(bytes));
}

} // namespace stackwalk
