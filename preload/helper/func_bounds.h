/* SPDX-License-Identifier: MIT */
/*
 * Function bounds for code the unwind tables do not describe, for
 * kprof-sites' planner: sized STT_FUNC symbols of .symtab (hand-written
 * assembly, Go), or, in a stripped Go binary, the function table of
 * .gopclntab (each function ends where the next one starts).
 */
#ifndef KPROF_FUNC_BOUNDS_H
#define KPROF_FUNC_BOUNDS_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct func_bounds {
	uint64_t *start, *end; /* sorted by start, no two starts equal */
	size_t n;
	const char *source;    /* ".symtab", ".gopclntab" or NULL: none */
};

/* Reads .symtab, else .gopclntab; none of them is not an error (n = 0).
 * 0 or -ENOMEM. */
int func_bounds_read(Elf *elf, struct func_bounds *fb);
/* The function around addr, [start, start + len); false: none known. */
bool func_bounds_at(const struct func_bounds *fb, uint64_t addr, uint64_t *start,
		    uint64_t *len);
void func_bounds_free(struct func_bounds *fb);

/* Little-endian words at any alignment (a plain load of a misaligned one
 * is undefined), for the tables both parsers read. */
static inline uint64_t load_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t load_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

#endif
