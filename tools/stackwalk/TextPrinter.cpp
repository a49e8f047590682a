#include "Format.h"
#include "Printers.h"
#include "TextStyle.h"

#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/WindowsContext.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Path.h"

namespace stackwalk {
namespace {

// One argument as gdb's backtrace prints it: n=199, n=n@entry=199,
// n=5, n@entry=7, or n=<optimized out>.
std::string argumentText(const FunctionArgument &argument) {
  std::string out = argument.name + "=";
  if (argument.value && argument.entryValue && *argument.value == *argument.entryValue)
    return out + argument.name + "@entry=" + *argument.value;
  out += argument.value ? *argument.value : argument.reason.rfind("optimized out", 0) == 0 ? "<optimized out>" : "<unavailable>";
  if (argument.entryValue) out += ", " + argument.name + "@entry=" + *argument.entryValue;
  return out;
}

std::string argumentsText(const std::vector<FunctionArgument> &arguments) {
  std::string out = " (";
  for (const FunctionArgument &argument : arguments) {
    if (out.size() > 2) out += ", ";
    out += argumentText(argument);
  }
  return out + ")";
}

// Raw stack words where a caller pushes arguments: labelled as words, since
// nothing says they are arguments (WinDbg's kb columns).
std::string stackSlotsText(const std::vector<uint64_t> &words) {
  std::string out = " {stack words:";
  for (uint64_t word : words) {
    out += ' ';
    out += offsetString(word);
  }
  return out + "}";
}

// A source path as people read it: "./csu/../sysdeps/x.h" as "sysdeps/x.h"
// (JSON keeps the path the debug info gives).
std::string displayPath(const std::string &path) {
  llvm::SmallString<128> shown(path);
  llvm::sys::path::remove_dots(shown, /*remove_dot_dot=*/true);
  return shown.empty() ? path : std::string(shown);
}

// Where a frame is: module!function+offset (arguments) [file:line], or
// module+offset without a name; a runtime Frame as [FrameName: address].
std::string location(const ReportFrame &frame, const TextStyle &paint) {
  if (frame.kind == FrameKind::Runtime) {
    std::string out = "[" + printable(frame.frameName) + ": " + addressString(*frame.frameAddress) + "]";
    if (!frame.function.empty()) out += " " + paint(Paint::Function, printable(frame.function));
    return out;
  }
  std::string out;
  if (!frame.moduleName.empty()) out = printable(frame.moduleName);
  else if (frame.module) out = printable(frame.module->name);
  if (!frame.function.empty()) {
    out += (out.empty() ? "" : "!") + paint(Paint::Function, printable(frame.function));
    if (frame.functionOffset && *frame.functionOffset) out += "+" + offsetString(*frame.functionOffset);
    if (frame.arguments) out += printable(argumentsText(*frame.arguments));
  } else if (frame.module) {
    out.append("+").append(offsetString(frame.ip - frame.module->base));
  } else {
    out = "??";
  }
  if (!frame.stackSlots.empty()) out += stackSlotsText(frame.stackSlots);
  if (!frame.file.empty()) {
    out += " [" + paint(Paint::File, printable(displayPath(frame.file)));
    if (frame.line) out += ":" + std::to_string(*frame.line);
    out += "]";
  }
  return out;
}

// Hex digits of an address of the target's: 8 in a 32-bit process.
int addressDigits(const Target &target) { return int(2 * pointerSize(target.arch())); }

void printHeader(std::ostream &out, const Report &report, const TextStyle &paint) {
  const Target &target = *report.target;
  out << "dump:    " << printable(report.dumpPath) << " (" << target.format() << ", " << osName(target.os()) << " "
      << archName(target.arch()) << ")\n";
  out << "process: ";
  if (target.process.pid) out << *target.process.pid << " ";
  out << (target.process.name.empty() ? "?" : printable(target.process.name));
  if (!target.process.commandLine.empty()) out << " (" << printable(target.process.commandLine) << ")";
  out << "\n";
  if (auto pause = target.process.pauseMicroseconds) {
    char milliseconds[32];
    std::snprintf(milliseconds, sizeof milliseconds, "%.2f", double(*pause) / 1000);
    out << "paused:  " << milliseconds << " ms, " << target.threads.size() << " threads stopped while they were read\n";
  }
  if (target.crash) {
    const CrashInfo &crash = *target.crash;
    out << "crash:   " << paint(Paint::Crashed, crash.name);
    if (!crash.codeName.empty()) out << " (" << crash.codeName << ")";
    else if (crash.code) out << " (code " << *crash.code << ")";
    if (crash.address) out << " at " << addressString(*crash.address, addressDigits(target));
    if (crash.senderPid) out << " sent by pid " << *crash.senderPid;
    out << " in thread " << crash.threadId << "\n";
  } else if (!target.crashUnreadable.empty()) {
    out << "crash:   unknown: " << printable(target.crashUnreadable) << "\n";
  } else {
    out << "crash:   none recorded\n";
  }
  if (const std::optional<RuntimeSummary> &runtime = report.runtime) {
    out << "runtime: " << runtime->displayName << " "
        << (runtime->version.empty() ? "(version unknown)" : printable(runtime->version)) << " (" << runtime->kind
        << ", " << printable(runtime->module) << ", contract descriptor at "
        << addressString(runtime->descriptorAddress) << " from the " << runtime->descriptorSource << ")\n";
  }
  if (const std::optional<AssertionInfo> &assertion = target.assertion)
    out << "assertion: " << printable(assertion->expression) << " in " << printable(assertion->function) << " ("
        << printable(assertion->file) << ":" << assertion->line << "), " << assertion->kind << "\n";
  for (const Module &module : target.modules)
    for (const std::string &annotation : module.listAnnotations)
      out << "annotation: " << printable(module.name) << ": " << printable(annotation) << "\n";
  for (const std::string &warning : report.warnings) out << paint(Paint::Warning, "warning:") << " " << printable(warning) << "\n";
}

void printRegisters(std::ostream &out, const RegisterFile &regs, int digits) {
  unsigned column = 0;
  for (const RegisterInfo &info : regs.layout()) {
    auto v = regs.get(info.number);
    if (!v) continue;
    out << (column == 0 ? "        " : "  ");
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%7s=%s", std::string(info.name).c_str(), addressString(*v, digits).c_str());
    out << buffer;
    if (++column == 3) {
      out << "\n";
      column = 0;
    }
  }
  if (column) out << "\n";
}

// The control registers (fctrl, fstat, fop, mxcsr) on one line, then the
// 80-bit st and 128-bit xmm registers two to a line, the 256-bit ymm ones
// one to a line.
void printFpRegisters(std::ostream &out, const FxsaveArea &state) {
  constexpr size_t ControlRegisters = 4, WidestPaired = 2 + 32; // xmm: 0x and 32 digits
  size_t column = 0;
  auto registers = state.registers();
  for (size_t i = 0; i < registers.size(); ++i) {
    const auto &[name, value] = registers[i];
    size_t perLine = i < ControlRegisters ? ControlRegisters : value.size() <= WidestPaired ? 2 : 1;
    char buffer[96];
    std::snprintf(buffer, sizeof buffer, "%7s=%s", name.c_str(), value.c_str());
    out << (column == 0 ? "        " : "  ") << buffer;
    if (++column == perLine || i + 1 == ControlRegisters || i + 1 == registers.size()) {
      out << "\n";
      column = 0;
    }
  }
}

class TextPrinter : public ReportPrinter {
public:
  TextPrinter(std::ostream &out, const PrintOptions &options) : out_(out), options_(options), paint_(options.colour) {}
  void begin(const Report &report) override {
    printHeader(out_, report, paint_);
    digits_ = addressDigits(*report.target);
    warningsPrinted_ = report.warnings.size();
  }
  void thread(const ReportThread &thread) override;
  // Warnings the walk added after the header (a budget spent) close the report.
  void end(const Report &report) override {
    if (warningsPrinted_ < report.warnings.size()) out_ << "\n";
    for (size_t i = warningsPrinted_; i < report.warnings.size(); ++i)
      out_ << paint_(Paint::Warning, "warning:") << " " << printable(report.warnings[i]) << "\n";
  }

private:
  void threadHeader(const ReportThread &thread);
  void frame(const ReportFrame &frame);
  void stopLine(const ReportThread &thread);

  std::ostream &out_;
  PrintOptions options_;
  TextStyle paint_;
  size_t warningsPrinted_ = 0;
  int digits_ = 16;
};

void TextPrinter::thread(const ReportThread &thread) {
  threadHeader(thread);
  // -v shows the stack pointer too: two address columns, so they are named.
  if (options_.verbose && !thread.frames.empty()) {
    auto column = [&](std::string name) {
      return name.append(std::max(size_t(digits_) + 3, name.size() + 1) - name.size(), ' ');
    };
    out_ << paint_(Paint::Dim, "  #    " + column("stack pointer") + column("instruction") + "function [source]  (how found)")
         << "\n";
  }
  bool contextPrinted = false;
  for (const ReportFrame &frame : thread.frames) {
    this->frame(frame);
    // The x87 and SSE registers are the context's: under the first frame with registers.
    if (options_.registers && thread.fpState && frame.registers && !std::exchange(contextPrinted, true))
      printFpRegisters(out_, *thread.fpState);
  }
  stopLine(thread);
}

void TextPrinter::threadHeader(const ReportThread &thread) {
  out_ << "\nThread " << thread.tid;
  if (thread.name) out_ << " \"" << printable(*thread.name) << "\"";
  if (thread.crashed) out_ << " " << paint_(Paint::Crashed, "(crashed)");
  if (thread.managedThreadId) out_ << " (managed thread " << *thread.managedThreadId << ")";
  out_ << "\n";
  if (!thread.managedNote.empty()) out_ << "  managed: " << printable(thread.managedNote) << "\n";
  for (size_t i = 0; i < thread.lastThrown.size(); ++i) {
    const frames::ManagedException &exception = thread.lastThrown[i];
    out_ << (i ? "  inner exception: " : "  last thrown: ") << printable(exception.type.value_or("(type unknown)"));
    if (exception.message) out_ << ": \"" << printable(*exception.message) << "\"";
    out_ << "  (HResult " << hresultString(exception.hresult) << ", object " << addressString(exception.object) << ")\n";
    if (!exception.note.empty()) out_ << "    not read: " << printable(exception.note) << "\n";
  }
}

// `#N  IP  (inlined) location  (trust)`, about 100 columns for a typical
// frame; -v puts the stack pointer before the IP and the MethodDesc after.
void TextPrinter::frame(const ReportFrame &frame) {
  char index[16];
  std::snprintf(index, sizeof index, "  #%-3u ", frame.index);
  out_ << index;
  if (options_.verbose) out_ << paint_(Paint::Address, addressString(frame.sp, digits_)) << " ";
  out_ << paint_(Paint::Address, addressString(frame.ip, digits_)) << " " << (frame.inlined ? "(inlined) " : "")
       << (frame.tailCall ? "(tail call) " : "")
       << location(frame, paint_) << (frame.signalTrampoline ? " <signal handler called>" : "");
  if (options_.verbose && frame.methodDesc) out_ << "  MD=" << addressString(*frame.methodDesc);
  out_ << "  " << paint_(Paint::Dim, (llvm::Twine("(") + trustName(frame.trust) + ")").str()) << "\n";
  if (!frame.note.empty()) out_ << "        note: " << printable(frame.note) << "\n";
  if (options_.registers && frame.registers) printRegisters(out_, *frame.registers, digits_);
  if (options_.rawContext && frame.registers)
    out_ << "        raw context: " << hexString(toWindowsContext(*frame.registers)) << "\n";
}

// A walk that reached the outermost frame needs no word; one cut short does.
void TextPrinter::stopLine(const ReportThread &thread) {
  if (thread.stopReason == StopReason::EndOfStack || thread.stopReason == StopReason::NullIp) return;
  out_ << "  " << paint_(Paint::Warning, "stop:") << " " << stopReasonName(thread.stopReason);
  if (!thread.stopDetail.empty()) out_ << " (" << printable(thread.stopDetail) << ")";
  out_ << "\n";
}

} // namespace

std::unique_ptr<ReportPrinter> makeTextPrinter(std::ostream &out, const PrintOptions &options) {
  return std::make_unique<TextPrinter>(out, options);
}

} // namespace stackwalk
