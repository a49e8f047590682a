// The runtime's Modules as the name readers need them: each Module's file name
// and the ECMA-335 metadata of its loaded image (the Loader contract), read
// once per Module and kept with the reason when it could not be read.
#pragma once

#include "stackwalk/frames/EcmaMetadata.h"
#include "stackwalk/frames/RuntimeData.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace stackwalk::frames {

class ManagedModules {
public:
  explicit ManagedModules(const RuntimeData &data) : data_(data) {}

  struct Module {
    std::string fileName;                   // "System.Private.CoreLib.dll"; empty when unreadable
    std::unique_ptr<EcmaMetadata> metadata; // null when it could not be read
    std::string problem;                    // why not
  };
  const Module &module(uint64_t address);
  // The metadata of a Module, or an error naming the module and the reason.
  llvm::Expected<const EcmaMetadata *> metadata(uint64_t address);

private:
  llvm::Expected<std::unique_ptr<EcmaMetadata>> loadMetadata(uint64_t module);
  std::string modulePath(uint64_t module);

  const RuntimeData &data_;
  std::map<uint64_t, Module> modules_;
};

} // namespace stackwalk::frames
