// A static executable's identity checked by the bytes its process does not
// write once started, for a core that records no build-id and in which the
// executable has no dynamic section to compare (DynamicSectionIdentity.h):
// qemu-user's cores of static programs, which hold no ELF header page and no
// code, but do hold the data the C library made read-only (PT_GNU_RELRO).
// That data holds addresses of code and data: a rebuild that moves nothing
// passes (so would its code's addresses), one that moves code does not.
#pragma once

#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/Target.h"

#include <optional>
#include <string>

namespace stackwalk::elfcore {

// Why `image`, loaded at `bias`, is not the file the dump's process ran, by
// its read-only segments and its RELRO part where the dump holds them:
// nullopt when at least 9 in 10 of those 8-byte words are the file's. glibc's
// static start-up writes a few RELRO words before it protects them (13 of
// 1,790 in a qemu-aarch64 core of a static program); a build of the same
// program with one more function differed in 1,003. Also a reason when the
// dump holds too little of those bytes to tell.
std::optional<std::string> unwrittenDataMismatch(const Target &target, const ModuleImage &image, uint64_t bias);

} // namespace stackwalk::elfcore
