/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * kbpf_trace.bpf.c's --stacks part, included once by it: the user stack
 * of each call (frame-pointer chains), counted per (aggregation key,
 * stack, frameless caller), and the sample of stack words user space
 * recovers a leaf frame from. Without --stacks user space shrinks these
 * maps to one entry and cfg_stacks keeps the programs off them.
 */
#ifndef KBPF_STACKS_BPF_H
#define KBPF_STACKS_BPF_H

/* --stacks (user space shrinks them to one entry otherwise) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct kbpf_stack_trace);
} stack_traces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kbpf_stack_trace);
} stack_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct kbpf_stack_key);
	__type(value, struct kbpf_stack_value);
} stack_aggs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct kbpf_stack_sample);
} stack_samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kbpf_stack_sample);
} sample_scratch SEC(".maps");

/* pc's file position -> the stack pointer offset of the return address
 * (KBPF_NO_SLOT: none): user space fills it from .eh_frame (bpf/unwind.c) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct kbpf_file_pos);
	__type(value, __s32);
} ret_slots SEC(".maps");

/*
 * The call's user stack (the frame-pointer chain from the task's user
 * registers) in stack_traces under a 64-bit hash of its frames; 0 when
 * there is none or the map is full.
 */
static __always_inline __u64 user_stack_id(void *ctx)
{
	__u32 zero = 0;
	struct kbpf_stack_trace *st = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!st)
		return 0;
	/* the rest of the buffer is zero-filled */
	long len = bpf_get_stack(ctx, st->ips, sizeof(st->ips), BPF_F_USER_STACK);
	if (len <= 0)
		return 0;
	__u64 h = 0xcbf29ce484222325ULL;
	for (int i = 0; i < KBPF_STACK_DEPTH; i++) {
		h ^= st->ips[i];
		h *= 0x9e3779b97f4a7c15ULL;
		h ^= h >> 31;
	}
	if (!h)
		h = 1;
	if (!bpf_map_lookup_elem(&stack_traces, &h) &&
	    bpf_map_update_elem(&stack_traces, &h, st, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&stack_traces, &h))
		return 0;
	return h;
}

struct find_pos {
	__u64 pc;
	struct kbpf_file_pos pos;
	bool found;
};

static long pos_of_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct find_pos *f = data;
	struct file *file = BPF_CORE_READ(vma, vm_file);
	if (!file)
		return 0;
	f->pos.ino = BPF_CORE_READ(file, f_inode, i_ino);
	f->pos.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	f->pos.off = f->pc - BPF_CORE_READ(vma, vm_start) +
		     (BPF_CORE_READ(vma, vm_pgoff) << 12);
	f->found = true;
	return 0;
}

/*
 * The return address of the frameless function the call was made in, at
 * the slot `ret_slots` says for its pc; 0 when none is known. *f gets the
 * pc's file position (f->found) for the stack's sample.
 */
static __always_inline __u64 frameless_caller(struct pt_regs *regs, struct find_pos *f)
{
	if (!cfg_find_vma || !regs)
		return 0;
	f->pc = PT_REGS_IP_CORE(regs);
	if (bpf_find_vma(bpf_get_current_task_btf(), f->pc, pos_of_vma, f, 0) || !f->found)
		return 0;
	__s32 *slot = bpf_map_lookup_elem(&ret_slots, &f->pos);
	__u64 ret = 0;
	if (!slot || *slot < 0 || *slot > 4096)
		return 0;
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)(PT_REGS_SP_CORE(regs) + *slot)))
		return 0;
	return ret;
}

/*
 * The call counted per (key, stack, frameless caller); stacks the maps
 * could not keep go under 0. regs (the user registers, NULL at task exit)
 * give the sample of the stack words for a new stack.
 */
static __always_inline void account_stack(void *ctx, struct pt_regs *regs,
					  const struct kbpf_agg_key *key,
					  __u64 duration_ns)
{
	__u64 id = user_stack_id(ctx);
	struct find_pos f = { 0 };
	struct kbpf_stack_key sk = { .agg = *key, .stack_id = id,
				     .caller = frameless_caller(regs, &f) };
	struct kbpf_stack_value *sv = bpf_map_lookup_elem(&stack_aggs, &sk);
	if (!sv) {
		struct kbpf_stack_value zero = { 0 };
		bpf_map_update_elem(&stack_aggs, &sk, &zero, BPF_NOEXIST);
		sv = bpf_map_lookup_elem(&stack_aggs, &sk);
	}
	if (sv) { /* else: user space counts the call under the unknown stack */
		sv->count++;
		sv->time_ns += duration_ns;
	}
	if (!id || !regs || bpf_map_lookup_elem(&stack_samples, &id))
		return;
	__u32 zero_key = 0;
	struct kbpf_stack_sample *smp = bpf_map_lookup_elem(&sample_scratch, &zero_key);
	if (!smp)
		return;
	smp->sp = PT_REGS_SP_CORE(regs);
	if (bpf_probe_read_user(smp->words, sizeof(smp->words), (void *)smp->sp))
		return;
	smp->pos = f.pos;
	smp->has_pos = f.found;
	bpf_map_update_elem(&stack_samples, &id, smp, BPF_NOEXIST);
}

#endif
