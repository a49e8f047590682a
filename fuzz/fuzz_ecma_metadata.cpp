// ECMA-335 metadata: the input is a metadata blob ("BSJB" root onward), or
// a PE image read both as mapped and as a file; every query runs on what
// parses.
#include "stackwalk/frames/EcmaMetadata.h"

using stackwalk::frames::EcmaMetadata;

static void query(const EcmaMetadata &metadata) {
  for (uint32_t row = 1; row <= 64; ++row) {
    (void)metadata.methodFullName(0x06000000 | row);
    (void)metadata.typeFullName(0x02000000 | row);
    (void)metadata.genericParameterNames(0x06000000 | row);
  }
  (void)metadata.assemblyInformationalVersion();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  auto parsed = EcmaMetadata::parse(std::vector<uint8_t>(data, data + size));
  if (parsed) query(*parsed);
  else llvm::consumeError(parsed.takeError());
  for (bool mapped : {true, false}) {
    auto image = EcmaMetadata::fromPeImage(bytes, mapped);
    if (image) query(*image);
    else llvm::consumeError(image.takeError());
  }
  return 0;
}
