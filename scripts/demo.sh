#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: profile a real Node host workload (programs/node/host.js: file
# I/O sync and async, a pipe to a child process, a worker thread) under
# kprof (the shim) and print its profile, then one per process it started.
set -eu
cd "$(dirname "$0")/.."
build=${KPROF_DEMO_BUILD:-$PWD/build} # tests/t_demo.sh: the build under test
out=${KPROF_DEMO_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kprof-demo.XXXXXX")}
echo "== build/kprof -o $out -- node programs/node/host.js"
# kprof prints the profile on stderr (as strace -c does): here in order
"$build/kprof" -o "$out" -- node programs/node/host.js 2>&1
echo
echo "== per process: build/kanalyze --by=process --top=5 $out"
"$build/kanalyze" --by=process --top=5 "$out"
