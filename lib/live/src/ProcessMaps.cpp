#include "ProcessMaps.h"

#include "llvm/ADT/StringRef.h"

namespace stackwalk::live {
namespace {

// "start-end perms offset dev inode   path"; the path may hold spaces and
// ends in " (deleted)" when the file was removed or replaced.
bool parseLine(llvm::StringRef line, ProcessMaps &out) {
  auto [range, rest] = line.split(' ');
  auto [perms, rest2] = rest.split(' ');
  auto [offset, rest3] = rest2.split(' ');
  auto [device, rest4] = rest3.split(' ');
  auto [inode, path] = rest4.split(' ');
  auto [startText, endText] = range.split('-');
  MemoryRegion region;
  uint64_t fileOffset = 0, inodeNumber = 0;
  if (startText.getAsInteger(16, region.start) || endText.getAsInteger(16, region.end) || region.end <= region.start ||
      perms.size() < 4 || offset.getAsInteger(16, fileOffset) || inode.getAsInteger(10, inodeNumber))
    return false;
  region.readable = perms[0] == 'r';
  region.writable = perms[1] == 'w';
  region.executable = perms[2] == 'x';
  out.regions.push_back(region);
  path = path.ltrim(' ');
  if (path == "[vdso]") out.vdso = region;
  if (path == "[stack]") out.mainStack = region;
  if (inodeNumber != 0 && path.starts_with("/"))
    out.files.push_back({region.start, region.end, fileOffset, path.str()});
  return true;
}

} // namespace

ProcessMaps parseProcessMaps(std::string_view text) {
  ProcessMaps out;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text.data(), text.size()).split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines) parseLine(line, out);
  return out;
}

} // namespace stackwalk::live
