// Names for MethodDescs: the RuntimeTypeSystem contract gives a MethodDesc's
// chunk, MethodTable, Module and metadata token; the Loader contract gives
// the Module's loaded image, whose ECMA-335 metadata names the token.
#pragma once

#include "stackwalk/frames/EcmaMetadata.h"
#include "stackwalk/frames/RuntimeData.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace stackwalk::frames {

struct ManagedMethod {
  uint64_t methodDesc = 0;
  uint32_t token = 0;     // 0x06xxxxxx; 0 for methods without metadata (IL stubs)
  uint64_t module = 0;    // the runtime's Module
  std::string moduleName; // the assembly's file name, "System.Private.CoreLib.dll"
  std::string name;       // Namespace.Type.Method(Parameters)
};

class MethodNames {
public:
  explicit MethodNames(const RuntimeData &data) : data_(data) {}

  // Reads the MethodDesc back (its chunk must point to a MethodTable whose
  // Module is readable) and names it; an error says what did not read back.
  llvm::Expected<ManagedMethod> describe(uint64_t methodDesc);
  // Namespace.Outer+Inner for a MethodTable (its Module's metadata, its TypeDef row).
  llvm::Expected<std::string> typeName(uint64_t methodTable);
  // The metadata of a runtime Module's image (the Loader contract); null when
  // it does not read.
  const EcmaMetadata *metadata(uint64_t module) { return moduleInfo(module).metadata.get(); }

private:
  struct ModuleInfo {
    std::string fileName;
    std::unique_ptr<EcmaMetadata> metadata; // null when it could not be read
    std::string problem;
  };
  const ModuleInfo &moduleInfo(uint64_t module);
  llvm::Expected<std::unique_ptr<EcmaMetadata>> loadMetadata(uint64_t module);
  std::string modulePath(uint64_t module);
  static llvm::Error noMetadata(uint64_t module, const ModuleInfo &info);

  const RuntimeData &data_;
  std::map<uint64_t, ModuleInfo> modules_;
  std::map<uint64_t, ManagedMethod> methods_;
};

} // namespace stackwalk::frames
