#include "ZydisLibrary.h"

#include <dlfcn.h>

namespace stackwalk {
namespace {

constexpr const char *ZydisSoname = "libZydis.so.4.0";

// The three entry points used, found with dlsym. The handle is never closed.
struct ZydisEntryPoints {
  decltype(&ZydisDecoderInit) init = nullptr;
  decltype(&ZydisDecoderDecodeFull) decodeFull = nullptr;
  decltype(&ZydisRegisterGetLargestEnclosing) largestEnclosing = nullptr;

  static const ZydisEntryPoints &get() {
    static const ZydisEntryPoints loaded = load();
    return loaded;
  }
  bool usable() const { return init && decodeFull && largestEnclosing; }

private:
  static ZydisEntryPoints load() {
    ZydisEntryPoints loaded;
    void *library = dlopen(ZydisSoname, RTLD_NOW | RTLD_LOCAL);
    if (!library) return loaded;
    loaded.init = reinterpret_cast<decltype(init)>(dlsym(library, "ZydisDecoderInit"));
    loaded.decodeFull = reinterpret_cast<decltype(decodeFull)>(dlsym(library, "ZydisDecoderDecodeFull"));
    loaded.largestEnclosing =
        reinterpret_cast<decltype(largestEnclosing)>(dlsym(library, "ZydisRegisterGetLargestEnclosing"));
    return loaded;
  }
};

} // namespace

const ZydisLibrary *ZydisLibrary::forMode(bool is64) {
  auto make = [](ZydisMachineMode mode, ZydisStackWidth width) -> std::optional<ZydisLibrary> {
    const ZydisEntryPoints &zydis = ZydisEntryPoints::get();
    ZydisLibrary library;
    library.mode_ = mode;
    if (!zydis.usable() || !ZYAN_SUCCESS(zydis.init(&library.decoder_, mode, width))) return std::nullopt;
    return library;
  };
  static const std::optional<ZydisLibrary> long64 = make(ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
  static const std::optional<ZydisLibrary> legacy32 = make(ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
  const std::optional<ZydisLibrary> &library = is64 ? long64 : legacy32;
  return library ? &*library : nullptr;
}

std::optional<X86Instruction> ZydisLibrary::decode(std::span<const uint8_t> code) const {
  X86Instruction instruction;
  if (!ZYAN_SUCCESS(ZydisEntryPoints::get().decodeFull(&decoder_, code.data(), code.size(), &instruction.info,
                                                      instruction.operands)))
    return std::nullopt;
  return instruction;
}

ZydisRegister ZydisLibrary::enclosing(ZydisRegister reg) const {
  return ZydisEntryPoints::get().largestEnclosing(mode_, reg);
}

} // namespace stackwalk
