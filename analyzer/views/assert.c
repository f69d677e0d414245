/* SPDX-License-Identifier: MIT */
/*
 * --assert EXPR: a check on the end state of a traced run, for CI. An
 * expression is NAME OP NUMBER; NAME is a footer fact (pending pipe
 * readers/writers, descriptors open at exit by kind), a per-syscall
 * counter (count(read), retries(read), errors(read), time_ms(read)) or a
 * property of the trace (drops, missing_records, processes,
 * exit_status_max). Unknown names are a usage error, not a failed check.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syscalls.h"
#include "views.h"

static int syscall_value(const struct ka_model *m, const char *fn, const char *arg,
			 double *out, char *why, size_t why_size)
{
	struct ka_profile p;
	int nr = kp_syscall_nr(ka_model_arch(m), arg);
	bool total = strcmp(arg, "total") == 0;
	if (nr < 0 && !total) {
		snprintf(why, why_size, "unknown syscall '%s'", arg);
		return -EINVAL;
	}
	if (ka_profile_build(&p, m, NULL, NULL))
		return -ENOMEM;
	const struct ka_row *r = total ? &p.total : NULL;
	for (size_t i = 0; i < p.n_rows && !r; i++)
		if (p.rows[i].nr == (uint64_t)nr)
			r = &p.rows[i];
	struct ka_row zero = { 0 };
	if (!r)
		r = &zero;
	int err = 0;
	if (strcmp(fn, "count") == 0)
		*out = (double)r->count;
	else if (strcmp(fn, "retries") == 0)
		*out = (double)r->retries;
	else if (strcmp(fn, "errors") == 0)
		*out = (double)r->errors;
	else if (strcmp(fn, "time_ms") == 0)
		*out = (double)r->time_ns / 1e6;
	else {
		snprintf(why, why_size, "unknown function '%s' (count, retries, errors, time_ms)", fn);
		err = -EINVAL;
	}
	ka_profile_free(&p);
	return err;
}

static int value_of(const struct ka_model *m, const char *name, double *out,
		    char *why, size_t why_size)
{
	uint64_t readers, writers, fds[KP_KINDS];
	size_t exited;
	ka_model_pending(m, &readers, &writers, fds, &exited);
	const char *paren = strchr(name, '(');
	if (paren) {
		char fn[32], arg[64];
		size_t fl = (size_t)(paren - name);
		const char *close = strchr(paren, ')');
		if (!close || close[1] || fl >= sizeof(fn) ||
		    (size_t)(close - paren - 1) >= sizeof(arg)) {
			snprintf(why, why_size, "cannot read '%s'", name);
			return -EINVAL;
		}
		memcpy(fn, name, fl);
		fn[fl] = 0;
		memcpy(arg, paren + 1, (size_t)(close - paren - 1));
		arg[close - paren - 1] = 0;
		return syscall_value(m, fn, arg, out, why, why_size);
	}
	if (strcmp(name, "pending_pipe_readers") == 0)
		*out = (double)readers;
	else if (strcmp(name, "pending_pipe_writers") == 0)
		*out = (double)writers;
	else if (strncmp(name, "open_fds.", 9) == 0) {
		const char *k = name + 9;
		if (strcmp(k, "total") == 0) {
			*out = 0;
			for (int i = 0; i < KP_KINDS; i++)
				*out += (double)fds[i];
			return 0;
		}
		for (int i = 0; i < KP_KINDS; i++)
			if (strcmp(k, kp_kind_names[i]) == 0) {
				*out = (double)fds[i];
				return 0;
			}
		snprintf(why, why_size, "unknown descriptor kind '%s' (file, pipe, socket, other, total)", k);
		return -EINVAL;
	} else if (strcmp(name, "drops") == 0)
		*out = (double)(m->drop_records + m->drop_events);
	else if (strcmp(name, "missing_records") == 0) {
		*out = 0;
		for (size_t i = 0; i < m->n_streams; i++)
			*out += (double)ka_stream_missing(&m->streams[i], NULL, 0, NULL);
	} else if (strcmp(name, "processes") == 0)
		*out = (double)ka_model_processes(m);
	else if (strcmp(name, "exit_status_max") == 0) {
		*out = 0;
		for (size_t i = 0; i < m->n_streams; i++)
			if (m->streams[i].have_exit && (double)m->streams[i].exit_status > *out)
				*out = (double)m->streams[i].exit_status;
	} else {
		snprintf(why, why_size, "unknown name '%s'", name);
		return -EINVAL;
	}
	return 0;
}

int ka_assert_check(const struct ka_model *m, const char *expr, char *why,
		    size_t why_size)
{
	static const char *const ops[] = { "==", "!=", "<=", ">=", "<", ">" };
	char name[128];
	size_t n = 0;
	const char *p = expr;
	while (isspace((unsigned char)*p))
		p++;
	while (*p && !strchr("=!<> ", *p) && n + 1 < sizeof(name))
		name[n++] = *p++;
	name[n] = 0;
	while (isspace((unsigned char)*p))
		p++;
	int op = -1;
	for (int i = 0; i < 6 && op < 0; i++)
		if (strncmp(p, ops[i], strlen(ops[i])) == 0)
			op = i;
	if (!n || op < 0) {
		snprintf(why, why_size, "expected NAME OP NUMBER, OP one of == != < <= > >=");
		return -EINVAL;
	}
	p += strlen(ops[op]);
	char *end;
	double want = strtod(p, &end);
	while (isspace((unsigned char)*end))
		end++;
	if (end == p || *end) {
		snprintf(why, why_size, "expected a number after %s", ops[op]);
		return -EINVAL;
	}
	double have;
	int err = value_of(m, name, &have, why, why_size);
	if (err)
		return err;
	bool ok = false;
	switch (op) {
	case 0: ok = have == want; break;
	case 1: ok = have != want; break;
	case 2: ok = have <= want; break;
	case 3: ok = have >= want; break;
	case 4: ok = have < want; break;
	case 5: ok = have > want; break;
	}
	snprintf(why, why_size, "%s is %g", name, have);
	return ok ? 0 : 1;
}
