#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate the pinned bpf/vmlinux/ARCH/vmlinux.h from the running kernel's
# BTF. The pinned header is what the BPF program is compiled against; CO-RE
# relocates its field accesses to whatever kernel loads it.
set -eu
arch=$(uname -m)
out=$(dirname "$0")/../bpf/vmlinux/$arch/vmlinux.h
mkdir -p "$(dirname "$out")"
bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(wc -l < "$out") lines) from $(uname -r)"
