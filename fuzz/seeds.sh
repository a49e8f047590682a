#!/bin/sh
# seeds.sh BUILD_DIR OUT_DIR: seed corpora for the fuzz targets, from the
# project's unpacked dumps (BUILD_DIR/dumps) and ../shared/corpus when present.
set -eu
build=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
corpus=$here/../../shared/corpus
mkdir -p "$out"/elfcore "$out"/minidump "$out"/module_image "$out"/frame_arguments "$out"/cfi "$out"/dwarf_expression "$out"/win64_unwind "$out"/arm_ehabi "$out"/libunwind_dynamic "$out"/ecma_metadata "$out"/runtime_structures "$out"/symbol_file "$out"/symbol_map "$out"/perf_map "$out"/process_maps "$out"/cabinet "$out"/pdb "$out"/x86_code_analysis "$out"/walk
cp "$build"/dumps/cores/*.core "$out"/elfcore/
cp "$build"/dumps/windows/dumps/*.dmp "$out"/minidump/
if [ -d "$corpus" ]; then
  find "$corpus/minidump" -name '*.dmp' -exec cp {} "$out"/minidump/ \;
  cp "$corpus"/elfcore/lldb/linux-x86_64.core "$out"/elfcore/
  # An i386 core's headers, notes (the 32-bit layouts) and first pages.
  bzcat "$corpus"/elfcore/elfutils-more/backtrace.i386.core.bz2 | head -c 65536 > "$out"/elfcore/backtrace.i386.head || true
  # Breakpad symbol files under 1 MB, with FUNC, INLINE, PUBLIC and STACK records.
  find "$corpus/minidump" -name '*.sym' -size -1M -exec cp {} "$out"/symbol_file/ \;
fi
# The whole walk reads dumps of either format, and the crafted hostile dumps
# (test/hostile) small enough to mutate: JIT entries, a zstd bomb, PE claims.
cp "$out"/elfcore/* "$out"/minidump/* "$out"/walk/
hostile=$(mktemp -d)
python3 "$here"/../test/hostile/make-hostile.py "$build"/dumps "$hostile" >/dev/null
find "$hostile" -size -2M -type f -exec cp {} "$out"/walk/ \;
rm -rf "$hostile"
# The symbol maps --symbol-cache keeps for a walk's small images, without the cache entry's trailer.
maps=$(mktemp -d)
"$build"/stackwalk "$build"/dumps/cores/threads-O2-nofp.core --module-path "$build"/dumps/bin \
  --sysroot "$build"/dumps/sysroot --symbol-cache "$maps" >/dev/null 2>&1 || true
for map in $(find "$maps/.symmap" -type f -size -64k); do head -c -24 "$map" > "$out/symbol_map/$(basename "$map")"; done
rm -rf "$maps"
cp "$build"/dumps/bin/crash-segv "$build"/dumps/bin/stripped "$build"/dumps/windows/bin/threads-O2.exe "$out"/module_image/
# 32-bit images (ELF32: i386's .eh_frame_hdr, ARM's .ARM.exidx), from the 32-bit tests' libraries.
[ -f /usr/lib/i386-linux-gnu/libdl.so.2 ] && cp /usr/lib/i386-linux-gnu/libdl.so.2 "$out"/module_image/i386-libdl.so.2
[ -f /usr/arm-linux-gnueabihf/lib/libdl.so.2 ] && cp /usr/arm-linux-gnueabihf/lib/libdl.so.2 "$out"/module_image/armhf-libdl.so.2
# A file with zlib-compressed DWARF, as debug packages have theirs.
objcopy --compress-debug-sections=zlib "$build"/dumps/bin/args-O0 "$out"/module_image/args-O0.zdebug
# Programs whose DWARF has parameters, location lists and call sites (-O2), and a MinGW PE with DWARF.
cp "$build"/dumps/bin/args-O0 "$build"/dumps/bin/args-O2 "$build"/dumps/bin/recursion-alloca "$out"/frame_arguments/
cp "$build"/dumps/windows/bin/crash-av.exe "$out"/frame_arguments/ 2>/dev/null || true
for exe in "$build"/dumps/bin/crash-segv "$build"/dumps/bin/cxx-throw; do
  # A .eh_frame section behind the kind byte 0 (.eh_frame).
  name=$(basename "$exe")
  objcopy -O binary --only-section=.eh_frame "$exe" "$out/cfi/$name.raw"
  { printf '\000'; cat "$out/cfi/$name.raw"; } > "$out/cfi/$name"
  rm "$out/cfi/$name.raw"
done
printf '\020\000\000\000\000\000\000\000\167\010\006\043\010' > "$out"/dwarf_expression/breg7-deref
x86_64-w64-mingw32-objcopy -O binary --only-section=.xdata "$build"/dumps/windows/bin/threads-O2.exe \
  "$out"/win64_unwind/xdata 2>/dev/null || objcopy -O binary --only-section=.xdata "$build"/dumps/windows/bin/threads-O2.exe "$out"/win64_unwind/xdata || true
# An ARM64 .xdata record at offset 16 (the fourth word's upper half picks it): set_fp,
# save_regp, save_fplr_x, end.
printf '\000\000\000\000\000\000\000\000\000\000\000\000\000\000\020\000\040\000\000\010\341\310\002\205\344\000\000\000' \
  > "$out"/win64_unwind/arm64-xdata
# An exidx table: an inline entry (pop {r4, lr}), one into extab (compact
# model 1, one more word), EXIDX_CANTUNWIND; then the extab words.
printf '\000\000\000\000\260\260\250\200\000\001\000\000\020\000\000\000\000\002\000\000\001\000\000\000\003\250\001\201\260\260\260\260' \
  > "$out"/arm_ehabi/table
cp "$(dirname "$0")"/../lib/frames/test/data/Nested.dll "$out"/ecma_metadata/ 2>/dev/null || true
head -c 4096 "$build"/dumps/dotnet/cores/park-normal.core > "$out"/runtime_structures/core-head 2>/dev/null || true
cp /proc/self/maps "$out"/process_maps/self
# Functions from their start: x86-64 (an even first byte) with glibc's pthread_mutex_lock
# epilogue (pops among other instructions before a tail call), and i386 (odd) with a frame
# pointer, callee-saved pushes and a get-pc call.
printf '\000\123\110\203\354\020\110\203\304\020\110\215\167\026\133\201\342\200\000\000\000\351\000\001\000\000\110\211\174\044\010' \
  > "$out"/x86_code_analysis/epilogue
printf '\001\125\211\345\127\123\203\354\020\350\000\000\000\000\133\152\001\350\020\000\000\000' \
  > "$out"/x86_code_analysis/i386-prologue
# A perf map as JITs write one (.NET's and V8's lines), with an entry replaced by a later line.
printf '%s\n' '7F3A1C2D0000 3C [OptimizedTier1] Program::Main()[OptimizedTier1]' \
  '0x7f3a1c2d0040 20 LazyCompile:~main app.js:1' '7F3A1C2D0000 10 [Tier0] Program::Main()[Tier0]' 'zz 10 bad' \
  > "$out"/perf_map/jit.map
# PDBs: a 32-bit one with FrameData (lld's) and the 64-bit one of the Windows test dumps.
cp "$here"/../lib/core/test/data/fpo.pdb "$out"/pdb/
find "$build"/dumps/windows/symbols -name '*.pdb' -type f -exec cp {} "$out"/pdb/ \;
# A cabinet as symbol stores compress files (MSZIP, and none), made by gcab when it is there.
if command -v gcab >/dev/null; then
  seedfile=$(mktemp -d)
  head -c 20000 "$build"/dumps/bin/args-O0 > "$seedfile"/input.pdb
  cabinets=$(cd "$out"/cabinet && pwd)
  (cd "$seedfile" && gcab -c -z "$cabinets"/mszip.pd_ input.pdb && gcab -c "$cabinets"/stored.pd_ input.pdb)
  rm -rf "$seedfile"
fi
echo "seeds in $out"
