/* SPDX-License-Identifier: MIT */
/*
 * The records that carry a stream's numbers into the model: header,
 * aggregate, events, exit, drop, maps. Every value is type-checked before
 * use; a record whose documented keys carry the wrong type is rejected
 * whole (struct bad says which key), so no number in a profile comes from
 * a misread field.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "syscalls.h"

int ka_want(int err, struct bad *bad, const char *key, const char *type)
{
	if (err == -EINVAL || (err == -ENOENT && type[0] == '!')) {
		bad->key = key;
		bad->want = type[0] == '!' ? type + 1 : type;
		return -EINVAL;
	}
	return err == -ENOENT ? 0 : err;
}


int ka_get_str(const msgpack_object *map, const char *key, char **out,
		   struct bad *bad)
{
	char *s = NULL;
	int err = ka_want(kp_get_strdup(map, key, &s), bad, key, "string");
	if (err || !s)
		return err;
	free(*out);
	*out = s;
	return 0;
}

/* A map of uint -> uint with keys below limit, as sorted pairs. */
static int get_pairs(const msgpack_object *o, uint64_t limit,
		     struct ka_pair **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!o)
		return 0;
	if (o->type != MSGPACK_OBJECT_MAP)
		return -EINVAL;
	if (o->via.map.size == 0)
		return 0;
	struct ka_pair *p = calloc(o->via.map.size, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		if (kp_obj_uint(&kv->key, &p[i].key) ||
		    kp_obj_uint(&kv->val, &p[i].value) || p[i].key >= limit) {
			free(p);
			return -EINVAL;
		}
	}
	*out = p;
	*n = o->via.map.size;
	return 0;
}

/* `kinds` of a syscalls entry; kind names this reader does not know are
 * skipped (a later producer may tell more kinds apart). */
static int parse_kinds(const msgpack_object *o, struct ka_sc_stats *sc)
{
	if (!o)
		return 0;
	if (o->type != MSGPACK_OBJECT_MAP)
		return -EINVAL;
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		const msgpack_object *v = &kv->val;
		if (kv->key.type != MSGPACK_OBJECT_STR || v->type != MSGPACK_OBJECT_ARRAY ||
		    v->via.array.size < 4)
			return -EINVAL;
		uint64_t c[4];
		for (int k = 0; k < 4; k++)
			if (kp_obj_uint(&v->via.array.ptr[k], &c[k]))
				return -EINVAL;
		for (int k = 0; k < KP_KINDS; k++) {
			size_t n = strlen(kp_kind_names[k]);
			if (kv->key.via.str.size == n &&
			    memcmp(kv->key.via.str.ptr, kp_kind_names[k], n) == 0)
				memcpy(sc->kinds[k], c, sizeof(c));
		}
	}
	sc->have_kinds = true;
	return 0;
}

/* `stacks` of a syscalls entry (kbpf-trace --stacks). */
static int parse_stacks(const msgpack_object *o, struct ka_sc_stats *sc)
{
	if (!o)
		return 0;
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return -EINVAL;
	if (!o->via.array.size)
		return 0;
	sc->stacks = calloc(o->via.array.size, sizeof(*sc->stacks));
	if (!sc->stacks)
		return -ENOMEM;
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		const msgpack_object *e = &o->via.array.ptr[i];
		struct ka_stack *st = &sc->stacks[sc->n_stacks];
		if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size < 3 ||
		    e->via.array.ptr[0].type != MSGPACK_OBJECT_ARRAY ||
		    kp_obj_uint(&e->via.array.ptr[1], &st->count) ||
		    kp_obj_uint(&e->via.array.ptr[2], &st->time_ns))
			return -EINVAL;
		const msgpack_object *pcs = &e->via.array.ptr[0];
		if (pcs->via.array.size) {
			st->pcs = calloc(pcs->via.array.size, sizeof(*st->pcs));
			if (!st->pcs)
				return -ENOMEM;
		}
		sc->n_stacks++;
		for (uint32_t k = 0; k < pcs->via.array.size; k++)
			if (kp_obj_uint(&pcs->via.array.ptr[k], &st->pcs[k]))
				return -EINVAL;
		st->depth = pcs->via.array.size;
	}
	return 0;
}

static int parse_sc_entry(const msgpack_object *o, struct ka_sc_stats *sc,
			  struct bad *bad)
{
	int err;

	memset(sc, 0, sizeof(*sc));
	if (o->type != MSGPACK_OBJECT_MAP) {
		bad->key = "syscalls[]";
		bad->want = "map";
		return -EINVAL;
	}
	if ((err = NEED_UINT(o, "nr", &sc->nr, bad)))
		return err;
#define COUNTER(name, merge)                                                   \
	if ((err = GET_UINT(o, #name, &sc->name, bad)))                        \
		return err;
#define OPTIONAL(name, merge)                                                  \
	COUNTER(name, merge)                                                   \
	sc->has_##name = kp_map_get(o, #name) != NULL;
	KP_SC_COUNTERS(COUNTER)
	KP_SC_OPTIONAL(OPTIONAL)
#undef COUNTER
#undef OPTIONAL
	err = get_pairs(kp_map_get(o, "errno"), KA_ERRNO_MAX + 1, &sc->errnos,
			&sc->n_errnos);
	if (err) {
		bad->key = "errno";
		bad->want = "map of errno -> calls";
		return err;
	}
	err = get_pairs(kp_map_get(o, "hist"), KP_HIST_BUCKETS, &sc->hist,
			&sc->n_hist);
	if (err) {
		free(sc->errnos);
		sc->errnos = NULL;
		bad->key = "hist";
		bad->want = "map of bucket (< 160) -> calls";
		return err;
	}
	if ((err = parse_kinds(kp_map_get(o, "kinds"), sc))) {
		free(sc->errnos);
		free(sc->hist);
		sc->errnos = NULL;
		sc->hist = NULL;
		bad->key = "kinds";
		bad->want = "map of kind -> [count, time_ns, retries, errors]";
		return err;
	}
	const msgpack_object *sites = kp_map_get(o, "sites");
	bool ok = !sites || sites->type == MSGPACK_OBJECT_ARRAY;
	if (ok && sites && sites->via.array.size) {
		sc->sites = calloc(sites->via.array.size, sizeof(*sc->sites));
		if (!sc->sites) {
			free(sc->errnos);
			free(sc->hist);
			sc->errnos = NULL;
			sc->hist = NULL;
			return -ENOMEM;
		}
		for (uint32_t i = 0; ok && i < sites->via.array.size; i++) {
			const msgpack_object *e = &sites->via.array.ptr[i];
			struct ka_site *st = &sc->sites[i];
			ok = e->type == MSGPACK_OBJECT_ARRAY && e->via.array.size >= 3 &&
			     !kp_obj_uint(&e->via.array.ptr[0], &st->addr) &&
			     !kp_obj_uint(&e->via.array.ptr[1], &st->count) &&
			     !kp_obj_uint(&e->via.array.ptr[2], &st->time_ns);
			sc->n_sites += ok;
		}
	}
	if (!ok) {
		free(sc->errnos);
		free(sc->hist);
		free(sc->sites);
		sc->errnos = NULL;
		sc->hist = NULL;
		sc->sites = NULL;
		bad->key = "sites";
		bad->want = "array of [address, count, time_ns]";
		return -EINVAL;
	}
	if ((err = parse_stacks(kp_map_get(o, "stacks"), sc))) {
		ka_sc_free(sc);
		bad->key = "stacks";
		bad->want = "array of [[pc, ...], count, time_ns]";
		return err;
	}
	return 0;
}

/* Keeps the counters of an aggregate for time series. */
static int history_add(struct ka_model *m, uint64_t pid, uint64_t id,
		       const struct ka_thread *t)
{
	int err = ka_grow((void **)&m->history, &m->cap_history, m->n_history + 1,
		       sizeof(*m->history));
	if (err)
		return err;
	struct ka_snapshot *h = &m->history[m->n_history];
	memset(h, 0, sizeof(*h));
	h->pid = pid;
	h->stream = id;
	h->thread = t->thread;
	h->time_ns = t->time_ns;
	if (t->n_sc) {
		h->sc = calloc(t->n_sc, sizeof(*h->sc));
		if (!h->sc)
			return -ENOMEM;
		for (size_t i = 0; i < t->n_sc; i++) {
			h->sc[i].nr = t->sc[i].nr;
#define COUNTER(name, merge) h->sc[i].name = t->sc[i].name;
			KP_SC_COUNTERS(COUNTER)
#undef COUNTER
		}
		h->n_sc = t->n_sc;
	}
	m->n_history++;
	return 0;
}

/* An optional short string (a thread's name) into buf, cut to fit. */
int ka_copy_name(const msgpack_object *map, const char *key, char *buf, size_t size,
		     struct bad *bad)
{
	const msgpack_object *o = kp_map_get(map, key);
	buf[0] = 0;
	if (!o)
		return 0;
	if (o->type != MSGPACK_OBJECT_STR) {
		bad->key = key;
		bad->want = "string";
		return -EINVAL;
	}
	size_t n = o->via.str.size < size - 1 ? o->via.str.size : size - 1;
	memcpy(buf, o->via.str.ptr, n);
	buf[n] = 0;
	/* no control characters in a name shown on a terminal */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	return 0;
}

int ka_on_aggregate(struct ka_model *m, const msgpack_object *map,
			struct bad *bad)
{
	uint64_t pid, id, thread = 0, tid = 0, time_ns = 0;
	bool exited = false, final = false;
	int err;

	if ((err = NEED_UINT(map, "pid", &pid, bad)) ||
	    (err = NEED_UINT(map, "stream", &id, bad)) ||
	    (err = GET_UINT(map, "thread", &thread, bad)) ||
	    (err = GET_UINT(map, "tid", &tid, bad)) ||
	    (err = GET_UINT(map, "time_ns", &time_ns, bad)) ||
	    (err = ka_want(kp_get_bool(map, "exited", &exited), bad, "exited", "bool")) ||
	    (err = ka_want(kp_get_bool(map, "final", &final), bad, "final", "bool")))
		return err;
	const msgpack_object *list = kp_map_get(map, "syscalls");
	if (!list || list->type != MSGPACK_OBJECT_ARRAY) {
		bad->key = "syscalls";
		bad->want = "array";
		return -EINVAL;
	}
	struct ka_thread fresh = { .thread = thread, .tid = tid,
				   .time_ns = time_ns, .exited = exited,
				   .final = final };
	if ((err = ka_copy_name(map, "name", fresh.name, sizeof(fresh.name), bad)))
		return err;
	if (list->via.array.size) {
		fresh.sc = calloc(list->via.array.size, sizeof(*fresh.sc));
		if (!fresh.sc)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < list->via.array.size; i++) {
		err = parse_sc_entry(&list->via.array.ptr[i], &fresh.sc[i], bad);
		if (err) {
			ka_thread_clear_stats(&fresh);
			return err;
		}
		fresh.n_sc++;
	}

	if (m->keep_history && (err = history_add(m, pid, id, &fresh)))
		goto fail;
	struct ka_stream *s;
	err = ka_stream_get(m, pid, id, &s);
	if (err)
		goto fail;
	for (size_t i = 0; i < s->n_threads; i++) {
		struct ka_thread *t = &s->threads[i];
		if (t->thread != thread)
			continue;
		/* The last aggregate wins. "Last" is by the producer's
		 * clock, so reading files in any order, or one twice,
		 * gives the same result; ties go to the later record. */
		if (time_ns < t->time_ns) {
			ka_thread_clear_stats(&fresh);
			return 0;
		}
		ka_thread_clear_stats(t);
		*t = fresh;
		return 0;
	}
	err = ka_grow((void **)&s->threads, &s->cap_threads, s->n_threads + 1,
		   sizeof(*s->threads));
	if (err)
		goto fail;
	s->threads[s->n_threads++] = fresh;
	return 0;
fail:
	ka_thread_clear_stats(&fresh);
	return err;
}

int ka_on_header(struct ka_model *m, const msgpack_object *map,
		     struct bad *bad)
{
	uint64_t pid, id;
	int err;

	if ((err = NEED_UINT(map, "pid", &pid, bad)) ||
	    (err = NEED_UINT(map, "stream", &id, bad)))
		return err;
	const msgpack_object *argv = kp_map_get(map, "argv");
	if (argv && argv->type != MSGPACK_OBJECT_ARRAY) {
		bad->key = "argv";
		bad->want = "array of strings";
		return -EINVAL;
	}
	for (uint32_t i = 0; argv && i < argv->via.array.size; i++) {
		if (argv->via.array.ptr[i].type != MSGPACK_OBJECT_STR) {
			bad->key = "argv";
			bad->want = "array of strings";
			return -EINVAL;
		}
	}
	const msgpack_object *clock = kp_map_get(map, "clock");
	if (clock && clock->type != MSGPACK_OBJECT_MAP) {
		bad->key = "clock";
		bad->want = "map";
		return -EINVAL;
	}
	/* Check every typed key before touching the stream. */
	uint64_t u;
	bool b;
	char *tmp = NULL;
	static const char *const uints[] = { "version", "ppid", "parent_stream",
					     "time_ns", "interval_ms" };
	static const char *const strs[] = { "producer", "origin", "exe", "host",
					    "kernel", "arch", "coverage",
					    "hook_mode", "runtime", "site_cache_note" };
	for (size_t i = 0; i < sizeof(uints) / sizeof(uints[0]); i++)
		if ((err = GET_UINT(map, uints[i], &u, bad)))
			return err;
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		const msgpack_object *o = kp_map_get(map, strs[i]);
		if (o && o->type != MSGPACK_OBJECT_STR) {
			bad->key = strs[i];
			bad->want = "string";
			return -EINVAL;
		}
	}
	if ((err = ka_want(kp_get_bool(map, "events", &b), bad, "events", "bool")))
		return err;
	if (clock && ((err = GET_UINT(clock, "monotonic_ns", &u, bad)) ||
		      (err = GET_UINT(clock, "realtime_ns", &u, bad))))
		return err;
	const msgpack_object *up = kp_map_get(map, "untraced_parent");
	if (up && up->type != MSGPACK_OBJECT_MAP) {
		bad->key = "untraced_parent";
		bad->want = "map";
		return -EINVAL;
	}
	char up_why[24];
	if (up && ((err = NEED_UINT(up, "pid", &u, bad)) ||
		   (err = ka_copy_name(up, "why", up_why, sizeof(up_why), bad)) ||
		   (err = ka_copy_name(up, "exe", up_why, sizeof(up_why), bad))))
		return err;

	struct ka_stream *s;
	if ((err = ka_stream_get(m, pid, id, &s)))
		return err;
	ka_stream_free_header(s);
	s->have_header = true;
	GET_UINT(map, "version", &s->version, bad);
	GET_UINT(map, "ppid", &s->ppid, bad);
	GET_UINT(map, "parent_stream", &s->parent_stream, bad);
	GET_UINT(map, "time_ns", &s->start_ns, bad);
	s->start_real_ns = 0;
	if (clock)
		GET_UINT(clock, "realtime_ns", &s->start_real_ns, bad);
	if ((err = ka_get_str(map, "producer", &s->producer, bad)) ||
	    (err = ka_get_str(map, "origin", &s->origin, bad)) ||
	    (err = ka_copy_name(map, "comm", s->comm, sizeof(s->comm), bad)) ||
	    (err = ka_get_str(map, "exe", &s->exe, bad)) ||
	    (err = ka_get_str(map, "arch", &s->arch, bad)) ||
	    (err = ka_get_str(map, "host", &s->host, bad)) ||
	    (err = ka_get_str(map, "kernel", &s->kernel, bad)) ||
	    (err = ka_get_str(map, "coverage", &s->coverage, bad)) ||
	    (err = ka_get_str(map, "hook_mode", &s->hook_mode, bad)) ||
	    (err = ka_copy_name(map, "runtime", s->runtime, sizeof(s->runtime), bad)) ||
	    (err = ka_get_str(map, "site_cache_note", &s->site_cache_note, bad)))
		return err;
	if (up) {
		GET_UINT(up, "pid", &s->up_pid, bad);
		if ((err = ka_copy_name(up, "why", s->up_why, sizeof(s->up_why), bad)) ||
		    (err = ka_get_str(up, "exe", &s->up_exe, bad)))
			return err;
	}
	if (argv && argv->via.array.size) {
		s->argv = calloc(argv->via.array.size, sizeof(*s->argv));
		if (!s->argv)
			return -ENOMEM;
		for (uint32_t i = 0; i < argv->via.array.size; i++) {
			if ((err = kp_obj_strdup(&argv->via.array.ptr[i], &tmp)))
				return err;
			s->argv[s->argc++] = tmp;
		}
	}
	return 0;
}

/* [[nr, count], ...] of syscall numbers */
int ka_pairs_of(const msgpack_object *map, const char *key, bool need,
		    struct ka_pair **out, size_t *n_out, struct bad *bad)
{
	return ka_pairs_upto(map, key, need, KP_SYSCALL_MAX - 1, out, n_out, bad);
}

int ka_pairs_upto(const msgpack_object *map, const char *key, bool need,
		      uint64_t key_max, struct ka_pair **out, size_t *n_out,
		      struct bad *bad)
{
	const msgpack_object *list = kp_map_get(map, key);
	*out = NULL;
	*n_out = 0;
	if (!list && !need)
		return 0;
	bool ok = list && list->type == MSGPACK_OBJECT_ARRAY;
	for (uint32_t i = 0; ok && i < list->via.array.size; i++) {
		const msgpack_object *e = &list->via.array.ptr[i];
		ok = e->type == MSGPACK_OBJECT_ARRAY && e->via.array.size == 2 &&
		     e->via.array.ptr[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
		     e->via.array.ptr[0].via.u64 <= key_max &&
		     e->via.array.ptr[1].type == MSGPACK_OBJECT_POSITIVE_INTEGER;
	}
	if (!ok) {
		bad->key = key;
		bad->want = "array of [nr, count]";
		return -EINVAL;
	}
	struct ka_pair *p = calloc(list->via.array.size + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (uint32_t i = 0; i < list->via.array.size; i++) {
		p[i].key = list->via.array.ptr[i].via.array.ptr[0].via.u64;
		p[i].value = list->via.array.ptr[i].via.array.ptr[1].via.u64;
	}
	*out = p;
	*n_out = list->via.array.size;
	return 0;
}

int ka_on_exit_record(struct ka_model *m, const msgpack_object *map,
			  struct bad *bad)
{
	uint64_t pid, id, fds[KP_KINDS] = { 0 }, readers = 0, writers = 0,
				   signal = 0;
	int64_t status = -1;
	bool detached = false, after_death = false;
	int err;

	if ((err = NEED_UINT(map, "pid", &pid, bad)) ||
	    (err = NEED_UINT(map, "stream", &id, bad)) ||
	    (err = ka_want(kp_get_int(map, "status", &status), bad, "status", "integer")) ||
	    (err = ka_want(kp_get_bool(map, "detached", &detached), bad, "detached", "bool")) ||
	    (err = ka_want(kp_get_bool(map, "after_death", &after_death), bad, "after_death",
			"bool")) ||
	    (err = GET_UINT(map, "signal", &signal, bad)) ||
	    (err = GET_UINT(map, "pending_pipe_readers", &readers, bad)) ||
	    (err = GET_UINT(map, "pending_pipe_writers", &writers, bad)))
		return err;
	const msgpack_object *o = kp_map_get(map, "fds");
	if (o && o->type != MSGPACK_OBJECT_MAP) {
		bad->key = "fds";
		bad->want = "map";
		return -EINVAL;
	}
	for (int k = 0; o && k < KP_KINDS; k++)
		if ((err = GET_UINT(o, kp_kind_names[k], &fds[k], bad)))
			return err;

	struct ka_stream *s;
	if ((err = ka_stream_get(m, pid, id, &s)))
		return err;
	s->have_exit = true;
	free(s->in_progress);
	if ((err = ka_pairs_of(map, "in_progress", false, &s->in_progress, &s->n_in_progress, bad)))
		return err;
	s->exit_detached = detached;
	s->exit_after_death = after_death;
	s->exit_status = status;
	s->exit_signal = signal;
	memcpy(s->fds, fds, sizeof(fds));
	s->pending_pipe_readers = readers;
	s->pending_pipe_writers = writers;
	return 0;
}

int ka_on_drop(struct ka_model *m, const msgpack_object *map,
		   struct bad *bad)
{
	uint64_t records = 0, events = 0, bytes = 0;
	char *reason = NULL;
	int err;

	if ((err = GET_UINT(map, "records", &records, bad)) ||
	    (err = GET_UINT(map, "events", &events, bad)) ||
	    (err = GET_UINT(map, "bytes", &bytes, bad)) ||
	    (err = ka_get_str(map, "reason", &reason, bad)))
		return err;
	m->drops++;
	m->drop_records += records;
	m->drop_events += events;
	m->drop_bytes += bytes;
	if (!reason)
		return 0;
	for (size_t i = 0; i < m->n_drop_reasons; i++) {
		if (strcmp(m->drop_reasons[i], reason) == 0) {
			free(reason);
			return 0;
		}
	}
	void *p = reallocarray(m->drop_reasons, m->n_drop_reasons + 1,
			       sizeof(*m->drop_reasons));
	if (!p) {
		free(reason);
		return -ENOMEM;
	}
	m->drop_reasons = p;
	m->drop_reasons[m->n_drop_reasons++] = reason;
	return 0;
}

/* Calls into lanes between two passes of lanes_let_go (~14 MB of them). */
#define LANES_LET_GO_EVERY 262144

/* The longest calls of ended streams' threads below the drawn, freed. */
static void lanes_let_go(struct ka_model *m)
{
	struct ka_busiest b = { .have = 0 };
	for (size_t i = 0; i < m->n_streams; i++)
		ka_busiest_add(&b, &m->streams[i].lanes);
	uint64_t below = ka_busiest_nth(&b);
	for (size_t i = 0; below && i < m->n_streams; i++)
		if (ka_stream_ended(&m->streams[i]))
			ka_lanes_let_go(&m->streams[i].lanes, below);
}

int ka_on_events(struct ka_model *m, const msgpack_object *map,
		     struct bad *bad)
{
	uint64_t pid, id, tid = 0;
	int err;

	if ((err = NEED_UINT(map, "pid", &pid, bad)) ||
	    (err = NEED_UINT(map, "stream", &id, bad)) ||
	    (err = GET_UINT(map, "tid", &tid, bad)))
		return err;
	const msgpack_object *list = kp_map_get(map, "events");
	bool ok = list && list->type == MSGPACK_OBJECT_ARRAY;
	for (uint32_t i = 0; ok && i < list->via.array.size; i++) {
		const msgpack_object *e = &list->via.array.ptr[i];
		int64_t v;
		ok = e->type == MSGPACK_OBJECT_ARRAY && e->via.array.size >= 4;
		/* [start_ns, duration_ns, nr, ret] or [..., fd, kind] */
		uint32_t n = ok && e->via.array.size >= 6 ? 6 : 4;
		for (uint32_t k = 0; ok && k < n; k++)
			ok = k == 3 || k == 4 ?
				     kp_obj_int(&e->via.array.ptr[k], &v) == 0 :
				     e->via.array.ptr[k].type ==
					     MSGPACK_OBJECT_POSITIVE_INTEGER;
	}
	if (!ok) {
		bad->key = "events";
		bad->want = "array of [start_ns, duration_ns, nr, ret, fd, kind]";
		return -EINVAL;
	}
	struct ka_stream *s;
	if ((err = ka_stream_get(m, pid, id, &s)))
		return err;
	s->events += list->via.array.size;
	bool lanes = !m->keep_events && m->keep_lanes;
	if (!m->keep_events && !lanes)
		return 0;
	if (!lanes && (err = ka_grow((void **)&s->event_list, &s->cap_event_list,
				     s->n_event_list + list->via.array.size,
				     sizeof(*s->event_list))))
		return err;
	for (uint32_t i = 0; i < list->via.array.size; i++) {
		const msgpack_object *e = list->via.array.ptr[i].via.array.ptr;
		struct ka_event one;
		struct ka_event *ev = lanes ? &one : &s->event_list[s->n_event_list++];
		ev->start_ns = e[0].via.u64;
		ev->duration_ns = e[1].via.u64;
		ev->nr = e[2].via.u64;
		kp_obj_int(&e[3], &ev->ret);
		ev->tid = tid;
		ev->fd = -1;
		ev->kind = 0;
		if (list->via.array.ptr[i].via.array.size >= 6) {
			kp_obj_int(&e[4], &ev->fd);
			/* a kind this reader does not know counts as none */
			ev->kind = e[5].via.u64 <= KP_KINDS ? (unsigned)e[5].via.u64 : 0;
		}
		if (lanes && (!m->lane_nr || (ev->nr < 1024 && m->lane_nr[ev->nr])) &&
		    (err = ka_lanes_add(&s->lanes, ev)))
			return err;
	}
	if (lanes && m->lanes_let_go &&
	    (m->lane_calls_since += list->via.array.size) >= LANES_LET_GO_EVERY) {
		m->lane_calls_since = 0;
		lanes_let_go(m);
	}
	return 0;
}

static bool maps_overlap(const struct ka_map *a, const struct ka_map *b)
{
	return a->start < b->end && b->start < a->end;
}

/*
 * A stream's mappings after one more `maps` record, into out (room for
 * both): the newer list whole, then what of the older overlaps none of it
 * (a library unloaded since: its call sites are still in the cumulative
 * aggregates). The strings move into out or are freed; returns the count.
 */
static size_t maps_merge(struct ka_map *out, const struct ka_map *newer, size_t n_newer,
			 struct ka_map *older, size_t n_older)
{
	size_t total = 0;
	for (size_t i = 0; i < n_newer; i++)
		out[total++] = newer[i];
	for (size_t k = 0; k < n_older; k++) {
		bool hidden = false;
		for (size_t i = 0; i < n_newer && !hidden; i++)
			hidden = maps_overlap(&older[k], &newer[i]);
		if (!hidden) {
			out[total++] = older[k];
			continue;
		}
		free(older[k].path);
		free(older[k].build_id);
	}
	return total;
}

int ka_on_maps(struct ka_model *m, const msgpack_object *map,
		   struct bad *bad)
{
	uint64_t pid, id, time_ns = 0;
	int err;

	if ((err = NEED_UINT(map, "pid", &pid, bad)) ||
	    (err = NEED_UINT(map, "stream", &id, bad)) ||
	    (err = GET_UINT(map, "time_ns", &time_ns, bad)))
		return err;
	const msgpack_object *list = kp_map_get(map, "maps");
	bool ok = list && list->type == MSGPACK_OBJECT_ARRAY;
	for (uint32_t i = 0; ok && i < list->via.array.size; i++) {
		const msgpack_object *e = &list->via.array.ptr[i];
		uint64_t u;
		const msgpack_object *path = kp_map_get(e, "path");
		const msgpack_object *bid = kp_map_get(e, "build_id");
		ok = e->type == MSGPACK_OBJECT_MAP && !kp_get_uint(e, "start", &u) &&
		     !kp_get_uint(e, "end", &u) && !kp_get_uint(e, "offset", &u) &&
		     path && path->type == MSGPACK_OBJECT_STR &&
		     (!bid || bid->type == MSGPACK_OBJECT_STR);
	}
	if (!ok) {
		bad->key = "maps";
		bad->want = "array of {start, end, offset, path, build_id}";
		return -EINVAL;
	}
	struct ka_stream *s;
	if ((err = ka_stream_get(m, pid, id, &s)))
		return err;
	struct ka_map *maps = calloc(list->via.array.size + 1, sizeof(*maps));
	struct ka_map *merged = calloc(list->via.array.size + s->n_maps + 1, sizeof(*merged));
	if (!maps || !merged) {
		free(maps);
		free(merged);
		return -ENOMEM;
	}
	size_t n = 0;
	for (uint32_t i = 0; i < list->via.array.size; i++, n++) {
		const msgpack_object *e = &list->via.array.ptr[i];
		kp_get_uint(e, "start", &maps[n].start);
		kp_get_uint(e, "end", &maps[n].end);
		kp_get_uint(e, "offset", &maps[n].offset);
		err = kp_get_strdup(e, "path", &maps[n].path);
		if (!err && kp_get_strdup(e, "build_id", &maps[n].build_id) == -ENOMEM)
			err = -ENOMEM;
		if (err) {
			n++;
			break;
		}
	}
	if (!s->maps || time_ns >= s->maps_time_ns) {
		s->n_maps = maps_merge(merged, maps, n, s->maps, s->n_maps);
		s->maps_time_ns = time_ns;
	} else {
		s->n_maps = maps_merge(merged, s->maps, s->n_maps, maps, n);
	}
	free(maps);
	free(s->maps);
	s->maps = merged;
	return err;
}
