/* SPDX-License-Identifier: MIT */
/*
 * One record's bytes -> msgpack_object tree, for record_reader.c. Apart
 * from the stream handling there because it is the part that runs once
 * per byte: measuring a record (without allocating: a corrupt count must
 * not become a huge allocation) and then building its objects.
 *
 * The tree is the one msgpack-c's msgpack_unpack() builds (same types,
 * integers of signed formats >= 0 as POSITIVE_INTEGER, float32 as
 * FLOAT32, strings, bins and exts pointing into the bytes), so every
 * reader of struct kp_record sees what it saw before.
 */
#ifndef KPROF_RECORD_UNPACK_H
#define KPROF_RECORD_UNPACK_H

#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

/* msgpack-c fails beyond MSGPACK_EMBED_STACK_SIZE (32) nested containers. */
#define KP_UNPACK_MAX_DEPTH 24

enum kp_scan_result {
	KP_SCAN_INCOMPLETE = 0,
	KP_SCAN_COMPLETE = 1,
	KP_SCAN_INVALID = -1,
	KP_SCAN_TOO_DEEP = -2,
};

/*
 * Size of the msgpack object at b[0..n): KP_SCAN_COMPLETE, *len and
 * *children (the objects inside its containers, nested ones included),
 * or KP_SCAN_INCOMPLETE when n bytes do not hold all of it, or an error
 * with *bad the offset of the offending byte.
 */
enum kp_scan_result kp_record_scan(const uint8_t *b, size_t n, size_t *len,
				   size_t *children, size_t *bad);

/*
 * Builds the object at b, which kp_record_scan() found complete, into
 * *root; the objects inside its containers go to pool[0..children).
 */
void kp_record_unpack(const uint8_t *b, msgpack_object *root, msgpack_object *pool);

#endif
