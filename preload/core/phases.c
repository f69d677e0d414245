/* SPDX-License-Identifier: MIT */
/* Start-up steps and their durations (phases.h). */
#include <string.h>

#include "base.h"
#include "clock.h"
#include "phases.h"

#define MAX_STEPS 24

static struct {
	uint64_t t0, last;
	unsigned n;
	const char *name[MAX_STEPS];
	uint64_t ns[MAX_STEPS];
} steps;

void kp_phase(const char *step)
{
	uint64_t now = kp_mono_ns();
	if (!steps.t0) {
		steps.t0 = steps.last = now;
		return;
	}
	if (steps.n < MAX_STEPS) {
		steps.name[steps.n] = step;
		steps.ns[steps.n++] = now - steps.last;
	}
	steps.last = now;
}

static void add(char *buf, size_t cap, size_t *len, const char *s)
{
	size_t n = strlen(s);
	if (*len + n >= cap)
		n = cap - 1 - *len;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = 0;
}

void kp_phases_say(const char *what)
{
	if (kp_config.debug && steps.n) {
		char line[1024], num[24];
		size_t len = 0;
		line[0] = 0;
		add(line, sizeof(line), &len, what);
		add(line, sizeof(line), &len, " ");
		add(line, sizeof(line), &len, kp_u64_dec(num, (steps.last - steps.t0) / 1000));
		add(line, sizeof(line), &len, " us:");
		for (unsigned i = 0; i < steps.n; i++) {
			add(line, sizeof(line), &len, i ? ", " : " ");
			add(line, sizeof(line), &len, steps.name[i]);
			add(line, sizeof(line), &len, " ");
			add(line, sizeof(line), &len, kp_u64_dec(num, steps.ns[i] / 1000));
		}
		kp_debug(line);
	}
	memset(&steps, 0, sizeof(steps));
}
