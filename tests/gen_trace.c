/* SPDX-License-Identifier: MIT */
/*
 * Writes a known kprof trace (docs/FORMAT.md) with msgpack-c's packer
 * only, so kanalyze can be tested before and apart from the producers.
 *
 * Two processes (pid 100, and its fork child 101), two threads each, one
 * superseded aggregate, fork/exit/drop/events records, one syscall number
 * no table knows (999). Expected totals are in tests/t_analyze_fixture.sh.
 *
 * --kinds adds `kinds` to some syscalls entries of process a (leaving
 * some calls out of them, which kanalyze must show as "unknown") and
 * six-element events to process b (expected values: t_analyze_kinds.sh).
 *
 * How streams end (t_analyze_unended.sh): --seq numbers every record
 * (`seq`), --seq-gap=N also skips N numbers after process a's first
 * aggregate (records lost in the middle, as a full disk does);
 * --orphan adds a posix_spawn fork record of process a for child 4242,
 * which has no stream; --no-exit leaves out both exit records;
 * --producer=NAME and --detached (process a's exit says it was still
 * running when tracing ended) make the headers and exit kbpf-trace's.
 *
 * Usage: gen_trace [--gzip] [--two-members] [--process=a|b|all]
 *                  [--unknown] [--kinds] [--seq] [--seq-gap=N] [--orphan]
 *                  [--no-exit] [--producer=NAME] [--detached] OUT
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>
#include <zlib.h>

#define STREAM_A 0xa1a2a3a4a5a6a7a8ULL /* > INT64_MAX on purpose */
#define STREAM_B 0x0000000000b1b2b3ULL

static bool with_seq, orphan, no_exit, detached;
static uint64_t seq_gap, seq_a, seq_b;
static const char *producer = "preload";

static msgpack_sbuffer sbuf;
static msgpack_packer pk;
static FILE *out;
static bool gzip_out;
static z_stream zs;

static void flush_record(void)
{
	if (!gzip_out) {
		fwrite(sbuf.data, 1, sbuf.size, out);
	} else {
		unsigned char buf[4096];
		zs.next_in = (Bytef *)sbuf.data;
		zs.avail_in = (uInt)sbuf.size;
		do {
			zs.next_out = buf;
			zs.avail_out = sizeof(buf);
			deflate(&zs, Z_SYNC_FLUSH);
			fwrite(buf, 1, sizeof(buf) - zs.avail_out, out);
		} while (zs.avail_out == 0);
	}
	msgpack_sbuffer_clear(&sbuf);
}

static void gzip_begin(void)
{
	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		exit(99);
}

static void gzip_end(void)
{
	unsigned char buf[4096];
	int zr;
	zs.avail_in = 0;
	do {
		zs.next_out = buf;
		zs.avail_out = sizeof(buf);
		zr = deflate(&zs, Z_FINISH);
		fwrite(buf, 1, sizeof(buf) - zs.avail_out, out);
	} while (zr != Z_STREAM_END);
	deflateEnd(&zs);
}

static void str(const char *s)
{
	msgpack_pack_str(&pk, strlen(s));
	msgpack_pack_str_body(&pk, s, strlen(s));
}

static void kv_uint(const char *k, uint64_t v)
{
	str(k);
	msgpack_pack_uint64(&pk, v);
}

static void kv_str(const char *k, const char *v)
{
	str(k);
	str(v);
}

static void begin(const char *type, unsigned nkeys, uint64_t pid,
		  uint64_t stream, uint64_t time_ns)
{
	msgpack_pack_map(&pk, nkeys + 4 + with_seq);
	kv_str("type", type);
	kv_uint("pid", pid);
	kv_uint("stream", stream);
	kv_uint("time_ns", time_ns);
	if (with_seq)
		kv_uint("seq", pid == 100 ? ++seq_a : ++seq_b);
}

static void header(uint64_t pid, uint64_t stream, uint64_t ppid,
		   const char *origin, uint64_t parent, const char *exe,
		   const char *arg1, uint64_t t)
{
	begin("header", 15, pid, stream, t);
	kv_uint("version", 1);
	kv_str("producer", producer);
	kv_uint("ppid", ppid);
	kv_str("origin", origin);
	kv_uint("parent_stream", parent);
	kv_str("exe", exe);
	str("argv");
	msgpack_pack_array(&pk, 2);
	str(exe);
	str(arg1);
	kv_str("host", "fixture-host");
	kv_str("kernel", "6.1.0-fixture");
	kv_str("arch", "x86_64");
	str("clock");
	msgpack_pack_map(&pk, 2);
	kv_uint("monotonic_ns", t);
	kv_uint("realtime_ns", 1700000000000000000ULL + t);
	kv_str("hook_mode", "symbols");
	kv_str("coverage", "libc exported functions (fixture)");
	str("events");
	msgpack_pack_true(&pk);
	kv_uint("interval_ms", 1000);
	flush_record();
}

struct sc {
	uint64_t nr, count, time_ns, min_ns, max_ns, retries, errors;
	uint64_t err_no, err_count; /* one errno entry when err_count */
	uint64_t bucket, bucket_count;
};

/* --kinds: `kinds` of some entries, six-element events (see main). */
static bool with_kinds;
struct kinds {
	uint64_t pid, thread, nr;
	const char *kind[2];
	uint64_t c[2][4];
};
static const struct kinds kinds_table[] = {
	/* read of process a, thread 1: 50 calls, 5 of them not in kinds */
	{ 100, 1, 0, { "pipe", "socket" }, { { 30, 10000000, 0, 0 }, { 15, 2000000, 0, 0 } } },
	{ 100, 2, 0, { "pipe", NULL }, { { 10, 1000000, 7, 0 } } },
	{ 100, 1, 1, { "file", NULL }, { { 20, 2000000, 0, 2 } } },
};

static const struct kinds *kinds_of(uint64_t pid, uint64_t thread, uint64_t nr)
{
	for (size_t i = 0; with_kinds && i < sizeof(kinds_table) / sizeof(kinds_table[0]); i++)
		if (kinds_table[i].pid == pid && kinds_table[i].thread == thread &&
		    kinds_table[i].nr == nr)
			return &kinds_table[i];
	return NULL;
}

static void aggregate(uint64_t pid, uint64_t stream, uint64_t thread,
		      uint64_t tid, uint64_t t, bool final,
		      const struct sc *sc, unsigned n)
{
	begin("aggregate", 5, pid, stream, t);
	kv_uint("thread", thread);
	kv_uint("tid", tid);
	str("exited");
	final ? msgpack_pack_true(&pk) : msgpack_pack_false(&pk);
	str("final");
	final ? msgpack_pack_true(&pk) : msgpack_pack_false(&pk);
	str("syscalls");
	msgpack_pack_array(&pk, n);
	for (unsigned i = 0; i < n; i++) {
		const struct kinds *k = final ? kinds_of(pid, thread, sc[i].nr) : NULL;
		msgpack_pack_map(&pk, 9 + (k != NULL));
		if (k) {
			str("kinds");
			msgpack_pack_map(&pk, k->kind[1] ? 2 : 1);
			for (int j = 0; j < 2 && k->kind[j]; j++) {
				str(k->kind[j]);
				msgpack_pack_array(&pk, 4);
				for (int c = 0; c < 4; c++)
					msgpack_pack_uint64(&pk, k->c[j][c]);
			}
		}
		kv_uint("nr", sc[i].nr);
		kv_uint("count", sc[i].count);
		kv_uint("time_ns", sc[i].time_ns);
		kv_uint("min_ns", sc[i].min_ns);
		kv_uint("max_ns", sc[i].max_ns);
		kv_uint("retries", sc[i].retries);
		kv_uint("errors", sc[i].errors);
		str("errno");
		msgpack_pack_map(&pk, sc[i].err_count ? 1 : 0);
		if (sc[i].err_count) {
			msgpack_pack_uint64(&pk, sc[i].err_no);
			msgpack_pack_uint64(&pk, sc[i].err_count);
		}
		str("hist");
		msgpack_pack_map(&pk, sc[i].bucket_count ? 1 : 0);
		if (sc[i].bucket_count) {
			msgpack_pack_uint64(&pk, sc[i].bucket);
			msgpack_pack_uint64(&pk, sc[i].bucket_count);
		}
	}
	flush_record();
}

static void exit_record(uint64_t pid, uint64_t stream, uint64_t t, int status,
			uint64_t file, uint64_t pipe, uint64_t sock,
			uint64_t readers, uint64_t writers)
{
	if (no_exit)
		return;
	bool detach = detached && pid == 100;
	begin("exit", 5 + detach, pid, stream, t);
	if (detach) {
		str("detached");
		msgpack_pack_true(&pk);
	}
	str("status");
	msgpack_pack_int(&pk, status);
	kv_uint("signal", 0);
	str("fds");
	msgpack_pack_map(&pk, 4);
	kv_uint("file", file);
	kv_uint("pipe", pipe);
	kv_uint("socket", sock);
	kv_uint("other", 0);
	kv_uint("pending_pipe_readers", readers);
	kv_uint("pending_pipe_writers", writers);
	flush_record();
}

static void process_a(void)
{
	header(100, STREAM_A, 1, "start", 0, "/usr/bin/fixture-a", "--alpha", 1000);
	/* Superseded by the final aggregate of thread 1 below. */
	const struct sc early[] = { { 0, 5, 1000, 100, 300, 0, 0, 0, 0, 0, 0 },
				    { 1, 400, 9999999, 1, 1, 0, 0, 0, 0, 0, 0 } };
	aggregate(100, STREAM_A, 1, 100, 2000, false, early, 2);
	seq_a += seq_gap;
	if (orphan) {
		begin("fork", 2, 100, STREAM_A, 2400);
		kv_uint("child", 4242);
		kv_str("how", "posix_spawn");
		flush_record();
	}
	begin("fork", 2, 100, STREAM_A, 2500);
	kv_uint("child", 101);
	kv_str("how", "fork");
	flush_record();
	const struct sc t1[] = {
		{ 0, 50, 12340000, 100000, 400000, 0, 0, 0, 0, 0, 0 },
		{ 1, 20, 2000000, 50000, 150000, 0, 2, 9, 2, 0, 0 },
	};
	const struct sc t2[] = {
		{ 0, 10, 1000000, 20000, 200000, 7, 0, 11, 7, 0, 0 },
		{ 110, 1000, 250000, 240, 260, 0, 0, 0, 0, 27, 1000 },
	};
	aggregate(100, STREAM_A, 2, 102, 3000, true, t2, 2);
	aggregate(100, STREAM_A, 1, 100, 4000, true, t1, 2);
	begin("maps", 1, 100, STREAM_A, 4000);
	str("maps");
	msgpack_pack_array(&pk, 1);
	msgpack_pack_map(&pk, 5);
	kv_uint("start", 0x400000);
	kv_uint("end", 0x401000);
	kv_uint("offset", 0);
	kv_str("path", "/usr/bin/fixture-a");
	kv_str("build_id", "");
	flush_record();
	exit_record(100, STREAM_A, 4001, 0, 3, 1, 0, 1, 0);
}

static void process_b(void)
{
	header(101, STREAM_B, 100, "fork", STREAM_A, "/usr/bin/fixture-b", "--beta", 2600);
	const struct sc t1[] = {
		{ 257, 4, 400000, 50000, 200000, 0, 1, 2, 1, 0, 0 },
		{ 0, 5, 500000, 100000, 100000, 0, 0, 0, 0, 0, 0 },
	};
	const struct sc t2[] = {
		{ 202, 3, 9000000, 1000000, 5000000, 0, 0, 0, 0, 0, 0 },
		{ 1, 2, 100000, 50000, 50000, 0, 0, 0, 0, 0, 0 },
		{ 999, 1, 10, 10, 10, 0, 0, 0, 0, 9, 1 },
	};
	begin("events", 2, 101, STREAM_B, 2700);
	kv_uint("tid", 101);
	str("events");
	msgpack_pack_array(&pk, 3);
	const int64_t ev[3][4] = { { 2650, 100000, 0, 10 }, { 2800, 50000, 257, -2 },
				   { 2900, 100000, 257, 3 } };
	for (int i = 0; i < 3; i++) {
		msgpack_pack_array(&pk, 4);
		for (int k = 0; k < 3; k++)
			msgpack_pack_uint64(&pk, (uint64_t)ev[i][k]);
		msgpack_pack_int64(&pk, ev[i][3]);
	}
	flush_record();
	if (with_kinds) {
		/*
		 * [start, duration, nr, ret, fd, kind] on thread 103: reads
		 * alternate between a pipe (fd 5) and a socket (fd 6), each
		 * an EAGAIN run of its own; fd 7 (eventfd) is closed in the
		 * middle of one; then a futex EAGAIN without descriptor (the
		 * word had changed: an error, not an operation of --blocking).
		 */
		const int64_t kev[][6] = {
			{ 3000, 1000, 0, -11, 5, 2 }, { 3100, 1000, 0, -11, 6, 3 },
			{ 3200, 1000, 0, -11, 7, 4 }, { 3300, 2000, 0, 1, 5, 2 },
			{ 3400, 1000, 0, -11, 6, 3 }, { 3500, 1000, 3, 0, 7, 4 },
			{ 3600, 5000, 0, 8, 6, 3 },   { 3700, 10, 202, -11, -1, 0 },
			{ 3800, 10, 202, 0, -1, 0 },
		};
		unsigned n = sizeof(kev) / sizeof(kev[0]);
		begin("events", 2, 101, STREAM_B, 3900);
		kv_uint("tid", 103);
		str("events");
		msgpack_pack_array(&pk, n);
		for (unsigned i = 0; i < n; i++) {
			bool fd = kev[i][5] != 0;
			msgpack_pack_array(&pk, fd ? 6 : 4);
			for (int k = 0; k < 3; k++)
				msgpack_pack_uint64(&pk, (uint64_t)kev[i][k]);
			msgpack_pack_int64(&pk, kev[i][3]);
			if (fd) {
				msgpack_pack_int64(&pk, kev[i][4]);
				msgpack_pack_uint64(&pk, (uint64_t)kev[i][5]);
			}
		}
		flush_record();
	}
	begin("drop", 4, 101, STREAM_B, 2750);
	kv_uint("records", 2);
	kv_uint("events", 10);
	kv_uint("bytes", 300);
	kv_str("reason", "ring buffer full");
	flush_record();
	aggregate(101, STREAM_B, 1, 101, 5000, true, t1, 2);
	aggregate(101, STREAM_B, 2, 103, 5000, true, t2, 3);
	begin("exec", 1, 101, STREAM_B, 5001);
	kv_str("path", "/bin/true");
	flush_record();
	exit_record(101, STREAM_B, 5002, 3, 0, 0, 2, 0, 2);
}

/* Process a's shim's own calls (3 writes, 2 openat), in no profile; last
 * in the file so that the offsets of the records above stay put. */
static void own_a(void)
{
	begin("own", 1, 100, STREAM_A, 4001);
	str("syscalls");
	msgpack_pack_array(&pk, 2);
	msgpack_pack_array(&pk, 2);
	msgpack_pack_uint64(&pk, 1);
	msgpack_pack_uint64(&pk, 3);
	msgpack_pack_array(&pk, 2);
	msgpack_pack_uint64(&pk, 257);
	msgpack_pack_uint64(&pk, 2);
	flush_record();
}

int main(int argc, char **argv)
{
	const char *path = NULL, *which = "all";
	bool two_members = false, unknown = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--gzip") == 0)
			gzip_out = true;
		else if (strcmp(argv[i], "--two-members") == 0)
			two_members = true;
		else if (strcmp(argv[i], "--unknown") == 0)
			unknown = true;
		else if (strcmp(argv[i], "--kinds") == 0)
			with_kinds = true;
		else if (strcmp(argv[i], "--seq") == 0)
			with_seq = true;
		else if (strncmp(argv[i], "--seq-gap=", 10) == 0)
			with_seq = true, seq_gap = strtoull(argv[i] + 10, NULL, 10);
		else if (strcmp(argv[i], "--orphan") == 0)
			orphan = true;
		else if (strcmp(argv[i], "--no-exit") == 0)
			no_exit = true;
		else if (strcmp(argv[i], "--detached") == 0)
			detached = true;
		else if (strncmp(argv[i], "--producer=", 11) == 0)
			producer = argv[i] + 11;
		else if (strncmp(argv[i], "--process=", 10) == 0)
			which = argv[i] + 10;
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "usage: gen_trace [--gzip] [--two-members] "
				"[--process=a|b|all] [--unknown] [--kinds] [--seq] "
				"[--seq-gap=N] [--orphan] [--no-exit] [--producer=NAME] "
				"[--detached] OUT\n");
			return 99;
		}
	}
	if (!path) {
		fprintf(stderr, "gen_trace: no output file\n");
		return 99;
	}
	out = fopen(path, "wb");
	if (!out) {
		perror(path);
		return 99;
	}
	msgpack_sbuffer_init(&sbuf);
	msgpack_packer_init(&pk, &sbuf, msgpack_sbuffer_write);
	if (gzip_out)
		gzip_begin();
	if (strcmp(which, "b") != 0)
		process_a();
	if (gzip_out && two_members) {
		gzip_end();
		gzip_begin();
	}
	if (unknown) {
		begin("future_record", 1, 100, STREAM_A, 4500);
		kv_uint("answer", 42);
		flush_record();
	}
	if (strcmp(which, "a") != 0)
		process_b();
	if (strcmp(which, "b") != 0)
		own_a();
	if (gzip_out)
		gzip_end();
	msgpack_sbuffer_destroy(&sbuf);
	return fclose(out) ? 99 : 0;
}
