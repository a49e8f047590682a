// Typed reads of runtime structures through the contract descriptor: a field
// is named by its type and field name, its offset comes from the descriptor.
// Every failure says which field could not be read and why, so that a walk
// can report the problem and go on.
#pragma once

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Target.h"
#include "stackwalk/frames/ContractDescriptor.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace stackwalk::frames {

class RuntimeData {
public:
  RuntimeData(const Target &target, const ContractDescriptor &descriptor)
      : target_(target), descriptor_(descriptor) {}

  const Target &target() const { return target_; }
  const ContractDescriptor &descriptor() const { return descriptor_; }
  unsigned pointerSize() const { return descriptor_.pointerSize(); }

  llvm::Expected<uint32_t> offset(const char *type, const char *field) const;
  llvm::Expected<uint32_t> size(const char *type) const;
  bool hasField(const char *type, const char *field) const {
    return descriptor_.fieldOffset(type, field).has_value();
  }

  llvm::Expected<uint64_t> pointer(uint64_t object, const char *type, const char *field) const;
  template <typename T> llvm::Expected<T> value(uint64_t object, const char *type, const char *field) const {
    auto at = offset(type, field);
    if (!at) return at.takeError();
    auto v = target_.readValue<T>(object + *at);
    if (!v) return unreadable(object + *at, type, field);
    return *v;
  }
  llvm::Expected<uint64_t> readPointer(uint64_t address, const char *what) const;
  // UTF-16 text (the runtime's WCHAR) as UTF-8: `units` code units, or with
  // nullopt up to the first NUL (at most MaxUtf16Units); nullopt when
  // unreadable or not UTF-16.
  static constexpr size_t MaxUtf16Units = 4096;
  std::optional<std::string> readUtf16(uint64_t address, std::optional<size_t> units) const;

  // A literal global's value, or for an indirect global the address of its
  // variable.
  llvm::Expected<uint64_t> global(const char *name) const;
  // The pointer stored in an indirect global's variable.
  llvm::Expected<uint64_t> globalPointer(const char *name) const;

private:
  llvm::Error unreadable(uint64_t address, const char *type, const char *field) const;

  const Target &target_;
  const ContractDescriptor &descriptor_;
};

} // namespace stackwalk::frames
