#include "stackwalk/elfcore/ElfCoreLoader.h"

#include "stackwalk/elfcore/CoreModules.h"
#include "stackwalk/elfcore/CoreNotes.h"

#include "stackwalk/core/DumpedMemory.h"
#include "stackwalk/core/ElfHeaders.h"
#include "stackwalk/core/ElfNotes.h"
#include "stackwalk/core/Fail.h"
#include "stackwalk/core/ListedIds.h"
#include "stackwalk/core/Signals.h"

#include "llvm/BinaryFormat/ELF.h"

#include <algorithm>
#include <cstring>

using namespace llvm;
using llvm::ELF::Elf32_Ehdr;
using llvm::ELF::Elf32_Shdr;
using llvm::ELF::Elf64_Shdr;

namespace stackwalk {

namespace {

// A 16-bit field of the ELF header (e_type, e_machine) in the file's own byte order.
uint16_t headerHalf(std::span<const uint8_t> head, size_t offset) {
  bool big = head[ELF::EI_DATA] == ELF::ELFDATA2MSB;
  return big ? uint16_t(head[offset] << 8 | head[offset + 1]) : uint16_t(head[offset] | head[offset + 1] << 8);
}

} // namespace

bool looksLikeElfCore(std::span<const uint8_t> head) {
  if (head.size() < sizeof(Elf32_Ehdr) || std::memcmp(head.data(), ELF::ElfMagic, 4) != 0) return false;
  // e_type in the file's own byte order, so that a big-endian core is known
  // as a core (and refused as one, with its machine named).
  return headerHalf(head, 16) == ELF::ET_CORE;
}

namespace elfcore {
namespace {

template <typename T> T loadAt(std::span<const uint8_t> bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

Arch coreArch(uint16_t machine, unsigned wordSize) {
  // x32 (ELF32, EM_X86_64): x86-64 code and registers, 32-bit pointers.
  if (machine == ELF::EM_X86_64) return Arch::X86_64;
  if (wordSize == 8 && machine == ELF::EM_AARCH64) return Arch::Arm64;
  if (wordSize == 4 && machine == ELF::EM_386) return Arch::X86;
  if (wordSize == 4 && machine == ELF::EM_ARM) return Arch::Arm;
  return Arch::Unknown;
}

// Everything the notes say, before it is turned into a Target.
struct CoreNotes {
  std::vector<PrStatus> threads;
  std::optional<PrPsInfo> process;
  std::optional<SigInfo> signal; // the first NT_SIGINFO
  std::optional<size_t> signalThread; // the thread whose NT_PRSTATUS the first NT_SIGINFO follows
  std::vector<std::pair<uint64_t, uint64_t>> auxv;
  std::vector<FileMapping> files;
  bool sawFileNote = false;
  std::optional<uint64_t> pointerAuthMask; // arm64's NT_ARM_PAC_MASK
  // How the notes end early ("cut short by the end of the file"), where they
  // do: the crash's record may be among the notes not read.
  std::string endedEarly;
};

class CoreReader {
public:
  CoreReader(std::shared_ptr<const DumpFile> file) : file_(std::move(file)) {}
  Expected<std::unique_ptr<Target>> load();

private:
  std::span<const uint8_t> bytes() const { return file_->bytes(); }
  Expected<ElfFileHeader> header() const;
  Expected<std::vector<ElfProgramHeader>> programHeaders(const ElfFileHeader &header);
  void readNotes(std::span<const uint8_t> noteBytes, Arch arch, unsigned wordSize, bool cutShort);
  // The program headers give the vDSO's segment.
  void addModules(Target &target, const std::vector<ElfProgramHeader> &phdrs);
  const PrStatus *crashingThread() const;

  std::shared_ptr<const DumpFile> file_;
  unsigned wordSize_ = 8; // the process's pointers: 4 in an ELF32 core (x32's too)
  CoreNotes notes_;
  std::vector<std::string> warnings_;
};

Expected<std::vector<ElfProgramHeader>> CoreReader::programHeaders(const ElfFileHeader &header) {
  bool elf32 = header.wordSize == 4;
  uint64_t count = header.phnum;
  if (count == PN_XNUM) {
    // More than 65535 headers: the real count is in section 0's sh_info.
    size_t sectionSize = elf32 ? sizeof(Elf32_Shdr) : sizeof(Elf64_Shdr);
    if (header.shoff == 0 || header.shoff > bytes().size() || bytes().size() - header.shoff < sectionSize)
      return fail("e_phnum is PN_XNUM but section header 0 is missing");
    count = elf32 ? loadAt<Elf32_Shdr>(bytes(), header.shoff).sh_info : loadAt<Elf64_Shdr>(bytes(), header.shoff).sh_info;
  }
  size_t entrySize = elfProgramHeaderSize(header.wordSize);
  if (count > 0 && header.phentsize != entrySize) return fail("unexpected program header size " + Twine(header.phentsize));
  if (header.phoff > bytes().size()) return fail("the program headers lie past the end of the file");
  uint64_t fit = (bytes().size() - header.phoff) / entrySize;
  if (fit < count) {
    warnings_.push_back("the core is truncated: only " + std::to_string(fit) + " of " + std::to_string(count) +
                        " program headers are present");
    count = fit;
  }
  std::vector<ElfProgramHeader> phdrs;
  phdrs.reserve(count);
  for (uint64_t i = 0; i < count; ++i)
    phdrs.push_back(parseElfProgramHeader(bytes().subspan(header.phoff + i * entrySize), header.wordSize));
  return phdrs;
}

Expected<ElfFileHeader> CoreReader::header() const {
  if (!looksLikeElfCore(bytes())) return fail("not an ELF core file");
  uint8_t elfClass = bytes()[ELF::EI_CLASS], data = bytes()[ELF::EI_DATA];
  uint16_t machine = headerHalf(bytes(), 18);
  std::string what = std::string(elfClass == ELF::ELFCLASS32 ? "a 32-bit" : elfClass == ELF::ELFCLASS64 ? "a 64-bit" : "an") +
                     (data == ELF::ELFDATA2MSB ? " big-endian" : "") + " ELF core of machine " +
                     ELF::convertEMachineToArchName(machine).str() + " (" + std::to_string(machine) + ")";
  if (data != ELF::ELFDATA2LSB) return fail(what + ": stackwalk reads little-endian cores only");
  std::optional<ElfFileHeader> header = parseElfFileHeader(bytes());
  if (!header) return fail(what + ": its ELF class is unknown");
  if (coreArch(header->machine, header->wordSize) == Arch::Unknown)
    return fail(what + ": stackwalk reads x86-64 (and x32), arm64, i386 and ARM cores");
  return *header;
}

// `wordSize`: the core's class (4 in ELF32), which lays out its notes.
// `cutShort`: the file ends before the note segment does.
void CoreReader::readNotes(std::span<const uint8_t> noteBytes, Arch arch, unsigned wordSize, bool cutShort) {
  // Counted first: grown by doubling, the vector would copy a core's 100,000 threads (1.2 KB each) over and over.
  size_t statuses = notes_.threads.size();
  forEachElfNote(noteBytes, [&](const ElfNote &note) {
    statuses += note.name == "CORE" && note.type == NT_PRSTATUS;
    return true;
  });
  notes_.threads.reserve(statuses);
  bool wellFormed = forEachElfNote(noteBytes, [&](const ElfNote &note) {
    if (note.name == "LINUX" && note.type == NT_ARM_PAC_MASK && arch == Arch::Arm64)
      notes_.pointerAuthMask = parsePacInstructionMask(note.desc);
    if (note.name == "LINUX" && note.type == NT_X86_XSTATE && arch == Arch::X86_64 && !notes_.threads.empty() &&
        notes_.threads.back().fpState) // after the thread's NT_PRFPREG
      notes_.threads.back().fpState->addXsave(note.desc);
    if (note.name != "CORE") return true; // other LINUX notes hold other architectures' state
    switch (note.type) {
    case NT_PRSTATUS:
      if (auto status = parsePrStatus(note.desc, arch, wordSize)) notes_.threads.push_back(std::move(*status));
      else warnings_.push_back("an NT_PRSTATUS note is too short; its thread is skipped");
      break;
    case NT_PRFPREG: // the thread's whose NT_PRSTATUS it follows
      if (arch == Arch::X86_64 && !notes_.threads.empty()) notes_.threads.back().fpState = FxsaveArea::parse(note.desc);
      break;
    case NT_PRPSINFO:
      notes_.process = parsePrPsInfo(note.desc, wordSize);
      break;
    case NT_SIGINFO:
      if (notes_.signal) break;
      notes_.signal = parseSigInfo(note.desc, wordSize);
      if (!notes_.threads.empty()) notes_.signalThread = notes_.threads.size() - 1;
      break;
    case NT_AUXV:
      notes_.auxv = parseAuxv(note.desc, wordSize);
      break;
    case NT_FILE:
      notes_.sawFileNote = true;
      notes_.files = parseFileNote(note.desc, wordSize);
      break;
    }
    return true;
  });
  size_t threads = notes_.threads.size();
  if (cutShort) {
    notes_.endedEarly = "cut short by the end of the file";
    warnings_.push_back("the notes are cut short by the end of the file: " + std::to_string(threads) +
                        (threads == 1 ? " thread is" : " threads are") + " read, the notes after " +
                        (threads == 1 ? "it" : "them") + " are missing (more threads among them, perhaps)");
  } else if (!wellFormed) {
    notes_.endedEarly = "malformed";
    warnings_.push_back("a note segment is malformed; notes after the damage are ignored");
  }
}

// The thread that took the signal. The kernel writes it first and gives every
// thread the signal in pr_cursig; .NET's createdump writes the threads in
// its own order, gives only the crashing one a pr_cursig, and follows its
// NT_PRSTATUS with the NT_SIGINFO. So: the thread the NT_SIGINFO follows,
// else the first with a signal, else the first.
const PrStatus *CoreReader::crashingThread() const {
  if (notes_.threads.empty()) return nullptr;
  if (notes_.signalThread) return &notes_.threads[*notes_.signalThread];
  for (const PrStatus &status : notes_.threads)
    if (status.signal) return &status;
  return &notes_.threads.front();
}

void CoreReader::addModules(Target &target, const std::vector<ElfProgramHeader> &phdrs) {
  std::string executable;
  if (auto execfn = auxvValue(notes_.auxv, AT_EXECFN)) executable = target.readCString(*execfn).value_or("");
  if (!notes_.files.empty()) {
    target.modules = modulesFromFileNote(notes_.files, target);
  } else if (auto phdr = auxvValue(notes_.auxv, AT_PHDR)) {
    warnings_.push_back(notes_.sawFileNote ? "the NT_FILE note is malformed; modules come from the link map"
                                           : "no NT_FILE note; modules come from the executable and, when it is dynamic, the link map");
    ExecutableProgramHeaders headers{*phdr, auxvValue(notes_.auxv, AT_PHNUM), wordSize_};
    target.modules = modulesFromLinkMap(headers, executable, target, warnings_);
  } else {
    warnings_.push_back("no NT_FILE note and no auxiliary vector: the module list is unknown");
  }
  if (auto entry = auxvValue(notes_.auxv, AT_ENTRY))
    for (Module &module : target.modules)
      if (module.contains(*entry)) module.isMainExecutable = true;
  if (auto vdso = auxvValue(notes_.auxv, AT_SYSINFO_EHDR)) {
    for (const ElfProgramHeader &ph : phdrs) {
      if (ph.type != ELF::PT_LOAD || *vdso < ph.vaddr || *vdso - ph.vaddr >= ph.memsz) continue;
      if (auto module = vdsoModule(*vdso, ph.vaddr + ph.memsz, target)) target.modules.push_back(std::move(*module));
      else warnings_.push_back(toString(module.takeError()));
    }
  }
}

// What a core cut short lacks: how many bytes, and which threads' stacks (the
// memory from a thread's stack pointer up, where its callers' frames are) lie in
// a segment the file does not hold to its end, so that their walks stop short.
struct Truncation {
  uint64_t missingBytes = 0;
  std::vector<std::pair<uint64_t, uint64_t>> cutSegments; // [start, end) of each PT_LOAD cut short

  bool cutsStackOf(const PrStatus &thread) const {
    std::optional<uint64_t> sp = thread.registers.sp();
    return sp && std::any_of(cutSegments.begin(), cutSegments.end(),
                             [&](const auto &segment) { return *sp >= segment.first && *sp < segment.second; });
  }

  std::string warning(const std::vector<PrStatus> &threads) const {
    std::string text =
        "the core is truncated: " + std::to_string(missingBytes) + " bytes of memory and notes are missing from the file";
    std::vector<uint64_t> cut;
    for (const PrStatus &thread : threads)
      if (cutsStackOf(thread)) cut.push_back(thread.tid);
    return cut.empty() ? text : text + "; " + stacksCutShort(cut);
  }
};

Expected<std::unique_ptr<Target>> CoreReader::load() {
  Expected<ElfFileHeader> header = this->header();
  if (!header) return header.takeError();
  Arch arch = coreArch(header->machine, header->wordSize);
  wordSize_ = header->wordSize;
  auto phdrs = programHeaders(*header);
  if (!phdrs) return phdrs.takeError();

  std::vector<DumpedRange> dumped;
  std::vector<MemoryRegion> regions;
  Truncation truncation;
  for (const ElfProgramHeader &ph : *phdrs) {
    uint64_t present = ph.offset > bytes().size() ? 0 : std::min<uint64_t>(ph.filesz, bytes().size() - ph.offset);
    if (present < ph.filesz) truncation.missingBytes += ph.filesz - present;
    if (ph.type == ELF::PT_NOTE) {
      readNotes(bytes().subspan(std::min<uint64_t>(ph.offset, bytes().size()), present), arch, header->wordSize,
                present < ph.filesz);
    } else if (ph.type == ELF::PT_LOAD && ph.memsz > 0) {
      // Past p_filesz nothing was dumped (a file-backed mapping): the module file may supply it.
      dumped.push_back({ph.vaddr, std::min(present, ph.memsz), ph.offset});
      regions.push_back({ph.vaddr, ph.vaddr + ph.memsz, bool(ph.flags & ELF::PF_R), bool(ph.flags & ELF::PF_W),
                         bool(ph.flags & ELF::PF_X)});
      if (present < ph.filesz) truncation.cutSegments.push_back({ph.vaddr, ph.vaddr + ph.filesz});
    }
  }
  if (truncation.missingBytes) warnings_.push_back(truncation.warning(notes_.threads));

  auto memory = std::make_unique<DumpedMemory>(file_, std::move(dumped));
  auto target = std::make_unique<Target>(arch, OS::Linux, "elf-core", std::move(memory));
  target->regions = std::move(regions);

  if (notes_.process) {
    target->process.pid = notes_.process->pid;
    target->process.name = notes_.process->name;
    target->process.commandLine = notes_.process->arguments;
  }
  // Only a signal whose default action dumps core is a crash: gcore of a
  // running process records the SIGSTOP that stopped it.
  const PrStatus *crashed = crashingThread();
  int signal = notes_.signal ? notes_.signal->signal : crashed ? crashed->signal : 0;
  if (dumpsCore(signal) && crashed) {
    CrashInfo crash;
    crash.threadId = crashed->tid;
    crash.signal = signal;
    crash.name = signalName(signal);
    if (notes_.signal) {
      crash.code = notes_.signal->code;
      crash.codeName = signalCodeName(signal, notes_.signal->code).value_or("");
      crash.address = notes_.signal->source.faultAddress;
      crash.senderPid = notes_.signal->source.senderPid;
      crash.senderUid = notes_.signal->source.senderUid;
    }
    target->crash = crash;
  } else if (!notes_.signal && !notes_.endedEarly.empty()) {
    target->crashUnreadable = "the notes are " + notes_.endedEarly + " before any NT_SIGINFO note";
  }

  // Moved, not copied: a core can hold 100,000 threads of 1.2 KB each.
  target->threads.reserve(notes_.threads.size());
  for (PrStatus &status : notes_.threads) {
    ThreadInfo thread;
    thread.tid = status.tid;
    thread.context = std::move(status.registers);
    thread.fpState = std::move(status.fpState);
    if (status.signal) thread.signal = status.signal;
    target->threads.push_back(std::move(thread));
  }
  notes_.threads = {};
  if (target->threads.empty()) warnings_.push_back("the core has no thread (NT_PRSTATUS) notes");

  target->process.auxv = notes_.auxv;
  target->pointerAuthMask = notes_.pointerAuthMask;
  addModules(*target, *phdrs);
  target->sortModules();
  target->warnings = std::move(warnings_);
  return target;
}

} // namespace
} // namespace elfcore

Expected<std::unique_ptr<Target>> loadElfCore(const std::string &path) {
  auto file = DumpFile::open(path);
  if (!file) return file.takeError();
  return loadElfCore(std::move(*file));
}

Expected<std::unique_ptr<Target>> loadElfCore(std::shared_ptr<const DumpFile> file) {
  return elfcore::CoreReader(std::move(file)).load();
}

} // namespace stackwalk
