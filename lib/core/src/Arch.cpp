#include "stackwalk/core/Arch.h"

namespace stackwalk {

std::string_view archName(Arch arch) {
  switch (arch) {
  case Arch::X86_64: return "x86_64";
  case Arch::Arm64: return "arm64";
  case Arch::X86: return "x86";
  case Arch::Arm: return "arm";
  case Arch::Unknown: break;
  }
  return "unknown";
}

std::string_view osName(OS os) {
  switch (os) {
  case OS::Linux: return "linux";
  case OS::Windows: return "windows";
  case OS::MacOS: return "macos";
  case OS::IOS: return "ios";
  case OS::Unknown: break;
  }
  return "unknown";
}

unsigned pointerSize(Arch arch) { return arch == Arch::X86 || arch == Arch::Arm ? 4 : 8; }

} // namespace stackwalk
