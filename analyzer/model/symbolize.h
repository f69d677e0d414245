/* SPDX-License-Identifier: MIT */
/*
 * Address -> "function (library)" for call sites, with elfutils libelf:
 * the stream's mappings (its `maps` records merged) give file and offset,
 * the file's PT_LOAD headers turn the offset into a link-time address,
 * and the symbol tables name it: a separate debug file found by build-id
 * under /usr/lib/debug/.build-id (or the directories given to
 * ka_symbolize_debug_dirs) when present, else .symtab, else .dynsym (all a
 * stripped binary has). Files are loaded once and cached. Code in no file
 * (a JIT's) is named from the process's perf map (perf_map.c).
 */
#ifndef KANALYZE_SYMBOLIZE_H
#define KANALYZE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct ka_symbolizer;

/* Where separate debug files are looked up (DIR/.build-id/xx/rest.debug),
 * in order, instead of /usr/lib/debug; the strings must outlive the use. */
#define KA_DEBUG_DIRS_MAX 8
void ka_symbolize_debug_dirs(const char *const *dirs, size_t n);
int ka_symbolizer_new(struct ka_symbolizer **out);
void ka_symbolizer_free(struct ka_symbolizer *sym);
/*
 * Writes "function (library)", "library+0xoffset" or "0xaddress" into buf.
 * addr is a return address: the call is the instruction before it. C++
 * and Rust names come demangled (libiberty); a name too long for buf is
 * cut with "..." before " (library)".
 */
void ka_symbolize(struct ka_symbolizer *sym, const struct ka_stream *s,
		  uint64_t addr, char *buf, size_t size);
/* In a "function (library)" name: where " (library)" starts (the last
 * " (", as a demangled name may hold one), or NULL for other names. */
const char *ka_symbol_library(const char *where);
/* Whether the return address addr is in code of s: a mapping, or a
 * function of its JIT's perf map. */
bool ka_symbol_known(struct ka_symbolizer *sym, const struct ka_stream *s, uint64_t addr);
/* The mapping of s that holds pc (newer records first), or NULL. */
const struct ka_map *ka_map_of(const struct ka_stream *s, uint64_t pc);

#endif
