#include "stackwalk/unwinder/CfiUnwinder.h"

#include "CfiDescription.h"
#include "CfiSection.h"
#include "FrameRecordAnchor.h"
#include "stackwalk/core/Hex.h"

#include "stackwalk/core/DwarfExpression.h"
#include "stackwalk/core/Fail.h"

#include "llvm/Object/Decompressor.h"

using namespace llvm;
using namespace llvm::dwarf;

namespace stackwalk {
namespace {

// Whether a rule reads the saved value from memory ("at") rather than being
// the value ("is"). LLVM 19's UnwindLocation keeps this flag private; its
// operator== compares it, so ask by comparing with the "at" form.
bool isDereferenced(const UnwindLocation &loc) {
  switch (loc.getLocation()) {
  case UnwindLocation::CFAPlusOffset: return loc == UnwindLocation::createAtCFAPlusOffset(loc.getOffset());
  case UnwindLocation::RegPlusOffset:
    return loc == UnwindLocation::createAtRegisterPlusOffset(loc.getRegister(), loc.getOffset());
  case UnwindLocation::DWARFExpr:
    return loc.getDWARFExpressionBytes() &&
           loc == UnwindLocation::createAtDWARFExpression(*loc.getDWARFExpressionBytes());
  default: return false;
  }
}

Triple::ArchType tripleArch(Arch arch) {
  switch (arch) {
  case Arch::Arm64: return Triple::aarch64;
  case Arch::X86: return Triple::x86;
  case Arch::Arm: return Triple::arm;
  default: return Triple::x86_64;
  }
}

// Applies one row of the unwind table to the callee's registers.
class RowEvaluator {
public:
  RowEvaluator(const UnwindRow &row, const Frame &frame, const Target &target)
      : row_(row), frame_(frame), callee_(frame.regs), target_(target) {}

  Expected<uint64_t> cfa() {
    const UnwindLocation &loc = row_.getCFAValue();
    Expected<uint64_t> value = locationValue(loc, std::nullopt);
    if (!value) return value.takeError();
    cfa_ = anchoredOnFrameRecord(loc).value_or(*value);
    return *cfa_;
  }

  // The caller's value of a register, nullopt when it cannot be recovered.
  Expected<std::optional<uint64_t>> callerValue(unsigned reg, bool calleeSaved) {
    std::optional<UnwindLocation> loc = row_.getRegisterLocations().getRegisterLocation(reg);
    if (!loc || loc->getLocation() == UnwindLocation::Unspecified)
      return calleeSaved ? callee_.get(reg) : std::nullopt;
    switch (loc->getLocation()) {
    case UnwindLocation::Undefined: return std::nullopt;
    case UnwindLocation::Same: return callee_.get(reg);
    default: {
      Expected<uint64_t> value = locationValue(*loc, cfa_);
      if (!value) return value.takeError();
      return std::optional<uint64_t>(*value);
    }
    }
  }

private:
  // Frame::spIsLowerBound: the CFA from the frame's own record (FrameRecordAnchor.h).
  std::optional<uint64_t> anchoredOnFrameRecord(const UnwindLocation &cfaRule) const {
    if (!mayAnchorOnFrameRecord(frame_)) return std::nullopt;
    FrameRecordRules rules;
    rules.cfaFromStackPointer =
        cfaRule.getLocation() == UnwindLocation::RegPlusOffset && cfaRule.getRegister() == callee_.spRegister();
    auto savedAt = [&](std::optional<unsigned> reg) -> std::optional<int64_t> {
      if (!reg) return std::nullopt;
      std::optional<UnwindLocation> loc = row_.getRegisterLocations().getRegisterLocation(*reg);
      if (!loc || loc->getLocation() != UnwindLocation::CFAPlusOffset || !isDereferenced(*loc)) return std::nullopt;
      return int64_t(loc->getOffset());
    };
    rules.framePointerSavedAt = savedAt(callee_.fpRegister());
    rules.returnAddressSavedAt = savedAt(callee_.linkRegister());
    return cfaFromFrameRecord(frame_, rules, pointerSize(target_.arch()));
  }

  Expected<uint64_t> locationValue(const UnwindLocation &loc, std::optional<uint64_t> cfa) {
    uint64_t address = 0;
    switch (loc.getLocation()) {
    case UnwindLocation::CFAPlusOffset:
      if (!cfa) return fail("a CFA rule refers to the CFA");
      address = *cfa + int64_t(loc.getOffset());
      break;
    case UnwindLocation::RegPlusOffset: {
      std::optional<uint64_t> base = callee_.get(loc.getRegister());
      if (!base) return fail("register " + Twine(loc.getRegister()) + " is unknown in the callee");
      address = *base + int64_t(loc.getOffset());
      break;
    }
    case UnwindLocation::DWARFExpr: {
      std::optional<DWARFExpression> expr = loc.getDWARFExpressionBytes();
      if (!expr) return fail("a DWARF expression rule without an expression");
      StringRef bytes = expr->getData();
      DwarfExpressionContext context;
      context.memory = &target_;
      context.registers = &callee_;
      context.addressSize = pointerSize(target_.arch());
      context.cfa = cfa;
      // Register rules start with the CFA pushed (DWARF 5 section 6.4.2.3).
      std::vector<uint64_t> initial;
      if (cfa) initial.push_back(*cfa);
      auto result = evaluateDwarfExpression({reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()},
                                            context, initial);
      if (!result) return result.takeError();
      if (result->kind == DwarfExpressionResult::Kind::Register) {
        std::optional<uint64_t> v = callee_.get(unsigned(result->value));
        if (!v) return fail("an expression names an unknown register");
        return *v;
      }
      address = result->value;
      break;
    }
    case UnwindLocation::Constant: return uint64_t(int64_t(loc.getConstant()));
    default: return fail("unexpected CFI rule");
    }
    if (!isDereferenced(loc)) return address;
    std::optional<uint64_t> value = target_.readPointer(address, pointerSize(target_.arch()));
    if (!value) return fail("the saved value at " + hex(address) + " is not in the dump");
    return *value;
  }

  const UnwindRow &row_;
  const Frame &frame_;
  const RegisterFile &callee_;
  const Target &target_;
  std::optional<uint64_t> cfa_;
};

} // namespace

UnwindResult applyEntry(const CfiSection::Entry &entry, uint64_t fileAddress, const Frame &frame,
                        const Target &target) {
  const UnwindRow *row = rowAt(entry.table, fileAddress);
  if (!row) return UnwindResult::noInfo("the FDE has no row for " + hex(frame.ip));
  RowEvaluator evaluator(*row, frame, target);
  Expected<uint64_t> cfa = evaluator.cfa();
  if (!cfa) return UnwindResult::noInfo("the CFA cannot be computed: " + toString(cfa.takeError()));

  unsigned raRegister = unsigned(entry.returnAddressRegister);
  std::optional<UnwindLocation> raRule = row->getRegisterLocations().getRegisterLocation(raRegister);
  if (raRule && raRule->getLocation() == UnwindLocation::Undefined)
    return UnwindResult::endOfStack("the CFI marks the return address undefined (outermost frame)");

  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = RegisterFile(frame.regs.arch());
  result.callerIpIsExact = entry.signalFrame;
  RegisterFile &caller = result.caller;
  for (const RegisterInfo &info : frame.regs.layout()) {
    if (info.number == caller.pcRegister()) continue;
    // Without a rule, only a callee-saved register keeps its value in the caller.
    bool carried = frame.regs.isCalleeSaved(info.number, target.os());
    auto value = evaluator.callerValue(info.number, carried);
    if (!value) {
      consumeError(value.takeError());
      continue;
    }
    if (*value) caller.set(info.number, **value);
  }
  // The CFA is by definition the caller's stack pointer, unless a rule says otherwise.
  std::optional<UnwindLocation> spRule = row->getRegisterLocations().getRegisterLocation(caller.spRegister());
  if (!spRule || spRule->getLocation() == UnwindLocation::Unspecified ||
      spRule->getLocation() == UnwindLocation::Same)
    caller.setSp(*cfa);
  // Where the return address arrives in a register of its own (arm64's x30),
  // a function that has not saved it (a leaf, or a prologue) leaves it there:
  // CIEs give that register no initial rule, and gdb and libgcc read no rule
  // as "same value". Where the column is the pc itself, no rule is no answer.
  bool raInRegister = raRegister != caller.pcRegister();
  auto ra = evaluator.callerValue(raRegister, raInRegister);
  if (!ra) return UnwindResult::noInfo("the return address cannot be read: " + toString(ra.takeError()));
  if (!*ra) return UnwindResult::noInfo("the CFI gives no rule for the return address");
  caller.setPc(**ra);
  // `DW_CFA_register`: the return address is in another register, not on the stack.
  result.callerIpFromRegister = raRule && raRule->getLocation() == UnwindLocation::RegPlusOffset &&
                                !isDereferenced(*raRule);
  return result;
}

CfiUnwinder::CfiUnwinder() = default;
CfiUnwinder::~CfiUnwinder() = default;


namespace {

// A section of call frame information and the file it is in.
struct CfiSource {
  CfiSection::Kind kind;
  const ModuleImage &file;
  ModuleImage::Section section;
  std::optional<ModuleImage::Section> hdr;
};

// An image's CFI in the order it is asked: .eh_frame (with .eh_frame_hdr),
// then .debug_frame of the image and of its debug file.
std::vector<CfiSource> cfiSources(const ModuleImage &image) {
  std::vector<CfiSource> sources;
  if (auto ehFrame = image.section(".eh_frame"))
    sources.push_back({CfiSection::Kind::EhFrame, image, *ehFrame, image.section(".eh_frame_hdr")});
  for (const ModuleImage *file : {&image, image.debugImage()})
    if (file)
      if (auto debugFrame = file->section(".debug_frame"))
        sources.push_back({CfiSection::Kind::DebugFrame, *file, *debugFrame, std::nullopt});
  return sources;
}

// How much a compressed CFI section may claim: far more than any real one
// (glibc's .debug_frame inflates to a few hundred KiB), far less than a bomb.
constexpr uint64_t MaxInflatedCfiBytes = 64 << 20;

// A compressed section's bytes (ARM debug files keep their CFI in a
// compressed .debug_frame), inflated by LLVM into `storage`; an error when
// they cannot be, or claim too much.
Expected<StringRef> inflated(const ModuleImage &file, const ModuleImage::Section &section,
                             std::vector<uint8_t> &storage) {
  auto decompressor = object::Decompressor::create(".debug_frame", section.data, /*IsLE=*/true,
                                                   file.object().getBytesInAddress() == 8);
  if (!decompressor) return decompressor.takeError();
  if (decompressor->getDecompressedSize() > MaxInflatedCfiBytes)
    return fail("it claims " + Twine(decompressor->getDecompressedSize()) + " bytes");
  if (Error error = decompressor->resizeAndDecompress(storage)) return error;
  return StringRef(reinterpret_cast<const char *>(storage.data()), storage.size());
}

} // namespace

std::vector<std::unique_ptr<CfiSection>> &CfiUnwinder::sectionsFor(const ModuleImage &image, Arch arch) {
  auto found = sections_.find(&image);
  if (found != sections_.end()) return found->second;
  std::vector<std::unique_ptr<CfiSection>> &sections = sections_[&image];
  for (const CfiSource &source : cfiSources(image)) {
    StringRef data = source.section.data;
    if (source.section.compressed) {
      auto bytes = inflated(source.file, source.section, inflated_[&image].emplace_back());
      if (!bytes) {
        uninflated_[&image] = "its compressed .debug_frame does not inflate: " + toString(bytes.takeError());
        continue;
      }
      data = *bytes;
    }
    sections.push_back(std::make_unique<CfiSection>(source.kind, data, source.section.address, tripleArch(arch),
                                                    source.hdr ? source.hdr->data : StringRef(),
                                                    source.hdr ? source.hdr->address : 0));
  }
  return sections;
}

Expected<std::vector<std::string>> CfiUnwinder::describe(const Module &module, uint64_t address, Arch arch) {
  if (!module.image) return fail(module.name + " has no file here: its CFI cannot be read");
  uint64_t fileAddress = address - module.loadBias();
  std::vector<CfiSource> sources = cfiSources(*module.image);
  std::vector<std::unique_ptr<CfiSection>> &sections = sectionsFor(*module.image, arch);
  for (size_t i = 0; i < sections.size(); ++i) {
    auto entry = sections[i]->find(fileAddress);
    if (!entry) return entry.takeError();
    if (!*entry) continue;
    bool isEh = sources[i].kind == CfiSection::Kind::EhFrame;
    std::vector<std::string> out{std::string(isEh ? ".eh_frame" : ".debug_frame") + " of " + sources[i].file.path() +
                                 " (file address " + hex(fileAddress) + ")"};
    describeCfiEntry(out, **entry, fileAddress, arch, isEh);
    return out;
  }
  return fail("no CFI covers " + hex(address) + " in " + module.name);
}

struct CfiUnwinder::Found {
  const ModuleImage *image = nullptr;
  uint64_t ip = 0; // as `why` says it
  uint64_t fileAddress = 0;
  const CfiSection::Entry *entry = nullptr;
  std::string why;
};

bool CfiUnwinder::startsFunctionAt(uint64_t address, const Target &target) {
  Frame entry;
  entry.ip = address;
  entry.module = target.moduleAt(address);
  const Found &found = find(entry, target);
  return found.entry && found.entry->fde->getInitialLocation() == found.fileAddress;
}

const CfiUnwinder::Found &CfiUnwinder::find(const Frame &frame, const Target &target) {
  const ModuleImage *image = frame.module ? frame.module->image.get() : nullptr;
  uint64_t fileAddress = image ? frame.lookupAddress() - frame.module->loadBias() : 0;
  if (image && last_ && last_->image == image && last_->ip == frame.ip && last_->fileAddress == fileAddress)
    return *last_;
  last_ = std::make_unique<Found>(lookUp(frame, target));
  return *last_;
}

CfiUnwinder::Found CfiUnwinder::lookUp(const Frame &frame, const Target &target) {
  Found found;
  if (!frame.module || !frame.module->image) {
    found.why = "no module file covers " + hex(frame.ip);
    return found;
  }
  found.image = frame.module->image.get();
  found.ip = frame.ip;
  found.fileAddress = frame.lookupAddress() - frame.module->loadBias();
  std::string damage;
  for (auto &section : sectionsFor(*frame.module->image, target.arch())) {
    auto entry = section->find(found.fileAddress);
    if (!entry) {
      damage = toString(entry.takeError());
      continue;
    }
    if ((found.entry = *entry)) return found;
  }
  if (auto uninflated = uninflated_.find(frame.module->image.get()); damage.empty() && uninflated != uninflated_.end())
    damage = uninflated->second;
  found.why = damage.empty() ? "no CFI covers " + hex(frame.ip) + " in " + frame.module->name
                             : "damaged CFI in " + frame.module->name + ": " + damage;
  return found;
}

UnwindResult CfiUnwinder::unwind(const Frame &frame, const Target &target) {
  const Found &found = find(frame, target);
  if (!found.entry) return UnwindResult::noInfo(found.why);
  UnwindResult result = applyEntry(*found.entry, found.fileAddress, frame, target);
  // Unwind info that the process registered at run time.
  if (frame.module->dynamic && result.status == UnwindResult::Status::Caller) result.trust = FrameTrust::Dynamic;
  return result;
}

bool CfiUnwinder::isSignalTrampoline(const Frame &frame, const Target &target) {
  const CfiSection::Entry *entry = find(frame, target).entry;
  return entry && entry->signalFrame;
}

} // namespace stackwalk
