#include "stackwalk/debuginfo/TailCalls.h"

#include "stackwalk/debuginfo/TailCallCache.h"
#include "stackwalk/debuginfo/TailCallMemo.h"

#include "CallSiteRecords.h"
#include "FrameScope.h"

#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"

using namespace llvm;

namespace stackwalk {
namespace {

constexpr unsigned MaxChainLength = 8; // tail calls followed from the caller's call site
constexpr size_t MaxChains = 64;       // chains followed before giving up as too ambiguous
constexpr unsigned MaxFunctions = 128; // functions searched for tail calls: hostile DWARF could branch without end

// One function of a chain, the tail call it made, and the frame whose module
// holds it (a chain may start in the caller's module and end in the callee's).
struct Link {
  DWARFDie function, site;
  const FrameScope *scope;
};
using Chain = std::vector<Link>;

// Every chain of tail calls from `from` that ends in a call to the callee.
class ChainSearch {
public:
  ChainSearch(const FrameScope &callee) : callee_(callee) {}

  // False when there are too many chains to tell which was taken, or too
  // many functions to search to know them all.
  bool run(const DWARFDie &from, const FrameScope &scope) {
    Chain chain;
    follow(from, scope, chain);
    return chains_.size() <= MaxChains && searched_ <= MaxFunctions;
  }
  const std::vector<Chain> &chains() const { return chains_; }

private:
  void follow(const DWARFDie &function, const FrameScope &scope, Chain &chain) {
    if (chain.size() >= MaxChainLength || chains_.size() > MaxChains || ++searched_ > MaxFunctions) return;
    for (const Link &link : chain)
      if (sameFunction(link.function, function)) return; // a cycle
    forEachCallSite(function, [&](const DWARFDie &site) {
      if (!isTailCall(site)) return false;
      // A function this module declares (through its PLT) is the callee's module's.
      DWARFDie called = calledFunction(site);
      bool declared = called && called.find(dwarf::DW_AT_declaration);
      DWARFDie target = definitionOf(called, true, callee_);
      if (!target) return false;
      chain.push_back({function, site, &scope});
      if (isFunction(target, callee_, true)) chains_.push_back(chain);
      else follow(target, declared ? callee_ : scope, chain);
      chain.pop_back();
      return chains_.size() > MaxChains || searched_ > MaxFunctions;
    });
  }

  const FrameScope &callee_;
  std::vector<Chain> chains_;
  unsigned searched_ = 0;
};

// The links every chain has at its start (the caller's end) and at its end
// (the callee's), without overlap: gdb's intersection of the possible chains.
Chain sharedLinks(const std::vector<Chain> &chains) {
  if (chains.empty()) return {};
  const Chain &first = chains.front();
  size_t shortest = first.size();
  for (const Chain &chain : chains) shortest = std::min(shortest, chain.size());
  auto same = [](const Link &a, const Link &b) { return sameFunction(a.function, b.function); };
  size_t prefix = 0;
  while (prefix < shortest &&
         std::all_of(chains.begin(), chains.end(), [&](const Chain &c) { return same(c[prefix], first[prefix]); }))
    ++prefix;
  size_t suffix = 0;
  while (prefix + suffix < shortest && std::all_of(chains.begin(), chains.end(), [&](const Chain &c) {
           return same(c[c.size() - 1 - suffix], first[first.size() - 1 - suffix]);
         }))
    ++suffix;
  Chain shared(first.begin(), first.begin() + prefix);
  shared.insert(shared.end(), first.end() - suffix, first.end());
  return shared;
}

// A link as a frame: where its tail call returns to (were it a call; gdb
// shows that as the frame's pc) and the jump's line.
std::optional<TailCallFrame> frameOf(const Link &link) {
  // DW_AT_call_return_pc (GNU: DW_AT_low_pc) is the address after the jump;
  // DWARF 5's DW_AT_call_pc the jump itself.
  std::optional<uint64_t> after;
  if (auto value = link.site.find({dwarf::DW_AT_call_return_pc, dwarf::DW_AT_low_pc})) after = value->getAsAddress();
  if (!after)
    if (auto value = link.site.find(dwarf::DW_AT_call_pc))
      if (auto jump = value->getAsAddress()) after = *jump + 1;
  if (!after || *after == 0) return std::nullopt;
  TailCallFrame frame;
  frame.returnAddress = *after + link.scope->loadBias;
  frame.module = link.scope->frame->module;
  if (DWARFUnit *unit = link.site.getDwarfUnit()) {
    // The path as the Symbolizer gives every frame's (the compilation directory joined).
    DILineInfoSpecifier spec(DILineInfoSpecifier::FileLineInfoKind::AbsoluteFilePath,
                             DILineInfoSpecifier::FunctionNameKind::None);
    DILineInfo line =
        unit->getContext().getLineInfoForAddress({*after - 1, object::SectionedAddress::UndefSection}, spec);
    if (line.FileName != DILineInfo::BadString) frame.file = line.FileName;
    if (line.Line) frame.line = line.Line;
  }
  return frame;
}

// The search tailCallsBetween describes, through both modules' DWARF.
std::vector<TailCallFrame> searchTailCalls(const Target &target, Symbolizer &symbolizer, std::span<const Frame> frames,
                                           size_t index) {
  std::optional<FrameScope> callee = makeFrameScope(symbolizer, target, frames, index);
  std::optional<FrameScope> caller = makeFrameScope(symbolizer, target, frames, index + 1);
  if (!callee || !caller) return {};
  DWARFDie site = findCallSite(caller->subprogram(), frames[index + 1].ip - caller->loadBias);
  DWARFDie named = site ? calledFunction(site) : DWARFDie();
  if (!named) return {}; // no record, or an indirect call
  bool sameModule = frames[index].module == frames[index + 1].module;
  if (isFunction(named, *callee, sameModule)) return {}; // it called the callee itself
  // A function the caller's module defines starts the chain there (it may
  // tail-call into the callee's module through its PLT); one it declares is
  // the callee's module's.
  bool defined = !named.find(dwarf::DW_AT_declaration);
  DWARFDie first = defined ? named : definitionOf(named, sameModule, *callee);
  if (!first) return {};
  ChainSearch search(*callee);
  if (!search.run(first, defined ? *caller : *callee)) return {};
  std::vector<TailCallFrame> out;
  Chain shared = sharedLinks(search.chains());
  for (auto link = shared.rbegin(); link != shared.rend(); ++link)
    if (auto frame = frameOf(*link)) out.push_back(std::move(*frame));
  return out;
}

} // namespace

const std::vector<TailCallFrame> &TailCallFinder::between(std::span<const Frame> frames, size_t index) {
  static const std::vector<TailCallFrame> none;
  if (index + 1 >= frames.size() || frames[index + 1].ipIsExact) return none;
  const Frame &callee = frames[index], &caller = frames[index + 1];
  Pair pair{callee.module, callee.symbolAddress(), caller.module, caller.ip, caller.symbolAddress()};
  auto known = found_.find(pair);
  if (known == found_.end()) known = found_.emplace(pair, search(frames, index)).first;
  return known->second;
}

std::vector<TailCallFrame> TailCallFinder::search(std::span<const Frame> frames, size_t index) {
  const Frame &calleeFrame = frames[index], &callerFrame = frames[index + 1];
  // Code outside modules (JIT code) has no DWARF frame scope: no search.
  if (!calleeFrame.module || !callerFrame.module) return {};
  if (memo_)
    if (auto known = memo_->find(frames, index)) return std::move(*known);
  std::vector<TailCallFrame> found = searchOrRead(frames, index);
  if (memo_) memo_->keep(frames, index, found);
  return found;
}

std::vector<TailCallFrame> TailCallFinder::searchOrRead(std::span<const Frame> frames, size_t index) {
  const Frame &calleeFrame = frames[index], &callerFrame = frames[index + 1];
  if (!symbolizer_.mayHaveTailCalls(*callerFrame.module, callerFrame.ip, *calleeFrame.module)) return {};
  std::string path = cache_ ? cache_->entryPath(symbolizer_, frames, index) : "";
  if (!path.empty())
    if (auto known = cache_->read(path, frames, index)) return std::move(*known);
  std::vector<TailCallFrame> found = searchTailCalls(target_, symbolizer_, frames, index);
  if (!path.empty()) cache_->store(path, found, frames, index);
  return found;
}

std::vector<PlacedTailCall> placeInFiles(const std::vector<TailCallFrame> &found, std::span<const Frame> frames,
                                         size_t index) {
  std::vector<PlacedTailCall> placed;
  for (const TailCallFrame &frame : found)
    placed.push_back({frame.module == frames[index].module, frame.returnAddress - frame.module->loadBias(), frame.file,
                      frame.line});
  return placed;
}

std::vector<TailCallFrame> placeInDump(const std::vector<PlacedTailCall> &placed, std::span<const Frame> frames,
                                       size_t index) {
  std::vector<TailCallFrame> found;
  for (const PlacedTailCall &frame : placed) {
    const Module *module = frames[frame.inCallee ? index : index + 1].module;
    found.push_back({frame.fileAddress + module->loadBias(), module, frame.file, frame.line});
  }
  return found;
}

} // namespace stackwalk
