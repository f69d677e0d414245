// SPDX-License-Identifier: MIT
// A stand-in for a daemon that spawns compilers: it runs each argument
// as a child (Go's os/exec: the runtime's own fork and exec, no libc) and
// prints its pid. Built with CGO_ENABLED=0 it is static, and LD_PRELOAD
// cannot enter it while its children, dynamic, are traced; built with
// cgo it is dynamic, and symbol mode sees only its few libc calls.
package main

import (
	"fmt"
	"os"
	"os/exec"
)

func main() {
	fmt.Printf("kspawn pid %d\n", os.Getpid())
	for _, a := range os.Args[1:] {
		cmd := exec.Command(a)
		cmd.Stdout = os.Stdout
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "kspawn:", err)
			os.Exit(1)
		}
	}
}
