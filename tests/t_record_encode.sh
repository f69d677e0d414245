#!/bin/bash
# SPDX-License-Identifier: MIT
# tier: check
# The record writer's own event encoding is byte for byte msgpack-c's.
source "$KPROF_ROOT/tests/lib.sh"
out=$("$BUILD/tests/record_encode") || fail "encodings differ: $out"
echo "ok: $out"
