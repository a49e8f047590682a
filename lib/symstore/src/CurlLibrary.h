// libcurl's functions, loaded from libcurl.so.4 when a symbol server is first
// set up rather than linked: linking it costs every run about 6 ms before
// main (it brings some 30 libraries: TLS, Kerberos, LDAP, IDN), which is most
// of a small dump's walk, and most runs ask no server. There is no library
// for loading a C API lazily; LLVM's DynamicLibrary does the dlopen/dlsym.
#pragma once

#include "llvm/Support/Error.h"

#include <curl/curl.h>

namespace stackwalk {

struct CurlLibrary {
  decltype(&::curl_global_init) globalInit;
  decltype(&::curl_free) free;
  decltype(&::curl_easy_init) easyInit;
  decltype(&::curl_easy_setopt) easySetopt;
  decltype(&::curl_easy_getinfo) easyGetinfo;
  decltype(&::curl_easy_cleanup) easyCleanup;
  decltype(&::curl_easy_strerror) easyStrerror;
  decltype(&::curl_easy_escape) easyEscape;
  decltype(&::curl_multi_init) multiInit;
  decltype(&::curl_multi_add_handle) multiAddHandle;
  decltype(&::curl_multi_remove_handle) multiRemoveHandle;
  decltype(&::curl_multi_perform) multiPerform;
  decltype(&::curl_multi_info_read) multiInfoRead;
  decltype(&::curl_multi_poll) multiPoll;
  decltype(&::curl_multi_cleanup) multiCleanup;

  // The library, loaded and globally initialized once per process; the
  // error says why it cannot be used.
  static llvm::Expected<const CurlLibrary &> get();
};

} // namespace stackwalk
