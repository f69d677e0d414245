/* SPDX-License-Identifier: MIT */
/* Encoder of the kprof record stream; see record_writer.h. */
#include <errno.h>
#include <string.h>

#include "histogram.h"
#include "record_writer.h"

const char *const kp_kind_names[KP_KINDS] = { "file", "pipe", "socket", "other" };

static int writer_drain(struct kp_writer *w)
{
	if (w->err)
		return w->err;
	if (w->len == 0)
		return 0;
	int err = w->sink(w->sink_ctx, w->buf, w->len);
	if (err) {
		w->err = err;
	} else {
		w->bytes += w->len;
	}
	w->len = 0;
	return err;
}

static int writer_append(void *data, const char *buf, size_t len)
{
	struct kp_writer *w = data;
	w->encoded += len;
	if (w->err)
		return -1;
	if (len > w->cap - w->len && writer_drain(w))
		return -1;
	if (len > w->cap) {
		int err = w->sink(w->sink_ctx, buf, len);
		if (err) {
			w->err = err;
			return -1;
		}
		w->bytes += len;
		return 0;
	}
	memcpy(w->buf + w->len, buf, len);
	w->len += len;
	return 0;
}

void kp_writer_init(struct kp_writer *w, char *buf, size_t cap,
		    kp_sink_fn sink, void *sink_ctx)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->cap = cap;
	w->sink = sink;
	w->sink_ctx = sink_ctx;
	msgpack_packer_init(&w->pk, w, writer_append);
}

int kp_writer_flush(struct kp_writer *w)
{
	return writer_drain(w);
}

void kp_writer_discard(struct kp_writer *w)
{
	w->len = 0;
	w->err = 0;
}

static void put_str(struct kp_writer *w, const char *s)
{
	if (!s)
		s = "";
	msgpack_pack_str_with_body(&w->pk, s, strlen(s));
}

static void put_key(struct kp_writer *w, const char *key)
{
	put_str(w, key);
}

static void put_kv_str(struct kp_writer *w, const char *key, const char *v)
{
	put_key(w, key);
	put_str(w, v);
}

static void put_kv_u64(struct kp_writer *w, const char *key, uint64_t v)
{
	put_key(w, key);
	msgpack_pack_uint64(&w->pk, v);
}

static void put_kv_bool(struct kp_writer *w, const char *key, bool v)
{
	put_key(w, key);
	if (v)
		msgpack_pack_true(&w->pk);
	else
		msgpack_pack_false(&w->pk);
}

/* Opens a record map of n_keys keys besides type/pid/stream/time_ns. */
static void begin_record(struct kp_writer *w, const char *type,
			 const struct kp_rec_common *c, size_t n_keys)
{
	w->records++;
	msgpack_pack_map(&w->pk, n_keys + 4 + (c->seq != 0));
	put_kv_str(w, "type", type);
	put_kv_u64(w, "pid", c->pid);
	put_kv_u64(w, "stream", c->stream);
	put_kv_u64(w, "time_ns", c->time_ns);
	if (c->seq)
		put_kv_u64(w, "seq", c->seq);
}

void kp_rec_header(struct kp_writer *w, const struct kp_rec_header *h)
{
	begin_record(w, KP_REC_HEADER, &h->c,
		     14 + !!h->hook_mode + !!h->clock_source + !!h->comm +
			     !!h->untraced_parent_pid + !!h->runtime + !!h->site_cache_note);
	put_kv_u64(w, "version", KP_FORMAT_VERSION);
	put_kv_str(w, "producer", h->producer);
	put_kv_u64(w, "ppid", h->ppid);
	put_kv_str(w, "origin", h->origin);
	put_kv_u64(w, "parent_stream", h->parent_stream);
	put_kv_str(w, "exe", h->exe);
	if (h->comm)
		put_kv_str(w, "comm", h->comm);
	put_key(w, "argv");
	msgpack_pack_array(&w->pk, h->argc);
	for (unsigned i = 0; i < h->argc; i++)
		put_str(w, h->argv[i]);
	put_kv_str(w, "host", h->host);
	put_kv_str(w, "kernel", h->kernel);
	put_kv_str(w, "arch", h->arch);
	put_key(w, "clock");
	msgpack_pack_map(&w->pk, 2);
	put_kv_u64(w, "monotonic_ns", h->monotonic_ns);
	put_kv_u64(w, "realtime_ns", h->realtime_ns);
	if (h->hook_mode)
		put_kv_str(w, "hook_mode", h->hook_mode);
	if (h->clock_source)
		put_kv_str(w, "clock_source", h->clock_source);
	put_kv_str(w, "coverage", h->coverage);
	put_kv_bool(w, "events", h->events);
	put_kv_u64(w, "interval_ms", h->interval_ms);
	if (h->untraced_parent_pid) {
		put_key(w, "untraced_parent");
		msgpack_pack_map(&w->pk, 3);
		put_kv_u64(w, "pid", h->untraced_parent_pid);
		put_kv_str(w, "exe", h->untraced_parent_exe);
		put_kv_str(w, "why", h->untraced_parent_why);
	}
	if (h->runtime)
		put_kv_str(w, "runtime", h->runtime);
	if (h->site_cache_note)
		put_kv_str(w, "site_cache_note", h->site_cache_note);
}

void kp_rec_aggregate_begin(struct kp_writer *w, const struct kp_rec_common *c,
			    uint64_t thread, uint64_t tid, const char *name, bool exited,
			    bool final, unsigned n_syscalls)
{
	begin_record(w, KP_REC_AGGREGATE, c, 5 + (name != NULL));
	put_kv_u64(w, "thread", thread);
	put_kv_u64(w, "tid", tid);
	if (name)
		put_kv_str(w, "name", name);
	put_kv_bool(w, "exited", exited);
	put_kv_bool(w, "final", final);
	put_key(w, "syscalls");
	msgpack_pack_array(&w->pk, n_syscalls);
}

/* errno pairs per syscall entry a producer may pass (kbpf-trace: 64) */
#define KP_REC_MAX_ERRNO 64

void kp_rec_syscall(struct kp_writer *w, const struct kp_rec_syscall *s)
{
	uint64_t kinds[KP_KINDS][KP_KIND_COUNTERS];
	unsigned n_kinds = 0;
	for (unsigned k = 0; s->kinds && k < KP_KINDS; k++) {
		for (unsigned i = 0; i < KP_KIND_COUNTERS; i++)
			kinds[k][i] = __atomic_load_n(&s->kinds[k][i], __ATOMIC_RELAXED);
		n_kinds += kinds[k][KP_KIND_COUNT] != 0;
	}
	unsigned keys = 3; /* nr, errno, hist */
#define COUNTER(name, merge) keys++;
#define OPTIONAL(name, merge) keys += s->has_##name;
	KP_SC_COUNTERS(COUNTER)
	KP_SC_OPTIONAL(OPTIONAL)
	msgpack_pack_map(&w->pk, keys + (s->n_sites != 0) + (n_kinds != 0) +
				 (s->n_stacks != 0));
	put_kv_u64(w, "nr", s->nr);
#undef COUNTER
#undef OPTIONAL
#define COUNTER(name, merge) put_kv_u64(w, #name, s->name);
#define OPTIONAL(name, merge)                                                  \
	if (s->has_##name)                                                     \
		put_kv_u64(w, #name, s->name);
	KP_SC_COUNTERS(COUNTER)
	KP_SC_OPTIONAL(OPTIONAL)
#undef COUNTER
#undef OPTIONAL
	/*
	 * The shim encodes counters that other threads are still updating:
	 * count and emit the entries of one snapshot, or a map's declared
	 * size and its entries disagree and the stream is corrupt.
	 */
	uint32_t errno_value[KP_REC_MAX_ERRNO];
	uint64_t errno_count[KP_REC_MAX_ERRNO];
	uint64_t hist[KP_HIST_BUCKETS];
	unsigned n_errno = s->n_errno < KP_REC_MAX_ERRNO ? s->n_errno : KP_REC_MAX_ERRNO;
	unsigned n = 0;
	for (unsigned i = 0; i < n_errno; i++) {
		errno_count[i] = __atomic_load_n(&s->errno_count[i], __ATOMIC_RELAXED);
		errno_value[i] = __atomic_load_n(&s->errno_value[i], __ATOMIC_RELAXED);
		n += errno_count[i] != 0;
	}
	put_key(w, "errno");
	msgpack_pack_map(&w->pk, n);
	for (unsigned i = 0; i < n_errno; i++) {
		if (errno_count[i] == 0)
			continue;
		msgpack_pack_uint32(&w->pk, errno_value[i]);
		msgpack_pack_uint64(&w->pk, errno_count[i]);
	}
	n = 0;
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++) {
		hist[b] = s->hist32 ? __atomic_load_n(&s->hist32[b], __ATOMIC_RELAXED) :
				      __atomic_load_n(&s->hist64[b], __ATOMIC_RELAXED);
		n += hist[b] != 0;
	}
	put_key(w, "hist");
	msgpack_pack_map(&w->pk, n);
	for (unsigned b = 0; b < KP_HIST_BUCKETS; b++) {
		if (hist[b] == 0)
			continue;
		msgpack_pack_uint32(&w->pk, b);
		msgpack_pack_uint64(&w->pk, hist[b]);
	}
	if (n_kinds) {
		put_key(w, "kinds");
		msgpack_pack_map(&w->pk, n_kinds);
		for (unsigned k = 0; k < KP_KINDS; k++) {
			if (!kinds[k][KP_KIND_COUNT])
				continue;
			put_str(w, kp_kind_names[k]);
			msgpack_pack_array(&w->pk, KP_KIND_COUNTERS);
			for (unsigned i = 0; i < KP_KIND_COUNTERS; i++)
				msgpack_pack_uint64(&w->pk, kinds[k][i]);
		}
	}
	if (s->n_sites) {
		put_key(w, "sites");
		msgpack_pack_array(&w->pk, s->n_sites);
		for (unsigned i = 0; i < s->n_sites; i++) {
			msgpack_pack_array(&w->pk, 3);
			msgpack_pack_uint64(&w->pk, s->site_addr[i]);
			msgpack_pack_uint64(&w->pk, s->site_count[i]);
			msgpack_pack_uint64(&w->pk, s->site_time_ns[i]);
		}
	}
	if (s->n_stacks) {
		put_key(w, "stacks");
		msgpack_pack_array(&w->pk, s->n_stacks);
		for (unsigned i = 0; i < s->n_stacks; i++) {
			const struct kp_rec_stack *st = &s->stacks[i];
			msgpack_pack_array(&w->pk, 3);
			msgpack_pack_array(&w->pk, st->depth);
			for (unsigned k = 0; k < st->depth; k++)
				msgpack_pack_uint64(&w->pk, st->pcs[k]);
			msgpack_pack_uint64(&w->pk, st->count);
			msgpack_pack_uint64(&w->pk, st->time_ns);
		}
	}
}

void kp_rec_events_begin(struct kp_writer *w, const struct kp_rec_common *c,
			 uint64_t tid, unsigned n_events)
{
	begin_record(w, KP_REC_EVENTS, c, 2);
	put_kv_u64(w, "tid", tid);
	put_key(w, "events");
	msgpack_pack_array(&w->pk, n_events);
}

/*
 * Events are the bulk of a trace: one is encoded into a small buffer and
 * appended once, instead of one packer callback per element. The bytes
 * are msgpack-c's own (the smallest encoding of each integer).
 */
static unsigned enc_be(unsigned char *p, unsigned char tag, uint64_t v, unsigned n)
{
	p[0] = tag;
	for (unsigned i = 0; i < n; i++)
		p[1 + i] = (unsigned char)(v >> (8 * (n - 1 - i)));
	return n + 1;
}

static unsigned enc_uint(unsigned char *p, uint64_t v)
{
	if (v < 128) {
		p[0] = (unsigned char)v;
		return 1;
	}
	if (v < 256)
		return enc_be(p, 0xcc, v, 1);
	if (v < 65536)
		return enc_be(p, 0xcd, v, 2);
	if (v < (1ull << 32))
		return enc_be(p, 0xce, v, 4);
	return enc_be(p, 0xcf, v, 8);
}

static unsigned enc_int(unsigned char *p, int64_t v)
{
	if (v >= 0)
		return enc_uint(p, (uint64_t)v);
	if (v >= -32) {
		p[0] = (unsigned char)v; /* negative fixint */
		return 1;
	}
	if (v >= -128)
		return enc_be(p, 0xd0, (uint64_t)v, 1);
	if (v >= -32768)
		return enc_be(p, 0xd1, (uint64_t)v, 2);
	if (v >= -(1ll << 31))
		return enc_be(p, 0xd2, (uint64_t)v, 4);
	return enc_be(p, 0xd3, (uint64_t)v, 8);
}

void kp_rec_event(struct kp_writer *w, uint64_t start_ns, uint64_t duration_ns,
		  uint32_t nr, int64_t ret)
{
	unsigned char b[40];
	unsigned n = 0;
	b[n++] = 0x94; /* fixarray of 4 */
	n += enc_uint(b + n, start_ns);
	n += enc_uint(b + n, duration_ns);
	n += enc_uint(b + n, nr);
	n += enc_int(b + n, ret);
	writer_append(w, (const char *)b, n);
}

void kp_rec_event_fd(struct kp_writer *w, uint64_t start_ns,
		     uint64_t duration_ns, uint32_t nr, int64_t ret, int64_t fd,
		     unsigned kind)
{
	unsigned char b[64];
	unsigned n = 0;
	b[n++] = 0x96; /* fixarray of 6 */
	n += enc_uint(b + n, start_ns);
	n += enc_uint(b + n, duration_ns);
	n += enc_uint(b + n, nr);
	n += enc_int(b + n, ret);
	n += enc_int(b + n, fd);
	n += enc_uint(b + n, kind);
	writer_append(w, (const char *)b, n);
}

void kp_rec_fork_note(struct kp_writer *w, const struct kp_rec_common *c,
		      uint64_t child, const char *how, const char *path,
		      const char *not_entered)
{
	begin_record(w, KP_REC_FORK, c, 2 + 2 * !!not_entered);
	put_kv_u64(w, "child", child);
	put_kv_str(w, "how", how);
	if (not_entered) {
		put_kv_str(w, "path", path);
		put_kv_str(w, "not_entered", not_entered);
	}
}

void kp_rec_fork(struct kp_writer *w, const struct kp_rec_common *c,
		 uint64_t child, const char *how)
{
	kp_rec_fork_note(w, c, child, how, NULL, NULL);
}

void kp_rec_exec_note(struct kp_writer *w, const struct kp_rec_common *c,
		      const char *path, const char *not_entered)
{
	begin_record(w, KP_REC_EXEC, c, 1 + !!not_entered);
	put_kv_str(w, "path", path);
	if (not_entered)
		put_kv_str(w, "not_entered", not_entered);
}

void kp_rec_exec(struct kp_writer *w, const struct kp_rec_common *c,
		 const char *path)
{
	kp_rec_exec_note(w, c, path, NULL);
}

/* The exit record; kbpf-trace adds "detached": true when tracing ended first. */
static void put_pairs(struct kp_writer *w, const char *key, const uint32_t *nr,
		      const uint64_t *count, unsigned n)
{
	put_str(w, key);
	msgpack_pack_array(&w->pk, n);
	for (unsigned i = 0; i < n; i++) {
		msgpack_pack_array(&w->pk, 2);
		msgpack_pack_uint64(&w->pk, nr[i]);
		msgpack_pack_uint64(&w->pk, count[i]);
	}
}

static void put_exit(struct kp_writer *w, const struct kp_rec_exit *e,
		     bool detached)
{
	begin_record(w, KP_REC_EXIT, &e->c, 5 + detached + e->after_death + (e->n_in_progress != 0));
	put_key(w, "status");
	msgpack_pack_int64(&w->pk, e->status);
	put_kv_u64(w, "signal", e->signal);
	put_key(w, "fds");
	msgpack_pack_map(&w->pk, 4);
	put_kv_u64(w, "file", e->fds_file);
	put_kv_u64(w, "pipe", e->fds_pipe);
	put_kv_u64(w, "socket", e->fds_socket);
	put_kv_u64(w, "other", e->fds_other);
	put_kv_u64(w, "pending_pipe_readers", e->pending_pipe_readers);
	put_kv_u64(w, "pending_pipe_writers", e->pending_pipe_writers);
	if (detached)
		put_kv_bool(w, "detached", true);
	if (e->after_death)
		put_kv_bool(w, "after_death", true);
	if (e->n_in_progress)
		put_pairs(w, "in_progress", e->in_progress_nr, e->in_progress, e->n_in_progress);
}

void kp_rec_exit(struct kp_writer *w, const struct kp_rec_exit *e)
{
	put_exit(w, e, false);
}

void kp_rec_own(struct kp_writer *w, const struct kp_rec_common *c,
		const struct kp_rec_own *own)
{
	bool startup = own->startup_ns != 0;
	begin_record(w, KP_REC_OWN, c, 1 + 2 * startup + 2 * own->dispatch);
	if (startup) {
		put_kv_u64(w, "startup_ns", own->startup_ns);
		put_pairs(w, "startup", own->startup_nr, own->startup, own->n_startup);
	}
	put_pairs(w, "syscalls", own->nr, own->count, own->n);
	if (own->dispatch) {
		put_kv_u64(w, "dispatch_calls", own->dispatch_calls);
		put_str(w, "dispatch_sites");
		msgpack_pack_array(&w->pk, own->n_dispatch_sites);
		for (unsigned i = 0; i < own->n_dispatch_sites; i++) {
			msgpack_pack_array(&w->pk, 2);
			msgpack_pack_uint64(&w->pk, own->dispatch_sites[i].site);
			msgpack_pack_uint64(&w->pk, own->dispatch_sites[i].calls);
		}
	}
}

void kp_rec_drop(struct kp_writer *w, const struct kp_rec_drop *d)
{
	begin_record(w, KP_REC_DROP, &d->c, 4);
	put_kv_u64(w, "records", d->records);
	put_kv_u64(w, "events", d->events);
	put_kv_u64(w, "bytes", d->bytes);
	put_kv_str(w, "reason", d->reason);
}

void kp_rec_exit_detached(struct kp_writer *w, const struct kp_rec_exit *e)
{
	put_exit(w, e, true);
}

void kp_rec_maps_begin(struct kp_writer *w, const struct kp_rec_common *c,
		       unsigned n_maps)
{
	begin_record(w, KP_REC_MAPS, c, 1);
	put_key(w, "maps");
	msgpack_pack_array(&w->pk, n_maps);
}

void kp_rec_map(struct kp_writer *w, const struct kp_rec_map *m)
{
	msgpack_pack_map(&w->pk, 5);
	put_kv_u64(w, "start", m->start);
	put_kv_u64(w, "end", m->end);
	put_kv_u64(w, "offset", m->offset);
	put_kv_str(w, "path", m->path);
	put_kv_str(w, "build_id", m->build_id);
}
