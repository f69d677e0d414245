/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Types shared by the kernel side (kbpf_trace.bpf.c) and the user side of
 * kbpf-trace: map keys and values, ring buffer records. Fixed-width
 * integers only, so that both compilers lay them out the same way.
 */
#ifndef KBPF_TRACE_H
#define KBPF_TRACE_H

#define KBPF_HIST_BUCKETS 160	/* KP_HIST_BUCKETS of common/histogram.h */
#define KBPF_SYSCALL_MAX 512	/* KP_SYSCALL_MAX of common/syscalls.h */
#define KBPF_PATH_MAX 256
#define KBPF_ARGS_MAX 1024
/* Descriptor kinds (KP_KIND_*) and their counters: the record schema's. */
#include "record_schema.h"

/* kbpf_proc.flags */
/* The `--` child between its insertion and its execve: not yet CMD. */
#define KBPF_PROC_BEFORE_START 1u

/*
 * Value of the `traced` map, keyed by tgid. `image` numbers the process
 * images of the tgid (incremented at each exec) and is part of every
 * aggregation key, so a new image never mixes with the old one's counts.
 * The lost_* counters only grow; user space reports their increase.
 */
#define KBPF_KEYS_LISTED 63
#define KBPF_KEY(nr, error) ((__u32)(nr) | (__u32)(error) << 16)
/* ... of the shared spill map (aggs_spill, errnos_spill), not the per-CPU one */
#define KBPF_KEY_SPILL (1u << 31)

struct kbpf_proc {
	__u32 image;
	__u32 flags;
	__u64 lost_events;	/* --events: ring buffer full */
	__u64 lost_calls;	/* aggregation maps full, task storage refused
				 * (at a call's start, or at its end: seen at
				 * the thread's next start) */
	__u64 lost_notes;	/* fork/exec/exit notifications not delivered */
	__u64 pending_pipe_readers; /* threads killed inside a pipe read */
	__u64 pending_pipe_writers; /* ... and inside a pipe write */
	/* The aggs and errnos entries the image's calls created, so that
	 * user space reads and deletes them at its end without scanning the
	 * maps: KBPF_KEY(nr, error) each (error 0: the aggs entry), with
	 * KBPF_KEY_SPILL for an entry of the spill maps; n_keys
	 * above KBPF_KEYS_LISTED (more entries, or -t's per-thread keys):
	 * not all listed, user space scans. Reset at exec. */
	__u32 n_keys;
	__u32 keys[KBPF_KEYS_LISTED];
};

/* Per-CPU aggregation map key; tid is 0 unless per-thread (-t). */
struct kbpf_agg_key {
	__u32 tgid;
	__u32 tid;
	__u32 image;
	__u32 nr;
};

struct kbpf_agg_value {
	/* count, time_ns, min_ns, max_ns, retries (-EAGAIN of a would-block
	 * syscall: cfg_would_block), errors (any other -errno, other EAGAINs
	 * included): record_schema.h */
	KP_SC_COUNTERS(KP_SC_BPF_U64)
	__u64 hist[KBPF_HIST_BUCKETS];
	/* calls whose first argument is a descriptor, by its kind - 1:
	 * count, time_ns, retries, errors (the `kinds` of FORMAT.md) */
	__u64 kinds[KP_KINDS][KP_KIND_COUNTERS];
	/* off_cpu_ns: of time_ns, what the threads spent off CPU
	 * (sched_switch: blocked or preempted); tp_btf programs only */
	KP_SC_OPTIONAL(KP_SC_BPF_U64)
};

/* --stacks: user stacks as frame-pointer chains, innermost first. */
#define KBPF_STACK_DEPTH 64
/* Words from the user stack pointer kept per stack (leaf frame recovery). */
#define KBPF_STACK_WORDS 16

/*
 * Per-CPU calls per (image, thread, syscall, stack). stack_id is a 64-bit
 * hash of the frames, the key of stack_traces (0: no stack). Not the
 * bucket index of a BPF_MAP_TYPE_STACK_TRACE map: there, two stacks that
 * share a bucket lose the second one (-EEXIST), a few per cent of runs
 * with a hundred distinct stacks in 16384 buckets.
 */
/*
 * Where a user pc is, as a file and an offset in it: the key of
 * `ret_slots`. dev is the kernel's encoding of the inode's device
 * (major << 20 | minor).
 */
struct kbpf_file_pos {
	__u64 ino;
	__u64 off;
	__u32 dev;
	__u32 pad;
};

struct kbpf_stack_key {
	struct kbpf_agg_key agg;
	__u64 stack_id;
	/*
	 * The return address of a frameless innermost function (a libc
	 * syscall wrapper, which the frame-pointer chain skips), read at the
	 * stack slot `ret_slots` gives for the call's pc; 0: no slot known
	 * for that pc (user space falls back to the stack's first sample).
	 */
	__u64 caller;
};

struct kbpf_stack_trace {
	__u64 ips[KBPF_STACK_DEPTH];	/* innermost first, 0-filled */
};

struct kbpf_stack_value {
	__u64 count;
	__u64 time_ns;
};

/*
 * The user stack words at the stack pointer of the first call seen with
 * a stack id: a libc syscall wrapper sets up no frame pointer, so the
 * chain skips the function that called it; its return address is among
 * these words, where the wrapper's .eh_frame rule says (bpf/unwind.c).
 */
struct kbpf_stack_sample {
	__u64 sp;
	__u64 words[KBPF_STACK_WORDS];
	/* the pc's file and offset (has_pos), for user space to fill
	 * `ret_slots` for every syscall of that file */
	struct kbpf_file_pos pos;
	__u32 has_pos;
	__u32 pad;
};

/* A `ret_slots` value: no return address to read (the function has a
 * frame, or .eh_frame says nothing usable). */
#define KBPF_NO_SLOT (-1)

/* --comm: at most this many names, each as the kernel keeps comm. */
#define KBPF_COMMS_MAX 8
#define KBPF_COMM_LEN 16

/* Per-CPU errno breakdown: failed calls by errno (EAGAIN included). */
struct kbpf_errno_key {
	struct kbpf_agg_key agg;
	__u32 error;	/* positive errno */
	__u32 pad;
};

enum kbpf_note_kind {
	KBPF_NOTE_FORK = 1,
	KBPF_NOTE_EXEC = 2,
	KBPF_NOTE_EXIT = 3,	  /* the last thread of a tgid exited */
	KBPF_NOTE_THREAD_EXIT = 4, /* another thread exited (-t only) */
};

/* Lifecycle notifications, ring buffer `notes`. */
struct kbpf_note {
	__u32 kind;
	__u32 tgid;
	__u32 tid;
	__u32 image;	/* the tgid's image the note is about (exec: the old one) */
	__u64 time_ns;
	__u32 child;	/* fork: child tgid */
	__u32 how_nr;	/* fork: syscall that created the child, or -1 */
	__u32 ppid;	/* exec: parent tgid */
	__u32 origin_start; /* exec: first image of the `--` command */
	__s32 exit_code; /* exit: wait status (status << 8 | signal) */
	__u32 fds_known; /* exit: the fds counts were taken */
	__u32 fds[4];	/* exit: file, pipe, socket, other */
	__u64 pending_pipe_readers;
	__u64 pending_pipe_writers;
	char comm[16];	/* thread exit, exec: the thread's name (comm) */
	__u64 lost_events;	/* exit: the tgid's kbpf_proc counters, */
	__u64 lost_calls;	/* which go with its traced entry */
	__u64 lost_notes;
	__u32 n_keys;	/* exit, exec: the old image's, as in kbpf_proc */
	__u32 keys[KBPF_KEYS_LISTED];
};

/* KBPF_NOTE_EXEC carries the new image's name and arguments. */
struct kbpf_note_exec {
	struct kbpf_note note;
	__u32 args_len;	/* bytes of args used: NUL-separated argv */
	__u32 pad;
	char filename[KBPF_PATH_MAX];
	char args[KBPF_ARGS_MAX];
};

/* Events go to the ring buffer `events` in batches of up to this many. */
#define KBPF_EVENT_BATCH 64

/* One completed call, ring buffer `events` (--events). */
struct kbpf_event {
	__u32 tgid;
	__u32 tid;
	__u32 image;
	__u32 nr;
	__u64 start_ns;
	__u64 duration_ns;
	__s64 ret;
	__s32 fd;	/* first argument when it is a descriptor, else -1 */
	__u32 kind;	/* its KP_KIND_*, 0 for other calls */
};

/*
 * The record of the `events` ring buffer: n events (of any threads that
 * ran on one CPU, each thread's in order). Also the per-CPU staging area
 * they are gathered in; a record is n events long.
 */
struct kbpf_event_batch {
	__u32 n;
	__u32 busy;	/* staging: a program on this CPU is filling it */
	struct kbpf_event ev[KBPF_EVENT_BATCH];
};

#endif
