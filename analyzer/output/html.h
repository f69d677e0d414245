/* SPDX-License-Identifier: MIT */
/* The HTML report's parts (html.c and the sections in html_*.c). */
#ifndef KANALYZE_HTML_H
#define KANALYZE_HTML_H

#include <stdio.h>

#include "model.h"

/* Pixels a text of 12px takes at most (the widest of the usual fonts). */
#define KA_HTML_CHAR_PX 7.5
unsigned ka_html_text_px(const char *s);
/* s with <, >, & and " escaped. */
void ka_html_esc(FILE *out, const char *s);
/* html_processes.c: a table of the processes, busiest first. */
int ka_html_processes(FILE *out, const struct ka_model *m);
/* html_timeline.c: the event records as lanes of calls, one per thread
 * (nothing without events). */
int ka_html_timeline(FILE *out, const struct ka_model *m);

#endif
