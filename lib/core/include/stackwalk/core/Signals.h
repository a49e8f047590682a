// Linux signals by name, for every dump format that records them (ELF cores;
// Breakpad and Crashpad minidumps of Linux processes): the signal, and the
// si_code that says how it was raised, as <signal.h> spells them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace stackwalk {

// "SIGSEGV"; "signal 99" for a number without a name.
std::string signalName(int signal);

// "SEGV_MAPERR", "BUS_ADRALN", "SI_TKILL", ...: the si_code's name for the
// signal, or nullopt when <signal.h> has none.
std::optional<std::string_view> signalCodeName(int signal, int code);

} // namespace stackwalk
