#include "CoreBuilder.h"

#include "stackwalk/elfcore/ElfCoreLoader.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace stackwalk;
using stackwalk::test::Bytes;

namespace {

struct TempFile {
  std::string path;
  explicit TempFile(const Bytes &bytes) {
    char name[] = "/tmp/stackwalk-core-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
    close(fd);
    path = name;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

std::unique_ptr<Target> load(const Bytes &bytes) {
  TempFile file(bytes);
  auto target = loadElfCore(file.path);
  if (!target) FAIL(llvm::toString(target.takeError()));
  return std::move(*target);
}

Bytes stack(size_t size) {
  Bytes b;
  for (size_t i = 0; i < size; ++i) b.push_back(uint8_t(i));
  return b;
}

Bytes sigsegvAt(uint64_t address) {
  Bytes b;
  b.resize(128);
  b.set<int32_t>(0, 11);
  b.set<int32_t>(8, 1);
  b.set<uint64_t>(16, address);
  return b;
}

} // namespace

TEST_CASE("threads, crash and memory of a core") {
  Bytes core = test::buildCore({{"CORE", 1, test::prstatus(100, 0x401000, 0x7000, 0, 11)},
                                {"CORE", 0x53494749, sigsegvAt(0x10)},
                                {"CORE", 1, test::prstatus(101, 0x402000, 0x7800)}},
                               {{0x7000, stack(0x1000), 0x1000, 6}});
  auto target = load(core);
  REQUIRE(target->threads.size() == 2);
  CHECK(target->threads[0].tid == 100);
  CHECK(target->threads[1].context.pc() == 0x402000u);
  REQUIRE(target->crash);
  CHECK(target->crash->threadId == 100);
  CHECK(target->crash->name == "SIGSEGV");
  CHECK(target->crash->address == 0x10u);
  CHECK(target->readValue<uint8_t>(0x7005) == 5);
  CHECK_FALSE(target->readValue<uint8_t>(0x8000));
  // Only what is really missing: this core has no NT_FILE and no auxv.
  REQUIRE(target->warnings.size() == 1);
  CHECK(target->warnings[0] == "no NT_FILE note and no auxiliary vector: the module list is unknown");
}

TEST_CASE("the crashing thread is the one the NT_SIGINFO follows, wherever it is (createdump)") {
  // .NET's createdump: the crashing thread third, the only one with pr_cursig.
  Bytes core = test::buildCore({{"CORE", 1, test::prstatus(100, 0x401000, 0x7000)},
                                {"CORE", 1, test::prstatus(101, 0x402000, 0x7800)},
                                {"CORE", 1, test::prstatus(102, 0x403000, 0x7a00, 0, 6)},
                                {"CORE", 0x53494749, sigsegvAt(0)},
                                {"CORE", 1, test::prstatus(103, 0x404000, 0x7c00)}},
                               {{0x7000, stack(0x1000), 0x1000, 6}});
  auto target = load(core);
  REQUIRE(target->crash);
  CHECK(target->crash->threadId == 102);
}

TEST_CASE("without an NT_SIGINFO, the first thread with a signal has crashed") {
  Bytes core = test::buildCore({{"CORE", 1, test::prstatus(100, 0x401000, 0x7000)},
                                {"CORE", 1, test::prstatus(101, 0x402000, 0x7800, 0, 6)},
                                {"CORE", 1, test::prstatus(102, 0x403000, 0x7a00, 0, 6)}},
                               {{0x7000, stack(0x1000), 0x1000, 6}});
  auto target = load(core);
  REQUIRE(target->crash);
  CHECK(target->crash->threadId == 101);
  CHECK(target->crash->name == "SIGABRT");
}

TEST_CASE("more than 65535 program headers: the count comes from section 0") {
  Bytes core = test::buildCore({{"CORE", 1, test::prstatus(7, 0x1, 0x7000)}}, {{0x7000, stack(16), 16, 6}},
                               /*xnum=*/true);
  auto target = load(core);
  CHECK(target->threads.size() == 1);
  CHECK(target->readValue<uint8_t>(0x700f) == 15);
}

TEST_CASE("memory past p_filesz was not dumped and reads fail rather than return zeros") {
  Bytes core = test::buildCore({{"CORE", 1, test::prstatus(7, 0x1, 0x7000)}}, {{0x7000, stack(0x100), 0x2000, 5}});
  auto target = load(core);
  CHECK(target->readValue<uint8_t>(0x70ff));
  CHECK_FALSE(target->readValue<uint8_t>(0x7100));
  REQUIRE(target->regions.size() == 1);
  CHECK(target->regions[0].executable);
  CHECK(target->regions[0].end == 0x9000);
}

TEST_CASE("a truncated core keeps its threads and says what is missing") {
  Bytes core = test::buildCore({{"CORE", 1, test::prstatus(7, 0x1, 0x7000)}}, {{0x7000, stack(0x1000), 0x1000, 6}});
  core.resize(core.size() - 0x800);
  auto target = load(core);
  CHECK(target->threads.size() == 1);
  CHECK(target->readValue<uint8_t>(0x7100));
  CHECK_FALSE(target->readValue<uint8_t>(0x7900));
  REQUIRE(target->warnings.size() == 2);
  CHECK(target->warnings[0] == "the core is truncated: 2048 bytes of memory and notes are missing from the file; "
                               "the stack of thread 7 is cut short");
}

TEST_CASE("a core cut inside its notes says how many threads it read") {
  Bytes core = test::buildCore({{"CORE", 1, test::prstatus(7, 0x1, 0x7000)}, {"CORE", 1, test::prstatus(8, 0x1, 0x7000)}},
                               {{0x7000, stack(0x1000), 0x1000, 6}});
  constexpr size_t Headers = 64 + 2 * 56, PrStatusNote = 12 + 8 + 336;
  core.resize(Headers + PrStatusNote + 100);
  auto target = load(core);
  CHECK(target->threads.size() == 1);
  REQUIRE_FALSE(target->warnings.empty());
  CHECK(target->warnings[0] == "the notes are cut short by the end of the file: 1 thread is read, the notes after it "
                               "are missing (more threads among them, perhaps)");
  // The thread read took no signal: whether the process crashed is in the notes lost.
  CHECK_FALSE(target->crash);
  CHECK(target->crashUnreadable == "the notes are cut short by the end of the file before any NT_SIGINFO note");
}

TEST_CASE("a core whose notes are whole and record no crash has none, not an unreadable one") {
  auto target = load(test::buildCore({{"CORE", 1, test::prstatus(7, 0x1, 0x7000)}}, {{0x7000, stack(0x1000), 0x1000, 6}}));
  CHECK_FALSE(target->crash);
  CHECK(target->crashUnreadable.empty());
}

TEST_CASE("a truncated core names the threads whose stacks it cuts short") {
  // Thread 9's stack is whole, thread 10's stack pointer is in no segment; the
  // others' stacks are in the segment the file ends in.
  std::vector<test::NoteSpec> notes = {{"CORE", 1, test::prstatus(9, 0x1, 0x5000)},
                                   {"CORE", 1, test::prstatus(10, 0x1, 0x9000)}};
  for (uint32_t tid = 11; tid <= 22; ++tid) notes.push_back({"CORE", 1, test::prstatus(tid, 0x1, 0x7000 + tid * 0x40)});
  Bytes core = test::buildCore(notes, {{0x5000, stack(0x100), 0x100, 6}, {0x7000, stack(0x1000), 0x1000, 6}});
  core.resize(core.size() - 0x100);
  auto target = load(core);
  REQUIRE_FALSE(target->warnings.empty());
  CHECK(target->warnings[0] == "the core is truncated: 256 bytes of memory and notes are missing from the file; "
                               "the stacks of threads 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 and 2 more are cut short");
}

TEST_CASE("a gcore of a running process (SIGSTOP) records no crash") {
  Bytes core = test::buildCore({{"CORE", 1, test::prstatus(7, 0x1, 0x7000, 0, 19)}}, {});
  CHECK_FALSE(load(core)->crash);
}

TEST_CASE("NT_FILE mappings with an ELF header in memory become modules; data files do not") {
  Bytes elfHeader;
  const uint8_t magic[] = {0x7f, 'E', 'L', 'F'};
  elfHeader.insert(elfHeader.end(), magic, magic + 4);
  elfHeader.resize(0x1000);
  Bytes data;
  data.resize(0x1000, 'x');
  Bytes files;
  files.put<uint64_t>(3);
  files.put<uint64_t>(0x1000);
  for (uint64_t v : {0x10000, 0x11000, 0, 0x11000, 0x13000, 1, 0x20000, 0x21000, 0}) files.put<uint64_t>(v);
  for (char c : std::string("/lib/libx.so\0/lib/libx.so\0/data/file\0", 37)) files.push_back(uint8_t(c));
  Bytes core = test::buildCore({{"CORE", 1, test::prstatus(7, 0x1, 0x7000)}, {"CORE", 0x46494c45, files}},
                               {{0x10000, elfHeader, 0x1000, 4}, {0x20000, data, 0x1000, 4}});
  auto target = load(core);
  REQUIRE(target->modules.size() == 1);
  CHECK(target->modules[0].name == "libx.so");
  CHECK(target->modules[0].base == 0x10000);
  CHECK(target->modules[0].size == 0x3000);
}

TEST_CASE("files that are not 64-bit ELF cores are refused with a reason") {
  Bytes core = test::buildCore({}, {});
  core.set<uint16_t>(16, 2); // ET_EXEC
  TempFile exec(core);
  auto result = loadElfCore(exec.path);
  REQUIRE_FALSE(bool(result));
  CHECK(llvm::toString(result.takeError()) == "not an ELF core file");
  // A big-endian core is a core, refused as what it is (e_type and e_machine
  // read in its byte order): s390x (22) and MIPS (8).
  for (auto [machine, name] : {std::pair<uint16_t, const char *>{22, "s390"}, {8, "mips"}}) {
    Bytes big = test::buildCore({}, {});
    big.set<uint8_t>(5, 2); // ELFDATA2MSB
    big.set<uint16_t>(16, uint16_t(4 << 8)); // ET_CORE, big-endian
    big.set<uint16_t>(18, uint16_t(machine << 8 | machine >> 8));
    TempFile file(big);
    auto refused = loadElfCore(file.path);
    REQUIRE_FALSE(bool(refused));
    CHECK(llvm::toString(refused.takeError()) == std::string("a 64-bit big-endian ELF core of machine ") + name + " (" +
                                                     std::to_string(machine) + "): stackwalk reads little-endian cores only");
  }
  auto missing = loadElfCore("/nonexistent/core");
  REQUIRE_FALSE(bool(missing));
  llvm::consumeError(missing.takeError());
}
