/* SPDX-License-Identifier: MIT */
/*
 * What both producers need to describe a process's code for call-site
 * and stack resolution: the executable file mappings of a
 * /proc/PID/maps line, and the GNU build-id of an ELF file. Pure parsing
 * over a caller's read function and buffers: no allocation and no libc
 * beyond memcmp/memcpy/strstr, so the LD_PRELOAD shim can run it inside a
 * hook with raw syscalls while kbpf-trace uses pread(2).
 */
#ifndef KPROF_ELF_BUILD_ID_H
#define KPROF_ELF_BUILD_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 20 bytes of SHA-1 as hex and a NUL (longer build-ids are not recorded). */
#define KP_BUILD_ID_HEX 41

/* Reads up to count bytes at offset; returns the bytes read or -errno. */
typedef long (*kp_pread_fn)(void *ctx, void *buf, size_t count, uint64_t offset);

/*
 * The NT_GNU_BUILD_ID note of an ELF64 file as lowercase hex in out; ""
 * when it has none or is not ELF64. scratch holds one PT_NOTE segment at
 * a time (larger segments are skipped).
 */
void kp_elf_build_id(kp_pread_fn read_at, void *ctx, char *scratch,
		     size_t scratch_size, char out[KP_BUILD_ID_HEX]);

/* One /proc/PID/maps line. */
struct kp_maps_line {
	uint64_t start, end, offset;
	int prot;	  /* PROT_READ | PROT_WRITE | PROT_EXEC */
	const char *path; /* into the line; NULL: anonymous, special or deleted */
	bool special;	  /* [heap], [stack], [vdso] ... */
	uint32_t dev_major, dev_minor;
	uint64_t inode;
};

/* "start-end perms offset dev inode   path": false if malformed. */
bool kp_maps_parse(const char *line, struct kp_maps_line *m);

/* The same, true only for an executable mapping of a file that still
 * exists (not "(deleted)"): the code that call sites and stacks are in. */
bool kp_maps_parse_line(const char *line, struct kp_maps_line *m);

#endif
