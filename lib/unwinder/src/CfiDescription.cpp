#include "CfiDescription.h"

#include "stackwalk/core/Hex.h"
#include "stackwalk/core/Registers.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/DebugInfo/DIContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace llvm::dwarf;

namespace stackwalk {
namespace {

// LLVM's dumps name registers through this callback; without it they are "reg7".
DIDumpOptions dumpOptions(Arch arch, bool isEh) {
  DIDumpOptions options;
  options.IsEH = isEh;
  options.GetNameForDWARFReg = [arch](uint64_t number, bool) -> StringRef {
    for (const RegisterInfo &info : registerLayout(arch))
      if (info.number == number) return StringRef(info.name.data(), info.name.size());
    return {};
  };
  return options;
}

// Text from an LLVM dump, one string per line, blank lines dropped.
void appendLines(std::vector<std::string> &out, const std::string &text) {
  SmallVector<StringRef> lines;
  StringRef(text).split(lines, '\n');
  for (StringRef line : lines)
    if (!line.trim().empty()) out.push_back(line.rtrim().str());
}

// LLVM 19 prints an expression operand that is a block byte by byte, for as
// many bytes as the length before it says, whether the expression holds them
// or not: a length of 2^32 in 400 bytes of CFI printed gigabytes
// (fuzz/findings/llvm19-cfi-expression-block-past-end). Only expressions whose
// operations all end inside them are handed to its dumps.
bool expressionsInBounds(const CFIProgram &program) {
  for (const CFIProgram::Instruction &instruction : program) {
    if (!instruction.Expression) continue;
    uint64_t size = instruction.Expression->getData().size();
    for (const DWARFExpression::Operation &operation : *instruction.Expression)
      if (!operation.isError() && operation.getEndOffset() > size) return false;
  }
  return true;
}

} // namespace

void describeCfiEntry(std::vector<std::string> &out, const CfiSection::Entry &entry, uint64_t fileAddress, Arch arch,
                      bool isEh) {
  DIDumpOptions options = dumpOptions(arch, isEh);
  const CIE *cie = entry.fde->getLinkedCIE();
  if ((cie && !expressionsInBounds(cie->cfis())) || !expressionsInBounds(entry.fde->cfis())) {
    out.push_back("a DWARF expression in this entry's CFI runs past its end: the entry is not printed");
    return;
  }
  std::string text;
  raw_string_ostream stream(text);
  if (cie) cie->dump(stream, options);
  entry.fde->dump(stream, options);
  appendLines(out, text);

  const UnwindRow *inForce = rowAt(entry.table, fileAddress);
  if (!inForce) {
    out.push_back("no row of the FDE covers " + hex(fileAddress));
    return;
  }
  std::string row;
  raw_string_ostream rowStream(row);
  inForce->dump(rowStream, options);
  out.push_back("in force at " + hex(fileAddress) + ": " + StringRef(row).trim().str());
}

} // namespace stackwalk
