// The streams a PDB names, checked for bytes before LLVM 19 reads them. The
// MSF directory gives a deleted stream the size 0xFFFFFFFF ("nil"); LLVM's
// PDBFile gives such a stream no blocks but keeps that size as its length, so
// the first read from it indexes an empty block list (a null read that
// fuzz_pdb found: fuzz/findings/llvm19-pdb-dbi-stream-null-read, every stream
// nil, NativeSession's constructor reading the DBI stream's header). A PDB
// that names a nil stream as one it uses is refused.
//
// A stream's blocks are checked against the file as well: LLVM's
// PDBFile::parseStreamData computes a block's end as (Block + 1) * BlockSize
// with the addition in 32 bits, so block 0xFFFFFFFF ends at 0 and passes;
// reads of it then fail, and FixedStreamArray's iterator, which only asserts
// that a read succeeded, hands out a null record
// (fuzz/findings/llvm19-pdb-stream-block-past-file, a new-FPO stream).
#pragma once

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace llvm::pdb {
class PDBFile;
}

namespace stackwalk {

// Fails when `stream`, named as `role`, is one the file has but nil. A stream
// number past the directory or kInvalidStreamIndex is left to LLVM (which
// checks those) or to the caller.
llvm::Error checkStreamHasBytes(const llvm::pdb::PDBFile &file, uint32_t stream, const llvm::Twine &role);

// Fails when a block of any stream lies past the end of the file. For a file
// whose stream directory is parsed, before any stream is read through LLVM.
llvm::Error checkStreamBlocksInFile(const llvm::pdb::PDBFile &file);

// The streams NativeSession's constructor and the first lookups read: the
// fixed ones (info, TPI, DBI, IPI), and those the DBI stream's header and its
// optional debug headers name (symbol records, publics, globals, section
// headers, FPO data). For a file whose stream directory is parsed, before any
// stream is read through LLVM.
llvm::Error checkUsedStreamsHaveBytes(const llvm::pdb::PDBFile &file);

} // namespace stackwalk
