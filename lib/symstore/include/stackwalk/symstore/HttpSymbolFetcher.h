// Symbol servers over HTTP (libcurl, loaded when first needed): Microsoft-
// style symbol stores (their cabinets, foo.pd_, and file.ptr redirections too) and SSQP (name/KEY/name;
// .NET's runtime libraries are published this way), Breakpad .sym stores, and debuginfod (/buildid/ID/executable and /debuginfo). Each
// file lands in a local cache in the layout ModuleResolver searches, written
// to a temporary file and renamed, so concurrent walks share the cache; what
// a server said it lacks is remembered there too, for an hour, so a second
// walk asks nothing. What arrives must begin as the kind of file asked for (a
// 200 with an HTML page is not a PDB). A server that fails or times out is
// asked nothing more by this fetcher and named in a warning.
#pragma once

#include "stackwalk/core/SymbolFetcher.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace stackwalk {

struct SymbolServers {
  std::vector<std::string> stores;     // Microsoft, SSQP and Breakpad layouts, tried in order
  std::vector<std::string> debuginfod; // debuginfod servers, tried after the stores
  std::string cacheDir;
  unsigned timeoutSeconds = 30;                  // per file
  uint64_t maxFileBytes = uint64_t(4) << 30;     // larger files are not kept
  unsigned parallel = 8;                         // transfers at once
};

// $XDG_CACHE_HOME/stackwalk/symbols, else ~/.cache/stackwalk/symbols.
std::string defaultSymbolCache();

struct CurlLibrary;

// A URL to ask for a file, the server it is on, for a store's cabinet
// (foo.pd_) the name of the file inside it, and whether it is the store's
// file.ptr, which says where the file is instead.
struct SymbolUrl {
  std::string server, url, cabinetOf;
  bool pointer = false;
};

class HttpSymbolFetcher : public SymbolFetcher {
public:
  explicit HttpSymbolFetcher(SymbolServers servers);
  const std::string &cacheDir() const override { return servers_.cacheDir; }
  void fetch(const std::vector<SymbolRequest> &requests, std::vector<std::string> &warnings) override;
  std::optional<std::string> originOf(const std::string &cachedPath) const override;

  // Where a request's file lies in the cache, relative to it.
  static std::string cachePath(const SymbolRequest &request);
  // The servers and URLs to try for a request, in order (none without libcurl).
  std::vector<SymbolUrl> urlsFor(const SymbolRequest &request) const;

private:
  struct Transfer;
  std::string missMarker(const std::string &url) const;
  bool recentMiss(const std::string &url) const;
  void rememberMiss(const std::string &url) const;
  bool extracted(Transfer &t, std::vector<std::string> &warnings) const;
  // Where a file.ptr that arrived sends the transfer: its next URL, or a
  // warning saying why it is not followed.
  void follow(Transfer &t, std::vector<std::string> &warnings) const;
  std::set<std::string> down_; // servers that failed: asked nothing more
  SymbolServers servers_;
  const CurlLibrary *curl_ = nullptr; // loaded at construction
  std::string curlError_;             // why it could not be
};

} // namespace stackwalk
