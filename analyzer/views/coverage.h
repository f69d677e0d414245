/* SPDX-License-Identifier: MIT */
/* kanalyze --coverage: one trace's calls as a share of another's. */
#ifndef KANALYZE_COVERAGE_H
#define KANALYZE_COVERAGE_H

#include <stdbool.h>
#include <stdio.h>

#include "profile.h"

int ka_report_coverage(FILE *out, const struct ka_model *a,
		       const struct ka_model *b, const char *label_a,
		       const char *label_b, bool json, bool markdown,
		       bool after_start);

#endif
