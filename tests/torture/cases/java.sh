# SPDX-License-Identifier: MIT
# Java 17: javac compiles tests/torture/java/Torture.java (javac is a
# Java program too), then the JVM runs it: a thread pool, contended
# locks, child processes started by ProcessBuilder (at once, a pipeline,
# stdin from Java, a destroyed one), a TCP echo server on 127.0.0.1,
# file channels, NullPointerExceptions from JIT-compiled code. The JVM
# relies on SIGSEGV for those (docs/SHIM.md says rewrite mode's landing
# pad at address 0 hides such faults in the lowest page).
# torture: timeout=240
. "$TORTURE_CASES/lib.sh"
JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
[ -x "$JAVA_HOME/bin/javac" ] || { echo "openjdk-17-jdk-headless missing (scripts/install-deps.sh test)"; exit 1; }
# No user settings (the JVM reads them from the environment)
unset JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS CLASSPATH
"$JAVA_HOME/bin/javac" -d classes "$TORTURE_CASES/java/Torture.java" > javac.log 2>&1
echo "javac: exit $?"
"$JAVA_HOME/bin/java" -Xmx256m -cp classes Torture > java.out 2> java.err
echo "java: exit $?"
cat java.out
# A crashed JVM names the signal in its hs_err report
grep -h -m 1 -E '^# +(SIG[A-Z]+|Internal Error)' java.err hs_err_pid*.log 2> /dev/null | sed 's/pid=[0-9]*/pid=?/; s/tid=[0-9]*/tid=?/; s/0x[0-9a-f]*/0x?/g'
