#include "CurlLibrary.h"

#include "stackwalk/core/Fail.h"

#include "llvm/Support/DynamicLibrary.h"

#include <string>

namespace stackwalk {
namespace {

// The soname every libcurl since 7.16 has; Debian's libcurl4 package.
constexpr const char *CurlSoname = "libcurl.so.4";

template <typename Function>
bool resolve(llvm::sys::DynamicLibrary &library, const char *name, Function &out, std::string &missing) {
  out = reinterpret_cast<Function>(library.getAddressOfSymbol(name));
  if (!out) missing += std::string(missing.empty() ? "" : ", ") + name;
  return out != nullptr;
}

struct Loaded {
  CurlLibrary curl{};
  std::string error;
};

Loaded load() {
  Loaded loaded;
  std::string why;
  auto library = llvm::sys::DynamicLibrary::getPermanentLibrary(CurlSoname, &why);
  if (!library.isValid()) {
    loaded.error = "cannot load " + std::string(CurlSoname) + " (" + why + ")";
    return loaded;
  }
  CurlLibrary &c = loaded.curl;
  std::string missing;
  resolve(library, "curl_global_init", c.globalInit, missing);
  resolve(library, "curl_free", c.free, missing);
  resolve(library, "curl_easy_init", c.easyInit, missing);
  resolve(library, "curl_easy_setopt", c.easySetopt, missing);
  resolve(library, "curl_easy_getinfo", c.easyGetinfo, missing);
  resolve(library, "curl_easy_cleanup", c.easyCleanup, missing);
  resolve(library, "curl_easy_strerror", c.easyStrerror, missing);
  resolve(library, "curl_easy_escape", c.easyEscape, missing);
  resolve(library, "curl_multi_init", c.multiInit, missing);
  resolve(library, "curl_multi_add_handle", c.multiAddHandle, missing);
  resolve(library, "curl_multi_remove_handle", c.multiRemoveHandle, missing);
  resolve(library, "curl_multi_perform", c.multiPerform, missing);
  resolve(library, "curl_multi_info_read", c.multiInfoRead, missing);
  resolve(library, "curl_multi_poll", c.multiPoll, missing); // libcurl 7.66 and later
  resolve(library, "curl_multi_cleanup", c.multiCleanup, missing);
  if (!missing.empty()) loaded.error = std::string(CurlSoname) + " lacks " + missing;
  else if (c.globalInit(CURL_GLOBAL_DEFAULT) != CURLE_OK) loaded.error = "libcurl's global initialization failed";
  return loaded;
}

} // namespace

llvm::Expected<const CurlLibrary &> CurlLibrary::get() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) return fail(loaded.error);
  return loaded.curl;
}

} // namespace stackwalk
