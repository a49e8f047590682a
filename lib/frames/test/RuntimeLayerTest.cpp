// The runtime layer on hand-built descriptors and memory: what it reads, and
// that bad input (JSON that does not parse, missing types, Frame chains that
// loop or leave the dump, MethodDescs that do not read back) gives a reason
// rather than a crash or an invented value.
#include "stackwalk/frames/CodeMap.h"
#include "stackwalk/frames/ContractDescriptor.h"
#include "stackwalk/frames/ManagedExceptions.h"
#include "stackwalk/frames/MethodNames.h"
#include "stackwalk/frames/RuntimeFrames.h"
#include "stackwalk/frames/RuntimeThreads.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>

using namespace stackwalk;
using namespace stackwalk::frames;

namespace {

constexpr const char *Json = R"({
  "version": 1, "baseline": "empty",
  "contracts": {"Thread": 1, "StackWalk": 1, "ExecutionManager": 2},
  "types": {
    "Frame": {"Next": 8},
    "InlinedCallFrame": {"!": 56, "CallSiteSP": 24, "CallerReturnAddress": 32, "CalleeSavedFP": 40},
    "ThreadStore": {"FirstThreadLink": 16},
    "Thread": {"Id": 8, "OSId": 16, "Frame": 24, "LinkNext": [32, "pointer"], "LastThrownObject": [40, "GCHandle"]},
    "Object": {"m_pMethTab": 0},
    "Exception": {"_message": 16, "_innerException": 32, "_HResult": 108},
    "String": {"m_StringLength": 8, "m_FirstChar": 12},
    "MethodDesc": {"ChunkIndex": 2, "Flags": 6, "Flags3AndTokenRemainder": 0},
    "MethodDescChunk": {"!": 24, "MethodTable": 0, "FlagsAndTokenRange": 18},
    "MethodTable": {"Module": 24}
  },
  "globals": {
    "InlinedCallFrameIdentifier": ["0x1", "nuint"],
    "SoftwareExceptionFrameIdentifier": "0x5",
    "ThreadStore": [[0], "pointer"],
    "ExecutionManagerCodeRangeMapAddress": [1],
    "MethodDescAlignment": 8,
    "ObjectToMethodTableUnmask": ["0x7", "uint8"],
    "Architecture": ["x64", "string"]
  }
})";

std::unique_ptr<Target> makeTarget(std::unique_ptr<BufferMemory> memory) {
  return std::make_unique<Target>(Arch::X86_64, OS::Linux, "test", std::move(memory));
}

void put64(std::vector<uint8_t> &bytes, size_t at, uint64_t value) { std::memcpy(bytes.data() + at, &value, 8); }
void put32(std::vector<uint8_t> &bytes, size_t at, uint32_t value) { std::memcpy(bytes.data() + at, &value, 4); }

ContractDescriptor descriptor() {
  auto parsed = ContractDescriptor::parse(Json, {0x9000, 0xA000}, 8);
  REQUIRE(bool(parsed));
  return std::move(*parsed);
}

} // namespace

TEST_CASE("the data descriptor's types, globals and contracts") {
  ContractDescriptor d = descriptor();
  CHECK(d.contractVersion("ExecutionManager") == 2u);
  CHECK(!d.contractVersion("Loader"));
  CHECK(d.fieldOffset("Thread", "LinkNext") == 32u);
  CHECK(d.type("InlinedCallFrame")->size == 56u);
  CHECK(!d.type("Thread")->size);
  CHECK(d.global("InlinedCallFrameIdentifier") == 1u);
  CHECK(d.global("SoftwareExceptionFrameIdentifier") == 5u);
  CHECK(d.global("ThreadStore") == 0x9000u);                  // [[0], type]: pointer_data[0]
  CHECK(d.global("ExecutionManagerCodeRangeMapAddress") == 0xA000u); // [1]: also indirect
  CHECK(d.stringGlobal("Architecture") == std::string("x64"));
  CHECK(d.globalNamed(5, "Identifier") == std::string("SoftwareExceptionFrameIdentifier"));
}

TEST_CASE("a runtime module without its file is named as the reason, not its companions") {
  auto target = makeTarget(std::make_unique<BufferMemory>());
  for (const char *name : {"libcoreclrtraceptprovider.so", "libcoreclr.so"}) {
    Module module;
    module.name = name;
    target->modules.push_back(module);
  }
  auto located = ContractDescriptor::locate(*target);
  REQUIRE(!located);
  CHECK(llvm::toString(located.takeError()).rfind("the runtime module libcoreclr.so has no file", 0) == 0);
  target->modules.pop_back();
  located = ContractDescriptor::locate(*target);
  REQUIRE(!located);
  CHECK(llvm::toString(located.takeError()).rfind("no module exports DotNetRuntimeContractDescriptor", 0) == 0);
}

TEST_CASE("a data descriptor that does not parse is an error") {
  for (const char *text : {"", "{", "[1,2]", R"({"types": {"T": {"f": "twelve"}}})",
                           R"({"types": {"T": 3}})", R"({"globals": {"G": [[7], "pointer"]}})",
                           R"({"globals": {"G": []}})", R"({"globals": {"G": {"x": 1}}})"}) {
    INFO(text);
    auto parsed = ContractDescriptor::parse(text, {0x1}, 8);
    CHECK(!bool(parsed));
    if (!parsed) llvm::consumeError(parsed.takeError());
  }
}

TEST_CASE("Frame chains: names, the end marker, loops and unreadable Frames") {
  ContractDescriptor d = descriptor();
  auto memory = std::make_unique<BufferMemory>();
  std::vector<uint8_t> stack(0x200);
  put64(stack, 0x00, 1);       // 0x1000: InlinedCallFrame
  put64(stack, 0x08, 0x1100);  //   Next
  put64(stack, 0x18, 0x2000);  //   CallSiteSP
  put64(stack, 0x20, 0x4444);  //   CallerReturnAddress
  put64(stack, 0x28, 0x2100);  //   CalleeSavedFP
  put64(stack, 0x100, 0x77);   // 0x1100: an identifier no global names
  put64(stack, 0x108, ~uint64_t(0));
  memory->add(0x1000, stack);
  auto target = makeTarget(std::move(memory));
  RuntimeData data(*target, d);

  FrameChain chain = readFrameChain(data, 0x1000);
  REQUIRE(chain.frames.size() == 2);
  CHECK(chain.problem.empty());
  CHECK(chain.frames[0].name == "InlinedCallFrame");
  CHECK(chain.frames[1].name.empty());
  auto context = contextFromFrame(data, chain.frames[0], RegisterFile(), OS::Linux);
  REQUIRE(bool(context));
  REQUIRE(*context);
  CHECK((*context)->pc() == 0x4444u);
  CHECK((*context)->sp() == 0x2000u);
  CHECK((*context)->fp() == 0x2100u);
  CHECK(!(*context)->isKnown(3)); // rbx: the Frame does not say
  auto none = contextFromFrame(data, chain.frames[1], RegisterFile(), OS::Linux);
  REQUIRE(bool(none));
  CHECK(!*none);

  FrameChain unreadable = readFrameChain(data, 0x5000);
  CHECK(unreadable.frames.empty());
  CHECK(unreadable.problem.find("not in the dump") != std::string::npos);
}

TEST_CASE("an InlinedCallFrame's MethodDesc comes from Datum, described or in the one slot frames.h gives it") {
  std::vector<uint8_t> frames(0x100);
  put64(frames, 0x00, 1);        // 0x1000: an InlinedCallFrame with an active call
  put64(frames, 0x10, 0x70002);  //   Datum: MethodDesc 0x70000, marker bit 1 (an EH helper's frame)
  put64(frames, 0x20, 0x4444);   //   CallerReturnAddress
  put64(frames, 0x40, 1);        // 0x1040: no active call (no return address)
  put64(frames, 0x50, 0x70000);
  put64(frames, 0x80, 1);        // 0x1080: a Datum that is a small number, not a MethodDesc
  put64(frames, 0x90, 0x20);
  put64(frames, 0xa0, 0x4444);
  auto memory = std::make_unique<BufferMemory>();
  memory->add(0x1000, frames);
  auto target = makeTarget(std::move(memory));
  auto frameAt = [](uint64_t address) {
    RuntimeFrame frame;
    frame.address = address;
    frame.name = "InlinedCallFrame";
    return frame;
  };
  // .NET 10's descriptor (this base one) has no InlinedCallFrame.Datum: it is
  // the one pointer between Frame.Next (8) and CallSiteSP (24).
  ContractDescriptor dotnet10 = descriptor();
  RuntimeData derived(*target, dotnet10);
  CHECK(frameMethodDesc(derived, frameAt(0x1000)) == 0x70000);
  CHECK(frameMethodDesc(derived, frameAt(0x1040)) == 0);
  CHECK(frameMethodDesc(derived, frameAt(0x1080)) == 0);

  std::string json = Json;
  json.replace(json.find("\"CallSiteSP\": 24"), 16, "\"CallSiteSP\": 32, \"Datum\": 16");
  auto parsed = ContractDescriptor::parse(json, {0x9000, 0xA000}, 8);
  REQUIRE(bool(parsed));
  RuntimeData described(*target, *parsed);
  CHECK(frameMethodDesc(described, frameAt(0x1000)) == 0x70000);

  // A layout with more than Datum between the two: no offset is guessed.
  json = Json;
  json.replace(json.find("\"CallSiteSP\": 24"), 16, "\"CallSiteSP\": 32");
  parsed = ContractDescriptor::parse(json, {0x9000, 0xA000}, 8);
  REQUIRE(bool(parsed));
  RuntimeData unknown(*target, *parsed);
  CHECK(frameMethodDesc(unknown, frameAt(0x1000)) == 0);
}

TEST_CASE("a Frame chain that loops or goes down the stack ends with a reason") {
  ContractDescriptor d = descriptor();
  auto memory = std::make_unique<BufferMemory>();
  std::vector<uint8_t> stack(0x200);
  put64(stack, 0x08, 0x1100);
  put64(stack, 0x108, 0x1000); // back down: a loop
  memory->add(0x1000, stack);
  auto target = makeTarget(std::move(memory));
  RuntimeData data(*target, d);
  FrameChain chain = readFrameChain(data, 0x1000);
  CHECK(chain.frames.size() == 2);
  CHECK(!chain.problem.empty());
}

TEST_CASE("a thread list that loops ends with a reason") {
  ContractDescriptor d = descriptor();
  auto memory = std::make_unique<BufferMemory>();
  std::vector<uint8_t> globals(16), store(32), thread(64);
  put64(globals, 0, 0x3000);            // ThreadStore variable -> the store
  put64(store, 16, 0x4000 + 32);        // FirstThreadLink -> the thread's link
  put64(thread, 16, 1234);              // OSId
  put64(thread, 32, 0x4000 + 32);       // LinkNext -> itself
  memory->add(0x9000, globals);
  memory->add(0x3000, store);
  memory->add(0x4000, thread);
  auto target = makeTarget(std::move(memory));
  RuntimeData data(*target, d);
  RuntimeThreadList list = readRuntimeThreads(data);
  REQUIRE(list.threads.size() == 1);
  CHECK(list.threads[0].osId == 1234u);
  CHECK(list.problem.find("loops") != std::string::npos);
}

TEST_CASE("a MethodDesc that does not read back is an error, not a name") {
  ContractDescriptor d = descriptor();
  auto target = makeTarget(std::make_unique<BufferMemory>());
  RuntimeData data(*target, d);
  MethodNames names(data);
  auto method = names.describe(0x7000);
  REQUIRE(!bool(method));
  CHECK(llvm::toString(method.takeError()).find("not in the dump") != std::string::npos);
}

TEST_CASE("a thread's last thrown exception: none, or why it does not read back") {
  ContractDescriptor d = descriptor();
  auto memory = std::make_unique<BufferMemory>();
  std::vector<uint8_t> heap(0x400);
  put64(heap, 0x000 + 40, 0);      // 0x5000: a thread that threw nothing
  put64(heap, 0x080 + 40, 0x9000); // 0x5080: its handle is not in the dump
  put64(heap, 0x100 + 40, 0x5180); // 0x5100: handle 0x5180 -> object 0x5200
  put64(heap, 0x180, 0x5200);
  put64(heap, 0x200, 0x6007);      // the object's MethodTable 0x6000, with flag bits set
  put64(heap, 0x200 + 16, 0x9100); // _message -> a string outside the dump
  put32(heap, 0x200 + 108, 0x80004003u); // _HResult: E_POINTER (NullReferenceException)
  memory->add(0x5000, heap);
  auto target = makeTarget(std::move(memory));
  RuntimeData data(*target, d);
  MethodNames names(data);

  ManagedExceptionChain none = lastThrownException(data, names, 0x5000);
  CHECK(none.exceptions.empty());
  CHECK(none.problem.empty());
  ManagedExceptionChain lost = lastThrownException(data, names, 0x5080);
  CHECK(lost.exceptions.empty());
  CHECK(lost.problem == "the last thrown object's handle at 0x9000 is not in the dump");
  // The flag bits are masked off before the MethodTable is read. Its type
  // cannot be named and its message string is not in the dump (as in a
  // triage dump): the object and its HResult are still reported.
  ManagedExceptionChain partial = lastThrownException(data, names, 0x5100);
  REQUIRE(partial.exceptions.size() == 1);
  const ManagedException &exception = partial.exceptions[0];
  CHECK(exception.object == 0x5200u);
  CHECK(exception.hresult == int32_t(0x80004003));
  CHECK(!exception.type);
  CHECK(!exception.message);
  CHECK(exception.note == "type: MethodTable.Module at 0x6018 is not in the dump; message: String.m_StringLength at "
                          "0x9108 is not in the dump");
  CHECK(partial.problem.empty());
}

TEST_CASE("a code map without the descriptor's map global reports why") {
  auto parsed = ContractDescriptor::parse(R"({"types": {}, "globals": {}})", {}, 8);
  REQUIRE(bool(parsed));
  auto target = makeTarget(std::make_unique<BufferMemory>());
  RuntimeData data(*target, *parsed);
  CodeMap code(data);
  auto block = code.find(0x1234);
  REQUIRE(!bool(block));
  CHECK(llvm::toString(block.takeError()).find("ExecutionManagerCodeRangeMapAddress") != std::string::npos);
}
