/* SPDX-License-Identifier: MIT */
/*
 * Measuring and building one record (record_unpack.h).
 *
 * msgpack-c's msgpack_unpack() did the building until it was most of
 * kanalyze's time: a general state machine that calls back per object and
 * allocates every container's elements from a zone. Here a record's
 * bytes are known to be complete and well formed (kp_record_scan() said
 * so), and the scan counted the objects, so building is one pass that
 * writes objects in order into a pool sized beforehand, with no bounds
 * check and no allocation.
 */
#include <endian.h>
#include <stdbool.h>
#include <string.h>

#include "record_unpack.h"

_Static_assert(sizeof(msgpack_object_kv) == 2 * sizeof(msgpack_object),
	       "a map's pairs are laid out as key, value objects in turn");

static uint64_t be_read(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

enum kp_scan_result kp_record_scan(const uint8_t *b, size_t n, size_t *len,
				   size_t *children_total, size_t *bad)
{
	uint64_t stack[KP_UNPACK_MAX_DEPTH];
	unsigned depth = 0;
	uint64_t pending = 1; /* objects still to read at this level */
	uint64_t total = 0;
	size_t i = 0;

	for (;;) {
		if (i >= n)
			return KP_SCAN_INCOMPLETE;
		uint8_t c = b[i];
		uint64_t head = 1, body = 0, children = 0;
		unsigned lenbytes = 0;

		if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 ||
		    c == 0xc3) {
			/* fixint, nil, bool */
		} else if (c <= 0x8f) {
			children = 2ull * (c & 0x0f);
		} else if (c <= 0x9f) {
			children = c & 0x0f;
		} else if (c <= 0xbf) {
			body = c & 0x1f;
		} else {
			switch (c) {
			case 0xc1:
				*bad = i;
				return KP_SCAN_INVALID;
			case 0xc4: case 0xd9: lenbytes = 1; break;
			case 0xc5: case 0xda: lenbytes = 2; break;
			case 0xc6: case 0xdb: lenbytes = 4; break;
			case 0xc7: lenbytes = 1; break; /* + type */
			case 0xc8: lenbytes = 2; break;
			case 0xc9: lenbytes = 4; break;
			case 0xca: head = 5; break;
			case 0xcb: head = 9; break;
			case 0xcc: case 0xd0: head = 2; break;
			case 0xcd: case 0xd1: head = 3; break;
			case 0xce: case 0xd2: head = 5; break;
			case 0xcf: case 0xd3: head = 9; break;
			case 0xd4: head = 3; break;
			case 0xd5: head = 4; break;
			case 0xd6: head = 6; break;
			case 0xd7: head = 10; break;
			case 0xd8: head = 18; break;
			case 0xdc: case 0xde: lenbytes = 2; break;
			case 0xdd: case 0xdf: lenbytes = 4; break;
			default:
				*bad = i;
				return KP_SCAN_INVALID;
			}
			if (lenbytes) {
				if (n - i < 1 + (size_t)lenbytes)
					return KP_SCAN_INCOMPLETE;
				uint64_t count = be_read(b + i + 1, lenbytes);
				head = 1 + lenbytes;
				if (c == 0xdc || c == 0xdd)
					children = count;
				else if (c == 0xde || c == 0xdf)
					children = 2 * count;
				else
					body = count;
				if (c >= 0xc7 && c <= 0xc9)
					head++; /* ext type byte */
			}
		}
		if ((uint64_t)(n - i) < head + body)
			return KP_SCAN_INCOMPLETE;
		i += head + body;
		pending--;
		if (children) {
			if (depth == KP_UNPACK_MAX_DEPTH) {
				*bad = i - head - body;
				return KP_SCAN_TOO_DEEP;
			}
			stack[depth++] = pending;
			pending = children;
			total += children;
		}
		while (pending == 0) {
			if (depth == 0) {
				*len = i;
				*children_total = total;
				return KP_SCAN_COMPLETE;
			}
			pending = stack[--depth];
		}
	}
}

static uint16_t load16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static void set_signed(msgpack_object *o, int64_t v)
{
	if (v >= 0) {
		o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
		o->via.u64 = (uint64_t)v;
	} else {
		o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
		o->via.i64 = v;
	}
}

/* STR, BIN: size then bytes. Returns the first byte after them. */
static const uint8_t *set_bytes(msgpack_object *o, msgpack_object_type type,
				const uint8_t *p, uint32_t size)
{
	o->type = type;
	if (type == MSGPACK_OBJECT_STR) {
		o->via.str.size = size;
		o->via.str.ptr = (const char *)p;
	} else {
		o->via.bin.size = size;
		o->via.bin.ptr = (const char *)p;
	}
	return p + size;
}

static const uint8_t *set_ext(msgpack_object *o, const uint8_t *p, uint32_t size)
{
	o->type = MSGPACK_OBJECT_EXT;
	o->via.ext.type = (int8_t)p[0];
	o->via.ext.size = size;
	o->via.ext.ptr = (const char *)p + 1;
	return p + 1 + size;
}

/* An ARRAY (pairs == false) or MAP of count entries: *children objects. */
static void set_container(msgpack_object *o, bool pairs, uint32_t count,
			  msgpack_object *pool, uint64_t *children)
{
	if (pairs) {
		o->type = MSGPACK_OBJECT_MAP;
		o->via.map.size = count;
		o->via.map.ptr = (msgpack_object_kv *)pool;
		*children = 2ull * count;
	} else {
		o->type = MSGPACK_OBJECT_ARRAY;
		o->via.array.size = count;
		o->via.array.ptr = pool;
		*children = count;
	}
}

/* The object at p into *o; returns the byte after it (a container's head). */
static const uint8_t *unpack_one(const uint8_t *p, msgpack_object *o,
				 msgpack_object *pool, uint64_t *children)
{
	uint8_t c = *p++;
	float f;
	double d;
	uint32_t u32;
	uint64_t u64;

	if (c <= 0x7f) {
		o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
		o->via.u64 = c;
		return p;
	}
	if (c >= 0xe0) {
		o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
		o->via.i64 = (int8_t)c;
		return p;
	}
	if (c <= 0x8f) {
		set_container(o, true, c & 0x0f, pool, children);
		return p;
	}
	if (c <= 0x9f) {
		set_container(o, false, c & 0x0f, pool, children);
		return p;
	}
	if (c <= 0xbf)
		return set_bytes(o, MSGPACK_OBJECT_STR, p, c & 0x1f);
	switch (c) {
	case 0xc0:
		o->type = MSGPACK_OBJECT_NIL;
		return p;
	case 0xc2:
	case 0xc3:
		o->type = MSGPACK_OBJECT_BOOLEAN;
		o->via.boolean = c == 0xc3;
		return p;
	case 0xc4: return set_bytes(o, MSGPACK_OBJECT_BIN, p + 1, p[0]);
	case 0xc5: return set_bytes(o, MSGPACK_OBJECT_BIN, p + 2, load16(p));
	case 0xc6: return set_bytes(o, MSGPACK_OBJECT_BIN, p + 4, load32(p));
	case 0xc7: return set_ext(o, p + 1, p[0]);
	case 0xc8: return set_ext(o, p + 2, load16(p));
	case 0xc9: return set_ext(o, p + 4, load32(p));
	case 0xca:
		u32 = load32(p);
		memcpy(&f, &u32, sizeof(f));
		o->type = MSGPACK_OBJECT_FLOAT32;
		o->via.f64 = f;
		return p + 4;
	case 0xcb:
		u64 = load64(p);
		memcpy(&d, &u64, sizeof(d));
		o->type = MSGPACK_OBJECT_FLOAT64;
		o->via.f64 = d;
		return p + 8;
	case 0xcc:
	case 0xcd:
	case 0xce:
	case 0xcf: {
		unsigned bytes = 1u << (c - 0xcc);
		o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
		o->via.u64 = be_read(p, bytes);
		return p + bytes;
	}
	case 0xd0: set_signed(o, (int8_t)p[0]); return p + 1;
	case 0xd1: set_signed(o, (int16_t)load16(p)); return p + 2;
	case 0xd2: set_signed(o, (int32_t)load32(p)); return p + 4;
	case 0xd3: set_signed(o, (int64_t)load64(p)); return p + 8;
	case 0xd4: return set_ext(o, p, 1);
	case 0xd5: return set_ext(o, p, 2);
	case 0xd6: return set_ext(o, p, 4);
	case 0xd7: return set_ext(o, p, 8);
	case 0xd8: return set_ext(o, p, 16);
	case 0xd9: return set_bytes(o, MSGPACK_OBJECT_STR, p + 1, p[0]);
	case 0xda: return set_bytes(o, MSGPACK_OBJECT_STR, p + 2, load16(p));
	case 0xdb: return set_bytes(o, MSGPACK_OBJECT_STR, p + 4, load32(p));
	case 0xdc: set_container(o, false, load16(p), pool, children); return p + 2;
	case 0xdd: set_container(o, false, load32(p), pool, children); return p + 4;
	case 0xde: set_container(o, true, load16(p), pool, children); return p + 2;
	default: /* 0xdf; 0xc1 never passes the scan */
		set_container(o, true, load32(p), pool, children);
		return p + 4;
	}
}

/*
 * Depth first, in byte order: a container takes the next slots of the
 * pool for its elements and they are filled before its siblings.
 */
void kp_record_unpack(const uint8_t *b, msgpack_object *root, msgpack_object *pool)
{
	struct level {
		msgpack_object *next;
		uint64_t left;
	} stack[KP_UNPACK_MAX_DEPTH];
	unsigned depth = 0;
	msgpack_object *o = root;
	uint64_t left = 1;

	for (;;) {
		uint64_t children = 0;
		b = unpack_one(b, o++, pool, &children);
		left--;
		if (children) {
			stack[depth++] = (struct level){ o, left };
			o = pool;
			left = children;
			pool += children;
		}
		while (left == 0) {
			if (depth == 0)
				return;
			depth--;
			o = stack[depth].next;
			left = stack[depth].left;
		}
	}
}
