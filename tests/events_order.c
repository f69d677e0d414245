/* SPDX-License-Identifier: MIT */
/*
 * Checks the events of a plain (not gzip) trace file with plain
 * msgpack-c: within each stream, every thread's events come in the order
 * they started, across records too (no event starts before its thread's
 * previous one ended). Prints "PID TID EVENTS" per thread, sorted.
 * Usage: events_order TRACE.msgpack   Exit: 0 in order, 1 not, 99 usage/IO.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

struct thread {
	uint64_t pid, stream, tid, count, last_end;
};

static struct thread *threads;
static size_t n_threads;

static const msgpack_object *get(const msgpack_object *map, const char *key)
{
	size_t len = strlen(key);
	for (uint32_t i = 0; i < map->via.map.size; i++) {
		const msgpack_object_kv *kv = &map->via.map.ptr[i];
		if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == len &&
		    !memcmp(kv->key.via.str.ptr, key, len))
			return &kv->val;
	}
	return NULL;
}

static struct thread *thread_of(uint64_t pid, uint64_t stream, uint64_t tid)
{
	for (size_t i = 0; i < n_threads; i++)
		if (threads[i].pid == pid && threads[i].stream == stream && threads[i].tid == tid)
			return &threads[i];
	threads = realloc(threads, (n_threads + 1) * sizeof(*threads));
	if (!threads)
		exit(99);
	threads[n_threads] = (struct thread){ pid, stream, tid, 0, 0 };
	return &threads[n_threads++];
}

static int by_key(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: events_order TRACE.msgpack\n");
		return 99;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 99;
	}
	msgpack_unpacker u;
	msgpack_unpacked r;
	msgpack_unpacker_init(&u, 1 << 20);
	msgpack_unpacked_init(&r);
	int bad = 0;
	for (;;) {
		msgpack_unpacker_reserve_buffer(&u, 65536);
		size_t n = fread(msgpack_unpacker_buffer(&u), 1, 65536, f);
		msgpack_unpacker_buffer_consumed(&u, n);
		while (msgpack_unpacker_next(&u, &r) == MSGPACK_UNPACK_SUCCESS) {
			const msgpack_object *rec = &r.data, *type, *ev;
			if (rec->type != MSGPACK_OBJECT_MAP || !(type = get(rec, "type")) ||
			    type->via.str.size != 6 || memcmp(type->via.str.ptr, "events", 6) ||
			    !(ev = get(rec, "events")))
				continue;
			struct thread *t = thread_of(get(rec, "pid")->via.u64,
						     get(rec, "stream")->via.u64,
						     get(rec, "tid")->via.u64);
			for (uint32_t i = 0; i < ev->via.array.size; i++) {
				const msgpack_object *e = ev->via.array.ptr[i].via.array.ptr;
				uint64_t start = e[0].via.u64, end = start + e[1].via.u64;
				if (start < t->last_end && !bad++)
					fprintf(stderr, "events_order: pid %llu tid %llu: an event "
						"starts at %llu before the previous one ended (%llu)\n",
						(unsigned long long)t->pid, (unsigned long long)t->tid,
						(unsigned long long)start,
						(unsigned long long)t->last_end);
				t->last_end = end;
				t->count++;
			}
		}
		if (n == 0)
			break;
	}
	fclose(f);
	qsort(threads, n_threads, sizeof(*threads), by_key);
	for (size_t i = 0; i < n_threads; i++)
		printf("%llu %llu %llu\n", (unsigned long long)threads[i].pid,
		       (unsigned long long)threads[i].tid, (unsigned long long)threads[i].count);
	return bad ? 1 : 0;
}
