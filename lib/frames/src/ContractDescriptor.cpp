#include "stackwalk/frames/ContractDescriptor.h"

#include "stackwalk/core/LoadedElf.h"

#include "ModuleRelocations.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>

namespace stackwalk::frames {
namespace {

using nlohmann::json;

constexpr uint64_t Magic = 0x0043414443434e44; // "DNCCDAC\0", little-endian
constexpr uint32_t MaxJsonBytes = 4 << 20, MaxPointerData = 1 << 16;
constexpr unsigned MaxSubDescriptorDepth = 4;
constexpr const char *ExportName = "DotNetRuntimeContractDescriptor";

// Numbers in the descriptor are JSON numbers or strings ("0x1f", "12", "-4").
std::optional<uint64_t> number(const json &value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer()) return uint64_t(value.get<int64_t>());
  if (!value.is_string()) return std::nullopt;
  const std::string &text = value.get_ref<const std::string &>();
  std::string_view digits = text;
  bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
    base = 16;
  }
  uint64_t result = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), result, base);
  if (error != std::errc() || end != digits.data() + digits.size() || digits.empty()) return std::nullopt;
  return negative ? uint64_t(-int64_t(result)) : result;
}

// A field is `offset` or `[offset, "type"]`; "!" is the type's size.
llvm::Expected<DataType> parseType(const std::string &name, const json &fields) {
  if (!fields.is_object()) return fail("type " + name + " is not an object");
  DataType type;
  for (const auto &[field, value] : fields.items()) {
    const json &offsetValue = value.is_array() && !value.empty() ? value[0] : value;
    auto offset = number(offsetValue);
    if (!offset || *offset > UINT32_MAX) return fail("type " + name + ": field " + field + " has no valid offset");
    if (field == "!") type.size = uint32_t(*offset);
    else type.fields[field] = uint32_t(*offset);
  }
  return type;
}

} // namespace

llvm::Expected<ContractDescriptor> ContractDescriptor::parse(std::string_view text,
                                                             const std::vector<uint64_t> &pointerData,
                                                             unsigned pointerSize) {
  json document = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return fail("the data descriptor is not valid JSON");
  if (!document.is_object()) return fail("the data descriptor is not a JSON object");
  ContractDescriptor descriptor;
  descriptor.pointerSize_ = pointerSize;
  if (auto it = document.find("version"); it != document.end())
    if (auto v = number(*it)) descriptor.version_ = unsigned(*v);
  if (auto it = document.find("baseline"); it != document.end() && it->is_string()) descriptor.baseline_ = *it;
  if (auto it = document.find("contracts"); it != document.end() && it->is_object())
    for (const auto &[name, version] : it->items())
      if (auto v = number(version)) descriptor.contracts_[name] = unsigned(*v);
  if (auto it = document.find("types"); it != document.end() && it->is_object())
    for (const auto &[name, fields] : it->items()) {
      auto type = parseType(name, fields);
      if (!type) return type.takeError();
      descriptor.types_[name] = std::move(*type);
    }
  // A global is `value`, `[value, "type"]`, or indirect: `[[index], "type"]`
  // or `[index]` with pointer_data[index] the variable's address.
  auto resolve = [&](const std::string &name, const json &value, std::map<std::string, uint64_t> &into) -> llvm::Error {
    const json *v = &value;
    bool indirect = false;
    if (value.is_array()) {
      if (value.empty()) return fail("global " + name + " is an empty array");
      indirect = value.size() == 1 || (value[0].is_array());
      v = value[0].is_array() ? (value[0].empty() ? nullptr : &value[0][0]) : &value[0];
      if (!v) return fail("global " + name + " has an empty index");
      if (value.size() >= 2 && value[1] == "string" && v->is_string()) {
        descriptor.stringGlobals_[name] = *v;
        return llvm::Error::success();
      }
    }
    auto n = number(*v);
    if (!n) return fail("global " + name + " has no valid value");
    if (indirect) {
      if (*n >= pointerData.size()) return fail("global " + name + " indexes past the pointer data");
      into[name] = pointerData[*n];
    } else {
      into[name] = *n;
    }
    return llvm::Error::success();
  };
  for (auto [section, into] : {std::pair{"globals", &descriptor.globals_},
                                {"subDescriptors", &descriptor.subDescriptorPointers_}}) {
    auto it = document.find(section);
    if (it == document.end() || !it->is_object()) continue;
    for (const auto &[name, value] : it->items())
      if (llvm::Error error = resolve(name, value, *into)) return error;
  }
  return descriptor;
}

void ContractDescriptor::merge(const ContractDescriptor &sub) {
  contracts_.insert(sub.contracts_.begin(), sub.contracts_.end());
  types_.insert(sub.types_.begin(), sub.types_.end());
  globals_.insert(sub.globals_.begin(), sub.globals_.end());
  stringGlobals_.insert(sub.stringGlobals_.begin(), sub.stringGlobals_.end());
  ++origin_.subDescriptors;
}

std::optional<unsigned> ContractDescriptor::contractVersion(const std::string &name) const {
  auto it = contracts_.find(name);
  if (it == contracts_.end()) return std::nullopt;
  return it->second;
}

const DataType *ContractDescriptor::type(const std::string &name) const {
  auto it = types_.find(name);
  return it == types_.end() ? nullptr : &it->second;
}

std::optional<uint32_t> ContractDescriptor::fieldOffset(const std::string &typeName, const std::string &field) const {
  const DataType *t = type(typeName);
  if (!t) return std::nullopt;
  auto it = t->fields.find(field);
  if (it == t->fields.end()) return std::nullopt;
  return it->second;
}

std::optional<uint64_t> ContractDescriptor::global(const std::string &name) const {
  auto it = globals_.find(name);
  if (it == globals_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> ContractDescriptor::stringGlobal(const std::string &name) const {
  auto it = stringGlobals_.find(name);
  if (it == stringGlobals_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> ContractDescriptor::globalNamed(uint64_t value, const std::string &suffix) const {
  for (const auto &[name, v] : globals_)
    if (v == value && name.size() > suffix.size() && name.ends_with(suffix)) return name;
  return std::nullopt;
}

// Reads the descriptor structure:
//   {u64 magic; u32 flags; u32 descriptor_size; ptr descriptor;
//    u32 pointer_data_count; u32 pad; ptr pointer_data}
// Pointers come from the dump when it holds their bytes, else from the
// module file through its relocations.
class DescriptorLocator {
public:
  DescriptorLocator(const Target &target, const Module &module) : target_(target), module_(module) {}

  llvm::Expected<ContractDescriptor> read(uint64_t address, unsigned depth) {
    auto magic = target_.readValue<uint64_t>(address);
    if (!magic) return fail("the descriptor at " + hex(address) + " is not readable");
    if (*magic != Magic) return fail("the descriptor at " + hex(address) + " has a wrong magic (" + hex(*magic) + ")");
    auto flags = target_.readValue<uint32_t>(address + 8);
    auto size = target_.readValue<uint32_t>(address + 12);
    if (!flags || !size) return fail("the descriptor header at " + hex(address) + " is not readable");
    unsigned pointerSize = (*flags & 2) ? 4 : 8;
    uint64_t jsonPointerAt = address + 16;
    uint64_t countAt = jsonPointerAt + pointerSize;
    uint64_t dataPointerAt = countAt + 8;
    auto jsonAddress = pointer(jsonPointerAt, pointerSize);
    auto count = target_.readValue<uint32_t>(countAt);
    auto dataAddress = pointer(dataPointerAt, pointerSize);
    if (!jsonAddress || !count || !dataAddress) return fail("the descriptor's pointers at " + hex(address) + " are not readable");
    if (*size == 0 || *size > MaxJsonBytes) return fail("the data descriptor's size (" + llvm::Twine(*size) + ") is implausible");
    if (*count > MaxPointerData) return fail("the descriptor's pointer data count (" + llvm::Twine(*count) + ") is implausible");
    std::string text(*size, '\0');
    if (!target_.read(*jsonAddress, {reinterpret_cast<uint8_t *>(text.data()), text.size()}))
      return fail("the data descriptor JSON at " + hex(*jsonAddress) + " is not in the dump or the module file");
    std::vector<uint64_t> pointerData;
    for (uint32_t i = 0; i < *count; ++i) {
      auto value = pointer(*dataAddress + uint64_t(i) * pointerSize, pointerSize);
      if (!value) return fail("the descriptor's pointer data entry " + llvm::Twine(i) + " is not readable");
      pointerData.push_back(*value);
    }
    auto descriptor = ContractDescriptor::parse(text, pointerData, pointerSize);
    if (!descriptor) return descriptor.takeError();
    if (depth < MaxSubDescriptorDepth)
      for (const auto &[name, pointerAddress] : descriptor->subDescriptorPointers_) {
        auto subAddress = pointer(pointerAddress, pointerSize);
        if (!subAddress || *subAddress == 0) continue; // the sub-component is not loaded
        auto sub = read(*subAddress, depth + 1);
        if (!sub) return fail("sub-descriptor " + name + ": " + llvm::toString(sub.takeError()));
        descriptor->merge(*sub);
      }
    descriptor->origin_.source = relocated_ ? "module file (relocated)" : "dump";
    return descriptor;
  }

private:
  std::optional<uint64_t> pointer(uint64_t address, unsigned size) {
    std::vector<uint8_t> bytes(size);
    if (target_.readFromDump(address, bytes)) return target_.readPointer(address, size);
    if (!relocations_) relocations_.emplace(module_);
    auto value = relocations_->pointerAt(address, size);
    if (value) relocated_ = true;
    return value;
  }

  const Target &target_;
  const Module &module_;
  std::optional<ModuleRelocations> relocations_;
  bool relocated_ = false;
};

bool isRuntimeModule(const Module &module) {
  llvm::StringRef name = module.name;
  return name.equals_insensitive("libcoreclr.so") || name.equals_insensitive("coreclr.dll") ||
         name.equals_insensitive("libcoreclr.dylib");
}

namespace {

// A runtime module without a file: its export from the loaded image in the
// dump (a full core holds the ELF header, dynamic section and symbols).
llvm::Expected<uint64_t> exportFromMemory(const Target &target, const Module &module) {
  auto elf = LoadedElf::read(target, module.base);
  if (!elf) return elf.takeError();
  return elf->symbolAddress(ExportName);
}

} // namespace

llvm::Expected<ContractDescriptor> ContractDescriptor::locate(const Target &target) {
  std::vector<std::string> unreadable;
  // The runtime's own module first: every other module's symbol table is
  // read only when it is not there (a single-file app exports the
  // descriptor from its executable).
  std::vector<const Module *> candidates;
  for (const Module &module : target.modules) candidates.push_back(&module);
  std::stable_partition(candidates.begin(), candidates.end(), [](const Module *m) { return isRuntimeModule(*m); });
  for (const Module *candidate : candidates) {
    const Module &module = *candidate;
    std::optional<uint64_t> address;
    if (module.image) {
      if (auto fileAddress = module.image->symbolAddress(ExportName)) address = *fileAddress + module.loadBias();
    } else if (isRuntimeModule(module)) {
      auto inMemory = exportFromMemory(target, module);
      if (inMemory) address = *inMemory;
      else unreadable.push_back(module.name + " has no file, and in the dump " + llvm::toString(inMemory.takeError()));
    }
    if (!address) continue;
    auto descriptor = DescriptorLocator(target, module).read(*address, 0);
    if (!descriptor) return fail(module.name + ": " + llvm::toString(descriptor.takeError()));
    descriptor->origin_.module = module.name;
    descriptor->origin_.address = *address;
    // Read where the runtime's module has no file: its export found in its
    // loaded image, rebuilt from the dump or read there in place.
    if (!module.image || module.image->inMemory()) descriptor->origin_.source = "dump (the module's loaded image: no file)";
    return descriptor;
  }
  if (!unreadable.empty())
    return fail("the runtime module " + unreadable.front() +
                ", so its DotNetRuntimeContractDescriptor export is not found (--module-path; runtimes before .NET "
                "9 have none)");
  return fail("no module exports DotNetRuntimeContractDescriptor: no .NET runtime (or one older than .NET 9)");
}

} // namespace stackwalk::frames
