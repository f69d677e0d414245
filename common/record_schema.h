/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The record stream's schema (docs/FORMAT.md) in one place: its version,
 * the record types, and the descriptor kinds with their counters. Used by
 * the writer (record_writer.c, for both producers), the readers
 * (record_reader.c, kanalyze's model.c) and the kernel side of kbpf-trace,
 * whose maps are laid out by the same kinds. Plain constants only: the BPF
 * program includes this file too.
 */
#ifndef KPROF_RECORD_SCHEMA_H
#define KPROF_RECORD_SCHEMA_H

#define KP_FORMAT_VERSION 1

/* The `type` of each record. */
#define KP_REC_HEADER "header"
#define KP_REC_AGGREGATE "aggregate"
#define KP_REC_EVENTS "events"
#define KP_REC_MAPS "maps"
#define KP_REC_OWN "own"
#define KP_REC_FORK "fork"
#define KP_REC_EXEC "exec"
#define KP_REC_EXIT "exit"
#define KP_REC_DROP "drop"

/*
 * Descriptor kinds: the `kind` element of an event (KP_KIND_NONE: the call
 * has no descriptor argument) and, through KP_KIND_ROW, the row of a
 * syscall entry's `kinds` counters and of every per-kind array.
 */
enum kp_kind { KP_KIND_NONE, KP_KIND_FILE, KP_KIND_PIPE, KP_KIND_SOCKET, KP_KIND_OTHER };
#define KP_KINDS 4
#define KP_KIND_ROW(kind) ((kind) - 1)
/* A `kinds` row: [count, time_ns, retries, errors]. */
enum { KP_KIND_COUNT, KP_KIND_TIME_NS, KP_KIND_RETRIES, KP_KIND_ERRORS,
       KP_KIND_COUNTERS };

/*
 * The counters of a `syscalls` entry (FORMAT.md), one line each, in the
 * record's key order: X(NAME, MERGE). NAME is the record's key and the
 * field's name in every struct that holds the counters: the shim's
 * kp_slot (preload/core/account.h), the writer's kp_rec_syscall, the map
 * value of kbpf-trace (bpf/kbpf_trace.h), kanalyze's ka_sc_stats and
 * ka_row; the writer, the readers and every merge walk this list. MERGE
 * says how two entries of one syscall combine: SUM, MIN (over entries
 * that counted calls) or MAX (KP_SC_MERGE).
 *
 * KP_SC_OPTIONAL are counters not every producer has (kbpf-trace's
 * off_cpu_ns: time off CPU, of time_ns): written after the others when
 * the producer has them; each struct says so in a bool has_NAME beside
 * the field, and a reader sets it when the key is there.
 *
 * A new counter is one line here plus its producer's code and its
 * columns (analyzer/output/columns.c).
 */
#define KP_SC_COUNTERS(X)                                                      \
	X(count, SUM)                                                          \
	X(time_ns, SUM)                                                        \
	X(min_ns, MIN)                                                         \
	X(max_ns, MAX)                                                         \
	X(retries, SUM)                                                        \
	X(errors, SUM)
#define KP_SC_OPTIONAL(X) X(off_cpu_ns, SUM)

/* Fields of a struct, as KP_SC_COUNTERS(KP_SC_U64): one uint64_t per
 * counter (KP_SC_BPF_U64: __u64, for the BPF map value); the optional
 * ones with their has_NAME (KP_SC_OPTIONAL(KP_SC_U64_HAS)). */
#define KP_SC_U64(name, merge) uint64_t name;
#define KP_SC_BPF_U64(name, merge) __u64 name;
#define KP_SC_U64_HAS(name, merge) uint64_t name; bool has_##name;

/* KP_SC_MERGE(dst, src): the counters of entry src added into dst by
 * their MERGE; an entry that counted no call adds nothing.
 * KP_SC_MERGE_HAS(dst, src): the optional ones that src has (has_NAME). */
#define KP_SC_MERGE_SUM(d, s, had) ((d) + (s))
#define KP_SC_MERGE_MIN(d, s, had) (!(had) || (s) < (d) ? (s) : (d))
#define KP_SC_MERGE_MAX(d, s, had) ((s) > (d) ? (s) : (d))
#define KP_SC_MERGE_ONE_(name, merge)                                          \
	kp_sc_dst_->name = KP_SC_MERGE_##merge(kp_sc_dst_->name, kp_sc_src_->name, \
					       kp_sc_had_);
#define KP_SC_MERGE(dst, src)                                                  \
	do {                                                                   \
		__typeof__(dst) kp_sc_dst_ = (dst);                            \
		__typeof__(src) kp_sc_src_ = (src);                            \
		if (kp_sc_src_->count) {                                       \
			int kp_sc_had_ = kp_sc_dst_->count != 0;               \
			KP_SC_COUNTERS(KP_SC_MERGE_ONE_)                       \
		}                                                              \
	} while (0)
#define KP_SC_MERGE_HAS_ONE_(name, merge)                                      \
	if (kp_sc_src_->has_##name) {                                          \
		kp_sc_dst_->name = KP_SC_MERGE_##merge(                        \
			kp_sc_dst_->name, kp_sc_src_->name, kp_sc_dst_->has_##name); \
		kp_sc_dst_->has_##name = true;                                 \
	}
#define KP_SC_MERGE_HAS(dst, src)                                              \
	do {                                                                   \
		__typeof__(dst) kp_sc_dst_ = (dst);                            \
		__typeof__(src) kp_sc_src_ = (src);                            \
		KP_SC_OPTIONAL(KP_SC_MERGE_HAS_ONE_)                           \
	} while (0)

#ifndef __bpf__
/* "file", "pipe", "socket", "other", by row (record_writer.c). */
extern const char *const kp_kind_names[KP_KINDS];
#endif

#endif
