// A Breakpad symbol file's index (where each record starts, by address or
// id, and the MODULE and INFO header) as bytes, so that a later walk maps the
// text and reads the index instead of passing over hundreds of MB again.
// Read back, every array is bounds- and order-checked against the text it
// indexes: an index that does not fit is refused, never followed.
#include "stackwalk/core/BreakpadSymbolFile.h"

#include "stackwalk/core/Fail.h"

#include "llvm/Support/DataExtractor.h"
#include "llvm/Support/EndianStream.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace stackwalk {
namespace {

// The index's fields: numbers as 64-bit little-endian words, strings and
// arrays after their length.
class IndexWriter {
public:
  explicit IndexWriter(llvm::raw_ostream &out) : out_(out, llvm::endianness::little) {}
  void number(uint64_t value) { out_.write(value); }
  void text(const std::string &value) {
    number(value.size());
    out_.OS << value;
  }
  template <typename Range> void ranges(const std::vector<Range> &ranges) {
    number(ranges.size());
    for (const Range &range : ranges) {
      number(range.start);
      number(range.size);
      number(range.line);
    }
  }
  template <typename Pairs> void pairs(const Pairs &pairs) {
    number(pairs.size());
    for (const auto &[key, line] : pairs) {
      number(uint64_t(key));
      number(line);
    }
  }

private:
  llvm::support::endian::Writer out_;
};

class IndexReader {
public:
  IndexReader(llvm::ArrayRef<uint8_t> bytes, size_t textSize)
      : data_(bytes, /*IsLittleEndian=*/true, 8), cursor_(0), textSize_(textSize) {}

  uint64_t number() { return data_.getU64(cursor_); }
  std::string text() {
    uint64_t size = number();
    if (!fits(size, 1)) return "";
    return data_.getBytes(cursor_, size).str();
  }
  // How many entries of `entrySize` bytes follow, or 0 (with the cursor failed) when they cannot.
  uint64_t count(uint64_t entrySize) {
    uint64_t n = number();
    return fits(n, entrySize) ? n : 0;
  }
  // A record's offset: inside the text.
  uint64_t line() {
    uint64_t offset = number();
    if (offset >= textSize_) failed_ = true;
    return offset;
  }
  void refuse() { failed_ = true; }
  llvm::Error finish() {
    llvm::Error read = cursor_.takeError();
    if (read || failed_ || cursor_.tell() != data_.size()) {
      llvm::consumeError(std::move(read));
      return fail("a symbol file index that does not fit its text");
    }
    return llvm::Error::success();
  }

private:
  bool fits(uint64_t n, uint64_t entrySize) {
    if (cursor_ && n <= (data_.size() - cursor_.tell()) / entrySize) return true;
    failed_ = true;
    return false;
  }

  llvm::DataExtractor data_;
  llvm::DataExtractor::Cursor cursor_;
  size_t textSize_;
  bool failed_ = false;
};

template <typename Range> bool byStart(const std::vector<Range> &ranges) {
  return std::is_sorted(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) { return a.start < b.start; });
}

} // namespace

std::vector<uint8_t> BreakpadSymbolFile::serializedIndex() const {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream out(bytes);
  IndexWriter writer(out);
  for (const std::string *field : {&header_.os, &header_.arch, &header_.debugId, &header_.debugFile, &header_.codeId})
    writer.text(*field);
  writer.ranges(functions_);
  writer.ranges(cfi_);
  writer.ranges(frameData_);
  writer.ranges(fpo_);
  writer.pairs(publics_);
  writer.pairs(files_);
  writer.pairs(origins_);
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

llvm::Error BreakpadSymbolFile::readIndex(llvm::ArrayRef<uint8_t> bytes) {
  IndexReader reader(bytes, text_->getBufferSize());
  for (std::string *field : {&header_.os, &header_.arch, &header_.debugId, &header_.debugFile, &header_.codeId})
    *field = reader.text();
  for (std::vector<Range> *ranges : {&functions_, &cfi_, &frameData_, &fpo_}) {
    ranges->resize(reader.count(24));
    for (Range &range : *ranges) {
      range.start = reader.number();
      range.size = reader.number();
      range.line = reader.line();
    }
    if (!byStart(*ranges)) reader.refuse();
  }
  publics_.resize(reader.count(16));
  for (auto &[address, line] : publics_) {
    address = reader.number();
    line = reader.line();
  }
  if (!std::is_sorted(publics_.begin(), publics_.end(), [](auto &a, auto &b) { return a.first < b.first; }))
    reader.refuse();
  for (llvm::DenseMap<int64_t, size_t> *ids : {&files_, &origins_}) {
    uint64_t n = reader.count(16);
    ids->reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      int64_t id = int64_t(reader.number());
      size_t line = reader.line();
      // DenseMap keeps two keys for itself; the parse never makes them.
      if (id == llvm::DenseMapInfo<int64_t>::getEmptyKey() || id == llvm::DenseMapInfo<int64_t>::getTombstoneKey())
        reader.refuse();
      else
        ids->try_emplace(id, line);
    }
  }
  return reader.finish();
}

llvm::Expected<std::unique_ptr<BreakpadSymbolFile>>
BreakpadSymbolFile::withIndex(std::unique_ptr<llvm::MemoryBuffer> text, std::string path, llvm::ArrayRef<uint8_t> index) {
  std::unique_ptr<BreakpadSymbolFile> file(new BreakpadSymbolFile(std::move(text), std::move(path)));
  if (llvm::Error error = file->readIndex(index)) return error;
  return file;
}

} // namespace stackwalk
