/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: gzip input to the record decoder. First byte:
 *   even: the rest is a record stream, gzip-compressed here the way the
 *         shim writes it (Z_SYNC_FLUSH every 512 bytes), so the decoder's
 *         inflate path sees the fuzzer's records;
 *   odd:  the rest is fed as it is behind a gzip header, so corrupt and
 *         truncated deflate data, bad trailers and concatenated members
 *         reach inflate.
 * Seeds: real shim traces (plain ones serve the even mode).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "record_reader.h"

static int on_record(const struct kp_record *rec, void *ctx)
{
	uint64_t v;
	(void)ctx;
	/* touch the typed accessors the tools use */
	kp_get_uint(rec->map, "pid", &v);
	kp_get_uint(rec->map, "stream", &v);
	const msgpack_object *s = kp_map_get(rec->map, "syscalls");
	if (s && s->type == MSGPACK_OBJECT_ARRAY)
		for (uint32_t i = 0; i < s->via.array.size; i++)
			kp_get_uint(&s->via.array.ptr[i], "count", &v);
	return 0;
}

static void feed(const uint8_t *data, size_t size)
{
	struct kp_reader_ops ops = { .on_record = on_record };
	struct kp_reader *r;
	if (kp_reader_new(&r, "fuzz.gz", &ops))
		return;
	int err = 0;
	for (size_t off = 0; off < size && !err; off += 333) {
		size_t n = size - off < 333 ? size - off : 333;
		err = kp_reader_feed(r, data + off, n);
	}
	if (!err)
		kp_reader_finish(r);
	kp_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int mode = data[0] & 1;
	data++, size--;
	if (mode) {
		uint8_t *buf = malloc(size + 10);
		static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
		memcpy(buf, header, 10);
		memcpy(buf + 10, data, size);
		feed(buf, size + 10);
		free(buf);
		return 0;
	}
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 3, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	size_t cap = deflateBound(&z, size) + 64 + size / 512 * 8;
	uint8_t *out = malloc(cap);
	z.next_out = out;
	z.avail_out = (uInt)cap;
	for (size_t off = 0; off <= size; off += 512) {
		size_t n = size - off < 512 ? size - off : 512;
		z.next_in = (Bytef *)data + off;
		z.avail_in = (uInt)n;
		if (deflate(&z, off + 512 > size ? Z_FINISH : Z_SYNC_FLUSH) == Z_STREAM_ERROR)
			break;
	}
	size_t len = cap - z.avail_out;
	deflateEnd(&z);
	feed(out, len);
	free(out);
	return 0;
}
