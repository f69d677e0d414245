/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * kprof's version, one number for every tool (kprof, kanalyze,
 * kbpf-trace, krunner, kprof-sites) and the result files.
 */
#ifndef KPROF_COMMON_VERSION_H
#define KPROF_COMMON_VERSION_H

#define KPROF_VERSION "0.2.0"

#endif
