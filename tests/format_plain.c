/* SPDX-License-Identifier: MIT */
/*
 * Proves docs/FORMAT.md describes the record stream: decodes a trace with
 * plain msgpack-c and zlib (no kprof code) and checks every record
 * against the documented keys and value types. Undocumented record types
 * or keys fail, so the document has to keep up with the producers.
 *
 * Usage: format_plain [--offsets] [--expect-all] TRACE
 *   --offsets     print the end offset of every record (decompressed
 *                 stream), one per line: the record boundaries
 *   --expect-all  fail unless every documented record type occurs
 * Exit: 0 conforms, 1 does not (first problem on stderr), 99 usage/IO.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>
#include <zlib.h>

/* u uint, i int, s str, b bool, A array of str, M map, S syscalls, E
 * events, C clock, F fds, O own syscalls ([nr, count] pairs) */
struct key {
	const char *name;
	char type;
	bool required;
};

struct rtype {
	const char *name;
	struct key keys[32];
};

#define COMMON { "type", 's', true }, { "pid", 'u', true }, \
	{ "stream", 'u', true }, { "time_ns", 'u', true }, { "seq", 'u', false }

static struct rtype types[] = {
	{ "header", { COMMON, { "version", 'u', true }, { "producer", 's', true },
		      { "ppid", 'u', true }, { "origin", 's', true },
		      { "parent_stream", 'u', true }, { "exe", 's', true },
		      { "comm", 's', false },
		      { "argv", 'A', true }, { "host", 's', true },
		      { "kernel", 's', true }, { "arch", 's', true },
		      { "clock", 'C', true }, { "hook_mode", 's', false },
		      { "clock_source", 's', false },
		      { "coverage", 's', true }, { "events", 'b', true },
		      { "interval_ms", 'u', true }, { "untraced_parent", 'U', false },
		      { "runtime", 's', false }, { "site_cache_note", 's', false } } },
	{ "aggregate", { COMMON, { "thread", 'u', true }, { "tid", 'u', true },
			 { "name", 's', false },
			 { "exited", 'b', true }, { "final", 'b', true },
			 { "syscalls", 'S', true } } },
	{ "events", { COMMON, { "tid", 'u', true }, { "events", 'E', true } } },
	{ "fork", { COMMON, { "child", 'u', true }, { "how", 's', true },
		    { "path", 's', false }, { "not_entered", 's', false } } },
	{ "exec", { COMMON, { "path", 's', true }, { "not_entered", 's', false } } },
	{ "exit", { COMMON, { "status", 'i', true }, { "signal", 'u', true },
		    { "fds", 'F', true }, { "pending_pipe_readers", 'u', true },
		    { "pending_pipe_writers", 'u', true }, { "in_progress", 'O', false } } },
	{ "drop", { COMMON, { "records", 'u', true }, { "events", 'u', true },
		    { "bytes", 'u', true }, { "reason", 's', true } } },
	{ "maps", { COMMON, { "maps", 'P', true } } },
	{ "own", { COMMON, { "syscalls", 'O', true }, { "startup_ns", 'u', false },
		   { "startup", 'O', false }, { "dispatch_calls", 'u', false },
		   { "dispatch_sites", 'O', false } } },
};
#define NTYPES (sizeof(types) / sizeof(types[0]))
static bool seen[NTYPES];

static const char *why;
static char why_buf[256];

static bool is_uint(const msgpack_object *o)
{
	return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER;
}

static bool is_int(const msgpack_object *o)
{
	return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ||
	       o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER;
}

static bool str_eq(const msgpack_object *o, const char *s)
{
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == strlen(s) &&
	       memcmp(o->via.str.ptr, s, o->via.str.size) == 0;
}

static const msgpack_object *get(const msgpack_object *map, const char *key)
{
	for (uint32_t i = 0; i < map->via.map.size; i++)
		if (str_eq(&map->via.map.ptr[i].key, key))
			return &map->via.map.ptr[i].val;
	return NULL;
}

static bool fail(const char *fmt, const char *a)
{
	snprintf(why_buf, sizeof(why_buf), fmt, a);
	why = why_buf;
	return false;
}

/* Map with exactly these uint-valued keys (all required). */
static bool uint_map(const msgpack_object *o, const char *const *keys,
		     unsigned n, const char *what)
{
	if (o->type != MSGPACK_OBJECT_MAP)
		return fail("%s is not a map", what);
	for (unsigned k = 0; k < n; k++) {
		const msgpack_object *v = get(o, keys[k]);
		if (!v || !is_uint(v))
			return fail("%s lacks an unsigned key", what);
	}
	if (o->via.map.size != n)
		return fail("%s has undocumented keys", what);
	return true;
}

/* Map uint -> uint, keys below limit. */
static bool counts_map(const msgpack_object *o, uint64_t limit, const char *what)
{
	if (o->type != MSGPACK_OBJECT_MAP)
		return fail("%s is not a map", what);
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		if (!is_uint(&kv->key) || !is_uint(&kv->val) ||
		    kv->key.via.u64 >= limit)
			return fail("%s is not a map of uint -> uint in range", what);
	}
	return true;
}

/* Array of [uint, uint, uint]. */
static bool check_triples(const msgpack_object *o, const char *what)
{
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return fail("\"%s\" is not an array", what);
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		const msgpack_object *e = &o->via.array.ptr[i];
		if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 3 ||
		    !is_uint(&e->via.array.ptr[0]) || !is_uint(&e->via.array.ptr[1]) ||
		    !is_uint(&e->via.array.ptr[2]))
			return fail("\"%s\" entry is not [address, count, time_ns]", what);
	}
	return true;
}

/* maps entries: start, end, offset (uint), path, build_id (str), nothing else. */
static bool check_maps(const msgpack_object *o)
{
	static const char *const ukeys[] = { "start", "end", "offset" };
	static const char *const skeys[] = { "path", "build_id" };
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return fail("%s is not an array", "maps");
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		const msgpack_object *e = &o->via.array.ptr[i];
		if (e->type != MSGPACK_OBJECT_MAP || e->via.map.size != 5)
			return fail("%s entry is not a map of 5 keys", "maps");
		for (unsigned k = 0; k < 3; k++) {
			const msgpack_object *v = get(e, ukeys[k]);
			if (!v || !is_uint(v))
				return fail("maps entry: \"%s\" missing or not uint", ukeys[k]);
		}
		for (unsigned k = 0; k < 2; k++) {
			const msgpack_object *v = get(e, skeys[k]);
			if (!v || v->type != MSGPACK_OBJECT_STR)
				return fail("maps entry: \"%s\" missing or not a string", skeys[k]);
		}
	}
	return true;
}

/* kinds: map of "file"/"pipe"/"socket"/"other" -> [count, time_ns, retries, errors]. */
static bool check_kinds(const msgpack_object *o)
{
	static const char *const names[] = { "file", "pipe", "socket", "other" };
	if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size > 4)
		return fail("%s is not a map of at most 4 kinds", "kinds");
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];
		bool known = false;
		for (unsigned k = 0; k < 4; k++)
			known |= str_eq(&kv->key, names[k]);
		if (!known)
			return fail("%s has an undocumented kind", "kinds");
		const msgpack_object *v = &kv->val;
		if (v->type != MSGPACK_OBJECT_ARRAY || v->via.array.size != 4)
			return fail("%s entry is not [count, time_ns, retries, errors]", "kinds");
		for (unsigned k = 0; k < 4; k++)
			if (!is_uint(&v->via.array.ptr[k]))
				return fail("%s entry has a value that is not uint", "kinds");
		if (v->via.array.ptr[0].via.u64 == 0)
			return fail("%s has a kind without calls", "kinds");
	}
	return true;
}

/* stacks: array of [[pc, ...], count, time_ns], counts adding up to count. */
static bool check_stacks(const msgpack_object *o, uint64_t count)
{
	uint64_t sum = 0;
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return fail("%s is not an array", "stacks");
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		const msgpack_object *e = &o->via.array.ptr[i];
		if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 3 ||
		    e->via.array.ptr[0].type != MSGPACK_OBJECT_ARRAY ||
		    !is_uint(&e->via.array.ptr[1]) || !is_uint(&e->via.array.ptr[2]))
			return fail("%s entry is not [[pc, ...], count, time_ns]", "stacks");
		const msgpack_object *pcs = &e->via.array.ptr[0];
		for (uint32_t k = 0; k < pcs->via.array.size; k++)
			if (!is_uint(&pcs->via.array.ptr[k]))
				return fail("%s entry has a pc that is not uint", "stacks");
		sum += e->via.array.ptr[1].via.u64;
	}
	if (sum != count)
		return fail("%s counts do not add up to the entry's count", "stacks");
	return true;
}

static bool check_syscalls(const msgpack_object *o)
{
	static const char *const ukeys[] = { "nr", "count", "time_ns", "min_ns",
					     "max_ns", "retries", "errors" };
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return fail("%s is not an array", "syscalls");
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		const msgpack_object *e = &o->via.array.ptr[i];
		if (e->type != MSGPACK_OBJECT_MAP)
			return fail("%s entry is not a map", "syscalls");
		for (unsigned k = 0; k < 7; k++) {
			const msgpack_object *v = get(e, ukeys[k]);
			if (!v || !is_uint(v))
				return fail("syscalls entry: \"%s\" missing or not uint", ukeys[k]);
		}
		const msgpack_object *er = get(e, "errno"), *h = get(e, "hist");
		if (!er || !counts_map(er, 4096, "syscalls entry errno"))
			return fail("%s", why ? why : "syscalls entry: no errno map");
		if (!h || !counts_map(h, 160, "syscalls entry hist"))
			return fail("%s", why ? why : "syscalls entry: no hist map");
		const msgpack_object *st = get(e, "sites");
		if (st && !check_triples(st, "sites"))
			return false;
		const msgpack_object *kinds = get(e, "kinds");
		if (kinds && !check_kinds(kinds))
			return false;
		const msgpack_object *stacks = get(e, "stacks");
		if (stacks && !check_stacks(stacks, get(e, "count")->via.u64))
			return false;
		const msgpack_object *off = get(e, "off_cpu_ns");
		if (off && (!is_uint(off) || off->via.u64 > get(e, "time_ns")->via.u64))
			return fail("%s is not uint, or more than time_ns", "off_cpu_ns");
		if (e->via.map.size !=
		    9u + (st != NULL) + (kinds != NULL) + (stacks != NULL) + (off != NULL))
			return fail("%s entry has undocumented keys", "syscalls");
	}
	return true;
}

static bool check_value(const msgpack_object *v, char type, const char *name)
{
	static const char *const clock_keys[] = { "monotonic_ns", "realtime_ns" };
	static const char *const fd_keys[] = { "file", "pipe", "socket", "other" };
	switch (type) {
	case 'u': if (!is_uint(v)) return fail("\"%s\" is not an unsigned integer", name); break;
	case 'i': if (!is_int(v)) return fail("\"%s\" is not an integer", name); break;
	case 's': if (v->type != MSGPACK_OBJECT_STR) return fail("\"%s\" is not a string", name); break;
	case 'b': if (v->type != MSGPACK_OBJECT_BOOLEAN) return fail("\"%s\" is not a bool", name); break;
	case 'A':
		if (v->type != MSGPACK_OBJECT_ARRAY)
			return fail("\"%s\" is not an array", name);
		for (uint32_t i = 0; i < v->via.array.size; i++)
			if (v->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
				return fail("\"%s\" has a non-string element", name);
		break;
	case 'C': return uint_map(v, clock_keys, 2, "clock");
	case 'U':
		/* untraced_parent: exactly pid (uint), exe and why (strings) */
		if (v->type != MSGPACK_OBJECT_MAP || v->via.map.size != 3 || !get(v, "pid") ||
		    !is_uint(get(v, "pid")) || !get(v, "exe") ||
		    get(v, "exe")->type != MSGPACK_OBJECT_STR || !get(v, "why") ||
		    get(v, "why")->type != MSGPACK_OBJECT_STR)
			return fail("\"%s\" is not a map of pid, exe and why", name);
		break;
	case 'F': return uint_map(v, fd_keys, 4, "fds");
	case 'S': return check_syscalls(v);
	case 'P': return check_maps(v);
	case 'O':
		if (v->type != MSGPACK_OBJECT_ARRAY)
			return fail("\"%s\" is not an array", name);
		for (uint32_t i = 0; i < v->via.array.size; i++) {
			const msgpack_object *e = &v->via.array.ptr[i];
			if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 2 ||
			    !is_uint(&e->via.array.ptr[0]) || !is_uint(&e->via.array.ptr[1]))
				return fail("\"%s\" entry is not [nr, count]", name);
		}
		break;
	case 'E':
		if (v->type != MSGPACK_OBJECT_ARRAY)
			return fail("\"%s\" is not an array", name);
		for (uint32_t i = 0; i < v->via.array.size; i++) {
			const msgpack_object *e = &v->via.array.ptr[i];
			if (e->type != MSGPACK_OBJECT_ARRAY ||
			    (e->via.array.size != 4 && e->via.array.size != 6) ||
			    !is_uint(&e->via.array.ptr[0]) || !is_uint(&e->via.array.ptr[1]) ||
			    !is_uint(&e->via.array.ptr[2]) || !is_int(&e->via.array.ptr[3]))
				return fail("\"%s\" entry is not [start_ns, duration_ns, nr, ret]", name);
			if (e->via.array.size == 6 &&
			    (!is_int(&e->via.array.ptr[4]) || !is_uint(&e->via.array.ptr[5]) ||
			     e->via.array.ptr[5].via.u64 > 4))
				return fail("\"%s\" entry is not [start_ns, duration_ns, nr, ret, fd, kind]", name);
		}
		break;
	}
	return true;
}

struct stream_id {
	uint64_t pid, stream;
};
static struct stream_id *headers;
static size_t n_headers;

static bool check_record(const msgpack_object *o)
{
	why = NULL;
	if (o->type != MSGPACK_OBJECT_MAP || o->via.map.size == 0)
		return fail("%s", "record is not a non-empty map");
	if (!str_eq(&o->via.map.ptr[0].key, "type") ||
	    o->via.map.ptr[0].val.type != MSGPACK_OBJECT_STR)
		return fail("%s", "first key is not \"type\" with a string");
	struct rtype *t = NULL;
	for (size_t i = 0; i < NTYPES; i++)
		if (str_eq(&o->via.map.ptr[0].val, types[i].name)) {
			t = &types[i];
			seen[i] = true;
		}
	if (!t)
		return fail("%s", "undocumented record type");
	for (const struct key *k = t->keys; k->name; k++) {
		const msgpack_object *v = get(o, k->name);
		if (!v) {
			if (k->required)
				return fail("required key \"%s\" missing", k->name);
			continue;
		}
		if (!check_value(v, k->type, k->name))
			return false;
	}
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *key = &o->via.map.ptr[i].key;
		bool known = false;
		for (const struct key *k = t->keys; k->name && !known; k++)
			known = str_eq(key, k->name);
		if (!known)
			return fail("undocumented key in a %s record", t->name);
	}
	uint64_t pid = get(o, "pid")->via.u64, stream = get(o, "stream")->via.u64;
	if (strcmp(t->name, "header") == 0) {
		if (get(o, "version")->via.u64 != 1)
			return fail("%s", "header version is not 1");
		struct stream_id *p = realloc(headers, (n_headers + 1) * sizeof(*p));
		if (!p)
			exit(99);
		headers = p;
		headers[n_headers++] = (struct stream_id){ pid, stream };
		return true;
	}
	for (size_t i = 0; i < n_headers; i++)
		if (headers[i].pid == pid && headers[i].stream == stream)
			return true;
	return fail("%s record before the header of its pid+stream", t->name);
}

int main(int argc, char **argv)
{
	bool offsets = false, expect_all = false;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--offsets") == 0)
			offsets = true;
		else if (strcmp(argv[i], "--expect-all") == 0)
			expect_all = true;
		else if (!path)
			path = argv[i];
		else
			path = NULL, i = argc;
	}
	if (!path) {
		fprintf(stderr, "usage: format_plain [--offsets] [--expect-all] TRACE\n");
		return 99;
	}
	/* gzread passes plain files through unchanged. */
	gzFile gz = gzopen(path, "rb");
	if (!gz) {
		perror(path);
		return 99;
	}
	msgpack_unpacker up;
	msgpack_unpacked result;
	if (!msgpack_unpacker_init(&up, 1 << 16))
		return 99;
	msgpack_unpacked_init(&result);
	uint64_t records = 0, offset = 0;
	int status = 0;
	for (;;) {
		if (!msgpack_unpacker_reserve_buffer(&up, 1 << 16))
			return 99;
		int n = gzread(gz, msgpack_unpacker_buffer(&up), 1 << 16);
		if (n < 0) {
			fprintf(stderr, "format_plain: %s: read error\n", path);
			return 99;
		}
		if (n == 0)
			break;
		msgpack_unpacker_buffer_consumed(&up, (size_t)n);
		msgpack_unpack_return ret;
		size_t size;
		while ((ret = msgpack_unpacker_next_with_size(&up, &result, &size)) ==
		       MSGPACK_UNPACK_SUCCESS) {
			uint64_t start = offset;
			offset += size;
			if (!check_record(&result.data)) {
				fprintf(stderr, "format_plain: %s: record %llu at byte %llu: %s\n",
					path, (unsigned long long)records,
					(unsigned long long)start, why);
				status = 1;
				goto out;
			}
			records++;
			if (offsets)
				printf("%llu\n", (unsigned long long)offset);
		}
		if (ret != MSGPACK_UNPACK_CONTINUE) {
			fprintf(stderr, "format_plain: %s: invalid msgpack after byte %llu\n",
				path, (unsigned long long)offset);
			status = 1;
			goto out;
		}
	}
	if (msgpack_unpacker_message_size(&up) != 0) {
		fprintf(stderr, "format_plain: %s: truncated record at byte %llu\n",
			path, (unsigned long long)offset);
		status = 1;
	}
	if (expect_all)
		for (size_t i = 0; i < NTYPES; i++)
			if (!seen[i]) {
				fprintf(stderr, "format_plain: %s: no %s record\n",
					path, types[i].name);
				status = 1;
			}
	if (records == 0) {
		fprintf(stderr, "format_plain: %s: no records\n", path);
		status = 1;
	}
	if (status == 0)
		fprintf(stderr, "format_plain: %s: %llu records conform to docs/FORMAT.md\n",
			path, (unsigned long long)records);
out:
	msgpack_unpacked_destroy(&result);
	msgpack_unpacker_destroy(&up);
	gzclose(gz);
	free(headers);
	return status;
}
