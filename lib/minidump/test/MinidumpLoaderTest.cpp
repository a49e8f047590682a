#include "MinidumpBuilder.h"

#include "stackwalk/minidump/MinidumpLoader.h"

#include "MinidumpReader.h"

#include <catch2/catch.hpp>

#include <tuple>

#include <algorithm>
#include <cstdio>
#include <unistd.h>

using namespace stackwalk;
using stackwalk::test::MinidumpBuilder;

namespace {

using B = MinidumpBuilder;

std::vector<uint8_t> systemInfo(uint16_t arch, uint32_t platform, uint32_t major = 10, uint32_t minor = 0) {
  std::vector<uint8_t> s;
  B::put16(s, arch);
  B::put16(s, 6);
  B::put16(s, 0);
  s.push_back(4);
  s.push_back(1);
  B::put32(s, major);
  B::put32(s, minor);
  B::put32(s, 17134);
  B::put32(s, platform);
  B::put32(s, 0); // CSDVersionRVA
  s.resize(56, 0);
  return s;
}

// An AMD64 CONTEXT with CONTROL and INTEGER, cut to `size` bytes.
std::vector<uint8_t> amd64Context(uint64_t rip, uint64_t rsp, size_t size = 0x4d0) {
  std::vector<uint8_t> c(std::max<size_t>(size, 0x100), 0);
  uint32_t flags = 0x100003;
  std::memcpy(&c[0x30], &flags, 4);
  std::memcpy(&c[0xf8], &rip, 8);
  std::memcpy(&c[0x98], &rsp, 8);
  c.resize(size);
  return c;
}

// MINIDUMP_THREAD: id, suspend, priority class, priority, TEB, stack {start, size, rva}, context {size, rva}.
void addThread(std::vector<uint8_t> &list, uint32_t tid, uint64_t stackStart, uint32_t stackSize, uint32_t stackRva,
               uint32_t contextSize, uint32_t contextRva) {
  B::put32(list, tid);
  B::put32(list, 0);
  B::put32(list, 0);
  B::put32(list, 0);
  B::put64(list, 0);
  B::put64(list, stackStart);
  B::put32(list, stackSize);
  B::put32(list, stackRva);
  B::put32(list, contextSize);
  B::put32(list, contextRva);
}

// MINIDUMP_MODULE (108 bytes) with an RSDS CodeView record.
void addModule(B &builder, std::vector<uint8_t> &list, uint64_t base, uint32_t size, uint32_t stamp,
               const std::string &path) {
  uint32_t name = builder.addString(path);
  std::vector<uint8_t> cv;
  B::put32(cv, 0x53445352);
  for (uint8_t b : {0x78, 0x56, 0x34, 0x12, 0x34, 0x12, 0x78, 0x56, 1, 2, 3, 4, 5, 6, 7, 8}) cv.push_back(b);
  B::put32(cv, 2);
  for (char c : std::string("app.pdb")) cv.push_back(uint8_t(c));
  cv.push_back(0);
  uint32_t cvRva = builder.add(cv);
  size_t start = list.size();
  B::put64(list, base);
  B::put32(list, size);
  B::put32(list, 0);
  B::put32(list, stamp);
  B::put32(list, name);
  list.resize(start + 24 + 52, 0); // VS_FIXEDFILEINFO left empty
  B::put32(list, uint32_t(cv.size()));
  B::put32(list, cvRva);
  list.resize(start + 108, 0);
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::vector<uint8_t> &bytes) {
    char name[] = "/tmp/stackwalk-mdmp-XXXXXX";
    int fd = mkstemp(name);
    REQUIRE(write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
    close(fd);
    path = name;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

std::unique_ptr<Target> load(const std::vector<uint8_t> &bytes) {
  TempFile file(bytes);
  auto target = loadMinidump(file.path);
  if (!target) FAIL(llvm::toString(target.takeError()));
  return std::move(*target);
}

// A Windows x64 dump: two threads (one named), a module, its stack memory,
// an access violation and the process id.
// secondStackSize: the second thread's stack size, its RVA 0 (as Wine writes in full-memory dumps).
B windowsDump(size_t contextSize = 0x4d0, uint32_t secondStackSize = 0) {
  B builder;
  std::vector<uint8_t> stack(0x100);
  for (size_t i = 0; i < stack.size(); ++i) stack[i] = uint8_t(i);
  uint32_t stackRva = builder.add(stack);
  uint32_t ctx1 = builder.add(amd64Context(0x140001010, 0x10000, contextSize));
  uint32_t ctx2 = builder.add(amd64Context(0x140001020, 0x20000));
  std::vector<uint8_t> threads;
  B::put32(threads, 2);
  addThread(threads, 100, 0x10000, 0x100, stackRva, uint32_t(contextSize), ctx1);
  addThread(threads, 200, 0x20000, secondStackSize, 0, 0x4d0, ctx2);
  std::vector<uint8_t> modules;
  B::put32(modules, 1);
  addModule(builder, modules, 0x140000000, 0x5000, 0x5f000000, "C:\\app\\App.exe");
  std::vector<uint8_t> names;
  B::put32(names, 1);
  B::put32(names, 200);
  B::put64(names, builder.addString("worker"));
  std::vector<uint8_t> exception;
  B::put32(exception, 100);
  B::put32(exception, 0);
  B::put32(exception, 0xC0000005);
  B::put32(exception, 0);
  B::put64(exception, 0);
  B::put64(exception, 0x140001010);
  B::put32(exception, 2);
  B::put32(exception, 0);
  B::put64(exception, 1);    // write
  B::put64(exception, 0x18); // address
  exception.resize(8 + 152, 0);
  B::put32(exception, 0); // no exception context
  B::put32(exception, 0);
  std::vector<uint8_t> misc;
  B::put32(misc, 24);
  B::put32(misc, 1);
  B::put32(misc, 4242);
  misc.resize(24, 0);
  builder.stream(7, systemInfo(9, 2));
  builder.stream(3, threads);
  builder.stream(4, modules);
  builder.stream(24, names);
  builder.stream(6, exception);
  builder.stream(15, misc);
  return builder;
}

// A Memory64List stream: the ranges {start, size} whose bytes follow one another in `bytes`.
void addMemory64List(B &builder, const std::vector<uint8_t> &bytes, std::initializer_list<std::pair<uint64_t, uint64_t>> ranges) {
  std::vector<uint8_t> list;
  B::put64(list, ranges.size());
  B::put64(list, builder.add(bytes));
  for (auto [start, size] : ranges) {
    B::put64(list, start);
    B::put64(list, size);
  }
  builder.stream(9, list);
}

} // namespace

TEST_CASE("a Windows x64 minidump: threads, contexts, names, modules, memory, exception") {
  auto target = load(windowsDump().build());
  CHECK(target->arch() == Arch::X86_64);
  CHECK(target->os() == OS::Windows);
  CHECK(target->osVersion == "10.0.17134");
  REQUIRE(target->threads.size() == 2);
  CHECK(target->threads[0].context.pc() == 0x140001010u);
  CHECK(target->threads[1].name == "worker");
  REQUIRE(target->modules.size() == 1);
  const Module &app = target->modules[0];
  CHECK(app.name == "App.exe");
  CHECK(app.peTimeDateStamp == 0x5f000000u);
  CHECK(app.peSizeOfImage == 0x5000u);
  CHECK(app.debugId == "123456781234567801020304050607082"); // GUID then age in hex, as symbol stores name it
  CHECK(app.debugFile == "app.pdb");
  CHECK(target->process.name == "App.exe");
  CHECK(target->process.pid == 4242u);
  REQUIRE(target->crash);
  CHECK(target->crash->name == "EXCEPTION_ACCESS_VIOLATION");
  CHECK(target->crash->address == 0x18u);
  CHECK(target->readValue<uint8_t>(0x10005) == 5);
  CHECK_FALSE(target->readValue<uint8_t>(0x10100));
}

TEST_CASE("a stream past the end of the file is cut, with a warning") {
  B builder = windowsDump();
  builder.rawDirectoryEntry(5, 0x1000, 0x7ffffff0); // MemoryList far outside
  auto target = load(builder.build());
  CHECK(target->threads.size() == 2);
  REQUIRE_FALSE(target->warnings.empty());
  CHECK(target->warnings[0] == "the MemoryList stream (0x5) lies outside the file");
}

TEST_CASE("memory the file lacks is said once: how many ranges, how many bytes, whose stacks") {
  B builder;
  uint32_t stackRva = builder.add(std::vector<uint8_t>(0x100, 0x41));
  uint32_t context = builder.add(amd64Context(0x140001010, 0x10000));
  constexpr uint32_t Outside = 0x7fff0000;
  std::vector<uint8_t> threads;
  B::put32(threads, 2);
  addThread(threads, 100, 0x10000, 0x100, stackRva, 0x4d0, context);
  addThread(threads, 200, 0x20000, 0x100, Outside, 0x4d0, context);
  // 300 ranges outside the file (as a dump cut short lists them), one whole,
  // one that runs past the end.
  std::vector<uint8_t> memory;
  B::put32(memory, 302);
  auto descriptor = [&](uint64_t start, uint32_t size, uint32_t rva) {
    B::put64(memory, start);
    B::put32(memory, size);
    B::put32(memory, rva);
  };
  for (uint32_t i = 0; i < 300; ++i) descriptor(0x100000 + i * 0x1000, 0x100, Outside);
  descriptor(0x10000, 0x100, stackRva);
  descriptor(0x50000, 0x10000000, stackRva);
  builder.stream(7, systemInfo(9, 2));
  builder.stream(3, threads);
  builder.stream(5, memory);
  builder.rawDirectoryEntry(6, 168, Outside); // the exception stream
  auto target = load(builder.build());
  CHECK(target->readValue<uint8_t>(0x10000) == 0x41);
  std::vector<std::string> memoryWarnings;
  for (const std::string &w : target->warnings)
    if (w.find("memory") != std::string::npos) memoryWarnings.push_back(w);
  REQUIRE(memoryWarnings.size() == 1);
  CHECK_THAT(memoryWarnings[0], Catch::StartsWith("the dump's memory is cut short: of its 302 memory ranges, 300 lie "
                                                  "outside the file and 1 runs past its end (") &&
                                    Catch::EndsWith(" bytes missing); the stack of thread 200 is cut short"));
  // Not buried under one warning per range: what the dump lost besides memory.
  CHECK(std::count(target->warnings.begin(), target->warnings.end(), "the Exception stream (0x6) lies outside the file"));
  // The crash is unknown, not "none recorded".
  CHECK_FALSE(target->crash);
  CHECK(target->crashUnreadable == "the Exception stream (0x6) lies outside the file");
}

TEST_CASE("an exception stream too short for its record makes the crash unknown, with a warning") {
  B builder;
  uint32_t stackRva = builder.add(std::vector<uint8_t>(0x100, 0x41));
  uint32_t context = builder.add(amd64Context(0x140001010, 0x10000));
  std::vector<uint8_t> threads;
  B::put32(threads, 1);
  addThread(threads, 100, 0x10000, 0x100, stackRva, 0x4d0, context);
  builder.stream(7, systemInfo(9, 2));
  builder.stream(3, threads);
  builder.stream(6, std::vector<uint8_t>(10));
  auto target = load(builder.build());
  CHECK_FALSE(target->crash);
  CHECK(target->crashUnreadable == "the exception stream is too short");
  CHECK(std::count(target->warnings.begin(), target->warnings.end(), "the exception stream is too short") == 1);
}

TEST_CASE("a context that ends before its registers leaves that thread's registers unknown; lldb's 720 bytes do not") {
  auto lldb = load(windowsDump(720).build());
  CHECK(lldb->threads[0].context.pc() == 0x140001010u);
  auto target = load(windowsDump(0xf0).build());
  CHECK_FALSE(target->threads[0].context.pc());
  CHECK(target->threads[1].context.pc());
  bool warned = false;
  for (const std::string &w : target->warnings) warned |= w.find("thread 100's context") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("a thread listed with no context at all is marked so, without a warning (Wine's writer does this)") {
  auto target = load(windowsDump(0).build());
  CHECK(target->threads[0].contextAbsent);
  CHECK_FALSE(target->threads[0].context.pc());
  CHECK_FALSE(target->threads[1].contextAbsent);
  for (const std::string &w : target->warnings) CHECK(w.find("thread 100's context") == std::string::npos);
}

TEST_CASE("a list that claims more entries than it holds is cut to what is there") {
  B builder;
  std::vector<uint8_t> threads;
  B::put32(threads, 1000);
  addThread(threads, 7, 0, 0, 0, 0x4d0, builder.add(amd64Context(1, 2)));
  builder.stream(7, systemInfo(9, 2));
  builder.stream(3, threads);
  auto target = load(builder.build());
  CHECK(target->threads.size() == 1);
  // Once, though the list is read for the threads and for their stacks' memory.
  CHECK(std::count(target->warnings.begin(), target->warnings.end(), "ThreadList: 1000 entries claimed, 1 present") ==
        1);
}

TEST_CASE("Memory64List ranges follow one another from the base RVA") {
  B builder = windowsDump();
  addMemory64List(builder, {0xaa, 0xbb, 0xcc, 0xdd}, {{0x50000, 1}, {0x60000, 3}});
  auto target = load(builder.build());
  CHECK(target->readValue<uint8_t>(0x50000) == 0xaa);
  CHECK(target->readValue<uint16_t>(0x60001) == 0xddcc);
  CHECK_FALSE(target->readValue<uint8_t>(0x50001));
}

TEST_CASE("a thread stack at RVA 0 is not read from the file header; the memory lists hold it") {
  // Wine's full-memory dumps name each stack {start, size, RVA 0} and put its bytes in Memory64List.
  CHECK_FALSE(load(windowsDump(0x4d0, 0x10).build())->readValue<uint8_t>(0x20000));
  B builder = windowsDump(0x4d0, 0x10);
  addMemory64List(builder, std::vector<uint8_t>(0x10, 0x11), {{0x20000, 0x10}});
  CHECK(load(builder.build())->readValue<uint64_t>(0x20008) == 0x1111111111111111);
}

TEST_CASE("a string at an odd offset reads right (found by fuzz_minidump)") {
  B builder;
  std::vector<uint8_t> odd = {0};
  B::put32(odd, 4);
  for (uint8_t b : std::vector<uint8_t>{'o', 0, 'k', 0}) odd.push_back(b);
  uint32_t rva = builder.add(odd) + 1;
  builder.stream(7, systemInfo(9, 2));
  std::vector<uint8_t> bytes = builder.build();
  std::vector<std::string> warnings;
  auto reader = minidump::Reader::create(bytes, warnings);
  REQUIRE(bool(reader));
  CHECK(reader->string(rva) == "ok");
}

TEST_CASE("not a minidump, or no directory: an error") {
  std::vector<uint8_t> junk(64, 'x');
  TempFile file(junk);
  auto result = loadMinidump(file.path);
  REQUIRE_FALSE(bool(result));
  CHECK(llvm::toString(result.takeError()) == "not a minidump (no MDMP signature)");
  B empty;
  TempFile emptyFile(empty.build());
  auto none = loadMinidump(emptyFile.path);
  REQUIRE_FALSE(bool(none));
  llvm::consumeError(none.takeError());
}

TEST_CASE("Minidump strings keep a name around a lone surrogate", "[minidump]") {
  using stackwalk::minidump::Reader;
  CHECK(Reader::utf16ToUtf8({'a', 0xd800, 'b'}) == "a\xef\xbf\xbd" "b");      // U+FFFD for the lone high surrogate
  CHECK(Reader::utf16ToUtf8({0xdc00, 'x'}) == "\xef\xbf\xbd" "x");            // and for a lone low one
  CHECK(Reader::utf16ToUtf8({0xd83d, 0xde00}) == "\xf0\x9f\x98\x80");         // a pair stays a pair (U+1F600)
  CHECK(Reader::utf16ToUtf8({'n', 't', 'd', 'l', 'l'}) == "ntdll");
}

TEST_CASE("strings named many times cost a bounded amount, and hostile lists a bounded number of warnings") {
  // A Crashpad info stream (found by fuzz_walk): 2,000 module links to one
  // module info whose list has 2,000 entries outside the file, then names one
  // 60 KiB string 2,000 times. Read in full that is 240 GB of text and 4
  // million warnings.
  B builder = windowsDump();
  std::vector<uint8_t> text;
  B::put32(text, 60 * 1024);
  text.resize(4 + 60 * 1024, 'a');
  uint32_t textRva = builder.add(text);
  std::vector<uint8_t> list;
  B::put32(list, 4000);
  for (int i = 0; i < 2000; ++i) B::put32(list, 0x7ffffff0);
  for (int i = 0; i < 2000; ++i) B::put32(list, textRva);
  uint32_t listRva = builder.add(list);
  std::vector<uint8_t> info; // version; list_annotations, simple_annotations, annotation_objects
  B::put32(info, 1);
  B::put32(info, uint32_t(list.size()));
  B::put32(info, listRva);
  info.resize(28, 0);
  uint32_t infoRva = builder.add(info);
  std::vector<uint8_t> links;
  B::put32(links, 2000);
  for (int i = 0; i < 2000; ++i) {
    B::put32(links, 0);
    B::put32(links, uint32_t(info.size()));
    B::put32(links, infoRva);
  }
  uint32_t linksRva = builder.add(links);
  std::vector<uint8_t> stream(36, 0); // version, report id, client id
  B::put32(stream, 0);                // no process-wide annotations
  B::put32(stream, 0);
  B::put32(stream, uint32_t(links.size()));
  B::put32(stream, linksRva);
  builder.stream(0x43500001, stream);
  auto target = load(builder.build());
  size_t bytes = 0;
  for (const Module &module : target->modules)
    for (const std::string &annotation : module.listAnnotations) bytes += annotation.size();
  CHECK(bytes > 0);
  CHECK(bytes <= 8u << 20);
  CHECK(target->warnings.size() <= 260);
  CHECK(std::count(target->warnings.begin(), target->warnings.end(), "the dump's strings past 8 MiB were not read") == 1);
}

TEST_CASE("a Linux module recorded smaller than its mappings (lldb: the first segment only) reaches as far as they run") {
  B builder;
  std::vector<uint8_t> threads;
  B::put32(threads, 1);
  addThread(threads, 100, 0x10000, 0, 0, 0x4d0, builder.add(amd64Context(0x7f0000001010, 0x10000)));
  std::vector<uint8_t> modules;
  B::put32(modules, 2);
  addModule(builder, modules, 0x7f0000000000, 0x1000, 0, "/lib/x86_64-linux-gnu/libc.so.6");
  addModule(builder, modules, 0x555500000000, 0x3000, 0, "/app/program");
  // libc's link-map name differs from the path its mappings give; the anonymous
  // mapping after it and the next file's are not its own.
  const std::string maps = "555500000000-555500002000 r-xp 00000000 fe:00 7 /app/program\n"
                           "7f0000000000-7f0000001000 r--p 00000000 fe:00 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
                           "7f0000001000-7f0000004000 r-xp 00001000 fe:00 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
                           "7f0000004000-7f0000005000 rw-p 00004000 fe:00 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
                           "7f0000005000-7f0000006000 rw-p 00000000 00:00 0\n"
                           "7f0000006000-7f0000008000 r-xp 00000000 fe:00 2 /usr/lib/x86_64-linux-gnu/libm.so.6\n";
  builder.stream(7, systemInfo(9, 0x8201));
  builder.stream(3, threads);
  builder.stream(4, modules);
  builder.stream(0x47670009, std::vector<uint8_t>(maps.begin(), maps.end()));
  auto target = load(builder.build());
  auto size = [&](const char *name) {
    auto module = std::find_if(target->modules.begin(), target->modules.end(), [&](auto &m) { return m.name == name; });
    return module == target->modules.end() ? 0 : module->size;
  };
  CHECK(size("libc.so.6") == 0x5000u);
  CHECK(size("program") == 0x3000u); // a recorded size larger than the mappings stays
}

TEST_CASE("a Linux dump's auxiliary vector is read in words of the process's size") {
  for (auto [arch, word] : {std::pair<uint16_t, unsigned>{0, 4}, {9, 8}}) { // x86, AMD64
    B builder;
    std::vector<uint8_t> auxv;
    for (uint64_t value : {uint64_t(3), uint64_t(0x40000034), uint64_t(9), uint64_t(0x400012a0), uint64_t(0),
                           uint64_t(0), uint64_t(9), uint64_t(0xdead)}) // AT_PHDR, AT_ENTRY, AT_NULL, then past it
      for (unsigned byte = 0; byte < word; ++byte) auxv.push_back(uint8_t(value >> (8 * byte)));
    builder.stream(7, systemInfo(arch, 0x8201));
    builder.stream(0x47670008, auxv);
    CHECK(load(builder.build())->process.auxv ==
          std::vector<std::pair<uint64_t, uint64_t>>{{3, 0x40000034}, {9, 0x400012a0}});
  }
}

TEST_CASE("OS version fields no OS has had (lldb leaves them uninitialized) are an unknown version") {
  for (auto [major, minor, expected] : {std::tuple<uint32_t, uint32_t, const char *>{10, 0, "10.0.17134"},
                                        {3495824896u, 32767, ""}, {6, 100000, ""}}) {
    B builder;
    std::vector<uint8_t> threads;
    B::put32(threads, 1);
    addThread(threads, 100, 0x10000, 0, 0, 0x4d0, builder.add(amd64Context(0x1000, 0x10000)));
    builder.stream(7, systemInfo(9, 0x8201, major, minor));
    builder.stream(3, threads);
    CHECK(load(builder.build())->osVersion == expected);
  }
}
