// ModuleResolver's account of modules whose files it finds but cannot use.
#include "stackwalk/core/ModuleResolver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

using namespace stackwalk;

namespace {

// A module mapped from the file `name` in a fresh directory holding `contents`.
struct MappedFile {
  explicit MappedFile(const std::string &name, const std::string &contents) {
    llvm::SmallString<128> dir;
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("resolver", dir));
    path = std::string(dir) + "/" + name;
    std::ofstream(path, std::ios::binary) << contents;
    target.modules.push_back(Module{});
    Module &module = target.modules.back();
    module.name = name;
    module.recordedPath = path;
    module.base = 0x7f0000000000;
    module.size = 0x1000;
  }
  bool warned() const {
    const std::string &name = target.modules[0].name;
    return std::any_of(target.warnings.begin(), target.warnings.end(),
                       [&](const std::string &line) { return line.find(name) != std::string::npos; });
  }
  std::string path;
  Target target{Arch::X86_64, OS::Linux, "elf-core", std::make_unique<BufferMemory>()};
};

} // namespace

TEST_CASE("a mapped data file (a locale archive) is noted as data, and no warning names it") {
  MappedFile locale("LC_CTYPE", std::string(4096, 'x'));
  ModuleResolver(ModuleSearchOptions{}).resolve(locale.target);
  const Module &module = locale.target.modules[0];
  CHECK_FALSE(module.image);
  CHECK(module.dataFile);
  CHECK(module.imageNote.starts_with("a data file, not an object file: " + locale.path));
  CHECK_FALSE(locale.warned());
}

TEST_CASE("a file with an object file's magic that cannot be read is a rejected module file, warned of") {
  // An ELF header of no class LLVM knows (3).
  MappedFile broken("libbroken.so", std::string("\x7f" "ELF\x03\x01\x01", 7) + std::string(57, '\0'));
  ModuleResolver(ModuleSearchOptions{}).resolve(broken.target);
  const Module &module = broken.target.modules[0];
  CHECK_FALSE(module.dataFile);
  CHECK(module.imageNote.starts_with("no matching file; rejected: " + broken.path));
  CHECK(broken.warned());
}

TEST_CASE("the modules asked for first are resolved first, each told of once, then the others") {
  MappedFile files("LC_CTYPE", std::string(4096, 'x'));
  for (const char *name : {"LC_NUMERIC", "LC_TIME"}) {
    Module module = files.target.modules[0];
    module.name = name;
    module.base += 0x10000 * files.target.modules.size();
    files.target.modules.push_back(module);
  }
  std::vector<Module> &modules = files.target.modules;
  std::vector<std::string> told;
  ModuleResolver(ModuleSearchOptions{})
      .resolve(files.target, {&modules[2], &modules[0], &modules[2]}, [&](const Module &module) {
        told.push_back(module.name);
        // LC_NUMERIC is not looked at before the ones asked for first.
        CHECK(modules[1].imageNote.empty());
      });
  CHECK(told == std::vector<std::string>{"LC_TIME", "LC_CTYPE"});
  for (const Module &module : modules) CHECK(module.dataFile);
}

TEST_CASE("a recorded path that already lies under the sysroot is the sysroot's file (qemu-user's -L prefix)") {
  MappedFile locale("LC_CTYPE", std::string(4096, 'x'));
  ModuleSearchOptions options;
  options.sysroot = llvm::sys::path::parent_path(locale.path).str();
  ModuleResolver(options).resolve(locale.target);
  CHECK(locale.target.modules[0].dataFile);

  // A file outside the sysroot is not read (no host files with a sysroot).
  MappedFile elsewhere("LC_TIME", std::string(4096, 'x'));
  ModuleResolver(options).resolve(elsewhere.target);
  CHECK_FALSE(elsewhere.target.modules[0].dataFile);
}
