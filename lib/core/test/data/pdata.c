/* A stripped DLL for SymbolizerTest: an exported function, then a function no
   export names; only the exports and the function table (.pdata) describe it.
   Built with: x86_64-w64-mingw32-gcc -shared -s -O2 -fno-toplevel-reorder -o pdata.dll pdata.c */
volatile int sink;

__declspec(dllexport) int stackwalk_exported(int n) {
  for (int i = 0; i < n; ++i) sink += i;
  return sink;
}

__attribute__((noinline)) static int unexported(int n) {
  volatile char buffer[256];
  for (int i = 0; i < n; ++i) buffer[i & 255] = (char)i;
  return buffer[n & 255] + stackwalk_exported(n);
}

__declspec(dllexport) int stackwalk_caller(int n) { return unexported(n) + 1; }
