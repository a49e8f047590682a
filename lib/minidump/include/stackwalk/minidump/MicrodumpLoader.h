// Breakpad microdumps -> Target: the text Android's Breakpad writes into
// logcat when a process crashes ("-----BEGIN BREAKPAD MICRODUMP-----"), with
// the crashing thread's context and stack, the system and the modules by
// their Breakpad ids. A minidump in all but form, so it lives beside the
// minidump loader and gives the same Target; frames are named and unwound
// from Breakpad symbol files (--symbols-path), as Breakpad does.
#pragma once

#include "stackwalk/core/Target.h"

#include "llvm/Support/Error.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <span>

namespace stackwalk {

// True when a microdump starts within the first bytes of `bytes` (logcat
// lines may come before it).
bool looksLikeMicrodump(std::span<const uint8_t> bytes);

// The first microdump of the text. Fails for architectures stackwalk cannot
// walk (32-bit arm, mips), saying which.
llvm::Expected<std::unique_ptr<Target>> loadMicrodump(llvm::StringRef text);

} // namespace stackwalk
