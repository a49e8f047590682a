// A debug file's decompressed twin (DebugSectionTwin.h) made on two other
// threads while the walk unwinds: one fills every section but .debug_info,
// the other inflates .debug_info a piece at a time, in order (ZlibStream), so
// that the walk can read the units its frames are in as soon as they have
// arrived, and need not wait for the rest. On a cold walk of a small dump,
// inflating libc's .debug_info (5.8 MB) was the critical path; its frames'
// units end at 72% of it (the last, clone3's; 2026-11-29).
//
// A view of the twin that holds .debug_info's first units only (covering) is
// an ELF file of its own whose section table says so; LLVM then reads those
// units and no others, and the Symbolizer makes a context on a later view, or
// the whole twin, when an address needs a unit past them
// (DwarfUnitCheck::Verdict).
#pragma once

#include "stackwalk/core/DebugSectionTwin.h"
#include "stackwalk/core/ModuleImage.h"

#include "TwinLayout.h"
#include "ZlibStream.h"

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>

namespace stackwalk {

class PrefetchedTwin {
public:
  // Starts making the twin of `file` (which must outlive it), inflating the
  // first `infoAhead` bytes of .debug_info before a reader asks for more (a
  // walk: all of it, which it will mostly read); null when the file has no
  // twin (DebugSectionTwin.h's errors) or no thread can be started.
  static std::unique_ptr<PrefetchedTwin> start(const ModuleImage &file, uint64_t maxDebugBytes, TwinSections which,
                                               const std::string &name, uint64_t infoAhead = UINT64_MAX);
  // Stops the threads: the inflating one after its piece at hand.
  ~PrefetchedTwin();

  struct View {
    std::unique_ptr<ModuleImage> image; // null when the twin cannot be made
    // Where its .debug_info ends when that is before the section's end.
    std::optional<uint64_t> infoEnd;
  };
  // The twin whole, once made.
  View whole();
  // The twin as far as .debug_info's units that .debug_aranges says hold
  // these file addresses (and any after them that have arrived), once they
  // have; whole when .debug_aranges leaves an address out, or after
  // MaxPartialViews views. The inflating thread ends once those units are in,
  // and whole() inflates the rest on the caller's thread: no thread waits
  // idle for a rest that is seldom wanted.
  View covering(std::span<const uint64_t> fileAddresses);
  // The addresses the walk expects, then those and one past them: a later
  // view spares the walk the rest of .debug_info, after two the whole twin.
  static constexpr unsigned MaxPartialViews = 2;
  // Whether a thread is still at work (not ended, finished or failed).
  bool busy() const;

private:
  PrefetchedTwin(const ModuleImage &file, TwinLayout layout, std::unique_ptr<TwinBuffer> buffer, uint64_t infoAhead);
  void fillOthers();
  // The thread's: inflates .debug_info as far as it is wanted, then ends.
  void inflateInfo();
  // Inflates .debug_info a piece at a time until it holds the bytes wanted;
  // with the lock held and driving_ set, which it clears. The thread drives,
  // and once it has ended, a reader that wants more.
  void drive(std::unique_lock<std::mutex> &lock);
  // Lets the kernel drop the file pages of the compressed .debug_info the stream has read.
  void releaseReadInput();
  // Blocks until .debug_info's first `bytes` are in (or it failed); how many
  // are, which is at least `bytes` unless it failed.
  uint64_t waitForInfo(uint64_t bytes);
  bool waitForOthers();
  // Where the unit at .debug_info's offset `lastUnit` ends (or a later one:
  // those that have arrived), once it has; nullopt when no unit starts there,
  // or the units before it do not parse.
  std::optional<uint64_t> unitsEnd(uint64_t lastUnit);
  View view(uint64_t infoBytes);
  // The bytes before the twin that each partial view's tables take.
  static uint64_t leadSlotSize(const TwinLayout &layout);

  const ModuleImage &file_;
  TwinLayout layout_;
  std::unique_ptr<TwinBuffer> buffer_;
  size_t info_; // .debug_info's index in the layout; the sections' count when it has none
  uint64_t infoSize_ = 0;

  std::unique_ptr<ZlibStream> stream_; // .debug_info's, when it is inflated a piece at a time
  uintptr_t inputReleasedTo_ = 0;      // its input's file pages before this address are released (the driver's)

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t infoReady_ = 0;  // bytes of .debug_info in place
  uint64_t infoWanted_ = 0; // inflated no further until more is wanted
  bool driving_ = true;     // a thread is inflating .debug_info (first the one started for it)
  bool infoFailed_ = false, othersDone_ = false, othersFailed_ = false, stopping_ = false;
  unsigned partialViews_ = 0; // views made by covering, each with its tables in the lead
  std::thread others_, inflater_;
};

} // namespace stackwalk
