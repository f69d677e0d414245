// SPDX-License-Identifier: MIT
//go:build cgo

// With cgo the program links libc dynamically (the loader, LD_PRELOAD).
package main

// #include <unistd.h>
import "C"

func init() { C.getpid() }
