#include "Cabinet.h"

#include "stackwalk/core/Fail.h"

#include "llvm/ADT/StringRef.h"

#include <mspack.h>

#include <memory>

namespace stackwalk {

std::string compressedName(const std::string &name) {
  if (name.empty()) return name;
  return name.substr(0, name.size() - 1) + "_";
}

llvm::Error extractFromCabinet(const std::string &cabinet, const std::string &name, const std::string &output,
                               uint64_t maxBytes) {
  std::unique_ptr<mscab_decompressor, decltype(&mspack_destroy_cab_decompressor)> decompressor(
      mspack_create_cab_decompressor(nullptr), &mspack_destroy_cab_decompressor);
  if (!decompressor) return fail("libmspack could not make a cabinet decompressor");
  mscabd_cabinet *opened = decompressor->open(decompressor.get(), cabinet.c_str());
  if (!opened) return fail("not a cabinet (libmspack error " + std::to_string(decompressor->last_error(decompressor.get())) + ")");
  auto close = [&] { decompressor->close(decompressor.get(), opened); };
  mscabd_file *chosen = nullptr;
  for (mscabd_file *file = opened->files; file; file = file->next)
    if (file->filename && llvm::StringRef(file->filename).equals_insensitive(name)) chosen = file;
  if (!chosen && opened->files && !opened->files->next) chosen = opened->files;
  if (!chosen) {
    close();
    return fail("the cabinet holds no " + name);
  }
  if (chosen->length > maxBytes) {
    close();
    return fail("the cabinet's " + name + " is larger than a file may be");
  }
  int error = decompressor->extract(decompressor.get(), chosen, output.c_str());
  close();
  if (error != MSPACK_ERR_OK) return fail("the cabinet's " + name + " does not extract (libmspack error " + std::to_string(error) + ")");
  return llvm::Error::success();
}

} // namespace stackwalk
