#include "PdbScopeCheck.h"

#include "stackwalk/core/Fail.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/DebugInfo/CodeView/SymbolDeserializer.h"
#include "llvm/DebugInfo/CodeView/SymbolRecord.h"
#include "llvm/DebugInfo/PDB/Native/DbiModuleList.h"
#include "llvm/DebugInfo/PDB/Native/DbiStream.h"
#include "llvm/DebugInfo/PDB/Native/ModuleDebugStream.h"
#include "llvm/DebugInfo/PDB/Native/NativeSession.h"
#include "llvm/DebugInfo/PDB/Native/PDBFile.h"
#include "llvm/DebugInfo/PDB/Native/RawConstants.h"

#include <vector>

using namespace llvm;
using namespace llvm::codeview;

namespace stackwalk {
namespace {

bool isProcedure(SymbolKind kind) {
  switch (kind) {
  case S_GPROC32:
  case S_LPROC32:
  case S_GPROC32_ID:
  case S_LPROC32_ID:
  case S_LPROC32_DPC:
  case S_LPROC32_DPC_ID:
    return true;
  default:
    return false;
  }
}

// The End a scope-opening record names, as LLVM reads it; nullopt when the
// record does not read (procedures and inline sites only).
std::optional<uint32_t> scopeEnd(const CVSymbol &record) {
  if (record.kind() == S_INLINESITE) {
    auto site = SymbolDeserializer::deserializeAs<InlineSiteSym>(record);
    if (!site) return consumeError(site.takeError()), std::nullopt;
    return site->End;
  }
  auto procedure = SymbolDeserializer::deserializeAs<ProcSym>(record);
  if (!procedure) return consumeError(procedure.takeError()), std::nullopt;
  return procedure->End;
}

// One module's records: each scope's End a later record, within the scope around it.
Error checkScopes(const CVSymbolArray &records, uint32_t module) {
  DenseSet<uint32_t> offsets;
  std::vector<uint32_t> ends, open; // every End named; the Ends of the scopes around the record
  for (auto record = records.begin(), last = records.end(); record != last; ++record) {
    uint32_t offset = record.offset();
    offsets.insert(offset);
    if (!isProcedure(record->kind()) && record->kind() != S_INLINESITE) continue;
    while (!open.empty() && open.back() <= offset) open.pop_back();
    std::optional<uint32_t> end = scopeEnd(*record);
    if (!end) return fail("a procedure or inline site of PDB module " + Twine(module) + " does not read");
    if (*end <= offset || (!open.empty() && *end > open.back()))
      return fail("a scope of PDB module " + Twine(module) + " ends outside the scope around it");
    ends.push_back(*end);
    open.push_back(*end);
  }
  for (uint32_t end : ends)
    if (!offsets.contains(end)) return fail("a scope of PDB module " + Twine(module) + " ends inside a record");
  return Error::success();
}

} // namespace

Error checkModuleScopes(pdb::NativeSession &session) {
  pdb::PDBFile &file = session.getPDBFile();
  auto dbi = file.getPDBDbiStream();
  if (!dbi) return dbi.takeError();
  const pdb::DbiModuleList &modules = dbi->modules();
  for (uint32_t module = 0; module < modules.getModuleCount(); ++module) {
    uint16_t stream = modules.getModuleDescriptor(module).getModuleStreamIndex();
    if (stream == pdb::kInvalidStreamIndex) continue; // no symbols: LLVM says so and reads none
    if (stream >= file.getNumStreams())
      return fail("PDB module " + Twine(module) + " names stream " + Twine(stream) + " of " +
                  Twine(file.getNumStreams()));
    auto debugStream = session.getModuleDebugStream(module);
    if (!debugStream) return debugStream.takeError();
    if (Error error = checkScopes(debugStream->getSymbolArray(), module)) return error;
  }
  return Error::success();
}

} // namespace stackwalk
