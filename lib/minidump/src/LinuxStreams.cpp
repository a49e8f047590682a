// Breakpad's Linux streams: /proc/PID/maps, status and cmdline, the auxiliary
// vector, /etc/lsb-release and the dynamic linker's link map (DSO_DEBUG).
#include "Streams.h"

#include "stackwalk/core/Auxv.h"

#include "llvm/ADT/StringRef.h"

namespace stackwalk::minidump {
namespace {

constexpr StreamType LinuxProcStatus = StreamType(0x47670004), LinuxLsbRelease = StreamType(0x47670005),
                     LinuxCmdLine = StreamType(0x47670006), LinuxAuxv = StreamType(0x47670008),
                     LinuxMaps = StreamType(0x47670009), LinuxDsoDebug = StreamType(0x4767000A);
constexpr size_t MaxLinkMap = 4096;

llvm::StringRef text(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char *>(bytes.data()), bytes.size()};
}

// "start-end perms offset dev inode   path"
void readMaps(llvm::StringRef maps, LinuxStreams &out) {
  while (!maps.empty()) {
    auto [line, rest] = maps.split('\n');
    maps = rest;
    llvm::SmallVector<llvm::StringRef, 6> fields;
    line.split(fields, ' ', 5, false);
    if (fields.size() < 5) continue;
    auto [low, high] = fields[0].split('-');
    uint64_t start, end;
    if (low.getAsInteger(16, start) || high.getAsInteger(16, end) || end <= start || fields[1].size() < 3) continue;
    bool exec = fields[1][2] == 'x';
    out.maps.push_back({start, end, fields[1][0] == 'r', fields[1][1] == 'w', exec});
    if (fields.size() == 6 && fields[5].trim().starts_with("/"))
      out.fileMappings.push_back({start, end, fields[5].trim().str()});
  }
}

void readStatus(llvm::StringRef status, LinuxStreams &out) {
  while (!status.empty()) {
    auto [line, rest] = status.split('\n');
    status = rest;
    auto [key, value] = line.split(':');
    value = value.trim();
    uint64_t pid;
    if (key == "Name") out.processName = value.str();
    else if (key == "Pid" && !value.getAsInteger(10, pid)) out.pid = pid;
  }
}

void readLinkMap(const Reader &reader, std::span<const uint8_t> stream, LinuxStreams &out) {
  // MDRawDebug: u32 version, u32 map (RVA of MDRawLinkMap[]), u32 dso_count, ...
  // MDRawLinkMap (packed): u64 addr, u32 name (RVA of a MINIDUMP_STRING), u64 ld.
  auto mapRva = reader.read<uint32_t>(stream, 4);
  auto count = reader.read<uint32_t>(stream, 8);
  if (!mapRva || !count) return;
  for (uint32_t i = 0; i < std::min<uint32_t>(*count, MaxLinkMap); ++i) {
    auto bias = reader.readAt<uint64_t>(*mapRva + i * 20ull);
    auto nameRva = reader.readAt<uint32_t>(*mapRva + i * 20ull + 8);
    if (!bias || !nameRva) break;
    if (auto name = reader.string(*nameRva)) out.linkMap.emplace_back(*name, *bias);
  }
}

} // namespace

LinuxStreams readLinuxStreams(const Reader &reader, unsigned wordSize) {
  LinuxStreams out;
  if (auto maps = reader.stream(LinuxMaps)) readMaps(text(*maps), out);
  if (auto status = reader.stream(LinuxProcStatus)) readStatus(text(*status), out);
  if (auto cmdline = reader.stream(LinuxCmdLine)) {
    std::string line(text(*cmdline));
    while (!line.empty() && line.back() == '\0') line.pop_back();
    for (char &c : line)
      if (c == '\0') c = ' ';
    out.commandLine = line;
  }
  if (auto release = reader.stream(LinuxLsbRelease)) {
    llvm::StringRef rest = text(*release);
    while (!rest.empty()) {
      auto [line, next] = rest.split('\n');
      rest = next;
      if (line.consume_front("DISTRIB_DESCRIPTION=") || (out.distribution.empty() && line.consume_front("PRETTY_NAME=")))
        out.distribution = line.trim().trim('"').str();
    }
  }
  // /proc/PID/auxv as it was: words of the process's size.
  if (auto auxv = reader.stream(LinuxAuxv)) out.auxv = parseAuxv(*auxv, wordSize);
  if (auto debug = reader.stream(LinuxDsoDebug)) readLinkMap(reader, *debug, out);
  return out;
}

} // namespace stackwalk::minidump
