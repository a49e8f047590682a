// Unwinding by DWARF call frame information: .eh_frame (through .eh_frame_hdr
// when present) and .debug_frame, also from separate debug files. The parsed
// sections are cached per image: the images must outlive the unwinder (a
// session's ImageCache keeps them).
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <map>
#include <memory>
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

private:
  struct Found;
  // The CFI entry covering the frame's lookup address, or why there is none.
  Found find(const Frame &frame, const Target &target);

  // The CFI sections of an image, in the order they are asked: .eh_frame,
  // then .debug_frame of the image and of its debug file.
  std::vector<std::unique_ptr<CfiSection>> &sectionsFor(const ModuleImage &image, Arch arch);

  std::map<const ModuleImage *, std::vector<std::unique_ptr<CfiSection>>> sections_;
};

} // namespace stackwalk
