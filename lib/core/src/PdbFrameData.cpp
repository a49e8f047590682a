#include "stackwalk/core/PdbFrameData.h"

#include "stackwalk/core/PdbSession.h"
#include "stackwalk/core/RegularFile.h"

#include "llvm/DebugInfo/CodeView/CodeView.h"
#include "llvm/DebugInfo/PDB/IPDBSession.h"
#include "llvm/DebugInfo/PDB/Native/DbiStream.h"
#include "llvm/DebugInfo/PDB/Native/NativeSession.h"
#include "llvm/DebugInfo/PDB/Native/PDBFile.h"
#include "llvm/DebugInfo/PDB/Native/PDBStringTable.h"
#include "llvm/Object/COFF.h"

namespace stackwalk {
namespace {

WindowsFrameInfo fromFrameData(const llvm::codeview::FrameData &record, std::string program) {
  WindowsFrameInfo info;
  info.type = WindowsFrameInfo::FrameData;
  info.start = record.RvaStart;
  info.size = record.CodeSize;
  info.prologSize = record.PrologSize;
  info.parameterSize = record.ParamsSize;
  info.savedRegisterSize = record.SavedRegsSize;
  info.localSize = record.LocalSize;
  info.maxStackSize = record.MaxStackSize;
  info.program = std::move(program);
  return info;
}

// FPO_DATA's attribute bits as winnt.h lays them out: cbProlog (8 bits),
// cbRegs (3), fHasSEH, fUseBP, a reserved bit, cbFrame (2). llvm::object::
// FpoData's accessors place fHasSEH and fUseBP at bits 9 and 10 and read 4
// bits of cbProlog, so the bits are taken here.
WindowsFrameInfo fromFpo(const llvm::object::FpoData &record) {
  constexpr uint32_t Dword = 4;
  uint16_t attributes = record.Attributes;
  WindowsFrameInfo info;
  info.type = WindowsFrameInfo::Fpo;
  info.start = record.Offset;
  info.size = record.Size;
  info.prologSize = attributes & 0xff;
  info.savedRegisterSize = ((attributes >> 8) & 0x7) * Dword;
  info.allocatesBasePointer = (attributes >> 12) & 1;
  info.localSize = record.NumLocals * Dword;
  info.parameterSize = record.NumParams * Dword;
  return info;
}

void sortByStart(std::vector<WindowsFrameInfo> &records) {
  std::stable_sort(records.begin(), records.end(),
                   [](const WindowsFrameInfo &a, const WindowsFrameInfo &b) { return a.start < b.start; });
}

} // namespace

llvm::Expected<std::unique_ptr<PdbFrameData>> PdbFrameData::open(const std::string &path) {
  auto bytes = readRegularFile(path);
  if (!bytes) return llvm::errorCodeToError(bytes.getError());
  return read(std::move(*bytes));
}

llvm::Expected<std::unique_ptr<PdbFrameData>> PdbFrameData::read(std::unique_ptr<llvm::MemoryBuffer> bytes) {
  std::unique_ptr<llvm::pdb::IPDBSession> session;
  if (llvm::Error error = openPdbSession(std::move(bytes), session)) return error;
  llvm::pdb::PDBFile &file = static_cast<llvm::pdb::NativeSession &>(*session).getPDBFile();
  auto dbi = file.getPDBDbiStream();
  if (!dbi) return dbi.takeError();
  auto table = std::unique_ptr<PdbFrameData>(new PdbFrameData);
  if (dbi->hasNewFpoRecords()) {
    auto strings = file.getStringTable();
    if (!strings) return strings.takeError();
    for (const llvm::codeview::FrameData &record : dbi->getNewFpoRecords()) {
      // A record whose program is not in the string table is left out: its
      // sizes alone would read as FPO data, which it is not.
      auto program = strings->getStringForID(record.FrameFunc);
      if (program)
        table->frameData_.push_back(fromFrameData(record, program->str()));
      else
        llvm::consumeError(program.takeError());
    }
  }
  if (dbi->hasOldFpoRecords())
    for (const llvm::object::FpoData &record : dbi->getOldFpoRecords()) table->fpo_.push_back(fromFpo(record));
  sortByStart(table->frameData_);
  sortByStart(table->fpo_);
  return table;
}

std::optional<WindowsFrameInfo> PdbFrameData::at(uint64_t rva) const {
  const WindowsFrameInfo *record = frameDataOrFpoCovering(frameData_, fpo_, rva, [](const WindowsFrameInfo &r) { return r.start; },
                                             [](const WindowsFrameInfo &r) { return r.size; });
  if (!record) return std::nullopt;
  return *record;
}

} // namespace stackwalk
