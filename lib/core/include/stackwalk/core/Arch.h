// Architectures and operating systems a dump can come from.
#pragma once

#include <cstdint>
#include <string_view>

namespace stackwalk {

enum class Arch { X86_64, Arm64, X86, Arm, Unknown }; // Arm: 32-bit ARM (and Thumb)
enum class OS { Linux, Windows, MacOS, IOS, Unknown };

std::string_view archName(Arch arch);
std::string_view osName(OS os);
unsigned pointerSize(Arch arch);

} // namespace stackwalk
