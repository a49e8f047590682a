#include "Format.h"
#include "JsonStream.h"
#include "Printers.h"

#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/WindowsContext.h"

#include <cstdio>

namespace stackwalk {
namespace {

using Json = JsonStream::Json;

template <typename T> Json orNull(const std::optional<T> &v) { return v ? Json(*v) : Json(nullptr); }
Json stringOrNull(const std::string &s) { return s.empty() ? Json(nullptr) : Json(s); }

// Annotations as an object: a key the dump gives twice keeps its first place
// and its last value.
Json annotationsJson(const std::vector<std::pair<std::string, std::string>> &annotations) {
  Json out = Json::object();
  for (const auto &[key, value] : annotations) out[key] = value;
  return out;
}

// An identity as symbol servers index files: ELF build-id, or PE
// TimeDateStamp and SizeOfImage; empty when neither is known.
std::string codeId(const Module &module) {
  if (!module.buildId.empty()) return hexString(module.buildId);
  if (!module.peTimeDateStamp || !module.peSizeOfImage) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%08X%x", *module.peTimeDateStamp, *module.peSizeOfImage);
  return buffer;
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
           {"annotations", annotationsJson(target.annotations)}};
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

// Streams one document: the header fields, each thread as it is walked, and
// what is known only at the end (the signature, warnings). Pretty output is
// exactly nlohmann's dump(1) of the whole; compact output is one line.
class JsonPrinter : public ReportPrinter {
public:
  JsonPrinter(std::ostream &out, const PrintOptions &options)
      : out_(out), json_(out, options.compact), options_(options) {}
  void begin(const Report &report) override;
  void thread(const ReportThread &thread) override;
  void end(const Report &report) override;
  bool printsSignature() const override { return true; }

private:
  void modules(const std::vector<Module> &modules);
  void frame(const ReportFrame &frame);

  std::ostream &out_;
  JsonStream json_;
  PrintOptions options_;
};

void JsonPrinter::begin(const Report &report) {
  json_.beginObject().key("schema").string("stackwalk/1");
  json_.key("dump").value(dumpJson(report)).key("crash").value(crashJson(*report.target));
  if (!report.target->crashUnreadable.empty()) json_.key("crash_unreadable").string(report.target->crashUnreadable);
  json_.key("modules");
  modules(report.target->modules);
  json_.key("unloaded_modules");
  modules(report.target->unloadedModules);
  json_.key("runtimes").value(runtimesJson(report)).key("threads").beginArray();
  json_.flush();
}

void JsonPrinter::modules(const std::vector<Module> &modules) {
  json_.beginArray();
  for (const Module &module : modules) {
    const ModuleImage *image = module.image.get();
    json_.beginObject().key("name").string(module.name).key("path").stringOrNull(module.recordedPath).key("file");
    image && !image->inMemory() ? json_.string(image->path()) : json_.null();
    json_.key("debug_file").stringOrNull(module.debugInfoPath());
    json_.key("base").string(addressString(module.base)).key("size").string(addressString(module.size));
    json_.key("build_id").stringOrNull(module.buildId.empty() ? "" : hexString(module.buildId));
    json_.key("debug_id").stringOrNull(module.breakpadDebugId()).key("debug_name").stringOrNull(module.debugFile);
    json_.key("code_id").stringOrNull(codeId(module)).key("version").stringOrNull(module.version);
    json_.key("symbol_file");
    module.symbolFile ? json_.string(module.symbolFile->path()) : json_.null();
    json_.key("symbols").string(module.symbolSource()).key("note").stringOrNull(module.imageNote);
    // Crashpad's per-module annotations, present only where the dump has them.
    if (!module.listAnnotations.empty()) json_.key("list_annotations").value(Json(module.listAnnotations));
    if (!module.annotations.empty()) json_.key("annotations").value(annotationsJson(module.annotations));
    json_.endObject();
  }
  json_.endArray();
}

void JsonPrinter::thread(const ReportThread &thread) {
  json_.beginObject().key("tid").number(thread.tid).key("name");
  thread.name ? json_.string(*thread.name) : json_.null();
  json_.key("crashed").boolean(thread.crashed).key("managed_thread_id").numberOrNull(thread.managedThreadId);
  json_.key("managed_note").stringOrNull(thread.managedNote);
  json_.key("last_thrown_exception").value(exceptionJson(thread.lastThrown));
  json_.key("stop_reason").string(stopReasonName(thread.stopReason)).key("stop_detail").stringOrNull(thread.stopDetail);
  if (options_.registers) {
    Json fp = nullptr;
    if (thread.fpState)
      for (const auto &[name, value] : thread.fpState->registers()) fp[name] = value;
    json_.key("fp_registers").value(fp);
  }
  json_.key("frames").beginArray();
  for (const ReportFrame &frame : thread.frames) this->frame(frame);
  json_.endArray().endObject();
  json_.flush();
}

void JsonPrinter::frame(const ReportFrame &frame) {
  static const char *const Kinds[] = {"native", "managed", "runtime"};
  auto addressOrNull = [&](const std::optional<uint64_t> &address) -> JsonStream & {
    return address ? json_.string(addressString(*address)) : json_.null();
  };
  json_.beginObject().key("index").number(uint64_t(frame.index)).key("kind").string(Kinds[int(frame.kind)]);
  json_.key("inlined").boolean(frame.inlined).key("tail_call").boolean(frame.tailCall);
  json_.key("signal_trampoline").boolean(frame.signalTrampoline).key("trust").string(trustName(frame.trust));
  json_.key("ip").string(addressString(frame.ip)).key("sp").string(addressString(frame.sp));
  json_.key("module");
  if (!frame.moduleName.empty()) json_.string(frame.moduleName);
  else frame.module ? json_.string(frame.module->name) : json_.null();
  json_.key("module_offset");
  frame.module ? json_.string(offsetString(frame.ip - frame.module->base)) : json_.null();
  json_.key("function").stringOrNull(frame.function).key("function_offset");
  frame.functionOffset ? json_.string(offsetString(*frame.functionOffset)) : json_.null();
  json_.key("file").stringOrNull(frame.file).key("line").numberOrNull(frame.line);
  json_.key("frame_name").stringOrNull(frame.frameName);
  json_.key("frame_address");
  addressOrNull(frame.frameAddress).key("method_desc");
  addressOrNull(frame.methodDesc).key("method");
  frame.kind == FrameKind::Native ? json_.null() : json_.stringOrNull(frame.function);
  json_.key("note").stringOrNull(frame.note);
  if (frame.arguments) json_.key("arguments").value(argumentsJson(*frame.arguments));
  if (!frame.stackSlots.empty()) {
    json_.key("stack_slots").beginArray();
    for (uint64_t word : frame.stackSlots) json_.string(addressString(word));
    json_.endArray();
  }
  if (options_.registers && frame.registers) json_.key("registers").value(registersJson(*frame.registers));
  if (options_.rawContext && frame.registers) json_.key("raw_context").string(hexString(toWindowsContext(*frame.registers)));
  json_.endObject();
}

void JsonPrinter::end(const Report &report) {
  json_.endArray().key("signature").value(orNull(report.signature)).key("warnings").value(Json(report.warnings));
  json_.endObject().flush();
  out_ << '\n';
}

} // namespace

std::unique_ptr<ReportPrinter> makeJsonPrinter(std::ostream &out, const PrintOptions &options) {
  return std::make_unique<JsonPrinter>(out, options);
}

void printJsonError(std::ostream &out, const std::string &dumpPath, const DumpFailure &failure, bool compact) {
  Json what{{"kind", failure.kindName()}, {"message", failure.message}};
  if (failure.signal) what["signal"] = failure.signal;
  JsonStream(out, compact).value(Json{{"schema", "stackwalk/1"}, {"dump", Json{{"path", dumpPath}}}, {"error", what}});
  out << "\n";
}

} // namespace stackwalk
