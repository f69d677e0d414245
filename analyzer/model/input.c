/* SPDX-License-Identifier: MIT */
/*
 * One input file into the model, with what the record reader cannot know
 * about a whole file: a file that is no kprof trace at all (/etc/passwd,
 * a PNG) is said so once instead of once per byte, which is what the
 * reader's resynchronisation gives for text (every byte a valid msgpack
 * integer, none a record); past the first few damaged records of one
 * input the rest are counted, not listed; a file without any record is
 * named as such.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "input.h"
#include "record_reader.h"

/* Damage reports listed per input; the rest go into one summary. */
#define DAMAGE_LISTED 10

/*
 * Progress on a terminal: a second into reading, one line on stderr,
 * rewritten in place every PROGRESS_EVERY_NS, cleared when reading ends.
 */
#define PROGRESS_AFTER_NS 1000000000ull
#define PROGRESS_EVERY_NS 250000000ull
static struct {
	int tty; /* 0: not asked yet, 1: stderr is a terminal, -1: not */
	bool shown;
	uint64_t t0, last, files, bytes_done, records;
} progress;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void progress_tick(uint64_t bytes_in_file)
{
	uint64_t t = now_ns();
	if (t - progress.t0 < PROGRESS_AFTER_NS || t - progress.last < PROGRESS_EVERY_NS)
		return;
	progress.last = t;
	progress.shown = true;
	fprintf(stderr, "\rkanalyze: reading: %.1f s, %" PRIu64 " files, %.1f MB, %" PRIu64
		" records\033[K", (double)(t - progress.t0) / 1e9, progress.files,
		(double)(progress.bytes_done + bytes_in_file) / 1e6, progress.records);
}

void ka_input_progress_done(void)
{
	if (progress.shown)
		fputs("\r\033[K", stderr);
	progress.shown = false;
}

struct input {
	struct ka_model *model;
	uint64_t end; /* the end of the latest record, in its stream */
	size_t first_damage; /* model->n_damaged before this input */
	uint64_t records;    /* records the reader delivered */
	uint64_t damage;     /* damage reports of the reader */
	uint64_t last_listed_offset;
	bool last_decompressed;
};

static int on_record(const struct kp_record *rec, void *ctx)
{
	struct input *in = ctx;
	in->records++;
	in->end = rec->offset + rec->size;
	if (progress.tty > 0 && (++progress.records & 1023) == 0)
		progress_tick(in->end);
	return ka_model_on_record(rec, in->model);
}

static void on_damage(const struct kp_damage *d, void *ctx)
{
	struct input *in = ctx;
	in->damage++;
	in->last_decompressed = d->decompressed;
	if (in->damage > DAMAGE_LISTED)
		return;
	in->last_listed_offset = d->offset;
	ka_model_on_damage(d, in->model);
}

/*
 * Whether bytes b[0, n) can be the start of a kprof record: a msgpack map
 * (not empty) whose first key is the string "type", in any of msgpack's
 * string encodings (FORMAT.md; the reader checks the decoded value). A
 * prefix of such a start can be: a cut trace is damaged, not foreign.
 */
static bool starts_like_record(const unsigned char *b, size_t n)
{
	static const unsigned char keys[][9] = {
		{ 0xa4, 't', 'y', 'p', 'e' },
		{ 0xd9, 4, 't', 'y', 'p', 'e' },
		{ 0xda, 0, 4, 't', 'y', 'p', 'e' },
		{ 0xdb, 0, 0, 0, 4, 't', 'y', 'p', 'e' },
	};
	static const size_t key_len[] = { 5, 6, 7, 9 };
	size_t head;
	if (n == 0)
		return true;
	if (b[0] > 0x80 && b[0] <= 0x8f)
		head = 1;
	else if (b[0] == 0xde)
		head = 3;
	else if (b[0] == 0xdf)
		head = 5;
	else
		return false;
	if (n <= head)
		return true;
	if (head > 1 && !memcmp(b + 1, "\0\0\0\0", head - 1))
		return false; /* an empty map16 or map32 */
	b += head;
	n -= head;
	for (size_t k = 0; k < sizeof(key_len) / sizeof(key_len[0]); k++)
		if (memcmp(b, keys[k], n < key_len[k] ? n : key_len[k]) == 0)
			return true;
	return false;
}

/*
 * The first bytes of the file, inflated when it is gzip (*gzip set):
 * their count, 0 when there are none to be had (the gzip data is corrupt
 * from the start: that is the reader's damage, not a foreign file).
 */
static size_t read_start(const char *path, unsigned char *out, size_t size, bool *gzip)
{
	unsigned char raw[4096];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, raw, sizeof(raw));
		close(fd);
	}
	*gzip = n >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
	if (n <= 0 || (n == 1 && raw[0] == 0x1f))
		return 0; /* nothing, or gzip cut after its first byte */
	if (!*gzip) {
		size_t len = (size_t)n < size ? (size_t)n : size;
		memcpy(out, raw, len);
		return len;
	}
	z_stream zs = { 0 };
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return 0;
	zs.next_in = raw;
	zs.avail_in = (uInt)n;
	zs.next_out = out;
	zs.avail_out = (uInt)size;
	int zr = inflate(&zs, Z_SYNC_FLUSH);
	size_t len = size - zs.avail_out;
	inflateEnd(&zs);
	return zr == Z_OK || zr == Z_STREAM_END || zr == Z_BUF_ERROR ? len : 0;
}

/* "the text \"root:x:0:0\"" or "bytes 89 50 4e 47 ..." of the file's start. */
static void describe_start(char *buf, size_t size, const unsigned char *b, size_t n)
{
	bool text = true;
	for (size_t i = 0; i < n; i++)
		text &= (b[i] >= 0x20 && b[i] < 0x7f) || b[i] == '\n' || b[i] == '\t' ||
			b[i] == '\r';
	size_t len = (size_t)snprintf(buf, size, text ? "the text \"" : "bytes");
	for (size_t i = 0; i < n && (text || i < 8) && len + 8 < size; i++) {
		if (!text)
			len += (size_t)snprintf(buf + len, size - len, " %02x", b[i]);
		else if (b[i] == '\n' || b[i] == '\t' || b[i] == '\r')
			len += (size_t)snprintf(buf + len, size - len, "\\%c",
						b[i] == '\n' ? 'n' : b[i] == '\t' ? 't' : 'r');
		else if (b[i] == '"' || b[i] == '\\')
			len += (size_t)snprintf(buf + len, size - len, "\\%c", b[i]);
		else
			buf[len++] = (char)b[i];
	}
	snprintf(buf + len, size - len, "%s", text ? "\"" : "");
}

/*
 * Whether a file that gave no record is no kprof trace at all; then the
 * reason, naming what it starts with.
 */
static bool foreign(const char *path, char *why, size_t size)
{
	unsigned char start[16];
	bool gzip;
	size_t n = read_start(path, start, sizeof(start), &gzip);
	if (!n || starts_like_record(start, n))
		return false;
	char what[96];
	describe_start(what, sizeof(what), start, n);
	snprintf(why, size, "not a kprof trace (%s %s, not with a msgpack map with a "
		 "\"type\" key)", gzip ? "its gzip content starts with" : "it starts with",
		 what);
	return true;
}

int ka_input_read_file(struct ka_model *m, const char *path)
{
	struct input in = { .model = m, .first_damage = m->n_damaged };
	struct kp_reader_ops ops = { .on_record = on_record, .on_damage = on_damage,
				     .ctx = &in };
	if (!progress.tty) {
		progress.tty = isatty(STDERR_FILENO) ? 1 : -1;
		progress.t0 = now_ns();
	}
	progress.files++;
	int err = kp_read_trace_file(path, &ops);
	progress.bytes_done += in.end;
	if (err)
		return err;
	char why[256];
	if (!in.records && in.damage && foreign(path, why, sizeof(why)))
		return ka_model_note_foreign(m, in.first_damage, path, in.last_decompressed,
					     why);
	if (in.damage > DAMAGE_LISTED)
		return ka_model_note_damage_summary(m, path, in.last_listed_offset,
						    in.last_decompressed,
						    in.damage - DAMAGE_LISTED);
	if (in.records || in.damage)
		return 0;
	/*
	 * A file without one record and without damage is damage too: the
	 * producer creates its file when the process starts, so the process
	 * existed, and none of its trace arrived.
	 */
	struct stat st;
	bool zero = stat(path, &st) == 0 && st.st_size == 0;
	return ka_model_note_empty(m, path, zero ?
		"empty trace file: the process wrote nothing (killed before its "
		"first flush, or its disk was full)" :
		"no record in this trace file: the process wrote nothing (killed "
		"before its first flush, or its disk was full)");
}
