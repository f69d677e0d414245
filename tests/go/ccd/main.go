// SPDX-License-Identifier: MIT
// ccd: a small compile-cache daemon, the kind of Go service the shim is
// loaded into in the field. The daemon serves compile requests on a unix
// socket; a request names a C source (a path, or the bytes) and gcc
// flags. The daemon hashes source and flags (SHA-256); on a miss it runs
// `gcc -c` with the source on a pipe and keeps the object in its cache
// directory, on a hit it reads the cached object. It answers hit or miss
// with the object's SHA-256 and size. Every connection has a goroutine,
// and every request several (reading the source, hashing, feeding gcc's
// stdin, draining its stderr, waiting for it, reading the object), so
// that syscalls run on many small goroutine stacks at once.
//
// Usage:
//
//	ccd daemon SOCKET CACHEDIR     serve until `ccd stop` or SIGTERM
//	ccd client [-inline] [-flags F] [-j N] SOCKET FILE.c...
//	                               one request per file, N at once (all)
//	ccd stop SOCKET                stop the daemon (it prints its totals)
//	ccd gen DIR N                  write N small distinct C files
//	ccd version                    "cgo" or "static"
//
// Everything printed on stdout is normalised (no paths, pids or times),
// so that a run under the shim can be compared with a plain run.
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// request is one line of JSON from a client.
type request struct {
	Op     string   `json:"op,omitempty"` // "compile" (default) or "shutdown"
	Name   string   `json:"name"`         // echoed back: the client's label
	Path   string   `json:"path,omitempty"`
	Source []byte   `json:"source,omitempty"`
	Flags  []string `json:"flags,omitempty"`
}

// response is one line of JSON to a client.
type response struct {
	Name   string `json:"name"`
	Result string `json:"result"` // hit, miss, error, bye
	Key    string `json:"key,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Size   int64  `json:"size"`
	Error  string `json:"error,omitempty"`
}

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "ccd: "+format+"\n", a...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		die("usage: ccd daemon|client|stop|gen|version ...")
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "daemon":
		if len(args) != 2 {
			die("usage: ccd daemon SOCKET CACHEDIR")
		}
		os.Exit(daemon(args[0], args[1]))
	case "client":
		os.Exit(client(args))
	case "stop":
		if len(args) != 1 {
			die("usage: ccd stop SOCKET")
		}
		os.Exit(stop(args[0]))
	case "gen":
		if len(args) != 2 {
			die("usage: ccd gen DIR N")
		}
		n, err := strconv.Atoi(args[1])
		if err != nil {
			die("gen: %v", err)
		}
		if err := gen(args[0], n); err != nil {
			die("gen: %v", err)
		}
	case "version":
		fmt.Println(linkage())
	default:
		die("unknown command %s", os.Args[1])
	}
}

// server holds the daemon's state.
type server struct {
	cache    string
	ln       net.Listener
	conns    sync.WaitGroup
	stopping int32
	requests int64
	hits     int64
	misses   int64
	errs     int64
	seq      int64
	mu       sync.Mutex
	inflight map[string]chan struct{} // key -> closed when compiled
}

func daemon(sock, cache string) int {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		die("%v", err)
	}
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		die("%v", err)
	}
	s := &server{cache: cache, ln: ln, inflight: map[string]chan struct{}{}}

	// SIGTERM stops the daemon as `ccd stop` does.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigs
		s.shutdown()
	}()
	// A janitor that lists the cache on a timer: more syscalls from
	// goroutines woken by the runtime's timers.
	done := make(chan struct{})
	go s.janitor(done)

	for {
		c, err := ln.Accept()
		if err != nil {
			if atomic.LoadInt32(&s.stopping) != 0 {
				break
			}
			fmt.Fprintf(os.Stderr, "ccd: accept: %v\n", err)
			continue
		}
		s.conns.Add(1)
		go s.serveConn(c)
	}
	s.conns.Wait()
	close(done)
	os.Remove(sock)
	objs, _ := filepath.Glob(filepath.Join(cache, "*.o"))
	fmt.Printf("daemon: %d requests, %d hits, %d misses, %d errors, %d objects cached\n",
		s.requests, s.hits, s.misses, s.errs, len(objs))
	return 0
}

func (s *server) shutdown() {
	if atomic.CompareAndSwapInt32(&s.stopping, 0, 1) {
		s.ln.Close()
	}
}

func (s *server) janitor(done chan struct{}) {
	t := time.NewTicker(3 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			ents, err := os.ReadDir(s.cache)
			if err == nil {
				for _, e := range ents {
					if strings.HasSuffix(e.Name(), ".tmp") {
						e.Info()
					}
				}
			}
		}
	}
}

func (s *server) serveConn(c net.Conn) {
	defer s.conns.Done()
	defer c.Close()
	dec := json.NewDecoder(bufio.NewReader(c))
	enc := json.NewEncoder(c)
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(os.Stderr, "ccd: bad request: %v\n", err)
			}
			return
		}
		if req.Op == "shutdown" {
			enc.Encode(response{Name: req.Name, Result: "bye"})
			s.shutdown()
			return
		}
		atomic.AddInt64(&s.requests, 1)
		resp := s.compile(&req)
		switch resp.Result {
		case "hit":
			atomic.AddInt64(&s.hits, 1)
		case "miss":
			atomic.AddInt64(&s.misses, 1)
		default:
			atomic.AddInt64(&s.errs, 1)
		}
		if err := enc.Encode(resp); err != nil {
			return
		}
	}
}

// readChunks sends the contents of r in pieces of 4 KiB on a channel from
// a goroutine of its own; the error, if any, arrives on errc.
func readChunks(r io.Reader) (<-chan []byte, <-chan error) {
	out := make(chan []byte, 4)
	errc := make(chan error, 1)
	go func() {
		defer close(out)
		for {
			buf := make([]byte, 4096)
			n, err := r.Read(buf)
			if n > 0 {
				out <- buf[:n]
			}
			if err == io.EOF {
				errc <- nil
				return
			}
			if err != nil {
				errc <- err
				return
			}
		}
	}()
	return out, errc
}

// hashChunks hashes what arrives on in, in a goroutine of its own, with
// prefix hashed first; it keeps the bytes when keep is set.
func hashChunks(prefix []byte, in <-chan []byte, keep bool) <-chan hashed {
	out := make(chan hashed, 1)
	go func() {
		h := sha256.New()
		h.Write(prefix)
		var all []byte
		var n int64
		for b := range in {
			h.Write(b)
			n += int64(len(b))
			if keep {
				all = append(all, b...)
			}
		}
		out <- hashed{sum: hex.EncodeToString(h.Sum(nil)), size: n, data: all}
	}()
	return out
}

type hashed struct {
	sum  string
	size int64
	data []byte
}

// source gives the request's source bytes and its cache key.
func source(req *request) (key string, src []byte, err error) {
	prefix := []byte("ccd1\x00" + strings.Join(req.Flags, "\x00") + "\x00\x00")
	var in <-chan []byte
	var errc <-chan error
	if req.Path != "" {
		f, err := os.Open(req.Path)
		if err != nil {
			return "", nil, err
		}
		defer f.Close()
		in, errc = readChunks(f)
	} else {
		ch := make(chan []byte, 1)
		ec := make(chan error, 1)
		ch <- req.Source
		close(ch)
		ec <- nil
		in, errc = ch, ec
	}
	h := <-hashChunks(prefix, in, true)
	if err := <-errc; err != nil {
		return "", nil, err
	}
	return h.sum, h.data, nil
}

// objectHash reads a cached object in a goroutine and hashes it in another.
func objectHash(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	in, errc := readChunks(f)
	h := <-hashChunks(nil, in, false)
	if err := <-errc; err != nil {
		return "", 0, err
	}
	return h.sum, h.size, nil
}

func (s *server) compile(req *request) response {
	resp := response{Name: req.Name}
	fail := func(err error) response {
		resp.Result = "error"
		resp.Error = err.Error()
		return resp
	}
	key, src, err := source(req)
	if err != nil {
		return fail(err)
	}
	resp.Key = key[:16]
	obj := filepath.Join(s.cache, key+".o")

	// One compile per key: a second request for a key being compiled
	// waits for the first and then finds the object.
	s.mu.Lock()
	wait, busy := s.inflight[key]
	var mine chan struct{}
	if !busy {
		if _, err := os.Stat(obj); err == nil {
			s.mu.Unlock()
			return s.answer(resp, obj, "hit")
		}
		mine = make(chan struct{})
		s.inflight[key] = mine
	}
	s.mu.Unlock()
	if busy {
		<-wait
		return s.answer(resp, obj, "hit")
	}
	defer func() {
		s.mu.Lock()
		delete(s.inflight, key)
		s.mu.Unlock()
		close(mine)
	}()
	if err := s.gcc(key, src, req.Flags, obj); err != nil {
		return fail(err)
	}
	return s.answer(resp, obj, "miss")
}

func (s *server) answer(resp response, obj, result string) response {
	sum, size, err := objectHash(obj)
	if err != nil {
		resp.Result = "error"
		resp.Error = err.Error()
		return resp
	}
	resp.Result, resp.SHA256, resp.Size = result, sum, size
	return resp
}

// gcc compiles src (fed on gcc's stdin by a goroutine, its stderr drained
// by another) into a temporary file, renamed to obj when gcc succeeds.
func (s *server) gcc(key string, src []byte, flags []string, obj string) error {
	tmp := fmt.Sprintf("%s.%d.tmp", key, atomic.AddInt64(&s.seq, 1))
	args := append(append([]string{}, flags...), "-x", "c", "-c", "-o", tmp, "-")
	cmd := exec.Command("gcc", args...)
	cmd.Dir = s.cache
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	fed := make(chan error, 1)
	go func() {
		_, err := stdin.Write(src)
		stdin.Close()
		fed <- err
	}()
	msgs := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(stderr)
		msgs <- b
	}()
	msg := <-msgs
	werr := cmd.Wait()
	ferr := <-fed
	path := filepath.Join(s.cache, tmp)
	if werr != nil {
		os.Remove(path)
		first := strings.SplitN(strings.TrimSpace(string(msg)), "\n", 2)[0]
		return fmt.Errorf("gcc: %v: %s", werr, first)
	}
	if ferr != nil {
		os.Remove(path)
		return fmt.Errorf("gcc stdin: %v", ferr)
	}
	return os.Rename(path, obj)
}

// client sends one request per file, at most -j at once (all by
// default), and prints one line per file sorted by name, then totals.
func client(args []string) int {
	fs := flag.NewFlagSet("client", flag.ExitOnError)
	inline := fs.Bool("inline", false, "send the source bytes, not the path")
	flags := fs.String("flags", "-O2", "gcc flags, separated by spaces")
	jobs := fs.Int("j", 0, "requests at once (0: all)")
	fs.Parse(args)
	if fs.NArg() < 2 {
		die("usage: ccd client [-inline] [-flags F] [-j N] SOCKET FILE.c...")
	}
	sock, files := fs.Arg(0), fs.Args()[1:]
	n := *jobs
	if n <= 0 {
		n = len(files)
	}
	sem := make(chan struct{}, n)
	out := make([]response, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Add(1)
		go func(i int, f string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			req := request{Name: filepath.Base(f), Flags: strings.Fields(*flags)}
			if *inline {
				b, err := os.ReadFile(f)
				if err != nil {
					out[i] = response{Name: req.Name, Result: "error", Error: err.Error()}
					return
				}
				req.Source = b
			} else {
				abs, err := filepath.Abs(f)
				if err != nil {
					out[i] = response{Name: req.Name, Result: "error", Error: err.Error()}
					return
				}
				req.Path = abs
			}
			out[i] = roundTrip(sock, req)
		}(i, f)
	}
	wg.Wait()
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	counts := map[string]int{}
	for _, r := range out {
		counts[r.Result]++
		if r.Result == "error" {
			fmt.Printf("%s error %s\n", r.Name, r.Error)
		} else {
			fmt.Printf("%s %s %s %d\n", r.Name, r.Result, r.SHA256, r.Size)
		}
	}
	fmt.Printf("client: %d requests, %d hits, %d misses, %d errors\n",
		len(out), counts["hit"], counts["miss"], counts["error"])
	if counts["error"] > 0 {
		return 1
	}
	return 0
}

func roundTrip(sock string, req request) response {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return response{Name: req.Name, Result: "error", Error: "connect: " + errText(err)}
	}
	defer c.Close()
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return response{Name: req.Name, Result: "error", Error: "send: " + errText(err)}
	}
	var resp response
	if err := json.NewDecoder(c).Decode(&resp); err != nil {
		return response{Name: req.Name, Result: "error", Error: "no answer: " + errText(err)}
	}
	return resp
}

// errText is an error without its addresses (socket paths differ between
// runs): only the innermost cause, e.g. "connection refused" or "EOF".
func errText(err error) string {
	var se syscall.Errno
	if errors.As(err, &se) {
		return se.Error()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return err.Error()
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}

func stop(sock string) int {
	r := roundTrip(sock, request{Op: "shutdown", Name: "stop"})
	if r.Result != "bye" {
		fmt.Printf("stop: %s %s\n", r.Result, r.Error)
		return 1
	}
	return 0
}

// gen writes n small C files, each different (its own constants and
// names) and each a little work for cc1 (a struct, a loop, a switch).
func gen(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "#include <stdio.h>\n#include <string.h>\n\n")
		fmt.Fprintf(&b, "struct rec%d { int id; char name[%d]; double w; };\n\n", i, 8+i%24)
		fmt.Fprintf(&b, "static int table%d[] = {", i)
		for j := 0; j < 16; j++ {
			fmt.Fprintf(&b, " %d,", (i*131+j*17)%997)
		}
		fmt.Fprintf(&b, " };\n\n")
		fmt.Fprintf(&b, "int unit%d(const char *s)\n{\n\tstruct rec%d r = { %d, \"u%d\", %d.5 };\n", i, i, i, i, i)
		fmt.Fprintf(&b, "\tint acc = (int)strlen(s) + r.id;\n")
		fmt.Fprintf(&b, "\tfor (unsigned k = 0; k < sizeof table%d / sizeof *table%d; k++)\n", i, i)
		fmt.Fprintf(&b, "\t\tswitch (table%d[k] %% 3) {\n\t\tcase 0: acc += table%d[k]; break;\n", i, i)
		fmt.Fprintf(&b, "\t\tcase 1: acc ^= table%d[k] << %d; break;\n\t\tdefault: acc -= (int)r.w;\n\t\t}\n", i, i%7)
		fmt.Fprintf(&b, "\tsnprintf(r.name, sizeof r.name, \"%%d\", acc);\n\treturn acc + (int)strlen(r.name);\n}\n")
		name := filepath.Join(dir, fmt.Sprintf("unit%03d.c", i))
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
