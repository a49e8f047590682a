// Readers of the individual minidump streams, each filling its part of the
// Target. All of them tolerate damage: what cannot be read is skipped with a
// warning through the Reader.
#pragma once

#include "stackwalk/core/DumpedMemory.h"
#include "MinidumpReader.h"

#include "stackwalk/core/Target.h"

#include <map>

namespace stackwalk::minidump {

struct SystemDescription {
  Arch arch = Arch::Unknown;
  OS os = OS::Unknown;
  std::string osVersion;
};

SystemDescription readSystemInfo(const Reader &reader);

// Threads with their contexts and names (ThreadList or ThreadExList, ThreadNameList).
std::vector<ThreadInfo> readThreads(const Reader &reader, Arch arch);

// Modules with identities (CodeView RSDS / NB10 / BpEL, version info).
std::vector<Module> readModules(const Reader &reader);
std::vector<Module> readUnloadedModules(const Reader &reader);

// MemoryList, Memory64List and the threads' stacks, clipped to the file.
std::vector<DumpedRange> readMemoryRanges(const Reader &reader);
// MemoryInfoList: regions with their protection.
std::vector<MemoryRegion> readMemoryInfo(const Reader &reader);

// The exception stream as a crash, and its thread's context if it has one
// (with, x86-64, its x87 and SSE registers). A stream whose record cannot be
// read sets `unreadable` to why.
std::optional<CrashInfo> readException(const Reader &reader, OS os, Arch arch,
                                       std::optional<RegisterFile> &exceptionContext,
                                       std::optional<FxsaveArea> &exceptionFpState, std::string &unreadable);

// MiscInfo: the process id.
std::optional<uint64_t> readProcessId(const Reader &reader);

// Breakpad's Linux streams: /proc/PID/maps, status, cmdline, auxv, lsb-release.
struct LinuxStreams {
  std::vector<MemoryRegion> maps;
  // The mappings of files, in the stream's (address) order: [start, end) and path.
  struct FileMapping {
    uint64_t start, end;
    std::string path;
  };
  std::vector<FileMapping> fileMappings;
  std::string processName, commandLine, distribution;
  std::optional<uint64_t> pid;
  std::vector<std::pair<uint64_t, uint64_t>> auxv;
  std::vector<std::pair<std::string, uint64_t>> linkMap; // DSO_DEBUG: name, load bias
};
// wordSize: the process's pointer size, which its auxv's words have.
LinuxStreams readLinuxStreams(const Reader &reader, unsigned wordSize);

// Crashpad's info stream: report and client ids and simple annotations.
// Crashpad's info stream (0x43500001): the report and client ids and simple
// annotations of the process, and each module's annotations (AnnotationStreams.cpp).
struct CrashpadInfo {
  std::vector<std::pair<std::string, std::string>> annotations;
  struct ModuleAnnotations {
    uint32_t moduleIndex = 0; // in the ModuleList stream
    std::vector<std::string> list;
    std::vector<std::pair<std::string, std::string>> named; // simple annotations and string annotation objects
  };
  std::vector<ModuleAnnotations> modules;
};
CrashpadInfo readCrashpadInfo(const Reader &reader);

// Breakpad's assertion stream (0x47670002): what an invalid-parameter or
// pure-virtual-call handler recorded.
std::optional<AssertionInfo> readAssertion(const Reader &reader);

std::string exceptionName(uint32_t code, OS os);

} // namespace stackwalk::minidump
