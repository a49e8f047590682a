#include "stackwalk/core/PdbSession.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/RegularFile.h"

#include "llvm/DebugInfo/PDB/IPDBSession.h"
#include "llvm/DebugInfo/PDB/Native/DbiStream.h"
#include "llvm/DebugInfo/PDB/Native/ISectionContribVisitor.h"
#include "llvm/DebugInfo/PDB/Native/NativeSession.h"
#include "llvm/DebugInfo/PDB/Native/PDBFile.h"
#include "llvm/DebugInfo/PDB/Native/RawTypes.h"
#include "llvm/Object/COFF.h"

namespace stackwalk {
namespace {

// Whether every section contribution names a section the headers describe.
class SectionNumberCheck : public llvm::pdb::ISectionContribVisitor {
public:
  explicit SectionNumberCheck(uint32_t sections) : sections_(sections) {}
  void visit(const llvm::pdb::SectionContrib &contribution) override {
    if (contribution.ISect == 0 || contribution.ISect > sections_) ++beyond;
  }
  void visit(const llvm::pdb::SectionContrib2 &contribution) override { visit(contribution.Base); }
  uint32_t beyond = 0;

private:
  uint32_t sections_;
};

llvm::Error checkSectionNumbers(llvm::pdb::NativeSession &session) {
  auto dbi = session.getPDBFile().getPDBDbiStream();
  if (!dbi) return dbi.takeError();
  uint32_t sections = dbi->getSectionHeaders().size();
  if (sections == 0) return fail("the PDB has no section headers to place its symbols by");
  SectionNumberCheck check(sections);
  dbi->visitSectionContributions(check);
  if (check.beyond)
    return fail(llvm::Twine(check.beyond) + " section contribution(s) of the PDB name no section of its " +
                llvm::Twine(sections));
  return llvm::Error::success();
}

} // namespace

llvm::Error openPdbSession(std::unique_ptr<llvm::MemoryBuffer> bytes, std::unique_ptr<llvm::pdb::IPDBSession> &session) {
  std::unique_ptr<llvm::pdb::IPDBSession> opened;
  if (llvm::Error error = llvm::pdb::NativeSession::createFromPdb(std::move(bytes), opened)) return error;
  if (llvm::Error error = checkSectionNumbers(static_cast<llvm::pdb::NativeSession &>(*opened))) return error;
  session = std::move(opened);
  return llvm::Error::success();
}

llvm::Error openPdbSession(const std::string &path, std::unique_ptr<llvm::pdb::IPDBSession> &session) {
  auto bytes = readRegularFile(path);
  if (!bytes) return llvm::errorCodeToError(bytes.getError());
  return openPdbSession(std::move(*bytes), session);
}

} // namespace stackwalk
