#include "MinidumpReader.h"

#include "stackwalk/core/Fail.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

namespace stackwalk::minidump {

namespace {
constexpr size_t MaxStreams = 4096;
constexpr uint32_t MaxStringBytes = 64 * 1024;
// Far above what writers put in a dump (module names, Crashpad annotations of
// at most 20 KiB each), far below what a report can hold.
constexpr uint64_t MaxStringBytesPerDump = 8 << 20;
constexpr size_t MaxWarnings = 256;

// "the Exception stream (0x6)": its name as LLVM's table of stream types has it.
std::string streamName(StreamType type) {
  std::string code = "0x" + llvm::utohexstr(uint32_t(type), true);
  switch (uint32_t(type)) {
#define HANDLE_MDMP_STREAM_TYPE(CODE, NAME)                                                                           \
  case CODE:                                                                                                           \
    return "the " #NAME " stream (" + code + ")";
#include "llvm/BinaryFormat/MinidumpConstants.def"
  }
  return "stream " + code;
}

} // namespace

Reader::Reader(std::span<const uint8_t> file, std::vector<std::string> &warnings)
    : file_(file), warnings_(warnings), stringBytesLeft_(MaxStringBytesPerDump) {}

void Reader::warn(std::string message) const {
  if (warningsGiven_ < MaxWarnings) {
    if (!given_.insert(message).second) return;
    warnings_.push_back(std::move(message));
  } else if (warningsGiven_ == MaxWarnings) {
    warnings_.push_back("further warnings about the dump's streams were not kept");
  } else {
    return;
  }
  ++warningsGiven_;
}

bool Reader::takeStringBytes(uint32_t length) const {
  if (stringBytesLeft_ == 0) return false;
  if (length > stringBytesLeft_) {
    stringBytesLeft_ = 0;
    // Past the bound on other warnings: it says what is missing.
    warnings_.push_back("the dump's strings past " + std::to_string(MaxStringBytesPerDump >> 20) + " MiB were not read");
    return false;
  }
  stringBytesLeft_ -= length;
  return true;
}

llvm::Expected<Reader> Reader::create(std::span<const uint8_t> file, std::vector<std::string> &warnings) {
  Reader reader(file, warnings);
  auto header = reader.readAt<llvm::minidump::Header>(0);
  if (!header || header->Signature != llvm::minidump::Header::MagicSignature)
    return fail("not a minidump (no MDMP signature)");
  if ((header->Version & 0xffff) != llvm::minidump::Header::MagicVersion)
    warnings.push_back("unexpected minidump version 0x" + llvm::utohexstr(header->Version & 0xffff, true));
  reader.timeDateStamp_ = header->TimeDateStamp;
  uint64_t count = header->NumberOfStreams;
  uint64_t rva = header->StreamDirectoryRVA;
  uint64_t fit = rva > file.size() ? 0 : (file.size() - rva) / sizeof(llvm::minidump::Directory);
  if (count > fit || count > MaxStreams) {
    warnings.push_back("the stream directory claims " + std::to_string(count) + " streams; " +
                       std::to_string(std::min<uint64_t>(fit, MaxStreams)) + " are read");
    count = std::min<uint64_t>(fit, MaxStreams);
  }
  if (count == 0)
    return fail("the minidump's stream directory is empty or outside the file");
  for (uint64_t i = 0; i < count; ++i)
    reader.directory_.push_back(*reader.readAt<llvm::minidump::Directory>(rva + i * sizeof(llvm::minidump::Directory)));
  return reader;
}

std::span<const uint8_t> Reader::clip(uint64_t rva, uint64_t size) const {
  if (rva > file_.size()) return {};
  return file_.subspan(rva, std::min<uint64_t>(size, file_.size() - rva));
}

std::optional<std::string> Reader::cut(uint64_t rva, uint64_t size, const std::string &what) const {
  uint64_t present = clip(rva, size).size();
  if (rva > file_.size() && size) return what + " lies outside the file";
  if (present < size)
    return what + " runs past the end of the file (" + std::to_string(size) + " bytes claimed, " +
           std::to_string(present) + " present)";
  return std::nullopt;
}

std::span<const uint8_t> Reader::slice(uint64_t rva, uint64_t size, const std::string &what) const {
  if (std::optional<std::string> lost = cut(rva, size, what)) warn(*lost);
  return clip(rva, size);
}

std::span<const uint8_t> Reader::slice(LocationDescriptor location, const std::string &what) const {
  return slice(location.RVA, location.DataSize, what);
}

const llvm::minidump::Directory *Reader::entry(StreamType type) const {
  for (const llvm::minidump::Directory &entry : directory_)
    if (entry.Type == type) return &entry;
  return nullptr;
}

std::optional<std::span<const uint8_t>> Reader::stream(StreamType type) const {
  const llvm::minidump::Directory *found = entry(type);
  if (!found) return std::nullopt;
  return slice(found->Location, streamName(type));
}

std::optional<std::string> Reader::streamCut(StreamType type) const {
  const llvm::minidump::Directory *found = entry(type);
  if (!found) return std::nullopt;
  return cut(found->Location.RVA, found->Location.DataSize, streamName(type));
}

std::vector<std::span<const uint8_t>> Reader::sizedEntries(std::span<const uint8_t> stream, bool count64,
                                                           size_t minEntrySize, const std::string &what) const {
  std::vector<std::span<const uint8_t>> out;
  auto headerSize = read<uint32_t>(stream, 0);
  auto entrySize = read<uint32_t>(stream, 4);
  std::optional<uint64_t> count = read<uint64_t>(stream, 8);
  if (!count64) count = read<uint32_t>(stream, 8);
  if (!headerSize || !entrySize || !count || *entrySize < minEntrySize || *headerSize > stream.size()) {
    warn(what + ": malformed header");
    return out;
  }
  uint64_t fit = (stream.size() - *headerSize) / *entrySize;
  if (*count > fit) warn(what + ": " + std::to_string(*count) + " entries claimed, " + std::to_string(fit) + " present");
  for (uint64_t i = 0; i < std::min(*count, fit); ++i) out.push_back(stream.subspan(*headerSize + i * *entrySize, *entrySize));
  return out;
}

std::optional<std::string> Reader::string(uint64_t rva) const {
  auto length = readAt<uint32_t>(rva);
  if (!length || *length > MaxStringBytes || *length % 2) return std::nullopt;
  std::span<const uint8_t> bytes = slice(rva + 4, *length, "a string");
  if (bytes.size() != *length || !takeStringBytes(*length)) return std::nullopt;
  // Strings sit at any offset: assemble the UTF-16 units byte by byte.
  std::vector<llvm::UTF16> units(bytes.size() / 2);
  for (size_t i = 0; i < units.size(); ++i) units[i] = llvm::UTF16(bytes[2 * i] | bytes[2 * i + 1] << 8);
  return utf16ToUtf8(std::move(units));
}

std::string Reader::utf16ToUtf8(std::vector<llvm::UTF16> units) {
  auto high = [](llvm::UTF16 u) { return u >= 0xd800 && u <= 0xdbff; };
  auto low = [](llvm::UTF16 u) { return u >= 0xdc00 && u <= 0xdfff; };
  for (size_t i = 0; i < units.size(); ++i) {
    if (high(units[i]) && i + 1 < units.size() && low(units[i + 1])) ++i; // a pair
    else if (high(units[i]) || low(units[i])) units[i] = 0xfffd;
  }
  std::string out;
  llvm::convertUTF16ToUTF8String(units, out); // cannot fail without lone surrogates
  return out;
}

std::optional<std::string> Reader::utf8String(uint64_t rva) const {
  auto length = readAt<uint32_t>(rva);
  if (!length || *length > MaxStringBytes) return std::nullopt;
  std::span<const uint8_t> bytes = slice(rva + 4, *length, "a string");
  if (bytes.size() != *length || !takeStringBytes(*length)) return std::nullopt;
  return std::string(bytes.begin(), bytes.end());
}

} // namespace stackwalk::minidump
