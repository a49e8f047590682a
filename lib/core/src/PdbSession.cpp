#include "stackwalk/core/PdbSession.h"

#include "PdbPublicsCheck.h"
#include "PdbScopeCheck.h"
#include "PdbStreamCheck.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/RegularFile.h"

#include "llvm/DebugInfo/MSF/MSFCommon.h"
#include "llvm/DebugInfo/MSF/MappedBlockStream.h"
#include "llvm/DebugInfo/PDB/IPDBSession.h"
#include "llvm/DebugInfo/PDB/Native/DbiModuleDescriptor.h"
#include "llvm/DebugInfo/PDB/Native/DbiStream.h"
#include "llvm/DebugInfo/PDB/Native/ISectionContribVisitor.h"
#include "llvm/DebugInfo/PDB/Native/NativeSession.h"
#include "llvm/DebugInfo/PDB/Native/PDBFile.h"
#include "llvm/DebugInfo/PDB/Native/RawTypes.h"
#include "llvm/Object/COFF.h"
#include "llvm/Support/BinaryByteStream.h"
#include "llvm/Support/BinaryStreamReader.h"

#include <cstring>
#include <vector>

namespace stackwalk {
namespace {

// Counts the section contributions that name a section past the headers
// (section 0 is no harm: LLVM reads it as RVA 0), or a module past the
// module list: LLVM 19 reads that module's descriptor past the list's end on
// the first lookup at the contribution's addresses.
class SectionContributionCheck : public llvm::pdb::ISectionContribVisitor {
public:
  SectionContributionCheck(uint32_t sections, uint32_t modules) : sections_(sections), modules_(modules) {}
  void visit(const llvm::pdb::SectionContrib &contribution) override {
    if (contribution.ISect > sections_) ++beyondSections;
    if (contribution.Imod >= modules_) ++beyondModules;
  }
  void visit(const llvm::pdb::SectionContrib2 &contribution) override { visit(contribution.Base); }
  uint32_t beyondSections = 0, beyondModules = 0;

private:
  uint32_t sections_, modules_;
};

// The info stream's named-stream map (a string buffer, then a hash table
// whose present buckets hold offsets into it), checked as LLVM 19 will read
// it: HashTable::load makes room for as many buckets as the table's capacity
// claims (8 bytes each: 32 GiB for a 77 KiB PDB claiming 2^32 - 1,
// fuzz/findings/llvm19-pdb-named-stream-map-capacity), so a capacity past
// twice the stream's length in bytes is refused (a real map holds a few
// names in a few dozen buckets); it writes each present bucket without
// checking it against that capacity, and NamedStreamMap reads each name with
// strlen from its offset (fuzz/findings/llvm19-pdb-named-stream-map-string-offset).
llvm::Error checkNamedStreamMap(const llvm::pdb::PDBFile &file) {
  auto stream = file.safelyCreateIndexedStream(llvm::pdb::StreamPDB);
  if (!stream) return stream.takeError();
  llvm::BinaryStreamReader reader(**stream);
  const llvm::pdb::InfoStreamHeader *header;
  uint32_t namesSize;
  llvm::ArrayRef<uint8_t> names;
  if (llvm::Error error = reader.readObject(header)) return error;
  if (llvm::Error error = reader.readInteger(namesSize)) return error;
  if (llvm::Error error = reader.readBytes(names, namesSize)) return error;
  uint32_t size, capacity;
  if (llvm::Error error = reader.readInteger(size)) return error;
  if (llvm::Error error = reader.readInteger(capacity)) return error;
  if (capacity / 2 > reader.getLength())
    return fail("the PDB's named-stream map claims " + llvm::Twine(capacity) + " buckets in a stream of " +
                llvm::Twine(reader.getLength()) + " bytes");
  // Each bit vector: a count of words, then the words; no bit at or past the capacity.
  std::vector<uint32_t> present;
  for (bool presentBits : {true, false}) {
    uint32_t words;
    if (llvm::Error error = reader.readInteger(words)) return error;
    for (uint32_t word = 0; word < words; ++word) {
      uint32_t bits;
      if (llvm::Error error = reader.readInteger(bits)) return error;
      for (uint32_t bit = 0; bits && bit < 32; ++bit, bits >>= 1)
        if (bits & 1) {
          if (uint64_t(word) * 32 + bit >= capacity) return fail("the PDB's named-stream map has a bucket past its capacity");
          if (presentBits) present.push_back(word * 32 + bit);
        }
    }
  }
  for (size_t entry = 0; entry < present.size(); ++entry) {
    uint32_t offset, streamNumber;
    if (llvm::Error error = reader.readInteger(offset)) return error;
    if (llvm::Error error = reader.readInteger(streamNumber)) return error;
    if (offset >= names.size() || !std::memchr(names.data() + offset, 0, names.size() - offset))
      return fail("a stream name of the PDB's named-stream map lies outside its string buffer");
    if (llvm::Error error = checkStreamHasBytes(file, streamNumber, "named stream")) return error;
  }
  return llvm::Error::success();
}

// LLVM takes a DBI stream's module count from its file-info header and finds
// each module's descriptor in the module-info substream, trusting it to hold
// that many: a module past the descriptors reads as one with no bytes, and
// the first read of it goes through a null pointer
// (fuzz/findings/llvm19-pdb-module-count-past-descriptors).
llvm::Error checkModuleDescriptors(llvm::pdb::NativeSession &session) {
  auto dbi = session.getPDBFile().getPDBDbiStream();
  if (!dbi) return dbi.takeError();
  llvm::BinaryStreamReader reader(dbi->getModiSubstreamData().StreamData);
  llvm::VarStreamArray<llvm::pdb::DbiModuleDescriptor> descriptors;
  if (llvm::Error error = reader.readArray(descriptors, reader.bytesRemaining())) return error;
  uint32_t described = 0;
  for (auto it = descriptors.begin(); it != descriptors.end(); ++it) ++described; // an unreadable one ends the array
  uint32_t counted = dbi->modules().getModuleCount();
  if (described < counted)
    return fail("the PDB's DBI stream counts " + llvm::Twine(counted) + " modules and describes " +
                llvm::Twine(described));
  return llvm::Error::success();
}

llvm::Error checkSectionContributions(llvm::pdb::NativeSession &session) {
  auto dbi = session.getPDBFile().getPDBDbiStream();
  if (!dbi) return dbi.takeError();
  uint32_t sections = dbi->getSectionHeaders().size(), modules = dbi->modules().getModuleCount();
  if (sections == 0) return fail("the PDB has no section headers to place its symbols by");
  SectionContributionCheck check(sections, modules);
  dbi->visitSectionContributions(check);
  if (check.beyondSections)
    return fail(llvm::Twine(check.beyondSections) + " section contribution(s) of the PDB name no section of its " +
                llvm::Twine(sections));
  if (check.beyondModules)
    return fail(llvm::Twine(check.beyondModules) + " section contribution(s) of the PDB name no module of its " +
                llvm::Twine(modules));
  return llvm::Error::success();
}

// The superblock's block count against the file: LLVM 19's
// PDBFile::parseFileHeaders sizes its free-page map by that count before
// anything compares it with the file, so a 77 KiB PDB claiming 0xffff0013
// blocks had it allocate and clear 512 MiB of bits (5 s under ASan;
// fuzz/findings/llvm19-pdb-superblock-block-count). A file shorter than its
// superblock is left to LLVM, which says so.
llvm::Error checkBlockCount(const llvm::MemoryBuffer &bytes) {
  llvm::msf::SuperBlock superBlock;
  if (bytes.getBufferSize() < sizeof superBlock) return llvm::Error::success();
  std::memcpy(&superBlock, bytes.getBufferStart(), sizeof superBlock);
  uint32_t blocks = superBlock.NumBlocks, blockSize = superBlock.BlockSize;
  if (uint64_t(blocks) * blockSize <= bytes.getBufferSize()) return llvm::Error::success();
  return fail("the PDB's superblock claims " + llvm::Twine(blocks) + " blocks of " + llvm::Twine(blockSize) +
              " bytes; the file holds " + llvm::Twine(bytes.getBufferSize()) + " bytes");
}

} // namespace

// As NativeSession::createFromPdb opens a PDB, with the streams checked
// before its constructor reads the DBI stream.
llvm::Error openPdbSession(std::unique_ptr<llvm::MemoryBuffer> bytes, std::unique_ptr<llvm::pdb::IPDBSession> &session) {
  if (llvm::Error error = checkBlockCount(*bytes)) return error;
  std::string path = bytes->getBufferIdentifier().str();
  auto allocator = std::make_unique<llvm::BumpPtrAllocator>();
  auto file = std::make_unique<llvm::pdb::PDBFile>(
      path, std::make_unique<llvm::MemoryBufferByteStream>(std::move(bytes), llvm::endianness::little), *allocator);
  if (llvm::Error error = file->parseFileHeaders()) return error;
  if (llvm::Error error = file->parseStreamData()) return error;
  if (llvm::Error error = checkStreamBlocksInFile(*file)) return error;
  if (llvm::Error error = checkUsedStreamsHaveBytes(*file)) return error;
  auto opened = std::make_unique<llvm::pdb::NativeSession>(std::move(file), std::move(allocator));
  if (llvm::Error error = checkNamedStreamMap(opened->getPDBFile())) return error;
  if (llvm::Error error = checkModuleDescriptors(*opened)) return error;
  if (llvm::Error error = checkSectionContributions(*opened)) return error;
  if (llvm::Error error = checkModuleScopes(*opened)) return error;
  if (llvm::Error error = checkPublicSymbols(opened->getPDBFile())) return error;
  session = std::move(opened);
  return llvm::Error::success();
}

llvm::Error openPdbSession(const std::string &path, std::unique_ptr<llvm::pdb::IPDBSession> &session) {
  auto bytes = readRegularFile(path);
  if (!bytes) return llvm::errorCodeToError(bytes.getError());
  return openPdbSession(std::move(*bytes), session);
}

} // namespace stackwalk
