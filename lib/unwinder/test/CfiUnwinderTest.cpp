// The DWARF CFI unwinder end to end, in the manner of rust-minidump's
// per-unwinder tests: a hand-built ELF image (one PT_LOAD, .text, .eh_frame,
// .debug_frame) placed in a Target as a module, and a synthetic stack. Each
// case checks the caller's exact registers, or the refusal and its reason.
// (CfiSectionTest.cpp tests finding FDEs and the DW_CFA operations; this
// tests what CfiUnwinder makes of the rows.)
#include "SyntheticStack.h"

#include "stackwalk/unwinder/CfiUnwinder.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/BinaryFormat/ELF.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace stackwalk;
using namespace stackwalk::synthetic;
using namespace llvm::dwarf;

namespace {

// Where things are. The image loads at file address 0 (its PT_LOAD's vaddr),
// so the load bias is the module's base.
constexpr uint64_t Base = 0x7f0000000000, ImageSize = 0x2000;
constexpr uint64_t EhFrameAt = 0x400, DebugFrameAt = 0x800, ShstrtabAt = 0xc00, ShdrsAt = 0xd00, TextAt = 0x1000;
constexpr uint64_t Stack = 0x7ffd0000, StackSize = 0x100;

// Functions (file addresses) and what their CFI says:
//   F   0x1000-0x1040  CIE: CFA = rsp+8, rip at CFA-8.
//                      0x1001: CFA = rsp+16, rbp at CFA-16.
//                      0x1004: CFA = rsp+32, rbx at CFA-24, r12 undefined,
//                              r13 same value, r14 in rax.
//   Outer 0x1040-0x1050  rip undefined: the outermost frame.
//   (0x1050-0x1060: no CFI anywhere)
//   Tramp 0x1060-0x1080  a CIE with 'S' (signal frame): CFA = rsp+8, rip at CFA-8.
//   Dbg 0x1080-0x10a0  only in .debug_frame: CFA = rsp+16, rip at CFA-8.
//   Fp  0x10a0-0x10c0  CFA = rbp+16, rip at CFA-8, rbp at CFA-16.
//   Bad 0x10c0-0x10e0  a program with an opcode that does not exist.
//   EhReturn 0x10e0-0x1100  CFA = rsp+0, rip in rcx (libgcc's eh_return epilogue at its jmp *%rcx).
constexpr uint64_t F = 0x1000, FEnd = 0x1040, Outer = 0x1040, Gap = 0x1050, Tramp = 0x1060, Dbg = 0x1080,
                   Fp = 0x10a0, Bad = 0x10c0, EhReturn = 0x10e0;

struct Bytes : std::vector<uint8_t> {
  void u8(uint8_t v) { push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) push_back(uint8_t(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) push_back(uint8_t(v >> (8 * i)));
  }
  void set32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) (*this)[at + i] = uint8_t(v >> (8 * i));
  }
  void ops(std::initializer_list<uint8_t> bytes) { insert(end(), bytes); }
  void pad() {
    while (size() % 4) u8(DW_CFA_nop);
  }
};

// .eh_frame: CIEs with pc-relative FDE pointers, placed at EhFrameAt.
struct EhFrame {
  Bytes b;
  // CFA = rsp+8, rip at CFA-8; code alignment 1, data alignment -8.
  size_t cie(const char *augmentation) {
    size_t at = b.size();
    b.u32(0);
    b.u32(0); // CIE id
    b.u8(1);
    b.insert(b.end(), augmentation, augmentation + std::strlen(augmentation) + 1);
    b.ops({1, 0x78, Rip, 1, DW_EH_PE_pcrel | DW_EH_PE_sdata4});
    b.ops({DW_CFA_def_cfa, Rsp, 8, DW_CFA_offset | Rip, 1});
    b.pad();
    b.set32(at, uint32_t(b.size() - at - 4));
    return at;
  }
  void fde(size_t cie, uint64_t begin, uint32_t size, std::initializer_list<uint8_t> program) {
    size_t at = b.size();
    b.u32(0);
    b.u32(uint32_t(b.size() - cie)); // CIE pointer: back from this field
    b.u32(uint32_t(begin - (EhFrameAt + b.size())));
    b.u32(size);
    b.u8(0); // augmentation data length
    b.ops(program);
    b.pad();
    b.set32(at, uint32_t(b.size() - at - 4));
  }
};

Bytes ehFrame() {
  EhFrame e;
  size_t plain = e.cie("zR");
  e.fde(plain, F, FEnd - F,
        {DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16, DW_CFA_offset | Rbp, 2,
         DW_CFA_advance_loc | 3, DW_CFA_def_cfa_offset, 32, DW_CFA_offset | Rbx, 3, DW_CFA_undefined, R12,
         DW_CFA_same_value, R13, DW_CFA_register, R14, Rax});
  e.fde(plain, Outer, 0x10, {DW_CFA_undefined, Rip});
  e.fde(plain, Fp, 0x20, {DW_CFA_def_cfa, Rbp, 16, DW_CFA_offset | Rbp, 2});
  e.fde(plain, Bad, 0x20, {0x3f});
  e.fde(plain, EhReturn, 0x20, {DW_CFA_def_cfa_offset, 0, DW_CFA_register, Rip, Rcx});
  size_t signal = e.cie("zRS");
  e.fde(signal, Tramp, 0x20, {});
  e.b.u32(0); // terminator
  return e.b;
}

// .debug_frame: absolute addresses, CIE id 0xffffffff, no augmentation.
Bytes debugFrame() {
  Bytes b;
  b.u32(0);
  b.u32(0xffffffff);
  b.u8(1);
  b.u8(0); // ""
  b.ops({1, 0x78, Rip, DW_CFA_def_cfa, Rsp, 16, DW_CFA_offset | Rip, 1});
  b.pad();
  b.set32(0, uint32_t(b.size() - 4));
  size_t fde = b.size();
  b.u32(0);
  b.u32(0); // the CIE's offset
  b.u64(Dbg);
  b.u64(0x20);
  b.pad();
  b.set32(fde, uint32_t(b.size() - fde - 4));
  return b;
}

template <typename T> void put(std::vector<uint8_t> &bytes, size_t at, const T &value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

// arm64's .eh_frame: a CIE with the return address in x30 and no rule for
// it (CFA = sp, as GCC writes it), and four functions.
//   Leaf     0x1000-0x1040  no instructions: the return address is still in x30.
//   NonLeaf  0x1040-0x1080  from 0x1044: CFA = sp+16, x29 at CFA-16, x30 at CFA-8.
//   Framed   0x1080-0x10c0  GCC's layout (stp x29, x30, [sp, #-48]!; mov x29, sp;
//                           str x19, [sp, #16]), from 0x1084: CFA = sp+48, x29 at
//                           CFA-48, x30 at CFA-40, x19 at CFA-32.
//   Unpaired 0x10c0-0x1100  from 0x10c4: CFA = sp+48, x29 at CFA-48, x30 at CFA-24:
//                           no frame record.
constexpr unsigned X29 = 29, X30 = 30, Sp = 31, Pc = 32;
constexpr uint64_t Leaf = 0x1000, NonLeaf = 0x1040, Framed = 0x1080, Unpaired = 0x10c0;

Bytes arm64EhFrame() {
  EhFrame e;
  size_t at = e.b.size();
  e.b.u32(0);
  e.b.u32(0);
  e.b.u8(1);
  e.b.ops({'z', 'R', 0});
  e.b.ops({4, 0x78, X30, 1, DW_EH_PE_pcrel | DW_EH_PE_sdata4}); // code alignment 4, data -8
  e.b.ops({DW_CFA_def_cfa, Sp, 0});
  e.b.pad();
  e.b.set32(at, uint32_t(e.b.size() - at - 4));
  e.fde(at, Leaf, 0x40, {});
  e.fde(at, NonLeaf, 0x40, {DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16, DW_CFA_offset | X29, 2,
                            DW_CFA_offset | X30, 1});
  e.fde(at, Framed, 0x40, {DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 48, DW_CFA_offset | X29, 6,
                           DW_CFA_offset | X30, 5, DW_CFA_offset | 19, 4});
  e.fde(at, Unpaired, 0x40, {DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 48, DW_CFA_offset | X29, 6,
                             DW_CFA_offset | X30, 3});
  e.b.u32(0);
  return e.b;
}

// A 64-bit ELF shared object: one PT_LOAD over the whole file at vaddr 0 and
// the sections .text, .eh_frame, .debug_frame and .shstrtab.
std::vector<uint8_t> elfImage(const Bytes &eh, const Bytes &debug, uint16_t machine = llvm::ELF::EM_X86_64,
                              uint64_t debugFrameFlags = 0) {
  using namespace llvm::ELF;
  std::vector<uint8_t> file(ImageSize, 0);
  REQUIRE(eh.size() <= DebugFrameAt - EhFrameAt);
  REQUIRE(debug.size() <= ShstrtabAt - DebugFrameAt);
  std::copy(eh.begin(), eh.end(), file.begin() + EhFrameAt);
  std::copy(debug.begin(), debug.end(), file.begin() + DebugFrameAt); // arm64's image has no .debug_frame
  const char names[] = "\0.text\0.eh_frame\0.debug_frame\0.shstrtab";
  std::memcpy(&file[ShstrtabAt], names, sizeof names);
  std::fill(file.begin() + TextAt, file.end(), 0xcc);

  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, "\x7f" "ELF", 4);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_DYN;
  header.e_machine = machine;
  header.e_version = EV_CURRENT;
  header.e_phoff = sizeof(Elf64_Ehdr);
  header.e_shoff = ShdrsAt;
  header.e_ehsize = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = 1;
  header.e_shentsize = sizeof(Elf64_Shdr);
  header.e_shnum = 5;
  header.e_shstrndx = 4;
  put(file, 0, header);

  Elf64_Phdr load{};
  load.p_type = PT_LOAD;
  load.p_flags = PF_R | PF_X;
  load.p_filesz = load.p_memsz = ImageSize;
  load.p_align = 0x1000;
  put(file, sizeof(Elf64_Ehdr), load);

  auto section = [&](unsigned index, uint32_t name, uint32_t type, uint64_t flags, uint64_t address, uint64_t offset,
                     uint64_t size) {
    Elf64_Shdr s{};
    s.sh_name = name;
    s.sh_type = type;
    s.sh_flags = flags;
    s.sh_addr = address;
    s.sh_offset = offset;
    s.sh_size = size;
    s.sh_addralign = 1;
    put(file, ShdrsAt + index * sizeof(Elf64_Shdr), s);
  };
  section(1, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, TextAt, TextAt, ImageSize - TextAt);
  section(2, 7, SHT_PROGBITS, SHF_ALLOC, EhFrameAt, EhFrameAt, eh.size());
  section(3, 17, SHT_PROGBITS, debugFrameFlags, 0, DebugFrameAt, debug.size());
  section(4, 30, SHT_STRTAB, 0, 0, ShstrtabAt, sizeof names);
  return file;
}

struct Fixture {
  std::vector<uint8_t> stack = std::vector<uint8_t>(StackSize, 0);
  std::shared_ptr<ModuleImage> image;
  std::unique_ptr<Target> built;
  bool dynamic = false;
  Arch arch;

  explicit Fixture(Arch arch = Arch::X86_64) : arch(arch) {
    bool arm64 = arch == Arch::Arm64;
    auto parsed = ModuleImage::fromBytes(arm64 ? elfImage(arm64EhFrame(), Bytes(), llvm::ELF::EM_AARCH64)
                                               : elfImage(ehFrame(), debugFrame()),
                                         "app.so");
    if (!parsed) FAIL(llvm::toString(parsed.takeError()));
    image = std::shared_ptr<ModuleImage>(std::move(*parsed));
  }
  void word(uint64_t offset, uint64_t value) { std::memcpy(&stack[offset], &value, 8); }

  const Target &target() {
    if (built) return *built;
    Module app = makeModule("app.so", Base, ImageSize, image);
    app.dynamic = dynamic;
    built = makeTarget(arch, OS::Linux, makeMemory({{Stack, stack}}), {}, {app});
    return *built;
  }

  // A frame at a file address of the image; `exact` for the context frame
  // (else ip is a return address).
  Frame frame(uint64_t fileAddress, uint64_t sp, bool exact) {
    if (arch == Arch::Arm64) return makeFrame(target(), Base + fileAddress, sp, exact ? FrameTrust::Context : FrameTrust::Cfi, {}, arch);
    return makeFrame(target(), Base + fileAddress, sp, exact ? FrameTrust::Context : FrameTrust::Cfi,
                     {Rax, Rdx, Rcx, Rbx, Rbp, Rsi, Rdi, R12, R13, R14, R15});
  }
};

constexpr uint64_t ReturnAddress = Base + 0x1234, SavedRbp = 0x7ffd00f0, SavedRbx = 0x7777;

} // namespace

TEST_CASE("CfiUnwinder: a compressed .debug_frame that does not inflate is named as the reason", "[cfi]") {
  Fixture fx;
  Bytes chdr; // Elf64_Chdr: a compression type LLVM does not know, 64 bytes, align 1; then junk
  chdr.u32(99);
  chdr.u32(0);
  chdr.u64(64);
  chdr.u64(1);
  chdr.u32(0xdeadbeef);
  auto parsed = ModuleImage::fromBytes(elfImage(Bytes(), chdr, llvm::ELF::EM_X86_64, llvm::ELF::SHF_COMPRESSED), "app.so");
  REQUIRE(bool(parsed));
  fx.image = std::shared_ptr<ModuleImage>(std::move(*parsed));
  CfiUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(0x1010, Stack, true), fx.target());
  CHECK(r.status == UnwindResult::Status::NoInfo);
  CHECK(r.detail.starts_with("damaged CFI in app.so: its compressed .debug_frame does not inflate: "));
}

TEST_CASE("CfiUnwinder: the synthetic image is an ELF module with .eh_frame and .debug_frame", "[cfi]") {
  Fixture fx;
  CHECK(fx.image->isElf());
  CHECK(fx.image->preferredBase() == 0);
  REQUIRE(fx.image->section(".eh_frame"));
  CHECK(fx.image->section(".eh_frame")->address == EhFrameAt);
  CHECK(fx.image->section(".debug_frame"));
  CHECK(fx.target().moduleAt(Base + F)->loadBias() == Base);
  CfiUnwinder unwinder;
  CHECK(unwinder.trust() == FrameTrust::Cfi);
}

TEST_CASE("CfiUnwinder: at a function's entry, CFA = rsp+8 and the return address at CFA-8", "[cfi]") {
  Fixture fx;
  fx.word(0x00, ReturnAddress);
  CfiUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(F, Stack, /*exact=*/true), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 8);
  // No rules yet: the callee-saved registers are the callee's, the others unknown.
  CHECK(r.caller.get(Rbx) == 0xbbbbu);
  CHECK(r.caller.get(Rbp) == 0xb0b0u);
  CHECK(r.caller.get(R12) == 0x1212u);
  CHECK(known(r.caller) == std::vector<unsigned>{Rbx, Rbp, Rsp, R12, R13, R14, R15, Rip});
  CHECK_FALSE(r.callerIpIsExact);
  CHECK_FALSE(r.callerIpFromRegister); // from the stack
  CHECK_FALSE(r.trust);
  CHECK(r.detail.empty());
}

TEST_CASE("CfiUnwinder: a return address in a register (DW_CFA_register rip), the stack already the caller's",
          "[cfi]") {
  Fixture fx;
  Frame frame = fx.frame(EhReturn, Stack, /*exact=*/true);
  UnwindResult r = CfiUnwinder().unwind(frame, fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == frame.regs.get(Rcx));
  CHECK(r.caller.sp() == Stack);
  CHECK(r.callerIpFromRegister); // the walk lets such a caller share the interrupted frame's sp
}

TEST_CASE("CfiUnwinder: callee-saved registers restored from the stack, an undefined one unknown", "[cfi]") {
  // At 0x1010: CFA = rsp+32; rip at CFA-8, rbp at CFA-16, rbx at CFA-24.
  Fixture fx;
  fx.word(0x18, ReturnAddress);
  fx.word(0x10, SavedRbp);
  fx.word(0x08, SavedRbx);
  fx.word(0x00, 0xdeadbeef); // nothing reads this
  CfiUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(F + 0x10, Stack, /*exact=*/true), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 32);
  CHECK(r.caller.get(Rbp) == SavedRbp); // DW_CFA_offset: read from the stack
  CHECK(r.caller.get(Rbx) == SavedRbx);
  CHECK_FALSE(r.caller.isKnown(R12));   // DW_CFA_undefined, although callee-saved
  CHECK(r.caller.get(R13) == 0x1313u);  // DW_CFA_same_value
  CHECK(r.caller.get(R14) == 0xaaaau);  // DW_CFA_register r14 rax: the value of the callee's rax
  CHECK(r.caller.get(R15) == 0x1515u);  // callee-saved without a rule
  // rax, rcx, rdx, rsi, rdi: volatile without a rule, unknown.
  CHECK(known(r.caller) == std::vector<unsigned>{Rbx, Rbp, Rsp, R13, R14, R15, Rip});
  CHECK_FALSE(r.callerIpIsExact);
}

TEST_CASE("CfiUnwinder: a return address is looked up at the call, one byte before it", "[cfi]") {
  // A return address at the end of F (0x1040) belongs to F's last row, not to
  // Outer, which starts there and would end the stack.
  Fixture fx;
  fx.word(0x18, ReturnAddress);
  fx.word(0x10, SavedRbp);
  fx.word(0x08, SavedRbx);
  CfiUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(FEnd, Stack, /*exact=*/false), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 32);
  CHECK(r.caller.get(Rbx) == SavedRbx);

  UnwindResult exact = unwinder.unwind(fx.frame(Outer, Stack, /*exact=*/true), fx.target());
  CHECK(exact.status == Status::EndOfStack);
}

TEST_CASE("CfiUnwinder: which addresses begin an FDE's function", "[cfi]") {
  Fixture fx;
  CfiUnwinder unwinder;
  CHECK(unwinder.startsFunctionAt(Base + F, fx.target()));
  CHECK(unwinder.startsFunctionAt(Base + Outer, fx.target())); // where F ends
  CHECK_FALSE(unwinder.startsFunctionAt(Base + F + 0x10, fx.target()));
  CHECK_FALSE(unwinder.startsFunctionAt(Stack, fx.target())); // no module
}

TEST_CASE("CfiUnwinder: DW_CFA_undefined rip marks the outermost frame", "[cfi]") {
  Fixture fx;
  fx.word(0x00, ReturnAddress); // there, but the CFI says there is no caller
  CfiUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(Outer + 4, Stack, /*exact=*/true), fx.target());
  CHECK(r.status == Status::EndOfStack);
  CHECK(r.detail == "the CFI marks the return address undefined (outermost frame)");
  CHECK_FALSE(r.caller.pc());
}

TEST_CASE("CfiUnwinder: no FDE covers the address, or there is no module file", "[cfi]") {
  Fixture fx;
  fx.word(0x00, ReturnAddress);
  CfiUnwinder unwinder;
  UnwindResult gap = unwinder.unwind(fx.frame(Gap + 8, Stack, /*exact=*/true), fx.target());
  CHECK(gap.status == Status::NoInfo);
  CHECK(gap.detail == "no CFI covers 0x7f0000001058 in app.so");
  // Past the last FDE, in the module.
  UnwindResult past = unwinder.unwind(fx.frame(0x1800, Stack, /*exact=*/true), fx.target());
  CHECK(past.status == Status::NoInfo);
  CHECK(past.detail == "no CFI covers 0x7f0000001800 in app.so");

  Frame outside = fx.frame(F, Stack, /*exact=*/true);
  outside.module = nullptr;
  UnwindResult none = unwinder.unwind(outside, fx.target());
  CHECK(none.status == Status::NoInfo);
  CHECK(none.detail == "no module file covers 0x7f0000001000");
  Module withoutFile = makeModule("app.so", Base, ImageSize);
  outside.module = &withoutFile;
  UnwindResult noFile = unwinder.unwind(outside, fx.target());
  CHECK(noFile.status == Status::NoInfo);
  CHECK(noFile.detail == "no module file covers 0x7f0000001000");
  CHECK_FALSE(unwinder.isSignalTrampoline(outside, fx.target()));
}

TEST_CASE("CfiUnwinder: .debug_frame is asked when .eh_frame has no FDE", "[cfi]") {
  Fixture fx;
  fx.word(0x08, ReturnAddress);
  CfiUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(Dbg + 4, Stack, /*exact=*/true), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 16);
  CHECK(r.caller.get(Rbp) == 0xb0b0u);
}

TEST_CASE("CfiUnwinder: an 'S' augmentation marks a signal trampoline, whose caller was interrupted", "[cfi]") {
  Fixture fx;
  fx.word(0x00, ReturnAddress);
  CfiUnwinder unwinder;
  Frame trampoline = fx.frame(Tramp, Stack, /*exact=*/true);
  CHECK(unwinder.isSignalTrampoline(trampoline, fx.target()));
  CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(F + 0x10, Stack, true), fx.target()));
  CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(Dbg, Stack, true), fx.target()));
  CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(Gap, Stack, true), fx.target()));
  UnwindResult r = unwinder.unwind(trampoline, fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 8);
  CHECK(r.callerIpIsExact);
}

TEST_CASE("CfiUnwinder: a CFA from an unknown register, a return address outside the dump", "[cfi]") {
  // Fp: CFA = rbp+16, rip at CFA-8, rbp at CFA-16.
  Fixture fx;
  fx.word(0x48, ReturnAddress);
  fx.word(0x40, SavedRbp);
  CfiUnwinder unwinder;
  Frame frame = fx.frame(Fp + 4, Stack, /*exact=*/true);
  frame.regs.set(Rbp, Stack + 0x40);
  UnwindResult r = unwinder.unwind(frame, fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 0x50);
  CHECK(r.caller.get(Rbp) == SavedRbp);

  frame.regs.forget(Rbp);
  UnwindResult noCfa = unwinder.unwind(frame, fx.target());
  CHECK(noCfa.status == Status::NoInfo);
  CHECK(noCfa.detail == "the CFA cannot be computed: register 6 is unknown in the callee");

  frame.regs.set(Rbp, 0x1000); // CFA 0x1010: nothing of the dump there
  UnwindResult lost = unwinder.unwind(frame, fx.target());
  CHECK(lost.status == Status::NoInfo);
  CHECK(lost.detail == "the return address cannot be read: the saved value at 0x1008 is not in the dump");
}

TEST_CASE("CfiUnwinder: a saved register outside the dump is unknown, the caller still found", "[cfi]") {
  // Fp with rbp such that the saved rbp (CFA-16) is just below the stack but
  // the return address (CFA-8) is in it.
  Fixture fx;
  fx.word(0x00, ReturnAddress);
  CfiUnwinder unwinder;
  Frame frame = fx.frame(Fp + 4, Stack, /*exact=*/true);
  frame.regs.set(Rbp, Stack - 8); // CFA = Stack + 8
  UnwindResult r = unwinder.unwind(frame, fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 8);
  CHECK_FALSE(r.caller.isKnown(Rbp));
  CHECK(known(r.caller) == std::vector<unsigned>{Rbx, Rsp, R12, R13, R14, R15, Rip});
}

TEST_CASE("CfiUnwinder: damaged CFI is named as the reason", "[cfi]") {
  Fixture fx;
  fx.word(0x00, ReturnAddress);
  CfiUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(Bad + 4, Stack, /*exact=*/true), fx.target());
  CHECK(r.status == Status::NoInfo);
  CHECK(r.detail.rfind("damaged CFI in app.so: ", 0) == 0);
  CHECK(r.detail.size() > std::string("damaged CFI in app.so: ").size());
}

TEST_CASE("CfiUnwinder: damaged CFI is named as the reason also when asked again", "[cfi]") {
  // A second thread through the same function (or the same thread after a
  // scan) must not read "no CFI covers ...", which would hide the damage.
  Fixture fx;
  fx.word(0x00, ReturnAddress);
  CfiUnwinder unwinder;
  UnwindResult first = unwinder.unwind(fx.frame(Bad + 4, Stack, /*exact=*/true), fx.target());
  REQUIRE(first.detail.rfind("damaged CFI in app.so: ", 0) == 0);
  UnwindResult again = unwinder.unwind(fx.frame(Bad + 4, Stack, /*exact=*/true), fx.target());
  CHECK(again.status == Status::NoInfo);
  CHECK(again.detail == first.detail);
}

TEST_CASE("CfiUnwinder: a module registered at run time gives its callers the trust Dynamic", "[cfi]") {
  Fixture fx;
  fx.dynamic = true;
  fx.word(0x00, ReturnAddress);
  CfiUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(F, Stack, /*exact=*/true), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.trust == FrameTrust::Dynamic);
  CHECK(r.caller.pc() == ReturnAddress);
  // Only callers: the end of the stack is not "dynamic".
  UnwindResult end = unwinder.unwind(fx.frame(Outer, Stack, /*exact=*/true), fx.target());
  CHECK(end.status == Status::EndOfStack);
  CHECK_FALSE(end.trust);
}

TEST_CASE("CfiUnwinder on arm64: a function that has not saved x30 returns to it", "[cfi][arm64]") {
  Fixture fx(Arch::Arm64);
  Frame leaf = fx.frame(Leaf + 8, Stack, /*exact=*/true);
  leaf.regs.set(X30, ReturnAddress);
  leaf.regs.set(X29, SavedRbp);
  leaf.regs.set(19, 0x1919);
  CfiUnwinder unwinder;
  UnwindResult r = unwinder.unwind(leaf, fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack); // a leaf moves no stack pointer
  CHECK(r.caller.get(X29) == SavedRbp);
  CHECK(r.caller.get(19) == 0x1919u);
  // The caller's x30 is not known: the leaf's is the return address, not the caller's own.
  CHECK(known(r.caller) == std::vector<unsigned>{19, X29, Sp, Pc});

  SECTION("without x30, no caller") {
    leaf.regs.forget(X30);
    CHECK(unwinder.unwind(leaf, fx.target()).status == Status::NoInfo);
  }
}

TEST_CASE("CfiUnwinder on arm64: a saved x30 is read from the stack", "[cfi][arm64]") {
  Fixture fx(Arch::Arm64);
  fx.word(0x00, SavedRbp);
  fx.word(0x08, ReturnAddress);
  Frame frame = fx.frame(NonLeaf + 0x10, Stack, /*exact=*/true);
  frame.regs.set(X30, Base + 0x1010); // stale: the return from a call this function made
  UnwindResult r = CfiUnwinder().unwind(frame, fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 16);
  CHECK(r.caller.get(X29) == SavedRbp);
  CHECK(r.caller.get(X30) == ReturnAddress);
}

TEST_CASE("CfiUnwinder on arm64: a frame found by its callee's frame record takes its CFA from its own record",
          "[cfi][arm64]") {
  // The frame's callee had no CFI: the walk stepped through the callee's
  // record at Stack+0x20, which gave this frame's x29 exactly (Stack+0x40,
  // where its own record is) but only a bound on its sp (the record's end,
  // Stack+0x30). Its true sp is Stack+0x40 and its CFA Stack+0x70.
  Fixture fx(Arch::Arm64);
  constexpr uint64_t Stale = Base + 0x1010;
  fx.word(0x30, Stack + 0x90); // where a CFA from the bound finds x29 ...
  fx.word(0x38, Stale);        // ... and x30: a return address left by an earlier call
  fx.word(0x40, SavedRbp);     // the frame's record
  fx.word(0x48, ReturnAddress);
  fx.word(0x50, 0x1919); // its x19
  Frame frame = fx.frame(Framed + 0x10, Stack + 0x30, /*exact=*/false);
  frame.regs.set(X29, Stack + 0x40);
  frame.spIsLowerBound = true;
  CfiUnwinder unwinder;

  SECTION("the CFA is x29 + 48, where the row saves the record") {
    UnwindResult r = unwinder.unwind(frame, fx.target());
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == ReturnAddress);
    CHECK(r.caller.sp() == Stack + 0x70);
    CHECK(r.caller.get(X29) == SavedRbp);
    CHECK(r.caller.get(19) == 0x1919u);
  }
  SECTION("an exact stack pointer is taken as it is") {
    frame.spIsLowerBound = false;
    CHECK(unwinder.unwind(frame, fx.target()).caller.pc() == Stale);
    frame.sp = Stack + 0x40;
    frame.regs.setSp(Stack + 0x40);
    CHECK(unwinder.unwind(frame, fx.target()).caller.sp() == Stack + 0x70);
  }
  SECTION("x29 below the bound is no record of this frame: the bound is used") {
    frame.regs.set(X29, Stack + 0x20);
    CHECK(unwinder.unwind(frame, fx.target()).caller.pc() == Stale);
  }
  SECTION("a row that saves x29 and x30 apart describes no record: the bound is used") {
    Frame unpaired = fx.frame(Unpaired + 0x10, Stack + 0x30, /*exact=*/false);
    unpaired.regs.set(X29, Stack + 0x40);
    unpaired.spIsLowerBound = true;
    UnwindResult r = unwinder.unwind(unpaired, fx.target());
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.sp() == Stack + 0x60);
  }
}
