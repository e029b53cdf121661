// mcpool bench peer: the Java binding (io.mcpool over JNI over the C ABI); protocol: ../PROTOCOL.md.
// usage: java -Dmcpool.jni.library=.../libmcpool_jni.so -cp mcpool.jar:DIR Driver HOST:PORT
// Configuration: io.mcpool.Mcpool, text protocol, TCP_NODELAY (default), the binding's default
// value format (mcpool's own: flags in bits 16-24); one client shared by every thread with at
// most POOL connections per server (kept while the pool size and compression repeat, as the C
// ABI driver keeps its client); bulk: compression(true), threshold 30 KiB, the core's zlib at its
// default level.
import io.mcpool.Mcpool;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

public class Driver {
    static String server;

    static byte[] value(int n) {
        byte[] v = new byte[n];
        for (int i = 0; i < n; i++) v[i] = (byte) ('a' + (i * 7 + i / 13) % 26);
        return v;
    }

    /** The value of PROTOCOL.md by kind: letters, or digits ("0 1 2 3 ...", cut at n). */
    static byte[] value(int n, String kind) {
        if (kind.equals("letters")) return value(n);
        if (!kind.equals("digits")) throw new IllegalArgumentException("unknown value kind " + kind);
        StringBuilder b = new StringBuilder(n + 12);
        for (int i = 0; b.length() < n; i++) b.append(i).append(' ');
        b.setLength(n);
        return b.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    static Mcpool client(int pool, boolean compress) {
        return Mcpool.builder().servers(server).maxConnections(pool)
            .compression(compress).compressionThreshold(30 * 1024).build();
    }

    /** The client for a shape of work (pool size, compression), kept while the shape repeats
     * (as the other drivers keep theirs), so a timed mix never pays for opening its pool. */
    static final Map<String, Mcpool> shapes = new HashMap<>();

    static Mcpool shaped(int pool, boolean compress) {
        return shapes.computeIfAbsent(pool + "/" + compress, k -> client(pool, compress));
    }

    static long rnd(long[] s) {
        long x = s[0];
        x ^= x >>> 12; x ^= x << 25; x ^= x >>> 27;
        s[0] = x;
        return ((x * 0x2545F4914F6CDD1DL) >>> 32);
    }

    public static void main(String[] args) throws Exception {
        server = args[0];
        Mcpool c = client(16, false);
        System.out.println("ready mcpool-java " + Mcpool.coreVersion() + " (JNI, Java "
            + System.getProperty("java.version") + ")");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split("\\s+");
            if (w[0].isEmpty()) continue;
            if (w[0].equals("quit")) break;
            String out;
            try {
                switch (w[0]) {
                    case "seq": out = seq(c, w[1], Integer.parseInt(w[2]), Integer.parseInt(w[3]), w[4], Long.parseLong(w[5])); break;
                    case "mget": {
                        int k = Integer.parseInt(w[1]);
                        long calls = Long.parseLong(w[2]);
                        String[] keys = new String[k];
                        for (int i = 0; i < k; i++) keys[i] = w[3] + i;
                        long errors = 0, t0 = System.nanoTime();
                        for (long i = 0; i < calls; i++) if (c.getMulti(keys).size() != k) errors++;
                        out = "ok ns=" + (System.nanoTime() - t0) + " errors=" + errors;
                        break;
                    }
                    case "fill": {
                        int ks = Integer.parseInt(w[1]);
                        byte[] v = value(Integer.parseInt(w[2]), w[5]);
                        Mcpool fc = shaped(16, w[3].equals("1"));
                        long errors = 0, t0 = System.nanoTime();
                        for (int i = 0; i < ks; i++) if (!fc.set(w[4] + i, v)) errors++;
                        out = "ok ns=" + (System.nanoTime() - t0) + " errors=" + errors;
                        break;
                    }
                    case "mix": out = mix(shaped(Integer.parseInt(w[7]), w[8].equals("1")), w); break;
                    default: out = "err unknown command " + w[0];
                }
            } catch (Exception e) {
                out = "err " + e.toString().replace('\n', ' ');
            }
            System.out.println(out);
            System.out.flush();
        }
        c.close();
        for (Mcpool m : shapes.values()) m.close();
        System.exit(0);
    }

    static String seq(Mcpool c, String op, int n, int size, String prefix, long slice) {
        byte[] v = value(size);
        String[] keys = new String[n];
        for (int i = 0; i < n; i++) keys[i] = prefix + i;
        long errors = 0, t0 = System.nanoTime(), mark = t0;
        StringBuilder slices = new StringBuilder();
        for (int i = 0; i < n; i++) {
            boolean ok;
            switch (op) {
                case "set": ok = c.set(keys[i], v); break;
                case "add": ok = c.add(keys[i], v, 0); break;
                case "replace": ok = c.replace(keys[i], v, 0); break;
                case "get": ok = c.get(keys[i]) != null; break;
                default: ok = c.delete(keys[i]);
            }
            if (!ok) errors++;
            if (slice > 0 && (i + 1) % slice == 0) {
                long t = System.nanoTime();
                if (slices.length() > 0) slices.append(',');
                slices.append(t - mark);
                mark = t;
            }
        }
        String out = "ok ns=" + (System.nanoTime() - t0) + " errors=" + errors;
        if (slices.length() > 0) out += " slices=" + slices;
        return out;
    }

    static String mix(Mcpool c, String[] w) throws Exception {
        int threads = Integer.parseInt(w[1]);
        int ops = Integer.parseInt(w[2]);
        byte[] v = value(Integer.parseInt(w[3]), w[10]);
        int keyspace = Integer.parseInt(w[4]);
        int getpct = Integer.parseInt(w[5]);
        int mget = Integer.parseInt(w[6]);
        String prefix = w[9];
        // The wall time runs from the first worker's start to the last worker's end, each taken
        // by the worker itself (as the tool's own mix does): the main thread, woken after the
        // start, may be scheduled long after the workers began (hundreds of threads on two
        // CPUs), so its clock would start late and report impossible rates. The start releases
        // every worker at once, as a C or Rust barrier's wake-all does: the last thread to be
        // ready unparks all the others (a CyclicBarrier would hand its lock from one woken
        // thread to the next, starting them one after another).
        StartGate gate = new StartGate(threads);
        long[][] lat = new long[threads][ops];
        long[][] sums = new long[threads][5];
        long[] starts = new long[threads], ends = new long[threads];
        Thread[] ts = new Thread[threads];
        gate.threads = ts;
        for (int t = 0; t < threads; t++) {
            final int id = t;
            ts[t] = new Thread(null, () -> {
                long[] s = {(id + 1) * 0x9E3779B97F4A7C15L | 1};
                String[] keys = new String[Math.max(mget, 1)];
                starts[id] = gate.await();
                for (int o = 0; o < ops; o++) {
                    boolean get = Long.remainderUnsigned(rnd(s), 100) < getpct;
                    long first = Long.remainderUnsigned(rnd(s), keyspace);
                    long t0 = System.nanoTime();
                    boolean ok;
                    try {
                        if (get && mget > 1) {
                            for (int j = 0; j < mget; j++) keys[j] = prefix + ((first + j) % keyspace);
                            ok = c.getMulti(keys).size() == mget;
                        } else if (get) {
                            ok = c.get(prefix + first) != null;
                        } else {
                            ok = c.set(prefix + first, v);
                        }
                    } catch (Exception e) {
                        ok = false;
                    }
                    long d = System.nanoTime() - t0;
                    lat[id][o] = d;
                    if (get) { sums[id][0] += d; sums[id][1]++; } else { sums[id][2] += d; sums[id][3]++; }
                    if (!ok) sums[id][4]++;
                }
                ends[id] = System.nanoTime();
                gate.finish(); // exit together, after the clock: see StartGate
            }, "w" + t, 256 * 1024);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        long first = Long.MAX_VALUE, last = Long.MIN_VALUE;
        for (int t = 0; t < threads; t++) {
            first = Math.min(first, starts[t]);
            last = Math.max(last, ends[t]);
        }
        long ns = threads > 0 ? last - first : 0;
        long[] all = new long[threads * ops];
        long[] tot = new long[5];
        for (int t = 0; t < threads; t++) {
            System.arraycopy(lat[t], 0, all, t * ops, ops);
            for (int i = 0; i < 5; i++) tot[i] += sums[t][i];
        }
        Arrays.sort(all);
        String out = String.format("ok ns=%d errors=%d lat=%.1f,%.1f,%.1f", ns, tot[4], pct(all, 50), pct(all, 99), pct(all, 99.9));
        if (tot[1] > 0) out += String.format(" get_us=%.2f", tot[0] / 1000.0 / tot[1]);
        if (tot[3] > 0) out += String.format(" set_us=%.2f", tot[2] / 1000.0 / tot[3]);
        return out;
    }

    /**
     * Releases every worker at once: the last to arrive unparks all the others. And holds the
     * finished workers until the last one finished, so that no thread exits inside the timed
     * window: a JVM thread's exit (guard-page mmap, thread-list updates) would otherwise slow
     * the stragglers still running, which a C or Rust driver's exiting threads do not.
     */
    static final class StartGate {
        final AtomicInteger ready = new AtomicInteger();
        final AtomicInteger running = new AtomicInteger();
        final int parties;
        volatile boolean open, closed;
        volatile Thread[] threads; // set before any worker starts

        StartGate(int parties) {
            this.parties = parties;
            running.set(parties);
        }

        /** Called by each worker after its clock stopped; returns once every worker got here. */
        void finish() {
            if (running.decrementAndGet() == 0) {
                closed = true;
                Thread me = Thread.currentThread();
                for (Thread w : threads) if (w != me) LockSupport.unpark(w);
                return;
            }
            while (!closed) LockSupport.park(this);
        }

        /** Waits until every worker arrived; returns this worker's start time. */
        long await() {
            if (ready.incrementAndGet() == parties) {
                long t = System.nanoTime();
                open = true;
                Thread me = Thread.currentThread();
                for (Thread w : threads) if (w != me) LockSupport.unpark(w);
                return t;
            }
            while (!open) LockSupport.park(this);
            return System.nanoTime();
        }
    }

    static double pct(long[] s, double q) {
        if (s.length == 0) return 0;
        int i = (int) Math.ceil(q / 100.0 * s.length - 1e-9) - 1;
        return s[Math.max(0, Math.min(s.length - 1, i))] / 1000.0;
    }
}
