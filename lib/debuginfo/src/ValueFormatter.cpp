#include "ValueFormatter.h"

#include "stackwalk/core/Hex.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/DebugInfo/DWARF/DWARFFormValue.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

using namespace llvm;

namespace stackwalk {
namespace {

// gdb's defaults: `set print elements 200`, `set print repeats 10`.
constexpr unsigned MaxElements = 200;
constexpr unsigned RepeatThreshold = 10; // runs longer than this are collapsed
constexpr unsigned MaxDepth = 8;     // nesting of aggregates printed
constexpr size_t MaxText = 4000;     // characters of one value
constexpr unsigned MaxTypeSteps = 32;   // typedef and qualifier chains followed
constexpr unsigned MaxTypeVisits = 256; // types LLVM may visit to name or size one

DWARFDie referencedType(const DWARFDie &die) { return die.getAttributeValueAsReferencedDie(dwarf::DW_AT_type); }

// Typedefs and qualifiers do not change how a value prints.
DWARFDie stripped(DWARFDie type) {
  for (unsigned i = 0; i < MaxTypeSteps && type.isValid(); ++i) {
    switch (type.getTag()) {
    case dwarf::DW_TAG_typedef: case dwarf::DW_TAG_const_type: case dwarf::DW_TAG_volatile_type:
    case dwarf::DW_TAG_restrict_type: case dwarf::DW_TAG_atomic_type:
      type = referencedType(type);
      continue;
    default:
      return type;
    }
  }
  return type;
}

std::optional<uint64_t> unsignedAttribute(const DWARFDie &die, dwarf::Attribute attribute) {
  if (auto value = die.find(attribute)) return value->getAsUnsignedConstant();
  return std::nullopt;
}

bool isCharType(const DWARFDie &type) {
  if (!type.isValid() || type.getTag() != dwarf::DW_TAG_base_type || unsignedAttribute(type, dwarf::DW_AT_byte_size) != 1u) return false;
  auto encoding = unsignedAttribute(type, dwarf::DW_AT_encoding);
  return encoding == uint64_t(dwarf::DW_ATE_signed_char) || encoding == uint64_t(dwarf::DW_ATE_unsigned_char);
}

// One character as gdb escapes it inside `quote`s.
std::string escaped(uint8_t c, char quote) {
  switch (c) {
  case '\a': return "\\a";
  case '\b': return "\\b";
  case '\f': return "\\f";
  case '\n': return "\\n";
  case '\r': return "\\r";
  case '\t': return "\\t";
  case '\v': return "\\v";
  case '\\': return "\\\\";
  }
  if (c == uint8_t(quote)) return std::string("\\") + quote;
  if (c >= 0x20 && c < 0x7f) return std::string(1, char(c));
  char octal[8];
  std::snprintf(octal, sizeof octal, "\\%03o", c);
  return octal;
}

int64_t signExtended(uint64_t v, uint64_t bytes) {
  if (bytes == 0 || bytes >= 8) return int64_t(v);
  unsigned shift = unsigned(64 - 8 * bytes);
  return int64_t(v << shift) >> shift;
}

// Characters as gdb prints a char array or string: quoted runs, with runs of
// ten or more equal characters as `'c' <repeats N times>`.
std::string quotedCharacters(const std::vector<uint8_t> &chars, bool truncated) {
  std::string out, run;
  auto flushRun = [&] {
    if (run.empty()) return;
    if (!out.empty()) out += ", ";
    out.append(1, '"').append(run).append(1, '"');
    run.clear();
  };
  for (size_t i = 0; i < chars.size();) {
    size_t same = 1;
    while (i + same < chars.size() && chars[i + same] == chars[i]) ++same;
    if (same > RepeatThreshold) {
      flushRun();
      if (!out.empty()) out += ", ";
      out.append(1, '\'').append(escaped(chars[i], '\'')).append("' <repeats ").append(std::to_string(same)).append(" times>");
      i += same;
      continue;
    }
    run += escaped(chars[i], '"');
    ++i;
  }
  flushRun();
  if (out.empty()) out = "\"\"";
  if (truncated) out += "...";
  return out;
}

class Formatter {
public:
  Formatter(const ObjectBytes &object, const MemorySource &memory, unsigned addressSize)
      : object_(object), memory_(memory), addressSize_(addressSize) {}

  // nullopt when a scalar's bytes are unknown.
  std::optional<std::string> value(DWARFDie type, uint64_t offset, unsigned depth) {
    type = stripped(type);
    if (!type.isValid()) return std::nullopt;
    switch (type.getTag()) {
    case dwarf::DW_TAG_structure_type: case dwarf::DW_TAG_class_type: case dwarf::DW_TAG_union_type:
      return aggregate(type, offset, depth);
    case dwarf::DW_TAG_array_type: return array(type, offset, depth);
    default: return scalar(type, offset);
    }
  }

private:
  std::optional<std::string> scalar(const DWARFDie &type, uint64_t offset) {
    uint64_t size = typeSize(type, addressSize_).value_or(0);
    if (size == 0 || !object_.allKnown(offset, size)) return std::nullopt;
    uint64_t v = object_.unsignedAt(offset, size);
    switch (type.getTag()) {
    case dwarf::DW_TAG_base_type: return base(type, offset, size, v);
    case dwarf::DW_TAG_enumeration_type: return enumerator(type, v, size);
    case dwarf::DW_TAG_pointer_type: return pointer(type, v);
    case dwarf::DW_TAG_reference_type: case dwarf::DW_TAG_rvalue_reference_type: return "@" + hex(v);
    default: return size <= 8 ? std::optional<std::string>(hex(v)) : std::nullopt;
    }
  }

  std::optional<std::string> base(const DWARFDie &type, uint64_t offset, uint64_t size, uint64_t v) {
    uint64_t encoding = unsignedAttribute(type, dwarf::DW_AT_encoding).value_or(0);
    switch (encoding) {
    case dwarf::DW_ATE_boolean:
      return v == 0 ? "false" : v == 1 ? "true" : std::to_string(v);
    case dwarf::DW_ATE_signed_char:
    case dwarf::DW_ATE_unsigned_char: {
      if (size != 1) break;
      int64_t number = encoding == dwarf::DW_ATE_signed_char ? int64_t(int8_t(v)) : int64_t(v);
      return std::to_string(number) + " '" + escaped(uint8_t(v), '\'') + "'";
    }
    case dwarf::DW_ATE_float: return floating(offset, size);
    case dwarf::DW_ATE_signed:
      if (size <= 8) return std::to_string(signExtended(v, size));
      break;
    case dwarf::DW_ATE_unsigned:
    case dwarf::DW_ATE_UTF:
      if (size <= 8) return std::to_string(v);
      break;
    }
    return wideHex(offset, size);
  }

  // Integers wider than 8 bytes, and encodings not printed otherwise, in hex.
  std::string wideHex(uint64_t offset, uint64_t size) {
    std::string digits = "0x";
    for (uint64_t i = size; i-- > 0;) digits += utohexstr(object_.bytes[offset + i], true, 2);
    return digits;
  }

  std::optional<std::string> floating(uint64_t offset, uint64_t size) {
    char text[64];
    if (size == 4) {
      float f;
      std::memcpy(&f, &object_.bytes[offset], 4);
      std::snprintf(text, sizeof text, "%.9g", double(f));
    } else if (size == 8) {
      double d;
      std::memcpy(&d, &object_.bytes[offset], 8);
      std::snprintf(text, sizeof text, "%.17g", d);
    } else {
      return wideHex(offset, size); // x87 and 128-bit formats: their bits
    }
    return std::string(text);
  }

  std::string enumerator(const DWARFDie &type, uint64_t v, uint64_t size) {
    uint64_t mask = size >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * size)) - 1;
    for (const DWARFDie &child : type.children()) {
      if (child.getTag() != dwarf::DW_TAG_enumerator) continue;
      auto constant = child.find(dwarf::DW_AT_const_value);
      std::optional<int64_t> value = constant ? constant->getAsSignedConstant() : std::nullopt;
      if (value && (uint64_t(*value) & mask) == (v & mask))
        if (const char *name = child.getShortName()) return name;
    }
    return std::to_string(signExtended(v, size));
  }

  std::string pointer(const DWARFDie &type, uint64_t v) {
    std::string out = hex(v);
    if (v == 0 || !isCharType(stripped(referencedType(type)))) return out;
    std::vector<uint8_t> chars;
    uint8_t c = 0;
    bool ended = false;
    while (chars.size() < MaxElements && memory_.read(v + chars.size(), {&c, 1})) {
      if ((ended = c == 0)) break;
      chars.push_back(c);
    }
    if (chars.empty() && !ended) return out; // unreadable
    return out + " " + quotedCharacters(chars, !ended);
  }

  std::optional<std::string> aggregate(const DWARFDie &type, uint64_t offset, unsigned depth) {
    if (depth >= MaxDepth) return "{...}";
    std::string out;
    for (const DWARFDie &child : type.children()) {
      bool base = child.getTag() == dwarf::DW_TAG_inheritance;
      if (!base && child.getTag() != dwarf::DW_TAG_member) continue;
      if (child.find(dwarf::DW_AT_declaration) || child.find(dwarf::DW_AT_external)) continue; // static members
      if (!out.empty()) out += ", ";
      if (out.size() > MaxText) return out + "...}";
      DWARFDie memberType = referencedType(child);
      const char *name = base ? stripped(memberType).getShortName() : child.getShortName();
      if (base) out.append(1, '<').append(name ? name : "?").append("> = ");
      else if (name) out += std::string(name) + " = ";
      out += member(child, memberType, offset, depth).value_or("<optimized out>");
    }
    if (out.empty()) return "{<No data fields>}";
    return out.insert(0, 1, '{').append(1, '}');
  }

  std::optional<std::string> member(const DWARFDie &child, const DWARFDie &memberType, uint64_t offset,
                                    unsigned depth) {
    std::optional<uint64_t> bitSize = unsignedAttribute(child, dwarf::DW_AT_bit_size);
    if (bitSize) return bitfield(child, memberType, offset, *bitSize);
    // A union's members all start at its start; a location expression (a
    // virtual base) is not followed.
    uint64_t at = unsignedAttribute(child, dwarf::DW_AT_data_member_location).value_or(0);
    if (auto location = child.find(dwarf::DW_AT_data_member_location); location && !location->getAsUnsignedConstant())
      return std::nullopt;
    return value(memberType, offset + at, depth + 1);
  }

  std::optional<std::string> bitfield(const DWARFDie &child, const DWARFDie &memberType, uint64_t offset,
                                      uint64_t bits) {
    uint64_t firstBit = unsignedAttribute(child, dwarf::DW_AT_data_bit_offset).value_or(0);
    if (auto byteOffset = unsignedAttribute(child, dwarf::DW_AT_data_member_location)) firstBit += 8 * *byteOffset;
    if (bits == 0 || bits > 64) return std::nullopt;
    uint64_t startByte = offset + firstBit / 8, shift = firstBit % 8, bytes = (shift + bits + 7) / 8;
    if (bytes > 8 || !object_.allKnown(startByte, bytes)) return std::nullopt;
    uint64_t v = object_.unsignedAt(startByte, bytes) >> shift;
    if (bits < 64) v &= (uint64_t(1) << bits) - 1;
    DWARFDie base = stripped(memberType);
    auto encoding = unsignedAttribute(base, dwarf::DW_AT_encoding);
    if (base.isValid() && base.getTag() == dwarf::DW_TAG_enumeration_type) return enumerator(base, v, 8);
    if (encoding == uint64_t(dwarf::DW_ATE_boolean)) return v ? "true" : "false";
    bool isSigned = encoding == uint64_t(dwarf::DW_ATE_signed) || encoding == uint64_t(dwarf::DW_ATE_signed_char);
    if (isSigned && bits < 64 && (v >> (bits - 1)) & 1) return std::to_string(int64_t(v | (~uint64_t(0) << bits)));
    return std::to_string(v);
  }

  std::optional<std::string> array(const DWARFDie &type, uint64_t offset, unsigned depth) {
    std::vector<uint64_t> counts;
    for (const DWARFDie &child : type.children()) {
      if (child.getTag() != dwarf::DW_TAG_subrange_type) continue;
      if (auto count = unsignedAttribute(child, dwarf::DW_AT_count)) counts.push_back(*count);
      else if (auto upper = unsignedAttribute(child, dwarf::DW_AT_upper_bound)) counts.push_back(*upper + 1);
      else return std::nullopt; // unknown bounds
    }
    if (counts.empty()) return std::nullopt;
    return dimension(referencedType(type), counts, 0, offset, depth);
  }

  std::optional<std::string> dimension(const DWARFDie &element, const std::vector<uint64_t> &counts, size_t level,
                                       uint64_t offset, unsigned depth) {
    uint64_t stride = typeSize(element, addressSize_).value_or(0);
    for (size_t i = level + 1; i < counts.size(); ++i) stride *= counts[i];
    if (stride == 0) return std::nullopt;
    uint64_t count = counts[level];
    if (level + 1 == counts.size() && isCharType(stripped(element)) && object_.allKnown(offset, count))
      return characters(offset, count);
    std::vector<std::string> items;
    for (uint64_t i = 0; i < count && i < MaxElements; ++i) {
      std::optional<std::string> item = level + 1 < counts.size()
                                            ? dimension(element, counts, level + 1, offset + i * stride, depth + 1)
                                            : value(element, offset + i * stride, depth + 1);
      items.push_back(item.value_or("<optimized out>"));
    }
    std::string out;
    for (size_t i = 0; i < items.size();) {
      size_t same = 1;
      while (i + same < items.size() && items[i + same] == items[i]) ++same;
      if (!out.empty()) out += ", ";
      if (same > RepeatThreshold) {
        out += items[i] + " <repeats " + std::to_string(same) + " times>";
        i += same;
      } else {
        out += items[i++];
      }
    }
    if (count > MaxElements) out += "...";
    return out.insert(0, 1, '{').append(1, '}');
  }

  // gdb prints a char array as a string and drops one terminating NUL.
  std::string characters(uint64_t offset, uint64_t count) {
    std::vector<uint8_t> chars(object_.bytes.begin() + offset,
                               object_.bytes.begin() + offset + std::min<uint64_t>(count, MaxElements));
    if (count <= MaxElements && !chars.empty() && chars.back() == 0) chars.pop_back();
    return quotedCharacters(chars, count > MaxElements);
  }

  const ObjectBytes &object_;
  const MemorySource &memory_;
  unsigned addressSize_;
};

} // namespace

namespace {

// The struct, union or enum a type is made of, under pointers, arrays and
// qualifiers (a typedef has a name of its own and ends the search).
DWARFDie taggedTypeWithin(DWARFDie type) {
  for (unsigned i = 0; i < MaxTypeSteps && type.isValid(); ++i) {
    switch (type.getTag()) {
    case dwarf::DW_TAG_structure_type: case dwarf::DW_TAG_union_type: case dwarf::DW_TAG_enumeration_type:
      return type;
    case dwarf::DW_TAG_pointer_type: case dwarf::DW_TAG_const_type: case dwarf::DW_TAG_volatile_type:
    case dwarf::DW_TAG_restrict_type: case dwarf::DW_TAG_atomic_type: case dwarf::DW_TAG_array_type:
      type = referencedType(type);
      continue;
    default:
      return {};
    }
  }
  return {};
}

// LLVM's type printer and size recurse through DW_AT_type (and a function
// type's parameters) without a bound: a hostile file's type that refers to
// itself would never end. Such a type is not handed to them.
bool typeGraphIsAcyclic(const DWARFDie &type, std::vector<uint64_t> &path, unsigned &visits) {
  if (!type.isValid()) return true;
  if (++visits > MaxTypeVisits || std::find(path.begin(), path.end(), type.getOffset()) != path.end()) return false;
  path.push_back(type.getOffset());
  bool acyclic = typeGraphIsAcyclic(referencedType(type), path, visits);
  if (acyclic && type.getTag() == dwarf::DW_TAG_subroutine_type)
    for (const DWARFDie &child : type.children())
      if (!(acyclic = typeGraphIsAcyclic(referencedType(child), path, visits))) break;
  path.pop_back();
  return acyclic;
}

bool isSafeType(const DWARFDie &type) {
  std::vector<uint64_t> path;
  unsigned visits = 0;
  return typeGraphIsAcyclic(type, path, visits);
}

bool isCUnit(const DWARFDie &die) {
  auto language = unsignedAttribute(die.getDwarfUnit()->getUnitDIE(), dwarf::DW_AT_language);
  switch (language.value_or(0)) {
  case dwarf::DW_LANG_C: case dwarf::DW_LANG_C89: case dwarf::DW_LANG_C99: case dwarf::DW_LANG_C11:
  case dwarf::DW_LANG_C17:
    return true;
  default:
    return false;
  }
}

} // namespace

std::string typeName(const DWARFDie &type) {
  if (!type.isValid()) return "void";
  if (!isSafeType(type)) return "<a type that refers to itself>";
  std::string name;
  raw_string_ostream out(name);
  dumpTypeQualifiedName(type, out);
  // C names a struct, union or enum with its keyword, as gdb prints it; LLVM
  // spells types as C++ does.
  DWARFDie tagged = taggedTypeWithin(type);
  const char *tag = tagged ? tagged.getShortName() : nullptr;
  if (!tag || !isCUnit(type)) return name;
  const char *keyword = tagged.getTag() == dwarf::DW_TAG_structure_type ? "struct "
                        : tagged.getTag() == dwarf::DW_TAG_union_type   ? "union "
                                                                         : "enum ";
  for (size_t at = name.find(tag); at != std::string::npos; at = name.find(tag, at + 1)) {
    size_t end = at + std::strlen(tag);
    bool word = (at == 0 || !(std::isalnum(uint8_t(name[at - 1])) || name[at - 1] == '_')) &&
                (end == name.size() || !(std::isalnum(uint8_t(name[end])) || name[end] == '_'));
    if (word) return name.insert(at, keyword);
  }
  return name;
}

std::optional<uint64_t> typeSize(const DWARFDie &type, unsigned addressSize) {
  DWARFDie t = type;
  return t.isValid() && isSafeType(t) ? t.getTypeSize(addressSize) : std::nullopt;
}

std::optional<std::string> formatValue(const DWARFDie &type, const ObjectBytes &object, const MemorySource &memory,
                                       unsigned addressSize) {
  // An object none of whose bytes are known has no value, even an aggregate.
  if (std::none_of(object.known.begin(), object.known.end(), [](bool known) { return known; })) return std::nullopt;
  return Formatter(object, memory, addressSize).value(type, 0, 0);
}

} // namespace stackwalk
