/* A DLL with named exports, for ModuleImageTest: a data export named as the
   .NET runtime names its contract descriptor, and a function.
   Built with: x86_64-w64-mingw32-gcc -shared -s -O2 -o exports.dll exports.c */
__declspec(dllexport) int DotNetRuntimeContractDescriptor = 7;
__declspec(dllexport) int stackwalk_exported_function(void) { return 1; }
