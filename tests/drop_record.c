/* SPDX-License-Identifier: MIT */
/*
 * Removes one record from a plain (not gzip) trace file, the way a lost
 * write would: drop_record IN OUT TYPE N writes IN to OUT without the N-th
 * record (from 1) whose "type" is TYPE, and prints that record's seq
 * ("seq=S", and "events=N" for an events batch) so a test knows exactly which number kanalyze must report
 * missing. Decoded with plain msgpack-c, independent of kprof's reader.
 */
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *msg)
{
	fprintf(stderr, "drop_record: %s\n", msg);
	return 2;
}

static const msgpack_object *get(const msgpack_object *map, const char *key)
{
	if (map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == strlen(key) &&
		    memcmp(k->via.str.ptr, key, k->via.str.size) == 0)
			return &map->via.map.ptr[i].val;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return die("usage: drop_record IN OUT TYPE N");
	long want = strtol(argv[4], NULL, 10);
	FILE *in = fopen(argv[1], "rb");
	if (!in)
		return die("cannot open IN");
	fseek(in, 0, SEEK_END);
	long size = ftell(in);
	rewind(in);
	char *buf = malloc((size_t)size + 1);
	if (!buf || fread(buf, 1, (size_t)size, in) != (size_t)size)
		return die("cannot read IN");
	fclose(in);
	if (size >= 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b)
		return die("IN is gzip; trace with KPROF_GZIP=0");
	FILE *out = fopen(argv[2], "wb");
	if (!out)
		return die("cannot open OUT");

	msgpack_unpacked u;
	msgpack_unpacked_init(&u);
	size_t off = 0, start = 0;
	long seen = 0;
	int dropped = 0;
	while (msgpack_unpack_next(&u, buf, (size_t)size, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *type = get(&u.data, "type");
		bool match = type && type->type == MSGPACK_OBJECT_STR &&
			     type->via.str.size == strlen(argv[3]) &&
			     memcmp(type->via.str.ptr, argv[3], type->via.str.size) == 0;
		if (match && ++seen == want) {
			const msgpack_object *seq = get(&u.data, "seq");
			if (!seq || seq->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
				return die("the record has no seq");
			printf("seq=%llu\n", (unsigned long long)seq->via.u64);
			const msgpack_object *ev = get(&u.data, "events");
			if (ev && ev->type == MSGPACK_OBJECT_ARRAY)
				printf("events=%u\n", ev->via.array.size);
			dropped = 1;
		} else if (fwrite(buf + start, 1, off - start, out) != off - start) {
			return die("cannot write OUT");
		}
		start = off;
	}
	msgpack_unpacked_destroy(&u);
	if (start != (size_t)size)
		return die("IN does not end on a record boundary");
	if (fclose(out))
		return die("cannot write OUT");
	free(buf);
	if (!dropped)
		return die("no such record");
	return 0;
}
