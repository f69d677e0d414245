/* SPDX-License-Identifier: MIT */
/*
 * kanalyze --listen --metrics=ADDR:PORT: the merged profile as a
 * Prometheus scrape target (the text exposition format, version 0.0.4,
 * which Prometheus, VictoriaMetrics, Grafana Agent and OpenMetrics
 * scrapers read), so that many hosts' syscall figures land in the engine
 * a fleet already has. Per process name (the image's comm, else its
 * executable's base name) and syscall:
 *
 *   kprof_syscalls_total          calls completed         (counter)
 *   kprof_syscall_errors_total    failed calls            (counter)
 *   kprof_syscall_retries_total   EAGAIN retries          (counter)
 *   kprof_syscall_seconds         latency histogram       (histogram:
 *                                 _bucket{le=...} per decade from 1 us to
 *                                 10 s and +Inf, _sum, _count)
 *
 * plus kprof_processes and kprof_producers_connected (gauges). Counters
 * only grow: the streams of exited processes stay in the model. A bucket
 * holds the calls of every histogram bucket wholly at or below its bound
 * (the histograms are log-linear, 4 buckets per power of two), so a
 * decade's bucket may miss calls within a quarter power of two under its
 * bound; _count and +Inf are exact.
 *
 * The HTTP side is the least that serves a scrape: one request per
 * connection, GET /metrics (or /), answered and closed, on the listener's
 * own thread between its reads; a client that sends nothing for 2 s is
 * dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "histogram.h"
#include "metrics.h"
#include "syscalls.h"

#define NAMES_MAX 1024

int ka_metrics_open(const char *address, char *bound, size_t size)
{
	char host[64];
	const char *colon = strrchr(address, ':');
	if (!colon || (size_t)(colon - address) >= sizeof(host) || !colon[1]) {
		fprintf(stderr, "kanalyze: --metrics needs HOST:PORT (127.0.0.1:9464), not '%s'\n",
			address);
		return -EINVAL;
	}
	memcpy(host, address, (size_t)(colon - address));
	host[colon - address] = 0;
	char *end;
	unsigned long port = strtoul(colon + 1, &end, 10);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (*end || port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "kanalyze: --metrics needs an IPv4 address and a port "
			"(127.0.0.1:9464; port 0: any), not '%s'\n", address);
		return -EINVAL;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	socklen_t len = sizeof(sa);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		int err = -errno;
		fprintf(stderr, "kanalyze: --metrics: cannot listen on %s: %s\n", address,
			strerror(-err));
		close(fd);
		return err;
	}
	snprintf(bound, size, "%s:%u", host, (unsigned)ntohs(sa.sin_port));
	return fd;
}

/* A label value: backslash, double quote and newline escaped. */
static void label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', out);
		if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
}

struct series {
	const char *process;
	uint64_t nr;
	uint64_t count, errors, retries, time_ns;
	struct kp_hist hist;
};

static int by_key(const void *a, const void *b)
{
	const struct series *x = a, *y = b;
	int c = strcmp(x->process, y->process);
	if (c)
		return c;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static const char *process_name(const struct ka_stream *s)
{
	if (s->comm[0])
		return s->comm;
	const char *base = s->exe ? strrchr(s->exe, '/') : NULL;
	return base ? base + 1 : s->exe && *s->exe ? s->exe : "unknown";
}

/* The series of m, merged by (process name, syscall), sorted. */
static int collect(const struct ka_model *m, struct series **out, size_t *n_out)
{
	struct series *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *s = &m->streams[i];
		for (size_t t = 0; t < s->n_threads; t++)
			for (size_t k = 0; k < s->threads[t].n_sc; k++) {
				const struct ka_sc_stats *sc = &s->threads[t].sc[k];
				if (m->set_aside && sc->nr < 1024 && m->set_aside[sc->nr])
					continue;
				if (n == cap) {
					cap = cap ? 2 * cap : 256;
					void *p = reallocarray(v, cap, sizeof(*v));
					if (!p) {
						free(v);
						return -ENOMEM;
					}
					v = p;
				}
				struct series *x = &v[n++];
				memset(x, 0, sizeof(*x));
				x->process = process_name(s);
				x->nr = sc->nr;
				x->count = sc->count;
				x->errors = sc->errors;
				x->retries = sc->retries;
				x->time_ns = sc->time_ns;
				for (size_t h = 0; h < sc->n_hist; h++)
					if (sc->hist[h].key < KP_HIST_BUCKETS)
						x->hist.bucket[sc->hist[h].key] += sc->hist[h].value;
			}
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), by_key);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && !by_key(&v[k - 1], &v[i])) {
			struct series *x = &v[k - 1];
			x->count += v[i].count;
			x->errors += v[i].errors;
			x->retries += v[i].retries;
			x->time_ns += v[i].time_ns;
			kp_hist_add(&x->hist, &v[i].hist);
		} else {
			v[k++] = v[i];
		}
	}
	*out = v;
	*n_out = k;
	return 0;
}

static void head(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void labels(FILE *out, const struct series *x, const char *arch)
{
	const char *name = x->nr < 1024 ? kp_syscall_name(arch, (unsigned)x->nr) : NULL;
	fputs("{process=\"", out);
	label(out, x->process);
	if (name)
		fprintf(out, "\",syscall=\"%s\"", name);
	else
		fprintf(out, "\",syscall=\"syscall_%" PRIu64 "\"", x->nr);
}

int ka_metrics_write(FILE *out, const struct ka_model *m, unsigned producers)
{
	struct series *v;
	size_t n;
	int err = collect(m, &v, &n);
	if (err)
		return err;
	const char *arch = ka_model_arch(m);
	static const struct {
		const char *name, *help;
		size_t off;
	} counters[] = {
		{ "kprof_syscalls_total", "Syscalls completed.", offsetof(struct series, count) },
		{ "kprof_syscall_errors_total", "Syscalls that failed (EAGAIN retries aside).",
		  offsetof(struct series, errors) },
		{ "kprof_syscall_retries_total",
		  "Syscalls that would have blocked (EAGAIN of a would-block call).",
		  offsetof(struct series, retries) },
	};
	for (size_t c = 0; c < sizeof(counters) / sizeof(counters[0]); c++) {
		head(out, counters[c].name, "counter", counters[c].help);
		for (size_t i = 0; i < n; i++) {
			fputs(counters[c].name, out);
			labels(out, &v[i], arch);
			fprintf(out, "} %" PRIu64 "\n",
				*(const uint64_t *)(const void *)((const char *)&v[i] + counters[c].off));
		}
	}
	head(out, "kprof_syscall_seconds", "histogram", "Time in the syscall.");
	static const double bounds[] = { 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10 };
	for (size_t i = 0; i < n; i++) {
		const struct series *x = &v[i];
		size_t b = 0;
		uint64_t below = 0;
		for (size_t k = 0; k < sizeof(bounds) / sizeof(bounds[0]); k++) {
			uint64_t le_ns = (uint64_t)(bounds[k] * 1e9);
			/* buckets whose every value is at most the bound */
			while (b + 1 < KP_HIST_BUCKETS && kp_hist_bucket_low((unsigned)b + 1) <= le_ns + 1)
				below += x->hist.bucket[b++];
			fputs("kprof_syscall_seconds_bucket", out);
			labels(out, x, arch);
			fprintf(out, ",le=\"%g\"} %" PRIu64 "\n", bounds[k], below);
		}
		fputs("kprof_syscall_seconds_bucket", out);
		labels(out, x, arch);
		fprintf(out, ",le=\"+Inf\"} %" PRIu64 "\nkprof_syscall_seconds_sum", x->count);
		labels(out, x, arch);
		fprintf(out, "} %.9f\nkprof_syscall_seconds_count", (double)x->time_ns / 1e9);
		labels(out, x, arch);
		fprintf(out, "} %" PRIu64 "\n", x->count);
	}
	head(out, "kprof_processes", "gauge", "Process images in the merged traces.");
	fprintf(out, "kprof_processes %zu\n", m->n_streams);
	head(out, "kprof_producers_connected", "gauge", "Producers connected to the listener.");
	fprintf(out, "kprof_producers_connected %u\n", producers);
	free(v);
	return ferror(out) ? -EIO : 0;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		struct pollfd pf = { .fd = fd, .events = POLLOUT };
		if (poll(&pf, 1, 2000) <= 0)
			return;
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0) {
			if (w < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

void ka_metrics_serve(int lfd, const struct ka_model *m, unsigned producers)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	char req[4096];
	size_t got = 0;
	while (got < sizeof(req) - 1) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, 2000) <= 0)
			break;
		ssize_t r = recv(fd, req + got, sizeof(req) - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
		req[got] = 0;
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = 0;
	char *body = NULL;
	size_t len = 0;
	const char *status = "404 Not Found", *type = "text/plain";
	if (!strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET / ", 6) ||
	    !strncmp(req, "GET /metrics?", 13)) {
		FILE *mem = open_memstream(&body, &len);
		int err = mem ? ka_metrics_write(mem, m, producers) : -ENOMEM;
		if (mem && fclose(mem) && !err)
			err = -EIO;
		if (!err) {
			status = "200 OK";
			type = "text/plain; version=0.0.4; charset=utf-8";
		} else {
			status = "500 Internal Server Error";
			free(body);
			body = NULL;
			len = 0;
		}
	}
	char header[256];
	int h = snprintf(header, sizeof(header), "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, type,
			 body ? len : 0);
	send_all(fd, header, (size_t)h);
	if (body)
		send_all(fd, body, len);
	free(body);
	close(fd);
}
