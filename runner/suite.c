/* SPDX-License-Identifier: MIT */
/*
 * suite: the registry of suites (each suite file registers itself from a
 * constructor, so adding one touches no other file) and the values of the
 * options suites declare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite.h"

#define MAX_SUITES 64
#define MAX_SUITE_OPTIONS 128

static const struct suite *suites[MAX_SUITES];
static size_t n_suites;
static bool sorted;

static struct {
	const char *name;
	const char *value;
} option_values[MAX_SUITE_OPTIONS];
static size_t n_option_values;

void suite_register(const struct suite *suite)
{
	if (n_suites == MAX_SUITES) {
		fprintf(stderr, "krunner: too many suites (raise MAX_SUITES in runner/suite.c)\n");
		abort();
	}
	suites[n_suites++] = suite;
	sorted = false;
}

static int cmp_suite(const void *a, const void *b)
{
	return strcmp((*(const struct suite *const *)a)->name,
		      (*(const struct suite *const *)b)->name);
}

static void sort_suites(void)
{
	if (!sorted)
		qsort(suites, n_suites, sizeof(suites[0]), cmp_suite);
	sorted = true;
}

size_t suite_count(void)
{
	return n_suites;
}

const struct suite *suite_at(size_t i)
{
	sort_suites();
	return i < n_suites ? suites[i] : NULL;
}

const struct suite *suite_find(const char *name)
{
	for (size_t i = 0; i < n_suites; i++)
		if (strcmp(suites[i]->name, name) == 0)
			return suites[i];
	return NULL;
}

int suite_option_set(const char *name, const char *value)
{
	for (size_t i = 0; i < n_option_values; i++)
		if (strcmp(option_values[i].name, name) == 0) {
			option_values[i].value = value;
			return 0;
		}
	if (n_option_values == MAX_SUITE_OPTIONS)
		return -1;
	option_values[n_option_values].name = name;
	option_values[n_option_values].value = value;
	n_option_values++;
	return 0;
}

const char *suite_option_value(const struct suite *suite, const char *name)
{
	for (size_t i = 0; i < n_option_values; i++)
		if (strcmp(option_values[i].name, name) == 0)
			return option_values[i].value;
	for (size_t i = 0; i < suite->n_options; i++)
		if (strcmp(suite->options[i].name, name) == 0)
			return suite->options[i].default_value;
	return NULL;
}

size_t suite_options_given(const char **names, const char **values, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; i < n_option_values && n < cap; i++, n++) {
		names[n] = option_values[i].name;
		values[n] = option_values[i].value;
	}
	return n;
}
