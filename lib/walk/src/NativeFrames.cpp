#include "NativeFrames.h"

namespace stackwalk {

std::optional<uint64_t> offsetInFunction(const SourceFrame &source, const Module &module, uint64_t ip) {
  if (!source.functionStart) return std::nullopt;
  uint64_t start = *source.functionStart + module.loadBias();
  if (start > ip) return std::nullopt;
  return ip - start;
}

void appendNativeEntries(std::vector<ReportFrame> &entries, const Frame &frame, Symbolizer &symbolizer,
                         const RegisteredCode &registered, std::vector<std::vector<FunctionArgument>> *arguments) {
  ReportFrame base;
  base.trust = frame.trust;
  base.ip = frame.ip;
  base.sp = frame.sp;
  base.module = frame.module;
  base.signalTrampoline = frame.signalTrampoline;
  const std::vector<SourceFrame> *sources = nullptr;
  if (frame.module) sources = &symbolizer.symbolize(*frame.module, frame.symbolAddress());
  if (!sources || sources->empty()) {
    if (!frame.module)
      if (auto name = registered.nameAt(frame.lookupAddress())) {
        base.function = name->function;
        base.functionOffset = frame.ip - name->start;
      }
    if (frame.module && frame.module->image)
      if (std::string why = symbolizer.unusableSymbols(*frame.module->image); !why.empty())
        base.note = "not named: " + why;
    base.index = unsigned(entries.size());
    base.registers = frame.regs;
    entries.push_back(std::move(base));
    return;
  }
  size_t first = entries.size();
  for (const SourceFrame &source : *sources) {
    ReportFrame &entry = entries.emplace_back(base);
    entry.index = unsigned(entries.size() - 1);
    entry.inlined = source.inlined;
    // Only the physical frame has registers of its own.
    if (!entry.inlined) entry.registers = frame.regs;
    entry.function = source.function;
    entry.file = source.file;
    entry.line = source.line;
    entry.functionOffset = offsetInFunction(source, *frame.module, frame.ip);
  }
  // The Symbolizer leaves out nameless DWARF entries; arguments go with the
  // chain only when it is the one the Symbolizer named.
  if (arguments && arguments->size() == sources->size())
    for (size_t i = 0; i < sources->size(); ++i) entries[first + i].arguments = std::move((*arguments)[i]);
}

void appendTailCallEntries(std::vector<ReportFrame> &entries, const std::vector<TailCallFrame> &tailCalls,
                           const Frame &callee, uint64_t callerSp, Symbolizer &symbolizer) {
  for (const TailCallFrame &tailCall : tailCalls) {
    ReportFrame &entry = entries.emplace_back();
    entry.index = unsigned(entries.size() - 1);
    entry.tailCall = true;
    entry.trust = FrameTrust::CallSite;
    entry.ip = tailCall.returnAddress;
    entry.sp = callerSp;
    entry.module = tailCall.module ? tailCall.module : callee.module;
    entry.file = tailCall.file;
    entry.line = tailCall.line;
    if (!entry.module) continue;
    // Named by the function that made the jump, as gdb names it: the
    // innermost at the jump (an inlined body's jump is its function's).
    const std::vector<SourceFrame> &sources = symbolizer.symbolize(*entry.module, tailCall.returnAddress - 1);
    if (sources.empty()) continue;
    entry.function = sources.front().function;
    entry.functionOffset = offsetInFunction(sources.front(), *entry.module, tailCall.returnAddress);
  }
}

} // namespace stackwalk
