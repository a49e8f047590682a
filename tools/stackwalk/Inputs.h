// What the command line names besides its options: the dumps (as arguments,
// or one per line from --from FILE or standard input) and the files and
// folders that --executable, --module-path and --sysroot must name.
#pragma once

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace stackwalk {

// The dump paths listed one per line in a file, or on standard input for
// "-"; blank lines are skipped, so an empty list is no error.
llvm::Expected<std::vector<std::string>> readPathList(const std::string &file);

// Why a path given for `option` cannot be used ("--sysroot /srv/x: No such
// file or directory"), or success. `directory` says which kind it must be.
llvm::Error checkGivenPath(const std::string &option, const std::string &path, bool directory);

} // namespace stackwalk
