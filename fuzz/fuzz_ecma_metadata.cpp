// ECMA-335 metadata: the input is a metadata blob ("BSJB" root onward), or
// a PE image read both as mapped and as a file; every query runs on what
// parses.
#include "stackwalk/frames/EcmaMetadata.h"

#include <algorithm>

using stackwalk::frames::EcmaMetadata;

static void query(const EcmaMetadata &metadata, std::span<const uint8_t> bytes) {
  // Generic parameters substituted, and runtime-built signatures' TypeHandles named.
  EcmaMetadata::SignatureContext context{{"Int32"}, {"System.String", "T"},
                                         [](uint64_t handle) -> std::optional<std::string> {
                                           if (handle & 1) return std::nullopt;
                                           return "Type" + std::to_string(handle % 7);
                                         }};
  for (uint32_t row = 1; row <= 64; ++row) {
    (void)metadata.methodFullName(0x06000000 | row);
    (void)metadata.typeFullName(0x02000000 | row);
    (void)metadata.genericParameterNames(0x06000000 | row);
    (void)metadata.genericParameterName(0x2a000000 | row);
    (void)metadata.methodParameters(0x06000000 | row, context);
  }
  (void)metadata.assemblyInformationalVersion();
  (void)metadata.assemblyName();
  // The input itself as a stored signature, with and without tokens to resolve.
  (void)EcmaMetadata::signatureParameters(&metadata, bytes.first(std::min<size_t>(bytes.size(), 256)), context);
  (void)EcmaMetadata::signatureParameters(nullptr, bytes.first(std::min<size_t>(bytes.size(), 256)), context);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  auto parsed = EcmaMetadata::parse(std::vector<uint8_t>(data, data + size));
  if (parsed) query(*parsed, bytes);
  else llvm::consumeError(parsed.takeError());
  for (bool mapped : {true, false}) {
    auto image = EcmaMetadata::fromPeImage(bytes, mapped);
    if (image) query(*image, bytes);
    else llvm::consumeError(image.takeError());
  }
  return 0;
}
