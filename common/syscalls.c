/* Lookups over the generated per-architecture syscall tables. */
#include <stddef.h>
#include <string.h>

#include "syscalls.h"

const char *kp_host_arch(void)
{
#if defined(__x86_64__)
	return "x86_64";
#elif defined(__aarch64__)
	return "aarch64";
#else
#error "kprof: unsupported architecture (add a table in scripts/gen-syscalls.sh)"
#endif
}

const struct kp_syscall_entry *kp_syscall_table(const char *arch,
						unsigned *count)
{
	if (!arch || !*arch)
		arch = kp_host_arch();
	if (strcmp(arch, "x86_64") == 0) {
		*count = kp_syscalls_x86_64_count;
		return kp_syscalls_x86_64;
	}
	if (strcmp(arch, "aarch64") == 0) {
		*count = kp_syscalls_aarch64_count;
		return kp_syscalls_aarch64;
	}
	*count = 0;
	return NULL;
}

const char *kp_syscall_name(const char *arch, unsigned nr)
{
	unsigned count;
	const struct kp_syscall_entry *t = kp_syscall_table(arch, &count);
	for (unsigned i = 0; t && i < count; i++)
		if (t[i].nr == nr)
			return t[i].name;
	return NULL;
}

int kp_syscall_nr(const char *arch, const char *name)
{
	unsigned count;
	const struct kp_syscall_entry *t = kp_syscall_table(arch, &count);
	for (unsigned i = 0; t && i < count; i++)
		if (strcmp(t[i].name, name) == 0)
			return (int)t[i].nr;
	return -1;
}
