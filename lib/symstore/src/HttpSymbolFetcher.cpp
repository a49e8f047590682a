#include "stackwalk/symstore/HttpSymbolFetcher.h"

#include "Cabinet.h"
#include "CurlLibrary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <unistd.h>

namespace stackwalk {
namespace {

using Kind = SymbolRequest::Kind;

std::string joinUrl(std::string base, const std::string &path) {
  if (base.empty() || base.back() != '/') base += '/';
  return base + path;
}

std::string escaped(const CurlLibrary &curl, const std::string &text) {
  char *out = curl.easyEscape(nullptr, text.c_str(), int(text.size()));
  std::string result = out ? out : "";
  curl.free(out);
  return result;
}

// A server that cannot find a file may still answer 200, with a page saying so
// (a portal's login or error page): what arrived must begin as the kind of
// file asked for, or it is not kept. Returns why not, or nullopt.
std::optional<std::string> notOfKind(Kind kind, const std::string &path) {
  char head[32] = {};
  std::FILE *file = std::fopen(path.c_str(), "rb");
  size_t got = file ? std::fread(head, 1, sizeof head, file) : 0;
  if (file) std::fclose(file);
  llvm::StringRef begins(head, got);
  bool ok = false;
  const char *what = "";
  switch (kind) {
  case Kind::ElfExecutable:
  case Kind::ElfDebugFile: ok = begins.starts_with("\x7f" "ELF"), what = "an ELF file"; break;
  case Kind::PeImage: ok = begins.starts_with("MZ"), what = "a PE image"; break;
  case Kind::Pdb: ok = begins.starts_with("Microsoft C/C++ MSF 7.00") || begins.starts_with("BSJB"), what = "a PDB"; break;
  case Kind::BreakpadSymbols: ok = begins.starts_with("MODULE "), what = "a Breakpad symbol file"; break;
  }
  if (ok) return std::nullopt;
  std::string shown;
  for (char c : begins.take_front(16)) shown += llvm::isPrint(c) ? c : '.';
  return std::string("something that is not ") + what + " (it begins \"" + shown + "\")";
}

// How long a server's "not found" is believed: a file may be uploaded later
// (symbolicator retries misses after an hour too).
constexpr auto MissLifetime = std::chrono::hours(1);

// Breakpad names a PE module's .sym after its PDB: foo.pdb -> foo.sym.
std::string symName(const std::string &debugFile) {
  llvm::StringRef stem(debugFile);
  if (stem.ends_with_insensitive(".pdb")) stem = stem.drop_back(4);
  return stem.str() + ".sym";
}

std::string joinPath(const std::string &a, const std::string &b) {
  llvm::SmallString<256> out(a);
  llvm::sys::path::append(out, b);
  return std::string(out);
}

} // namespace

std::string defaultSymbolCache() {
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  const char *home = std::getenv("HOME");
  std::string root = xdg && *xdg ? xdg : joinPath(home && *home ? home : "/tmp", ".cache");
  return joinPath(joinPath(root, "stackwalk"), "symbols");
}

HttpSymbolFetcher::HttpSymbolFetcher(SymbolServers servers) : servers_(std::move(servers)) {
  auto curl = CurlLibrary::get();
  if (curl) curl_ = &*curl;
  else curlError_ = llvm::toString(curl.takeError());
}

std::string HttpSymbolFetcher::cachePath(const SymbolRequest &request) {
  switch (request.kind) {
  case Kind::ElfExecutable: return ".build-id/" + request.key.substr(0, 2) + "/" + request.key.substr(2);
  case Kind::ElfDebugFile: return ".build-id/" + request.key.substr(0, 2) + "/" + request.key.substr(2) + ".debug";
  case Kind::PeImage:
  case Kind::Pdb: return request.name + "/" + request.key + "/" + request.name;
  case Kind::BreakpadSymbols: return request.name + "/" + request.key + "/" + symName(request.name);
  }
  return "";
}

std::vector<SymbolUrl> HttpSymbolFetcher::urlsFor(const SymbolRequest &request) const {
  std::vector<SymbolUrl> urls;
  if (!curl_) return urls;
  auto escape = [this](const std::string &text) { return escaped(*curl_, text); };
  std::string name = escape(request.name), key = escape(request.key);
  // SSQP keys are lower case (dotnet/symstore's key conventions).
  std::string ssqpName = escape(llvm::StringRef(request.name).lower()), ssqpKey = escape(llvm::StringRef(request.key).lower());
  for (const std::string &server : servers_.stores) {
    std::string path;
    switch (request.kind) {
    case Kind::ElfExecutable: path = ssqpName + "/elf-buildid-" + ssqpKey + "/" + ssqpName; break;
    case Kind::ElfDebugFile: path = "_.debug/elf-buildid-sym-" + ssqpKey + "/_.debug"; break;
    case Kind::PeImage:
    case Kind::Pdb: path = name + "/" + key + "/" + name; break;
    case Kind::BreakpadSymbols: path = name + "/" + key + "/" + escape(symName(request.name)); break;
    }
    urls.push_back({server, joinUrl(server, path), ""});
    // Then the cabinet a Microsoft store may keep instead (foo.pd_), and the
    // file.ptr that may say where the file is, as symsrv asks.
    if (request.kind == Kind::PeImage || request.kind == Kind::Pdb) {
      urls.push_back({server, joinUrl(server, name + "/" + key + "/" + escape(compressedName(request.name))),
                      request.name});
      urls.push_back({server, joinUrl(server, name + "/" + key + "/file.ptr"), "", /*pointer=*/true});
    }
  }
  if (request.kind == Kind::ElfExecutable || request.kind == Kind::ElfDebugFile)
    for (const std::string &server : servers_.debuginfod)
      urls.push_back({server,
                      joinUrl(server, "buildid/" + ssqpKey +
                                          (request.kind == Kind::ElfExecutable ? "/executable" : "/debuginfo")),
                      ""});
  return urls;
}

std::string HttpSymbolFetcher::missMarker(const std::string &url) const {
  auto digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(url));
  return joinPath(joinPath(servers_.cacheDir, ".misses"), llvm::toHex(digest, /*LowerCase=*/true));
}

// A miss remembered less than MissLifetime ago: the URL is not asked again yet.
bool HttpSymbolFetcher::recentMiss(const std::string &url) const {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(missMarker(url), status)) return false;
  return std::chrono::system_clock::now() - status.getLastModificationTime() < MissLifetime;
}

void HttpSymbolFetcher::rememberMiss(const std::string &url) const {
  llvm::sys::fs::create_directories(joinPath(servers_.cacheDir, ".misses"));
  std::ofstream(missMarker(url)) << url << "\n";
}

std::optional<std::string> HttpSymbolFetcher::originOf(const std::string &cachedPath) const {
  if (!llvm::StringRef(cachedPath).starts_with(servers_.cacheDir)) return std::nullopt;
  std::ifstream origin(cachedPath + ".origin");
  std::string url;
  if (!origin || !std::getline(origin, url) || url.empty()) return std::nullopt;
  return url;
}

// One file being fetched: its URLs in order, the one being asked.
struct HttpSymbolFetcher::Transfer {
  Kind kind;
  std::string destination;
  std::vector<SymbolUrl> urls;
  size_t next = 0;
  SymbolUrl asked;
  std::string temporary;
  std::FILE *file = nullptr;
  uint64_t bytes = 0, limit = 0;
  CURL *easy = nullptr;

  static size_t write(char *data, size_t size, size_t count, void *self) {
    auto *transfer = static_cast<Transfer *>(self);
    size_t n = size * count;
    if (transfer->bytes + n > transfer->limit) return 0; // too large: the transfer fails
    transfer->bytes += n;
    return std::fwrite(data, 1, n, transfer->file);
  }
};

// A cabinet that arrived becomes the file it holds, in its place; a damaged
// or oversized one is a warning (the next URL is asked).
bool HttpSymbolFetcher::extracted(Transfer &t, std::vector<std::string> &warnings) const {
  std::string file = t.temporary + ".extracted";
  if (llvm::Error err = extractFromCabinet(t.temporary, t.asked.cabinetOf, file, servers_.maxFileBytes)) {
    warnings.push_back(t.asked.url + ": " + llvm::toString(std::move(err)));
    std::remove(t.temporary.c_str());
    std::remove(file.c_str());
    return false;
  }
  std::remove(t.temporary.c_str());
  t.temporary = file;
  return true;
}

// The most a file.ptr may take; a larger one fails as an oversized file does.
constexpr uint64_t MaxPointerBytes = 4096;

// A file.ptr holds one line: "PATH:" and where the file is, or "MSG:" and why
// it is not there. A PATH that is an http(s) URL is asked next (a pointer is
// followed once: the URL asked then is no file.ptr); symsrv's other PATHs
// name file shares, which stackwalk does not open on a server's word.
void HttpSymbolFetcher::follow(Transfer &t, std::vector<std::string> &warnings) const {
  std::string text(MaxPointerBytes, '\0');
  std::FILE *file = std::fopen(t.temporary.c_str(), "rb");
  text.resize(file ? std::fread(text.data(), 1, text.size(), file) : 0);
  if (file) std::fclose(file);
  llvm::StringRef line = llvm::StringRef(text).split('\n').first.trim();
  if (line.consume_front_insensitive("PATH:")) {
    line = line.trim();
    if (line.starts_with_insensitive("http://") || line.starts_with_insensitive("https://")) {
      t.urls.insert(t.urls.begin() + t.next, SymbolUrl{t.asked.server, line.str(), "", false});
      return;
    }
    warnings.push_back(t.asked.url + " points at " + line.str() +
                       ", a file share stackwalk does not open on a symbol server's word");
    return;
  }
  line.consume_front_insensitive("MSG:");
  warnings.push_back(t.asked.url + " says: " + line.trim().str());
}

void HttpSymbolFetcher::fetch(const std::vector<SymbolRequest> &requests, std::vector<std::string> &warnings) {
  if (!curl_) {
    if (!requests.empty()) warnings.push_back("symbol servers were not asked: " + curlError_);
    return;
  }
  const CurlLibrary &curl = *curl_;
  std::map<std::string, std::unique_ptr<Transfer>> transfers; // by destination: one fetch per file
  for (const SymbolRequest &request : requests) {
    std::string destination = joinPath(servers_.cacheDir, cachePath(request));
    if (transfers.count(destination) || llvm::sys::fs::exists(destination)) continue;
    auto transfer = std::make_unique<Transfer>();
    transfer->kind = request.kind;
    transfer->destination = destination;
    for (SymbolUrl &url : urlsFor(request))
      if (!recentMiss(url.url)) transfer->urls.push_back(std::move(url));
    if (!transfer->urls.empty()) transfers.emplace(destination, std::move(transfer));
  }
  if (transfers.empty()) return;

  std::map<std::string, std::pair<std::string, unsigned>> failures; // server -> first error, count
  CURLM *multi = curl.multiInit();
  unsigned counter = 0;
  auto start = [&](Transfer &t) {
    while (t.next < t.urls.size()) {
      t.asked = t.urls[t.next++];
      if (down_.count(t.asked.server)) continue;
      // Beside the cache's files (one file system, so the rename is atomic),
      // but not in their folders, which are made only for files that arrive.
      std::string partial = joinPath(servers_.cacheDir, ".partial");
      llvm::sys::fs::create_directories(partial);
      t.temporary = joinPath(partial, std::to_string(getpid()) + "." + std::to_string(counter++));
      t.file = std::fopen(t.temporary.c_str(), "wb");
      if (!t.file) return false;
      t.bytes = 0;
      t.limit = t.asked.pointer ? MaxPointerBytes : servers_.maxFileBytes;
      t.easy = curl.easyInit();
      curl.easySetopt(t.easy, CURLOPT_URL, t.asked.url.c_str());
      curl.easySetopt(t.easy, CURLOPT_PROTOCOLS_STR, "http,https");
      curl.easySetopt(t.easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
      curl.easySetopt(t.easy, CURLOPT_FOLLOWLOCATION, 1L);
      curl.easySetopt(t.easy, CURLOPT_MAXREDIRS, 5L);
      curl.easySetopt(t.easy, CURLOPT_TIMEOUT, long(servers_.timeoutSeconds));
      curl.easySetopt(t.easy, CURLOPT_CONNECTTIMEOUT, long(std::min(servers_.timeoutSeconds, 10u)));
      curl.easySetopt(t.easy, CURLOPT_NOSIGNAL, 1L);
      curl.easySetopt(t.easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(servers_.maxFileBytes));
      curl.easySetopt(t.easy, CURLOPT_USERAGENT, "stackwalk");
      curl.easySetopt(t.easy, CURLOPT_WRITEFUNCTION, &Transfer::write);
      curl.easySetopt(t.easy, CURLOPT_WRITEDATA, &t);
      curl.easySetopt(t.easy, CURLOPT_PRIVATE, &t);
      curl.multiAddHandle(multi, t.easy);
      return true;
    }
    return false;
  };
  auto finish = [&](Transfer &t, CURLcode result) {
    long status = 0;
    curl.easyGetinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    curl.multiRemoveHandle(multi, t.easy);
    curl.easyCleanup(t.easy);
    t.easy = nullptr;
    bool written = std::fclose(t.file) == 0;
    t.file = nullptr;
    bool arrived = result == CURLE_OK && status == 200 && written && t.bytes > 0;
    if (arrived && t.asked.pointer) {
      follow(t, warnings);
      std::remove(t.temporary.c_str());
      // Read once: what it points at is remembered on its own (a file, or a miss).
      rememberMiss(t.asked.url);
      return false;
    }
    if (arrived && !t.asked.cabinetOf.empty() && !extracted(t, warnings)) return false; // the next URL
    if (arrived)
      if (auto wrong = notOfKind(t.kind, t.temporary)) {
        warnings.push_back(t.asked.url + " answered with " + *wrong + ": not kept");
        std::remove(t.temporary.c_str());
        rememberMiss(t.asked.url);
        return false; // the next URL
      }
    if (arrived && !llvm::sys::fs::create_directories(llvm::sys::path::parent_path(t.destination)) &&
        std::rename(t.temporary.c_str(), t.destination.c_str()) == 0) {
      std::ofstream(t.destination + ".origin") << t.asked.url << "\n";
      return true;
    }
    std::remove(t.temporary.c_str());
    if (result == CURLE_OK && (status == 404 || status == 410)) {
      rememberMiss(t.asked.url);
    } else if (result == CURLE_OK && status == 200) {
      // Empty, or the cache cannot be written: nothing to keep, the server is fine.
    } else {
      down_.insert(t.asked.server);
      auto &failure = failures[t.asked.server];
      if (failure.first.empty())
        failure.first = result != CURLE_OK ? curl.easyStrerror(result) : "HTTP status " + std::to_string(status);
      ++failure.second;
    }
    return false;
  };

  std::deque<Transfer *> waiting;
  for (auto &[_, transfer] : transfers) waiting.push_back(transfer.get());
  unsigned active = 0;
  while (active || !waiting.empty()) {
    while (active < servers_.parallel && !waiting.empty()) {
      Transfer *next = waiting.front();
      waiting.pop_front();
      if (start(*next)) ++active;
    }
    int running = 0;
    curl.multiPerform(multi, &running);
    int queued = 0;
    while (CURLMsg *message = curl.multiInfoRead(multi, &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      Transfer *transfer = nullptr;
      curl.easyGetinfo(message->easy_handle, CURLINFO_PRIVATE, &transfer);
      --active;
      if (!finish(*transfer, message->data.result)) waiting.push_front(transfer); // its next URL
    }
    if (active) curl.multiPoll(multi, nullptr, 0, 100, nullptr);
  }
  curl.multiCleanup(multi);
  for (const auto &[server, failure] : failures)
    warnings.push_back("symbol server " + server + " failed: " + failure.first + " (" +
                       std::to_string(failure.second) + " file(s); not asked again by this process)");
}

} // namespace stackwalk
