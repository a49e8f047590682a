#include "stackwalk/core/PdbFrameData.h"
#include "stackwalk/core/PdbSession.h"

#include "llvm/DebugInfo/MSF/MSFBuilder.h"
#include "llvm/DebugInfo/PDB/IPDBSession.h"
#include "llvm/DebugInfo/PDB/Native/DbiStreamBuilder.h"
#include "llvm/DebugInfo/PDB/Native/DbiStream.h"
#include "llvm/DebugInfo/PDB/Native/InfoStream.h"
#include "llvm/DebugInfo/PDB/Native/InfoStreamBuilder.h"
#include "llvm/DebugInfo/PDB/Native/NativeSession.h"
#include "llvm/DebugInfo/PDB/Native/PDBFile.h"
#include "llvm/DebugInfo/PDB/Native/PDBFileBuilder.h"
#include "llvm/DebugInfo/PDB/Native/TpiStreamBuilder.h"
#include "llvm/Object/COFF.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

using namespace stackwalk;

// data/fpo.pdb: test/dumps/fpo/fpo.c built by clang-19 for i686-w64-windows-gnu
// (-O2 -fomit-frame-pointer -gcodeview -g) and linked by ld.lld-19 with --pdb
// (windows_fpo_test.py's build, before fpo.c's inlined relay was added).
// llvm-pdbutil dump --fpo lists its ten
// FrameData records: one per function start, and one after each push of a prolog.
namespace {
// A PDB written by LLVM's PDB builder: a .text section header (RVA 0x1000,
// 4 KiB) and what `configure` adds to its DBI stream. Its path; the caller removes it.
std::string builtPdb(llvm::function_ref<void(llvm::pdb::DbiStreamBuilder &)> configure) {
  llvm::BumpPtrAllocator allocator;
  llvm::pdb::PDBFileBuilder builder(allocator);
  REQUIRE_FALSE(bool(builder.initialize(4096)));
  for (uint32_t stream = 0; stream < llvm::pdb::kSpecialStreamCount; ++stream)
    REQUIRE(bool(builder.getMsfBuilder().addStream(0)));
  builder.getInfoBuilder().setVersion(llvm::pdb::PdbRaw_ImplVer::PdbImplVC70);
  builder.getDbiBuilder().setVersionHeader(llvm::pdb::PdbRaw_DbiVer::PdbDbiV70);
  builder.getTpiBuilder().setVersionHeader(llvm::pdb::PdbRaw_TpiVer::PdbTpiV80);
  builder.getIpiBuilder().setVersionHeader(llvm::pdb::PdbRaw_TpiVer::PdbTpiV80);
  llvm::object::coff_section text{};
  std::memcpy(text.Name, ".text", 5);
  text.VirtualAddress = 0x1000;
  text.VirtualSize = 0x1000;
  REQUIRE_FALSE(bool(builder.getDbiBuilder().addDbgStream(
      llvm::pdb::DbgHeaderType::SectionHdr,
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(&text), sizeof text))));
  configure(builder.getDbiBuilder());
  llvm::SmallString<128> path;
  REQUIRE_FALSE(llvm::sys::fs::createTemporaryFile("stackwalk-pdb", "pdb", path));
  llvm::codeview::GUID guid{};
  llvm::Error written = builder.commit(path, &guid);
  REQUIRE_FALSE(bool(written));
  return std::string(path);
}

// Why openPdbSession refuses the file (empty when it opens it), with no session left.
std::string refusal(const std::string &path) {
  std::unique_ptr<llvm::pdb::IPDBSession> session;
  llvm::Error error = openPdbSession(path, session);
  if (!error) return "";
  CHECK_FALSE(session);
  return llvm::toString(std::move(error));
}

bool refused(const std::string &path) { return !refusal(path).empty(); }

std::unique_ptr<PdbFrameData> fpoPdb() {
  auto table = PdbFrameData::open(STACKWALK_CORE_TEST_DATA "/fpo.pdb");
  REQUIRE(bool(table));
  return std::move(*table);
}
} // namespace

TEST_CASE("a PDB's FrameData records, as llvm-pdbutil lists them") {
  auto table = fpoPdb();
  CHECK(table->size() == 10);
  auto level2 = table->at(0x1070); // past level2's prolog: the record after its last push
  REQUIRE(level2);
  CHECK(level2->type == WindowsFrameInfo::FrameData);
  CHECK(level2->start == 0x1065);
  CHECK(level2->size == 63);
  CHECK(level2->localSize == 8);
  CHECK(level2->savedRegisterSize == 8);
  CHECK(level2->parameterSize == 8);
  CHECK(level2->prologSize == 0);
  CHECK(level2->program == "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = $edi $T0 4 - ^ = $esi $T0 8 - ^ = ");
}

TEST_CASE("within a prolog: the record that starts last") {
  auto table = fpoPdb();
  auto afterFirstPush = table->at(0x1061);
  REQUIRE(afterFirstPush);
  CHECK(afterFirstPush->start == 0x1061);
  CHECK(afterFirstPush->savedRegisterSize == 4);
  auto atEntry = table->at(0x1060);
  REQUIRE(atEntry);
  CHECK(atEntry->start == 0x1060);
  CHECK(atEntry->savedRegisterSize == 0);
}

TEST_CASE("addresses no record covers") {
  auto table = fpoPdb();
  CHECK_FALSE(table->at(0x1004)); // between after_call (4 bytes) and level3
  CHECK_FALSE(table->at(0x10e5)); // just past fpo_top
  CHECK_FALSE(table->at(0));
}

TEST_CASE("a file that is no PDB is an error") {
  CHECK_FALSE(bool(PdbFrameData::open(STACKWALK_CORE_TEST_DATA "/exports.dll")));
  CHECK_FALSE(bool(PdbFrameData::open(STACKWALK_CORE_TEST_DATA "/no-such.pdb")));
}

TEST_CASE("a PDB whose section contributions name sections it has no header for is refused (fuzz/findings/llvm19-pdb-section-contribution-beyond-headers)") {
  // LLVM 19's NativeSession would read the header past the last one on the
  // first RVA lookup (with none at all, through a null pointer).
  CHECK(refused(STACKWALK_FINDINGS_DIR "/llvm19-pdb-section-contribution-beyond-headers"));
  CHECK_FALSE(bool(PdbFrameData::open(STACKWALK_FINDINGS_DIR "/llvm19-pdb-section-contribution-beyond-headers")));
  CHECK_FALSE(refused(STACKWALK_CORE_TEST_DATA "/fpo.pdb"));
}

TEST_CASE("a PDB whose line table names a section it has no header for is refused (fuzz/findings/llvm19-pdb-line-table-section-past-headers)") {
  // LLVM 19's findLineTable would read the header past the last one.
  CHECK_THAT(refusal(STACKWALK_FINDINGS_DIR "/llvm19-pdb-line-table-section-past-headers"),
             Catch::Matchers::Contains("a line table of PDB module"));
}

TEST_CASE("a PDB whose named-stream map points outside its strings is refused (fuzz/findings/llvm19-pdb-named-stream-map-string-offset)") {
  // LLVM 19's NamedStreamMap would read the name with strlen from wherever the offset points.
  CHECK(refused(STACKWALK_FINDINGS_DIR "/llvm19-pdb-named-stream-map-string-offset"));
}

TEST_CASE("a PDB whose inline site ends outside its scope is refused (fuzz/findings/llvm19-pdb-inline-site-end-loop)") {
  // LLVM 19's inline-frame lookup hops from an inline site to the record its
  // End names and would loop for ever there.
  CHECK(refused(STACKWALK_FINDINGS_DIR "/llvm19-pdb-inline-site-end-loop"));
}

TEST_CASE("a PDB whose module names a stream past its directory is refused (fuzz/findings/llvm19-pdb-module-stream-use-after-free)") {
  // LLVM 19's getModuleDebugStream would index the stream map past its end.
  CHECK_THAT(refusal(STACKWALK_FINDINGS_DIR "/llvm19-pdb-module-stream-use-after-free"),
             Catch::Contains("names stream"));
}

TEST_CASE("a PDB that counts more modules than it describes is refused (fuzz/findings/llvm19-pdb-module-count-past-descriptors)") {
  // LLVM 19 would read the missing modules' descriptors through a null pointer.
  CHECK_THAT(refusal(STACKWALK_FINDINGS_DIR "/llvm19-pdb-module-count-past-descriptors"),
             Catch::Contains("modules and describes"));
  CHECK_FALSE(refused(STACKWALK_CORE_TEST_DATA "/fpo.pdb"));
}

TEST_CASE("a PDB whose superblock claims more blocks than the file holds is refused (fuzz/findings/llvm19-pdb-superblock-block-count)") {
  // LLVM 19 would size its free-page map by the claim: 512 MiB of bits for this 77 KiB file.
  CHECK_THAT(refusal(STACKWALK_FINDINGS_DIR "/llvm19-pdb-superblock-block-count"),
             Catch::Contains("claims 4294901779 blocks of 4096 bytes; the file holds 77824 bytes"));
  CHECK_FALSE(refused(STACKWALK_CORE_TEST_DATA "/fpo.pdb"));
}

TEST_CASE("a PDB whose named-stream map claims more buckets than its stream could hold is refused (fuzz/findings/llvm19-pdb-named-stream-map-capacity)") {
  // LLVM 19 would make room for every bucket claimed: 32 GiB for this 77 KiB file.
  CHECK_THAT(refusal(STACKWALK_FINDINGS_DIR "/llvm19-pdb-named-stream-map-capacity"),
             Catch::Contains("named-stream map claims"));
  CHECK_FALSE(refused(STACKWALK_CORE_TEST_DATA "/fpo.pdb"));
}

TEST_CASE("a PDB with a stream block past the file's end is refused (fuzz/findings/llvm19-pdb-stream-block-past-file)") {
  // LLVM 19's own check lets block 0xFFFFFFFF through (its end wraps to 0); the new-FPO records
  // read from it came back as a null record.
  CHECK_THAT(refusal(STACKWALK_FINDINGS_DIR "/llvm19-pdb-stream-block-past-file"),
             Catch::Contains("block 4294967295 of the PDB's stream 11 lies past the file's end"));
  CHECK_FALSE(refused(STACKWALK_CORE_TEST_DATA "/fpo.pdb"));
}

TEST_CASE("a PDB whose public symbol does not decode is refused (fuzz/findings/llvm19-pdb-open-leak-9cdca142)") {
  // LLVM 19's lookup of a public by address would decode it with cantFail:
  // unreachable code in a release build, the error and its message leaked.
  CHECK_THAT(refusal(STACKWALK_FINDINGS_DIR "/llvm19-pdb-open-leak-9cdca142"), Catch::Contains("public symbol"));
  CHECK_FALSE(refused(STACKWALK_CORE_TEST_DATA "/fpo.pdb"));
}

// A copy of the PDB at `path` in which `stream` is deleted, as the MSF
// directory records one: its size 0xFFFFFFFF (nil) and no blocks. Its path;
// the caller removes it.
std::string withStreamDeleted(const std::string &path, uint32_t stream) {
  auto bytes = llvm::MemoryBuffer::getFile(path);
  REQUIRE(bytes);
  std::string pdb = (*bytes)->getBuffer().str();
  auto word = [&](size_t offset) { return llvm::support::endian::read32le(pdb.data() + offset); };
  uint32_t blockSize = word(32), directoryBytes = word(44), blockMap = word(52) * blockSize;
  std::vector<uint32_t> directoryBlocks;
  for (uint32_t i = 0; i * blockSize < directoryBytes; ++i) directoryBlocks.push_back(word(blockMap + 4 * i));
  std::vector<uint32_t> directory;
  for (uint32_t i = 0; i * 4 < directoryBytes; ++i)
    directory.push_back(word(directoryBlocks[i * 4 / blockSize] * blockSize + i * 4 % blockSize));
  uint32_t streams = directory[0];
  REQUIRE(stream < streams);
  std::vector<uint32_t> rewritten(directory.begin(), directory.begin() + 1 + streams);
  rewritten[1 + stream] = UINT32_MAX;
  size_t blocks = 1 + streams;
  for (uint32_t i = 0; i < streams; ++i) {
    uint32_t size = directory[1 + i], count = size == UINT32_MAX ? 0 : (size + blockSize - 1) / blockSize;
    if (i != stream) rewritten.insert(rewritten.end(), directory.begin() + blocks, directory.begin() + blocks + count);
    blocks += count;
  }
  for (uint32_t i = 0; i < rewritten.size(); ++i)
    llvm::support::endian::write32le(pdb.data() + directoryBlocks[i * 4 / blockSize] * blockSize + i * 4 % blockSize,
                                     rewritten[i]);
  llvm::support::endian::write32le(pdb.data() + 44, uint32_t(rewritten.size() * 4));
  llvm::SmallString<128> copy;
  REQUIRE_FALSE(llvm::sys::fs::createTemporaryFile("stackwalk-pdb", "pdb", copy));
  std::error_code error;
  llvm::raw_fd_ostream(copy, error) << pdb;
  REQUIRE_FALSE(error);
  return std::string(copy);
}

TEST_CASE("a PDB that names a deleted stream as one it reads is refused (fuzz/findings/llvm19-pdb-dbi-stream-null-read)") {
  // LLVM 19 gives a deleted stream no blocks but the length 0xFFFFFFFF, and
  // its first read indexes the empty block list: in the finding, every
  // stream is deleted and NativeSession's constructor reads the DBI header.
  SECTION("the finding") { CHECK(refused(STACKWALK_FINDINGS_DIR "/llvm19-pdb-dbi-stream-null-read")); }
  const std::string fpo = STACKWALK_CORE_TEST_DATA "/fpo.pdb";
  std::unique_ptr<llvm::pdb::IPDBSession> session;
  REQUIRE_FALSE(bool(openPdbSession(fpo, session)));
  llvm::pdb::PDBFile &file = static_cast<llvm::pdb::NativeSession &>(*session).getPDBFile();
  auto dbi = file.getPDBDbiStream();
  REQUIRE(bool(dbi));
  auto info = file.getPDBInfoStream();
  REQUIRE(bool(info));
  auto names = info->getNamedStreamIndex("/names");
  REQUIRE(bool(names));
  struct Named {
    const char *role;
    uint32_t stream;
  };
  for (Named named : {Named{"the DBI stream", llvm::pdb::StreamDBI},
                      Named{"the frame data stream", dbi->getDebugStreamIndex(llvm::pdb::DbgHeaderType::NewFPO)},
                      Named{"the symbol record stream", dbi->getSymRecordStreamIndex()},
                      Named{"module 0's symbol stream", dbi->modules().getModuleDescriptor(0).getModuleStreamIndex()},
                      Named{"the string table (/names)", *names}}) {
    DYNAMIC_SECTION(named.role << " (stream " << named.stream << ") deleted") {
      std::string copy = withStreamDeleted(fpo, named.stream);
      CHECK(refused(copy));
      llvm::sys::fs::remove(copy);
    }
  }
}

TEST_CASE("a PDB's old FPO stream: FPO_DATA's attribute bits as winnt.h lays them out") {
  // No compiler here writes FPO_DATA (MSVC's old stream), so LLVM's PDB writer
  // makes a PDB with one record: a 0x40-byte function at RVA 0x1200 with an
  // 18-byte prolog, 2 saved registers, 3 dwords of locals, 2 of parameters,
  // and ebp in use (cbProlog bits 0-7, cbRegs 8-10, fUseBP 12).
  llvm::object::FpoData fpo{};
  fpo.Offset = 0x1200;
  fpo.Size = 0x40;
  fpo.NumLocals = 3;
  fpo.NumParams = 2;
  fpo.Attributes = 18 | (2 << 8) | (1 << 12);
  std::string path = builtPdb([&](llvm::pdb::DbiStreamBuilder &dbi) { dbi.addOldFpoData(fpo); });
  auto table = PdbFrameData::open(path);
  llvm::sys::fs::remove(path);
  REQUIRE(bool(table));
  CHECK((*table)->size() == 1);
  auto info = (*table)->at(0x1230);
  REQUIRE(info);
  CHECK(info->type == WindowsFrameInfo::Fpo);
  CHECK(info->start == 0x1200);
  CHECK(info->size == 0x40);
  CHECK(info->prologSize == 18);
  CHECK(info->savedRegisterSize == 8);
  CHECK(info->localSize == 12);
  CHECK(info->parameterSize == 8);
  CHECK(info->allocatesBasePointer);
  CHECK(info->program.empty());
  CHECK_FALSE((*table)->at(0x1240));
}

TEST_CASE("a PDB whose section contributions name modules it does not have is refused") {
  // LLVM 19's NativeSession maps an address to the contribution's module
  // index and reads that module's descriptor past the end of the list on the
  // first lookup there (fuzz_pdb: a SEGV in DbiModuleDescriptor::getModuleStreamIndex).
  std::string path = builtPdb([](llvm::pdb::DbiStreamBuilder &dbi) {
    llvm::pdb::SectionContrib contribution{};
    contribution.ISect = 1;
    contribution.Size = 0x100;
    contribution.Imod = 3; // the PDB has no module at all
    dbi.addSectionContrib(contribution);
  });
  CHECK(refused(path));
  llvm::sys::fs::remove(path);
}
