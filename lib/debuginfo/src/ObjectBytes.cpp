#include "ObjectBytes.h"

#include "stackwalk/core/Hex.h"

#include <algorithm>

namespace stackwalk {

bool ObjectBytes::allKnown(uint64_t offset, uint64_t size) const {
  if (offset > known.size() || size > known.size() - offset) return false;
  return std::all_of(known.begin() + offset, known.begin() + offset + size, [](bool k) { return k; });
}

uint64_t ObjectBytes::unsignedAt(uint64_t offset, uint64_t size) const {
  uint64_t v = 0;
  for (uint64_t i = 0; i < size && i < 8 && offset + i < bytes.size(); ++i) v |= uint64_t(bytes[offset + i]) << (8 * i);
  return v;
}

std::string registerName(Arch arch, uint64_t number) {
  for (const RegisterInfo &info : registerLayout(arch))
    if (info.number == number) return std::string(info.name);
  return "register " + std::to_string(number);
}

namespace {

using Kind = DwarfLocationPiece::Kind;

class Gatherer {
public:
  Gatherer(uint64_t size, const ObjectSource &source) : source_(source) {
    object_.bytes.assign(size, 0);
    object_.known.assign(size, false);
  }

  // Fills `length` bytes from `offset` with what the piece holds.
  void fill(const DwarfLocationPiece &piece, uint64_t offset, uint64_t length) {
    if (offset >= object_.bytes.size()) return;
    length = std::min(length, object_.bytes.size() - offset);
    switch (piece.kind) {
    case Kind::Memory: return fromMemory(piece.value, offset, length);
    case Kind::Register: return fromRegister(piece.value, piece.bitOffset / 8, offset, length);
    case Kind::Value: return fromNumber(piece.value, offset, length, "a computed value");
    case Kind::ImplicitValue: return fromBytes(piece.bytes, offset, length);
    case Kind::ImplicitPointer:
      return missing("it points to an object that exists only in the debug info (DW_OP_implicit_pointer)");
    case Kind::Empty: return missing("optimized out");
    }
  }

  void missing(std::string why) {
    if (object_.problem.empty()) object_.problem = std::move(why);
  }

  ObjectBytes take() { return std::move(object_); }

private:
  void fromMemory(uint64_t address, uint64_t offset, uint64_t length) {
    std::span<uint8_t> out(object_.bytes.data() + offset, length);
    if (!source_.memory || !source_.memory->read(address, out))
      return missing("memory at " + hex(address) + " is not in the dump");
    std::fill_n(object_.known.begin() + offset, length, true);
  }

  void fromRegister(uint64_t number, uint64_t skip, uint64_t offset, uint64_t length) {
    std::optional<uint64_t> value = source_.registers ? source_.registers->get(unsigned(number)) : std::nullopt;
    Arch arch = source_.registers ? source_.registers->arch() : Arch::X86_64;
    if (!value) {
      bool clobbered = source_.callerFrame && number < RegisterFile::Capacity && source_.registers &&
                       !source_.registers->isCalleeSaved(unsigned(number), source_.os);
      if (clobbered)
        return missing("held in " + registerName(arch, number) +
                       ", a caller-saved register that this caller frame does not preserve");
      return missing("held in " + registerName(arch, number) + ", which is not known in this frame");
    }
    if (skip >= 8) return missing("a register piece beyond the register's 8 bytes");
    fromNumber(*value >> (8 * skip), offset, std::min<uint64_t>(length, 8 - skip), "");
    if (length > 8 - skip) missing("a value wider than its register");
  }

  void fromNumber(uint64_t value, uint64_t offset, uint64_t length, const char *what) {
    for (uint64_t i = 0; i < length; ++i) {
      if (i >= 8) return missing(std::string(what) + " narrower than the object");
      object_.bytes[offset + i] = uint8_t(value >> (8 * i));
      object_.known[offset + i] = true;
    }
  }

  void fromBytes(const std::vector<uint8_t> &bytes, uint64_t offset, uint64_t length) {
    for (uint64_t i = 0; i < length && i < bytes.size(); ++i) {
      object_.bytes[offset + i] = bytes[i];
      object_.known[offset + i] = true;
    }
    if (bytes.size() < length) missing("an implicit value narrower than the object");
  }

  ObjectBytes object_;
  const ObjectSource &source_;
};

} // namespace

ObjectBytes gatherObject(const DwarfLocation &location, uint64_t size, const ObjectSource &source) {
  bool whole = location.size() == 1 && !location.front().sizeInBits;
  if (whole && location.front().kind == Kind::Memory && size > MaxObjectBytes) {
    ObjectBytes object;
    object.address = location.front().value;
    object.problem = "larger than " + std::to_string(MaxObjectBytes) + " bytes: not read";
    return object;
  }
  Gatherer gatherer(std::min(size, MaxObjectBytes), source);
  if (whole) {
    gatherer.fill(location.front(), 0, size);
    ObjectBytes object = gatherer.take();
    if (location.front().kind == Kind::Memory) object.address = location.front().value;
    return object;
  }
  uint64_t bit = 0;
  for (const DwarfLocationPiece &piece : location) {
    uint64_t bits = piece.sizeInBits.value_or(0);
    // Pieces of whole bytes are what compilers emit for the objects we print.
    if (bit % 8 || bits % 8 || piece.bitOffset % 8) gatherer.missing("a bit-sized piece");
    else gatherer.fill(piece, bit / 8, bits / 8);
    bit += bits;
  }
  return gatherer.take();
}

std::string describeLocation(const DwarfLocation &location, Arch arch) {
  std::string out;
  for (const DwarfLocationPiece &piece : location) {
    if (!out.empty()) out += ", ";
    switch (piece.kind) {
    case Kind::Memory: out += "memory " + hex(piece.value); break;
    case Kind::Register: out += registerName(arch, piece.value); break;
    case Kind::Value: out += "computed value"; break;
    case Kind::ImplicitValue: out += "implicit value"; break;
    case Kind::ImplicitPointer: out += "implicit pointer"; break;
    case Kind::Empty: out += "optimized out"; break;
    }
  }
  return location.size() > 1 ? "pieces: " + out : out;
}

} // namespace stackwalk
