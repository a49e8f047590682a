// Two goroutines asleep in C (a cgo call each, at different depths of Go
// recursion), one asleep in Go: go_cgo_test.py walks a core of it and
// compares the goroutines behind each C stack with Go's own traceback.
package main

/*
#include <unistd.h>
static void csleep(int n) { if (n == 0) { sleep(1000); return; } csleep(n - 1); __asm__ volatile(""); }
*/
import "C"
import "time"

//go:noinline
func gorec(n int) {
	if n == 0 {
		C.csleep(3)
		return
	}
	gorec(n - 1)
}

func main() {
	go gorec(4)
	go func() { time.Sleep(time.Hour) }()
	gorec(2)
}
