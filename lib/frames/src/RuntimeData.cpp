#include "stackwalk/frames/RuntimeData.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include "llvm/Support/ConvertUTF.h"

namespace stackwalk::frames {

llvm::Expected<uint32_t> RuntimeData::offset(const char *type, const char *field) const {
  if (auto at = descriptor_.fieldOffset(type, field)) return *at;
  return fail(llvm::Twine("the contract descriptor has no ") + type + "." + field);
}

llvm::Expected<uint32_t> RuntimeData::size(const char *type) const {
  const DataType *t = descriptor_.type(type);
  if (t && t->size) return *t->size;
  return fail(llvm::Twine("the contract descriptor has no size for ") + type);
}

llvm::Error RuntimeData::unreadable(uint64_t address, const char *type, const char *field) const {
  return fail(llvm::Twine(type) + "." + field + " at " + hex(address) + " is not in the dump");
}

llvm::Expected<uint64_t> RuntimeData::pointer(uint64_t object, const char *type, const char *field) const {
  auto at = offset(type, field);
  if (!at) return at.takeError();
  auto v = target_.readPointer(object + *at, pointerSize());
  if (!v) return unreadable(object + *at, type, field);
  return *v;
}

llvm::Expected<uint64_t> RuntimeData::readPointer(uint64_t address, const char *what) const {
  auto v = target_.readPointer(address, pointerSize());
  if (!v) return fail(llvm::Twine(what) + " at " + hex(address) + " is not in the dump");
  return *v;
}

std::optional<std::string> RuntimeData::readUtf16(uint64_t address, std::optional<size_t> units) const {
  std::u16string text;
  size_t limit = units.value_or(MaxUtf16Units);
  if (limit > MaxUtf16Units) return std::nullopt;
  for (size_t i = 0; i < limit; ++i) {
    auto c = target_.readValue<uint16_t>(address + 2 * i);
    if (!c) return std::nullopt;
    if (*c == 0 && !units) break;
    text.push_back(char16_t(*c));
  }
  std::string utf8;
  if (!llvm::convertUTF16ToUTF8String(llvm::ArrayRef<char>(reinterpret_cast<const char *>(text.data()), text.size() * 2), utf8))
    return std::nullopt;
  return utf8;
}

llvm::Expected<uint64_t> RuntimeData::global(const char *name) const {
  if (auto v = descriptor_.global(name)) return *v;
  return fail(llvm::Twine("the contract descriptor has no global ") + name);
}

llvm::Expected<uint64_t> RuntimeData::globalPointer(const char *name) const {
  auto address = global(name);
  if (!address) return address.takeError();
  return readPointer(*address, name);
}

} // namespace stackwalk::frames
