#include "Format.h"
#include "Printers.h"

#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/WindowsContext.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace stackwalk {
namespace {

using Json = nlohmann::ordered_json;

template <typename T> Json orNull(const std::optional<T> &v) { return v ? Json(*v) : Json(nullptr); }
Json stringOrNull(const std::string &s) { return s.empty() ? Json(nullptr) : Json(s); }

Json annotationsJson(const Target &target) {
  Json out = Json::object();
  for (const auto &[key, value] : target.annotations) out[key] = value;
  return out;
}

// An identity as symbol servers index files: ELF build-id, or PE
// TimeDateStamp and SizeOfImage.
Json codeId(const Module &module) {
  if (!module.buildId.empty()) return hexString(module.buildId);
  if (!module.peTimeDateStamp || !module.peSizeOfImage) return nullptr;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%08X%x", *module.peTimeDateStamp, *module.peSizeOfImage);
  return std::string(buffer);
}

Json dumpJson(const Report &report) {
  const Target &target = *report.target;
  Json out{{"path", report.dumpPath},
           {"format", target.format()},
           {"os", std::string(osName(target.os()))},
           {"arch", std::string(archName(target.arch()))},
           {"pid", orNull(target.process.pid)},
           {"process_name", stringOrNull(target.process.name)},
           {"command_line", stringOrNull(target.process.commandLine)},
           {"os_version", stringOrNull(target.osVersion)},
           {"annotations", annotationsJson(target)}};
  if (target.process.pauseMicroseconds) out["pause_us"] = *target.process.pauseMicroseconds;
  return out;
}

Json crashJson(const Target &target) {
  if (!target.crash) return nullptr;
  const CrashInfo &crash = *target.crash;
  Json out{{"thread_id", crash.threadId}};
  if (crash.exceptionCode) out["exception_code"] = addressString(*crash.exceptionCode);
  else out["signal"] = orNull(crash.signal);
  out["code"] = orNull(crash.code);
  out["code_name"] = stringOrNull(crash.codeName);
  out["name"] = crash.name;
  out["address"] = crash.address ? Json(addressString(*crash.address)) : Json(nullptr);
  out["sender_pid"] = orNull(crash.senderPid);
  out["sender_uid"] = orNull(crash.senderUid);
  if (const std::optional<AssertionInfo> &assertion = target.assertion)
    out["assertion"] = Json{{"expression", assertion->expression}, {"function", assertion->function},
                            {"file", assertion->file}, {"line", assertion->line}, {"kind", assertion->kind}};
  return out;
}

Json modulesJson(const std::vector<Module> &modules) {
  Json out = Json::array();
  for (const Module &module : modules) {
    const ModuleImage *image = module.image.get();
    out.push_back(Json{{"name", module.name},
                       {"path", stringOrNull(module.recordedPath)},
                       {"file", image && !image->inMemory() ? Json(image->path()) : Json(nullptr)},
                       {"debug_file", stringOrNull(module.debugInfoPath())},
                       {"base", addressString(module.base)},
                       {"size", addressString(module.size)},
                       {"build_id", module.buildId.empty() ? Json(nullptr) : Json(hexString(module.buildId))},
                       {"debug_id", stringOrNull(module.debugId)},
                       {"debug_name", stringOrNull(module.debugFile)},
                       {"code_id", codeId(module)},
                       {"version", stringOrNull(module.version)},
                       {"symbol_file", module.symbolFile ? Json(module.symbolFile->path()) : Json(nullptr)},
                       {"symbols", std::string(module.symbolSource())},
                       {"note", stringOrNull(module.imageNote)}});
    // Crashpad's per-module annotations, present only where the dump has them.
    if (!module.listAnnotations.empty()) out.back()["list_annotations"] = module.listAnnotations;
    if (!module.annotations.empty()) {
      Json named = Json::object();
      for (const auto &[key, value] : module.annotations) named[key] = value;
      out.back()["annotations"] = std::move(named);
    }
  }
  return out;
}

Json runtimesJson(const Report &report) {
  Json out = Json::array();
  if (!report.runtime) return out;
  const RuntimeSummary &runtime = *report.runtime;
  Json contracts = Json::object();
  for (const auto &[name, version] : runtime.contracts) contracts[name] = version;
  out.push_back(Json{{"kind", runtime.kind},
                     {"version", stringOrNull(runtime.version)},
                     {"module", runtime.module},
                     {"descriptor", addressString(runtime.descriptorAddress)},
                     {"descriptor_source", runtime.descriptorSource},
                     {"contracts", std::move(contracts)}});
  return out;
}

Json registersJson(const RegisterFile &regs) {
  Json out = Json::object();
  for (const RegisterInfo &info : regs.layout())
    if (auto v = regs.get(info.number)) out[std::string(info.name)] = addressString(*v);
  return out;
}

Json argumentsJson(const std::vector<FunctionArgument> &arguments) {
  Json out = Json::array();
  for (const FunctionArgument &argument : arguments)
    out.push_back({{"name", argument.name},
                   {"type", argument.type},
                   {"value", orNull(argument.value)},
                   {"entry_value", orNull(argument.entryValue)},
                   {"location", stringOrNull(argument.location)},
                   {"reason", stringOrNull(argument.value ? std::string() : argument.reason)}});
  return out;
}

Json frameJson(const ReportFrame &frame, const PrintOptions &options) {
  static const char *const Kinds[] = {"native", "managed", "runtime"};
  Json out{{"index", frame.index},
           {"kind", Kinds[int(frame.kind)]},
           {"inlined", frame.inlined},
           {"tail_call", frame.tailCall},
           {"signal_trampoline", frame.signalTrampoline},
           {"trust", std::string(trustName(frame.trust))},
           {"ip", addressString(frame.ip)},
           {"sp", addressString(frame.sp)},
           {"module", !frame.moduleName.empty() ? Json(frame.moduleName) : frame.module ? Json(frame.module->name) : Json(nullptr)},
           {"module_offset", frame.module ? Json(offsetString(frame.ip - frame.module->base)) : Json(nullptr)},
           {"function", stringOrNull(frame.function)},
           {"function_offset", frame.functionOffset ? Json(offsetString(*frame.functionOffset)) : Json(nullptr)},
           {"file", stringOrNull(frame.file)},
           {"line", orNull(frame.line)},
           {"frame_name", stringOrNull(frame.frameName)},
           {"frame_address", frame.frameAddress ? Json(addressString(*frame.frameAddress)) : Json(nullptr)},
           {"method_desc", frame.methodDesc ? Json(addressString(*frame.methodDesc)) : Json(nullptr)},
           {"method", frame.kind == FrameKind::Native ? Json(nullptr) : stringOrNull(frame.function)},
           {"note", stringOrNull(frame.note)}};
  if (frame.arguments) out["arguments"] = argumentsJson(*frame.arguments);
  if (!frame.stackSlots.empty()) {
    Json words = Json::array();
    for (uint64_t word : frame.stackSlots) words.push_back(addressString(word));
    out["stack_slots"] = std::move(words);
  }
  if (options.registers && frame.registers) out["registers"] = registersJson(*frame.registers);
  if (options.rawContext && frame.registers) {
    std::vector<uint8_t> context = toWindowsContext(*frame.registers);
    out["raw_context"] = hexString(context);
  }
  return out;
}

// nlohmann's dump of a value, re-indented to sit `depth` levels down, so the
// streamed document reads exactly as one dump(1) of the whole would.
std::string nested(const Json &value, size_t depth, bool compact) {
  // Names, paths and arguments come from the dump and need not be UTF-8.
  if (compact) return value.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string text = value.dump(1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 8 * depth);
  for (size_t line = 0; line < text.size();) {
    size_t newline = std::min(text.find('\n', line), text.size() - 1);
    out.append(text, line, newline + 1 - line);
    if (text[newline] == '\n') out.append(depth, ' ');
    line = newline + 1;
  }
  return out;
}

// Streams one document: the header fields, each thread as it is walked, and
// what is known only at the end (the signature, warnings). Pretty output is
// exactly nlohmann's dump(1) of the whole; compact output is one line.
class JsonPrinter : public ReportPrinter {
public:
  JsonPrinter(std::ostream &out, const PrintOptions &options) : out_(out), options_(options) {}
  void begin(const Report &report) override;
  void thread(const ReportThread &thread) override;
  void end(const Report &report) override;
  bool printsSignature() const override { return true; }

private:
  // A member's separator and key at the top level.
  std::string key(const char *name) const {
    return std::string(options_.compact ? "," : ",\n ") + "\"" + name + "\":" + (options_.compact ? "" : " ");
  }

  std::ostream &out_;
  PrintOptions options_;
  size_t threads_ = 0;
};

void JsonPrinter::begin(const Report &report) {
  bool compact = options_.compact;
  out_ << (compact ? "{\"schema\":\"stackwalk/1\"" : "{\n \"schema\": \"stackwalk/1\"") << key("dump")
       << nested(dumpJson(report), 1, compact) << key("crash") << nested(crashJson(*report.target), 1, compact)
       << key("modules") << nested(modulesJson(report.target->modules), 1, compact) << key("unloaded_modules")
       << nested(modulesJson(report.target->unloadedModules), 1, compact) << key("runtimes") << nested(runtimesJson(report), 1, compact) << key("threads")
       << "[";
}

// The exception with its inner exceptions nested, as .NET prints them.
Json exceptionJson(const std::vector<frames::ManagedException> &chain, size_t at = 0) {
  if (at >= chain.size()) return nullptr;
  const frames::ManagedException &exception = chain[at];
  return Json{{"object", addressString(exception.object)},
              {"type", orNull(exception.type)},
              {"message", orNull(exception.message)},
              {"hresult", hresultString(exception.hresult)},
              {"note", stringOrNull(exception.note)},
              {"inner", exceptionJson(chain, at + 1)}};
}

void JsonPrinter::thread(const ReportThread &thread) {
  Json frames = Json::array();
  for (const ReportFrame &frame : thread.frames) frames.push_back(frameJson(frame, options_));
  Json json{{"tid", thread.tid},
            {"name", orNull(thread.name)},
            {"crashed", thread.crashed},
            {"managed_thread_id", orNull(thread.managedThreadId)},
            {"managed_note", stringOrNull(thread.managedNote)},
            {"last_thrown_exception", exceptionJson(thread.lastThrown)},
            {"stop_reason", std::string(stopReasonName(thread.stopReason))},
            {"stop_detail", stringOrNull(thread.stopDetail)}};
  if (options_.registers) {
    Json fp = nullptr;
    if (thread.fpState)
      for (const auto &[name, value] : thread.fpState->registers()) fp[name] = value;
    json["fp_registers"] = std::move(fp);
  }
  json["frames"] = std::move(frames);
  if (options_.compact) out_ << (threads_++ ? "," : "") << nested(json, 2, true);
  else out_ << (threads_++ ? ",\n  " : "\n  ") << nested(json, 2, false);
}

void JsonPrinter::end(const Report &report) {
  out_ << (threads_ && !options_.compact ? "\n ]" : "]") << key("signature") << nested(orNull(report.signature), 1, options_.compact)
       << key("warnings") << nested(Json(report.warnings), 1, options_.compact) << (options_.compact ? "}\n" : "\n}\n");
}

} // namespace

std::unique_ptr<ReportPrinter> makeJsonPrinter(std::ostream &out, const PrintOptions &options) {
  return std::make_unique<JsonPrinter>(out, options);
}

void printJsonError(std::ostream &out, const std::string &dumpPath, const DumpFailure &failure, bool compact) {
  Json what{{"kind", failure.kindName()}, {"message", failure.message}};
  if (failure.signal) what["signal"] = failure.signal;
  Json error{{"schema", "stackwalk/1"}, {"dump", Json{{"path", dumpPath}}}, {"error", what}};
  out << nested(error, 0, compact) << "\n";
}

} // namespace stackwalk
