// A module file described in LLVM's ELF YAML (yaml2obj, from ObjectYAML),
// made in memory: the synthetic images unwinder and frames tests walk over.
#pragma once

#include "stackwalk/core/ModuleImage.h"

#include "llvm/ObjectYAML/yaml2obj.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

namespace stackwalk::synthetic {

inline std::shared_ptr<ModuleImage> imageFromYaml(const char *yaml, const std::string &name) {
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  llvm::yaml::Input input(yaml);
  REQUIRE(llvm::yaml::convertYAML(input, out, [](const llvm::Twine &message) { FAIL(message.str()); }));
  auto image = ModuleImage::fromFileBuffer(llvm::MemoryBuffer::getMemBufferCopy(bytes), name);
  REQUIRE(bool(image));
  return std::shared_ptr<ModuleImage>(std::move(*image));
}

} // namespace stackwalk::synthetic
