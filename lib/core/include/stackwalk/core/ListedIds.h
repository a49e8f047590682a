// Thread ids (or any ids) in a message: the first few, then how many more, so
// that a dump of 100,000 threads gives a line, not a page.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace stackwalk {

// "7, 9, 12" or, past `named` ids, "7, 9, 12 and 40 more".
std::string listedIds(std::span<const uint64_t> ids, size_t named);

// "the stack of thread 7 is cut short", "the stacks of threads 7, 9 are cut
// short": what a dump cut short lost, as every loader says it.
std::string stacksCutShort(std::span<const uint64_t> threadIds);

} // namespace stackwalk
