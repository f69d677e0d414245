/* SPDX-License-Identifier: MIT */
/*
 * Decoder of the kprof record stream (docs/FORMAT.md), shared by every
 * tool that reads traces. It is push-based: whatever produces bytes (a
 * file, a pipe, later a unix socket connection) hands them to
 * kp_reader_feed() in pieces of any size, and each complete record is
 * passed to a callback as a msgpack map. Gzip input is recognised by its
 * magic bytes and inflated on the fly (concatenated members allowed).
 *
 * Damage (a truncated record, bytes that are not msgpack, a record that is
 * not a map starting with "type", corrupt gzip data) is reported through a
 * second callback with the byte offset where the damaged record starts;
 * every record before it has already been delivered. After damage that
 * loses the record boundaries the rest of that source is ignored.
 *
 * Memory stays bounded by the input: a record is only unpacked once all of
 * its bytes are buffered, so nothing is allocated for element counts the
 * input does not contain, and one record may not exceed
 * KP_RECORD_MAX_BYTES.
 */
#ifndef KPROF_RECORD_READER_H
#define KPROF_RECORD_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#define KP_RECORD_MAX_BYTES (16u << 20)

struct kp_record {
	const char *source;	   /* name given to kp_reader_new() */
	const char *type;	   /* NUL-terminated copy of the "type" value */
	const msgpack_object *map; /* the whole record, a MAP */
	uint64_t offset;	   /* first byte of the record in the stream */
	uint64_t size;		   /* its bytes: the next record starts at offset + size */
	bool decompressed;	   /* offset counts decompressed bytes */
};

struct kp_damage {
	const char *source;
	uint64_t offset;   /* in the (decompressed) stream */
	bool decompressed; /* source was gzip: offset is after inflating */
	const char *reason; /* "truncated record", "invalid msgpack", ... */
};

/*
 * on_record returns 0 to go on or a negative errno to stop: the error is
 * then returned by kp_reader_feed()/kp_reader_finish(). on_damage may be
 * NULL (damage is still remembered, see kp_reader_damaged()).
 */
struct kp_reader_ops {
	int (*on_record)(const struct kp_record *rec, void *ctx);
	void (*on_damage)(const struct kp_damage *damage, void *ctx);
	void *ctx;
};

struct kp_reader;

int kp_reader_new(struct kp_reader **out, const char *source,
		  const struct kp_reader_ops *ops);
/* Decodes every record completed by these bytes. 0 or -errno. */
int kp_reader_feed(struct kp_reader *r, const void *data, size_t len);
/* End of input: reports a record or gzip member left incomplete. */
int kp_reader_finish(struct kp_reader *r);
void kp_reader_free(struct kp_reader *r);

bool kp_reader_damaged(const struct kp_reader *r);
bool kp_reader_is_gzip(const struct kp_reader *r);
uint64_t kp_reader_records(const struct kp_reader *r);

/* Feeds everything read from fd until end of file, then finishes. */
int kp_reader_read_fd(struct kp_reader *r, int fd);
/* One file, opened read-only: new + read_fd + free. -errno on I/O error. */
int kp_read_trace_file(const char *path, const struct kp_reader_ops *ops);

/*
 * Typed access to record fields. Each returns 0, -ENOENT when the key is
 * absent (o == NULL) or -EINVAL when the value has another type.
 */
const msgpack_object *kp_map_get(const msgpack_object *map, const char *key);
int kp_obj_uint(const msgpack_object *o, uint64_t *out);
int kp_obj_int(const msgpack_object *o, int64_t *out);
int kp_obj_bool(const msgpack_object *o, bool *out);
/* A malloc'd NUL-terminated copy (embedded NULs become '?'). */
int kp_obj_strdup(const msgpack_object *o, char **out);
/* Same as the above on kp_map_get(map, key). */
int kp_get_uint(const msgpack_object *map, const char *key, uint64_t *out);
int kp_get_int(const msgpack_object *map, const char *key, int64_t *out);
int kp_get_bool(const msgpack_object *map, const char *key, bool *out);
int kp_get_strdup(const msgpack_object *map, const char *key, char **out);

#endif
