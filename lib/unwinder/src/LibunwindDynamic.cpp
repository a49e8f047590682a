#include "stackwalk/unwinder/LibunwindDynamic.h"

#include "CfiSection.h"
#include "stackwalk/core/Hex.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace stackwalk {
namespace {

constexpr size_t MaxRecords = 4096, MaxRegions = 256, MaxOps = 1024, MaxAliasDepth = 4;
constexpr uint64_t MaxFdeBytes = 64 * 1024, MaxTableEntries = 1 << 20;
constexpr unsigned Rsp = 7, Rbp = 6;

// unw_dyn_info_t (x86-64): next 0, prev 8, start_ip 16, end_ip 24, gp 32,
// format 40, pad 44, load_offset 48, then the union at 56.
struct RecordLayout {
  static constexpr uint64_t Next = 0, Start = 16, End = 24, Format = 40, Union = 56;
};

enum Op : int8_t { Stop = 0, SaveReg = 1, SpillFpRel = 2, SpillSpRel = 3, Add = 4, PopFrames = 5, LabelState = 6,
                   CopyState = 7, Alias = 8 };

struct DynOp {
  int8_t tag;
  int16_t reg;
  int32_t when;
  uint64_t val;
};

// Where a caller's register is, relative to the frame.
struct Rule {
  enum Kind { InRegister, AtEntrySp, AtFramePointer } kind;
  int64_t value; // register number or offset
};

struct State {
  int64_t spDelta = 0;                  // sum of ADDs to rsp so far
  std::optional<unsigned> spSavedIn;    // register holding rsp after a SAVE_REG(rsp, dst)
  int64_t spDeltaAtSave = 0;
  bool popped = false;
  std::map<unsigned, Rule> rules;
};

// The caller's registers from the state the ops left: the return address
// is at the stack pointer the procedure was entered with.
UnwindResult callerFrom(const State &state, const Frame &frame, const Target &target) {
  auto sp = frame.regs.sp();
  if (!sp) return UnwindResult::noInfo("the stack pointer is unknown");
  uint64_t entrySp;
  if (state.popped) {
    entrySp = *sp;
  } else if (state.spSavedIn) {
    auto saved = frame.regs.get(*state.spSavedIn);
    if (!saved) return UnwindResult::noInfo("the register holding the stack pointer is unknown");
    entrySp = *saved - state.spDeltaAtSave;
  } else {
    entrySp = *sp - state.spDelta;
  }
  auto ra = target.readValue<uint64_t>(entrySp);
  if (!ra) return UnwindResult::noInfo("the return address at " + hex(entrySp) + " is not in the dump");
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = frame.regs.calleeSavedOnly(target.os());
  auto fp = frame.regs.get(Rbp);
  for (auto [reg, rule] : state.rules) {
    std::optional<uint64_t> value;
    if (rule.kind == Rule::InRegister) value = frame.regs.get(unsigned(rule.value));
    else if (rule.kind == Rule::AtEntrySp) value = target.readValue<uint64_t>(entrySp + rule.value);
    else if (fp) value = target.readValue<uint64_t>(*fp + rule.value);
    if (value) result.caller.set(reg, *value);
    else result.caller.forget(reg);
  }
  result.caller.setSp(entrySp + 8);
  result.caller.setPc(*ra);
  return result;
}

// `_U_dyn_info_list` is hidden in Debian's libunwind (no .symtab); its
// exported `_U_dyn_info_list_addr` returns it with `lea rax, [rip + disp32]`.
std::optional<uint64_t> listAddress(const Target &target) {
  for (const Module &module : target.modules) {
    if (!module.image) continue;
    if (auto address = module.image->symbolAddress("_U_dyn_info_list")) return *address + module.loadBias();
    auto getter = module.image->symbolAddress("_U_dyn_info_list_addr");
    if (!getter) continue;
    uint8_t code[7];
    uint64_t at = *getter + module.loadBias();
    if (!target.read(at, code) || code[0] != 0x48 || code[1] != 0x8d || code[2] != 0x05) continue;
    int32_t displacement;
    std::memcpy(&displacement, code + 3, 4);
    return at + 7 + int64_t(displacement);
  }
  return std::nullopt;
}

} // namespace

std::vector<DynamicProcedure> readLibunwindDynamicInfo(const Target &target, std::vector<std::string> &warnings) {
  std::vector<DynamicProcedure> out;
  auto list = listAddress(target);
  if (!list || target.arch() != Arch::X86_64) return out;
  // unw_dyn_info_list_t: u32 version, u32 generation, unw_dyn_info_t *first.
  auto record = target.readValue<uint64_t>(*list + 8);
  std::set<uint64_t> visited;
  for (; record && *record; record = target.readValue<uint64_t>(*record + RecordLayout::Next)) {
    if (!visited.insert(*record).second || visited.size() > MaxRecords) {
      warnings.push_back("libunwind's dynamic unwind-info list loops or is too long; the rest is ignored");
      break;
    }
    auto start = target.readValue<uint64_t>(*record + RecordLayout::Start);
    auto end = target.readValue<uint64_t>(*record + RecordLayout::End);
    auto format = target.readValue<int32_t>(*record + RecordLayout::Format);
    uint64_t u = *record + RecordLayout::Union;
    auto name = target.readValue<uint64_t>(u);
    if (!start || !end || !format || !name || *end <= *start) {
      warnings.push_back("libunwind dynamic unwind info at " + hex(*record) + " is unreadable or empty; skipped");
      continue;
    }
    DynamicProcedure procedure;
    procedure.start = *start;
    procedure.end = *end;
    procedure.name = *name ? target.readCString(*name, 256).value_or("") : "";
    if (*format == 0) { // UNW_INFO_FORMAT_DYNAMIC: name, handler, flags+pad, regions
      procedure.format = DynamicProcedure::Format::ProcInfo;
      procedure.regions = target.readValue<uint64_t>(u + 24).value_or(0);
    } else if (*format == 1 || *format == 2) { // TABLE / REMOTE_TABLE: name, segbase, table_len, table_data
      procedure.format = *format == 1 ? DynamicProcedure::Format::Table : DynamicProcedure::Format::RemoteTable;
      procedure.segbase = target.readValue<uint64_t>(u + 8).value_or(0);
      // table_len counts unw_word_t units, and an entry (two int32s) is one unit on x86-64.
      procedure.tableEntries = target.readValue<uint64_t>(u + 16).value_or(0);
      procedure.tableData = target.readValue<uint64_t>(u + 24).value_or(0);
      if (procedure.tableEntries > MaxTableEntries) {
        warnings.push_back("libunwind dynamic table at " + hex(*record) + " claims too many entries; skipped");
        continue;
      }
    } else {
      continue; // ARM exception index tables, IP offsets: not x86-64 formats
    }
    out.push_back(std::move(procedure));
  }
  return out;
}

struct LibunwindDynamicUnwinder::FdeWindow {
  std::vector<uint8_t> bytes;
  std::unique_ptr<CfiSection> section;
};

LibunwindDynamicUnwinder::LibunwindDynamicUnwinder(std::vector<DynamicProcedure> procedures)
    : procedures_(std::move(procedures)) {}
LibunwindDynamicUnwinder::~LibunwindDynamicUnwinder() = default;

const DynamicProcedure *LibunwindDynamicUnwinder::procedureAt(uint64_t address) const {
  for (const DynamicProcedure &procedure : procedures_)
    if (address >= procedure.start && address < procedure.end) return &procedure;
  return nullptr;
}

UnwindResult LibunwindDynamicUnwinder::unwind(const Frame &frame, const Target &target) {
  const DynamicProcedure *procedure = procedureAt(frame.lookupAddress());
  if (!procedure) return UnwindResult::noInfo(""); // not code the process registered
  if (procedure->format == DynamicProcedure::Format::ProcInfo) return unwindProcInfo(*procedure, frame, target, 0);
  return unwindTable(*procedure, frame, target);
}

// Table entries {int32 start_ip_offset, int32 fde_offset} relative to
// segbase point at FDEs in the process's memory: the FDE and its CIE are
// copied out and read as a small .eh_frame.
UnwindResult LibunwindDynamicUnwinder::unwindTable(const DynamicProcedure &procedure, const Frame &frame,
                                                   const Target &target) {
  uint64_t pc = frame.lookupAddress();
  std::optional<int32_t> fdeOffset;
  for (uint64_t lo = 0, hi = procedure.tableEntries; lo < hi;) {
    uint64_t mid = lo + (hi - lo) / 2;
    auto start = target.readValue<int32_t>(procedure.tableData + mid * 8);
    if (!start) return UnwindResult::noInfo("the dynamic unwind table at " + hex(procedure.tableData) + " is unreadable");
    if (procedure.segbase + int64_t(*start) <= pc) {
      fdeOffset = target.readValue<int32_t>(procedure.tableData + mid * 8 + 4);
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (!fdeOffset) return UnwindResult::noInfo("no dynamic unwind table entry covers " + hex(frame.ip));
  uint64_t fde = procedure.segbase + int64_t(*fdeOffset);
  auto &window = fdes_[fde];
  if (!window) {
    window = std::make_unique<FdeWindow>();
    auto length = target.readValue<uint32_t>(fde);
    auto ciePointer = target.readValue<uint32_t>(fde + 4);
    if (length && ciePointer && *length < MaxFdeBytes && *ciePointer <= fde + 4) {
      uint64_t cie = fde + 4 - *ciePointer;
      uint64_t first = std::min(cie, fde), last = fde + 4 + *length;
      window->bytes.resize(last > first && last - first < MaxFdeBytes ? last - first : 0);
      if (!window->bytes.empty() && target.read(first, window->bytes))
        window->section = std::make_unique<CfiSection>(
            CfiSection::Kind::EhFrame,
            llvm::StringRef(reinterpret_cast<const char *>(window->bytes.data()), window->bytes.size()), first,
            llvm::Triple::x86_64);
    }
  }
  if (!window->section) return UnwindResult::noInfo("the FDE at " + hex(fde) + " is not in the dump");
  auto entry = window->section->find(pc);
  if (!entry) return UnwindResult::noInfo("the FDE at " + hex(fde) + ": " + llvm::toString(entry.takeError()));
  if (!*entry) return UnwindResult::noInfo("the FDE at " + hex(fde) + " does not cover " + hex(frame.ip));
  return applyEntry(**entry, pc, frame, target);
}

UnwindResult LibunwindDynamicUnwinder::unwindProcInfo(const DynamicProcedure &procedure, const Frame &frame,
                                                      const Target &target, unsigned aliasDepth) {
  // The instruction at an exact pc has not run; a return address follows
  // the call that has.
  uint64_t executed = frame.ip - procedure.start;
  uint64_t position = frame.lookupAddress() - procedure.start;
  uint64_t length = procedure.end - procedure.start;
  State state;
  std::map<uint64_t, State> labels;
  uint64_t regionStart = 0;
  std::set<uint64_t> visited;
  for (std::optional<uint64_t> region = procedure.regions; region && *region;
       region = target.readValue<uint64_t>(*region)) {
    if (!visited.insert(*region).second || visited.size() > MaxRegions)
      return UnwindResult::noInfo("the regions of " + procedure.name + " loop");
    auto count = target.readValue<int32_t>(*region + 8);
    auto opCount = target.readValue<uint32_t>(*region + 12);
    if (!count || !opCount || *opCount > MaxOps)
      return UnwindResult::noInfo("a region of " + procedure.name + " is unreadable or has too many ops");
    // A negative count is a region at the procedure's end.
    uint64_t start = *count < 0 ? length - std::min<uint64_t>(length, uint64_t(-int64_t(*count))) : regionStart;
    uint64_t size = *count < 0 ? uint64_t(-int64_t(*count)) : uint64_t(*count);
    if (*count >= 0) regionStart += size;
    if (position < start) continue;
    std::vector<DynOp> ops;
    for (uint32_t i = 0; i < *opCount; ++i) {
      uint64_t at = *region + 16 + uint64_t(i) * 16;
      auto tag = target.readValue<int8_t>(at);
      auto reg = target.readValue<int16_t>(at + 2);
      auto when = target.readValue<int32_t>(at + 4);
      auto val = target.readValue<uint64_t>(at + 8);
      if (!tag || !reg || !when || !val) return UnwindResult::noInfo("an op of " + procedure.name + " is unreadable");
      if (*tag == Stop) break;
      ops.push_back({*tag, *reg, *when, *val});
    }
    // In order of `when`; at one `when`, the stack pointer's moves first, so a
    // spill relative to it sees the instruction's own push.
    std::stable_sort(ops.begin(), ops.end(), [](const DynOp &a, const DynOp &b) {
      return a.when != b.when ? a.when < b.when : (a.tag == Add && b.tag != Add);
    });
    bool inside = position < start + size;
    for (const DynOp &op : ops) {
      if (inside && (op.when < 0 || uint64_t(op.when) > executed - std::min(executed, start))) break;
      switch (op.tag) {
      case Add:
        if (op.reg != Rsp) return UnwindResult::noInfo(procedure.name + ": ADD to a register other than rsp");
        if (__builtin_add_overflow(state.spDelta, int64_t(op.val), &state.spDelta))
          return UnwindResult::noInfo(procedure.name + ": the stack adjustments overflow");
        break;
      case SpillSpRel: {
        int64_t offset;
        if (__builtin_add_overflow(state.spDelta, int64_t(op.val), &offset))
          return UnwindResult::noInfo(procedure.name + ": a spill offset overflows");
        state.rules[unsigned(op.reg)] = {Rule::AtEntrySp, offset};
        break;
      }
      case SpillFpRel: state.rules[unsigned(op.reg)] = {Rule::AtFramePointer, int64_t(op.val)}; break;
      case SaveReg:
        if (op.reg == Rsp) {
          state.spSavedIn = unsigned(op.val);
          state.spDeltaAtSave = state.spDelta;
        } else {
          state.rules[unsigned(op.reg)] = {Rule::InRegister, int64_t(op.val)};
        }
        break;
      case PopFrames: state.popped = true; break;
      case LabelState: labels[op.val] = state; break;
      case CopyState:
        if (auto saved = labels.find(op.val); saved != labels.end()) state = saved->second;
        break;
      case Alias: {
        const DynamicProcedure *alias = procedureAt(op.val);
        if (!alias || alias == &procedure || aliasDepth >= MaxAliasDepth)
          return UnwindResult::noInfo(procedure.name + ": an alias that leads nowhere or loops");
        Frame shifted = frame;
        shifted.ip = alias->start + (frame.ip - procedure.start);
        return unwindProcInfo(*alias, shifted, target, aliasDepth + 1);
      }
      default: return UnwindResult::noInfo(procedure.name + ": unknown dynamic unwind op " + std::to_string(op.tag));
      }
    }
    if (inside) break;
  }
  return callerFrom(state, frame, target);
}

} // namespace stackwalk
