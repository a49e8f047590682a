// What the module resolver asks for when no local file answers: files from
// symbol servers, fetched into a local cache laid out as the resolver already
// searches it (a .build-id tree, Microsoft's name/KEY/name store, Breakpad's
// name/ID/name.sym). lib/symstore implements it over HTTP; lib/core knows
// only the requests.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

struct SymbolRequest {
  enum class Kind {
    ElfExecutable, // by build-id: SSQP name/elf-buildid-ID/name, debuginfod /executable
    ElfDebugFile,  // by build-id: SSQP _.debug/elf-buildid-sym-ID/_.debug, debuginfod /debuginfo
    PeImage,       // name/<TimeDateStamp><SizeOfImage>/name
    Pdb,           // name.pdb/<GUID><age>/name.pdb
    BreakpadSymbols, // debug file/<debug id>/<debug file, .pdb as .sym>
  };
  Kind kind;
  std::string name; // the file's name (module, PDB or debug file); unused for build-id kinds
  std::string key;  // lowercase build-id hex, the PE key, or the debug id
};

class SymbolFetcher {
public:
  virtual ~SymbolFetcher() = default;
  // The cache directory every fetched file lands in.
  virtual const std::string &cacheDir() const = 0;
  // Fetches what the servers have of these into the cache, in parallel; asks
  // nothing for what the cache already holds or a server said it lacks. A
  // server that fails is named in `warnings`, never fails the walk.
  virtual void fetch(const std::vector<SymbolRequest> &requests, std::vector<std::string> &warnings) = 0;
  // Where a file of the cache was fetched from, when it was.
  virtual std::optional<std::string> originOf(const std::string &cachedPath) const = 0;
};

} // namespace stackwalk
