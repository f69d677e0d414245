# SPDX-License-Identifier: MIT
# What a program can see of its own process, printed by the programs
# themselves (dash, bash, perl, python) and by their children after fork
# and exec: open descriptors and what they are, signal dispositions and
# mask, thread count, children, rlimits, umask, the environment of an
# `env -i` child. Under the shim all of it must be as without it (the
# shim's own descriptors, threads and processes must stay out of sight).
# torture: quick timeout=120
. "$TORTURE_CASES/lib.sh"
# state.sh, for dash and bash: fds PID lists PID's descriptors and their
# kind (the case's own paths cut off); state PID prints what the kernel
# says of PID that a shim could change.
cat > state.sh <<'EOF'
fds() {
	for f in /proc/$1/fd/*; do
		t=$(readlink "$f" 2> /dev/null) || continue
		case $t in
		"$HERE"*) t="cwd${t#"$HERE"}" ;;
		/proc/*) t=proc ;;
		/dev/*) ;;
		/*) t=path ;;
		pipe:* | socket:* | anon_inode:*) t=${t%%:*} ;;
		esac
		echo "  fd ${f##*/} $t"
	done
}
# (read with builtins only: a shell that forks a reader blocks signals
# while it forks)
state() {
	while read -r k v; do
		case $k in
		Threads: | SigBlk: | SigIgn: | SigCgt: | NoNewPrivs: | Seccomp: | Umask:) echo "$k $v" ;;
		esac
	done < /proc/$1/status
	while read -r l; do
		case $l in
		"Max open files"* | "Max processes"* | "Max stack size"* | "Max core"*) echo "$l" ;;
		esac
	done < /proc/$1/limits
	# its children: none (every command above is a builtin). The shim's
	# output process (comm kprof-out) is the one thing of the shim's a
	# program can see, by design (README: "What the program can see of
	# the shim"); it is left out here so that anything else still shows.
	n=0
	for t in /proc/$1/task/*; do
		read -r k < "$t/children"
		for c in $k; do
			read -r comm < /proc/$c/comm 2> /dev/null || comm=gone
			[ "$comm" = kprof-out ] || n=$((n + 1))
		done
	done
	echo "children: $n"
	fds "$1"
}
EOF
export HERE=$PWD
exec 5> five.txt 7< /dev/null
echo "dash:"
dash -c '. ./state.sh; state $$'
echo "bash:"
bash -c '. ./state.sh; state $$'
echo "bash background child:"
# (once it is sleep: before its exec it is still a copy of bash) Seen from
# another process, patch mode's SIGSYS handler shows in SigCgt, by design
# (docs/SHIM.md, "What the program can see of the shim"): left out here,
# the process's view of itself above keeps it.
bash -c '. ./state.sh; sleep 1 & p=$!
	for i in $(seq 1 100); do [ "$(cat /proc/$p/comm)" = sleep ] && break; sleep 0.01; done
	state $p | sed "s/^\(SigCgt: [0-9a-f]\{8\}\)4/\10/"; kill $p; wait'
# Children list their descriptors with ls, a single process (ls's own
# descriptor 3 is the directory it reads): a shell pipeline would show the
# shell's pipes and its signal mask while it forks.
echo "perl:"
perl -e 'open(my $s, "<", "/proc/self/status") or die; print grep(/^(Threads|SigBlk|SigIgn|SigCgt):/, <$s>); close $s;
	my $n = 0; opendir(my $t, "/proc/self/task") or die;
	for my $tid (grep(/^\d+$/, readdir $t)) { open(my $c, "<", "/proc/self/task/$tid/children") or next; my $l = <$c> // ""; for my $p ($l =~ /\d+/g) { open(my $m, "<", "/proc/$p/comm") or next; my $comm = <$m> // ""; $n++ unless $comm eq "kprof-out\n"; } }
	print "children $n\n";
	opendir(my $d, "/proc/self/fd") or die; print "fds ", join(" ", sort { $a <=> $b } grep(/^\d+$/, readdir $d)), "\n"; closedir $d;
	exec("ls", "/proc/self/fd") or die' > perl.out
grep -v '^[0-9]*$' perl.out
echo "exec'd ls: $(grep -x '[0-9]*' perl.out | sort -n | tr '\n' ' ')"
echo "python:"
"$PY" - <<'EOF'
import os, signal, subprocess, resource, threading
print("  fds", sorted(int(f) for f in os.listdir("/proc/self/fd")))
print("  threads", threading.active_count(), len(os.listdir("/proc/self/task")))
print("  handlers", {s.name: str(signal.getsignal(s)) for s in (signal.SIGCHLD, signal.SIGPIPE, signal.SIGSEGV, signal.SIGALRM, signal.SIGPROF, signal.SIGUSR1, signal.SIGSYS)})
print("  mask", sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
print("  nofile", resource.getrlimit(resource.RLIMIT_NOFILE))
def comm(p):
    try:
        return open(f"/proc/{p}/comm").read().strip()
    except OSError:
        return "gone"
# the shim's output process (kprof-out) left out: visible by design
print("  children", [[c for c in open(f"/proc/self/task/{t}/children").read().split() if comm(c) != "kprof-out"] for t in os.listdir("/proc/self/task")])
def child_fds(**kw):
    out = subprocess.run(["ls", "/proc/self/fd"], capture_output=True, text=True, **kw).stdout
    return sorted(int(f) for f in out.split())
print("  child fds (close_fds)", child_fds())
print("  child fds (inherit)", child_fds(close_fds=False))
pid = os.fork()
if pid == 0:
    print("  fork child fds", sorted(int(f) for f in os.listdir("/proc/self/fd")),
          "threads", len(os.listdir("/proc/self/task")), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
EOF
# The shim adds LD_PRELOAD and its KPROF_ settings to a child started with
# an environment of its own (KPROF_FOLLOW=1, the default, README): by
# design, so left out here.
echo "env -i child environment:"
env -i /bin/sh -c 'env | cut -d= -f1 | grep -Ev "^(LD_PRELOAD|KPROF_.*)$" | sort | tr "\n" " "; echo'
echo "env -i child fds:"
env -i /bin/ls /proc/self/fd | sort -n | tr '\n' ' '
echo
