/* SPDX-License-Identifier: MIT */
/*
 * The profile in pprof's format (github.com/google/pprof, proto/
 * profile.proto), gzipped, for `go tool pprof`, Pyroscope, Parca and
 * speedscope: two sample types, calls (count) and time (nanoseconds, the
 * default), and one sample per syscall of each thread of each stream at
 * each place it was called from. Its locations, innermost first: the
 * syscall itself (function "syscall:NAME"), then kbpf-trace's whole stack
 * (--stacks) or the shim's call site, named as --sites and --folded name
 * them; calls at no site or stack stand under "[unknown site]" or
 * "[unknown stack]", so that each syscall's samples sum to exactly its row
 * of the profile. Labels: pid, tid (numbers) and process (the image's
 * name).
 *
 * Functions carry their library as file name; locations have no mapping
 * and no address: kanalyze has named them already, and one location per
 * function lets samples of different processes (their own addresses)
 * share it. The one mapping, the first stream's executable, is there
 * because pprof takes the first mapping for the main binary. The protobuf encoding is written here: varints and
 * length-delimited fields are all the format needs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report.h"
#include "symbolize.h"
#include "views.h"

/* ---- protobuf wire encoding into a growing buffer ---- */

struct pb {
	uint8_t *b;
	size_t n, cap;
	bool oom;
};

static void pb_bytes(struct pb *p, const void *data, size_t len)
{
	if (p->oom)
		return;
	if (p->n + len > p->cap) {
		size_t cap = p->cap ? p->cap : 256;
		while (cap < p->n + len)
			cap *= 2;
		uint8_t *b = realloc(p->b, cap);
		if (!b) {
			p->oom = true;
			return;
		}
		p->b = b;
		p->cap = cap;
	}
	memcpy(p->b + p->n, data, len);
	p->n += len;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;
	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	pb_bytes(p, buf, n);
}

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

static void pb_uint(struct pb *p, unsigned field, uint64_t v)
{
	pb_varint(p, (uint64_t)field << 3 | WIRE_VARINT);
	pb_varint(p, v);
}

static void pb_len(struct pb *p, unsigned field, const void *data, size_t len)
{
	pb_varint(p, (uint64_t)field << 3 | WIRE_LEN);
	pb_varint(p, len);
	pb_bytes(p, data, len);
}

/* A submessage: sub's bytes as field `field` of p; sub is emptied. */
static void pb_msg(struct pb *p, unsigned field, struct pb *sub)
{
	if (sub->oom)
		p->oom = true;
	pb_len(p, field, sub->b, sub->n);
	sub->n = 0;
	sub->oom = false;
}

/* A packed repeated varint field. */
static void pb_packed(struct pb *p, unsigned field, const uint64_t *v, size_t n, struct pb *tmp)
{
	for (size_t i = 0; i < n; i++)
		pb_varint(tmp, v[i]);
	pb_msg(p, field, tmp);
}

/* ---- profile.proto's field numbers ---- */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* ---- interned strings and functions ---- */

/* Strings by content: index into the string table (0 is ""). */
struct strtab {
	char **s;
	size_t n, cap;
	uint64_t *slot; /* open addressing: index + 1, 0 = empty */
	size_t n_slot;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

static int strtab_grow(struct strtab *t)
{
	size_t n_slot = t->n_slot ? t->n_slot * 2 : 1024;
	uint64_t *slot = calloc(n_slot, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t k = hash_str(t->s[i]) & (n_slot - 1);
		while (slot[k])
			k = (k + 1) & (n_slot - 1);
		slot[k] = i + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->n_slot = n_slot;
	return 0;
}

/* The index of s, added when new; -1 when out of memory. */
static int64_t strtab_id(struct strtab *t, const char *s)
{
	if ((t->n + 1) * 2 > t->n_slot && strtab_grow(t))
		return -1;
	size_t k = hash_str(s) & (t->n_slot - 1);
	for (; t->slot[k]; k = (k + 1) & (t->n_slot - 1))
		if (strcmp(t->s[t->slot[k] - 1], s) == 0)
			return (int64_t)t->slot[k] - 1;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **p = reallocarray(t->s, cap, sizeof(*p));
		if (!p)
			return -1;
		t->s = p;
		t->cap = cap;
	}
	if (!(t->s[t->n] = strdup(s)))
		return -1;
	t->slot[k] = ++t->n;
	return (int64_t)t->n - 1;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->slot);
}

struct writer {
	struct strtab str;
	/* functions, by "name\tfile" in their own table: id = index + 1 */
	struct strtab fn;
	struct pb out, tmp, tmp2;
	struct ka_symbolizer *sym;
	uint64_t samples;
	uint64_t k_pid, k_tid, k_process;
	const char *main_exe;
};

/* A string's index (0 and the writer out of memory when it cannot be had). */
static uint64_t str_id(struct writer *w, const char *s)
{
	int64_t id = strtab_id(&w->str, s);
	if (id < 0) {
		w->out.oom = true;
		return 0;
	}
	return (uint64_t)id;
}

/* A function's id, for a frame named "function (library)", "lib+0xoff",
 * "0xaddr" or "[...]". */
static uint64_t function_id(struct writer *w, const char *where)
{
	char name[300], file[300];
	const char *paren = ka_symbol_library(where);
	size_t len = strlen(where);
	if (paren) {
		snprintf(name, sizeof(name), "%.*s", (int)(paren - where), where);
		snprintf(file, sizeof(file), "%.*s", (int)(len - (size_t)(paren - where) - 3),
			 paren + 2);
	} else {
		snprintf(name, sizeof(name), "%s", where);
		const char *plus = strstr(where, "+0x");
		snprintf(file, sizeof(file), "%.*s",
			 plus && where[0] != '[' ? (int)(plus - where) : 0, where);
	}
	char key[610];
	snprintf(key, sizeof(key), "%s\t%s", name, file);
	size_t before = w->fn.n;
	int64_t id = strtab_id(&w->fn, key);
	if (id < 0) {
		w->out.oom = true;
		return 0;
	}
	if ((size_t)id == before) { /* new: its Function and Location */
		uint64_t n = str_id(w, name), f = str_id(w, file);
		pb_uint(&w->tmp, FUNCTION_ID, (uint64_t)id + 1);
		pb_uint(&w->tmp, FUNCTION_NAME, n);
		pb_uint(&w->tmp, FUNCTION_SYSTEM_NAME, n);
		pb_uint(&w->tmp, FUNCTION_FILENAME, f);
		pb_msg(&w->out, PROFILE_FUNCTION, &w->tmp);
		pb_uint(&w->tmp2, LINE_FUNCTION_ID, (uint64_t)id + 1);
		pb_uint(&w->tmp, LOCATION_ID, (uint64_t)id + 1);
		pb_msg(&w->tmp, LOCATION_LINE, &w->tmp2);
		pb_msg(&w->out, PROFILE_LOCATION, &w->tmp);
	}
	return (uint64_t)id + 1;
}

static void label_num(struct writer *w, uint64_t key, uint64_t v)
{
	pb_uint(&w->tmp2, LABEL_KEY, key);
	pb_uint(&w->tmp2, LABEL_NUM, v);
	pb_msg(&w->tmp, SAMPLE_LABEL, &w->tmp2);
}

static void sample(struct writer *w, const struct ka_stream *s, const struct ka_thread *th,
		   const uint64_t *locs, size_t n_locs, uint64_t count, uint64_t time_ns)
{
	if (!count && !time_ns)
		return;
	uint64_t values[2] = { count, time_ns };
	pb_packed(&w->tmp, SAMPLE_LOCATION_ID, locs, n_locs, &w->tmp2);
	pb_packed(&w->tmp, SAMPLE_VALUE, values, 2, &w->tmp2);
	label_num(w, w->k_pid, s->pid);
	if (th->tid)
		label_num(w, w->k_tid, th->tid);
	pb_uint(&w->tmp2, LABEL_KEY, w->k_process);
	pb_uint(&w->tmp2, LABEL_STR, str_id(w, ka_stream_name(s)));
	pb_msg(&w->tmp, SAMPLE_LABEL, &w->tmp2);
	pb_msg(&w->out, PROFILE_SAMPLE, &w->tmp);
	w->samples++;
}

#define MAX_FRAMES 130 /* the syscall and up to 128 frames, or a site */

/* The samples of one syscall of one thread. */
static void syscall_samples(struct writer *w, const struct ka_stream *s,
			    const struct ka_thread *th, const struct ka_sc_stats *sc,
			    const char *arch, bool any_stacks)
{
	char label[40], name[48], where[256];
	ka_syscall_label(label, sizeof(label), arch, sc->nr);
	snprintf(name, sizeof(name), "syscall:%s", label);
	uint64_t locs[MAX_FRAMES];
	locs[0] = function_id(w, name);
	if (!ka_stream_has_sites(s, any_stacks)) {
		/* kbpf-trace without stacks: the syscall alone */
		sample(w, s, th, locs, 1, sc->count, sc->time_ns);
		return;
	}
	for (size_t j = 0; j < sc->n_sites; j++) {
		ka_symbolize(w->sym, s, sc->sites[j].addr, where, sizeof(where));
		locs[1] = function_id(w, where);
		sample(w, s, th, locs, 2, sc->sites[j].count, sc->sites[j].time_ns);
	}
	for (size_t j = 0; j < sc->n_stacks; j++) {
		const struct ka_stack *st = &sc->stacks[j];
		size_t n = 1;
		if (!st->depth)
			locs[n++] = function_id(w, "[unknown stack]");
		size_t depth = ka_stack_depth(w->sym, s, st);
		for (size_t f = 0; f < depth && n < MAX_FRAMES; f++) {
			ka_symbolize(w->sym, s, st->pcs[f], where, sizeof(where));
			locs[n++] = function_id(w, where);
		}
		sample(w, s, th, locs, n, st->count, st->time_ns);
	}
	uint64_t rest_ns, rest = ka_sc_unattributed(sc, true, &rest_ns);
	if (rest || rest_ns) {
		bool shim = s->producer && !strcmp(s->producer, "preload");
		locs[1] = function_id(w, shim ? "[unknown site]" : "[unknown stack]");
		sample(w, s, th, locs, 2, rest, rest_ns);
	}
}

static void value_type(struct writer *w, unsigned field, const char *type, const char *unit)
{
	pb_uint(&w->tmp, VALUE_TYPE_TYPE, str_id(w, type));
	pb_uint(&w->tmp, VALUE_TYPE_UNIT, str_id(w, unit));
	pb_msg(&w->out, field, &w->tmp);
}

/* The message, strings last (every one is known by then). */
static int encode(struct writer *w, const struct ka_model *m)
{
	if (str_id(w, "") != 0 || w->out.oom)
		return -ENOMEM;
	value_type(w, PROFILE_SAMPLE_TYPE, "calls", "count");
	value_type(w, PROFILE_SAMPLE_TYPE, "time", "nanoseconds");
	value_type(w, PROFILE_PERIOD_TYPE, "calls", "count");
	pb_uint(&w->out, PROFILE_PERIOD, 1);
	pb_uint(&w->out, PROFILE_DEFAULT_SAMPLE_TYPE, str_id(w, "time"));
	w->k_pid = str_id(w, "pid");
	w->k_tid = str_id(w, "tid");
	w->k_process = str_id(w, "process");
	pb_uint(&w->out, PROFILE_COMMENT, str_id(w, "kprof: syscalls by place of call"));
	uint64_t start = 0;
	bool any_stacks = ka_model_has_stacks(m);
	for (size_t i = 0; i < m->n_streams && !w->out.oom; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (s->start_real_ns && (!start || s->start_real_ns < start))
			start = s->start_real_ns;
		if (!w->main_exe && s->exe)
			w->main_exe = s->exe;
		const char *arch = s->arch ? s->arch : ka_model_arch(m);
		for (size_t t = 0; t < s->n_threads; t++)
			for (size_t k = 0; k < s->threads[t].n_sc; k++)
				syscall_samples(w, s, &s->threads[t], &s->threads[t].sc[k],
						arch, any_stacks);
	}
	if (start)
		pb_uint(&w->out, PROFILE_TIME_NANOS, start);
	/* pprof takes the first mapping for the main binary; no location
	 * refers to it (they are named already: has_functions) */
	if (w->main_exe) {
		pb_uint(&w->tmp, MAPPING_ID, 1);
		pb_uint(&w->tmp, MAPPING_FILENAME, str_id(w, w->main_exe));
		pb_uint(&w->tmp, MAPPING_HAS_FUNCTIONS, 1);
		pb_msg(&w->out, PROFILE_MAPPING, &w->tmp);
	}
	for (size_t i = 0; i < w->str.n; i++)
		pb_len(&w->out, PROFILE_STRING_TABLE, w->str.s[i], strlen(w->str.s[i]));
	return w->out.oom || w->tmp.oom || w->tmp2.oom ? -ENOMEM : 0;
}

/* The buffer, gzipped, to out. */
static int write_gzip(FILE *out, const uint8_t *data, size_t len)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	uint8_t buf[65536];
	int err = 0, zr;
	z.next_in = (Bytef *)data;
	do {
		size_t chunk = len > (1u << 30) ? 1u << 30 : len;
		z.avail_in = (uInt)chunk;
		len -= chunk;
		do {
			z.next_out = buf;
			z.avail_out = sizeof(buf);
			zr = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
			size_t have = sizeof(buf) - z.avail_out;
			if (have && fwrite(buf, 1, have, out) != have)
				err = -EIO;
		} while (!err && z.avail_out == 0);
	} while (!err && len);
	if (!err && zr != Z_STREAM_END)
		err = -EIO;
	deflateEnd(&z);
	return err;
}

int ka_write_pprof(FILE *out, const struct ka_model *m, uint64_t *samples)
{
	struct writer w;
	memset(&w, 0, sizeof(w));
	int err = ka_symbolizer_new(&w.sym);
	if (!err)
		err = encode(&w, m);
	if (!err)
		err = write_gzip(out, w.out.b, w.out.n);
	*samples = w.samples;
	ka_symbolizer_free(w.sym);
	strtab_free(&w.str);
	strtab_free(&w.fn);
	free(w.out.b);
	free(w.tmp.b);
	free(w.tmp2.b);
	return err;
}
