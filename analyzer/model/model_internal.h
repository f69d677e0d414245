/* SPDX-License-Identifier: MIT */
/*
 * Between model.c (streams, their index, how they end, the queries) and
 * model_records.c (each record type into the model): what one needs of
 * the other. Not for the views: they use model.h.
 */
#ifndef KA_MODEL_INTERNAL_H
#define KA_MODEL_INTERNAL_H

#include "model.h"

/* What made a record unusable, for the damage message. */
struct bad {
	const char *key;
	const char *want;
};

/* A getter's error as the record's: a wrong type (or a missing "!type")
 * says which key; absent is 0. */
int ka_want(int err, struct bad *bad, const char *key, const char *type);
/* Optional unsigned field: absent leaves *out; wrong type is an error. */
#define GET_UINT(map, key, out, bad) \
	ka_want(kp_get_uint(map, key, out), bad, key, "unsigned integer")
#define NEED_UINT(map, key, out, bad) \
	ka_want(kp_get_uint(map, key, out), bad, key, "!unsigned integer")
int ka_get_str(const msgpack_object *map, const char *key, char **out, struct bad *bad);
int ka_copy_name(const msgpack_object *map, const char *key, char *buf, size_t size,
		 struct bad *bad);
/* A list of [nr, count] into pairs (a terminating zero pair more). */
int ka_pairs_upto(const msgpack_object *map, const char *key, bool need, uint64_t key_max,
		  struct ka_pair **out, size_t *n_out, struct bad *bad);
/* [[nr, count], ...] of syscall numbers */
int ka_pairs_of(const msgpack_object *map, const char *key, bool need, struct ka_pair **out,
		size_t *n_out, struct bad *bad);

/* ---- model.c ---- */
/* The stream (pid, id), made when new. */
int ka_stream_get(struct ka_model *m, uint64_t pid, uint64_t id, struct ka_stream **out);
void ka_thread_clear_stats(struct ka_thread *t);
void ka_stream_free_header(struct ka_stream *s);

/* ---- model_records.c: one record each ---- */
int ka_on_aggregate(struct ka_model *m, const msgpack_object *map, struct bad *bad);
int ka_on_header(struct ka_model *m, const msgpack_object *map, struct bad *bad);
int ka_on_exit_record(struct ka_model *m, const msgpack_object *map, struct bad *bad);
int ka_on_drop(struct ka_model *m, const msgpack_object *map, struct bad *bad);
int ka_on_events(struct ka_model *m, const msgpack_object *map, struct bad *bad);
int ka_on_maps(struct ka_model *m, const msgpack_object *map, struct bad *bad);

#endif
