#include "PdbScopeCheck.h"
#include "PdbStreamCheck.h"

#include "stackwalk/core/Fail.h"

#include "llvm/DebugInfo/CodeView/DebugLinesSubsection.h"
#include "llvm/DebugInfo/CodeView/DebugSubsectionRecord.h"
#include "llvm/DebugInfo/CodeView/SymbolDeserializer.h"
#include "llvm/DebugInfo/CodeView/SymbolRecord.h"
#include "llvm/DebugInfo/PDB/Native/DbiModuleList.h"
#include "llvm/DebugInfo/PDB/Native/DbiStream.h"
#include "llvm/DebugInfo/PDB/Native/ModuleDebugStream.h"
#include "llvm/DebugInfo/PDB/Native/NativeSession.h"
#include "llvm/DebugInfo/PDB/Native/PDBFile.h"
#include "llvm/DebugInfo/PDB/Native/RawConstants.h"
#include "llvm/Object/COFF.h"
#include "llvm/Support/BinaryStreamReader.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
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

// A stream's bytes read a contiguous run of its blocks at a time: a
// MappedBlockStream read per record costs several times the check itself.
class ChunkedReader {
public:
  explicit ChunkedReader(BinaryStreamRef stream) : reader_(stream) {}
  uint32_t size() const { return reader_.getLength(); }
  // The n bytes at `at`: a view into the run that holds them, else (across
  // blocks that are not adjacent) a copy of just those; false past the end.
  bool bytesAt(uint32_t at, uint32_t n, ArrayRef<uint8_t> &out) {
    if (at < chunkStart_ || uint64_t(at) + n > chunkStart_ + chunk_.size()) {
      reader_.setOffset(at);
      if (Error error = reader_.readLongestContiguousChunk(chunk_)) return consumeError(std::move(error)), false;
      chunkStart_ = at;
    }
    if (uint64_t(at) + n <= chunkStart_ + chunk_.size()) {
      out = chunk_.slice(at - chunkStart_, n);
      return true;
    }
    reader_.setOffset(at);
    if (Error error = reader_.readBytes(out, n)) return consumeError(std::move(error)), false;
    return true;
  }

private:
  BinaryStreamReader reader_;
  ArrayRef<uint8_t> chunk_;
  uint32_t chunkStart_ = 0;
};

// One module's records, cut as LLVM's CVSymbolArray cuts them (a 2-byte
// length of what follows it, at least the 2-byte kind; its walk ends at the
// first that does not fit). Each scope's End must be a later record, within
// the scope around it.
Error checkScopes(const CVSymbolArray &records, uint32_t module) {
  // The array's stream is the module stream from its start; its records
  // begin after the signature, where the first record's offset says.
  if (records.begin() == records.end()) return Error::success();
  ChunkedReader stream(records.getUnderlyingStream());
  // Record offsets come in increasing order: a sorted vector, searched once per End.
  std::vector<uint32_t> offsets, ends, open; // every record; every End named; the Ends around the record
  for (uint32_t offset = records.begin().offset(); uint64_t(offset) + 4 <= stream.size();) {
    ArrayRef<uint8_t> prefix, bytes;
    if (!stream.bytesAt(offset, 4, prefix)) break;
    uint16_t length = support::endian::read16le(prefix.data());
    auto kind = SymbolKind(support::endian::read16le(prefix.data() + 2));
    if (length < 2 || uint64_t(offset) + 2 + length > stream.size()) break;
    offsets.push_back(offset);
    uint32_t next = offset + 2 + length;
    if (!isProcedure(kind) && kind != S_INLINESITE) {
      offset = next;
      continue;
    }
    if (!stream.bytesAt(offset, 2 + length, bytes)) break;
    while (!open.empty() && open.back() <= offset) open.pop_back();
    std::optional<uint32_t> end = scopeEnd(CVSymbol(bytes));
    if (!end) return fail("a procedure or inline site of PDB module " + Twine(module) + " does not read");
    if (*end <= offset || (!open.empty() && *end > open.back()))
      return fail("a scope of PDB module " + Twine(module) + " ends outside the scope around it");
    ends.push_back(*end);
    open.push_back(*end);
    offset = next;
  }
  for (uint32_t end : ends)
    if (!std::binary_search(offsets.begin(), offsets.end(), end))
      return fail("a scope of PDB module " + Twine(module) + " ends inside a record");
  return Error::success();
}

// LLVM 19's SymbolCache::findLineTable places each lines subsection by its
// RelocSegment through NativeSession::getRVAFromSectOffset, which clamps a
// section past the headers to one past them and reads that header: past the
// end of the array (fuzz/findings/llvm19-pdb-line-table-section-past-headers).
// The subsections LLVM skips (those that do not initialize) are skipped here too.
Error checkLineSections(const pdb::ModuleDebugStreamRef &stream, uint32_t sections, uint32_t module) {
  for (const DebugSubsectionRecord &subsection : stream.getSubsectionsArray()) {
    if (subsection.kind() != DebugSubsectionKind::Lines) continue;
    DebugLinesSubsectionRef lines;
    if (Error error = lines.initialize(BinaryStreamReader(subsection.getRecordData()))) {
      consumeError(std::move(error));
      continue;
    }
    if (lines.header()->RelocSegment > sections)
      return fail("a line table of PDB module " + Twine(module) + " names section " +
                  Twine(uint32_t(lines.header()->RelocSegment)) + " of " + Twine(sections));
  }
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
    if (Error error = checkStreamHasBytes(file, stream, "module " + Twine(module) + "'s symbol stream")) return error;
    auto debugStream = session.getModuleDebugStream(module);
    if (!debugStream) return debugStream.takeError();
    if (Error error = checkScopes(debugStream->getSymbolArray(), module)) return error;
    if (Error error = checkLineSections(*debugStream, dbi->getSectionHeaders().size(), module)) return error;
  }
  return Error::success();
}

} // namespace stackwalk
