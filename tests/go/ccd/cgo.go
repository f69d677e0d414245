// SPDX-License-Identifier: MIT
// Present only in the cgo build (CGO_ENABLED=1, the default): importing
// "C" links the program dynamically against libc, so LD_PRELOAD loads
// the shim into it. With CGO_ENABLED=0 this file is left out and the
// program is a static executable the shim cannot enter.

//go:build cgo

package main

// #include <unistd.h>
import "C"

// linkage says which build this is, for `ccd version`.
func linkage() string {
	if C.getpid() > 0 {
		return "cgo"
	}
	return "cgo?"
}
