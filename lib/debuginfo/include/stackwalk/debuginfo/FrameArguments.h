// The formal parameters of the functions at each frame of a walked thread, as
// gdb shows them: names, types and values from DWARF location expressions
// evaluated at the frame's pc, with entry values recovered from the caller's
// call-site records. Only registers the unwinder recovered are read.
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/core/Target.h"

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace stackwalk {

struct FunctionArgument {
  std::string name;
  std::string type;
  std::optional<std::string> value;      // as gdb prints it; nullopt when it cannot be recovered
  std::optional<std::string> entryValue; // the value the caller passed (gdb's name@entry)
  std::string location;                  // where the value lives at this pc: "rdi", "memory 0x...", ...
  // Why there is no value. It starts with "optimized out" when the debug
  // info itself says the value is gone (gdb's <optimized out>); otherwise the
  // dump or the reader lacks something (a register, memory, an operation).
  std::string reason;
};

struct FrameScope; // one physical frame's function DIEs, registers, frame base and CFA

class FrameArguments {
public:
  // `frames`: one thread's physical frames, innermost first, as the walker made them.
  FrameArguments(const Target &target, Symbolizer &symbolizer, std::span<const Frame> frames);
  ~FrameArguments();

  // The arguments of each function at physical frame `index`: innermost
  // inlined call first and the physical function last, as the Symbolizer
  // lists them. Empty when the frame's function has no DWARF.
  std::vector<std::vector<FunctionArgument>> at(size_t index);

  // Used by the expression evaluator's DW_OP_entry_value: the value `reg`
  // held when the function of frame `index` was entered. Each answer is
  // kept: ask for frames from the outermost in, and a value passed down a
  // deep recursion resolves one level at a time.
  llvm::Expected<uint64_t> entryValue(size_t index, unsigned reg, unsigned depth);

private:
  const FrameScope *scope(size_t index);
  llvm::Expected<uint64_t> resolveEntryValue(size_t index, unsigned reg, unsigned depth);

  const Target &target_;
  Symbolizer &symbolizer_;
  std::span<const Frame> frames_;
  std::map<size_t, std::unique_ptr<FrameScope>> scopes_;
  std::map<std::pair<size_t, unsigned>, std::variant<uint64_t, std::string>> entryValues_; // value or why not
};

} // namespace stackwalk
