// Unwinding by DWARF call frame information: .eh_frame (through .eh_frame_hdr
// when present) and .debug_frame, also from separate debug files. The parsed
// sections are cached per image: the images must outlive the unwinder (a
// session's ImageCache keeps them).
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace stackwalk {

class CfiSection;

class CfiUnwinder : public Unwinder {
public:
  CfiUnwinder();
  ~CfiUnwinder() override;
  FrameTrust trust() const override { return FrameTrust::Cfi; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
  bool isSignalTrampoline(const Frame &frame, const Target &target) override;
  bool startsFunctionAt(uint64_t address, const Target &target) override;

  // --unwind-info: the CFI that governs `address` in `module`, in words: the
  // section and file, the CIE and FDE as llvm-dwarfdump prints them (with
  // every row), and the row in force at the address.
  llvm::Expected<std::vector<std::string>> describe(const Module &module, uint64_t address, Arch arch);

private:
  struct Found;
  // The CFI entry covering the frame's lookup address, or why there is none;
  // valid until the next call.
  const Found &find(const Frame &frame, const Target &target);
  Found lookUp(const Frame &frame, const Target &target);

  // The CFI sections of an image, in the order they are asked: .eh_frame,
  // then .debug_frame of the image and of its debug file.
  std::vector<std::unique_ptr<CfiSection>> &sectionsFor(const ModuleImage &image, Arch arch);

  std::map<const ModuleImage *, std::vector<std::unique_ptr<CfiSection>>> sections_;
  // Compressed sections inflated for them, by image (each buffer stays put).
  std::map<const ModuleImage *, std::list<std::vector<uint8_t>>> inflated_;
  std::map<const ModuleImage *, std::string> uninflated_; // why an image's compressed CFI could not be read
  // The last lookup: the walk asks whether a frame is a signal trampoline,
  // then unwinds it, and both need its entry (or why there is none).
  std::unique_ptr<Found> last_;
};

} // namespace stackwalk
