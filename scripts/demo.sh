#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: profile a real Node host workload (programs/node/host.js: file
# I/O sync and async, a pipe to a child process, a worker thread) under
# libkprof.so and print the profile of every process it started.
set -eu
cd "$(dirname "$0")/.."
build=${KPROF_DEMO_BUILD:-$PWD/build} # tests/t_demo.sh: the build under test
out=${KPROF_DEMO_OUT:-$(mktemp -d /tmp/kprof-demo.XXXXXX)}
echo "== node programs/node/host.js under build/libkprof.so (trace: $out)"
LD_PRELOAD=$build/libkprof.so KPROF_OUT=$out node programs/node/host.js
echo
echo "== build/kanalyze $out"
"$build/kanalyze" "$out"
echo
echo "== per process: build/kanalyze --by=process --top=5 $out"
"$build/kanalyze" --by=process --top=5 "$out"
