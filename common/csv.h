/* SPDX-License-Identifier: MIT */
/*
 * One CSV field as RFC 4180 writes it, for every tool that exports CSV
 * (kanalyze --format=csv, krunner run --export-csv).
 */
#ifndef KPROF_CSV_H
#define KPROF_CSV_H
#include <stdio.h>

/* s as it is, or quoted (quotes doubled) when it holds a comma, a quote or
 * a line break; NULL writes an empty field. */
void kp_csv_field(FILE *out, const char *s);

#endif
