# SPDX-License-Identifier: MIT
# kprof — one Makefile for every tool. Output goes under build/ only.
#   make            build the tools
#   make test       install test prerequisites (as root), build, run tests
#   make check      build, run the quick tier (no root, no installs)
#   make demo       install prerequisites, build, profile a real Node process
#   make install PREFIX=/usr/local
#   make V=1        show full commands; SAN=1 builds with ASan+UBSan
.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:

CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
# the shim, its site helper and the benchmark programs: private to kprof
PKGLIBDIR ?= $(PREFIX)/lib/kprof
PKGDATADIR ?= $(PREFIX)/share/kprof
MANDIR ?= $(PREFIX)/share/man
BUILD := build
ARCH := $(shell uname -m)

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)"
endif

# -Werror where the warnings are ours to fix: make test, make check and CI
# (WERROR=1), not in a plain build with another compiler
WERROR ?= $(if $(CI),1,)
WARN := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
OPT ?= -O2 -g
# CPPFLAGS and LDFLAGS as a distribution's build gives them (hardening)
CFLAGS_BASE := $(OPT) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP -Icommon -I$(BUILD)/gen \
	$(CPPFLAGS)
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SHIM_SANFLAGS := -fsanitize=undefined -fno-sanitize-recover=all
endif
# Tools may be sanitized; the shim is loaded into other programs and gets
# UBSan only (ASan cannot be preloaded ahead of the program's runtime).
TOOL_CFLAGS := $(CFLAGS_BASE) $(SANFLAGS) $(CFLAGS)
SHIM_CFLAGS := $(CFLAGS_BASE) -fPIC -fvisibility=hidden -ftls-model=initial-exec \
	-fno-stack-protector $(SHIM_SANFLAGS) $(CFLAGS)

COMMON_SRC := $(wildcard common/*.c)
GEN_SRC := $(BUILD)/gen/syscalls_x86_64.c $(BUILD)/gen/syscalls_aarch64.c
COMMON_PIC_OBJ := $(COMMON_SRC:%.c=$(BUILD)/pic/%.o) $(GEN_SRC:$(BUILD)/gen/%.c=$(BUILD)/pic/gen/%.o)
COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/obj/%.o) $(GEN_SRC:$(BUILD)/gen/%.c=$(BUILD)/obj/gen/%.o)

# The shim's layers, each calling only those below it (docs/ARCHITECTURE.md):
# core, sink, lifecycle, patch (patch mode's jumps and dispatch), then the
# front ends rewrite and symbols.
SHIM_LAYERS := core sink lifecycle patch rewrite symbols
SHIM_SRC := $(foreach l,$(SHIM_LAYERS),$(wildcard preload/$(l)/*.c))
SHIM_ASM := $(foreach l,$(SHIM_LAYERS),$(wildcard preload/$(l)/*.S))
SHIM_OBJ := $(SHIM_SRC:%.c=$(BUILD)/pic/%.o) $(SHIM_ASM:%.S=$(BUILD)/pic/%.o)
# kanalyze by role (docs/ARCHITECTURE.md): model (input, model, filters,
# profiles), views (what is computed from a model), output (the formats).
ANALYZER_PARTS := model views output
ANALYZER_SRC := $(wildcard analyzer/*.c) $(foreach p,$(ANALYZER_PARTS),$(wildcard analyzer/$(p)/*.c))
ANALYZER_OBJ := $(ANALYZER_SRC:%.c=$(BUILD)/obj/%.o)
ANALYZER_INC := -Ianalyzer $(ANALYZER_PARTS:%=-Ianalyzer/%)

PROGRAMS := $(patsubst programs/%.c,$(BUILD)/programs/%,$(wildcard programs/*.c))
TESTS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(wildcard tests/*.c))

LIBS_ANALYZER := -lmsgpackc -ljansson -lz -lm -lelf -liberty
LIBS_SHIM := -ldl -lpthread
# The shim's rewrite mode runs this helper (capstone, libelf) to find
# syscall instructions: the libraries stay out of every traced process.
LIBS_SITES := -lcapstone -lelf

# kbpf-trace: X.bpf.c is compiled for the BPF target against the pinned
# vmlinux.h, bpftool turns the object into a skeleton header that the user
# side includes.
BPF_SRC := $(wildcard bpf/*.bpf.c)
BPF_OBJ := $(BPF_SRC:bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
BPF_SKEL := $(BPF_SRC:bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h)
TRACER_SRC := $(filter-out %.bpf.c,$(wildcard bpf/*.c))
TRACER_OBJ := $(TRACER_SRC:%.c=$(BUILD)/obj/%.o)
BPF_TARGET_ARCH := $(subst x86_64,x86,$(subst aarch64,arm64,$(ARCH)))
CLANG ?= clang
BPFTOOL ?= bpftool
LIBS_TRACER := -lbpf -lelf -lz -lmsgpackc

RUNNER_SRC := $(wildcard runner/*.c)
RUNNER_OBJ := $(RUNNER_SRC:%.c=$(BUILD)/obj/%.o)
LIBS_RUNNER := -ljansson -lcrypto -lm

TOOLS := $(BUILD)/libkprof.so $(BUILD)/kprof-sites $(BUILD)/kanalyze $(BUILD)/kprof
ifneq ($(RUNNER_SRC),)
TOOLS += $(BUILD)/krunner
endif
ifneq ($(BPF_SRC),)
TOOLS += $(BUILD)/kbpf-trace
endif

.PHONY: all test check demo deps test-deps install clean man
all: $(TOOLS) $(PROGRAMS) $(TESTS)

$(BUILD)/gen/syscalls_%.c: scripts/gen-syscalls.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)scripts/gen-syscalls.sh $* > $@

$(BUILD)/pic/%.o: %.c | $(GEN_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SHIM_CFLAGS) -c $< -o $@
$(BUILD)/pic/%.o: %.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SHIM_CFLAGS) -c $< -o $@
$(BUILD)/pic/gen/%.o: $(BUILD)/gen/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SHIM_CFLAGS) -c $< -o $@
$(BUILD)/obj/%.o: %.c | $(GEN_SRC)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) -c $< -o $@
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) -c $< -o $@

$(BUILD)/libkcommon-pic.a: $(COMMON_PIC_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/libkcommon.a: $(COMMON_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# The version script: every function of hooks.def exported, nothing else.
$(BUILD)/gen/libkprof.map: preload/symbols/hooks.def
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q){ echo '/* Generated from preload/symbols/hooks.def: export the hooks only. */'; \
	  echo '{'; echo '	global:'; \
	  printf '#define KP_HOOK(r, name, ...) name;\n#define KP_HAND(r, name, ...) name;\n#include "hooks.def"\n' | \
	  $(CC) -E -P -Ipreload/symbols -x c - | tr -s ' \n' '\n' | sed -n 's/^\(.*;\)$$/		\1/p'; \
	  echo '	local: *;'; echo '};'; } > $@.tmp && mv $@.tmp $@

$(BUILD)/libkprof.so: $(SHIM_OBJ) $(BUILD)/libkcommon-pic.a $(BUILD)/gen/libkprof.map
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -shared $(SHIM_SANFLAGS) -Wl,--version-script=$(BUILD)/gen/libkprof.map -Wl,-z,now \
		-o $@ $(SHIM_OBJ) $(BUILD)/libkcommon-pic.a $(LIBS_SHIM)

$(BUILD)/kprof-sites: preload/helper/kprof_sites.c preload/helper/sites_elf.c \
		preload/helper/plan.c preload/helper/func_bounds.c \
		preload/helper/x86_len.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $(TOOL_CFLAGS) -o $@ $^ $(LIBS_SITES)

# kprof: the front door (one command: run, trace, print)
KPROF_SRC := $(wildcard kprof/*.c)
$(KPROF_SRC:%.c=$(BUILD)/obj/%.o): TOOL_CFLAGS += -DKPROF_LIBDIR='"$(PKGLIBDIR)"'
$(BUILD)/kprof: $(KPROF_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/libkcommon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $(SANFLAGS) -o $@ $^

$(BUILD)/kanalyze: $(ANALYZER_OBJ) $(BUILD)/libkcommon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $(SANFLAGS) -o $@ $(ANALYZER_OBJ) $(BUILD)/libkcommon.a $(LIBS_ANALYZER)
$(ANALYZER_OBJ): TOOL_CFLAGS += $(ANALYZER_INC)

# -mcpu=v3: atomic fetch-and-add that returns (kernel 5.12; the programs
# need 5.17's bpf_loop anyway)
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_TARGET_ARCH) -MMD -MP \
		-Wall -Werror -Ibpf/vmlinux/$(ARCH) -Icommon -Ibpf -c $< -o $@
$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@
$(TRACER_OBJ): $(BPF_SKEL)
$(TRACER_OBJ): TOOL_CFLAGS += -I$(BUILD)/bpf
$(BUILD)/kbpf-trace: $(TRACER_OBJ) $(BUILD)/libkcommon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $(SANFLAGS) -o $@ $(TRACER_OBJ) $(BUILD)/libkcommon.a $(LIBS_TRACER)

$(BUILD)/krunner: $(RUNNER_OBJ) $(BUILD)/libkcommon.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $(SANFLAGS) -o $@ $(RUNNER_OBJ) $(BUILD)/libkcommon.a $(LIBS_RUNNER)

# Benchmark and test programs: one C file each. They are the *profiled*
# programs, so they are built plainly (no sanitizer) unless noted.
$(BUILD)/programs/%: programs/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_BASE) $(CFLAGS) -o $@ $< -lpthread
# Statically linked test programs (no dynamic loader: what no LD_PRELOAD
# shim can see). More specific than the rule below, so make prefers it.
$(BUILD)/tests/static_%: tests/static_%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_BASE) $(CFLAGS) -static -o $@ $<
# kbpf-trace --stacks walks frame pointers: its test program keeps them.
$(BUILD)/tests/bpf_stacks: CFLAGS += -fno-omit-frame-pointer -fno-optimize-sibling-calls
# The runner's statistics, checked on generated samples: tools' flags.
$(BUILD)/tests/runner_stats: tests/runner_stats.c runner/stats.c runner/stats.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) -Irunner -o $@ tests/runner_stats.c runner/stats.c -lm
# Test programs run under the shim, so SAN=1 gives them what it gives the
# shim (UBSan; an ASan program cannot have a library preloaded before its
# runtime) and they link the common code built that way.
$(BUILD)/tests/%: tests/%.c $(BUILD)/libkcommon-pic.a
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS_BASE) $(SHIM_SANFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libkcommon-pic.a -lmsgpackc -lz -lpthread

# libFuzzer targets (tests/fuzz/*.c, clang): the record decoder, gzip input
# and kanalyze's model. Each is one clang command over its sources, so no
# object is shared with the gcc build. `make fuzz FUZZ_SECONDS=N` runs each
# for N s on a seed corpus of real traces (tests/fuzz/run.sh).
FUZZ_SRC := $(wildcard tests/fuzz/*.c)
FUZZERS := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_LIB_SRC := $(COMMON_SRC) $(GEN_SRC)
$(BUILD)/fuzz/fuzz_records: FUZZ_LIB_SRC += $(filter-out analyzer/main.c,$(ANALYZER_SRC))
FUZZ_SECONDS ?= 300
$(BUILD)/fuzz/%: tests/fuzz/%.c $(COMMON_SRC) $(GEN_SRC) $(ANALYZER_SRC)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(WARN) -std=gnu11 -D_GNU_SOURCE -Icommon $(ANALYZER_INC) \
		-I$(BUILD)/gen -o $@ $< $(FUZZ_LIB_SRC) $(LIBS_ANALYZER)
.PHONY: fuzz fuzz-build soak
fuzz-build: $(FUZZERS)
fuzz: fuzz-build $(BUILD)/libkprof.so $(TESTS)
	$(Q)BUILD=$(abspath $(BUILD)) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# 30-minute soak (not in CI): Node HTTP server under the shim, bounded load.
SOAK_MINUTES ?= 30
soak: $(BUILD)/libkprof.so $(BUILD)/kanalyze
	$(Q)BUILD=$(abspath $(BUILD)) SOAK_MINUTES=$(SOAK_MINUTES) tests/soak/soak.sh

# Torture suite (not in CI; its quick part is tests/t_torture_quick.sh):
# foreign test suites and programs run plain and under the shim in both
# hook modes, compared (docs/TORTURE.md). TORTURE_ARGS: e.g. --mode=symbols
# or case names.
.PHONY: torture
torture: $(BUILD)/libkprof.so $(BUILD)/kanalyze
	$(Q)BUILD=$(abspath $(BUILD)) tests/torture/run.sh $(TORTURE_ARGS)

deps:
	$(Q)scripts/install-deps.sh demo
test-deps:
	$(Q)scripts/install-deps.sh test

# make test: every test, as many at once as there are CPUs (those that
# measure time alone, after them); make check: the tier that needs no
# root and no package beyond the build's, jq and strace, and installs none.
NPROC := $(shell nproc 2>/dev/null || echo 1)
test: test-deps
	$(Q)$(MAKE) --no-print-directory all WERROR=1
	$(Q)BUILD=$(abspath $(BUILD)) tests/run.sh -j$(NPROC)
check:
	$(Q)$(MAKE) --no-print-directory all WERROR=1
	$(Q)scripts/install-deps.sh --verify check
	$(Q)BUILD=$(abspath $(BUILD)) tests/run.sh -j$(NPROC) --tier=check

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

# the man pages of the tools, from their --help (help2man; the pages are
# kept in man/, regenerated when a --help changes); man/libkprof.7 is
# written by hand
man: $(TOOLS)
	$(Q)set -e; printf '%s\n' "kprof:run a command and print its system calls, as strace -c does" \
		"kanalyze:read kprof traces and print syscall profiles" \
		"kbpf-trace:trace every syscall of processes from the kernel side" \
		"krunner:run benchmark suites and compare results honestly" | \
	while IFS=: read -r tool what; do \
		help2man -N --no-discard-stderr -S kprof -s 1 -n "$$what" -o man/$$tool.1 $(BUILD)/$$tool; \
	done

# make install [PREFIX=/usr/local] [DESTDIR=...]: kprof, kanalyze, krunner
# and kbpf-trace in bin/; the shim, its helper (found beside it) and the
# benchmark programs in lib/kprof/; the programs' inputs in share/kprof/;
# the man pages; bash completion. Each tool finds the others from where
# it runs.
PROGRAM_INPUTS := $(shell find programs -type f ! -name '*.c' ! -name '*.h' 2>/dev/null)
install: $(TOOLS) $(PROGRAMS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBDIR)/programs \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7
	install -m 0755 $(BUILD)/kprof $(BUILD)/kanalyze $(DESTDIR)$(BINDIR)/
	if [ -f $(BUILD)/krunner ]; then install -m 0755 $(BUILD)/krunner $(DESTDIR)$(BINDIR)/; fi
	if [ -f $(BUILD)/kbpf-trace ]; then install -m 0755 $(BUILD)/kbpf-trace $(DESTDIR)$(BINDIR)/; fi
	install -m 0755 $(BUILD)/libkprof.so $(BUILD)/kprof-sites $(DESTDIR)$(PKGLIBDIR)/
	install -m 0755 $(PROGRAMS) $(DESTDIR)$(PKGLIBDIR)/programs/
	for f in $(PROGRAM_INPUTS); do install -D -m 0644 $$f $(DESTDIR)$(PKGDATADIR)/$$f; done
	install -m 0644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/*.7 $(DESTDIR)$(MANDIR)/man7/
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	for t in kprof kanalyze kbpf-trace krunner; do \
		install -m 0644 completions/kprof $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$t; \
	done

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
