// Linux signals by name, for every dump format that records them (ELF cores;
// Breakpad and Crashpad minidumps of Linux processes): the signal, and the
// si_code that says how it was raised, as <signal.h> spells them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stackwalk {

// "SIGSEGV"; "signal 99" for a number without a name.
std::string signalName(int signal);

// "SEGV_MAPERR", "BUS_ADRALN", "SI_TKILL", ...: the si_code's name for the
// signal, or nullopt when <signal.h> has none.
std::optional<std::string_view> signalCodeName(int signal, int code);

// SIGSEGV, SIGBUS, SIGILL and SIGFPE: the signals a faulting instruction raises.
bool isFaultSignal(int signal);

// What the address field of a siginfo (a core's NT_SIGINFO; a Breakpad or
// Crashpad exception record, which copies it) holds: for a fault the kernel
// raised (SIGSEGV, SIGBUS, SIGILL, SIGFPE with si_code > 0), the faulting
// address; for a signal a process sent (si_code <= 0: kill, tgkill,
// sigqueue), the sender's pid and uid (si_pid, si_uid).
struct SignalSource {
  std::optional<uint64_t> faultAddress;
  std::optional<uint32_t> senderPid, senderUid;
};
SignalSource signalSource(int signal, int code, uint64_t addressField);

} // namespace stackwalk
