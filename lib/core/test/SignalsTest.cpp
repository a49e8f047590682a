#include "stackwalk/core/Signals.h"

#include <catch2/catch.hpp>

using namespace stackwalk;

TEST_CASE("signals and their codes by name") {
  CHECK(signalName(11) == "SIGSEGV");
  CHECK(signalName(13) == "SIGPIPE");
  CHECK(signalName(31) == "SIGSYS");
  CHECK(signalName(99) == "signal 99");
  CHECK(signalName(0) == "signal 0");
  CHECK(signalCodeName(11, 1) == "SEGV_MAPERR");
  CHECK(signalCodeName(11, 2) == "SEGV_ACCERR");
  CHECK(signalCodeName(7, 1) == "BUS_ADRALN");
  CHECK(signalCodeName(8, 1) == "FPE_INTDIV");
  CHECK(signalCodeName(4, 2) == "ILL_ILLOPN");
  CHECK(signalCodeName(5, 1) == "TRAP_BRKPT");
  // Who sent it, for any signal: raise() and abort() use tgkill.
  CHECK(signalCodeName(6, -6) == "SI_TKILL");
  CHECK(signalCodeName(11, 0) == "SI_USER");
  CHECK(signalCodeName(11, 0x80) == "SI_KERNEL");
  // No name: a fault code of a signal the kernel does not raise, or out of range.
  CHECK_FALSE(signalCodeName(6, 1));
  CHECK_FALSE(signalCodeName(11, 5));
  CHECK_FALSE(signalCodeName(11, -60));
}
