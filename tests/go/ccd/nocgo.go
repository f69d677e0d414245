// SPDX-License-Identifier: MIT
// The static build's counterpart of cgo.go.

//go:build !cgo

package main

func linkage() string { return "static" }
