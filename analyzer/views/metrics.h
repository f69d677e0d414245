/* SPDX-License-Identifier: MIT */
/* kanalyze --metrics: the merged profile as a Prometheus target (metrics.c). */
#ifndef KANALYZE_METRICS_H
#define KANALYZE_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "model.h"

/* A listening TCP socket on "HOST:PORT" (IPv4; port 0: any), its address
 * as bound in bound; -errno with a message printed. */
int ka_metrics_open(const char *address, char *bound, size_t size);
/* The exposition text of m. */
int ka_metrics_write(FILE *out, const struct ka_model *m, unsigned producers);
/* Accepts one scrape on lfd and answers it. */
void ka_metrics_serve(int lfd, const struct ka_model *m, unsigned producers);

#endif
