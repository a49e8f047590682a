#!/bin/sh
# dev.sh demo | test | build | fuzz [SECONDS]: set up a fresh Debian 12 machine,
# build stackwalk, and run it on a shipped dump (demo), run the whole test suite
# (test), or run each libFuzzer target for SECONDS (default 30) on its seeds (fuzz).
set -eu
cd "$(dirname "$0")"
BUILD=${BUILD:-build}

# Debian packages. To build: the toolchain, LLVM 19 (linked statically, by
# LLVM's lld: CMakeLists.txt says why), CLI11, nlohmann/json, Catch2, libcurl
# and libmspack (symbol servers, their cabinets), libdeflate and ISA-L
# (compressed DWARF). To test, also: gdb and elfutils for the oracle tests,
# python3-jsonschema for the schema, clang for the fuzz targets, Wine and
# MinGW-w64 for the Windows tests (winedbg's oracle, .NET under Wine), lld
# also for the 32-bit DLL and PDB of windows_fpo_test, debuginfod and gcab for
# the symbol-server tests, lldb-19 for its minidumps (lldb_minidump_test), GNU
# parallel for README's batch recipe, and for the arm64, i386 and arm tests the
# cross compilers, qemu-user, gdb-multiarch and Debian's arm64, i386 and armhf
# libc with its debug info (the multiarch packages eu-stack reads).
BUILD_PACKAGES="cmake ninja-build g++ lld-19 python3 xz-utils llvm-19-dev libcli11-dev nlohmann-json3-dev catch2
  libzstd-dev zlib1g-dev libxml2-dev libedit-dev libffi-dev libz3-dev libcurl4-openssl-dev libdeflate-dev libisal-dev libzydis-dev libmspack-dev libiberty-dev"
TEST_PACKAGES="llvm-19 gdb elfutils python3-jsonschema clang-19 libclang-rt-19-dev lld-19 wine wine64 gcc-mingw-w64-x86-64 strace debuginfod gcab lldb-19 parallel golang-go"
# The arm64, i386 and arm tests' tools come from foreign architectures' package
# lists, which a mirror can fail to serve: without them those tests skip, so
# their install may fail without stopping the run.
ARM64_PACKAGES="gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user gdb-multiarch libc6:arm64 libc6-dbg:arm64
  libstdc++6:arm64"
I386_PACKAGES="gcc-i686-linux-gnu g++-i686-linux-gnu libc6-dev-i386-cross libc6:i386 libc6-dbg:i386 libstdc++6:i386"
ARMHF_PACKAGES="gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf libc6:armhf libc6-dbg:armhf libstdc++6:armhf"
PACKAGES="$BUILD_PACKAGES $TEST_PACKAGES"

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

missing_of() {
  missing=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  echo "$missing"
}

install_missing() {
  missing=$(missing_of $PACKAGES)
  [ -z "$missing" ] && return 0
  echo "dev.sh: installing$missing"
  # A list that fails (a foreign architecture's mirror) need not stop the install of the others.
  $sudo apt-get update -qq || echo "dev.sh: apt-get update reported errors; installing from the lists it has"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
}

# install_foreign_tools ARCH PACKAGES...: a foreign architecture's test tools, if they can be had.
install_foreign_tools() {
  arch=$1
  shift
  missing=$(missing_of "$@")
  [ -z "$missing" ] && return 0
  echo "dev.sh: installing$missing"
  # A list the mirror cannot serve (a security archive mid-sync) need not stop
  # the install: apt refuses versions that do not match the host's.
  { dpkg --print-foreign-architectures | grep -qx "$arch" || $sudo dpkg --add-architecture "$arch"; } &&
    { $sudo apt-get update -qq || echo "dev.sh: apt-get update reported errors for $arch"; } &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null ||
    echo "dev.sh: the $arch tools could not be installed; the $arch tests will skip"
}

build() {
  install_missing
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD"
}

# The sanitizer build: everything, fuzz targets included, compiled by clang with
# AddressSanitizer and UndefinedBehaviorSanitizer. One build serves both the
# sanitized test run and the fuzzers (GCC's sanitized build took 18 minutes here,
# clang's takes 8).
sanitizer_build() {
  cmake -S . -B "$BUILD-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-19 \
    -DCMAKE_CXX_COMPILER=clang++-19 -DSTACKWALK_FUZZ=ON >/dev/null
  cmake --build "$BUILD-asan"
}

# fuzz_target TARGET SECONDS SEEDS: one libFuzzer target on its corpus and seeds, its output in
# build-asan/fuzz-TARGET.log and what it finds in build-asan/TARGET-*.
# One allocation over 256 MiB is a finding (an input of at most 1 MiB asking for that much is an
# amplification: fuzz/README.md), but in the targets that walk or read whole images, whose
# budgets allow more by design (1 GiB of images copied from a dump, 2 GiB of inflated debug
# info): there libFuzzer's limit is the RSS limit's 4 GiB.
budgeted_targets="elfcore minidump module_image frame_arguments walk"
fuzz_target() {
  mkdir -p "$BUILD-asan/corpus/$1"
  case " $budgeted_targets " in
    *" $1 "*) malloc_limit=4096 ;;
    *) malloc_limit=256 ;;
  esac
  UBSAN_OPTIONS=halt_on_error=1 "$BUILD-asan/fuzz/fuzz_$1" "$BUILD-asan/corpus/$1" "$3/$1" -max_total_time="$2" \
    -rss_limit_mb=4096 -malloc_limit_mb="$malloc_limit" -artifact_prefix="$BUILD-asan/$1-" -print_final_stats=1 \
    >"$BUILD-asan/fuzz-$1.log" 2>&1 || true
}

case "${1:-}" in
  demo)
    PACKAGES=$BUILD_PACKAGES
    build
    D="$BUILD/dumps"
    exec "$BUILD/stackwalk" "$D/cores/crash-segv.core" --all-threads --sysroot "$D/sysroot" --module-path "$D/bin"
    ;;
  test)
    build
    install_foreign_tools arm64 $ARM64_PACKAGES
    install_foreign_tools i386 $I386_PACKAGES
    install_foreign_tools armhf $ARMHF_PACKAGES
    # A test per core: most of a test's time is its tools (gdb, Wine, dotnet, qemu) and Python.
    (cd "$BUILD" && ctest --output-on-failure --parallel "$(nproc)")
    # The whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
    sanitizer_build
    cd "$BUILD-asan" && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 exec ctest --output-on-failure --parallel "$(nproc)"
    ;;
  build)
    build
    ;;
  fuzz)
    build
    seconds=${2:-30}
    sanitizer_build
    seeds="$BUILD-asan/seeds"
    rm -rf "$seeds" && fuzz/seeds.sh "$BUILD" "$seeds" >/dev/null
    targets="elfcore minidump module_image frame_arguments cfi dwarf_expression win64_unwind arm_ehabi libunwind_dynamic ecma_metadata runtime_structures symbol_file symbol_map perf_map process_maps cabinet pdb x86_code_analysis walk"
    # Two targets at a time (each libFuzzer run is one process on one core), then their reports in order.
    set -- $targets
    while [ $# -gt 0 ]; do
      fuzz_target "$1" "$seconds" "$seeds" &
      if [ $# -gt 1 ]; then fuzz_target "$2" "$seconds" "$seeds" & shift; fi
      shift
      wait
    done
    for target in $targets; do
      echo "dev.sh: fuzz_$target for ${seconds}s"
      grep -E "^(stat::number_of_executed_units|==.*ERROR|SUMMARY)" "$BUILD-asan/fuzz-$target.log" || true
      found=""
      for artifact in "$BUILD-asan/$target"-crash-* "$BUILD-asan/$target"-leak-* "$BUILD-asan/$target"-timeout-* "$BUILD-asan/$target"-oom-*; do
        if [ -e "$artifact" ]; then found="$found $artifact"; fi
      done
      if [ -n "$found" ]; then echo "dev.sh: fuzz_$target found a failure:$found"; exit 1; fi
    done
    ;;
  *)
    echo "usage: dev.sh demo | test | build | fuzz [SECONDS]" >&2
    exit 2
    ;;
esac
