// SPDX-License-Identifier: MIT
// A cgo Go program for patch mode (tests/t_patch_go.sh): cgo makes it
// dynamically linked, so LD_PRELOAD loads the shim, while the Go runtime
// still makes its syscalls with its own `syscall` instructions, which no
// unwind table describes. Goroutines make getppid and pread64 calls (the
// counts it prints are exact), and os/exec starts a child through
// syscall.rawVforkSyscall (clone with CLONE_VFORK on the caller's stack).
//
// The calls come from goroutines on the small stacks they start with (2
// KiB): the shim's hook and its flushes run on a stack of its own
// (docs/SHIM.md, "Whose stack a hook runs on").
package main

// static int kgocgo_one(void) { return 1; }
import "C"

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgocgo:", err)
		os.Exit(1)
	}
}

func arg(i, def int) int {
	if len(os.Args) <= i {
		return def
	}
	v, err := strconv.Atoi(os.Args[i])
	must(err)
	return v
}

func main() {
	n, workers := arg(1, 10000), arg(2, 4)
	name := filepath.Join(os.TempDir(), fmt.Sprintf("kgocgo.%d", os.Getpid()))
	data := make([]byte, 4096)
	for i := range data {
		data[i] = byte(i * 7)
	}
	must(os.WriteFile(name, data, 0o600))
	f, err := os.Open(name)
	must(err)
	os.Remove(name)
	fd := int(f.Fd())
	var wg sync.WaitGroup
	sums := make([]int, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			buf := make([]byte, 64)
			for i := 0; i < n/workers; i++ {
				syscall.Getppid()
				if i%10 == 0 {
					_, err := syscall.Pread(fd, buf, int64(i%64)*64)
					must(err)
					sums[w] += int(buf[i%64])
				}
			}
		}(w)
	}
	wg.Wait()
	must(f.Close())
	sum := 0
	for _, s := range sums {
		sum += s
	}
	out, err := exec.Command("/bin/echo", "child").Output()
	must(err)
	fmt.Printf("getppid %d\npread64 %d\ncgo %d\nsum %d\nexec %s", n/workers*workers,
		(n/workers+9)/10*workers, int(C.kgocgo_one()), sum, out)
}
