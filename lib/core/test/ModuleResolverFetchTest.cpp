#include "stackwalk/core/ModuleResolver.h"

#include "ModuleFiles.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>

using namespace stackwalk;
using Kind = SymbolRequest::Kind;

namespace {

// Records what it is asked for; "serves" a Breakpad file for the debug ids it
// is given, and for the build-ids in `executables` and `debugFiles` a copy of
// the file named there, each kept in the cache where HttpSymbolFetcher keeps it and said to
// come from http://store/ and its path there.
class FakeFetcher : public SymbolFetcher {
public:
  explicit FakeFetcher(std::string cache) : cache_(std::move(cache)) {}
  const std::string &cacheDir() const override { return cache_; }
  void fetch(const std::vector<SymbolRequest> &requests, std::vector<std::string> &) override {
    asked.insert(asked.end(), requests.begin(), requests.end());
    for (const SymbolRequest &request : requests) {
      if (request.kind == Kind::BreakpadSymbols && serves.count(request.key)) {
        llvm::SmallString<256> folder(cache_);
        llvm::sys::path::append(folder, request.name, request.key);
        llvm::sys::fs::create_directories(folder);
        std::ofstream(std::string(folder) + "/" + request.name + ".sym")
            << "MODULE Linux x86_64 " << request.key << " " << request.name << "\nFUNC 10 10 0 served\n";
      }
      bool executable = request.kind == Kind::ElfExecutable && executables.count(request.key);
      bool debugFile = request.kind == Kind::ElfDebugFile && debugFiles.count(request.key);
      if (executable || debugFile) {
        llvm::SmallString<256> folder(cache_);
        llvm::sys::path::append(folder, ".build-id", request.key.substr(0, 2));
        llvm::sys::fs::create_directories(folder);
        std::string file = std::string(folder) + "/" + request.key.substr(2) + (debugFile ? ".debug" : "");
        REQUIRE(!llvm::sys::fs::copy_file(debugFile ? debugFiles[request.key] : executables[request.key], file));
      }
    }
  }
  std::optional<std::string> originOf(const std::string &path) const override {
    if (!llvm::StringRef(path).starts_with(cache_) || !llvm::sys::fs::exists(path)) return std::nullopt;
    return "http://store" + path.substr(cache_.size());
  }

  std::vector<SymbolRequest> asked;
  std::set<std::string> serves;
  std::map<std::string, std::string> executables, debugFiles;

private:
  std::string cache_;
};

Module elfModule(std::string name, uint64_t base, uint8_t id) {
  Module module;
  module.name = std::move(name);
  module.base = base;
  module.size = 0x1000;
  module.buildId = {id, 0x22, 0x33, 0x44};
  return module;
}

std::string temporaryDirectory() {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("resolver-fetch", dir));
  return std::string(dir);
}

// glibc's build-id, or nullopt (with a warning) where the test dumps are not unpacked.
std::optional<std::vector<uint8_t>> libcBuildId() {
  auto libc = ModuleImage::open(test::libcPath);
  if (!libc) {
    llvm::consumeError(libc.takeError());
    WARN("skipped: " << test::libcPath << " is not unpacked");
    return std::nullopt;
  }
  return (*libc)->buildId();
}

// The modules as a resolver asking this fetcher, and no host file, leaves them.
std::vector<Module> resolvedWith(FakeFetcher &fetcher, std::vector<Module> modules) {
  Target target(Arch::X86_64, OS::Linux, "test", std::make_unique<BufferMemory>());
  target.modules = std::move(modules);
  ModuleSearchOptions options;
  options.hostFiles = false;
  options.fetcher = &fetcher;
  ModuleResolver(options).resolve(target);
  return std::move(target.modules);
}

} // namespace

TEST_CASE("modules without files ask for their file, debug file and symbol file; a served one is used") {
  Target target(Arch::X86_64, OS::Linux, "test", std::make_unique<BufferMemory>());
  target.modules = {elfModule("liba.so", 0x10000, 0x11), elfModule("libb.so", 0x20000, 0x12)};
  FakeFetcher fetcher(temporaryDirectory());
  fetcher.serves.insert(target.modules[0].breakpadDebugId());
  ModuleSearchOptions options;
  options.hostFiles = false;
  options.fetcher = &fetcher;
  ModuleResolver(options).resolve(target);
  std::multiset<Kind> kinds;
  for (const SymbolRequest &request : fetcher.asked) kinds.insert(request.kind);
  CHECK(kinds == std::multiset<Kind>{Kind::ElfExecutable, Kind::ElfExecutable, Kind::ElfDebugFile, Kind::ElfDebugFile,
                                     Kind::BreakpadSymbols, Kind::BreakpadSymbols});
  CHECK(fetcher.asked.front().key == "11223344");
  CHECK(target.modules[0].symbolFile);
  CHECK(target.modules[0].symbolSource() == "breakpad");
  CHECK_FALSE(target.modules[1].symbolFile);
  llvm::sys::fs::remove_directories(fetcher.cacheDir());
}

TEST_CASE("only a Windows dump's modules are asked for by TimeDateStamp and SizeOfImage") {
  Module module;
  module.name = "crash.exe";
  module.peTimeDateStamp = 0x5f2a1b3c;
  module.peSizeOfImage = 0x7000;
  auto kinds = [&](OS os) {
    std::vector<Kind> out;
    for (const SymbolRequest &request : ModuleResolver::requestsFor(module, os)) out.push_back(request.kind);
    return out;
  };
  CHECK(kinds(OS::Windows) == std::vector<Kind>{Kind::PeImage});
  CHECK(ModuleResolver::requestsFor(module, OS::Windows).front().key == "5F2A1B3C7000");
  CHECK(kinds(OS::Linux).empty()); // a minidump's ELF modules carry these fields too
  module.name = "../escape.exe";
  CHECK(kinds(OS::Windows).empty()); // a name from the dump that is not a file's name
}

TEST_CASE("a dump of many modules asks for a bounded number of files, with a warning") {
  Target target(Arch::X86_64, OS::Linux, "test", std::make_unique<BufferMemory>());
  for (unsigned i = 0; i < 3000; ++i) {
    target.modules.push_back(elfModule("lib" + std::to_string(i) + ".so", 0x100000 + i * 0x1000, uint8_t(i)));
    target.modules.back().buildId.push_back(uint8_t(i >> 8));
  }
  FakeFetcher fetcher(temporaryDirectory());
  ModuleSearchOptions options;
  options.hostFiles = false;
  options.fetcher = &fetcher;
  ModuleResolver(options).resolve(target);
  CHECK(fetcher.asked.size() == 4096);
  CHECK(std::any_of(target.warnings.begin(), target.warnings.end(), [](const std::string &w) {
    return w.find("the first 4096 of 9000 files") != std::string::npos;
  }));
  llvm::sys::fs::remove_directories(fetcher.cacheDir());
}

TEST_CASE("a fetched file is named by its URL, taken or refused, and again when a later walk finds it in the cache") {
  std::optional<std::vector<uint8_t>> libc = libcBuildId();
  if (!libc) return;
  std::string libcId = hexString(*libc);
  FakeFetcher fetcher(temporaryDirectory());
  // The store has glibc under its own build-id, and under the other module's too.
  fetcher.executables = {{libcId, test::libcPath}, {"12223344", test::libcPath}};
  for (int walk : {1, 2}) {
    CAPTURE(walk);
    std::vector<Module> modules = {elfModule("libc.so.6", 0x10000, 0), elfModule("libother.so", 0x200000, 0x12)};
    modules[0].buildId = *libc;
    modules = resolvedWith(fetcher, std::move(modules));
    REQUIRE(modules[0].image);
    CHECK(modules[0].imageNote.find("fetched from http://store/.build-id/" + libcId.substr(0, 2)) != std::string::npos);
    CHECK_FALSE(modules[1].image);
    CHECK(modules[1].imageNote.starts_with("no matching file; rejected: " + fetcher.cacheDir() +
                                           "/.build-id/12/223344 (fetched from http://store/.build-id/12/223344)"));
    CHECK(modules[1].imageNote.find("(build-id " + libcId + ")") != std::string::npos);
  }
  llvm::sys::fs::remove_directories(fetcher.cacheDir());
}

TEST_CASE("a fetched image's refused debug file is said once, though the image is looked at again") {
  std::optional<std::vector<uint8_t>> libc = libcBuildId();
  if (!libc) return;
  std::string libcId = hexString(*libc);
  FakeFetcher fetcher(temporaryDirectory());
  // glibc, and as its debug file the dynamic loader (another build-id).
  fetcher.executables = {{libcId, test::libcPath}};
  fetcher.debugFiles = {{libcId, std::string(STACKWALK_DUMPS_DIR) + "/sysroot/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"}};
  std::vector<Module> modules = {elfModule("libc.so.6", 0x10000, 0)};
  modules[0].buildId = *libc;
  modules = resolvedWith(fetcher, std::move(modules));
  const std::string &note = modules[0].imageNote;
  REQUIRE(modules[0].image);
  CHECK(note.find("debug file rejected: ") != std::string::npos);
  CHECK(note.find("debug file rejected: ") == note.rfind("debug file rejected: "));
  llvm::sys::fs::remove_directories(fetcher.cacheDir());
}
