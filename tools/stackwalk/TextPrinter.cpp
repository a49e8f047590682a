#include "Format.h"
#include "Printers.h"

#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/WindowsContext.h"

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

std::string location(const ReportFrame &frame) {
  if (frame.kind == FrameKind::Runtime) {
    std::string out = "[" + frame.frameName + ": " + addressString(*frame.frameAddress) + "]";
    if (!frame.function.empty()) out += " " + frame.function;
    return printable(out);
  }
  std::string out;
  if (!frame.moduleName.empty()) out = frame.moduleName;
  else if (frame.module) out = frame.module->name;
  if (!frame.function.empty()) {
    out += (out.empty() ? "" : "!") + frame.function;
    if (frame.functionOffset && *frame.functionOffset) out += "+" + offsetString(*frame.functionOffset);
    if (frame.arguments) out += argumentsText(*frame.arguments);
  } else if (frame.module) {
    out.append("+").append(offsetString(frame.ip - frame.module->base));
  } else {
    out = "??";
  }
  if (!frame.file.empty()) {
    out += " [" + frame.file;
    if (frame.line) out += ":" + std::to_string(*frame.line);
    out += "]";
  }
  return printable(out);
}

void printHeader(std::ostream &out, const Report &report) {
  const Target &target = *report.target;
  out << "dump:    " << printable(report.dumpPath) << " (" << target.format() << ", " << osName(target.os()) << " "
      << archName(target.arch()) << ")\n";
  out << "process: ";
  if (target.process.pid) out << *target.process.pid << " ";
  out << (target.process.name.empty() ? "?" : printable(target.process.name));
  if (!target.process.commandLine.empty()) out << " (" << printable(target.process.commandLine) << ")";
  out << "\n";
  if (target.crash) {
    const CrashInfo &crash = *target.crash;
    out << "crash:   " << crash.name;
    if (!crash.codeName.empty()) out << " (" << crash.codeName << ")";
    else if (crash.code) out << " (code " << *crash.code << ")";
    if (crash.address) out << " at " << addressString(*crash.address);
    out << " in thread " << crash.threadId << "\n";
  } else {
    out << "crash:   none recorded\n";
  }
  if (const std::optional<RuntimeSummary> &runtime = report.runtime) {
    out << "runtime: " << runtime->displayName << " " << (runtime->version.empty() ? "(version unknown)" : runtime->version)
        << " (" << runtime->kind << ", " << runtime->module << ", contract descriptor at "
        << addressString(runtime->descriptorAddress) << " from the " << runtime->descriptorSource << ")\n";
  }
  for (const std::string &warning : report.warnings) out << "warning: " << printable(warning) << "\n";
}

void printRegisters(std::ostream &out, const RegisterFile &regs) {
  unsigned column = 0;
  for (const RegisterInfo &info : regs.layout()) {
    auto v = regs.get(info.number);
    if (!v) continue;
    out << (column == 0 ? "        " : "  ");
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%7s=%s", std::string(info.name).c_str(), addressString(*v).c_str());
    out << buffer;
    if (++column == 3) {
      out << "\n";
      column = 0;
    }
  }
  if (column) out << "\n";
}

class TextPrinter : public ReportPrinter {
public:
  TextPrinter(std::ostream &out, const PrintOptions &options) : out_(out), options_(options) {}
  void begin(const Report &report) override { printHeader(out_, report); }
  void thread(const ReportThread &thread) override;
  void end(const Report &) override {}

private:
  std::ostream &out_;
  PrintOptions options_;
};

void TextPrinter::thread(const ReportThread &thread) {
  out_ << "\nThread " << thread.tid;
  if (thread.name) out_ << " \"" << printable(*thread.name) << "\"";
  if (thread.crashed) out_ << " (crashed)";
  if (thread.managedThreadId) out_ << " (managed thread " << *thread.managedThreadId << ")";
  out_ << "\n";
  if (!thread.managedNote.empty()) out_ << "  managed: " << printable(thread.managedNote) << "\n";
  for (size_t i = 0; i < thread.lastThrown.size(); ++i) {
    const frames::ManagedException &exception = thread.lastThrown[i];
    out_ << (i ? "  inner exception: " : "  last thrown: ") << printable(exception.type);
    if (exception.message) out_ << ": \"" << printable(*exception.message) << "\"";
    out_ << "  (HResult " << hresultString(exception.hresult) << ", object " << addressString(exception.object) << ")\n";
  }
  for (const ReportFrame &frame : thread.frames) {
    char prefix[96];
    std::snprintf(prefix, sizeof prefix, "  #%-3u %s %s ", frame.index, addressString(frame.sp).c_str(),
                  addressString(frame.ip).c_str());
    out_ << prefix << (frame.inlined ? "(inlined) " : "") << location(frame)
         << (frame.signalTrampoline ? " <signal handler called>" : "");
    if (frame.methodDesc) out_ << "  MD=" << addressString(*frame.methodDesc);
    out_ << "  (" << trustName(frame.trust) << ")\n";
    if (!frame.note.empty()) out_ << "        note: " << printable(frame.note) << "\n";
    if (options_.registers && frame.registers) printRegisters(out_, *frame.registers);
    if (options_.rawContext && frame.registers)
      out_ << "        raw context: " << hexString(toWindowsContext(*frame.registers)) << "\n";
  }
  // A walk that reached the outermost frame needs no word; one cut short does.
  if (thread.stopReason == StopReason::EndOfStack || thread.stopReason == StopReason::NullIp) return;
  out_ << "  stop: " << stopReasonName(thread.stopReason);
  if (!thread.stopDetail.empty()) out_ << " (" << thread.stopDetail << ")";
  out_ << "\n";
}

} // namespace

std::unique_ptr<ReportPrinter> makeTextPrinter(std::ostream &out, const PrintOptions &options) {
  return std::make_unique<TextPrinter>(out, options);
}

} // namespace stackwalk
