// The .NET runtime layer over hostile memory: the input is both the data
// descriptor's JSON (when its first byte is odd) and the process memory the
// threads, Frame chains, code map, MethodDescs (their types, instantiations and
// stored signatures) and exceptions are read from.
#include "stackwalk/frames/CodeMap.h"
#include "stackwalk/frames/ContractDescriptor.h"
#include "stackwalk/frames/ManagedExceptions.h"
#include "stackwalk/frames/MethodNames.h"
#include "stackwalk/frames/TypeNames.h"
#include "stackwalk/frames/RuntimeFrames.h"
#include "stackwalk/frames/RuntimeThreads.h"

#include <cstring>

using namespace stackwalk;
using namespace stackwalk::frames;

// The fields stackwalk reads, at .NET 10's offsets (x64 Linux).
static const char *const Descriptor = R"({"contracts": {"ExecutionManager": 2},
 "types": {"Frame": {"Next": 8}, "Thread": {"Id": 16, "OSId": 296, "Frame": 8, "LinkNext": 112, "LastThrownObject": 344},
  "ThreadStore": {"FirstThreadLink": 88},
  "InlinedCallFrame": {"!": 56, "CallSiteSP": 24, "CallerReturnAddress": 32, "CalleeSavedFP": 40},
  "SoftwareExceptionFrame": {"!": 3520, "TargetContext": 288, "ReturnAddress": 16},
  "FramedMethodFrame": {"!": 32, "TransitionBlockPtr": 16}, "TransitionBlock": {"!": 104, "ReturnAddress": 96, "CalleeSavedRegisters": 48},
  "CalleeSavedRegisters": {"!": 48, "R12": 0, "R13": 8, "R14": 16, "R15": 24, "Rbx": 32, "Rbp": 40},
  "ResumableFrame": {"!": 24, "TargetContextPtr": 16}, "HijackFrame": {"!": 40, "ReturnAddress": 16, "HijackArgsPtr": 32},
  "HijackArgs": {"!": 80, "CalleeSavedRegisters": 24}, "RangeSectionMap": {"TopLevelData": 0},
  "RangeSectionFragment": {"RangeBegin": 8, "RangeEndOpen": 16, "RangeSection": 24, "Next": 0},
  "RangeSection": {"RangeBegin": 0, "RangeEndOpen": 8, "NextForDelete": 64, "JitManager": 24, "Flags": 16, "HeapList": 40, "R2RModule": 32},
  "RealCodeHeader": {"MethodDesc": 24, "NumUnwindInfos": 32, "UnwindInfos": 36},
  "CodeHeapListNode": {"Next": 0, "StartAddress": 16, "EndAddress": 24, "MapBase": 32, "HeaderMap": 40},
  "RuntimeFunction": {"!": 12, "BeginAddress": 0, "EndAddress": 4, "UnwindData": 8},
  "ReadyToRunInfo": {"NumRuntimeFunctions": 88, "RuntimeFunctions": 80, "DelayLoadMethodCallThunks": 112, "EntryPointToMethodDescMap": 360},
  "ImageDataDirectory": {"!": 8, "VirtualAddress": 0, "Size": 4}, "HashMap": {"Buckets": 16}, "Bucket": {"!": 64, "Keys": 0, "Values": 32},
  "Module": {"PEAssembly": 216, "Path": 200, "ReadyToRunInfo": 704}, "PEAssembly": {"PEImage": 8},
  "PEImage": {"LoadedImageLayout": 128}, "PEImageLayout": {"Base": 8, "Size": 16},
  "MethodDesc": {"!": 16, "ChunkIndex": 2, "Flags": 6, "Flags3AndTokenRemainder": 0},
  "MethodDescChunk": {"!": 24, "MethodTable": 0, "FlagsAndTokenRange": 18}, "MethodTable": {"MTFlags": 0, "Module": 24, "MTFlags2": 8,
  "EEClassOrCanonMT": 40, "PerInstInfo": 48}, "GenericsDictInfo": {"NumDicts": 4, "NumTypeArgs": 6},
  "EEClass": {"InternalCorElementType": 48}, "ArrayClass": {"Rank": 72}, "TypeDesc": {"TypeAndFlags": 0},
  "ParamTypeDesc": {"TypeArg": 16}, "TypeVarTypeDesc": {"Module": 16, "Token": 40},
  "InstantiatedMethodDesc": {"PerInstInfo": 24, "Flags2": 32, "NumGenericArgs": 34},
  "StoredSigMethodDesc": {"Sig": 16, "cSig": 24, "ExtendedFlags": 28},
  "Object": {"m_pMethTab": 0}, "String": {"m_FirstChar": 12, "m_StringLength": 8},
  "Exception": {"_message": 16, "_innerException": 32, "_HResult": 108},
  "DynamicMethodDesc": {"MethodName": 32}},
 "globals": {"InlinedCallFrameIdentifier": "0x1", "SoftwareExceptionFrameIdentifier": "0x5", "FramedMethodFrameIdentifier": "0x9",
  "ResumableFrameIdentifier": "0x2", "HijackFrameIdentifier": "0x8", "StubCodeBlockLast": "0xf",
  "HashMapSlotsPerBucket": 4, "HashMapValueMask": "0x7fffffffffffffff", "MethodDescAlignment": 8,
  "MethodDescTokenRemainderBitCount": 12, "ObjectToMethodTableUnmask": 7, "ThreadStore": [[0], "pointer"], "ExecutionManagerCodeRangeMapAddress": [[1], "pointer"]}})";

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 16) return 0;
  if (data[0] & 1) {
    auto parsed = ContractDescriptor::parse(std::string_view(reinterpret_cast<const char *>(data) + 1, size - 1),
                                            {0x10000, 0x10000}, 8);
    if (!parsed) llvm::consumeError(parsed.takeError());
  }
  auto descriptor = ContractDescriptor::parse(Descriptor, {0x10000, uint64_t(0x10000 + (data[1] & 0xf8))}, 8);
  if (!descriptor) return 0;
  // The same bytes at a few places: globals, stack, heap.
  auto memory = std::make_unique<BufferMemory>();
  std::vector<uint8_t> bytes(data, data + size);
  for (uint64_t base : {0x10000ull, 0x20000ull, 0x30000ull}) memory->add(base, bytes);
  Target target(Arch::X86_64, OS::Linux, "fuzz", std::move(memory));
  RuntimeData runtime(target, *descriptor);
  RuntimeThreadList threads = readRuntimeThreads(runtime);
  uint64_t words[2];
  std::memcpy(words, data, sizeof words);
  FrameChain chain = readFrameChain(runtime, 0x20000 + (words[0] >> 8) % size);
  for (const RuntimeFrame &frame : chain.frames) {
    auto context = contextFromFrame(runtime, frame, RegisterFile(), OS::Linux);
    if (!context) llvm::consumeError(context.takeError());
    (void)frameMethodDesc(runtime, frame);
  }
  CodeMap code(runtime);
  auto block = code.find(0x30000 + words[1] % size);
  if (!block) llvm::consumeError(block.takeError());
  MethodNames names(runtime);
  auto method = names.describe(0x20000 + (words[1] >> 16) % size);
  if (!method) llvm::consumeError(method.takeError());
  ManagedModules modules(runtime);
  TypeNames types(runtime, modules);
  for (uint64_t handle : {0x20000 + (words[0] >> 32) % size, 0x30000 + ((words[1] >> 32) % size | 2)}) {
    auto reflection = types.reflectionName(handle);
    if (!reflection) llvm::consumeError(reflection.takeError());
    auto signature = types.signatureName(handle);
    if (!signature) llvm::consumeError(signature.takeError());
  }
  for (const RuntimeThread &thread : threads.threads) (void)lastThrownException(runtime, names, thread.address);
  (void)lastThrownException(runtime, names, 0x30000 + (words[0] >> 24) % size);
  return 0;
}
