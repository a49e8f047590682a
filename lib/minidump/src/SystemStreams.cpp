// SystemInfo, MiscInfo, Exception and Crashpad's info stream.
#include "BreakpadContext.h"
#include "Streams.h"

#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/Signals.h"
#include "stackwalk/core/WindowsContext.h"

#include "llvm/ADT/StringExtras.h"

namespace stackwalk::minidump {

using llvm::minidump::ProcessorArchitecture;
using llvm::minidump::OSPlatform;

constexpr uint32_t MaxVersionPart = 255;

SystemDescription readSystemInfo(const Reader &reader) {
  SystemDescription out;
  auto stream = reader.stream(StreamType::SystemInfo);
  auto info = stream ? reader.read<llvm::minidump::SystemInfo>(*stream, 0) : std::nullopt;
  if (!info) {
    reader.warn("no SystemInfo stream: the architecture is unknown");
    return out;
  }
  uint16_t processor = uint16_t(ProcessorArchitecture(info->ProcessorArch));
  switch (processor) {
  case uint16_t(ProcessorArchitecture::AMD64): out.arch = Arch::X86_64; break;
  case uint16_t(ProcessorArchitecture::X86): out.arch = Arch::X86; break;
  case uint16_t(ProcessorArchitecture::ARM64): case 0x8003: // Breakpad's old ARM64 value
    out.arch = Arch::Arm64;
    break;
  case uint16_t(ProcessorArchitecture::ARM): out.arch = Arch::Arm; break;
  default:
    reader.warn("unsupported processor architecture " + std::to_string(processor));
  }
  switch (uint32_t(OSPlatform(info->PlatformId))) {
  case uint32_t(OSPlatform::Win32S): case uint32_t(OSPlatform::Win32Windows): case uint32_t(OSPlatform::Win32NT):
    out.os = OS::Windows;
    break;
  case uint32_t(OSPlatform::Linux): case uint32_t(OSPlatform::Android): out.os = OS::Linux; break;
  case uint32_t(OSPlatform::MacOSX): out.os = OS::MacOS; break;
  case uint32_t(OSPlatform::IOS): out.os = OS::IOS; break;
  default: break;
  }
  // No OS has had a major or minor version above 255: lldb leaves these
  // fields uninitialized (3495824896.32767.0), a version nobody ran.
  if (info->MajorVersion <= MaxVersionPart && info->MinorVersion <= MaxVersionPart)
    out.osVersion = std::to_string(info->MajorVersion) + "." + std::to_string(info->MinorVersion) + "." +
                    std::to_string(info->BuildNumber);
  // Breakpad stores the kernel's uname there; Windows its service pack.
  if (auto extra = reader.string(info->CSDVersionRVA); extra && !extra->empty())
    out.osVersion += (out.osVersion.empty() ? "" : " ") + *extra;
  return out;
}

std::optional<uint64_t> readProcessId(const Reader &reader) {
  // MINIDUMP_MISC_INFO: SizeOfInfo, Flags1, ProcessId, ...; Flags1 bit 0: the id is valid.
  auto stream = reader.stream(StreamType::MiscInfo);
  if (!stream) return std::nullopt;
  auto flags = reader.read<uint32_t>(*stream, 4);
  auto pid = reader.read<uint32_t>(*stream, 8);
  if (!flags || !pid || !(*flags & 1)) return std::nullopt;
  return *pid;
}

namespace {

// <mach/exception_types.h>
std::string machExceptionName(uint32_t type) {
  static const char *const Names[] = {nullptr,         "EXC_BAD_ACCESS", "EXC_BAD_INSTRUCTION", "EXC_ARITHMETIC",
                                      "EXC_EMULATION", "EXC_SOFTWARE",   "EXC_BREAKPOINT",      "EXC_SYSCALL",
                                      "EXC_MACH_SYSCALL", "EXC_RPC_ALERT", "EXC_CRASH",         "EXC_RESOURCE",
                                      "EXC_GUARD",     "EXC_CORPSE_NOTIFY"};
  if (type < std::size(Names) && Names[type]) return Names[type];
  return "Mach exception " + std::to_string(type);
}

// An EXC_BAD_ACCESS's code: a kern_return_t (<mach/kern_return.h>).
std::string badAccessCodeName(uint32_t code) {
  switch (code) {
  case 1: return "KERN_INVALID_ADDRESS";
  case 2: return "KERN_PROTECTION_FAILURE";
  case 13: return "EXC_I386_GPFLT"; // x86: a general protection fault (a non-canonical address)
  default: return "";
  }
}

} // namespace

std::string exceptionName(uint32_t code, OS os) {
  static const std::pair<uint32_t, const char *> Names[] = {
      {0xC0000005, "EXCEPTION_ACCESS_VIOLATION"},      {0x80000003, "EXCEPTION_BREAKPOINT"},
      {0x80000004, "EXCEPTION_SINGLE_STEP"},           {0x80000002, "EXCEPTION_DATATYPE_MISALIGNMENT"},
      {0xC0000006, "EXCEPTION_IN_PAGE_ERROR"},         {0xC0000008, "EXCEPTION_INVALID_HANDLE"},
      {0xC000001D, "EXCEPTION_ILLEGAL_INSTRUCTION"},   {0xC0000025, "EXCEPTION_NONCONTINUABLE_EXCEPTION"},
      {0xC0000026, "EXCEPTION_INVALID_DISPOSITION"},   {0xC000008C, "EXCEPTION_ARRAY_BOUNDS_EXCEEDED"},
      {0xC000008D, "EXCEPTION_FLT_DENORMAL_OPERAND"},  {0xC000008E, "EXCEPTION_FLT_DIVIDE_BY_ZERO"},
      {0xC000008F, "EXCEPTION_FLT_INEXACT_RESULT"},    {0xC0000090, "EXCEPTION_FLT_INVALID_OPERATION"},
      {0xC0000091, "EXCEPTION_FLT_OVERFLOW"},          {0xC0000092, "EXCEPTION_FLT_STACK_CHECK"},
      {0xC0000093, "EXCEPTION_FLT_UNDERFLOW"},         {0xC0000094, "EXCEPTION_INT_DIVIDE_BY_ZERO"},
      {0xC0000095, "EXCEPTION_INT_OVERFLOW"},          {0xC0000096, "EXCEPTION_PRIV_INSTRUCTION"},
      {0xC00000FD, "EXCEPTION_STACK_OVERFLOW"},        {0xC0000374, "STATUS_HEAP_CORRUPTION"},
      {0xC0000409, "STATUS_STACK_BUFFER_OVERRUN"},     {0xE06D7363, "Microsoft C++ exception"},
      {0x20474343, "GCC C++ exception"},               {0x40010005, "DBG_CONTROL_C"},
      {0xC000000D, "STATUS_INVALID_PARAMETER"},        {0xC0000017, "STATUS_NO_MEMORY"},
      {0xC0000135, "STATUS_DLL_NOT_FOUND"},            {0xC0000139, "STATUS_ENTRYPOINT_NOT_FOUND"},
      {0xC000013A, "STATUS_CONTROL_C_EXIT"},           {0xC0000142, "STATUS_DLL_INIT_FAILED"},
      {0xC0000417, "STATUS_INVALID_CRUNTIME_PARAMETER"}, {0xC0000420, "STATUS_ASSERTION_FAILURE"},
      {0xC0000602, "STATUS_FAIL_FAST_EXCEPTION"},      {0x80000001, "STATUS_GUARD_PAGE_VIOLATION"},
      // Crashpad's CrashpadClient::DumpWithoutCrash records this code.
      {0x43506E78, "Crashpad simulated crash"},
  };
  // Breakpad records a Linux signal's number as the exception code, and a
  // Mach exception's type on macOS and iOS.
  if (os == OS::Linux) return signalName(int(code));
  if ((os == OS::MacOS || os == OS::IOS) && code != 0x43506E78) return machExceptionName(code);
  for (auto [value, name] : Names)
    if (value == code) return name;
  return "exception 0x" + llvm::utohexstr(code, true);
}

namespace {

// A Linux minidump's exception stream that records no crash: a dump
// requested by the process (Breakpad's MD_EXCEPTION_CODE_LIN_DUMP_REQUESTED,
// 0xFFFFFFFF), signal 0, or the SIGSTOP of the debugger that attached to
// write it (lldb's process save-core). As for a gcore, there is no crash.
bool recordsNoCrash(uint32_t code) {
  constexpr uint32_t DumpRequested = 0xFFFFFFFF, SigStop = 19;
  return code == DumpRequested || code == 0 || code == SigStop;
}

// __fastfail's code, STATUS_STACK_BUFFER_OVERRUN's first parameter (winnt.h).
std::string fastFailName(uint64_t code) {
  static const char *const Names[] = {"FAST_FAIL_LEGACY_GS_VIOLATION", "FAST_FAIL_VTGUARD_CHECK_FAILURE",
                                      "FAST_FAIL_STACK_COOKIE_CHECK_FAILURE", "FAST_FAIL_CORRUPT_LIST_ENTRY",
                                      "FAST_FAIL_INCORRECT_STACK", "FAST_FAIL_INVALID_ARG",
                                      "FAST_FAIL_GS_COOKIE_INIT", "FAST_FAIL_FATAL_APP_EXIT",
                                      "FAST_FAIL_RANGE_CHECK_FAILURE", "FAST_FAIL_UNSAFE_REGISTRY_ACCESS"};
  if (code < std::size(Names)) return Names[code];
  return "FAST_FAIL code " + std::to_string(code);
}

// EXCEPTION_ACCESS_VIOLATION's first parameter (EXCEPTION_RECORD, Windows SDK).
std::string accessKind(uint64_t parameter) {
  switch (parameter) {
  case 0: return "read";
  case 1: return "write";
  case 8: return "execute";
  default: return "";
  }
}

} // namespace

std::optional<CrashInfo> readException(const Reader &reader, OS os, Arch arch,
                                       std::optional<RegisterFile> &exceptionContext,
                                       std::optional<FxsaveArea> &exceptionFpState, std::string &unreadable) {
  auto stream = reader.stream(StreamType::Exception);
  if (!stream) return std::nullopt;
  auto exception = reader.read<llvm::minidump::ExceptionStream>(*stream, 0);
  if (!exception) {
    // One cut short by the end of the file, the reader has warned of.
    std::optional<std::string> cut = reader.streamCut(StreamType::Exception);
    unreadable = cut.value_or("the exception stream is too short");
    if (!cut) reader.warn(unreadable);
    return std::nullopt;
  }
  const llvm::minidump::Exception &record = exception->ExceptionRecord;
  if (os == OS::Linux && recordsNoCrash(record.ExceptionCode)) return std::nullopt;
  CrashInfo crash;
  crash.threadId = exception->ThreadId;
  crash.name = exceptionName(record.ExceptionCode, os);
  crash.address = record.ExceptionAddress;
  if (os == OS::Linux) {
    crash.signal = int(record.ExceptionCode);
    crash.code = int(record.ExceptionFlags);
    crash.codeName = signalCodeName(*crash.signal, *crash.code).value_or("");
    if (*crash.code == 0 && isFaultSignal(*crash.signal)) {
      // Breakpad's writers before 2014 recorded no si_code (0) for faults:
      // the address is the fault's, and how it was raised is unknown.
      crash.codeName.clear();
    } else {
      // Breakpad copies si_addr, which for a sent signal holds the sender.
      SignalSource source = signalSource(*crash.signal, *crash.code, record.ExceptionAddress);
      crash.address = source.faultAddress;
      crash.senderPid = source.senderPid;
      crash.senderUid = source.senderUid;
    }
  } else {
    crash.exceptionCode = record.ExceptionCode;
    // An access violation's parameters: how the address was touched, and the address.
    if (record.ExceptionCode == 0xC0000005 && record.NumberParameters >= 2) {
      crash.address = record.ExceptionInformation[1];
      crash.codeName = accessKind(record.ExceptionInformation[0]);
    }
    if (record.ExceptionCode == 0xC0000409 && record.NumberParameters >= 1)
      crash.codeName = fastFailName(record.ExceptionInformation[0]);
    if ((os == OS::MacOS || os == OS::IOS) && record.ExceptionCode == 1) {
      crash.code = int(record.ExceptionFlags);
      crash.codeName = badAccessCodeName(record.ExceptionFlags);
    }
  }
  // A 32-bit process's addresses: writers leave the upper half of the 64-bit
  // fields sign-extended (0xffffffff00000045 for 0x45).
  if (pointerSize(arch) == 4 && crash.address) crash.address = *crash.address & 0xffffffffu;
  std::span<const uint8_t> context = reader.slice(exception->ThreadContext, "the exception's context");
  if (!context.empty()) {
    if (auto regs = minidump::readThreadContext(arch, context)) exceptionContext = *regs;
    else reader.warn("the exception's context: " + llvm::toString(regs.takeError()));
    exceptionFpState = fpStateFromWindowsContext(arch, context);
  }
  return crash;
}

} // namespace stackwalk::minidump
