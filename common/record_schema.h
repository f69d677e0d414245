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

#ifndef __bpf__
/* "file", "pipe", "socket", "other", by row (record_writer.c). */
extern const char *const kp_kind_names[KP_KINDS];
#endif

#endif
