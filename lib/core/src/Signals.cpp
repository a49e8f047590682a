#include "stackwalk/core/Signals.h"

#include <array>
#include <span>

namespace stackwalk {
namespace {

constexpr int Sigill = 4, Sigtrap = 5, Sigbus = 7, Sigfpe = 8, Sigsegv = 11;

// The names of codes 1, 2, ... of a signal that the kernel raises itself.
std::span<const std::string_view> faultCodes(int signal) {
  static constexpr std::string_view Ill[] = {"ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP",
                                             "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK"};
  static constexpr std::string_view Trap[] = {"TRAP_BRKPT", "TRAP_TRACE", "TRAP_BRANCH", "TRAP_HWBKPT"};
  static constexpr std::string_view Bus[] = {"BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR",
                                             "BUS_MCEERR_AO"};
  static constexpr std::string_view Fpe[] = {"FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF",
                                             "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB"};
  static constexpr std::string_view Segv[] = {"SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR"};
  switch (signal) {
  case Sigill: return Ill;
  case Sigtrap: return Trap;
  case Sigbus: return Bus;
  case Sigfpe: return Fpe;
  case Sigsegv: return Segv;
  default: return {};
  }
}

} // namespace

std::string signalName(int signal) {
  static constexpr std::array<const char *, 32> Names = {
      nullptr,   "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",    "SIGTRAP", "SIGABRT", "SIGBUS",
      "SIGFPE",  "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",   "SIGPIPE", "SIGALRM", "SIGTERM",
      "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP",   "SIGTTIN", "SIGTTOU", "SIGURG",
      "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH",  "SIGIO",   "SIGPWR",  "SIGSYS"};
  if (signal > 0 && size_t(signal) < Names.size()) return Names[size_t(signal)];
  return "signal " + std::to_string(signal);
}

std::optional<std::string_view> signalCodeName(int signal, int code) {
  // Codes any signal can carry: who sent it.
  switch (code) {
  case 0: return "SI_USER";
  case 0x80: return "SI_KERNEL";
  case -1: return "SI_QUEUE";
  case -2: return "SI_TIMER";
  case -3: return "SI_MESGQ";
  case -4: return "SI_ASYNCIO";
  case -5: return "SI_SIGIO";
  case -6: return "SI_TKILL";
  }
  std::span<const std::string_view> codes = faultCodes(signal);
  if (code > 0 && size_t(code) <= codes.size()) return codes[size_t(code) - 1];
  return std::nullopt;
}

bool isFaultSignal(int signal) { return signal == 4 || signal == 7 || signal == 8 || signal == 11; }

SignalSource signalSource(int signal, int code, uint64_t addressField) {
  SignalSource source;
  bool fault = isFaultSignal(signal);
  if (code <= 0) {
    // No process has pid 0: a writer that made the siginfo up (.NET's
    // createdump) leaves it zero, and then the sender is unknown.
    if (uint32_t(addressField) != 0) {
      source.senderPid = uint32_t(addressField);
      source.senderUid = uint32_t(addressField >> 32);
    }
  } else if (fault) {
    source.faultAddress = addressField;
  }
  return source;
}

} // namespace stackwalk
