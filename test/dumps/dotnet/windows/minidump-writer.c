/* minidump-writer PID FILE: write a full-memory minidump of process PID with
 * dbghelp's MiniDumpWriteDump (built with MinGW-w64, run under Wine by
 * make-windows-dumps.sh).
 *
 * Neither Wine's own tools nor createdump.exe dump another live process with its
 * memory: `winedbg --minidump` writes stacks only (no runtime data), and
 * createdump.exe refuses a pid ("The pid argument is no longer supported").
 * Wine 8's dbghelp writes threads, modules, the exception and the memory lists
 * of these flags, but no memory-info list. */
#include <windows.h>
#include <dbghelp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: minidump-writer PID FILE\n");
    return 2;
  }
  DWORD pid = strtoul(argv[1], NULL, 0);
  MINIDUMP_TYPE type = MiniDumpWithDataSegs | MiniDumpWithFullMemory | MiniDumpWithHandleData |
                       MiniDumpWithFullMemoryInfo | MiniDumpWithThreadInfo;
  HANDLE process = OpenProcess(PROCESS_ALL_ACCESS, FALSE, pid);
  if (!process) {
    fprintf(stderr, "OpenProcess(%lu): error %lu\n", pid, GetLastError());
    return 1;
  }
  /* Wine's MiniDumpWriteDump initialises dbghelp's symbols for a process that has
   * none and cleans them up after writing; that cleanup crashes in Wine 8 on this
   * program's modules (pdb_module_remove). Initialised here, with no modules loaded,
   * and never cleaned up, dbghelp leaves them alone: the dump needs no symbols. */
  if (!SymInitialize(process, NULL, FALSE)) {
    fprintf(stderr, "SymInitialize: error %lu\n", GetLastError());
    return 1;
  }
  HANDLE file = CreateFileA(argv[2], GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
  if (file == INVALID_HANDLE_VALUE) {
    fprintf(stderr, "CreateFile(%s): error %lu\n", argv[2], GetLastError());
    return 1;
  }
  if (!MiniDumpWriteDump(process, pid, file, type, NULL, NULL, NULL)) {
    fprintf(stderr, "MiniDumpWriteDump: error 0x%lx\n", GetLastError());
    return 1;
  }
  CloseHandle(file);
  return 0;
}
