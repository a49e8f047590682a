#include "stackwalk/core/BreakpadSymbolFile.h"
#include "stackwalk/core/Demangle.h"
#include "stackwalk/core/Fail.h"
#include "stackwalk/core/RegularFile.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using llvm::StringRef;

namespace stackwalk {
namespace {

// The record's fields: at most `fields` of them, the last one the rest of the
// line (a name may hold spaces).
llvm::SmallVector<StringRef, 8> fieldsOf(StringRef line, size_t fields) {
  llvm::SmallVector<StringRef, 8> out;
  line = line.ltrim(" \t");
  while (!line.empty() && out.size() + 1 < fields) {
    auto [field, rest] = line.split(' ');
    out.push_back(field.trim(" \t"));
    line = rest.ltrim(" \t");
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

StringRef firstField(StringRef line) { return line.ltrim(" \t").split(' ').first; }

std::optional<uint64_t> hexNumber(StringRef text) {
  uint64_t value;
  if (text.empty() || text.getAsInteger(16, value)) return std::nullopt;
  return value;
}

std::optional<int64_t> decimalNumber(StringRef text) {
  int64_t value;
  if (text.empty() || text.getAsInteger(10, value)) return std::nullopt;
  return value;
}

bool isLineRecord(StringRef line) { return !line.empty() && llvm::isHexDigit(line[0]) && !llvm::isUpper(line[0]); }

// "FUNC [m] <address> <size> <parameter size> <name>" or
// "PUBLIC [m] <address> <parameter size> <name>": the fields after "m".
llvm::SmallVector<StringRef, 8> symbolFields(StringRef afterKeyword, size_t fields) {
  auto all = fieldsOf(afterKeyword, fields + 1);
  if (!all.empty() && all[0] == "m") return fieldsOf(afterKeyword.ltrim(" \t").drop_front(1), fields);
  return fieldsOf(afterKeyword, fields);
}

// An INLINE record: "INLINE <depth> <call line> [<call file>] <origin> (<address> <size>)+";
// the older form has no call file, which the parity of the field count tells.
struct InlineRecord {
  int64_t depth = 0, callLine = 0, origin = 0;
  std::optional<int64_t> callFile;
  bool covers = false;
};

std::optional<InlineRecord> parseInline(StringRef afterKeyword, uint64_t offset) {
  llvm::SmallVector<StringRef, 16> fields;
  afterKeyword.split(fields, ' ', -1, /*KeepEmpty=*/false);
  if (fields.size() < 5) return std::nullopt;
  InlineRecord record;
  bool withFile = fields.size() % 2 == 0;
  size_t next = 0;
  auto depth = decimalNumber(fields[next++]), line = decimalNumber(fields[next++]);
  std::optional<int64_t> file = withFile ? decimalNumber(fields[next++]) : std::optional<int64_t>(-1);
  auto origin = decimalNumber(fields[next++]);
  if (!depth || !line || !file || !origin || *depth < 0) return std::nullopt;
  record.depth = *depth;
  record.callLine = *line;
  record.origin = *origin;
  if (withFile) record.callFile = *file;
  for (; next + 1 < fields.size(); next += 2) {
    auto start = hexNumber(fields[next]), size = hexNumber(fields[next + 1]);
    if (!start || !size) return std::nullopt;
    if (offset >= *start && offset - *start < *size) record.covers = true;
  }
  return record;
}

std::string demangled(StringRef name) { return demangledName(name); }

// "STACK WIN <type> <start> <size> <prolog> <epilog> <parameters> <saved
// registers> <locals> <max stack> <has program> <program | allocates ebp>":
// the fields after "STACK WIN ", all hexadecimal but the last.
constexpr size_t StackWinFields = 11;

std::optional<WindowsFrameInfo> parseStackWin(StringRef afterKeyword) {
  auto f = fieldsOf(afterKeyword, StackWinFields);
  if (f.size() != StackWinFields) return std::nullopt;
  uint64_t numbers[StackWinFields - 1];
  for (size_t i = 0; i + 1 < StackWinFields; ++i) {
    std::optional<uint64_t> number = hexNumber(f[i]);
    if (!number || (i != 1 && i != 2 && *number > UINT32_MAX)) return std::nullopt;
    numbers[i] = *number;
  }
  if (numbers[0] != WindowsFrameInfo::Fpo &&
      numbers[0] != WindowsFrameInfo::FrameData)
    return std::nullopt;
  WindowsFrameInfo info;
  info.type = WindowsFrameInfo::Type(numbers[0]);
  info.start = numbers[1];
  info.size = numbers[2];
  info.prologSize = uint32_t(numbers[3]);
  info.epilogSize = uint32_t(numbers[4]);
  info.parameterSize = uint32_t(numbers[5]);
  info.savedRegisterSize = uint32_t(numbers[6]);
  info.localSize = uint32_t(numbers[7]);
  info.maxStackSize = uint32_t(numbers[8]);
  if (numbers[9]) info.program = f[10].trim(" \t").str();
  else info.allocatesBasePointer = f[10].trim(" \t") != "0";
  return info;
}

} // namespace

BreakpadSymbolFile::BreakpadSymbolFile(std::unique_ptr<llvm::MemoryBuffer> text, std::string path)
    : text_(std::move(text)), path_(std::move(path)) {}

llvm::Expected<std::unique_ptr<BreakpadSymbolFile>> BreakpadSymbolFile::open(const std::string &path) {
  auto text = readRegularFile(path);
  if (!text) return fail("cannot read " + path + ": " + text.getError().message());
  return parse(std::move(*text), path);
}

llvm::Expected<std::unique_ptr<BreakpadSymbolFile>> BreakpadSymbolFile::parse(std::unique_ptr<llvm::MemoryBuffer> text,
                                                                               std::string path) {
  std::unique_ptr<BreakpadSymbolFile> file(new BreakpadSymbolFile(std::move(text), std::move(path)));
  if (llvm::Error error = file->index()) return error;
  return file;
}

StringRef BreakpadSymbolFile::lineAt(size_t offset) const {
  StringRef data = text_->getBuffer();
  if (offset >= data.size()) return {};
  StringRef line = data.substr(offset);
  return line.take_until([](char c) { return c == '\n'; }).rtrim("\r");
}

std::optional<StringRef> BreakpadSymbolFile::recordAt(size_t offset, StringRef keyword) const {
  StringRef line = lineAt(offset);
  if (!line.consume_front(keyword)) return std::nullopt;
  return line;
}

size_t BreakpadSymbolFile::nextLine(size_t offset) const {
  StringRef data = text_->getBuffer();
  size_t end = data.find('\n', offset);
  return end == StringRef::npos ? data.size() : end + 1;
}

llvm::Error BreakpadSymbolFile::index() {
  StringRef first = lineAt(0);
  if (!first.consume_front("MODULE ")) return fail(path_ + " is not a Breakpad symbol file (no MODULE record)");
  auto module = fieldsOf(first, 4);
  if (module.size() != 4) return fail(path_ + ": malformed MODULE record");
  header_ = Header{module[0].str(), module[1].str(), module[2].str(), module[3].str(), ""};
  size_t size = text_->getBufferSize();
  for (size_t offset = nextLine(0); offset < size; offset = nextLine(offset)) {
    StringRef line = lineAt(offset);
    if (line.empty() || isLineRecord(line)) continue; // a function's lines: read with the function
    if (line.consume_front("FUNC ")) {
      auto f = symbolFields(line, 4);
      auto start = f.size() == 4 ? hexNumber(f[0]) : std::nullopt, length = f.size() == 4 ? hexNumber(f[1]) : std::nullopt;
      if (start && length) functions_.push_back(Range{*start, *length, offset});
    } else if (line.consume_front("PUBLIC ")) {
      auto f = symbolFields(line, 3);
      if (auto start = f.size() == 3 ? hexNumber(f[0]) : std::nullopt) publics_.emplace_back(*start, offset);
    } else if (line.consume_front("STACK CFI INIT ")) {
      auto f = fieldsOf(line, 3);
      auto start = f.size() == 3 ? hexNumber(f[0]) : std::nullopt, length = f.size() == 3 ? hexNumber(f[1]) : std::nullopt;
      if (start && length) cfi_.push_back(Range{*start, *length, offset});
    } else if (line.consume_front("STACK WIN ")) {
      if (auto info = parseStackWin(line); info && info->size > 0)
        (info->type == WindowsFrameInfo::FrameData ? frameData_ : fpo_).push_back(Range{info->start, info->size, offset});
    } else if (line.consume_front("FILE ")) {
      if (auto id = decimalNumber(firstField(line))) files_.try_emplace(*id, offset);
    } else if (line.consume_front("INLINE_ORIGIN ")) {
      if (auto id = decimalNumber(firstField(line))) origins_.try_emplace(*id, offset);
    } else if (line.consume_front("INFO CODE_ID ")) {
      header_.codeId = firstField(line).str();
    }
  }
  auto byStart = [](const Range &a, const Range &b) { return a.start < b.start; };
  std::stable_sort(functions_.begin(), functions_.end(), byStart);
  std::stable_sort(cfi_.begin(), cfi_.end(), byStart);
  std::stable_sort(frameData_.begin(), frameData_.end(), byStart);
  std::stable_sort(fpo_.begin(), fpo_.end(), byStart);
  std::stable_sort(publics_.begin(), publics_.end(), [](auto &a, auto &b) { return a.first < b.first; });
  return llvm::Error::success();
}

std::string BreakpadSymbolFile::fileName(int64_t id) const {
  auto found = files_.find(id);
  if (found == files_.end()) return "";
  auto record = recordAt(found->second, "FILE ");
  auto f = record ? fieldsOf(*record, 2) : llvm::SmallVector<StringRef, 8>();
  return f.size() == 2 && decimalNumber(f[0]) == id ? f[1].str() : "";
}

std::string BreakpadSymbolFile::originName(int64_t id) const {
  auto found = origins_.find(id);
  if (found == origins_.end()) return "";
  auto record = recordAt(found->second, "INLINE_ORIGIN ");
  auto f = record ? fieldsOf(*record, 2) : llvm::SmallVector<StringRef, 8>();
  if (f.size() != 2 || decimalNumber(f[0]) != id) return "";
  // The older form put a file id (or -1) before the name.
  StringRef name = f[1];
  auto [first, rest] = name.split(' ');
  if (!rest.empty() && !first.empty() && decimalNumber(first)) name = rest.ltrim(" \t");
  return demangled(name);
}

namespace {
struct Position {
  std::string file;
  std::optional<uint32_t> line;
};
} // namespace

std::vector<SourceFrame> BreakpadSymbolFile::functionFrames(const Range &function, uint64_t offset) const {
  auto record = recordAt(function.line, "FUNC ");
  auto funcFields = record ? symbolFields(*record, 4) : llvm::SmallVector<StringRef, 8>();
  if (funcFields.size() != 4 || hexNumber(funcFields[0]) != function.start) return {};
  std::vector<InlineRecord> inlines;
  std::optional<Position> lineRecord;
  auto position = [&](int64_t file, int64_t line) {
    return Position{fileName(file), line > 0 && line <= UINT32_MAX ? std::optional<uint32_t>(line) : std::nullopt};
  };
  for (size_t at = nextLine(function.line); at < text_->getBufferSize(); at = nextLine(at)) {
    StringRef line = lineAt(at);
    if (line.consume_front("INLINE ")) {
      if (auto record = parseInline(line, offset); record && record->covers) inlines.push_back(*record);
      continue;
    }
    if (!isLineRecord(line)) break;
    auto f = fieldsOf(line, 4);
    if (f.size() != 4 || lineRecord) continue;
    auto start = hexNumber(f[0]), size = hexNumber(f[1]);
    auto number = decimalNumber(f[2]), file = decimalNumber(f[3]);
    if (start && size && number && file && offset >= *start && offset - *start < *size)
      lineRecord = position(*file, *number);
  }
  // One inlined call per depth, from the function's own (depth 0) in.
  std::stable_sort(inlines.begin(), inlines.end(), [](auto &a, auto &b) { return a.depth < b.depth; });
  std::vector<InlineRecord> chain;
  for (const InlineRecord &record : inlines)
    if (record.depth == int64_t(chain.size())) chain.push_back(record);

  // Each frame's position is the call site of the frame inside it; the
  // innermost's is the line record's. The older INLINE form has no call
  // site's file: the line record's is given.
  Position here = lineRecord.value_or(Position{});
  auto callSite = [&](const InlineRecord &record) {
    Position at = position(record.callFile.value_or(-1), record.callLine);
    if (!record.callFile) at.file = here.file;
    return at;
  };
  std::vector<SourceFrame> frames;
  for (size_t i = chain.size(); i-- > 0;) {
    Position at = i + 1 == chain.size() ? here : callSite(chain[i + 1]);
    frames.push_back(SourceFrame{originName(chain[i].origin), std::nullopt, at.file, at.line, true});
  }
  Position at = chain.empty() ? here : callSite(chain[0]);
  frames.push_back(SourceFrame{demangled(funcFields[3]), function.start, at.file, at.line, false});
  return frames;
}

const BreakpadSymbolFile::Range *BreakpadSymbolFile::functionBefore(uint64_t offset) const {
  auto function = std::upper_bound(functions_.begin(), functions_.end(), offset,
                                   [](uint64_t a, const Range &r) { return a < r.start; });
  return function == functions_.begin() ? nullptr : &*std::prev(function);
}

const BreakpadSymbolFile::Range *BreakpadSymbolFile::functionAt(uint64_t offset) const {
  const Range *before = functionBefore(offset);
  return before && offset - before->start < before->size ? before : nullptr;
}

const std::pair<uint64_t, size_t> *BreakpadSymbolFile::publicSymbolAt(uint64_t offset) const {
  // A public symbol names what follows it, up to the next function.
  auto symbol = std::upper_bound(publics_.begin(), publics_.end(), offset,
                                 [](uint64_t a, const auto &p) { return a < p.first; });
  if (symbol == publics_.begin()) return nullptr;
  --symbol;
  const Range *before = functionBefore(offset);
  if (before && before->start > symbol->first) return nullptr;
  if (startsAnotherFunction(cfiRangeAt(offset), symbol->first)) return nullptr;
  return &*symbol;
}

// Whether a STACK CFI range that covers an offset is the code of a function
// that starts after the PUBLIC symbol at `symbol`: one the file has no symbol
// for (a static function of a program whose .sym dump_syms made from .dynsym
// alone), which the symbol would otherwise name. A compiler starts a function
// on a 16-byte boundary; the pieces of one hand-written function, each with
// its own FDE (glibc's __clone3: the child's code, at +0x21), start wherever
// their instructions do. On 29 real programs' minidumps walked with such
// files, 124 distinct return addresses lay past their PUBLIC symbol's end by
// the module's own symbol table, each in a range that starts on a 16-byte
// boundary after the symbol; the one range after a symbol that covered a
// right name (__clone3's child) starts at an odd address. Breakpad's
// minidump_stackwalk names all of them by the symbol. Not in a file of a PE
// module: there a range is a .pdata entry, which a function's separated parts
// (chained unwind data, exception-handling funclets after it) have too, and the
// public symbol before them is their function's, as WinDbg names them.
bool BreakpadSymbolFile::startsAnotherFunction(const Range *cfi, uint64_t symbol) const {
  constexpr uint64_t FunctionAlignment = 16;
  return cfi && cfi->start > symbol && cfi->start % FunctionAlignment == 0 &&
         !StringRef(header_.os).equals_insensitive("windows");
}

llvm::SmallVector<StringRef, 8> BreakpadSymbolFile::publicFields(const std::pair<uint64_t, size_t> *symbol) const {
  auto record = symbol ? recordAt(symbol->second, "PUBLIC ") : std::nullopt;
  auto f = record ? symbolFields(*record, 3) : llvm::SmallVector<StringRef, 8>();
  if (f.size() != 3 || hexNumber(f[0]) != symbol->first) return {};
  return f;
}

std::vector<SourceFrame> BreakpadSymbolFile::frames(uint64_t offset) const {
  if (const Range *function = functionAt(offset)) return functionFrames(*function, offset);
  const auto *symbol = publicSymbolAt(offset);
  auto f = publicFields(symbol);
  if (f.size() != 3) return {};
  return {SourceFrame{demangled(f[2]), symbol->first, "", std::nullopt, false}};
}

bool BreakpadSymbolFile::describesCodeAt(uint64_t offset) const {
  if (functionAt(offset) || cfiRangeAt(offset) || windowsFrameInfo(offset)) return true;
  const auto *symbol = publicSymbolAt(offset);
  if (!symbol) return false;
  size_t unwindRecords = cfi_.size() + frameData_.size() + fpo_.size();
  if (unwindRecords == 0) return true;
  // Unwind records for a few functions of many (a program built without
  // unwind tables but for a few objects: hsprog's GHC runtime, 10 STACK CFI
  // records for 1,550 PUBLIC symbols) leave most of the code to its PUBLIC
  // symbols, as in a file with none.
  constexpr size_t PublicSymbolsPerUnwindRecord = 10;
  return unwindRecords * PublicSymbolsPerUnwindRecord <= publics_.size() && publicCodeReaches(*symbol, offset);
}

// Where a file has unwind records, a PUBLIC symbol's code is taken to end
// where the next record of any kind starts, and the last one's nowhere (past
// it lies the module's data). An unwind record that starts after the symbol
// and ends before the offset is another function's code: the offset, after
// it, is not the symbol's. `_init` is followed by the PLT in GNU's layout,
// where a program's pointers to library functions point: not its code.
bool BreakpadSymbolFile::publicCodeReaches(const std::pair<uint64_t, size_t> &symbol, uint64_t offset) const {
  llvm::SmallVector<StringRef, 8> f = publicFields(&symbol);
  if (f.size() != 3 || f[2] == "_init") return false;
  auto startsFrom = [](const std::vector<Range> &ranges, uint64_t address) { // the first at or after it
    return std::lower_bound(ranges.begin(), ranges.end(), address,
                            [](const Range &r, uint64_t a) { return r.start < a; });
  };
  auto startsPast = [](const auto &records, uint64_t address, auto start) { // whether one starts after it
    return std::upper_bound(records.begin(), records.end(), address,
                            [&](uint64_t a, const auto &r) { return a < start(r); }) != records.end();
  };
  auto rangeStart = [](const Range &r) { return r.start; };
  bool recordAfter = startsPast(publics_, offset, [](const auto &p) { return p.first; }) ||
                     startsPast(functions_, offset, rangeStart);
  for (const std::vector<Range> *ranges : {&cfi_, &frameData_, &fpo_}) {
    auto next = startsFrom(*ranges, symbol.first);
    if (next != ranges->end() && next->start <= offset) return false;
    recordAfter = recordAfter || startsPast(*ranges, offset, rangeStart);
  }
  return recordAfter;
}

std::optional<uint32_t> BreakpadSymbolFile::parameterSize(uint64_t offset) const {
  std::optional<uint64_t> size;
  if (const Range *function = functionAt(offset)) {
    auto record = recordAt(function->line, "FUNC ");
    auto f = record ? symbolFields(*record, 4) : llvm::SmallVector<StringRef, 8>();
    size = f.size() == 4 && hexNumber(f[0]) == function->start ? hexNumber(f[2]) : std::nullopt;
  } else if (auto f = publicFields(publicSymbolAt(offset)); f.size() == 3) {
    size = hexNumber(f[1]);
  }
  if (!size || *size > UINT32_MAX) return std::nullopt;
  return uint32_t(*size);
}

std::optional<WindowsFrameInfo> BreakpadSymbolFile::windowsFrameInfo(uint64_t offset) const {
  const Range *record = frameDataOrFpoCovering(frameData_, fpo_, offset, [](const Range &r) { return r.start; },
                                             [](const Range &r) { return r.size; });
  if (!record) return std::nullopt;
  auto text = recordAt(record->line, "STACK WIN ");
  auto info = text ? parseStackWin(*text) : std::nullopt;
  if (!info || info->start != record->start) return std::nullopt;
  return info;
}

bool BreakpadSymbolFile::startsFunctionAt(uint64_t offset) const {
  const Range *function = functionBefore(offset);
  if (function && function->start == offset) return true;
  return std::binary_search(publics_.begin(), publics_.end(), std::make_pair(offset, size_t(0)),
                            [](const auto &a, const auto &b) { return a.first < b.first; });
}

const BreakpadSymbolFile::Range *BreakpadSymbolFile::cfiRangeAt(uint64_t offset) const {
  auto range = std::upper_bound(cfi_.begin(), cfi_.end(), offset,
                                [](uint64_t a, const Range &r) { return a < r.start; });
  if (range == cfi_.begin()) return nullptr;
  --range;
  return offset - range->start < range->size ? &*range : nullptr;
}

std::optional<std::vector<BreakpadSymbolFile::CfiRule>> BreakpadSymbolFile::cfiRules(uint64_t offset) const {
  const Range *range = cfiRangeAt(offset);
  if (!range) return std::nullopt;
  auto init = recordAt(range->line, "STACK CFI INIT ");
  auto initFields = init ? fieldsOf(*init, 3) : llvm::SmallVector<StringRef, 8>();
  if (initFields.size() != 3 || hexNumber(initFields[0]) != range->start) return std::nullopt;
  std::vector<CfiRule> rules;
  auto apply = [&](StringRef text) {
    llvm::SmallVector<StringRef, 16> tokens;
    text.split(tokens, ' ', -1, /*KeepEmpty=*/false);
    CfiRule *current = nullptr;
    for (StringRef token : tokens) {
      if (token.ends_with(":")) {
        std::string reg = token.drop_back().str();
        auto existing = std::find_if(rules.begin(), rules.end(), [&](const CfiRule &r) { return r.reg == reg; });
        current = existing != rules.end() ? &*existing : &rules.emplace_back(CfiRule{reg, ""});
        current->expression.clear();
      } else if (current) {
        if (!current->expression.empty()) current->expression += ' ';
        current->expression += token;
      }
    }
  };
  apply(initFields[2]);
  for (size_t at = nextLine(range->line); at < text_->getBufferSize(); at = nextLine(at)) {
    StringRef line = lineAt(at);
    if (!line.consume_front("STACK CFI ") || line.starts_with("INIT ")) break;
    auto f = fieldsOf(line, 2);
    auto address = f.size() == 2 ? hexNumber(f[0]) : std::nullopt;
    if (address && *address <= offset) apply(f[1]);
  }
  return rules;
}

} // namespace stackwalk
