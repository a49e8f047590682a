#include "Cabinet.h"

#include "stackwalk/core/Fail.h"

#include "llvm/ADT/StringRef.h"

#include <mspack.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace stackwalk {
namespace {

// libmspack's file and memory calls, as its default system makes them but
// for `message`: the default prints to stderr what the cabinet's damage was
// (with the cabinet's own file names in it), which the error returned says.
// libmspack exports no way to keep the default and silence only that.
mspack_file *openFile(mspack_system *, const char *path, int mode) {
  const char *how = mode == MSPACK_SYS_OPEN_READ    ? "rb"
                    : mode == MSPACK_SYS_OPEN_WRITE ? "wb"
                    : mode == MSPACK_SYS_OPEN_UPDATE ? "r+b"
                                                     : "ab";
  return reinterpret_cast<mspack_file *>(std::fopen(path, how));
}
FILE *stream(mspack_file *file) { return reinterpret_cast<FILE *>(file); }
void closeFile(mspack_file *file) { std::fclose(stream(file)); }
int readFile(mspack_file *file, void *buffer, int bytes) {
  size_t got = std::fread(buffer, 1, size_t(bytes), stream(file));
  return std::ferror(stream(file)) ? -1 : int(got);
}
int writeFile(mspack_file *file, void *buffer, int bytes) {
  size_t put = std::fwrite(buffer, 1, size_t(bytes), stream(file));
  return put == size_t(bytes) ? bytes : -1;
}
int seekFile(mspack_file *file, off_t offset, int mode) {
  int whence = mode == MSPACK_SYS_SEEK_START ? SEEK_SET : mode == MSPACK_SYS_SEEK_CUR ? SEEK_CUR : SEEK_END;
  return fseeko(stream(file), offset, whence) == 0 ? 0 : -1;
}
off_t tellFile(mspack_file *file) { return ftello(stream(file)); }
void noMessage(mspack_file *, const char *, ...) {}
void *allocate(mspack_system *, size_t bytes) { return std::malloc(bytes); }
void release(void *memory) { std::free(memory); }
void copyBytes(void *from, void *to, size_t bytes) { std::memmove(to, from, bytes); }

mspack_system quietSystem = {openFile, closeFile, readFile,   writeFile, seekFile, tellFile,
                             noMessage, allocate, release, copyBytes, nullptr};

} // namespace

std::string compressedName(const std::string &name) {
  if (name.empty()) return name;
  return name.substr(0, name.size() - 1) + "_";
}

llvm::Error extractFromCabinet(const std::string &cabinet, const std::string &name, const std::string &output,
                               uint64_t maxBytes) {
  std::unique_ptr<mscab_decompressor, decltype(&mspack_destroy_cab_decompressor)> decompressor(
      mspack_create_cab_decompressor(&quietSystem), &mspack_destroy_cab_decompressor);
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
