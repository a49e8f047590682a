#!/bin/sh
# dev.sh demo | test | build: set up a fresh Debian 12 machine, build stackwalk,
# and run it on a shipped dump (demo) or run the whole test suite (test).
set -eu
cd "$(dirname "$0")"
BUILD=${BUILD:-build}

# Debian packages: the toolchain, LLVM 19 (linked statically), CLI11,
# nlohmann/json and Catch2; gdb and elfutils for the oracle tests.
PACKAGES="cmake ninja-build g++ python3 xz-utils llvm-19-dev libcli11-dev nlohmann-json3-dev catch2
  libzstd-dev zlib1g-dev libxml2-dev libedit-dev libffi-dev libz3-dev gdb elfutils python3-jsonschema"

install_missing() {
  missing=""
  for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  echo "dev.sh: installing$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
}

build() {
  install_missing
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD"
}

case "${1:-}" in
  demo)
    build
    D="$BUILD/dumps"
    exec "$BUILD/stackwalk" "$D/cores/crash-segv.core" --all-threads --sysroot "$D/sysroot" --module-path "$D/bin"
    ;;
  test)
    build
    (cd "$BUILD" && ctest --output-on-failure)
    # The whole suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
    cmake -S . -B "$BUILD-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTACKWALK_SANITIZE=ON >/dev/null
    cmake --build "$BUILD-asan"
    cd "$BUILD-asan" && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 exec ctest --output-on-failure
    ;;
  build)
    build
    ;;
  *)
    echo "usage: dev.sh demo | test | build" >&2
    exit 2
    ;;
esac
