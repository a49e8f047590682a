// What writers attach to explain a crash: Crashpad's info stream (the
// process's and each module's annotations; crashpad/minidump/
// minidump_extensions.h) and Breakpad's assertion stream
// (google_breakpad/common/minidump_format.h).
#include "Streams.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

namespace stackwalk::minidump {
namespace {

constexpr uint32_t CrashpadInfoStream = 0x43500001, AssertionStream = 0x47670002;
constexpr uint16_t StringAnnotation = 1; // crashpad::Annotation::Type::kString

// MinidumpSimpleStringDictionary: u32 count; {u32 key RVA, u32 value RVA}[].
void readDictionary(const Reader &reader, const LocationDescriptor &where, const char *what,
                    std::vector<std::pair<std::string, std::string>> &out) {
  struct Entry {
    uint32_t key, value;
  };
  std::span<const uint8_t> dictionary = reader.slice(where, what);
  for (const Entry &entry : reader.list<Entry>(dictionary, what)) {
    if (reader.stringBudgetSpent()) return;
    auto key = reader.utf8String(entry.key);
    auto value = reader.utf8String(entry.value);
    if (key && value) out.emplace_back(*key, *value);
  }
}

// MinidumpRVAList of MinidumpUTF8Strings: u32 count; RVA[].
std::vector<std::string> readStringList(const Reader &reader, const LocationDescriptor &where) {
  std::vector<std::string> out;
  std::span<const uint8_t> list = reader.slice(where, "a module's list annotations");
  for (uint32_t rva : reader.list<uint32_t>(list, "a module's list annotations")) {
    if (reader.stringBudgetSpent()) break;
    if (auto text = reader.utf8String(rva)) out.push_back(*text);
  }
  return out;
}

// MinidumpAnnotationList: u32 count; {RVA name, u16 type, u16 reserved, RVA
// value}[]; a value is a MinidumpByteArray (u32 length, bytes). String
// objects are kept as text; others say their type and size.
void readAnnotationObjects(const Reader &reader, const LocationDescriptor &where,
                           std::vector<std::pair<std::string, std::string>> &out) {
  struct Object {
    uint32_t name;
    uint16_t type, reserved;
    uint32_t value;
  };
  std::span<const uint8_t> list = reader.slice(where, "a module's annotation objects");
  for (const Object &object : reader.list<Object>(list, "a module's annotation objects")) {
    if (reader.stringBudgetSpent()) return;
    auto name = reader.utf8String(object.name);
    auto bytes = reader.utf8String(object.value); // the same layout: a length, then the bytes
    if (!name || !bytes) continue;
    out.emplace_back(*name, object.type == StringAnnotation
                                ? *bytes
                                : "(type " + std::to_string(object.type) + ", " + std::to_string(bytes->size()) +
                                      " bytes)");
  }
}

CrashpadInfo::ModuleAnnotations readModuleInfo(const Reader &reader, uint32_t index, const LocationDescriptor &where) {
  // MinidumpModuleCrashpadInfo: u32 version; LocationDescriptor
  // list_annotations, simple_annotations, annotation_objects.
  CrashpadInfo::ModuleAnnotations out;
  out.moduleIndex = index;
  std::span<const uint8_t> info = reader.slice(where, "a module's Crashpad info");
  if (auto list = reader.read<LocationDescriptor>(info, 4)) out.list = readStringList(reader, *list);
  if (auto simple = reader.read<LocationDescriptor>(info, 12))
    readDictionary(reader, *simple, "a module's simple annotations", out.named);
  if (auto objects = reader.read<LocationDescriptor>(info, 20)) readAnnotationObjects(reader, *objects, out.named);
  return out;
}

std::string utf16Field(std::span<const uint8_t> bytes) {
  std::vector<llvm::UTF16> units(bytes.size() / 2);
  std::memcpy(units.data(), bytes.data(), units.size() * 2);
  units.erase(std::find(units.begin(), units.end(), 0), units.end());
  return Reader::utf16ToUtf8(std::move(units));
}

} // namespace

CrashpadInfo readCrashpadInfo(const Reader &reader) {
  // MinidumpCrashpadInfo: u32 version; UUID report_id; UUID client_id;
  // LocationDescriptor simple_annotations; LocationDescriptor module_list.
  CrashpadInfo out;
  auto stream = reader.stream(StreamType(CrashpadInfoStream));
  if (!stream || stream->size() < 36) return out;
  out.annotations.emplace_back("crashpad.report_id", hexString(stream->subspan(4, 16)));
  out.annotations.emplace_back("crashpad.client_id", hexString(stream->subspan(20, 16)));
  if (auto simple = reader.read<LocationDescriptor>(*stream, 36))
    readDictionary(reader, *simple, "Crashpad's annotations", out.annotations);
  // MinidumpModuleCrashpadInfoList: u32 count; {u32 module index, LocationDescriptor}[].
  struct Link {
    uint32_t moduleIndex;
    LocationDescriptor info;
  };
  if (auto modules = reader.read<LocationDescriptor>(*stream, 44)) {
    std::span<const uint8_t> list = reader.slice(*modules, "Crashpad's module list");
    for (const Link &link : reader.list<Link>(list, "Crashpad's module list")) {
      if (reader.stringBudgetSpent()) break;
      out.modules.push_back(readModuleInfo(reader, link.moduleIndex, link.info));
    }
  }
  return out;
}

std::optional<AssertionInfo> readAssertion(const Reader &reader) {
  // u16 expression[128], function[128], file[128]; u32 line; u32 type.
  auto stream = reader.stream(StreamType(AssertionStream));
  if (!stream || stream->size() < 776) return std::nullopt;
  AssertionInfo out;
  out.expression = utf16Field(stream->subspan(0, 256));
  out.function = utf16Field(stream->subspan(256, 256));
  out.file = utf16Field(stream->subspan(512, 256));
  out.line = *reader.read<uint32_t>(*stream, 768);
  uint32_t type = *reader.read<uint32_t>(*stream, 772);
  out.kind = type == 1 ? "invalid_parameter" : type == 2 ? "pure_virtual_call" : "unknown";
  return out;
}

} // namespace stackwalk::minidump
