/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: common/record_unpack.c against msgpack-c. Every object
 * that kp_record_scan() finds complete in the input (after its first byte,
 * the mode byte of the shared seed corpus) is built by kp_record_unpack()
 * and by msgpack_unpack(); the two trees must be the same object for
 * object: same types, values, sizes, and strings at the same bytes. The
 * readers of records saw msgpack-c's trees before; they must not see a
 * difference now.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_unpack.h"

static const uint8_t *base;

static void differ(const char *what, size_t at)
{
	fprintf(stderr, "fuzz_unpack: %s differs (object at byte %zu)\n", what, at);
	abort();
}

static void same_bytes(const char *a, const char *b, uint32_t size, size_t at)
{
	/* both point into the input: the same place, not only equal bytes */
	if (size && a != b)
		differ("string position", at);
}

static void same_tree(const msgpack_object *a, const msgpack_object *b, size_t at)
{
	if (a->type != b->type)
		differ("type", at);
	switch (a->type) {
	case MSGPACK_OBJECT_NIL:
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		if (a->via.boolean != b->via.boolean)
			differ("boolean", at);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		if (a->via.u64 != b->via.u64)
			differ("integer", at);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		if (memcmp(&a->via.f64, &b->via.f64, sizeof(a->via.f64)) != 0)
			differ("float", at);
		break;
	case MSGPACK_OBJECT_STR:
		if (a->via.str.size != b->via.str.size)
			differ("string size", at);
		same_bytes(a->via.str.ptr, b->via.str.ptr, a->via.str.size, at);
		break;
	case MSGPACK_OBJECT_BIN:
		if (a->via.bin.size != b->via.bin.size)
			differ("bin size", at);
		same_bytes(a->via.bin.ptr, b->via.bin.ptr, a->via.bin.size, at);
		break;
	case MSGPACK_OBJECT_EXT:
		if (a->via.ext.type != b->via.ext.type || a->via.ext.size != b->via.ext.size)
			differ("ext type or size", at);
		same_bytes(a->via.ext.ptr, b->via.ext.ptr, a->via.ext.size, at);
		break;
	case MSGPACK_OBJECT_ARRAY:
		if (a->via.array.size != b->via.array.size)
			differ("array size", at);
		for (uint32_t i = 0; i < a->via.array.size; i++)
			same_tree(&a->via.array.ptr[i], &b->via.array.ptr[i], at);
		break;
	case MSGPACK_OBJECT_MAP:
		if (a->via.map.size != b->via.map.size)
			differ("map size", at);
		for (uint32_t i = 0; i < a->via.map.size; i++) {
			same_tree(&a->via.map.ptr[i].key, &b->via.map.ptr[i].key, at);
			same_tree(&a->via.map.ptr[i].val, &b->via.map.ptr[i].val, at);
		}
		break;
	default:
		differ("unknown type", at);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	base = data + 1;
	size_t n = size - 1, off = 0;
	msgpack_zone zone;
	if (!msgpack_zone_init(&zone, 4096))
		return 0;
	while (off < n) {
		size_t len = 0, children = 0, bad = 0;
		if (kp_record_scan(base + off, n - off, &len, &children, &bad) != KP_SCAN_COMPLETE)
			break;
		msgpack_object *pool = calloc(children + 1, sizeof(*pool));
		if (!pool)
			break;
		msgpack_object ours, theirs;
		kp_record_unpack(base + off, &ours, pool);
		size_t used = 0;
		msgpack_unpack_return ret = msgpack_unpack((const char *)base + off, len, &used,
							   &zone, &theirs);
		if (ret != MSGPACK_UNPACK_SUCCESS || used != len)
			differ("msgpack-c's verdict on a complete object", off);
		same_tree(&ours, &theirs, off);
		msgpack_zone_clear(&zone);
		free(pool);
		off += len;
	}
	msgpack_zone_destroy(&zone);
	return 0;
}
