/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the record decoder (common/record_reader.c) and what
 * kanalyze builds from its records (analyzer/model/model.c, the table and JSON
 * reports, the report of how streams end). The input is a record stream;
 * the first byte chooses how it is cut into kp_reader_feed() pieces, so
 * that records split across feeds are exercised too. Gzip input has its
 * own target (fuzz_gzip.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "record_reader.h"
#include "report.h"
#include "views.h"

static FILE *devnull;

static void consume(const uint8_t *data, size_t size, size_t piece)
{
	struct ka_model m;
	ka_model_init(&m);
	m.keep_events = m.keep_history = true;
	struct kp_reader_ops ops = {
		.on_record = ka_model_on_record,
		.on_damage = ka_model_on_damage,
		.ctx = &m,
	};
	struct kp_reader *r;
	if (kp_reader_new(&r, "fuzz", &ops) == 0) {
		int err = 0;
		for (size_t off = 0; off < size && !err; off += piece) {
			size_t n = size - off < piece ? size - off : piece;
			err = kp_reader_feed(r, data + off, n);
		}
		if (!err)
			kp_reader_finish(r);
		kp_reader_free(r);
	}
	m.whole_tree = true;
	ka_model_check_forks(&m);
	ka_model_sort_streams(&m);
	if (!m.n_streams) { /* most inputs: the reports' setup costs 5 ms */
		ka_model_free(&m);
		return;
	}
	struct ka_report_opts o;
	memset(&o, 0, sizeof(o));
	o.errors = o.percentiles = true;
	ka_report_table(devnull, &m, &o);
	ka_report_json(devnull, &m, &o);
	struct ka_ends ends;
	ka_report_ends(devnull, &m, &ends);
	ka_model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (size < 1)
		return 0;
	static const size_t pieces[] = { 1 << 20, 1, 7, 64, 4096 };
	size_t piece = pieces[data[0] % 5];
	data++, size--;
	/* gzip magic: that is fuzz_gzip's input, keep this one on msgpack */
	if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)
		return 0;
	consume(data, size, piece);
	return 0;
}
