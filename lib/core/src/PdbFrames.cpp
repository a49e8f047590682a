#include "stackwalk/core/PdbFrames.h"

#include "stackwalk/core/Demangle.h"
#include "stackwalk/core/X86NameDecoration.h"

#include "llvm/DebugInfo/PDB/IPDBEnumChildren.h"
#include "llvm/DebugInfo/PDB/PDBSymbolExe.h"
#include "llvm/DebugInfo/PDB/IPDBLineNumber.h"
#include "llvm/DebugInfo/PDB/IPDBSession.h"
#include "llvm/DebugInfo/PDB/IPDBSourceFile.h"
#include "llvm/DebugInfo/PDB/PDBSymbolFunc.h"
#include "llvm/DebugInfo/PDB/PDBSymbolPublicSymbol.h"
#include "llvm/DebugInfo/PDB/PDBSymbolTypeFunctionSig.h"

using namespace llvm;
using namespace llvm::pdb;

namespace stackwalk {
namespace {

// File and line of the first line record in an enumeration.
void placeFrom(IPDBSession &session, IPDBEnumLineNumbers *lines, SourceFrame &frame) {
  if (!lines || lines->getChildCount() == 0) return;
  std::unique_ptr<IPDBLineNumber> line = lines->getNext();
  if (!line) return;
  if (auto file = session.getSourceFileById(line->getSourceFileId())) frame.file = file->getFileName();
  if (line->getLineNumber()) frame.line = line->getLineNumber();
}

} // namespace

std::vector<SourceFrame> pdbFramesAt(IPDBSession &session, uint32_t rva) {
  SourceFrame physical;
  std::unique_ptr<PDBSymbol> symbol = session.findSymbolByRVA(rva, PDB_SymType::Function);
  auto *function = dyn_cast_or_null<PDBSymbolFunc>(symbol.get());
  if (function) {
    physical.function = function->getName();
    physical.functionStart = function->getRelativeVirtualAddress();
    placeFrom(session, session.findLineNumbersByRVA(rva, 1).get(), physical);
  } else if (auto publicSymbol = session.findSymbolByRVA(rva, PDB_SymType::PublicSymbol)) {
    auto *named = dyn_cast<PDBSymbolPublicSymbol>(publicSymbol.get());
    if (!named) return {};
    bool x86 = session.getGlobalScope()->getMachineType() == PDB_Machine::x86;
    physical.function = x86 ? undecoratedX86Name(demangledName(named->getName())) : demangledName(named->getName());
    physical.functionStart = named->getRelativeVirtualAddress();
  } else {
    return {};
  }
  // Inlined calls, innermost first; each at the line the PDB records for it.
  // LLVM's native reader answers these by virtual address only (its ...ByRVA
  // forms enumerate nothing), so the RVA goes through the session's base.
  std::vector<SourceFrame> frames;
  uint64_t va = session.getLoadAddress() + rva;
  if (function)
    if (auto inlined = function->findInlineFramesByVA(va))
      while (auto site = inlined->getNext()) {
        SourceFrame frame;
        frame.function = site->getName();
        frame.inlined = true;
        placeFrom(session, site->findInlineeLinesByVA(va, 1).get(), frame);
        frames.push_back(std::move(frame));
      }
  frames.push_back(std::move(physical));
  return frames;
}

} // namespace stackwalk
