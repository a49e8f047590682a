// A PDB: LLVM's native reader opened on it as stackwalk opens one (PdbSession), its frame data (PdbFrameData: the
// DBI stream's FrameData with their programs from the string table, and
// FPO_DATA) looked up, and the names and lines PdbFrames gives at RVAs across
// it, as a PDB from a symbol server is read.
#include "stackwalk/core/PdbFrameData.h"
#include "stackwalk/core/PdbFrames.h"
#include "stackwalk/core/PdbSession.h"

#include "llvm/DebugInfo/PDB/IPDBSession.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  constexpr uint32_t Rvas[] = {0, 0x1000, 0x1011, 0x1065, 0x10e4, 0x2000};
  auto frameData = stackwalk::PdbFrameData::read(llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.pdb"));
  if (frameData) {
    for (uint32_t rva : Rvas) (void)(*frameData)->at(rva);
  } else {
    llvm::consumeError(frameData.takeError());
  }
  std::unique_ptr<llvm::pdb::IPDBSession> session;
  if (llvm::Error error = stackwalk::openPdbSession(llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.pdb"), session)) {
    llvm::consumeError(std::move(error));
    return 0;
  }
  for (uint32_t rva : Rvas) (void)stackwalk::pdbFramesAt(*session, rva);
  return 0;
}
