#include "PrefetchedTwin.h"

#include "ArangeSets.h"
#include "ZlibStream.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/DebugInfo/DWARF/DWARFDataExtractor.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <system_error>
#include <unistd.h>

using namespace llvm;

namespace stackwalk {
namespace {

// .debug_info arrives in pieces this large: a reader waits at most the time
// one takes to inflate (about 0.25 ms), and the thread checks between them
// whether to pause or stop.
constexpr uint64_t InfoPiece = 128 << 10;

size_t indexOf(const TwinLayout &layout, StringRef name) {
  const std::vector<TwinSection> &sections = layout.sections();
  for (size_t i = 0; i < sections.size(); ++i)
    if (sections[i].name == name) return i;
  return sections.size();
}

// Where .debug_aranges, as LLVM reads it, places a set of file addresses.
struct UnitsHolding {
  uint64_t last;  // the last unit (by offset) holding any of them
  uint64_t after; // the first unit it describes past that one: the units up to it have ended there
};

// Nullopt when .debug_aranges leaves an address out (LLVM would then look for
// it in the units' own address ranges, all of them); `after` is the
// section's size when no unit is described past the last.
std::optional<UnitsHolding> unitsHolding(StringRef aranges, std::span<const uint64_t> fileAddresses,
                                         uint64_t sectionSize) {
  std::vector<uint64_t> addresses(fileAddresses.begin(), fileAddresses.end());
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  std::vector<bool> held(addresses.size());
  std::vector<uint64_t> described;
  uint64_t last = 0;
  forEachArangeSet(aranges, /*littleEndian=*/true, [&](const DWARFDebugArangeSet &set) {
    described.push_back(set.getCompileUnitDIEOffset());
    for (const DWARFDebugArangeSet::Descriptor &range : set.descriptors())
      for (auto at = std::lower_bound(addresses.begin(), addresses.end(), range.Address);
           at != addresses.end() && *at - range.Address < range.Length; ++at) {
        held[at - addresses.begin()] = true;
        last = std::max(last, set.getCompileUnitDIEOffset());
      }
  });
  if (std::find(held.begin(), held.end(), false) != held.end()) return std::nullopt;
  uint64_t after = sectionSize;
  for (uint64_t unit : described)
    if (unit > last) after = std::min(after, unit);
  return UnitsHolding{last, after};
}

} // namespace

std::unique_ptr<PrefetchedTwin> PrefetchedTwin::start(const ModuleImage &file, uint64_t maxDebugBytes,
                                                      TwinSections which, const std::string &name,
                                                      uint64_t infoAhead) {
  auto layout = TwinLayout::of(file, maxDebugBytes, which);
  if (!layout) {
    consumeError(layout.takeError());
    return nullptr;
  }
  std::unique_ptr<TwinBuffer> buffer =
      TwinBuffer::make(layout->size(), MaxPartialViews * leadSlotSize(*layout), name);
  if (!buffer) return nullptr;
  layout->writeTables(buffer->bytes());
  std::unique_ptr<PrefetchedTwin> twin(new PrefetchedTwin(file, std::move(*layout), std::move(buffer), infoAhead));
  try {
    twin->others_ = std::thread(&PrefetchedTwin::fillOthers, twin.get());
    if (twin->driving_) twin->inflater_ = std::thread(&PrefetchedTwin::inflateInfo, twin.get());
  } catch (const std::system_error &) {
    return nullptr; // no thread to spare: the twin is made when it is needed
  }
  return twin;
}

uint64_t PrefetchedTwin::leadSlotSize(const TwinLayout &layout) { return alignTo(layout.viewTablesSize(), 16); }

PrefetchedTwin::PrefetchedTwin(const ModuleImage &file, TwinLayout layout, std::unique_ptr<TwinBuffer> buffer,
                               uint64_t infoAhead)
    : file_(file), layout_(std::move(layout)), buffer_(std::move(buffer)), info_(indexOf(layout_, ".debug_info")) {
  // Without .debug_info there is nothing to wait for (infoSize_ 0) and no thread for it.
  driving_ = info_ < layout_.sections().size();
  if (driving_) infoSize_ = layout_.sections()[info_].size;
  infoWanted_ = std::min(infoAhead, infoSize_);
}

PrefetchedTwin::~PrefetchedTwin() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (others_.joinable()) others_.join();
  if (inflater_.joinable()) inflater_.join();
}

void PrefetchedTwin::fillOthers() {
  Error errors = Error::success();
  for (size_t i = 0; i < layout_.sections().size(); ++i)
    if (i != info_) errors = joinErrors(std::move(errors), fillSection(file_, layout_.sections()[i], buffer_->bytes()));
  bool failed = bool(errors);
  consumeError(std::move(errors));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    othersDone_ = true;
    othersFailed_ = failed;
  }
  changed_.notify_all();
}

void PrefetchedTwin::inflateInfo() {
  const TwinSection &info = layout_.sections()[info_];
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock); // driving_ is set: readers wait until it is not
  if (info.compressed && info.compression == ELF::ELFCOMPRESS_ZLIB)
    stream_ = ZlibStream::open(arrayRefFromStringRef(info.stream));
  if (!stream_) { // not zlib, or no ISA-L: at once
    Error filled = fillSection(file_, info, buffer_->bytes());
    lock.lock();
    infoFailed_ = bool(filled);
    if (!filled) infoReady_ = infoSize_;
    driving_ = false;
    consumeError(std::move(filled));
    changed_.notify_all();
    return;
  }
  lock.lock();
  drive(lock);
}

void PrefetchedTwin::drive(std::unique_lock<std::mutex> &lock) {
  const TwinSection &info = layout_.sections()[info_];
  while (!stopping_ && !infoFailed_ && infoReady_ < infoWanted_) {
    uint64_t ready = infoReady_;
    lock.unlock();
    MutableArrayRef<uint8_t> piece =
        buffer_->bytes().slice(info.offset + ready, std::min(InfoPiece, infoSize_ - ready));
    Expected<size_t> written = stream_->inflate(piece);
    // No piece falls short; the last ends the stream, and its checksum is
    // checked over the whole section.
    bool last = ready + piece.size() == infoSize_;
    bool inflated = written && *written == piece.size() &&
                    (!last || (stream_->finished() &&
                               stream_->checksumMatches(buffer_->bytes().slice(info.offset, infoSize_))));
    if (!written) consumeError(written.takeError());
    releaseReadInput();
    lock.lock();
    infoFailed_ = !inflated;
    if (inflated) infoReady_ = ready + piece.size();
    changed_.notify_all();
  }
  driving_ = false;
  changed_.notify_all(); // a reader that wants more inflates it now
}

// As fillSection does for a section inflated at once: the peak holds the
// twin and the compressed bytes still to read, not all of both. In whole pages
// from where the last call stopped, so none is left behind half released; and
// half a MiB at a time, not after every piece: each release makes the kernel
// stop the process's other threads' CPUs to flush their TLBs, an interrupt
// that a virtual machine pays dearly for (a cold walk of the 6-thread core:
// 0.3-0.6 ms sooner, medians of 101 alternating runs, the same peak).
void PrefetchedTwin::releaseReadInput() {
  constexpr uintptr_t ReleasedAtOnce = 512 << 10;
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  StringRef input = layout_.sections()[info_].stream;
  uintptr_t start = std::max(alignTo(uintptr_t(input.data()), page), inputReleasedTo_);
  uintptr_t end = alignDown(uintptr_t(input.data()) + stream_->consumed(), page);
  if (start >= end || (end - start < ReleasedAtOnce && !stream_->finished())) return;
  file_.releaseFilePages(StringRef(reinterpret_cast<const char *>(start), end - start));
  inputReleasedTo_ = end;
}

uint64_t PrefetchedTwin::waitForInfo(uint64_t bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  infoWanted_ = std::max(infoWanted_, bytes);
  while (infoReady_ < bytes && !infoFailed_) {
    if (driving_) {
      changed_.wait(lock);
    } else if (stream_) { // the thread has paused and gone: this one inflates what it needs
      driving_ = true;
      drive(lock);
    } else {
      break; // nothing left to inflate it
    }
  }
  return infoReady_;
}

bool PrefetchedTwin::waitForOthers() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return othersDone_; });
  return !othersFailed_;
}

bool PrefetchedTwin::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !othersDone_ || driving_;
}

PrefetchedTwin::View PrefetchedTwin::whole() {
  if (!waitForOthers() || waitForInfo(infoSize_) < infoSize_) return {};
  return view(infoSize_);
}

PrefetchedTwin::View PrefetchedTwin::covering(std::span<const uint64_t> fileAddresses) {
  size_t aranges = indexOf(layout_, ".debug_aranges");
  if (partialViews_ == MaxPartialViews || aranges == layout_.sections().size() || !waitForOthers()) return whole();
  const TwinSection &section = layout_.sections()[aranges];
  StringRef bytes(reinterpret_cast<const char *>(buffer_->bytes().data()) + section.offset, section.size);
  std::optional<UnitsHolding> units = unitsHolding(bytes, fileAddresses, infoSize_);
  if (!units) return whole();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The thread stops after its piece at hand once these are in: whole() inflates the rest.
    infoWanted_ = units->after;
  }
  std::optional<uint64_t> end = unitsEnd(units->last);
  if (!end || *end >= infoSize_) return whole();
  return view(*end);
}

std::optional<uint64_t> PrefetchedTwin::unitsEnd(uint64_t lastUnit) {
  const uint8_t *info = buffer_->bytes().data() + layout_.sections()[info_].offset;
  uint64_t ready = 0, offset = 0;
  // Where the unit at `offset` ends, read from its initial length as LLVM
  // reads it, when that has arrived; nullopt when it is malformed.
  auto unitEnd = [&]() -> std::optional<uint64_t> {
    DWARFDataExtractor arrived(StringRef(reinterpret_cast<const char *>(info), ready), /*IsLittleEndian=*/true, 0);
    DataExtractor::Cursor cursor(offset);
    uint64_t length = arrived.getInitialLength(cursor).first;
    if (!cursor) return consumeError(cursor.takeError()), std::nullopt;
    if (length > infoSize_ - cursor.tell()) return std::nullopt;
    return cursor.tell() + length;
  };
  // Each unit from the first: only its length says where the next begins.
  bool reached = false;
  while (offset <= lastUnit) {
    reached = offset == lastUnit;
    if (ready < offset + 12 && ready < infoSize_) ready = waitForInfo(std::min(offset + 12, infoSize_));
    std::optional<uint64_t> next = unitEnd();
    if (!next) return std::nullopt;
    offset = *next;
  }
  ready = waitForInfo(offset);
  if (!reached || ready < offset) return std::nullopt;
  // The units after it that have arrived cost nothing more to take.
  while (offset + 12 <= ready) {
    std::optional<uint64_t> next = unitEnd();
    if (!next || *next > ready) break;
    offset = *next;
  }
  return offset;
}

PrefetchedTwin::View PrefetchedTwin::view(uint64_t infoBytes) {
  StringRef bytes(reinterpret_cast<const char *>(buffer_->bytes().data()), buffer_->bytes().size());
  std::string name = buffer_->getBufferIdentifier().str();
  View made;
  if (infoBytes < infoSize_) {
    // Its own tables in the slot before those of the views before it.
    MutableArrayRef<uint8_t> lead = buffer_->leadBytes().take_back(++partialViews_ * leadSlotSize(layout_));
    layout_.writeViewTables(lead, info_, infoBytes);
    bytes = StringRef(reinterpret_cast<const char *>(lead.data()), lead.size() + bytes.size());
    name += " (first units)";
    made.infoEnd = infoBytes;
  } else {
    file_.releaseCompressedPages(); // nothing reads them again
  }
  auto buffer = MemoryBuffer::getMemBuffer(bytes, name, /*RequiresNullTerminator=*/false);
  auto image = ModuleImage::fromFileBuffer(std::move(buffer), name);
  if (!image) {
    consumeError(image.takeError());
    return {};
  }
  made.image = std::move(*image);
  return made;
}

} // namespace stackwalk
