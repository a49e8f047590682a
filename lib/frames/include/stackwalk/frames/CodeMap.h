// The ExecutionManager contract (dotnet/runtime
// docs/design/datacontracts/ExecutionManager.md): which managed method an
// instruction pointer belongs to, and the Windows-style unwind data the
// runtime keeps for it. JIT-compiled code is found through the range-section
// map and a code heap's nibble map; ReadyToRun code (precompiled, as in
// System.Private.CoreLib) through the image's RUNTIME_FUNCTION table and its
// entry-point -> MethodDesc hash map.
#pragma once

#include "stackwalk/frames/RuntimeData.h"
#include "stackwalk/unwinder/Win64Unwind.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>

namespace stackwalk::frames {

struct CodeBlock {
  enum class Kind { Jitted, ReadyToRun, Stub };
  Kind kind = Kind::Jitted;
  uint64_t start = 0;      // the method's first instruction
  uint64_t methodDesc = 0; // 0 for stubs, or where the runtime does not say
  uint64_t unwindBase = 0; // RUNTIME_FUNCTION RVAs are relative to this
  std::optional<RuntimeFunction> function; // the entry covering the address (funclets have their own)
  unsigned stubKind = 0;   // Stub: the runtime's StubCodeBlockKind
};

class CodeMap {
public:
  explicit CodeMap(const RuntimeData &data);

  // nullopt: the address is not in any range the runtime manages. An error:
  // the runtime's structures for it could not be read.
  llvm::Expected<std::optional<CodeBlock>> find(uint64_t address);

private:
  struct RangeSection {
    uint64_t address, begin, end, flags, heapList, r2rModule;
  };
  llvm::Expected<std::optional<RangeSection>> rangeSection(uint64_t address);
  llvm::Expected<std::optional<CodeBlock>> inRange(const RangeSection &range, uint64_t address);
  llvm::Expected<std::optional<CodeBlock>> findJitted(const RangeSection &range, uint64_t address);
  llvm::Expected<std::optional<CodeBlock>> findReadyToRun(const RangeSection &range, uint64_t address);
  llvm::Expected<std::optional<uint64_t>> methodStart(uint64_t mapBase, uint64_t headerMap, uint64_t address);
  llvm::Expected<std::optional<uint32_t>> runtimeFunctionIndex(uint64_t table, uint32_t count, uint64_t rva);
  llvm::Expected<std::optional<uint32_t>> jittedFunctionIndex(uint64_t table, uint32_t count, uint64_t rva);
  llvm::Expected<RuntimeFunction> runtimeFunction(uint64_t table, uint32_t index);
  llvm::Expected<uint64_t> hashMapValue(uint64_t map, uint64_t key);

  const RuntimeData &data_;
  unsigned nibbleMapVersion_;
  std::map<uint64_t, std::optional<CodeBlock>> cache_;
};

} // namespace stackwalk::frames
