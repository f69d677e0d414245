// SPDX-License-Identifier: MIT
// The torture suite's Java workload (tests/torture/cases/java.sh): a
// thread pool, contended locks, a latch and a barrier, child processes
// (ProcessBuilder: several at once, an exit status, a pipeline, a
// redirect to a file), a TCP echo server on 127.0.0.1 with clients in
// threads, file channels with a lock, NullPointerExceptions from
// JIT-compiled code (the JVM's implicit null checks: a SIGSEGV it
// handles) and a few collections. Prints only what is the same on every
// run: results in a fixed order, no times, pids or ports.
import java.io.*;
import java.net.*;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.security.MessageDigest;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicLong;

public class Torture {
    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }

    static String sha256(byte[] data) throws Exception {
        return hex(MessageDigest.getInstance("SHA-256").digest(data));
    }

    static void pool() throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(4);
        List<Future<String>> fs = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            final int n = i;
            fs.add(ex.submit(() -> {
                byte[] data = new byte[64 * 1024 + n];
                for (int j = 0; j < data.length; j++) data[j] = (byte) (j * 31 + n);
                return "task " + n + " " + sha256(data).substring(0, 16);
            }));
        }
        for (Future<String> f : fs) System.out.println(f.get());
        ex.shutdown();
        System.out.println("pool terminated: " + ex.awaitTermination(60, TimeUnit.SECONDS));
    }

    static long counter;

    static void locks() throws Exception {
        Thread[] ts = new Thread[8];
        CyclicBarrier barrier = new CyclicBarrier(ts.length);
        CountDownLatch done = new CountDownLatch(ts.length);
        AtomicLong atomic = new AtomicLong();
        Object lock = new Object();
        ConcurrentHashMap<Integer, Integer> map = new ConcurrentHashMap<>();
        for (int i = 0; i < ts.length; i++) {
            final int id = i;
            ts[i] = new Thread(() -> {
                try {
                    barrier.await();
                    for (int k = 0; k < 50000; k++) {
                        synchronized (lock) { counter++; }
                        atomic.incrementAndGet();
                        map.merge(k % 97, 1, Integer::sum);
                        if (k % 5000 == 0) Thread.yield();
                    }
                    Thread.sleep(id);
                } catch (Exception e) {
                    System.out.println("thread " + id + ": " + e);
                }
                done.countDown();
            }, "worker-" + i);
            ts[i].start();
        }
        System.out.println("latch: " + done.await(60, TimeUnit.SECONDS));
        for (Thread t : ts) t.join();
        int sum = 0;
        for (int v : map.values()) sum += v;
        System.out.println("synchronized " + counter + " atomic " + atomic.get() + " map " + map.size() + " " + sum);
    }

    static String run(ProcessBuilder pb) throws Exception {
        pb.redirectErrorStream(true);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        return out + " (exit " + p.waitFor() + ")";
    }

    static void processes() throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(4);
        List<Future<String>> fs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            final int n = i;
            fs.add(ex.submit(() -> run(new ProcessBuilder("/bin/echo", "child", Integer.toString(n)))));
        }
        for (Future<String> f : fs) System.out.println(f.get());
        ex.shutdown();
        ex.awaitTermination(60, TimeUnit.SECONDS);
        System.out.println("sh: " + run(new ProcessBuilder("/bin/sh", "-c", "echo from sh; exit 3")));
        ProcessBuilder env = new ProcessBuilder("/bin/sh", "-c", "echo $TORTURE_JAVA");
        env.environment().put("TORTURE_JAVA", "set by java");
        System.out.println("env: " + run(env));
        // A pipeline of three processes joined by pipes
        List<Process> pipe = ProcessBuilder.startPipeline(List.of(
            new ProcessBuilder("/usr/bin/seq", "1", "20000"),
            new ProcessBuilder("/usr/bin/tr", "0-9", "a-j"),
            new ProcessBuilder("/usr/bin/wc", "-c")));
        Process last = pipe.get(pipe.size() - 1);
        String n = new String(last.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        for (Process p : pipe) p.waitFor();
        System.out.println("pipeline bytes: " + n);
        // stdin from Java, stdout to a file
        File out = new File("sorted.txt");
        Process sort = new ProcessBuilder("/usr/bin/sort", "-n").redirectOutput(out).start();
        try (Writer w = new OutputStreamWriter(sort.getOutputStream(), StandardCharsets.UTF_8)) {
            for (int i = 500; i > 0; i--) w.write(i + "\n");
        }
        System.out.println("sort: exit " + sort.waitFor() + ", " + Files.readAllLines(out.toPath()).size()
            + " lines, first " + Files.readAllLines(out.toPath()).get(0));
        Process sleeper = new ProcessBuilder("/bin/sleep", "30").start();
        sleeper.destroy();
        System.out.println("destroyed sleep: exit " + sleeper.waitFor());
    }

    static void echo() throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 16, InetAddress.getByName("127.0.0.1"))) {
            Thread server = new Thread(() -> {
                ExecutorService conns = Executors.newCachedThreadPool();
                try {
                    for (int i = 0; i < 6; i++) {
                        Socket s = ss.accept();
                        conns.submit(() -> {
                            try (s) {
                                s.getInputStream().transferTo(s.getOutputStream());
                            } catch (IOException e) {
                                System.out.println("server: " + e);
                            }
                            return null;
                        });
                    }
                } catch (IOException e) {
                    System.out.println("accept: " + e);
                }
                conns.shutdown();
            });
            server.start();
            ExecutorService clients = Executors.newFixedThreadPool(6);
            List<Future<String>> fs = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                final int n = i;
                fs.add(clients.submit(() -> {
                    byte[] data = new byte[128 * 1024 * (n + 1)];
                    Arrays.fill(data, (byte) ('a' + n));
                    try (Socket s = new Socket(ss.getInetAddress(), ss.getLocalPort())) {
                        Thread w = new Thread(() -> {
                            try {
                                s.getOutputStream().write(data);
                                s.shutdownOutput();
                            } catch (IOException e) {
                                System.out.println("client write: " + e);
                            }
                        });
                        w.start();
                        byte[] back = s.getInputStream().readAllBytes();
                        w.join();
                        return "echo " + n + " " + back.length + " " + Arrays.equals(data, back);
                    }
                }));
            }
            for (Future<String> f : fs) System.out.println(f.get());
            clients.shutdown();
            server.join();
        }
    }

    static void files() throws Exception {
        Path p = Paths.get("data.bin");
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            try (FileLock l = ch.lock()) {
                ByteBuffer b = ByteBuffer.allocateDirect(4096);
                for (int i = 0; i < 256; i++) {
                    b.clear();
                    while (b.hasRemaining()) b.put((byte) i);
                    b.flip();
                    ch.write(b, (long) i * 4096);
                }
                ch.force(true);
            }
            ByteBuffer b = ByteBuffer.allocate(4096);
            ch.read(b, 100 * 4096);
            System.out.println("file size " + ch.size() + " byte at block 100: " + b.get(0));
        }
        System.out.println("file sha256 " + sha256(Files.readAllBytes(p)).substring(0, 16));
        Files.delete(p);
    }

    static int field;

    static final class Box {
        int v;
        Box(int v) { this.v = v; }
    }

    static int get(Box b) { return b.v; }

    static void nulls() {
        // Warm get() up so that the JIT compiles it with an implicit null
        // check (a load that faults), then pass null.
        Box b = new Box(1);
        long sum = 0;
        for (int i = 0; i < 200000; i++) sum += get(b);
        int caught = 0;
        for (int i = 0; i < 1000; i++) {
            try {
                sum += get(i % 2 == 0 ? null : b);
            } catch (NullPointerException e) {
                caught++;
            }
        }
        System.out.println("npe caught " + caught + " sum " + sum);
    }

    public static void main(String[] args) throws Exception {
        pool();
        locks();
        processes();
        echo();
        files();
        nulls();
        List<byte[]> garbage = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            garbage.add(new byte[16 * 1024]);
            if (garbage.size() > 200) garbage.clear();
        }
        System.gc();
        System.out.println("threads alive at the end: " + (Thread.activeCount() >= 1));
        System.out.println("done");
    }
}
