#include "stackwalk/minidump/MicrodumpLoader.h"

#include "BreakpadContext.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Signals.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

using llvm::StringRef;

namespace stackwalk {
namespace {

constexpr StringRef Key = "google-breakpad";
constexpr StringRef Begin = "-----BEGIN BREAKPAD MICRODUMP-----";
constexpr StringRef End = "-----END BREAKPAD MICRODUMP-----";
constexpr size_t SearchedBytes = 64 * 1024;
constexpr size_t MaxModules = 16384;
constexpr size_t MaxStackRanges = 4096; // a writer's S records continue one range; a hostile file's need not

// A logcat line's message: what follows "google-breakpad" and the next ": "
// (the prefix may be "W/google-breakpad( 3728): " or a dated one).
std::optional<StringRef> message(StringRef line) {
  size_t key = line.find(Key);
  if (key == StringRef::npos) return std::nullopt;
  size_t colon = line.find(": ", key + Key.size());
  if (colon == StringRef::npos) return std::nullopt;
  return line.substr(colon + 2).rtrim("\r");
}

std::optional<uint64_t> hexNumber(StringRef text) {
  uint64_t value;
  if (text.empty() || text.getAsInteger(16, value)) return std::nullopt;
  return value;
}

std::optional<std::vector<uint8_t>> hexBytes(StringRef text) {
  std::string bytes;
  if (text.size() % 2 || !llvm::tryGetFromHex(text, bytes)) return std::nullopt;
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

std::optional<Arch> archNamed(StringRef name) {
  if (name == "arm64" || name == "aarch64") return Arch::Arm64;
  if (name == "x86") return Arch::X86;
  if (name == "arm") return Arch::Arm;
  return std::nullopt;
}

// The records of one microdump, as read.
struct Records {
  std::string arch, osVersion, productVersion, processType, gpu;
  std::optional<CrashInfo> crash;
  std::optional<uint64_t> stackPointer;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> stack;
  std::vector<uint8_t> context;
  std::vector<Module> modules;
  std::vector<std::string> warnings;
  bool ended = false;
};

class Parser {
public:
  llvm::Error line(StringRef text);
  Records &records() { return records_; }

private:
  void os(llvm::SmallVectorImpl<StringRef> &words, StringRef text);
  void crash(llvm::SmallVectorImpl<StringRef> &words);
  llvm::Error stack(llvm::SmallVectorImpl<StringRef> &words);
  void module(llvm::SmallVectorImpl<StringRef> &words, StringRef text);

  Records records_;
  bool rangesCapped_ = false;
};

void Parser::os(llvm::SmallVectorImpl<StringRef> &words, StringRef text) {
  // O <A(ndroid)|L(inux)> <arch> <cpus> <hardware> <os version...>
  if (words.size() < 3) return records_.warnings.push_back("the O (system) record is malformed");
  records_.arch = words[2].str();
  size_t skip = 0;
  for (size_t i = 0; i < 5 && i < words.size(); ++i) skip = words[i].end() - text.begin();
  records_.osVersion = text.substr(std::min(skip, text.size())).trim().str();
}

void Parser::crash(llvm::SmallVectorImpl<StringRef> &words) {
  // R <signal, hex> <name> <address, hex>
  CrashInfo crash;
  if (words.size() >= 2)
    if (auto signal = hexNumber(words[1])) crash.signal = int(*signal);
  crash.name = words.size() >= 3 ? words[2].str() : "";
  if (words.size() >= 4) crash.address = hexNumber(words[3]);
  records_.crash = crash;
}

llvm::Error Parser::stack(llvm::SmallVectorImpl<StringRef> &words) {
  if (words.size() >= 5 && words[1] == "0") { // S 0 <sp> <start> <size>: the header
    records_.stackPointer = hexNumber(words[2]);
    return llvm::Error::success();
  }
  if (words.size() != 3) return fail("an S (stack) record is malformed");
  auto address = hexNumber(words[1]);
  auto bytes = hexBytes(words[2]);
  if (!address || !bytes) return fail("an S (stack) record's address or bytes are not hexadecimal");
  // Consecutive records continue one range.
  auto &stack = records_.stack;
  if (!stack.empty() && stack.back().first + stack.back().second.size() == *address)
    stack.back().second.insert(stack.back().second.end(), bytes->begin(), bytes->end());
  else if (stack.size() < MaxStackRanges)
    stack.emplace_back(*address, std::move(*bytes));
  else if (stack.size() == MaxStackRanges && !rangesCapped_) {
    rangesCapped_ = true;
    records_.warnings.push_back("the microdump's stack is in more than " + std::to_string(MaxStackRanges) +
                                " pieces; the rest are ignored");
  }
  return llvm::Error::success();
}

void Parser::module(llvm::SmallVectorImpl<StringRef> &words, StringRef text) {
  // M <base> <file offset> <size> <Breakpad id> <name>
  if (records_.modules.size() >= MaxModules) return;
  auto base = words.size() >= 6 ? hexNumber(words[1]) : std::nullopt;
  auto size = words.size() >= 6 ? hexNumber(words[3]) : std::nullopt;
  if (!base || !size) return records_.warnings.push_back("an M (module) record is malformed; it is skipped");
  Module module;
  module.base = *base;
  module.size = *size;
  module.debugId = words[4].upper();
  module.recordedPath = text.substr(words[5].begin() - text.begin()).str(); // a name may hold spaces
  size_t slash = module.recordedPath.find_last_of('/');
  module.name = slash == std::string::npos ? module.recordedPath : module.recordedPath.substr(slash + 1);
  records_.modules.push_back(std::move(module));
}

llvm::Error Parser::line(StringRef text) {
  llvm::SmallVector<StringRef, 8> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  if (words.empty() || words[0].size() != 1) return llvm::Error::success();
  switch (words[0][0]) {
  case 'O': os(words, text); break;
  case 'V': records_.productVersion = text.drop_front(1).trim().str(); break;
  case 'P': records_.processType = text.drop_front(1).trim().str(); break;
  case 'G': records_.gpu = text.drop_front(1).trim().str(); break;
  case 'R': crash(words); break;
  case 'S': return stack(words);
  case 'C': {
    auto context = words.size() == 2 ? hexBytes(words[1]) : std::nullopt;
    if (!context) return fail("the C (context) record is not hexadecimal");
    records_.context = std::move(*context);
    break;
  }
  case 'M': module(words, text); break;
  default: break; // H (heap) and records of later writers
  }
  return llvm::Error::success();
}

// The records of the first microdump in the text.
llvm::Expected<Records> parse(StringRef text) {
  Parser parser;
  bool started = false;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    auto body = message(line);
    if (!body) continue;
    if (*body == Begin) {
      started = true;
      continue;
    }
    if (!started) continue;
    if (*body == End) {
      parser.records().ended = true;
      break;
    }
    if (llvm::Error e = parser.line(*body)) return e;
  }
  if (!started) return fail("no BEGIN BREAKPAD MICRODUMP line");
  return std::move(parser.records());
}

} // namespace

bool looksLikeMicrodump(std::span<const uint8_t> bytes) {
  StringRef text(reinterpret_cast<const char *>(bytes.data()), std::min(bytes.size(), SearchedBytes));
  return text.contains(Begin) && text.contains(Key);
}

llvm::Expected<std::unique_ptr<Target>> loadMicrodump(llvm::StringRef text) {
  auto records = parse(text);
  if (!records) return records.takeError();
  std::optional<Arch> arch = archNamed(records->arch);
  if (!arch)
    return fail("a microdump of architecture '" + records->arch + "': stackwalk cannot read that architecture yet");
  auto memory = std::make_unique<BufferMemory>();
  for (auto &[address, bytes] : records->stack) memory->add(address, std::move(bytes));
  auto target = std::make_unique<Target>(*arch, OS::Linux, "microdump", std::move(memory));
  target->osVersion = records->osVersion;
  target->warnings = std::move(records->warnings);
  if (!records->ended) target->warnings.push_back("the microdump has no END line: it may be cut short");
  for (auto &[key, value] : {std::pair<const char *, std::string &>{"product_version", records->productVersion},
                             {"process_type", records->processType}, {"gpu", records->gpu}})
    if (!value.empty()) target->annotations.emplace_back(key, value);
  ThreadInfo thread; // the one thread, the crashing one: Breakpad calls it 0
  if (records->context.empty()) {
    thread.contextAbsent = true;
    target->warnings.push_back("the microdump has no C (context) record");
  } else if (auto regs = minidump::readThreadContext(*arch, records->context)) {
    thread.context = *regs;
  } else {
    target->warnings.push_back("the microdump's context: " + llvm::toString(regs.takeError()));
    thread.contextAbsent = true;
  }
  target->threads.push_back(std::move(thread));
  CrashInfo crash = records->crash.value_or(CrashInfo{});
  crash.threadId = 0;
  if (crash.name.empty()) crash.name = crash.signal ? signalName(*crash.signal) : "unknown (no R record)";
  target->crash = crash;
  target->modules = std::move(records->modules);
  target->sortModules();
  return target;
}

} // namespace stackwalk
