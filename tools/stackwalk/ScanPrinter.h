// --scan-from's report: the words on a stack (or only the return-address
// candidates among them), as text or JSON.
#pragma once

#include "Format.h"

#include "stackwalk/walk/StackWords.h"

#include <ostream>

namespace stackwalk {

// `wordSize`: the stack's, by which a caller's stack pointer lies past its return address's slot.
void printStackWords(std::ostream &out, const std::string &dumpPath, uint64_t from, unsigned wordSize,
                     const std::vector<StackWord> &words, bool everyWord, JsonForm json);

} // namespace stackwalk
