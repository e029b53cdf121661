package io.mcpool;

import static org.junit.Assert.*;

import java.nio.file.Files;
import java.nio.file.Paths;
import org.junit.Test;

/**
 * Native memory does not grow over 1,000,000 operations: RSS after a warm-up, then after the
 * run, with a generous bound (the Java heap is capped so it cannot explain growth).
 */
public class NativeMemoryTest {
    static long rssKb() throws Exception {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        throw new IllegalStateException("no VmRSS");
    }

    static void run(Mcpool mc, int ops, String[] keys) {
        byte[] v = new byte[100];
        for (int i = 0; i < ops; i++) {
            String k = keys[i % keys.length];
            switch (i % 5) {
                case 0: mc.setBytes(k, v, 0, 0); break;
                case 1: mc.getBytes(k); break;
                case 2: mc.getMultiArray(mc.tc, new String[] {k, keys[(i + 1) % keys.length], "absent"}); break;
                case 3: mc.get("absent:" + (i & 7)); break;
                default: mc.incrOrInit("ctr", 1, 0, 0);
            }
        }
    }

    @Test
    public void noGrowthOverAMillionOps() throws Exception {
        try (TestServer server = new TestServer();
             Mcpool mc = Mcpool.builder().servers(server.addr()).transcoder(new SpyTranscoder()).build()) {
            String[] keys = new String[1000];
            for (int i = 0; i < keys.length; i++) keys[i] = "mem:" + i;
            run(mc, 100_000, keys); // warm-up: JIT, pools, allocator arenas
            System.gc();
            long before = rssKb();
            long t0 = System.nanoTime();
            run(mc, 1_000_000, keys);
            System.gc();
            long after = rssKb();
            System.out.printf("NativeMemoryTest: RSS %d kB -> %d kB over 1,000,000 ops (%.1f s)%n",
                before, after, (System.nanoTime() - t0) / 1e9);
            assertTrue("RSS grew from " + before + " kB to " + after + " kB", after - before < 32 * 1024);
        }
    }
}
