// Symbol maps (SymbolMap.h, SymbolMapCache.h): the bytes read back answer as
// written; bytes that do not hold a map are refused and a damaged table
// answers nothing rather than garbage; and a map of a real image (glibc with
// its separate debug file, a test program) says at every address sampled
// what the Symbolizer says reading the files themselves.
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/SymbolMapCache.h"
#include "stackwalk/core/Symbolizer.h"

#include "ModuleFiles.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <random>

using namespace stackwalk;

namespace {

SourceFrame frame(std::string function, std::optional<uint64_t> start, std::string file, std::optional<uint32_t> line,
                  bool inlined) {
  SourceFrame out;
  out.function = std::move(function);
  out.functionStart = start;
  out.file = std::move(file);
  out.line = line;
  out.inlined = inlined;
  return out;
}

bool same(const std::vector<SourceFrame> &a, const std::vector<SourceFrame> &b) {
  auto key = [](const SourceFrame &f) { return std::make_tuple(f.function, f.functionStart, f.file, f.line, f.inlined); };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](auto &x, auto &y) { return key(x) == key(y); });
}

std::string describe(const std::vector<SourceFrame> &frames) {
  std::string out;
  for (const SourceFrame &f : frames)
    out += (f.inlined ? "[inlined] " : "") + f.function + " " + f.file + ":" + std::to_string(f.line.value_or(0)) +
           " start " + std::to_string(f.functionStart.value_or(0)) + "; ";
  return out;
}

std::string temporaryDirectory() {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("stackwalk-symbol-map-test", dir));
  return std::string(dir);
}

std::string writtenMap() {
  SymbolMapWriter writer;
  std::vector<SourceFrame> inlined{frame("helper", std::nullopt, "util.h", 7, true),
                                   frame("main", 0x1000, "main.c", 42, false)};
  writer.add(0, {});
  writer.add(0x1000, {frame("main", 0x1000, "main.c", 40, false)});
  writer.add(0x1010, inlined);
  writer.add(0x1018, inlined); // equal to the one before: one range
  writer.add(0x1020, {frame("main", std::nullopt, "", std::nullopt, false)});
  writer.add(0x1030, {});
  writer.addTailCallingSite(0x1015);
  writer.addDeclaredCallSite(0x1025, "pthread_join");
  writer.addTailCallingName("__pthread_join");
  writer.addTailCallingName("pthread_join");
  return writer.bytes();
}

} // namespace

TEST_CASE("a symbol map read back answers as written") {
  std::string bytes = writtenMap();
  auto map = SymbolMap::view(bytes);
  REQUIRE(bool(map));
  CHECK(map->rangeCount() == 5);
  CHECK(map->framesAt(0xfff)->empty());
  CHECK(same(*map->framesAt(0x1000), {frame("main", 0x1000, "main.c", 40, false)}));
  auto inlined = map->framesAt(0x101f);
  REQUIRE(inlined);
  CHECK(describe(*inlined) == "[inlined] helper util.h:7 start 0; main main.c:42 start 4096; ");
  CHECK(same(*map->framesAt(0x1020), {frame("main", std::nullopt, "", std::nullopt, false)}));
  CHECK(map->framesAt(0x1030)->empty());
  CHECK(map->framesAt(UINT64_MAX)->empty());

  CHECK(map->isTailCallingName("pthread_join"));
  CHECK(map->isTailCallingName("__pthread_join"));
  CHECK_FALSE(map->isTailCallingName("pthread_join2"));
  CHECK(map->mayStartTailCalls(0x1015, nullptr));
  CHECK_FALSE(map->mayStartTailCalls(0x1016, map.operator->()));
  // A declared function: known only with the callee's module's map.
  CHECK(map->mayStartTailCalls(0x1025, nullptr));
  CHECK(map->mayStartTailCalls(0x1025, map.operator->()));
  SymbolMapWriter other;
  other.addTailCallingName("read");
  std::string otherBytes = other.bytes();
  auto calleeMap = SymbolMap::view(otherBytes);
  REQUIRE(bool(calleeMap));
  CHECK_FALSE(map->mayStartTailCalls(0x1025, calleeMap.operator->()));
}

TEST_CASE("a map whose call sites could not all be read rules no tail call out") {
  SymbolMapWriter writer;
  writer.add(0x1000, {frame("main", 0x1000, "main.c", 40, false)});
  writer.addTailCallingSite(0);
  writer.addUnknownCallSites();
  std::string bytes = writer.bytes();
  auto map = SymbolMap::view(bytes);
  REQUIRE(bool(map));
  for (uint64_t pc : {uint64_t(0), uint64_t(0x1005), UINT64_MAX}) CHECK(map->mayStartTailCalls(pc, map.operator->()));
  CHECK(map->framesAt(0x1000)->size() == 1);
}

TEST_CASE("bytes that do not hold a whole map are refused; damaged tables answer nothing") {
  std::string bytes = writtenMap();
  for (size_t size : {size_t(0), size_t(8), size_t(31), bytes.size() - 1}) {
    auto cut = SymbolMap::view(llvm::StringRef(bytes).take_front(size));
    CHECK_FALSE(bool(cut));
    if (!cut) llvm::consumeError(cut.takeError());
  }
  auto longer = SymbolMap::view(bytes + "x");
  CHECK_FALSE(bool(longer));
  if (!longer) llvm::consumeError(longer.takeError());
  std::string wrongMagic = bytes;
  wrongMagic[7] = '9';
  auto foreign = SymbolMap::view(wrongMagic);
  CHECK_FALSE(bool(foreign));
  if (!foreign) llvm::consumeError(foreign.takeError());

  // A byte of the tables changed: the chunk holding it does not check.
  constexpr size_t Header = 52, Tables = Header + 8; // the map's one chunk checksum after the header
  std::string flipped = bytes;
  flipped[Tables + 12 + 8] ^= 1;
  auto map = SymbolMap::view(flipped);
  REQUIRE(bool(map));
  CHECK_FALSE(map->framesAt(0x1000).has_value());
  std::string checksum = bytes;
  checksum[Header] ^= 1;
  auto refused = SymbolMap::view(checksum);
  CHECK_FALSE(bool(refused));
  if (!refused) llvm::consumeError(refused.takeError());
}

namespace {

// The tables' checksum made again after a change, as a map that was written
// wrong (not damaged after) would have it.
std::string resealed(std::string bytes) {
  constexpr size_t Header = 52, Tables = Header + 8;
  llvm::StringRef tables = llvm::StringRef(bytes).drop_front(Tables);
  char sum[8];
  llvm::support::endian::write64le(sum, llvm::xxh3_64bits(tables));
  bytes.replace(Header, 8, sum, 8);
  llvm::support::endian::write64le(sum, llvm::xxh3_64bits(llvm::StringRef(bytes).substr(Header, 8)));
  bytes.replace(Header - 8, 8, sum, 8);
  return bytes;
}

} // namespace

TEST_CASE("a map whose indexes lead outside its tables answers nothing there") {
  std::string bytes = writtenMap();
  constexpr size_t Tables = 52 + 8;
  // The first range with frames (the second) sent to a list past the lists;
  // then the first list sent to frames past the frames.
  // (A map views its bytes: they are kept in named strings for as long as it is used.)
  std::string badList = bytes;
  badList[Tables + 12 + 8] = '\x7f';
  badList = resealed(badList);
  auto map = SymbolMap::view(badList);
  REQUIRE(bool(map));
  CHECK_FALSE(map->framesAt(0x1000).has_value());
  CHECK(map->framesAt(0x1010).has_value());
  std::string badFrame = bytes;
  badFrame[Tables + 5 * 12] = '\x7f';
  badFrame = resealed(badFrame);
  map = SymbolMap::view(badFrame);
  REQUIRE(bool(map));
  CHECK_FALSE(map->framesAt(0x1000).has_value());
}

TEST_CASE("a cache entry that does not check is not read") {
  std::string dir = temporaryDirectory();
  SymbolMapCache cache(dir);
  std::string path = dir + "/.symmap/00/entry.map";
  REQUIRE(cache.store(path, writtenMap()));
  REQUIRE(cache.open(path));
  {
    std::error_code error;
    llvm::raw_fd_ostream out(path, error, llvm::sys::fs::OF_Append);
    out << "x";
  }
  CHECK_FALSE(cache.open(path));
  llvm::sys::fs::remove_directories(dir);
}

namespace {

// Addresses through every executable segment, a random 1-64 bytes apart.
std::vector<uint64_t> sampleAddresses(const ModuleImage &image) {
  std::mt19937_64 random(20);
  std::vector<uint64_t> out;
  for (const LoadSegment &segment : image.segments())
    if (segment.executable)
      for (uint64_t at = segment.vaddr; at < segment.vaddr + segment.memSize; at += 1 + random() % 64) out.push_back(at);
  return out;
}

} // namespace

TEST_CASE("a symbol map says what the symbol tables and DWARF say, at every address sampled") {
  std::string dumps = STACKWALK_DUMPS_DIR;
  struct Case {
    std::string image, debug;
  } cases[] = {
      {test::libcPath, test::libcDebugPath},
      {dumps + "/bin/threads-O2-nofp", ""},
      {dumps + "/sysroot/usr/lib/x86_64-linux-gnu/libstdc++.so.6", ""},
  };
  std::string dir = temporaryDirectory();
  SymbolMapCache cache(dir);
  for (const Case &c : cases) {
    CAPTURE(c.image);
    if (!llvm::sys::fs::exists(c.image) || (!c.debug.empty() && !llvm::sys::fs::exists(c.debug))) {
      WARN("skipped: " << c.image << " (or its debug file) is not unpacked");
      continue;
    }
    std::shared_ptr<Module> module = test::moduleOf(c.image, c.debug);
    REQUIRE(module);
    Symbolizer fromFiles;
    Symbolizer making(uint64_t(2) << 30, nullptr, false, &cache); // makes and stores the map
    Symbolizer reading(uint64_t(2) << 30, nullptr, false, &cache); // reads it back
    (void)making.symbolize(*module, module->base);
    std::vector<uint64_t> addresses = sampleAddresses(*module->image);
    size_t differ = 0, named = 0;
    for (uint64_t address : addresses) {
      const std::vector<SourceFrame> &expected = fromFiles.symbolize(*module, address);
      const std::vector<SourceFrame> &mapped = reading.symbolize(*module, address);
      named += !expected.empty();
      if (!same(expected, mapped) && ++differ <= 3)
        UNSCOPED_INFO(address << ": files " << describe(expected) << "map " << describe(mapped));
    }
    CHECK(!reading.symbolMapIdentity(*module->image).empty());
    CHECK(named > addresses.size() / 2);
    CHECK(differ == 0);
  }
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("a stored map damaged where a walk reads it is made again, and the walk's frames stay right") {
  std::string program = std::string(STACKWALK_DUMPS_DIR) + "/bin/threads-O2-nofp";
  if (!llvm::sys::fs::exists(program)) {
    WARN("skipped: " << program << " is not unpacked");
    return;
  }
  std::shared_ptr<Module> module = test::moduleOf(program);
  REQUIRE(module);
  std::string dir = temporaryDirectory();
  SymbolMapCache cache(dir);
  Symbolizer fromFiles, making(uint64_t(2) << 30, nullptr, false, &cache);
  (void)making.symbolize(*module, module->base);
  std::string path = dir + "/.symmap/" + making.symbolMapIdentity(*module->image);
  auto stored = llvm::MemoryBuffer::getFile(path);
  REQUIRE(stored);
  std::string original = (*stored)->getBuffer().str();
  // Every byte of the tables after the header and checksums flipped: each chunk damaged.
  std::string damaged = original;
  size_t chunks = llvm::support::endian::read32le(original.data() + 40);
  for (size_t at = 52 + 8 * chunks; at + 24 < damaged.size(); ++at) damaged[at] ^= 0x5a;
  {
    std::error_code error;
    llvm::raw_fd_ostream out(path, error);
    REQUIRE(!error);
    out << damaged;
  }
  Symbolizer reading(uint64_t(2) << 30, nullptr, false, &cache);
  size_t differ = 0;
  for (uint64_t address : sampleAddresses(*module->image))
    differ += !same(fromFiles.symbolize(*module, address), reading.symbolize(*module, address));
  CHECK(differ == 0);
  auto remade = llvm::MemoryBuffer::getFile(path);
  REQUIRE(remade);
  CHECK((*remade)->getBuffer() == original);
  llvm::sys::fs::remove_directories(dir);
}
