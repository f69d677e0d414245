/* SPDX-License-Identifier: MIT */
/*
 * The BPF object's life: open, configure (rodata, map sizes, which program
 * set), load, attach, and the one clear error line when any of it fails.
 * tp_btf programs are preferred; where the kernel cannot load or attach
 * them, the whole object is opened again with the raw_tp set.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kbpf_trace.h"
#include "kbpf_trace.skel.h"
#include "syscalls.h"
#include "tracer.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	if (verbose < 1 || (level == LIBBPF_DEBUG && verbose < 3))
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* Does this kernel's BTF know the typed syscall tracepoints? */
static bool have_tp_btf(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	if (!btf)
		return false;
	bool ok = btf__find_by_name_kind(btf, "btf_trace_sys_enter",
					 BTF_KIND_TYPEDEF) > 0 &&
		  btf__find_by_name_kind(btf, "btf_trace_sys_exit",
					 BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return ok;
}

static void choose_programs(struct kbpf_trace_bpf *skel, bool tp_btf)
{
	struct bpf_program *btf_progs[] = {
		skel->progs.sys_enter_btf, skel->progs.sys_exit_btf,
		skel->progs.fork_btf, skel->progs.exec_btf, skel->progs.exit_btf,
	};
	struct bpf_program *raw_progs[] = {
		skel->progs.sys_enter_raw, skel->progs.sys_exit_raw,
		skel->progs.fork_raw, skel->progs.exec_raw, skel->progs.exit_raw,
	};
	for (unsigned i = 0; i < sizeof(btf_progs) / sizeof(btf_progs[0]); i++) {
		bpf_program__set_autoload(btf_progs[i], tp_btf);
		bpf_program__set_autoload(raw_progs[i], !tp_btf);
	}
	/* time off CPU: tp_btf only (task storage of the switched tasks) */
	bpf_program__set_autoload(skel->progs.switch_btf, tp_btf);
}

static bool no_privileges(int err)
{
	/* -EACCES is the verifier's refusal, not a lack of privileges. */
	return err == -EPERM;
}

static void say_no_privileges(void)
{
	fprintf(stderr, TOOL ": loading BPF programs needs root or "
		"CAP_BPF+CAP_PERFMON: run as root (sudo " TOOL " ...)\n");
}

/* One attempt with one program set. Returns 0 or -errno; *stage says where. */
static int try_start(struct tracer *t, const struct options *o, bool tp_btf,
		     const char **stage)
{
	int err;

	*stage = "open";
	t->skel = kbpf_trace_bpf__open();
	if (!t->skel)
		return errno ? -errno : -ENOMEM;

	t->skel->rodata->cfg_follow = o->follow;
	t->skel->rodata->cfg_per_thread = o->per_thread;
	t->skel->rodata->cfg_events = o->events;
	t->skel->rodata->cfg_stacks = o->stacks;
	t->skel->rodata->cfg_n_comms = o->n_comms;
	memcpy((void *)t->skel->rodata->cfg_comms, o->comms, sizeof(o->comms));
	uint32_t spill = o->map_entries / 64 > 4 ? o->map_entries / 64 : 4;
	bpf_map__set_max_entries(t->skel->maps.aggs, o->map_entries);
	bpf_map__set_max_entries(t->skel->maps.errnos,
				 o->map_entries / 16 > 1 ? o->map_entries / 16 : 1);
	bpf_map__set_max_entries(t->skel->maps.aggs_spill, spill);
	bpf_map__set_max_entries(t->skel->maps.errnos_spill, spill);
	if (!o->stacks) {
		bpf_map__set_max_entries(t->skel->maps.stack_traces, 1);
		bpf_map__set_max_entries(t->skel->maps.stack_aggs, 1);
		bpf_map__set_max_entries(t->skel->maps.stack_samples, 1);
		bpf_map__set_max_entries(t->skel->maps.ret_slots, 1);
	}
	/* each call's frameless caller read in BPF (bpf_find_vma: 5.17);
	 * tracing programs share raw_tp's helpers, and libbpf probes only
	 * the latter */
	t->skel->rodata->cfg_find_vma =
		o->stacks && libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
						     BPF_FUNC_find_vma, NULL) > 0;
	kp_syscall_fd_arg_bits(NULL, (uint64_t *)t->skel->rodata->cfg_fd_arg,
			       KBPF_SYSCALL_MAX);
	kp_syscall_would_block_bits(NULL, (uint64_t *)t->skel->rodata->cfg_would_block,
				    KBPF_SYSCALL_MAX);
	choose_programs(t->skel, tp_btf);
	/* run on demand, never attached; loaded only for --events */
	bpf_program__set_autoattach(t->skel->progs.flush_events, false);
	bpf_program__set_autoload(t->skel->progs.flush_events, o->events);
	if (!o->events)
		bpf_map__set_max_entries(t->skel->maps.staging, 1);
	if (o->events) {
		/* A power of two pages, as BPF_MAP_TYPE_RINGBUF demands. */
		uint32_t size = 4096;
		while (size < o->events_buffer_kb * 1024u && size < (1u << 30))
			size <<= 1;
		bpf_map__set_max_entries(t->skel->maps.events, size);
		t->skel->rodata->cfg_events_wakeup_bytes = size / 8;
	} else {
		bpf_map__set_max_entries(t->skel->maps.events, 4096);
	}

	*stage = "load";
	err = kbpf_trace_bpf__load(t->skel);
	if (err)
		return err;
	*stage = "attach";
	err = kbpf_trace_bpf__attach(t->skel);
	if (err)
		return err;
	t->tp_btf = tp_btf;
	return 0;
}

int tracer_start(struct tracer *t, const struct options *o)
{
	const char *stage = "open";
	int err;

	memset(t, 0, sizeof(*t));
	t->traced_fd = t->aggs_fd = t->errnos_fd = t->aggs_spill_fd = t->errnos_spill_fd = -1;
	t->stack_traces_fd = t->stack_aggs_fd = t->stack_samples_fd = t->ret_slots_fd = -1;
	t->flush_fd = -1;
	libbpf_set_print(libbpf_print);

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		err = -ENOENT;
		fprintf(stderr, TOOL ": the kernel has no BTF (/sys/kernel/btf/vmlinux "
			"is missing): use a kernel built with CONFIG_DEBUG_INFO_BTF=y\n");
		return err;
	}

	bool tp_btf = !o->raw_tp && have_tp_btf();
	err = try_start(t, o, tp_btf, &stage);
	if (err && tp_btf && !no_privileges(err)) {
		info(1, "tp_btf programs failed at %s (%s); trying raw_tp\n",
		     stage, strerror(-err));
		kbpf_trace_bpf__destroy(t->skel);
		t->skel = NULL;
		err = try_start(t, o, false, &stage);
	}
	if (err) {
		if (no_privileges(err))
			say_no_privileges();
		else if (strcmp(stage, "attach") == 0 && err == -ENOENT)
			fprintf(stderr, TOOL ": the kernel has no raw syscall "
				"tracepoints (sys_enter/sys_exit): use a kernel built "
				"with CONFIG_FTRACE_SYSCALLS=y\n");
		else
			fprintf(stderr, TOOL ": cannot %s the BPF programs: %s%s\n",
				stage, strerror(-err),
				verbose ? "" : " (run with -v for libbpf's messages)");
		kbpf_trace_bpf__destroy(t->skel);
		t->skel = NULL;
		return err;
	}
	info(1, "attached %s programs\n", t->tp_btf ? "tp_btf" : "raw_tp");

	t->traced_fd = bpf_map__fd(t->skel->maps.traced);
	t->aggs_fd = bpf_map__fd(t->skel->maps.aggs);
	t->errnos_fd = bpf_map__fd(t->skel->maps.errnos);
	t->aggs_spill_fd = bpf_map__fd(t->skel->maps.aggs_spill);
	t->errnos_spill_fd = bpf_map__fd(t->skel->maps.errnos_spill);
	t->stack_traces_fd = bpf_map__fd(t->skel->maps.stack_traces);
	t->stack_aggs_fd = bpf_map__fd(t->skel->maps.stack_aggs);
	t->stack_samples_fd = bpf_map__fd(t->skel->maps.stack_samples);
	if (t->skel->rodata->cfg_find_vma)
		t->ret_slots_fd = bpf_map__fd(t->skel->maps.ret_slots);
	info(1, "frameless callers read %s\n",
	     t->ret_slots_fd >= 0 ? "per call (bpf_find_vma)" : "from each stack's first call");

	t->rings = ring_buffer__new(bpf_map__fd(t->skel->maps.notes),
				    collect_note, NULL, NULL);
	if (!t->rings) {
		err = errno ? -errno : -ENOMEM;
		fprintf(stderr, TOOL ": cannot open the notification ring buffer: %s\n",
			strerror(-err));
		tracer_stop(t);
		return err;
	}
	if (o->events) {
		/* apart from the notes: collect.c drains it alone while notes wait */
		t->event_ring = ring_buffer__new(bpf_map__fd(t->skel->maps.events),
						 collect_event, NULL, NULL);
		if (!t->event_ring) {
			err = errno ? -errno : -ENOMEM;
			fprintf(stderr, TOOL ": cannot open the event ring buffer: %s\n",
				strerror(-err));
			tracer_stop(t);
			return err;
		}
		t->flush_fd = bpf_program__fd(t->skel->progs.flush_events);
	}
	return 0;
}

/*
 * Every CPU hands over its partial batch of events (flush_events run on
 * it); a CPU where a program is filling the batch at that moment is asked
 * again. The program runs with preemption off, so it is done within
 * microseconds of CPU time, but in a guest the host may stop the vCPU in
 * the middle for milliseconds: a burst of quick retries alone once gave
 * up while it was stopped, and the staged events of a process that had
 * just exited were then reported as dropped (t_coverage_identity on a
 * loaded machine: 23 events). So after the burst the CPU is asked every
 * 50 us for up to a second. Returns 0 or -errno (-EBUSY: that CPU never
 * finished; its events stay staged until a later flush).
 */
#define FLUSH_QUICK_TRIES 100
#define FLUSH_PATIENCE_NS 1000000000LL

static int flush_cpu(int fd, int cpu)
{
	uint64_t args[1] = { 0 };
	long long waited = 0;
	for (int attempt = 0;; attempt++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args),
			    .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = (uint32_t)cpu);
		int err = bpf_prog_test_run_opts(fd, &opts);
		if (err == -ENXIO)
			return 0; /* a possible CPU that is offline: nothing staged */
		if (err)
			return err;
		if (opts.retval == 0)
			return 0;
		if (attempt < FLUSH_QUICK_TRIES)
			continue;
		if (waited >= FLUSH_PATIENCE_NS)
			return -EBUSY;
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
		waited += ts.tv_nsec;
	}
}

int tracer_flush_events(struct tracer *t)
{
	static int n_cpus;
	int first_err = 0;

	if (t->flush_fd < 0)
		return 0;
	if (!n_cpus)
		n_cpus = libbpf_num_possible_cpus();
	for (int cpu = 0; cpu < n_cpus; cpu++) {
		int err = flush_cpu(t->flush_fd, cpu);
		if (err && !first_err)
			first_err = err;
	}
	return first_err;
}

void tracer_stop(struct tracer *t)
{
	ring_buffer__free(t->rings);
	t->rings = NULL;
	ring_buffer__free(t->event_ring);
	t->event_ring = NULL;
	/* Destroying the skeleton detaches every program: nothing stays. */
	kbpf_trace_bpf__destroy(t->skel);
	t->skel = NULL;
}

int tracer_add_pid(struct tracer *t, pid_t pid, uint32_t image, uint32_t flags)
{
	struct kbpf_proc p = { .image = image, .flags = flags };
	uint32_t key = (uint32_t)pid;

	/* BPF_NOEXIST: a --comm process exec'd since the program was loaded
	 * is the exec hook's already, from its exec (-EEXIST) */
	if (bpf_map_update_elem(t->traced_fd, &key, &p, BPF_NOEXIST))
		return -errno;
	return 0;
}

uint64_t tracer_switches_unseen(const struct tracer *t)
{
	return t->skel && t->skel->bss ? t->skel->bss->switches_unseen : 0;
}

void tracer_remove_pid(struct tracer *t, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	bpf_map_delete_elem(t->traced_fd, &key);
}
