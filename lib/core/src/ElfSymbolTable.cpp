#include "stackwalk/core/ElfSymbolTable.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"

#include <algorithm>

using namespace llvm;
using namespace llvm::object;

namespace stackwalk {

namespace {

// Symbols LLVM marks format-specific (ELFObjectFile::getSymbolFlags) and
// its symbolizer leaves out: ARM's and AArch64's mapping symbols.
bool isMappingSymbol(unsigned machine, StringRef name) {
  if (machine == ELF::EM_AARCH64) return name.starts_with("$d") || name.starts_with("$x");
  if (machine == ELF::EM_ARM)
    return name.empty() || name.starts_with("$d") || name.starts_with("$t") || name.starts_with("$a");
  return false;
}

bool isCodeOrDataType(unsigned type) {
  // STT_NOTYPE too: functions written in assembly often have no type.
  return type == ELF::STT_NOTYPE || type == ELF::STT_FUNC || type == ELF::STT_OBJECT || type == ELF::STT_GNU_IFUNC;
}

} // namespace

template <typename ELFT> class ElfSymbolTableReader {
  using Shdr = typename ELFT::Shdr;
  using Sym = typename ELFT::Sym;

public:
  static std::optional<ElfSymbolTable> read(const ELFFile<ELFT> &file) {
    unsigned machine = file.getHeader().e_machine;
    // A relocatable file's symbols are offsets in their sections, which LLVM adds.
    if (file.getHeader().e_type == ELF::ET_REL) return std::nullopt;
    if (machine != ELF::EM_X86_64 && machine != ELF::EM_386 && machine != ELF::EM_ARM && machine != ELF::EM_AARCH64)
      return std::nullopt;
    auto sections = file.sections();
    if (!sections) return consumeError(sections.takeError()), std::nullopt;
    for (const Shdr &section : *sections)
      if (section.sh_type == ELF::SHT_SYMTAB_SHNDX) return std::nullopt;
    const Shdr *table = tableLlvmReads(*sections);
    ElfSymbolTable result;
    if (!table) return result;
    auto symbols = file.symbols(table);
    if (!symbols) return consumeError(symbols.takeError()), std::nullopt;
    auto strings = file.getStringTableForSymtab(*table, *sections);
    if (!strings) return consumeError(strings.takeError()), std::nullopt;
    if (symbols->size() > INT32_MAX) return std::nullopt; // Entry::localIndex's 31 bits
    result.strings_ = *strings;
    std::vector<LabelEnd> labelEnds;
    if (!addSymbols(file, *sections, *symbols, result, labelEnds)) return std::nullopt;
    keepOnePerAddress(result.entries_);
    endLabelsWithTheirSections(result.entries_, labelEnds);
    return result;
  }

  // As LLVM's computeSymbolSizes: .symtab if it has a symbol past the null one, else .dynsym
  // (the first of each type); null when neither has.
  static const Shdr *tableLlvmReads(ArrayRef<Shdr> sections) {
    const Shdr *symtab = nullptr, *dynsym = nullptr;
    for (const Shdr &section : sections) {
      if (section.sh_type == ELF::SHT_SYMTAB && !symtab) symtab = &section;
      if (section.sh_type == ELF::SHT_DYNSYM && !dynsym) dynsym = &section;
    }
    auto count = [](const Shdr *table) { return table ? table->sh_size / sizeof(Sym) : 0; };
    const Shdr *table = count(symtab) > 1 ? symtab : dynsym;
    return count(table) > 1 ? table : nullptr;
  }

  // The table LLVM's symbolizer reads.
  static bool namesInBounds(const ELFFile<ELFT> &file) {
    auto sections = file.sections();
    if (!sections) return consumeError(sections.takeError()), false;
    const Shdr *table = tableLlvmReads(*sections);
    return !table || tableNamesInBounds(file, *sections, *table);
  }

  // Every symbol table, as SymbolRef::getName reads them through symbols() and the dynamic symbols.
  static bool allNamesInBounds(const ELFFile<ELFT> &file) {
    auto sections = file.sections();
    if (!sections) return consumeError(sections.takeError()), false;
    return std::all_of(sections->begin(), sections->end(), [&](const Shdr &table) {
      return (table.sh_type != ELF::SHT_SYMTAB && table.sh_type != ELF::SHT_DYNSYM) ||
             tableNamesInBounds(file, *sections, table);
    });
  }

private:
  using Entry = ElfSymbolTable::Entry;
  // Where the section of a symbol whose size is 0 ends.
  struct LabelEnd {
    uint64_t start, sectionEnd;
  };

  static bool tableNamesInBounds(const ELFFile<ELFT> &file, ArrayRef<Shdr> sections, const Shdr &table) {
    auto symbols = file.symbols(&table);
    if (!symbols) return consumeError(symbols.takeError()), true; // LLVM errs, reading nothing
    if (symbols->size() < 2) return true; // LLVM's iterators start past the null symbol
    auto strings = file.getStringTableForSymtab(table, sections);
    if (!strings) return consumeError(strings.takeError()), true; // likewise
    for (const Sym &symbol : symbols->drop_front()) {
      // LLVM names a section symbol after its section when its own name is empty or unreadable.
      bool nameless = symbol.st_name >= strings->size() || (*strings)[symbol.st_name] == '\0';
      if (symbol.getType() == ELF::STT_SECTION && nameless &&
          (symbol.st_shndx == ELF::SHN_UNDEF || symbol.st_shndx >= ELF::SHN_LORESERVE))
        return false;
    }
    return true;
  }

  // False where LLVM would refuse the table.
  static bool addSymbols(const ELFFile<ELFT> &file, ArrayRef<Shdr> sections, ArrayRef<Sym> symbols,
                         ElfSymbolTable &table, std::vector<LabelEnd> &labelEnds) {
    unsigned machine = file.getHeader().e_machine;
    table.entries_.reserve(symbols.size());
    for (uint32_t index = 1; index < symbols.size(); ++index) {
      const Sym &symbol = symbols[index];
      // LLVM's symbolizer reads every name, and fails on the first it cannot read.
      if (symbol.st_name >= table.strings_.size()) return false;
      StringRef name(table.strings_.data() + symbol.st_name); // the table ends with a NUL (LLVM checks)
      unsigned type = symbol.getType(), shndx = symbol.st_shndx;
      if (shndx == ELF::SHN_XINDEX) return false;
      bool inSection = shndx != ELF::SHN_UNDEF && shndx < ELF::SHN_LORESERVE && shndx < sections.size();
      // A nameless section symbol is named after its section (AArch64's .dynsym has some).
      if (type == ELF::STT_SECTION && name.empty() && !sectionNameReadable(file, sections, shndx)) return false;
      if (!inSection) {
        if (type == ELF::STT_FILE) table.files_.push_back({index, symbol.st_name});
        continue;
      }
      // Nor symbols of sections not loaded (glibc's link-time warnings, at 0).
      if (!(sections[shndx].sh_flags & ELF::SHF_ALLOC)) continue;
      if (!isCodeOrDataType(type) || isMappingSymbol(machine, name)) continue;
      uint64_t start = symbol.st_value;
      if (machine == ELF::EM_ARM && type == ELF::STT_FUNC) start &= ~uint64_t(1); // the Thumb bit
      uint32_t localIndex = symbol.getBinding() == ELF::STB_LOCAL ? index : 0;
      bool function = type == ELF::STT_FUNC || type == ELF::STT_GNU_IFUNC;
      table.entries_.push_back({start, symbol.st_size, symbol.st_name, localIndex, function});
      if (symbol.st_size == 0) labelEnds.push_back({start, sections[shndx].sh_addr + sections[shndx].sh_size});
    }
    return true;
  }

  // False where LLVM fails on the name: an index past the headers, a name it cannot read. One
  // in no section is left out below, unnamed (LLVM reads a header past the table for it).
  static bool sectionNameReadable(const ELFFile<ELFT> &file, ArrayRef<Shdr> sections, unsigned shndx) {
    if (shndx == ELF::SHN_UNDEF || shndx >= ELF::SHN_LORESERVE) return true;
    if (shndx >= sections.size()) return false;
    auto name = file.getSectionName(sections[shndx]);
    if (!name) consumeError(name.takeError());
    return bool(name);
  }

  // Sorted by start and size, keeping at each start the last: the largest,
  // and the latest in the table among equals, as LLVM's stable sort leaves it.
  static void keepOnePerAddress(std::vector<Entry> &entries) {
    std::stable_sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) {
      return a.start != b.start ? a.start < b.start : a.size < b.size;
    });
    auto kept = entries.begin();
    for (auto run = entries.begin(); run != entries.end();) {
      auto next = std::find_if(run, entries.end(), [&](const auto &entry) { return entry.start != run->start; });
      *kept++ = *std::prev(next);
      run = next;
    }
    entries.erase(kept, entries.end());
  }

  // A kept symbol of size 0 names up to the next one or its section's end
  // (ElfSymbolTable.h), whichever comes first: an entry that names nothing
  // is put where its section ends first, and one at or past its section's end
  // (glibc's _edata) names nothing itself. `labelEnds` are in the table's
  // order, as the entries were: of labels at one address the last is kept.
  static void endLabelsWithTheirSections(std::vector<Entry> &entries, std::vector<LabelEnd> &labelEnds) {
    if (labelEnds.empty()) return;
    std::stable_sort(labelEnds.begin(), labelEnds.end(),
                     [](const LabelEnd &a, const LabelEnd &b) { return a.start < b.start; });
    std::vector<Entry> bounded;
    bounded.reserve(entries.size() + labelEnds.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      Entry entry = entries[i];
      bounded.push_back(entry);
      if (entry.size != 0) continue;
      auto label = std::upper_bound(labelEnds.begin(), labelEnds.end(), entry.start,
                                    [](uint64_t start, const LabelEnd &end) { return start < end.start; });
      uint64_t sectionEnd = std::prev(label)->sectionEnd; // the kept label's: one of this start is listed
      uint64_t next = i + 1 < entries.size() ? entries[i + 1].start : UINT64_MAX;
      if (sectionEnd <= entry.start) bounded.back() = {entry.start, 0, NoName, 0, 0};
      else if (sectionEnd < next) bounded.push_back({sectionEnd, 0, NoName, 0, 0});
    }
    entries = std::move(bounded);
  }

  static constexpr uint32_t NoName = ElfSymbolTable::NoName;
};

std::optional<ElfSymbolTable> ElfSymbolTable::read(const ObjectFile &object) {
  if (const auto *elf = dyn_cast<ELF64LEObjectFile>(&object)) return ElfSymbolTableReader<ELF64LE>::read(elf->getELFFile());
  if (const auto *elf = dyn_cast<ELF32LEObjectFile>(&object)) return ElfSymbolTableReader<ELF32LE>::read(elf->getELFFile());
  return std::nullopt;
}

namespace {

// The table LLVM's symbolizer reads, or every table.
template <class ELFT> bool namesInBounds(const ELFFile<ELFT> &file, bool everyTable) {
  using Reader = ElfSymbolTableReader<ELFT>;
  return everyTable ? Reader::allNamesInBounds(file) : Reader::namesInBounds(file);
}

bool namesInBounds(const ObjectFile &object, bool everyTable) {
  if (const auto *elf = dyn_cast<ELF64LEObjectFile>(&object)) return namesInBounds(elf->getELFFile(), everyTable);
  if (const auto *elf = dyn_cast<ELF32LEObjectFile>(&object)) return namesInBounds(elf->getELFFile(), everyTable);
  return true;
}

} // namespace

bool llvmReadsSymbolNamesInBounds(const ObjectFile &object) { return namesInBounds(object, /*everyTable=*/false); }

bool llvmReadsAllSymbolNamesInBounds(const ObjectFile &object) { return namesInBounds(object, /*everyTable=*/true); }

ElfSymbolTable::Symbol ElfSymbolTable::describe(const Entry &entry) const {
  Symbol symbol{StringRef(strings_.data() + entry.name), entry.start, entry.size, StringRef(), bool(entry.function)};
  if (entry.localIndex) {
    // The ELF spec puts a file's STT_FILE symbol before its local symbols.
    auto after = std::upper_bound(files_.begin(), files_.end(), entry.localIndex,
                                  [](uint32_t index, const FileSymbol &file) { return index < file.index; });
    if (after != files_.begin()) symbol.file = StringRef(strings_.data() + std::prev(after)->name);
  }
  return symbol;
}

std::optional<ElfSymbolTable::Symbol> ElfSymbolTable::at(uint64_t address) const {
  auto after = std::upper_bound(entries_.begin(), entries_.end(), address,
                                [](uint64_t at, const Entry &entry) { return at < entry.start; });
  if (after == entries_.begin()) return std::nullopt;
  const Entry &entry = *std::prev(after);
  if (entry.name == NoName || (entry.size != 0 && entry.start + entry.size <= address)) return std::nullopt;
  return describe(entry);
}

std::vector<ElfSymbolTable::Symbol> ElfSymbolTable::named(StringRef name) const {
  std::vector<Symbol> found;
  for (const Entry &entry : entries_)
    if (entry.name != NoName && StringRef(strings_.data() + entry.name) == name) found.push_back(describe(entry));
  return found;
}

} // namespace stackwalk
