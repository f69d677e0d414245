/* SPDX-License-Identifier: MIT */
/*
 * Processes of the run the shim could not enter, from what the shim said
 * of them (docs/FORMAT.md): an exec record's `not_entered` (the image
 * that replaced a traced one), a fork record's (a vfork or posix_spawn
 * child's program), a header's `untraced_parent` (the parent of a traced
 * process, meant to be traced, that is not: a static daemon whose
 * children are traced). Each process once, by pid, and only when no
 * stream of it is among the inputs. And the notes of the headers that
 * say what one process's trace cannot show: a Go program in symbol mode,
 * a site cache that could not be used.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

static const struct {
	const char *why, *text;
} reasons[] = {
	{ "static", "static binary, LD_PRELOAD cannot enter it" },
	{ "setuid", "setuid binary, the loader ignores LD_PRELOAD for it" },
	{ "setgid", "setgid binary, the loader ignores LD_PRELOAD for it" },
	{ "capabilities", "file capabilities, the loader ignores LD_PRELOAD for it" },
	{ "foreign-elf", "ELF of another architecture or word size, libkprof.so cannot be "
			 "loaded into it" },
	{ "no-preload", "its environment has no LD_PRELOAD of libkprof.so (KPROF_FOLLOW=0, "
			"or the program dropped it)" },
	{ "not-loaded", "its environment preloads libkprof.so but the library is not loaded "
			"in it" },
};

const char *ka_untraced_reason(const char *why)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (strcmp(why, reasons[i].why) == 0)
			return reasons[i].text;
	return why;
}

/* 0 or -ENOMEM; a pid already listed, or with a stream, is left out. */
static int add(const struct ka_model *m, struct ka_untraced **list, size_t *n, size_t *cap,
	       uint64_t pid, const char *exe, const char *why, uint64_t by_pid,
	       const char *seen)
{
	if (!pid || ka_model_has_pid(m, pid))
		return 0;
	for (size_t i = 0; i < *n; i++)
		if ((*list)[i].pid == pid)
			return 0;
	int err = ka_grow((void **)list, cap, *n + 1, sizeof(**list));
	if (err)
		return err;
	(*list)[(*n)++] = (struct ka_untraced){ .pid = pid, .exe = exe && exe[0] ? exe : "?",
						.why = why, .by_pid = by_pid, .seen = seen };
	return 0;
}

int ka_untraced_list(const struct ka_model *m, struct ka_untraced **out, size_t *n_out)
{
	struct ka_untraced *list = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	/* an exec's pid has the old image's stream: the exec orphan test */
	for (size_t i = 0; !err && i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (!s->exec_why[0] || !ka_model_exec_orphan(m, s))
			continue;
		bool listed = false;
		for (size_t k = 0; k < n; k++)
			listed |= list[k].pid == s->pid;
		if (listed)
			continue;
		err = ka_grow((void **)&list, &cap, n + 1, sizeof(*list));
		if (!err)
			list[n++] = (struct ka_untraced){ .pid = s->pid, .exe = s->exec_path,
							  .why = s->exec_why, .by_pid = s->pid,
							  .seen = "exec" };
	}
	for (size_t i = 0; !err && i < m->n_forks; i++) {
		const struct ka_fork_note *f = &m->forks[i];
		if (f->why[0] && ka_model_has_pid(m, f->pid))
			err = add(m, &list, &n, &cap, f->child, f->path, f->why, f->pid, "child");
	}
	for (size_t i = 0; !err && i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (s->up_pid)
			err = add(m, &list, &n, &cap, s->up_pid, s->up_exe, s->up_why, s->pid,
				  "parent");
	}
	if (err) {
		free(list);
		return err;
	}
	*out = list;
	*n_out = n;
	return 0;
}

/* A stream's name for "the parent of pid N (NAME)". */
static const char *name_of_pid(const struct ka_model *m, uint64_t pid)
{
	for (size_t i = 0; i < m->n_streams; i++)
		if (m->streams[i].pid == pid)
			return ka_stream_name(&m->streams[i]);
	return "?";
}

void ka_untraced_line(FILE *out, const struct ka_model *m, const struct ka_untraced *u,
		      const char *prefix)
{
	fprintf(out, "%spid %" PRIu64 " (%s)", prefix, u->pid, u->exe);
	if (strcmp(u->seen, "parent") == 0)
		fprintf(out, ", the parent of pid %" PRIu64 " (%s),", u->by_pid,
			name_of_pid(m, u->by_pid));
	else if (strcmp(u->seen, "child") == 0)
		fprintf(out, ", started by pid %" PRIu64 ",", u->by_pid);
	else
		fprintf(out, ", exec'd by a traced image,");
	fprintf(out, " was not traced: %s; ", ka_untraced_reason(u->why));
	if (strcmp(u->why, "no-preload") == 0 || strcmp(u->why, "not-loaded") == 0)
		fprintf(out, "keep KPROF_FOLLOW=1, or trace it with kbpf-trace -- CMD "
			     "(or kbpf-trace -p %" PRIu64 " while it runs)\n", u->pid);
	else
		fprintf(out, "trace it with kbpf-trace -- CMD (or kbpf-trace -p %" PRIu64
			     " while it runs), which sees static and setuid programs\n", u->pid);
}

/* Distinct Go programs that ran in symbol mode: their count, the first. */
static size_t go_in_symbol_mode(const struct ka_model *m, const struct ka_stream **first)
{
	size_t n = 0;
	*first = NULL;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		if (strcmp(s->runtime, "go") != 0 || !s->producer ||
		    strcmp(s->producer, "preload") != 0 ||
		    (s->hook_mode && strcmp(s->hook_mode, "symbols") != 0))
			continue;
		if (!*first)
			*first = s;
		n++;
	}
	return n;
}

void ka_report_go_note(FILE *out, const struct ka_model *m, const char *prefix)
{
	const struct ka_stream *go;
	size_t n_go = go_in_symbol_mode(m, &go);
	if (n_go)
		fprintf(out, "%ssymbol mode sees only libc calls; pid %" PRIu64 " (%s)%s is a Go "
			     "program whose runtime makes its syscalls directly: use "
			     "KPROF_HOOK=rewrite or patch (or auto) or kbpf-trace\n",
			prefix, go->pid, ka_stream_name(go), n_go > 1 ? " and others" : "");
}

void ka_report_header_notes(FILE *out, const struct ka_model *m, const char *prefix)
{
	/* the site cache: each distinct note once */
	for (size_t i = 0; i < m->n_streams; i++) {
		const char *note = m->streams[i].site_cache_note;
		bool seen = false;
		for (size_t k = 0; note && !seen && k < i; k++)
			seen = m->streams[k].site_cache_note &&
			       strcmp(m->streams[k].site_cache_note, note) == 0;
		if (note && !seen)
			fprintf(out, "%ssite cache: %s\n", prefix, note);
	}
}

size_t ka_report_untraced(FILE *out, const struct ka_model *m, const char *prefix)
{
	struct ka_untraced *list;
	size_t n;
	if (ka_untraced_list(m, &list, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		ka_untraced_line(out, m, &list[i], prefix);
	free(list);
	return n;
}

size_t ka_untraced_count(const struct ka_model *m)
{
	struct ka_untraced *list;
	size_t n;
	if (ka_untraced_list(m, &list, &n))
		return 0;
	free(list);
	return n;
}
