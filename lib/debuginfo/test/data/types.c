/* Globals of the types --args prints, each with a value. ValueFormatterTest
   formats their bytes from .data with their DWARF types and expects what
   gdb 13 prints for them (`print NAME` on types.o). Rebuild:
   gcc -g -O0 -c types.c -o types.o */
#include <stdbool.h>
enum color { RED, GREEN = 5, BLUE };
struct point { int x, y; };
struct flags { unsigned a : 3; int b : 4; bool c : 1; };
struct nested { struct point p; enum color c; char name[8]; double d; };
union number { int i; float f; };
typedef struct point point_t;

int v_int = -199;
unsigned long v_ulong = 18446744073709551615UL;
char v_char = 'q';
signed char v_schar = -1;
unsigned char v_newline = '\n';
bool v_bool = true;
enum color v_enum = GREEN;
enum color v_enum_unknown = (enum color)7;
float v_float = 3.5f;
double v_double = 0.1;
const char *v_string = "hi\t\"there\"";
void *v_null = 0;
struct point v_point = {3, -4};
point_t v_typedef = {1, 2};
struct flags v_flags = {5, -3, true};
struct nested v_nested = {{1, 2}, BLUE, "abc", 2.25};
union number v_union = {.i = 1};
int v_array[3] = {7, 8, 9};
int v_repeats[12] = {0};
char v_text[16] = "hello";
