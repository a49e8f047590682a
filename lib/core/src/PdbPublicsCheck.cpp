#include "PdbPublicsCheck.h"

#include "stackwalk/core/Fail.h"

#include "llvm/DebugInfo/CodeView/SymbolDeserializer.h"
#include "llvm/DebugInfo/CodeView/SymbolRecord.h"
#include "llvm/DebugInfo/PDB/Native/PDBFile.h"
#include "llvm/DebugInfo/PDB/Native/PublicsStream.h"
#include "llvm/DebugInfo/PDB/Native/SymbolStream.h"

using namespace llvm;
using namespace llvm::codeview;

namespace stackwalk {

Error checkPublicSymbols(pdb::PDBFile &file) {
  // Without either stream LLVM finds no public symbol, as it does when it cannot read them.
  if (!file.hasPDBPublicsStream() || !file.hasPDBSymbolStream()) return Error::success();
  auto publics = file.getPDBPublicsStream();
  if (!publics) return publics.takeError();
  auto symbols = file.getPDBSymbolStream();
  if (!symbols) return symbols.takeError();
  BinaryStreamRef records = symbols->getSymbolArray().getUnderlyingStream();
  for (uint32_t offset : publics->getAddressMap()) {
    Expected<CVSymbol> record = readSymbolFromStream(records, offset);
    if (!record) {
      consumeError(record.takeError()); // LLVM's search gives up on it, as it should
      continue;
    }
    if (auto decoded = SymbolDeserializer::deserializeAs<PublicSym32>(*record); !decoded)
      return fail("the PDB's public symbol at offset " + Twine(offset) + " of its symbol records cannot be read: " +
                  toString(decoded.takeError()));
  }
  return Error::success();
}

} // namespace stackwalk
