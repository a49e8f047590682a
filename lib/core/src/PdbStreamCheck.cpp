#include "PdbStreamCheck.h"

#include "stackwalk/core/Fail.h"

#include "llvm/DebugInfo/MSF/MappedBlockStream.h"
#include "llvm/DebugInfo/PDB/Native/PDBFile.h"
#include "llvm/DebugInfo/PDB/Native/RawConstants.h"
#include "llvm/DebugInfo/PDB/Native/RawTypes.h"
#include "llvm/Support/BinaryStreamReader.h"

#include <algorithm>
#include <vector>

namespace stackwalk {
namespace {

constexpr uint32_t kNilStreamSize = UINT32_MAX;

// The stream numbers the DBI stream's optional debug headers hold, read
// from just after its header: they follow the six substreams whose sizes the
// header gives. Empty when those sizes run past the stream: LLVM's DbiStream
// then fails to load before it opens any of these.
std::vector<uint16_t> debugHeaderStreams(llvm::BinaryStreamReader reader, const llvm::pdb::DbiStreamHeader &header) {
  uint64_t substreams = 0;
  for (int32_t size : {int32_t(header.ModiSubstreamSize), int32_t(header.SecContrSubstreamSize),
                       int32_t(header.SectionMapSize), int32_t(header.FileInfoSize), int32_t(header.TypeServerSize),
                       int32_t(header.ECSubstreamSize)})
    substreams += uint32_t(size);
  std::vector<uint16_t> streams;
  if (substreams > reader.bytesRemaining()) return streams;
  reader.setOffset(reader.getOffset() + substreams);
  uint32_t count = std::min<uint64_t>(uint32_t(int32_t(header.OptionalDbgHdrSize)), reader.bytesRemaining()) / 2;
  for (; count > 0; --count) {
    uint16_t number;
    if (llvm::Error error = reader.readInteger(number)) return llvm::consumeError(std::move(error)), streams;
    streams.push_back(number);
  }
  return streams;
}

} // namespace

llvm::Error checkStreamHasBytes(const llvm::pdb::PDBFile &file, uint32_t stream, const llvm::Twine &role) {
  if (stream == llvm::pdb::kInvalidStreamIndex || stream >= file.getNumStreams()) return llvm::Error::success();
  if (file.getStreamByteSize(stream) != kNilStreamSize) return llvm::Error::success();
  return fail("the PDB's " + role + " (stream " + llvm::Twine(stream) + ") is a deleted stream");
}

llvm::Error checkStreamBlocksInFile(const llvm::pdb::PDBFile &file) {
  uint64_t fileSize = file.getFileSize(), blockSize = file.getBlockSize();
  for (uint32_t stream = 0; stream < file.getNumStreams(); ++stream)
    for (uint32_t block : file.getStreamBlockList(stream))
      if ((block + uint64_t(1)) * blockSize > fileSize)
        return fail("block " + llvm::Twine(block) + " of the PDB's stream " + llvm::Twine(stream) +
                    " lies past the file's end");
  return llvm::Error::success();
}

llvm::Error checkUsedStreamsHaveBytes(const llvm::pdb::PDBFile &file) {
  using namespace llvm::pdb;
  for (auto [stream, role] : {std::pair{StreamPDB, "info stream"}, {StreamTPI, "type stream"},
                              {StreamDBI, "DBI stream"}, {StreamIPI, "id stream"}})
    if (llvm::Error error = checkStreamHasBytes(file, stream, role)) return error;
  if (StreamDBI >= file.getNumStreams()) return llvm::Error::success();
  auto stream = file.safelyCreateIndexedStream(StreamDBI);
  if (!stream) return stream.takeError();
  llvm::BinaryStreamReader reader(**stream);
  const DbiStreamHeader *header;
  // A DBI stream too short for its header: LLVM refuses it before reading further.
  if (llvm::Error error = reader.readObject(header)) return llvm::consumeError(std::move(error)), llvm::Error::success();
  for (auto [number, role] : {std::pair{uint16_t(header->SymRecordStreamIndex), "symbol record stream"},
                              {uint16_t(header->PublicSymbolStreamIndex), "public symbol stream"},
                              {uint16_t(header->GlobalSymbolStreamIndex), "global symbol stream"}})
    if (llvm::Error error = checkStreamHasBytes(file, number, role)) return error;
  for (uint16_t number : debugHeaderStreams(reader, *header))
    if (llvm::Error error = checkStreamHasBytes(file, number, "DBI debug header stream")) return error;
  return llvm::Error::success();
}

} // namespace stackwalk
