// Tail-call frames, as gdb (TAILCALL_FRAME) and lldb (artificial frames) show
// them: a function that jumped to its callee left no frame of its own, but
// the DWARF call-site records (DW_TAG_call_site with DW_AT_call_tail_call)
// say which functions may have jumped where. When the caller's call site
// leads to the callee only through tail calls, the functions on every such
// path are known frames.
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/core/Target.h"

#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace stackwalk {

struct TailCallFrame {
  // The address after the jump (runtime), where a call would have returned:
  // the frame's ip, as gdb shows it, looked up at ip - 1 like a return address.
  uint64_t returnAddress = 0;
  const Module *module = nullptr; // the module of the function that jumped
  std::string file; // the jump's source position
  std::optional<unsigned> line;
};

// A tail-call frame placed by the two frames' module files rather than the
// dump: in the callee's module or the caller's, at a file address. What the
// caches keep (TailCallCache on disk, TailCallMemo for a session).
struct PlacedTailCall {
  bool inCallee = false;
  uint64_t fileAddress = 0;
  std::string file;
  std::optional<unsigned> line;
};
std::vector<PlacedTailCall> placeInFiles(const std::vector<TailCallFrame> &found, std::span<const Frame> frames,
                                         size_t index);
std::vector<TailCallFrame> placeInDump(const std::vector<PlacedTailCall> &placed, std::span<const Frame> frames,
                                       size_t index);

// The tail-call frames between physical frame `index` (the callee) and the
// next one (its caller), innermost first. Found as gdb finds them: the
// caller's call site at its return address names the function it called;
// every chain of tail calls from there to the callee (within a few levels,
// from the caller's module, or the callee's, into the callee's) is followed; the functions all chains share at the
// caller's end and at the callee's are the frames (none, when no chain
// reaches the callee or the call site names the callee itself). Nothing for
// an interrupted caller, an indirect call, or code without DWARF. Where the
// modules' symbol maps show that there can be none, their DWARF is not read;
// with a cache, frames found are kept there and read back (TailCallCache.h).
//
// One finder serves one dump: the answer depends only on the two frames'
// modules and code addresses, so it is searched once per pair of them and
// given again to every thread that shares the pair (a pool's workers share
// most of their stacks: the search was a tenth of a 201-thread walk), and
// the session's memo gives it to the next dumps (TailCallMemo.h).
class TailCallCache;
class TailCallMemo;
class TailCallFinder {
public:
  TailCallFinder(const Target &target, Symbolizer &symbolizer, const TailCallCache *cache = nullptr,
                 TailCallMemo *memo = nullptr)
      : target_(target), symbolizer_(symbolizer), cache_(cache), memo_(memo) {}

  const std::vector<TailCallFrame> &between(std::span<const Frame> frames, size_t index);

private:
  std::vector<TailCallFrame> search(std::span<const Frame> frames, size_t index);
  std::vector<TailCallFrame> searchOrRead(std::span<const Frame> frames, size_t index);

  const Target &target_;
  Symbolizer &symbolizer_;
  const TailCallCache *cache_;
  TailCallMemo *memo_;
  // (callee's module, the callee's lookup address, caller's module, its ip, its lookup address)
  using Pair = std::tuple<const Module *, uint64_t, const Module *, uint64_t, uint64_t>;
  std::map<Pair, std::vector<TailCallFrame>> found_;
};

} // namespace stackwalk
