// SPDX-License-Identifier: MIT
// A stand-in for a Go daemon: its syscalls bypass libc entirely, so only
// kbpf-trace can see them. The counts it prints are the deterministic
// part: pwrite64/pread64 on a file, writev/readv on a pipe and getppid,
// none of which the Go runtime makes on its own.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"
)

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgo:", err)
		os.Exit(1)
	}
}

func rawv(nr uintptr, fd int, buf []byte) {
	iov := syscall.Iovec{Base: &buf[0]}
	iov.SetLen(len(buf))
	_, _, e := syscall.Syscall(nr, uintptr(fd), uintptr(unsafe.Pointer(&iov)), 1)
	if e != 0 {
		must(e)
	}
}

func main() {
	dir := os.TempDir()
	n := 500
	if len(os.Args) > 1 {
		v, err := strconv.Atoi(os.Args[1])
		must(err)
		n = v
	}
	f, err := os.Create(filepath.Join(dir, "kgo.data"))
	must(err)
	fd := int(f.Fd())
	buf := make([]byte, 64)
	for i := 0; i < n; i++ {
		_, err := syscall.Pwrite(fd, buf, int64(i*64))
		must(err)
	}
	for i := 0; i < n/2; i++ {
		_, err := syscall.Pread(fd, buf, int64(i*64))
		must(err)
	}
	var p [2]int
	must(syscall.Pipe2(p[:], syscall.O_CLOEXEC))
	for i := 0; i < n/5; i++ {
		rawv(syscall.SYS_WRITEV, p[1], buf[:8])
		rawv(syscall.SYS_READV, p[0], buf[:8])
	}
	for i := 0; i < 123; i++ {
		syscall.Getppid()
	}
	must(f.Close())
	os.Remove(filepath.Join(dir, "kgo.data"))
	fmt.Printf("pwrite64 %d\npread64 %d\nwritev %d\nreadv %d\ngetppid %d\n",
		n, n/2, n/5, n/5, 123)
}
