/* SPDX-License-Identifier: MIT */
/*
 * Record stream decoder: byte source -> (gzip) -> record buffer ->
 * kp_record_scan + kp_record_unpack -> records. See record_reader.h for the
 * contract.
 *
 * A record is unpacked only once all its bytes are buffered: the scan
 * walks them without allocating (a corrupt count of 2^32 must not become
 * a 100 GB allocation) and counts the objects, then the objects are built
 * into a pool of that size (record_unpack.c).
 *
 * Speed: the bytes sit in one buffer of our own, compacted with memmove,
 * and the pool is reused from record to record; only one that grew beyond
 * POOL_KEEP_OBJECTS for a large record is freed after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "record_reader.h"
#include "record_unpack.h"

#define READ_CHUNK (64u * 1024)
#define INFLATE_CHUNK (64u * 1024)
/* A 2048-event batch is ~14,400 objects (~340 KB): a pool that size stays. */
#define POOL_KEEP_OBJECTS (1u << 16)

enum input_mode { MODE_UNKNOWN, MODE_PLAIN, MODE_GZIP };

struct kp_reader {
	char *source;
	struct kp_reader_ops ops;
	enum input_mode mode;
	uint8_t magic[2];
	size_t magic_len;

	/* Stream bytes not yet delivered: buf[off, used). Delivered records'
	 * strings point into it until the callback returns. */
	uint8_t *buf;
	size_t off, used, cap;
	msgpack_object *pool; /* the objects inside the record's containers */
	size_t pool_cap;
	uint64_t offset; /* stream bytes of the records delivered so far */
	uint64_t records;

	z_stream zs;
	bool zs_ready;
	bool member_open; /* a gzip member has started and not ended */
	bool member_done; /* the last member ended; more input = new one */
	uint64_t compressed_in;
	unsigned char *inflate_out;

	bool stopped; /* record boundaries lost: ignore the rest */
	bool damaged;
};

static void report_damage(struct kp_reader *r, uint64_t offset,
			  const char *reason)
{
	r->damaged = true;
	if (!r->ops.on_damage)
		return;
	struct kp_damage d = {
		.source = r->source,
		.offset = offset,
		.decompressed = r->mode == MODE_GZIP,
		.reason = reason,
	};
	r->ops.on_damage(&d, r->ops.ctx);
}

static void stop_with_damage(struct kp_reader *r, uint64_t offset,
			     const char *reason)
{
	report_damage(r, offset, reason);
	r->stopped = true;
}

static int deliver(struct kp_reader *r, const msgpack_object *o,
		   uint64_t offset, uint64_t size)
{
	char type[64];

	if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size == 0) {
		report_damage(r, offset, "record is not a map");
		return 0;
	}
	const msgpack_object_kv *first = &o->via.map.ptr[0];
	if (first->key.type != MSGPACK_OBJECT_STR ||
	    first->key.via.str.size != 4 ||
	    memcmp(first->key.via.str.ptr, "type", 4) != 0 ||
	    first->val.type != MSGPACK_OBJECT_STR ||
	    first->val.via.str.size == 0 ||
	    first->val.via.str.size >= sizeof(type) ||
	    memchr(first->val.via.str.ptr, 0, first->val.via.str.size)) {
		report_damage(r, offset,
			      "record does not start with a \"type\" string");
		return 0;
	}
	memcpy(type, first->val.via.str.ptr, first->val.via.str.size);
	type[first->val.via.str.size] = 0;
	r->records++;
	if (!r->ops.on_record)
		return 0;
	struct kp_record rec = {
		.source = r->source,
		.type = type,
		.map = o,
		.offset = offset,
		.size = size,
		.decompressed = r->mode == MODE_GZIP,
	};
	return r->ops.on_record(&rec, r->ops.ctx);
}

/* Room for n objects in the pool (at least one: a pointer for empty containers). */
static int pool_reserve(struct kp_reader *r, size_t n)
{
	if (n < r->pool_cap)
		return 0;
	size_t cap = r->pool_cap ? r->pool_cap : 64;
	while (cap <= n)
		cap *= 2;
	msgpack_object *pool = reallocarray(r->pool, cap, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	r->pool = pool;
	r->pool_cap = cap;
	return 0;
}

static void pool_trim(struct kp_reader *r)
{
	if (r->pool_cap <= POOL_KEEP_OBJECTS)
		return;
	free(r->pool);
	r->pool = NULL;
	r->pool_cap = 0;
}

/* Unpacks and delivers every complete record buffered. */
static int decode_buffered(struct kp_reader *r)
{
	while (!r->stopped && r->used > r->off) {
		const uint8_t *start = r->buf + r->off;
		size_t avail = r->used - r->off, len = 0, children = 0, bad = 0;
		char why[96];

		switch (kp_record_scan(start, avail, &len, &children, &bad)) {
		case KP_SCAN_INCOMPLETE:
			if (avail > KP_RECORD_MAX_BYTES)
				stop_with_damage(r, r->offset,
						 "record larger than the 16 MiB limit");
			return 0;
		case KP_SCAN_INVALID:
			snprintf(why, sizeof(why),
				 "invalid msgpack byte 0x%02x at byte %" PRIu64 " in the record",
				 start[bad], r->offset + bad);
			stop_with_damage(r, r->offset, why);
			return 0;
		case KP_SCAN_TOO_DEEP:
			stop_with_damage(r, r->offset, "record nested too deeply");
			return 0;
		default:
			break;
		}
		if (pool_reserve(r, children)) {
			stop_with_damage(r, r->offset, "record too large to unpack");
			return -ENOMEM;
		}
		msgpack_object obj;
		kp_record_unpack(start, &obj, r->pool);
		uint64_t offset = r->offset;
		r->offset += len;
		int err = deliver(r, &obj, offset, len);
		pool_trim(r);
		r->off += len;
		if (err)
			return err;
	}
	return 0;
}

static int push_plain(struct kp_reader *r, const void *data, size_t len)
{
	if (r->stopped || len == 0)
		return 0;
	if (r->cap - r->used < len) {
		/* drop what was delivered, then grow if that is not enough */
		if (r->off) { /* r->buf is NULL before the first feed */
			memmove(r->buf, r->buf + r->off, r->used - r->off);
			r->used -= r->off;
			r->off = 0;
		}
		if (r->cap - r->used < len) {
			size_t cap = r->cap ? r->cap : READ_CHUNK;
			while (cap - r->used < len)
				cap *= 2;
			uint8_t *grown = realloc(r->buf, cap);
			if (!grown)
				return -ENOMEM;
			r->buf = grown;
			r->cap = cap;
		}
	}
	memcpy(r->buf + r->used, data, len);
	r->used += len;
	return decode_buffered(r);
}

static int push_gzip(struct kp_reader *r, const void *data, size_t len)
{
	z_stream *zs = &r->zs;
	bool out_full = false;

	zs->next_in = (Bytef *)data;
	zs->avail_in = (uInt)len;
	while (!r->stopped && (zs->avail_in > 0 || out_full)) {
		if (r->member_done) {
			if (zs->avail_in == 0)
				break;
			/* Concatenated gzip member. */
			if (inflateReset(zs) != Z_OK)
				return -EINVAL;
			r->member_done = false;
		}
		r->member_open = true;
		uInt in_before = zs->avail_in;
		zs->next_out = r->inflate_out;
		zs->avail_out = INFLATE_CHUNK;
		int zr = inflate(zs, Z_NO_FLUSH);
		size_t produced = INFLATE_CHUNK - zs->avail_out;
		r->compressed_in += in_before - zs->avail_in;
		out_full = zs->avail_out == 0;
		if (zr == Z_MEM_ERROR)
			return -ENOMEM;
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			char why[128];
			snprintf(why, sizeof(why),
				 "corrupt gzip data (%s) near compressed byte %" PRIu64 ",",
				 zs->msg ? zs->msg : "inflate failed", r->compressed_in);
			/* Deliver what inflated cleanly before the damage. */
			int err = push_plain(r, r->inflate_out, produced);
			if (err)
				return err;
			if (!r->stopped)
				stop_with_damage(r, r->offset, why);
			return 0;
		}
		int err = push_plain(r, r->inflate_out, produced);
		if (err)
			return err;
		if (zr == Z_STREAM_END) {
			r->member_done = true;
			r->member_open = false;
			out_full = false;
		} else if (zr == Z_BUF_ERROR && produced == 0 &&
			   in_before == zs->avail_in) {
			break; /* needs more input */
		}
	}
	return 0;
}

static int push_mode(struct kp_reader *r, const void *data, size_t len)
{
	return r->mode == MODE_GZIP ? push_gzip(r, data, len) :
				      push_plain(r, data, len);
}

/* Decides plain or gzip from the first two bytes, then replays them. */
static int choose_mode(struct kp_reader *r)
{
	if (r->magic_len == 2 && r->magic[0] == 0x1f && r->magic[1] == 0x8b) {
		r->inflate_out = malloc(INFLATE_CHUNK);
		if (!r->inflate_out)
			return -ENOMEM;
		memset(&r->zs, 0, sizeof(r->zs));
		if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
			return -ENOMEM;
		r->zs_ready = true;
		r->mode = MODE_GZIP;
	} else {
		r->mode = MODE_PLAIN;
	}
	return push_mode(r, r->magic, r->magic_len);
}

int kp_reader_feed(struct kp_reader *r, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (r->mode == MODE_UNKNOWN) {
		while (len > 0 && r->magic_len < 2) {
			r->magic[r->magic_len++] = *p++;
			len--;
			if (r->magic[0] != 0x1f)
				break;
		}
		if (r->magic_len < 2 && r->magic[0] == 0x1f)
			return 0;
		int err = choose_mode(r);
		if (err)
			return err;
	}
	return push_mode(r, p, len);
}

int kp_reader_finish(struct kp_reader *r)
{
	if (r->mode == MODE_UNKNOWN && r->magic_len > 0) {
		int err = choose_mode(r);
		if (err)
			return err;
	}
	if (r->stopped)
		return 0;
	bool partial = r->used > r->off;
	if (partial)
		stop_with_damage(r, r->offset,
				 r->member_open ? "truncated record (gzip stream cut short)" :
						  "truncated record");
	else if (r->member_open)
		stop_with_damage(r, r->offset, "gzip stream truncated");
	return 0;
}

int kp_reader_new(struct kp_reader **out, const char *source,
		  const struct kp_reader_ops *ops)
{
	struct kp_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->source = strdup(source ? source : "-");
	if (!r->source)
		goto fail;
	if (ops)
		r->ops = *ops;
	*out = r;
	return 0;
fail:
	free(r);
	return -ENOMEM;
}

void kp_reader_free(struct kp_reader *r)
{
	if (!r)
		return;
	free(r->pool);
	free(r->buf);
	if (r->zs_ready)
		inflateEnd(&r->zs);
	free(r->inflate_out);
	free(r->source);
	free(r);
}

bool kp_reader_damaged(const struct kp_reader *r)
{
	return r->damaged;
}

bool kp_reader_is_gzip(const struct kp_reader *r)
{
	return r->mode == MODE_GZIP;
}

uint64_t kp_reader_records(const struct kp_reader *r)
{
	return r->records;
}

/*
 * Gzip from a descriptor, pipelined: a thread reads and inflates into a
 * ring of chunks while the caller's thread decodes them, so on two cores
 * the slower of the two sets the pace instead of their sum. The inflater
 * touches nothing of the reader but its own z_stream; what push_gzip
 * learns on the way (a member's end, corrupt data, a read error, the end
 * of input) travels with the chunks, and the decoding side acts on it
 * exactly as push_gzip and kp_reader_read_fd do.
 */
#define PIPE_SLOTS 4
#define PIPE_CHUNK (256u * 1024)

enum slot_kind { SLOT_DATA, SLOT_CORRUPT, SLOT_ERROR, SLOT_EOF };

struct pipe_slot {
	unsigned char *data;
	size_t len;
	enum slot_kind kind;
	bool member_open; /* after this chunk */
	int err;	  /* SLOT_ERROR: -errno */
	char why[128];	  /* SLOT_CORRUPT */
};

struct gz_pipe {
	int fd;
	const uint8_t *first;
	size_t first_len;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pipe_slot slot[PIPE_SLOTS];
	unsigned head, count; /* filled slots: head .. head + count - 1 */
	bool cancel;
};

/* The inflater's next free slot, or NULL when told to stop. */
static struct pipe_slot *slot_free(struct gz_pipe *p)
{
	pthread_mutex_lock(&p->mu);
	while (p->count == PIPE_SLOTS && !p->cancel)
		pthread_cond_wait(&p->cv, &p->mu);
	struct pipe_slot *s = p->cancel ? NULL : &p->slot[(p->head + p->count) % PIPE_SLOTS];
	pthread_mutex_unlock(&p->mu);
	return s;
}

static void slot_publish(struct gz_pipe *p)
{
	pthread_mutex_lock(&p->mu);
	p->count++;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

static void *inflater(void *arg)
{
	struct gz_pipe *p = arg;
	z_stream zs;
	unsigned char *in = malloc(READ_CHUNK);
	bool member_open = false, member_done = false, out_full = false;
	uint64_t compressed_in = 0;
	struct pipe_slot *s;

	memset(&zs, 0, sizeof(zs));
	if (!in || inflateInit2(&zs, 15 + 16) != Z_OK) {
		if ((s = slot_free(p))) {
			*s = (struct pipe_slot){ .data = s->data, .kind = SLOT_ERROR, .err = -ENOMEM };
			slot_publish(p);
		}
		free(in);
		return NULL;
	}
	zs.next_in = (Bytef *)p->first;
	zs.avail_in = (uInt)p->first_len;
	for (;;) {
		/* a full chunk may leave output in zlib's window: no read then */
		if (zs.avail_in == 0 && !out_full) {
			ssize_t n = read(p->fd, in, READ_CHUNK);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				if ((s = slot_free(p))) {
					*s = (struct pipe_slot){ .data = s->data,
								 .kind = n ? SLOT_ERROR : SLOT_EOF,
								 .err = n ? -errno : 0,
								 .member_open = member_open };
					slot_publish(p);
				}
				break;
			}
			zs.next_in = in;
			zs.avail_in = (uInt)n;
		}
		if (member_done) {
			if (zs.avail_in == 0)
				continue;
			/* Concatenated gzip member. */
			if (inflateReset(&zs) != Z_OK)
				break;
			member_done = false;
		}
		member_open = true;
		if (!(s = slot_free(p)))
			break;
		uInt in_before = zs.avail_in;
		zs.next_out = s->data;
		zs.avail_out = PIPE_CHUNK;
		int zr = inflate(&zs, Z_NO_FLUSH);
		s->len = PIPE_CHUNK - zs.avail_out;
		out_full = zs.avail_out == 0;
		compressed_in += in_before - zs.avail_in;
		s->kind = SLOT_DATA;
		if (zr == Z_MEM_ERROR) {
			s->kind = SLOT_ERROR;
			s->err = -ENOMEM;
		} else if ((zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) ||
			   (zr == Z_BUF_ERROR && s->len == 0 && in_before == zs.avail_in &&
			    zs.avail_in > 0)) {
			s->kind = SLOT_CORRUPT;
			snprintf(s->why, sizeof(s->why),
				 "corrupt gzip data (%s) near compressed byte %" PRIu64 ",",
				 zs.msg ? zs.msg : "inflate failed", compressed_in);
		} else if (zr == Z_STREAM_END) {
			member_done = true;
			member_open = false;
			out_full = false;
		}
		s->member_open = member_open;
		bool last = s->kind != SLOT_DATA;
		slot_publish(p);
		if (last)
			break;
	}
	inflateEnd(&zs);
	free(in);
	return NULL;
}

static void pipe_stop(struct gz_pipe *p, pthread_t t)
{
	pthread_mutex_lock(&p->mu);
	p->cancel = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(t, NULL);
}

/* kp_reader_read_fd for gzip input whose first bytes are first[0, len). */
static int read_fd_gzip(struct kp_reader *r, int fd, const uint8_t *first, size_t len)
{
	struct gz_pipe p = { .fd = fd, .first = first, .first_len = len };
	int err = 0;
	pthread_t t;

	for (unsigned i = 0; i < PIPE_SLOTS; i++)
		if (!(p.slot[i].data = malloc(PIPE_CHUNK)))
			err = -ENOMEM;
	if (!err) {
		pthread_mutex_init(&p.mu, NULL);
		pthread_cond_init(&p.cv, NULL);
		if (pthread_create(&t, NULL, inflater, &p))
			err = -EAGAIN;
	}
	if (err) {
		for (unsigned i = 0; i < PIPE_SLOTS; i++)
			free(p.slot[i].data);
		return err;
	}
	r->mode = MODE_GZIP;
	for (bool done = false; !done;) {
		pthread_mutex_lock(&p.mu);
		while (p.count == 0)
			pthread_cond_wait(&p.cv, &p.mu);
		struct pipe_slot *s = &p.slot[p.head];
		pthread_mutex_unlock(&p.mu);

		r->member_open = s->member_open;
		if (s->kind == SLOT_DATA || s->kind == SLOT_CORRUPT)
			err = push_plain(r, s->data, s->len);
		if (!err && s->kind == SLOT_CORRUPT && !r->stopped)
			stop_with_damage(r, r->offset, s->why);
		if (!err && s->kind == SLOT_ERROR)
			err = s->err;
		if (!err && s->kind == SLOT_EOF)
			err = kp_reader_finish(r);
		/* after damage the rest of the source is ignored, as push_gzip does */
		done = err || s->kind != SLOT_DATA || r->stopped;

		pthread_mutex_lock(&p.mu);
		p.head = (p.head + 1) % PIPE_SLOTS;
		p.count--;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.mu);
	}
	pipe_stop(&p, t);
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
	for (unsigned i = 0; i < PIPE_SLOTS; i++)
		free(p.slot[i].data);
	return err;
}

int kp_reader_read_fd(struct kp_reader *r, int fd)
{
	unsigned char *buf = malloc(READ_CHUNK);
	int err = 0;
	bool first = r->mode == MODE_UNKNOWN && r->magic_len == 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf, READ_CHUNK);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0) {
			err = kp_reader_finish(r);
			break;
		}
		if (first && n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
			err = read_fd_gzip(r, fd, buf, (size_t)n);
			break;
		}
		first = false;
		err = kp_reader_feed(r, buf, (size_t)n);
		if (err)
			break;
	}
	free(buf);
	return err;
}

int kp_read_trace_file(const char *path, const struct kp_reader_ops *ops)
{
	struct kp_reader *r = NULL;
	struct stat st;
	int err;

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out_close;
	}
	err = kp_reader_new(&r, path, ops);
	if (err)
		goto out_close;
	err = kp_reader_read_fd(r, fd);
	kp_reader_free(r);
out_close:
	close(fd);
	return err;
}

const msgpack_object *kp_map_get(const msgpack_object *map, const char *key)
{
	if (!map || map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	size_t klen = strlen(key);
	for (uint32_t i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen &&
		    memcmp(k->via.str.ptr, key, klen) == 0)
			return &map->via.map.ptr[i].val;
	}
	return NULL;
}

int kp_obj_uint(const msgpack_object *o, uint64_t *out)
{
	if (!o)
		return -ENOENT;
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return -EINVAL;
	*out = o->via.u64;
	return 0;
}

int kp_obj_int(const msgpack_object *o, int64_t *out)
{
	if (!o)
		return -ENOENT;
	if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*out = o->via.i64;
		return 0;
	}
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
	    o->via.u64 <= INT64_MAX) {
		*out = (int64_t)o->via.u64;
		return 0;
	}
	return -EINVAL;
}

int kp_obj_bool(const msgpack_object *o, bool *out)
{
	if (!o)
		return -ENOENT;
	if (o->type != MSGPACK_OBJECT_BOOLEAN)
		return -EINVAL;
	*out = o->via.boolean;
	return 0;
}

int kp_obj_strdup(const msgpack_object *o, char **out)
{
	if (!o)
		return -ENOENT;
	if (o->type != MSGPACK_OBJECT_STR)
		return -EINVAL;
	char *s = malloc((size_t)o->via.str.size + 1);
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < o->via.str.size; i++)
		s[i] = o->via.str.ptr[i] ? o->via.str.ptr[i] : '?';
	s[o->via.str.size] = 0;
	*out = s;
	return 0;
}

int kp_get_uint(const msgpack_object *map, const char *key, uint64_t *out)
{
	return kp_obj_uint(kp_map_get(map, key), out);
}

int kp_get_int(const msgpack_object *map, const char *key, int64_t *out)
{
	return kp_obj_int(kp_map_get(map, key), out);
}

int kp_get_bool(const msgpack_object *map, const char *key, bool *out)
{
	return kp_obj_bool(kp_map_get(map, key), out);
}

int kp_get_strdup(const msgpack_object *map, const char *key, char **out)
{
	return kp_obj_strdup(kp_map_get(map, key), out);
}
