// Code that registered its unwind info with libunwind's _U_dyn_register: the
// records on the process's `_U_dyn_info_list`, read from the dump.
//
// Two formats unwind x86-64 code: tables of (start, FDE) pairs pointing at
// DWARF CFI in memory (UNW_INFO_FORMAT_TABLE, _REMOTE_TABLE), and procedure
// info (UNW_INFO_FORMAT_DYNAMIC): regions of directives, which libunwind's own
// x86-64 unwinder does not implement. libunwind defines those directives for
// IA-64; on x86-64 stackwalk reads them so:
//   - a region's insn_count and an op's `when` count bytes; a region with a
//     negative insn_count covers that many bytes at the procedure's end;
//   - an op takes effect once the instruction ending at byte `when` of its
//     region has run; ops may come in any order;
//   - ADD(reg, v): reg += v (the stack pointer's moves);
//   - SPILL_SP_REL(reg, off): reg stored at the stack pointer as it is after
//     that instruction + off; SPILL_FP_REL(reg, off): stored at rbp + off;
//   - SAVE_REG(reg, dst): reg copied into dst (rsp into rbp sets up a frame);
//   - POP_FRAMES: the frame is gone (the return address is at the stack
//     pointer); LABEL_STATE/COPY_STATE save and restore the state;
//     ALIAS(addr): the rules of the procedure at addr; STOP ends a region;
//   - the return address is at the stack pointer the procedure was entered with.
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace stackwalk {

struct DynamicProcedure {
  enum class Format { ProcInfo, Table, RemoteTable };
  uint64_t start = 0, end = 0;
  Format format = Format::ProcInfo;
  std::string name;        // the procedure's name, or the table's
  uint64_t regions = 0;    // proc-info: the first unw_dyn_region_info_t
  uint64_t segbase = 0;    // tables: what the entries are relative to
  uint64_t tableEntries = 0;
  uint64_t tableData = 0;
};

// The records on _U_dyn_info_list (found through the modules' symbol tables).
// Bounded and cycle-safe; problems become warnings.
std::vector<DynamicProcedure> readLibunwindDynamicInfo(const Target &target, std::vector<std::string> &warnings);

class CfiSection;

class LibunwindDynamicUnwinder : public Unwinder {
public:
  explicit LibunwindDynamicUnwinder(std::vector<DynamicProcedure> procedures);
  ~LibunwindDynamicUnwinder() override;
  FrameTrust trust() const override { return FrameTrust::Dynamic; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

  // The registered procedure covering an address (for naming frames).
  const DynamicProcedure *procedureAt(uint64_t address) const;

private:
  UnwindResult unwindTable(const DynamicProcedure &procedure, const Frame &frame, const Target &target);
  UnwindResult unwindProcInfo(const DynamicProcedure &procedure, const Frame &frame, const Target &target,
                              unsigned aliasDepth);

  std::vector<DynamicProcedure> procedures_;
  struct FdeWindow;
  std::map<uint64_t, std::unique_ptr<FdeWindow>> fdes_; // by FDE address
};

} // namespace stackwalk
