/* SPDX-License-Identifier: MIT */
/*
 * Filters applied to the model before any view: syscall names and classes
 * (-e), processes (--pid), and the filters that need individual calls
 * (--min-duration, --failed, --succeeded), for which every thread's
 * counters are rebuilt from the event records, so that every view shows
 * exactly the calls that passed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls.h"
#include "filter.h"

/* Classes in the spirit of strace's %file, %net, ...: by what a call works on. */
static const char *const class_file[] = {
	"open", "openat", "openat2", "creat", "close", "close_range", "read",
	"write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
	"preadv2", "pwritev2", "lseek", "stat", "lstat", "fstat", "newfstatat",
	"statx", "access", "faccessat", "faccessat2", "readlink", "readlinkat",
	"unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir",
	"mkdirat", "rmdir", "chmod", "fchmod", "fchmodat", "chown", "fchown",
	"fchownat", "lchown", "truncate", "ftruncate", "fsync", "fdatasync",
	"getdents64", "getcwd", "chdir", "fchdir", "symlink", "symlinkat", "link",
	"linkat", "utimensat", "flock", "fcntl", "ioctl", "dup", "dup2", "dup3",
	"sendfile", "copy_file_range", "splice", "statfs", "fstatfs",
	"inotify_add_watch", "fallocate", "fadvise64", NULL };
static const char *const class_desc[] = {
	"read", "write", "pread64", "pwrite64", "readv", "writev", "close",
	"close_range", "dup", "dup2", "dup3", "fcntl", "ioctl", "lseek", "fstat",
	"poll", "ppoll", "select", "pselect6", "epoll_wait", "epoll_pwait",
	"epoll_ctl", "epoll_create1", "eventfd2", "timerfd_create",
	"timerfd_settime", "signalfd4", "pipe", "pipe2", NULL };
static const char *const class_net[] = {
	"socket", "socketpair", "bind", "listen", "accept", "accept4", "connect",
	"getsockname", "getpeername", "sendto", "recvfrom", "sendmsg", "recvmsg",
	"sendmmsg", "recvmmsg", "shutdown", "setsockopt", "getsockopt", NULL };
static const char *const class_process[] = {
	"fork", "vfork", "clone", "clone3", "execve", "execveat", "exit",
	"exit_group", "wait4", "waitid", "kill", "tkill", "tgkill", "getpid",
	"getppid", "gettid", "prctl", "setsid", "setpgid", "getpgid", "unshare",
	"pidfd_open", "pidfd_send_signal", "pidfd_getfd", NULL };
static const char *const class_memory[] = {
	"mmap", "munmap", "mprotect", "mremap", "madvise", "brk", "msync",
	"mlock", "munlock", "mincore", "membarrier", "memfd_create", NULL };
static const char *const class_ipc[] = {
	"pipe", "pipe2", "socketpair", "eventfd2", "shmget", "shmat", "shmdt",
	"shmctl", "semget", "semop", "semctl", "msgget", "msgsnd", "msgrcv",
	"msgctl", "mq_open", "mq_timedsend", "mq_timedreceive", "splice", "tee",
	"vmsplice", NULL };
static const char *const class_sync[] = {
	"futex", "futex_waitv", "flock", "fcntl", "sched_yield", "poll", "ppoll",
	"select", "pselect6", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	"set_robust_list", NULL };
static const char *const class_time[] = {
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep",
	"gettimeofday", "time", "timerfd_create", "timerfd_settime",
	"timerfd_gettime", "setitimer", "getitimer", "alarm", "timer_create",
	"timer_settime", "timer_delete", NULL };
/* Calls that wait by nature: the thread waits for another thread, a
 * process, a descriptor or the clock; their time is idle time, not work
 * (--exclude-waits). */
static const char *const class_wait[] = {
	"futex", "futex_waitv", "poll", "ppoll", "select", "pselect6", "epoll_wait",
	"epoll_pwait", "epoll_pwait2", "nanosleep", "clock_nanosleep", "wait4",
	"waitid", "pause", "rt_sigsuspend", "rt_sigtimedwait", "sched_yield",
	"io_getevents", "io_pgetevents", NULL };
static const char *const class_signal[] = {
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend",
	"rt_sigtimedwait", "rt_sigqueueinfo", "sigaltstack", "kill", "tgkill",
	"tkill", "signalfd4", "pause", NULL };

const char *const ka_class_names[] = { "file", "desc", "net", "process",
				       "memory", "ipc", "sync", "time", "signal",
				       "wait", NULL };
static const char *const *const class_lists[] = {
	class_file, class_desc, class_net, class_process, class_memory,
	class_ipc, class_sync, class_time, class_signal, class_wait };

bool ka_class_has(const char *class, const char *syscall)
{
	for (int c = 0; ka_class_names[c]; c++) {
		if (strcmp(class, ka_class_names[c]) != 0)
			continue;
		for (const char *const *n = class_lists[c]; *n; n++)
			if (strcmp(*n, syscall) == 0)
				return true;
	}
	return false;
}

static int set_name(struct ka_filter *f, const char *name, bool on)
{
	if (name[0] == '%') {
		for (int c = 0; ka_class_names[c]; c++) {
			if (strcmp(name + 1, ka_class_names[c]) != 0)
				continue;
			for (const char *const *n = class_lists[c]; *n; n++) {
				int nr = kp_syscall_nr(NULL, *n);
				if (nr >= 0 && nr < 1024)
					f->nr[nr] = on;
			}
			return 0;
		}
		fprintf(stderr, "kanalyze: -e: unknown class '%s' (%%file, %%desc, %%net, "
			"%%process, %%memory, %%ipc, %%sync, %%time, %%signal, %%wait)\n", name);
		return -EINVAL;
	}
	int nr = kp_syscall_nr(NULL, name);
	if (nr < 0 || nr >= 1024) {
		char *end;
		unsigned long v = strtoul(name, &end, 10);
		if (*name && !*end && v < 1024) {
			nr = (int)v;
		} else {
			fprintf(stderr, "kanalyze: -e: unknown syscall '%s'\n", name);
			return -EINVAL;
		}
	}
	f->nr[nr] = on;
	return 0;
}

int ka_filter_parse_names(struct ka_filter *f, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return -ENOMEM;
	int err = 0;
	bool first = !f->nr_set;
	for (char *tok = strtok_r(copy, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		bool negate = tok[0] == '!';
		/* "!x" first: everything but x */
		if (first && negate)
			memset(f->nr, 1, sizeof(f->nr));
		first = false;
		err = set_name(f, tok + negate, !negate);
	}
	f->nr_set = true;
	free(copy);
	return err;
}

int ka_filter_set_aside_waits(struct ka_filter *f)
{
	struct ka_filter waits = { 0 };
	int err = set_name(&waits, "%wait", true);
	if (err)
		return err;
	memcpy(f->aside, waits.nr, sizeof(f->aside));
	f->aside_set = true;
	if (!f->nr_set) /* everything but the waits */
		memset(f->nr, 1, sizeof(f->nr));
	f->nr_set = true;
	for (size_t nr = 0; nr < 1024; nr++)
		if (f->aside[nr])
			f->nr[nr] = false;
	return 0;
}

void ka_model_count_aside(struct ka_model *m)
{
	m->aside_calls = m->aside_ns = 0;
	for (size_t i = 0; m->set_aside && i < m->n_streams; i++)
		for (size_t t = 0; t < m->streams[i].n_threads; t++)
			for (size_t k = 0; k < m->streams[i].threads[t].n_sc; k++) {
				const struct ka_sc_stats *sc = &m->streams[i].threads[t].sc[k];
				if (sc->nr < 1024 && m->set_aside[sc->nr]) {
					m->aside_calls += sc->count;
					m->aside_ns += sc->time_ns;
				}
			}
}

int ka_filter_parse_pids(struct ka_filter *f, const char *list)
{
	const char *p = list;
	while (*p) {
		char *end;
		unsigned long long v = strtoull(p, &end, 10);
		if (end == p || (*end && *end != ',')) {
			fprintf(stderr, "kanalyze: --pid needs pids separated by commas, not '%s'\n",
				list);
			return -EINVAL;
		}
		void *q = reallocarray(f->pids, f->n_pids + 1, sizeof(*f->pids));
		if (!q)
			return -ENOMEM;
		f->pids = q;
		f->pids[f->n_pids++] = v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

void ka_filter_free(struct ka_filter *f)
{
	free(f->pids);
	f->pids = NULL;
	f->n_pids = 0;
}

bool ka_filter_needs_events(const struct ka_filter *f)
{
	return f->min_duration_ns || f->failed || f->succeeded;
}

static bool nr_passes(const struct ka_filter *f, uint64_t nr)
{
	return !f->nr_set || (nr < 1024 && f->nr[nr]);
}

static bool event_passes(const struct ka_filter *f, const struct ka_event *e)
{
	bool failed = e->ret < 0 && e->ret > -4096;
	return nr_passes(f, e->nr) && e->duration_ns >= f->min_duration_ns &&
	       !(f->failed && !failed) && !(f->succeeded && failed);
}

static int pair_inc(struct ka_pair **pairs, size_t *n, uint64_t key)
{
	for (size_t k = 0; k < *n; k++)
		if ((*pairs)[k].key == key) {
			(*pairs)[k].value++;
			return 0;
		}
	void *p = reallocarray(*pairs, *n + 1, sizeof(**pairs));
	if (!p)
		return -ENOMEM;
	*pairs = p;
	(*pairs)[(*n)++] = (struct ka_pair){ key, 1 };
	return 0;
}

/* Rebuilds a stream's threads (one per tid) from its filtered events. */
static int threads_from_events(struct ka_stream *s, const struct ka_filter *f)
{
	for (size_t t = 0; t < s->n_threads; t++)
		ka_thread_free_stats(&s->threads[t]);
	s->n_threads = 0;
	for (size_t i = 0; i < s->n_event_list; i++) {
		const struct ka_event *e = &s->event_list[i];
		if (!event_passes(f, e))
			continue;
		struct ka_thread *th = NULL;
		for (size_t t = 0; t < s->n_threads && !th; t++)
			if (s->threads[t].tid == e->tid)
				th = &s->threads[t];
		if (!th) {
			if (s->n_threads == s->cap_threads) {
				size_t cap = s->cap_threads ? s->cap_threads * 2 : 8;
				void *p = reallocarray(s->threads, cap, sizeof(*s->threads));
				if (!p)
					return -ENOMEM;
				s->threads = p;
				s->cap_threads = cap;
			}
			th = &s->threads[s->n_threads++];
			memset(th, 0, sizeof(*th));
			th->tid = e->tid;
			th->thread = e->tid;
		}
		struct ka_sc_stats *sc = NULL;
		for (size_t k = 0; k < th->n_sc && !sc; k++)
			if (th->sc[k].nr == e->nr)
				sc = &th->sc[k];
		if (!sc) {
			void *p = reallocarray(th->sc, th->n_sc + 1, sizeof(*th->sc));
			if (!p)
				return -ENOMEM;
			th->sc = p;
			sc = &th->sc[th->n_sc++];
			memset(sc, 0, sizeof(*sc));
			sc->nr = e->nr;
			sc->min_ns = UINT64_MAX;
		}
		sc->count++;
		sc->time_ns += e->duration_ns;
		if (e->duration_ns < sc->min_ns)
			sc->min_ns = e->duration_ns;
		if (e->duration_ns > sc->max_ns)
			sc->max_ns = e->duration_ns;
		bool failed = e->ret < 0 && e->ret > -4096;
		uint64_t err = failed ? (uint64_t)-e->ret : 0;
		if (failed && err == EAGAIN)
			sc->retries++;
		else if (failed)
			sc->errors++;
		if (e->kind) {
			uint64_t *k = sc->kinds[KP_KIND_ROW(e->kind)];
			sc->have_kinds = true;
			k[0]++;
			k[1] += e->duration_ns;
			k[2] += failed && err == EAGAIN;
			k[3] += failed && err != EAGAIN;
		}
		if ((failed && pair_inc(&sc->errnos, &sc->n_errnos, err)) ||
		    pair_inc(&sc->hist, &sc->n_hist, kp_hist_bucket(e->duration_ns)))
			return -ENOMEM;
	}
	return 0;
}

int ka_filter_apply(struct ka_model *m, const struct ka_filter *f)
{
	if (f->aside_set) { /* what the filter sets aside, said before it goes */
		m->set_aside = f->aside;
		ka_model_count_aside(m);
	}
	if (ka_filter_needs_events(f)) {
		bool any = false;
		for (size_t i = 0; i < m->n_streams; i++)
			any |= m->streams[i].events > 0;
		if (!any) {
			fprintf(stderr, "kanalyze: --min-duration, --failed and --succeeded "
				"need event records (KPROF_EVENTS=1, kbpf-trace --events); "
				"these traces have none\n");
			return -EINVAL;
		}
	}
	if (f->n_pids) {
		for (size_t i = m->n_streams; i-- > 0;) {
			bool keep = false;
			for (size_t k = 0; k < f->n_pids && !keep; k++)
				keep = m->streams[i].pid == f->pids[k];
			if (!keep)
				ka_model_remove_stream(m, i);
		}
		size_t out = 0;
		for (size_t i = 0; i < m->n_history; i++) {
			bool keep = false;
			for (size_t k = 0; k < f->n_pids && !keep; k++)
				keep = m->history[i].pid == f->pids[k];
			if (keep)
				m->history[out++] = m->history[i];
			else
				free(m->history[i].sc);
		}
		m->n_history = out;
	}
	if (ka_filter_needs_events(f)) {
		for (size_t i = 0; i < m->n_streams; i++) {
			int err = threads_from_events(&m->streams[i], f);
			if (err)
				return err;
		}
		return 0;
	}
	if (!f->nr_set)
		return 0;
	for (size_t i = 0; i < m->n_streams; i++) {
		struct ka_stream *s = &m->streams[i];
		for (size_t t = 0; t < s->n_threads; t++) {
			struct ka_thread *th = &s->threads[t];
			size_t out = 0;
			for (size_t k = 0; k < th->n_sc; k++) {
				if (nr_passes(f, th->sc[k].nr)) {
					th->sc[out++] = th->sc[k];
				} else {
					ka_sc_free(&th->sc[k]);
				}
			}
			th->n_sc = out;
		}
		size_t out = 0;
		for (size_t k = 0; k < s->n_event_list; k++)
			if (nr_passes(f, s->event_list[k].nr))
				s->event_list[out++] = s->event_list[k];
		s->n_event_list = out;
		/* the shim's own calls, set aside by --coverage --after-start */
		out = 0;
		for (size_t k = 0; k < s->n_own; k++)
			if (nr_passes(f, s->own[k].key))
				s->own[out++] = s->own[k];
		s->n_own = out;
		out = 0;
		for (size_t k = 0; k < s->n_own_startup; k++)
			if (nr_passes(f, s->own_startup[k].key))
				s->own_startup[out++] = s->own_startup[k];
		s->n_own_startup = out;
	}
	for (size_t i = 0; i < m->n_history; i++) {
		struct ka_snapshot *h = &m->history[i];
		size_t out = 0;
		for (size_t k = 0; k < h->n_sc; k++)
			if (nr_passes(f, h->sc[k].nr))
				h->sc[out++] = h->sc[k];
		h->n_sc = out;
	}
	return 0;
}
