// PrefetchedTwin and ZlibStream: .debug_info arrives in order, and a view
// holds the units its addresses need and ends where a unit does (glibc's
// debug file from the unpacked test dumps). SymbolizerTest names frames
// through such a view.
#include "PrefetchedTwin.h"
#include "ZlibStream.h"

#include "stackwalk/core/DebugSectionTwin.h"

#include "ModuleFiles.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/DebugInfo/DWARF/DWARFCompileUnit.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sys/wait.h>
#include <unistd.h>

using namespace stackwalk;
using namespace llvm;

namespace {

using test::Clone3;
using test::FutexWait;

std::string section(const ModuleImage &image, const char *name) {
  auto found = image.section(name);
  return found ? found->data.str() : "(none)";
}

// That a context on part of the twin names a file address as one on the whole does.
void namesAsWhole(DWARFContext &partial, DWARFContext &whole, uint64_t address) {
  DILineInfoSpecifier spec(DILineInfoSpecifier::FileLineInfoKind::AbsoluteFilePath,
                           DILineInfoSpecifier::FunctionNameKind::LinkageName);
  object::SectionedAddress at{address, object::SectionedAddress::UndefSection};
  DILineInfo fromPartial = partial.getLineInfoForAddress(at, spec), fromWhole = whole.getLineInfoForAddress(at, spec);
  CHECK(fromPartial.FunctionName == fromWhole.FunctionName);
  CHECK(fromPartial.FileName == fromWhole.FileName);
  CHECK(fromPartial.Line == fromWhole.Line);
  CHECK(fromPartial.Line != 0);
}

// .debug_info's offset where the unit holding a file address ends.
uint64_t unitEnd(DWARFContext &whole, uint64_t address) {
  DWARFCompileUnit *unit = whole.getCompileUnitForCodeAddress(address);
  REQUIRE(unit);
  return unit->getNextUnitOffset();
}

// That a view's .debug_info is the twin's first units, ending where a unit starts.
void isFirstUnits(const PrefetchedTwin::View &view, const std::string &info, DWARFContext &whole) {
  REQUIRE(view.image);
  REQUIRE(view.infoEnd);
  CHECK(section(*view.image, ".debug_info") == info.substr(0, *view.infoEnd));
  DWARFUnit *next = whole.getNormalUnitsVector().getUnitForOffset(*view.infoEnd);
  REQUIRE(next);
  CHECK(next->getOffset() == *view.infoEnd);
}

// glibc's debug file, its twin made at once (as the plain one to compare
// with), and one started with nothing of .debug_info inflated before a view
// asks: what a view holds is what it needed, and what arrived meanwhile.
struct Libc {
  std::unique_ptr<ModuleImage> debug, plain;
  std::string info; // the plain twin's .debug_info
  std::unique_ptr<DWARFContext> whole;
  std::unique_ptr<PrefetchedTwin> twin;

  // Null, with a warning, when the test dumps are not unpacked.
  static std::unique_ptr<Libc> open() {
    if (!sys::fs::exists(test::libcDebugPath)) {
      WARN("skipped: " << test::libcDebugPath << " is not unpacked");
      return nullptr;
    }
    auto libc = std::make_unique<Libc>();
    auto debug = ModuleImage::open(test::libcDebugPath);
    REQUIRE(bool(debug));
    libc->debug = std::move(*debug);
    libc->plain = debugSectionTwinImage(*libc->debug, UINT64_MAX, "plain", TwinSections::WithoutLocationLists);
    REQUIRE(libc->plain);
    libc->info = section(*libc->plain, ".debug_info");
    libc->whole = DWARFContext::create(libc->plain->object());
    libc->twin =
        PrefetchedTwin::start(*libc->debug, UINT64_MAX, TwinSections::WithoutLocationLists, "twin", /*infoAhead=*/0);
    REQUIRE(libc->twin);
    return libc;
  }
};

} // namespace

TEST_CASE("a view of a prefetched twin holds the units its addresses are in, up to a unit's end, and the rest later") {
  auto libc = Libc::open();
  if (!libc) return;
  auto &[debug, plain, info, whole, twin] = *libc;
  std::vector<uint64_t> addresses{FutexWait};
  PrefetchedTwin::View first = twin->covering(addresses);
  REQUIRE(first.image);
  REQUIRE(first.infoEnd);
  CHECK_FALSE(twin->busy()); // paused until the rest is asked for
  CHECK(section(*first.image, ".debug_info") == info.substr(0, *first.infoEnd));
  CHECK(section(*first.image, ".debug_line") == section(*plain, ".debug_line"));
  CHECK(section(*first.image, ".debug_str") == section(*plain, ".debug_str"));

  isFirstUnits(first, info, *whole);
  CHECK(unitEnd(*whole, FutexWait) <= *first.infoEnd);
  CHECK(*first.infoEnd < info.size() * 2 / 5); // the unit at 30%, and what arrived with it
  CHECK_FALSE(whole->getCompileUnitForCodeAddress(Clone3)->getOffset() < *first.infoEnd);

  auto partial = DWARFContext::create(first.image->object());
  CHECK(partial->getNumCompileUnits() < whole->getNumCompileUnits());
  namesAsWhole(*partial, *whole, FutexWait);

  PrefetchedTwin::View all = twin->whole();
  REQUIRE(all.image);
  CHECK_FALSE(all.infoEnd);
  CHECK(section(*all.image, ".debug_info") == info);
  CHECK(section(*first.image, ".debug_info") == info.substr(0, *first.infoEnd)); // the first view unchanged
}

TEST_CASE("a later view holds more units, with tables of its own; after two views, the whole twin") {
  auto libc = Libc::open();
  if (!libc) return;
  auto &[debug, plain, info, whole, twin] = *libc;
  std::vector<uint64_t> first{FutexWait}, more{FutexWait, Clone3}; // units at 30% and 72%
  PrefetchedTwin::View firstView = twin->covering(first);
  isFirstUnits(firstView, info, *whole);
  CHECK(unitEnd(*whole, FutexWait) <= *firstView.infoEnd);

  PrefetchedTwin::View moreView = twin->covering(more);
  isFirstUnits(moreView, info, *whole);
  CHECK(unitEnd(*whole, Clone3) <= *moreView.infoEnd);
  CHECK(*moreView.infoEnd < info.size());
  CHECK(*firstView.infoEnd <= *moreView.infoEnd);
  // The first view's tables are not the second's.
  CHECK(section(*firstView.image, ".debug_info") == info.substr(0, *firstView.infoEnd));

  auto firstContext = DWARFContext::create(firstView.image->object());
  auto moreContext = DWARFContext::create(moreView.image->object());
  CHECK(firstContext->getNumCompileUnits() <= moreContext->getNumCompileUnits());
  namesAsWhole(*firstContext, *whole, FutexWait);
  namesAsWhole(*moreContext, *whole, FutexWait);
  namesAsWhole(*moreContext, *whole, Clone3);

  PrefetchedTwin::View third = twin->covering(first);
  REQUIRE(third.image);
  CHECK_FALSE(third.infoEnd);
  CHECK(section(*third.image, ".debug_info") == info);
}

TEST_CASE("a zlib stream's trailer is found wherever the deflate data ends, at any length and level") {
  if (!ZlibStream::open(ArrayRef<uint8_t>{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})) {
    WARN("skipped: libisal.so.2 cannot be loaded");
    return;
  }
  // ISA-L reads its input 8 bytes at a time; the deflate data's last byte
  // falls anywhere among them as lengths and compression levels vary.
  uint32_t seed = 1;
  for (size_t size : {1, 7, 8, 9, 63, 64, 65, 1000, 4095, 4096, 65537}) {
    std::string text(size, '\0');
    for (char &c : text) c = "abcd efgh"[(seed = seed * 1103515245 + 12345) >> 16 & 7];
    for (auto level : {compression::zlib::NoCompression, compression::zlib::BestSpeedCompression,
                       compression::zlib::BestSizeCompression}) {
      SmallVector<uint8_t, 0> zlib;
      compression::zlib::compress(arrayRefFromStringRef(text), zlib, level);
      auto stream = ZlibStream::open(zlib);
      REQUIRE(stream);
      std::string out(size, '\0');
      auto written = stream->inflate({reinterpret_cast<uint8_t *>(out.data()), out.size()});
      REQUIRE(bool(written));
      CHECK(out == text);
      CHECK(stream->finished());
      CHECK(stream->checksumMatches(arrayRefFromStringRef(out)));
    }
  }
}

TEST_CASE("a wrong checksum at .debug_info's end refuses the whole twin, not the units read before it") {
  auto libc = Libc::open();
  if (!libc) return;
  // The debug file again, with the Adler-32 trailer of its .debug_info's stream changed.
  std::optional<ModuleImage::Section> info = libc->debug->section(".debug_info");
  REQUIRE(info);
  REQUIRE(info->compressed);
  StringRef file = libc->debug->object().getData();
  std::string changed = file.str();
  changed[info->data.end() - file.begin() - 1] ^= 1;
  auto image = ModuleImage::fromFileBuffer(MemoryBuffer::getMemBufferCopy(changed, "changed"), "changed");
  REQUIRE(bool(image));
  auto twin = PrefetchedTwin::start(**image, UINT64_MAX, TwinSections::WithoutLocationLists, "twin", /*infoAhead=*/0);
  REQUIRE(twin);
  std::vector<uint64_t> first{FutexWait};
  PrefetchedTwin::View firstView = twin->covering(first);
  isFirstUnits(firstView, libc->info, *libc->whole); // the checksum is not read yet
  CHECK_FALSE(twin->whole().image); // its end is wrong
}

TEST_CASE("a process that exits while a prefetched twin still inflates exits cleanly") {
  // A single dump's walk leaves its threads to the process's exit (LeftToExit.h), whose static
  // destructors run while .debug_info may still be inflating: ISA-L must stay mapped (it was
  // closed by LLVM's DynamicLibrary in a static destructor once: SIGSEGV in the inflating thread).
  if (!sys::fs::exists(test::libcDebugPath)) {
    WARN("skipped: " << test::libcDebugPath << " is not unpacked");
    return;
  }
  std::cout.flush(); // not printed twice
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    static ModuleImage *debug = nullptr; // reachable at exit, as the walk's are
    static PrefetchedTwin *twin = nullptr;
    // Run last of the exit's handlers (first registered): the thread inflates on meanwhile.
    std::atexit([] { usleep(20000); });
    auto opened = ModuleImage::open(test::libcDebugPath);
    if (!opened) _exit(2);
    debug = opened->release();
    twin = PrefetchedTwin::start(*debug, UINT64_MAX, TwinSections::WithoutLocationLists, "twin").release();
    if (!twin || !twin->busy()) _exit(3);
    usleep(3000); // its thread has loaded ISA-L and is inflating (about 10 ms of .debug_info)
    std::exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a zlib stream inflates a piece at a time and ends where it does; its checksum is checked over the whole") {
  std::string text;
  for (int i = 0; i < 50000; ++i) text += std::to_string(i * 7919 % 10007) + ' ';
  SmallVector<uint8_t, 0> zlib;
  compression::zlib::compress(arrayRefFromStringRef(text), zlib);
  auto stream = ZlibStream::open(zlib);
  if (!stream) {
    WARN("skipped: libisal.so.2 cannot be loaded");
    return;
  }
  std::string out(text.size(), '\0');
  for (size_t at = 0; at < out.size();) {
    size_t piece = std::min<size_t>(1000, out.size() - at);
    auto written = stream->inflate({reinterpret_cast<uint8_t *>(out.data()) + at, piece});
    REQUIRE(bool(written));
    REQUIRE(*written == piece);
    at += piece;
  }
  CHECK(out == text);
  CHECK(stream->finished());
  CHECK(stream->checksumMatches(arrayRefFromStringRef(out)));
  CHECK_FALSE(stream->checksumMatches(arrayRefFromStringRef(out).drop_back())); // not all it inflated

  // The checksum each of these streams ends with matches what it inflated: the
  // trailer as written, flipped, or absent.
  auto checksumMatches = [&](ArrayRef<uint8_t> bytes) {
    std::string scratch(text.size(), '\0');
    auto stream = ZlibStream::open(bytes);
    auto written = stream->inflate({reinterpret_cast<uint8_t *>(scratch.data()), scratch.size()});
    REQUIRE(bool(written));
    return stream->checksumMatches(arrayRefFromStringRef(scratch));
  };
  CHECK(checksumMatches(zlib));
  SmallVector<uint8_t, 0> wrongChecksum = zlib;
  wrongChecksum.back() ^= 1;
  CHECK_FALSE(checksumMatches(wrongChecksum));
  CHECK_FALSE(checksumMatches(ArrayRef<uint8_t>(zlib).drop_back(4)));

  auto inflateAll = [&](ArrayRef<uint8_t> bytes, size_t size) -> Expected<size_t> {
    std::string scratch(size, '\0');
    return ZlibStream::open(bytes)->inflate({reinterpret_cast<uint8_t *>(scratch.data()), scratch.size()});
  };
  auto early = inflateAll(ArrayRef<uint8_t>(zlib).drop_back(10), text.size());
  CHECK_FALSE(bool(early));
  consumeError(early.takeError());
  auto shorter = inflateAll(zlib, text.size() + 100); // the stream ends before the output does
  REQUIRE(bool(shorter));
  CHECK(*shorter == text.size());
  SmallVector<uint8_t, 0> notZlib = zlib;
  notZlib[0] = 0x79; // a compression method other than deflate
  CHECK_FALSE(ZlibStream::open(notZlib));
}
