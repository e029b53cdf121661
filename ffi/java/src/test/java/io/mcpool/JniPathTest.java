package io.mcpool;

import static org.junit.Assert.*;

import java.util.Arrays;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The lean JNI paths: reads into a stack or heap scratch buffer (mcpool_client_get_into), the
 * multi-get's packed small values and separate large ones (mcpool_client_get_multi_into),
 * lengths passed from Java, and the striped in-flight count of NativeClient.
 */
public class JniPathTest {
    static TestServer server;
    static Mcpool mc;      // the core's compression on (default threshold)
    static Mcpool plain;   // no compression: large values travel as they are

    @BeforeClass
    public static void start() throws Exception {
        server = new TestServer();
        mc = Mcpool.builder().servers(server.addr()).valueFormat("whalin").build();
        plain = Mcpool.builder().servers(server.addr()).valueFormat("whalin").compression(false).build();
    }

    @AfterClass
    public static void stop() throws Exception {
        mc.close();
        plain.close();
        server.close();
    }

    /** Sizes around every buffer boundary of the JNI layer (stack 8192, multi small 4096,
     * arena 8192) and well beyond. */
    static final int[] SIZES = {0, 1, 100, 4095, 4096, 4097, 8191, 8192, 8193, 16384, 30719, 30721, 100_000, 1_000_000};

    static byte[] value(int n, int seed) {
        byte[] v = new byte[n];
        for (int i = 0; i < n; i++) v[i] = (byte) (seed * 31 + i * 7 + i / 13);
        return v;
    }

    @Test
    public void getEverySize() {
        for (Mcpool c : new Mcpool[] {mc, plain}) {
            for (int n : SIZES) {
                String k = "jni:get:" + n;
                byte[] v = value(n, n);
                assertTrue(c.setBytes(k, v, 4096, 0));
                CachedData d = c.getBytes(k);
                assertNotNull(k, d);
                assertArrayEquals(k, v, d.data);
                assertEquals(k, 4096, d.flags);
                assertArrayEquals(k, v, (byte[]) c.get(k)); // Whalin's byte[] marker
                MemcachedItem it = c.gets(k);
                assertArrayEquals(k, v, (byte[]) it.getValue());
                assertNotEquals(0L, it.getCasUnique());
            }
            assertNull(c.get("jni:get:absent"));
            assertNull(c.getBytes("jni:get:absent"));
            assertNull(c.gets("jni:get:absent"));
        }
    }

    @Test
    public void multiGetMixesPackedAndSeparateValues() {
        String[] keys = new String[SIZES.length * 2];
        for (int i = 0; i < SIZES.length; i++) {
            keys[2 * i] = "jni:mm:" + SIZES[i];
            keys[2 * i + 1] = "jni:mm:absent:" + i;
            // half stored compressed (the large ones): the core inflates them on the way in
            assertTrue((i % 2 == 0 ? plain : mc).setBytes(keys[2 * i], value(SIZES[i], i), 4096, 0));
        }
        for (Mcpool c : new Mcpool[] {mc, plain}) {
            Object[] vals = c.getMultiArray(c.tc, keys);
            for (int i = 0; i < SIZES.length; i++) {
                assertArrayEquals(keys[2 * i], value(SIZES[i], i), (byte[]) vals[2 * i]);
                assertNull(keys[2 * i + 1], vals[2 * i + 1]);
            }
        }
    }

    @Test
    public void multiGetLargeValuesOfFallingAndRisingSizes() {
        // Large values pass one at a time through one staging buffer, which grows and is
        // reused for smaller ones: each must arrive whole and as itself. The only small hit is
        // an empty value (its packed array is empty, not missing: this threw before).
        int[] sizes = {100_000, 30_721, 5000, 4097, 200_000, 4097, 0, 64_000};
        String[] keys = new String[sizes.length];
        for (int i = 0; i < sizes.length; i++) {
            keys[i] = "jni:stage:" + i;
            assertTrue((i % 2 == 0 ? mc : plain).setBytes(keys[i], value(sizes[i], 100 + i), 4096, 0));
        }
        for (Mcpool c : new Mcpool[] {mc, plain}) {
            Object[] vals = c.getMultiArray(c.tc, keys);
            for (int i = 0; i < sizes.length; i++) {
                assertArrayEquals(keys[i], value(sizes[i], 100 + i), (byte[]) vals[i]);
            }
        }
        assertTrue(mc.setBytes("jni:stage:empty", new byte[0], 4096, 0));
        assertArrayEquals(new byte[0],
            (byte[]) mc.getMultiArray(mc.tc, new String[] {"jni:stage:empty"})[0]);
    }

    @Test
    public void multiGetManyKeysAndDuplicates() {
        // 600 keys: the per-key arrays (> 128), the key bytes (> 4 KiB) and the arena (> 8 KiB)
        // all leave the stack.
        int n = 600;
        String[] keys = new String[n];
        for (int i = 0; i < n; i++) {
            keys[i] = "jni:many:" + i;
            if (i % 3 != 0) assertTrue(mc.set(keys[i], "v" + i + "-" + "x".repeat(i % 50)));
        }
        Object[] vals = mc.getMultiArray(mc.tc, keys);
        for (int i = 0; i < n; i++) {
            assertEquals(keys[i], i % 3 != 0 ? "v" + i + "-" + "x".repeat(i % 50) : null, vals[i]);
        }
        assertEquals(2 * n / 3, mc.getMulti(keys).size());

        assertTrue(mc.set("jni:dup:small", "s"));
        assertTrue(mc.set("jni:dup:big", value(5000, 5)));
        Object[] d = mc.getMultiArray(mc.tc,
            new String[] {"jni:dup:small", "jni:dup:big", "jni:dup:small", "jni:dup:big", "jni:dup:none"});
        assertEquals("s", d[0]);
        assertEquals("s", d[2]);
        assertArrayEquals(value(5000, 5), (byte[]) d[1]);
        assertArrayEquals(value(5000, 5), (byte[]) d[3]);
        assertNull(d[4]);
    }

    @Test
    public void multiGetErrorsAreThrown() {
        char[] longKey = new char[251];
        Arrays.fill(longKey, 'k');
        try {
            mc.getMultiArray(mc.tc, new String[] {"jni:err:a", new String(longKey)});
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_INVALID_KEY", e.statusName());
        }
        try {
            mc.getMultiArray(mc.tc, new String[] {"jni:err:a", null});
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
        }
        assertEquals(0, mc.nc.inFlight());
    }

    @Test
    public void noCallStaysInFlight() {
        assertTrue(mc.set("jni:flight", "v"));
        mc.get("jni:flight");
        mc.get("jni:flight:absent");
        mc.delete("jni:flight:absent");
        mc.getMulti("jni:flight", "jni:flight:absent");
        try {
            mc.set("jni flight", "v"); // a space: invalid without sanitizing
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_INVALID_KEY", e.statusName());
        }
        assertEquals(0, mc.nc.inFlight());
    }

    @Test
    public void stripesArePowersOfTwo() {
        assertEquals(8, NativeClient.stripes(1));
        assertEquals(8, NativeClient.stripes(4));
        assertEquals(16, NativeClient.stripes(5));
        assertEquals(256, NativeClient.stripes(100_000));
        int s = NativeClient.STRIPES;
        assertTrue(s >= 8 && s <= 256 && Integer.bitCount(s) == 1);
    }

    /** Threads on every stripe race close(): each call either completes or gets MCPOOL_CLOSED,
     * and the handle is freed exactly once, after the last call left. */
    @Test
    public void closeRacesManyThreads() throws Exception {
        for (int round = 0; round < 5; round++) {
            Mcpool c = Mcpool.builder().servers(server.addr()).build();
            int threads = 2 * NativeClient.STRIPES + 3;
            Thread[] ts = new Thread[threads];
            Throwable[] failure = new Throwable[1];
            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(threads);
            for (int t = 0; t < threads; t++) {
                ts[t] = new Thread(() -> {
                    started.countDown();
                    for (int i = 0; i < 1_000_000; i++) {
                        try {
                            c.get("jni:race:" + (i & 15));
                        } catch (ClientException e) {
                            if (!"MCPOOL_CLOSED".equals(e.statusName())) {
                                synchronized (failure) { failure[0] = e; }
                            }
                            return;
                        } catch (Throwable e) {
                            synchronized (failure) { failure[0] = e; }
                            return;
                        }
                    }
                }, "race" + t);
                ts[t].start();
            }
            started.await();
            Thread.sleep(20);
            c.close();
            for (Thread t : ts) t.join(30_000);
            synchronized (failure) { assertNull(failure[0]); }
            assertTrue(c.nc.isFreed());
            assertEquals(0, c.nc.inFlight());
        }
    }
}
