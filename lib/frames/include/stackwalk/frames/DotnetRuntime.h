// One process's .NET runtime as the dump shows it: the contract descriptor
// and the views over it that a walk needs (threads, code, names). Built once
// per dump; the parts read lazily and cache what they read.
#pragma once

#include "stackwalk/frames/CodeMap.h"
#include "stackwalk/frames/ContractDescriptor.h"
#include "stackwalk/frames/MethodNames.h"
#include "stackwalk/frames/RuntimeData.h"
#include "stackwalk/frames/RuntimeThreads.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace stackwalk::frames {

class DotnetRuntime {
public:
  // Fails when the process has no runtime that publishes a contract
  // descriptor, saying why.
  static llvm::Expected<std::unique_ptr<DotnetRuntime>> open(const Target &target);

  const ContractDescriptor &descriptor() const { return descriptor_; }
  const RuntimeData &data() const { return data_; }
  // "10.0.12", as the program's Environment.Version; empty if unknown.
  const std::string &version() const { return version_; }

  const RuntimeThreadList &threads();
  const RuntimeThread *threadByOsId(uint64_t osId);
  CodeMap &code() { return code_; }
  MethodNames &names() { return names_; }

private:
  DotnetRuntime(const Target &target, ContractDescriptor descriptor);

  ContractDescriptor descriptor_;
  RuntimeData data_;
  CodeMap code_;
  MethodNames names_;
  std::string version_;
  std::optional<RuntimeThreadList> threads_;
};

} // namespace stackwalk::frames
