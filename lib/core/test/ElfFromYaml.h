// An ELF file described in yaml2obj's YAML (LLVM's ObjectYAML), for tests
// that need a file with exactly the sections, symbols or relocations they say.
#pragma once

#include "llvm/ObjectYAML/yaml2obj.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

namespace stackwalk::test {

inline std::unique_ptr<llvm::MemoryBuffer> elfFromYaml(const std::string &yaml) {
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  llvm::yaml::Input input(yaml);
  REQUIRE(llvm::yaml::convertYAML(input, out, [](const llvm::Twine &message) { FAIL(message.str()); }));
  return llvm::MemoryBuffer::getMemBufferCopy(bytes);
}

} // namespace stackwalk::test
