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

// A shared object of `machine` (EM_X86_64, EM_AARCH64) whose one loadable
// segment is .text at file address 0x1000 holding `content` (hex), with the
// symbol table `symbols` (YAML list entries, one per line, in .text): code
// the unwinders' tests read by its instructions and names, no unwind tables.
inline std::shared_ptr<ModuleImage> textImage(const std::string &machine, const std::string &content,
                                              const std::string &symbols, const std::string &name) {
  std::string yaml = "--- !ELF\n"
                     "FileHeader: {Class: ELFCLASS64, Data: ELFDATA2LSB, Type: ET_DYN, Machine: " + machine + "}\n"
                     "ProgramHeaders:\n"
                     "  - {Type: PT_LOAD, Flags: [PF_R, PF_X], FirstSec: .text, LastSec: .text, VAddr: 0x1000, "
                     "Align: 0x1000}\n"
                     "Sections:\n"
                     "  - Name: .text\n"
                     "    Type: SHT_PROGBITS\n"
                     "    Flags: [SHF_ALLOC, SHF_EXECINSTR]\n"
                     "    Address: 0x1000\n"
                     "    AddressAlign: 16\n"
                     "    Content: \"" + content + "\"\n"
                     "Symbols:\n" + symbols;
  return imageFromYaml(yaml.c_str(), name);
}

} // namespace stackwalk::synthetic
