// The .NET runtime's contract descriptor (dotnet/runtime
// docs/design/datacontracts/contract-descriptor.md and data_descriptor.md):
// the runtime publishes, under the export `DotNetRuntimeContractDescriptor`,
// a JSON document with the sizes and field offsets of its data structures,
// the values and addresses of its globals, and the versions of the
// algorithms ("contracts") a reader must follow. Every runtime structure
// stackwalk reads goes through this: no offsets are hard-coded.
#pragma once

#include "stackwalk/core/Target.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk::frames {

struct DataType {
  std::optional<uint32_t> size;             // "!" when the runtime publishes it
  std::map<std::string, uint32_t> fields;   // field name -> byte offset
};

class ContractDescriptor {
public:
  // Parses the JSON data descriptor. `pointerData` is the descriptor's
  // auxiliary pointer array, which indirect globals index.
  static llvm::Expected<ContractDescriptor> parse(std::string_view json, const std::vector<uint64_t> &pointerData,
                                                  unsigned pointerSize);

  // Finds the export in the process's modules and reads the descriptor from
  // the dump, or from the module file with its relocations applied where the
  // dump left those pages out. A process without the export gets an error
  // that says which runtime modules were looked at.
  static llvm::Expected<ContractDescriptor> locate(const Target &target);

  // Merges a sub-descriptor (e.g. the GC's) into this one.
  void merge(const ContractDescriptor &sub);

  unsigned pointerSize() const { return pointerSize_; }
  const std::map<std::string, unsigned> &contracts() const { return contracts_; }
  const std::map<std::string, DataType> &types() const { return types_; }
  std::optional<unsigned> contractVersion(const std::string &name) const;

  const DataType *type(const std::string &name) const;
  std::optional<uint32_t> fieldOffset(const std::string &type, const std::string &field) const;
  // A numeric global's value; for an indirect global, the address of the
  // runtime variable it names.
  std::optional<uint64_t> global(const std::string &name) const;
  std::optional<std::string> stringGlobal(const std::string &name) const;
  // The global's name whose value is `value`, among those ending in `suffix`
  // (the Frame identifiers: "InlinedCallFrameIdentifier" -> 1).
  std::optional<std::string> globalNamed(uint64_t value, const std::string &suffix) const;

  // Where it came from, for --runtime-info and the JSON "runtimes" entry.
  struct Origin {
    std::string module;     // "libcoreclr.so"
    uint64_t address = 0;   // of the DotNetRuntimeContractDescriptor structure
    std::string source;     // "dump" or "module file (relocated)"
    unsigned subDescriptors = 0;
  };
  const Origin &origin() const { return origin_; }
  const std::string &baseline() const { return baseline_; }
  unsigned version() const { return version_; }

private:
  unsigned pointerSize_ = 8;
  unsigned version_ = 0;
  std::string baseline_;
  std::map<std::string, unsigned> contracts_;
  std::map<std::string, DataType> types_;
  std::map<std::string, uint64_t> globals_;
  std::map<std::string, std::string> stringGlobals_;
  std::map<std::string, uint64_t> subDescriptorPointers_; // name -> address of the pointer to each
  Origin origin_;

  friend class DescriptorLocator;
};

// Whether the module is the runtime itself (libcoreclr.so, coreclr.dll,
// libcoreclr.dylib), not one of its companions (libcoreclrtraceptprovider.so).
bool isRuntimeModule(const Module &module);

} // namespace stackwalk::frames
