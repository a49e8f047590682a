#include "stackwalk/frames/ManagedExceptions.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include <set>

namespace stackwalk::frames {
namespace {

// The Object contract: the MethodTable pointer's low bits are flags.
llvm::Expected<uint64_t> objectMethodTable(const RuntimeData &data, uint64_t object) {
  auto word = data.pointer(object, "Object", "m_pMethTab");
  if (!word) return word.takeError();
  auto unmask = data.global("ObjectToMethodTableUnmask");
  if (!unmask) return unmask.takeError();
  return *word & ~*unmask;
}

// A System.String: its length, then that many UTF-16 code units. Longer
// messages are cut at RuntimeData::MaxUtf16Units and say so.
llvm::Expected<std::string> managedString(const RuntimeData &data, uint64_t string) {
  auto length = data.value<int32_t>(string, "String", "m_StringLength");
  if (!length) return length.takeError();
  auto first = data.offset("String", "m_FirstChar");
  if (!first) return first.takeError();
  if (*length < 0) return fail("the string at " + hex(string) + " has a negative length");
  size_t units = std::min<size_t>(size_t(*length), RuntimeData::MaxUtf16Units);
  auto text = data.readUtf16(string + *first, units);
  if (!text) return fail("the string at " + hex(string) + " is not in the dump");
  return units < size_t(*length) ? *text + "..." : *text;
}

// The object's MethodTable and HResult must read (they are the object
// itself); its type's name and its message string are separate data, so
// either may be missing and the rest is still reported, with a note.
llvm::Expected<ManagedException> readException(const RuntimeData &data, MethodNames &names, uint64_t object) {
  ManagedException exception;
  exception.object = object;
  auto unread = [&](const char *field, llvm::Error error) {
    exception.note += (exception.note.empty() ? "" : "; ") + std::string(field) + ": " + llvm::toString(std::move(error));
  };
  auto methodTable = objectMethodTable(data, object);
  if (!methodTable) return methodTable.takeError();
  auto hresult = data.value<int32_t>(object, "Exception", "_HResult");
  if (!hresult) return hresult.takeError();
  exception.hresult = *hresult;
  if (auto type = names.typeName(*methodTable)) exception.type = std::move(*type);
  else unread("type", type.takeError());
  auto message = data.pointer(object, "Exception", "_message");
  if (!message) return message.takeError();
  if (*message) {
    if (auto text = managedString(data, *message)) exception.message = std::move(*text);
    else unread("message", text.takeError());
  }
  return exception;
}

} // namespace

ManagedExceptionChain lastThrownException(const RuntimeData &data, MethodNames &names, uint64_t thread) {
  ManagedExceptionChain chain;
  auto fail = [&](llvm::Error error) {
    chain.problem = llvm::toString(std::move(error));
    return std::move(chain);
  };
  auto handle = data.pointer(thread, "Thread", "LastThrownObject");
  if (!handle) return fail(handle.takeError());
  if (*handle == 0) return chain;
  auto object = data.readPointer(*handle, "the last thrown object's handle");
  if (!object) return fail(object.takeError());
  std::set<uint64_t> seen;
  // Reflection can make inner exceptions a cycle; the chain ends where it repeats.
  while (*object && chain.exceptions.size() <= MaxInnerExceptions && seen.insert(*object).second) {
    auto exception = readException(data, names, *object);
    if (!exception) return fail(exception.takeError());
    chain.exceptions.push_back(std::move(*exception));
    object = data.pointer(*object, "Exception", "_innerException");
    if (!object) return fail(object.takeError());
  }
  return chain;
}

} // namespace stackwalk::frames
