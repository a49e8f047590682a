#include "stackwalk/symstore/HttpSymbolFetcher.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using Kind = SymbolRequest::Kind;

namespace {
HttpSymbolFetcher fetcher() {
  SymbolServers servers;
  servers.stores = {"http://127.0.0.1:1/store", "http://127.0.0.1:2/"};
  servers.debuginfod = {"http://127.0.0.1:3"};
  servers.cacheDir = "/cache";
  return HttpSymbolFetcher(servers);
}
std::vector<std::string> urls(const SymbolRequest &request) {
  std::vector<std::string> out;
  for (const SymbolUrl &url : fetcher().urlsFor(request)) out.push_back(url.url);
  return out;
}
} // namespace

TEST_CASE("ELF files by build-id: SSQP keys in lower case from each store, then debuginfod") {
  SymbolRequest binary{Kind::ElfExecutable, "libcoreclr.so", "abcdef0123"};
  CHECK(urls(binary) == std::vector<std::string>{
                            "http://127.0.0.1:1/store/libcoreclr.so/elf-buildid-abcdef0123/libcoreclr.so",
                            "http://127.0.0.1:2/libcoreclr.so/elf-buildid-abcdef0123/libcoreclr.so",
                            "http://127.0.0.1:3/buildid/abcdef0123/executable"});
  SymbolRequest debug{Kind::ElfDebugFile, "libcoreclr.so", "abcdef0123"};
  CHECK(urls(debug).front() == "http://127.0.0.1:1/store/_.debug/elf-buildid-sym-abcdef0123/_.debug");
  CHECK(urls(debug).back() == "http://127.0.0.1:3/buildid/abcdef0123/debuginfo");
  CHECK(HttpSymbolFetcher::cachePath(binary) == ".build-id/ab/cdef0123");
  CHECK(HttpSymbolFetcher::cachePath(debug) == ".build-id/ab/cdef0123.debug");
}

TEST_CASE("PE images, PDBs and Breakpad files in store layout, from the stores only") {
  SymbolRequest image{Kind::PeImage, "Crash.exe", "5F2A1B3C7000"};
  // Each store's file, then its cabinet (the name's last character '_') and its file.ptr, as symsrv asks.
  CHECK(urls(image) == std::vector<std::string>{"http://127.0.0.1:1/store/Crash.exe/5F2A1B3C7000/Crash.exe",
                                                "http://127.0.0.1:1/store/Crash.exe/5F2A1B3C7000/Crash.ex_",
                                                "http://127.0.0.1:1/store/Crash.exe/5F2A1B3C7000/file.ptr",
                                                "http://127.0.0.1:2/Crash.exe/5F2A1B3C7000/Crash.exe",
                                                "http://127.0.0.1:2/Crash.exe/5F2A1B3C7000/Crash.ex_",
                                                "http://127.0.0.1:2/Crash.exe/5F2A1B3C7000/file.ptr"});
  SymbolRequest pdb{Kind::Pdb, "crash.pdb", "0123456789ABCDEF0123456789ABCDEF1"};
  std::vector<SymbolUrl> pdbUrls = fetcher().urlsFor(pdb);
  CHECK(pdbUrls.back().url == "http://127.0.0.1:2/crash.pdb/0123456789ABCDEF0123456789ABCDEF1/file.ptr");
  CHECK(pdbUrls.back().pointer);
  CHECK(pdbUrls[pdbUrls.size() - 2].url == "http://127.0.0.1:2/crash.pdb/0123456789ABCDEF0123456789ABCDEF1/crash.pd_");
  CHECK(pdbUrls[pdbUrls.size() - 2].cabinetOf == "crash.pdb");
  SymbolRequest sym{Kind::BreakpadSymbols, "crash.pdb", "0123456789ABCDEF0123456789ABCDEF1"};
  CHECK(urls(sym).front() == "http://127.0.0.1:1/store/crash.pdb/0123456789ABCDEF0123456789ABCDEF1/crash.sym");
  CHECK(HttpSymbolFetcher::cachePath(sym) == "crash.pdb/0123456789ABCDEF0123456789ABCDEF1/crash.sym");
  CHECK(HttpSymbolFetcher::cachePath(image) == "Crash.exe/5F2A1B3C7000/Crash.exe");
}

TEST_CASE("names are escaped in URLs") {
  SymbolRequest sym{Kind::BreakpadSymbols, "my lib+.so", "00"};
  CHECK(urls(sym).front() == "http://127.0.0.1:1/store/my%20lib%2B.so/00/my%20lib%2B.so.sym");
}
