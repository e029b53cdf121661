package io.mcpool;

import static org.junit.Assert.*;

import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.Test;

/**
 * The Whalin layer's answers to errors (tester findings javateam 1 and 2): a value too large
 * for the client's max_value_size or for memcached's item size is Whalin's false, counted
 * and given to the ErrorHandler (Mcpool still throws it); the ErrorHandler gets each error
 * answered as null/false/-1 with its key, and one that throws does not break the call; the
 * pool's listeners. Tester findings retest43 1 to 3: getCounter of a value that is no counter
 * is told and counted as incr's is; flushAll's and stats' failures are counted on the failing
 * server's row; getBytes, the reader the core's error for a value of no kind points to.
 * Against real memcached servers and a closed loopback port.
 */
public class WhalinErrorsTest {
    /** What the handler was told: method, key(s), error. */
    static final class Call {
        final String on, key;
        final Throwable error;

        Call(String on, String key, Throwable error) {
            this.on = on;
            this.key = key;
            this.error = error;
        }

        @Override
        public String toString() {
            return on + "(" + key + ", " + error + ")";
        }
    }

    /** Records every call. */
    static final class Recorder implements ErrorHandler {
        final List<Call> calls = Collections.synchronizedList(new ArrayList<>());

        @Override public void handleErrorOnInit(MemCachedClient c, Throwable e) { calls.add(new Call("init", null, e)); }
        @Override public void handleErrorOnGet(MemCachedClient c, Throwable e, String key) { calls.add(new Call("get", key, e)); }
        @Override public void handleErrorOnGet(MemCachedClient c, Throwable e, String[] keys) {
            calls.add(new Call("getMulti", String.join(",", keys), e));
        }
        @Override public void handleErrorOnSet(MemCachedClient c, Throwable e, String key) { calls.add(new Call("set", key, e)); }
        @Override public void handleErrorOnDelete(MemCachedClient c, Throwable e, String key) { calls.add(new Call("delete", key, e)); }
        @Override public void handleErrorOnFlush(MemCachedClient c, Throwable e) { calls.add(new Call("flush", null, e)); }
        @Override public void handleErrorOnStats(MemCachedClient c, Throwable e) { calls.add(new Call("stats", null, e)); }
    }

    /** Throws from every method. */
    static final class Thrower implements ErrorHandler {
        int calls;

        private void boom() {
            calls++;
            if (calls % 2 == 0) throw new AssertionError("handler error");
            throw new IllegalStateException("handler bug");
        }

        @Override public void handleErrorOnInit(MemCachedClient c, Throwable e) { boom(); }
        @Override public void handleErrorOnGet(MemCachedClient c, Throwable e, String key) { boom(); }
        @Override public void handleErrorOnGet(MemCachedClient c, Throwable e, String[] keys) { boom(); }
        @Override public void handleErrorOnSet(MemCachedClient c, Throwable e, String key) { boom(); }
        @Override public void handleErrorOnDelete(MemCachedClient c, Throwable e, String key) { boom(); }
        @Override public void handleErrorOnFlush(MemCachedClient c, Throwable e) { boom(); }
        @Override public void handleErrorOnStats(MemCachedClient c, Throwable e) { boom(); }
    }

    static String closedAddr() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return "127.0.0.1:" + s.getLocalPort();
        }
    }

    static SockIOPool pool(String name, String server, String... options) {
        return poolOf(name, new String[] {server}, options);
    }

    /** An initialized pool of these servers, no failover (each key stays on its own server),
     * connections opened only when asked for, with these options (name, value, ...). */
    static SockIOPool poolOf(String name, String[] servers, String... options) {
        SockIOPool p = SockIOPool.getInstance(name);
        p.setServers(servers);
        p.setFailover(false);
        p.setSocketConnectTO(500);
        p.setSocketTO(2000);
        p.setInitConn(0);
        p.setMinConn(0);
        for (int i = 0; i < options.length; i += 2) p.setOption(options[i], options[i + 1]);
        p.initialize();
        return p;
    }

    static long suppressed(MemCachedClient mc, String server) {
        return mc.metrics().get(server).get("suppressed_errors");
    }

    static byte[] random(int n) {
        byte[] b = new byte[n];
        new Random(n).nextBytes(b);
        return b;
    }

    static void assertTooLarge(Call c, String key) {
        assertEquals(c.toString(), "set", c.on);
        assertEquals(c.toString(), key, c.key);
        assertTrue(c.toString(), c.error instanceof ClientException);
        assertEquals("MCPOOL_VALUE_TOO_LARGE", ((McpoolException) c.error).statusName());
    }

    /** The client's max_value_size refuses before sending: every store answers false, the
     * error counted on the key's server and given to the handler; a set's key is deleted
     * (the core's rule), the others leave it. Mcpool throws the same refusal. */
    @Test
    public void aValueOverMaxValueSizeIsFalse() throws Exception {
        try (TestServer server = new TestServer()) {
            SockIOPool p = pool("wet-maxvalue", server.addr(), "max_value_size", "1000");
            try {
                Recorder r = new Recorder();
                MemCachedClient mc = new MemCachedClient("wet-maxvalue");
                mc.setErrorHandler(r);
                byte[] big = random(2000);
                assertTrue(mc.set("wet:big", "old"));
                long cas = mc.gets("wet:big").getCasUnique();
                assertFalse(mc.add("wet:new", big));
                assertFalse(mc.replace("wet:big", big));
                assertFalse(mc.cas("wet:big", big, cas));
                assertFalse(mc.append("wet:big", big));
                assertFalse(mc.prepend("wet:big", big));
                assertEquals("old", mc.get("wet:big"));
                assertFalse(mc.set("wet:big", big));
                assertNull(mc.get("wet:big")); // the set refused deleted the key
                assertEquals(6, suppressed(mc, server.addr()));
                assertEquals(r.calls.toString(), 6, r.calls.size());
                String[] keys = {"wet:new", "wet:big", "wet:big", "wet:big", "wet:big", "wet:big"};
                for (int i = 0; i < keys.length; i++) assertTooLarge(r.calls.get(i), keys[i]);
                assertTrue(r.calls.get(5).error.getMessage(), r.calls.get(5).error.getMessage().contains("max_value_size"));
                assertTrue(mc.set("wet:small", random(900)));
                assertEquals(6, suppressed(mc, server.addr()));
            } finally {
                p.shutDown();
            }
            try (Mcpool strict = Mcpool.builder().servers(server.addr()).maxValueSize(1000).build()) {
                strict.set("wet:big", random(2000), 0);
                fail("Mcpool answered a value too large");
            } catch (ClientException e) {
                assertEquals("MCPOOL_VALUE_TOO_LARGE", e.statusName());
            }
        }
    }

    /** memcached's own refusal ({@code -I 1k}: SERVER_ERROR object too large for cache) of a
     * value the client sent is false too, with the same status as Mcpool throws. */
    @Test
    public void memcachedsObjectTooLargeIsFalse() throws Exception {
        try (TestServer server = new TestServer("-I", "1k", "-o", "slab_chunk_max=512")) {
            SockIOPool p = pool("wet-itemsize", server.addr());
            try {
                Recorder r = new Recorder();
                MemCachedClient mc = new MemCachedClient(null, r, "wet-itemsize");
                assertTrue(mc.set("wet:k", "old"));
                assertFalse(mc.set("wet:k", random(5000)));
                assertNull(mc.get("wet:k")); // no older value left to read
                assertFalse(mc.add("wet:k2", random(5000)));
                assertEquals(2, suppressed(mc, server.addr()));
                assertEquals(r.calls.toString(), 2, r.calls.size());
                assertTooLarge(r.calls.get(0), "wet:k");
                assertTooLarge(r.calls.get(1), "wet:k2");
                assertTrue(mc.set("wet:k", random(100)));
                assertEquals(2, r.calls.size());
            } finally {
                p.shutDown();
            }
            try (Mcpool strict = Mcpool.builder().servers(server.addr()).build()) {
                strict.set("wet:k", random(5000), 0);
                fail("Mcpool answered memcached's refusal");
            } catch (ClientException e) {
                assertEquals("MCPOOL_VALUE_TOO_LARGE", e.statusName());
            }
        }
    }

    /** A down server: each call's error goes to the handler's method for it, with the key
     * and the exception Mcpool would have thrown, once per counted error. */
    @Test
    public void theHandlerGetsEachSuppressedErrorWithItsKey() throws Exception {
        String addr = closedAddr();
        SockIOPool p = pool("wet-down", addr);
        try {
            Recorder r = new Recorder();
            MemCachedClient mc = new MemCachedClient("wet-down");
            mc.setErrorHandler(r);
            assertNull(mc.get("g1"));
            assertNull(mc.gets("g2"));
            assertFalse(mc.keyExists("g3"));
            assertEquals(-1, mc.incr("g4"));
            assertEquals(-1, mc.getCounter("g5"));
            assertTrue(mc.getMulti(new String[] {"m1", "m2"}).isEmpty());
            assertFalse(mc.set("s1", "v"));
            assertFalse(mc.add("s2", "v"));
            assertFalse(mc.storeCounter("s3", 1L));
            assertFalse(mc.delete("d1"));
            assertFalse(mc.flushAll());
            assertTrue(mc.stats().isEmpty());
            List<String> got = new ArrayList<>();
            for (Call c : r.calls) {
                got.add(c.on + ":" + c.key);
                assertTrue(c.toString(), c.error instanceof ConnectionException);
            }
            assertEquals(java.util.Arrays.asList("get:g1", "get:g2", "get:g3", "get:g4", "get:g5", "get:m1", "get:m2",
                "set:s1", "set:s2", "set:s3", "delete:d1", "flush:null", "stats:null"), got);
            assertEquals(13, suppressed(mc, addr)); // each call told, flushAll and stats on the server's row
            assertEquals(0, mc.errorHandlerErrors());
            // a server flushAll(String[]) names that is not in the pool: false, and said
            assertFalse(mc.flushAll(new String[] {"nope:1"}));
            Call last = r.calls.get(r.calls.size() - 1);
            assertEquals("flush", last.on);
            assertEquals("MCPOOL_INVALID_ARGUMENT", ((McpoolException) last.error).statusName());
            // the caller's own mistakes are thrown, and never reach the handler
            int before = r.calls.size();
            try {
                mc.get(null);
                fail();
            } catch (ClientException e) {
                assertEquals(before, r.calls.size());
            }
            // without a handler nothing is called, the answers are the same
            mc.setErrorHandler(null);
            assertNull(mc.get("g1"));
            assertEquals(before, r.calls.size());
        } finally {
            p.shutDown();
        }
    }

    /** Errors answered without a server's failure: a counter that is not a number, a
     * negative delta, an expiry after 2038. */
    @Test
    public void theHandlerGetsTheCountersAndTheExpirysRefusals() throws Exception {
        try (TestServer server = new TestServer()) {
            SockIOPool p = pool("wet-live", server.addr());
            try {
                Recorder r = new Recorder();
                MemCachedClient mc = new MemCachedClient(null, r, "wet-live");
                assertTrue(mc.set("wet:text", "abc"));
                assertEquals(-1, mc.incr("wet:text"));
                assertEquals(-1, mc.incr("wet:text", -1));
                assertFalse(mc.set("wet:far", "v", new java.util.Date(Long.MAX_VALUE)));
                assertEquals(r.calls.toString(), 3, r.calls.size());
                assertEquals("get", r.calls.get(0).on);
                assertEquals("wet:text", r.calls.get(0).key);
                assertEquals("MCPOOL_CLIENT_ERROR", ((McpoolException) r.calls.get(0).error).statusName());
                assertEquals("MCPOOL_INVALID_ARGUMENT", ((McpoolException) r.calls.get(1).error).statusName());
                assertEquals("set", r.calls.get(2).on);
                assertEquals("wet:far", r.calls.get(2).key);
                assertEquals("MCPOOL_INVALID_ARGUMENT", ((McpoolException) r.calls.get(2).error).statusName());
                assertEquals(3, suppressed(mc, server.addr()));
            } finally {
                p.shutDown();
            }
        }
    }

    /** getMulti over a live and a dead server: the live server's hits, one call per key of
     * the dead one. */
    @Test
    public void getMultiReportsTheDeadServersKeys() throws Exception {
        try (TestServer live = new TestServer()) {
            String dead = closedAddr();
            SockIOPool p = poolOf("wet-multi", new String[] {live.addr(), dead});
            try {
                Recorder r = new Recorder();
                MemCachedClient mc = new MemCachedClient(null, r, "wet-multi");
                List<String> keys = new ArrayList<>(), onLive = new ArrayList<>(), onDead = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    String k = "wetm" + i;
                    keys.add(k);
                    if (mc.set(k, i)) onLive.add(k);
                    else onDead.add(k);
                }
                assertFalse(onLive.isEmpty());
                assertFalse(onDead.isEmpty());
                r.calls.clear();
                Map<String, Object> got = mc.getMulti(keys.toArray(new String[0]));
                assertEquals(new java.util.TreeSet<>(onLive), new java.util.TreeSet<>(got.keySet()));
                List<String> told = new ArrayList<>();
                for (Call c : r.calls) {
                    assertEquals("get", c.on);
                    assertTrue(c.toString(), c.error instanceof ConnectionException);
                    told.add(c.key);
                }
                assertEquals(onDead, told);
            } finally {
                p.shutDown();
            }
        }
    }

    /** A handler that throws (a RuntimeException, an Error) does not change the answer: it
     * is counted. */
    @Test
    public void aThrowingHandlerIsCounted() throws Exception {
        String addr = closedAddr();
        SockIOPool p = pool("wet-thrower", addr);
        try {
            Thrower t = new Thrower();
            MemCachedClient mc = new MemCachedClient(null, t, "wet-thrower");
            assertNull(mc.get("k"));
            assertFalse(mc.set("k", "v"));
            assertFalse(mc.delete("k"));
            assertEquals(-1, mc.incr("k"));
            assertTrue(mc.getMulti(new String[] {"a", "b"}).isEmpty());
            assertFalse(mc.flushAll());
            assertTrue(mc.stats().isEmpty());
            assertEquals(8, t.calls);
            assertEquals(8, mc.errorHandlerErrors());
            assertEquals(8, suppressed(mc, addr));
        } finally {
            p.shutDown();
        }
    }

    static void assertNotANumber(Call c, String key) {
        assertEquals(c.toString(), "get", c.on);
        assertEquals(c.toString(), key, c.key);
        assertTrue(c.toString(), c.error instanceof ClientException);
        assertEquals(c.toString(), "MCPOOL_CLIENT_ERROR", ((McpoolException) c.error).statusName());
    }

    /** getCounter of a value that is no counter answers -1, told to the handler with the key
     * and the MCPOOL_CLIENT_ERROR Mcpool's incr throws for it, and counted, as incr's answer
     * is (retest43 1): text, a "-5", a decimal beyond 2^64-1, an empty value, a number stored
     * in binary under Whalin's markers, flags the format has no kind for (which get throws
     * for, its error the cause), a serialized object. A miss and a counter are not errors. The other counters on
     * a value that is not a number: the same. */
    @Test
    public void getCounterOfNoCounterIsToldAndCounted() throws Exception {
        try (TestServer server = new TestServer()) {
            SockIOPool p = pool("wet-counter", server.addr());
            try (Mcpool raw = Mcpool.builder().servers(server.addr()).valueFormat("libmemcached").build()) {
                Recorder r = new Recorder();
                MemCachedClient mc = new MemCachedClient(null, r, "wet-counter");
                // keys Whalin's sanitizing leaves as they are, for the raw client to write
                assertTrue(mc.set("wettext", "abc"));
                assertTrue(mc.set("wetminus", "-5"));
                assertTrue(raw.setBytes("wethuge", "18446744073709551616".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, 0));
                assertTrue(mc.set("wetempty", ""));
                assertTrue(mc.set("wetint", 42));
                assertTrue(mc.set("wetlong", 7L));
                assertTrue(raw.setBytes("wetchar", new byte[] {0, 'A'}, 16, 0)); // Whalin's Character 'A'
                MemCachedClient ser = new MemCachedClient("wet-counter");
                ser.setSerializationEnabled(true);
                assertTrue(ser.set("wetser", new ArrayList<>(java.util.Arrays.asList(1, 2))));
                assertTrue(mc.storeCounter("wetctr", 12L));
                assertTrue(mc.set("wetspaced", "9 ")); // as memcached's decr leaves "10" made shorter
                assertEquals(0, r.calls.size());
                String[] none = {"wettext", "wetminus", "wethuge", "wetempty", "wetint", "wetlong", "wetchar", "wetser"};
                for (String k : none) assertEquals(k, -1, mc.getCounter(k));
                assertEquals(r.calls.toString(), none.length, r.calls.size());
                for (int i = 0; i < none.length; i++) {
                    Call c = r.calls.get(i);
                    assertNotANumber(c, none[i]);
                    assertTrue(c.toString(), c.error.getMessage().contains("getCounter of \"" + none[i] + "\""));
                }
                // the value of no kind: get's own error is the cause, and get still throws it
                Throwable cause = r.calls.get(6).error.getCause();
                assertNull(r.calls.get(7).error.getCause()); // a serialized object: read, not a counter
                assertTrue(String.valueOf(cause), cause instanceof ServerException);
                assertEquals("MCPOOL_VALUE_FORMAT", ((McpoolException) cause).statusName());
                try {
                    mc.get("wetchar");
                    fail("get read a value of no kind");
                } catch (ServerException e) {
                    assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                }
                // the message never has the value's bytes
                assertFalse(r.calls.get(0).error.getMessage().contains("abc"));
                assertEquals(none.length, suppressed(mc, server.addr()));
                // a miss and a counter: no error
                mc.delete("wetmissing");
                assertEquals(-1, mc.getCounter("wetmissing"));
                assertEquals(12, mc.getCounter("wetctr"));
                assertEquals(9, mc.getCounter("wetspaced"));
                assertEquals(none.length, r.calls.size());
                assertEquals(none.length, suppressed(mc, server.addr()));
                // incr, decr, addOrIncr, addOrDecr of text: the same status, told and counted
                r.calls.clear();
                assertEquals(-1, mc.incr("wettext"));
                assertEquals(-1, mc.decr("wettext", 2));
                assertEquals(-1, mc.addOrIncr("wettext", 1));
                assertEquals(-1, mc.addOrDecr("wettext", 1));
                assertEquals(-1, mc.decr("wetint"));
                assertEquals(r.calls.toString(), 5, r.calls.size());
                for (int i = 0; i < 4; i++) assertNotANumber(r.calls.get(i), "wettext");
                assertNotANumber(r.calls.get(4), "wetint");
                assertEquals(none.length + 5, suppressed(mc, server.addr()));
                // the strict API's incr throws the same class and status
                try (Mcpool strict = Mcpool.builder().servers(server.addr()).build()) {
                    strict.incr("wettext", 1);
                    fail("Mcpool.incr took text");
                } catch (ClientException e) {
                    assertEquals("MCPOOL_CLIENT_ERROR", e.statusName());
                }
                // above Long.MAX_VALUE: still thrown, never -1, not told
                r.calls.clear();
                assertTrue(raw.setBytes("wetbig", "9223372036854775808".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, 0));
                try {
                    fail("read as " + mc.getCounter("wetbig"));
                } catch (ClientException e) {
                    assertEquals("MCPOOL_OUT_OF_RANGE", e.statusName());
                }
                assertEquals(0, r.calls.size());
            } finally {
                p.shutDown();
            }
        }
    }

    /** flushAll's and the statistics calls' failures are counted on the failing server's row,
     * once per failed call, as the handler is told (retest43 2); the live server's row stays
     * 0. A server that was not asked for is neither told nor counted, and one not in the pool
     * has no row. */
    @Test
    public void flushAndStatsFailuresAreCountedOnTheirServer() throws Exception {
        try (TestServer live = new TestServer()) {
            String dead = closedAddr();
            SockIOPool p = poolOf("wet-whole", new String[] {live.addr(), dead});
            try {
                Recorder r = new Recorder();
                MemCachedClient mc = new MemCachedClient(null, r, "wet-whole");
                assertFalse(mc.flushAll());
                assertEquals(1, suppressed(mc, dead));
                Map<String, Map<String, String>> stats = mc.stats();
                assertEquals(java.util.Collections.singleton(live.addr()), stats.keySet());
                assertEquals(2, suppressed(mc, dead));
                assertEquals(java.util.Collections.singleton(live.addr()), mc.statsItems().keySet());
                assertFalse(mc.statsSlabs().containsKey(dead));
                assertEquals(4, suppressed(mc, dead));
                assertFalse(mc.flushAll(new String[] {dead}));
                assertEquals(5, suppressed(mc, dead));
                List<String> got = new ArrayList<>();
                for (Call c : r.calls) {
                    got.add(c.on);
                    assertTrue(c.toString(), c.error instanceof ConnectionException);
                }
                assertEquals(java.util.Arrays.asList("flush", "stats", "stats", "stats", "flush"), got);
                // not asked for: neither told nor counted
                assertEquals(java.util.Collections.singleton(live.addr()), mc.stats(new String[] {live.addr()}).keySet());
                assertTrue(mc.flushAll(new String[] {live.addr()}));
                // not in the pool: told, no row to count on
                assertFalse(mc.flushAll(new String[] {"nope:1"}));
                assertEquals(6, r.calls.size());
                assertEquals(5, suppressed(mc, dead));
                assertEquals(0, suppressed(mc, live.addr()));
                assertEquals(java.util.Arrays.asList(live.addr(), dead), new ArrayList<>(mc.metrics().keySet()));
            } finally {
                p.shutDown();
            }
        }
    }

    /** getBytes (not in Whalin), the reader the core's error for a value of no kind names:
     * Mcpool.getBytes's answers on the pool (a value of the format in its kind's form, one
     * of no kind as memcached holds it), null on a miss, and for a down server null, told
     * and counted as get (retest43 3). */
    @Test
    public void getBytes() throws Exception {
        try (TestServer server = new TestServer()) {
            SockIOPool p = pool("wet-bytes", server.addr());
            try (Mcpool raw = Mcpool.builder().servers(server.addr()).valueFormat("libmemcached").build()) {
                Recorder r = new Recorder();
                MemCachedClient mc = new MemCachedClient(null, r, "wet-bytes");
                assertTrue(mc.set("wet:s", "hello")); // a key Whalin's sanitizing encodes
                CachedData d = mc.getBytes("wet:s");
                assertArrayEquals("hello".getBytes(java.nio.charset.StandardCharsets.UTF_8), d.data);
                assertEquals(32, d.flags); // MARKER_STRING
                assertFalse(d.asStored);
                assertTrue(mc.set("wet:i", 42));
                d = mc.getBytes("wet:i");
                assertArrayEquals("42".getBytes(java.nio.charset.StandardCharsets.US_ASCII), d.data); // the kind's form
                assertEquals(4, d.flags); // MARKER_INTEGER
                assertFalse(d.asStored);
                byte[] big = random(100_000); // gzipped by the client: delivered inflated
                assertTrue(mc.set("wet:z", big));
                d = mc.getBytes("wet:z");
                assertArrayEquals(big, d.data);
                assertEquals(4096, d.flags); // MARKER_BYTEARR, without the compression bit
                assertNull(mc.getBytes("wet:missing"));
                // Whalin's Character, Float, Double and Date markers have no kind: get throws,
                // its message pointing here, and getBytes hands out the value as stored
                int[] noKind = {16, 128, 512, 1024};
                for (int flags : noKind) {
                    String k = "wetnokind" + flags;
                    assertTrue(raw.setBytes(k, "AAAAAAAA".getBytes(java.nio.charset.StandardCharsets.US_ASCII), flags, 0));
                    try {
                        fail("get read " + mc.get(k));
                    } catch (ServerException e) {
                        assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                        assertTrue(e.getMessage(), e.getMessage().contains("getBytes"));
                    }
                    d = mc.getBytes(k);
                    assertArrayEquals("AAAAAAAA".getBytes(java.nio.charset.StandardCharsets.US_ASCII), d.data);
                    assertEquals(flags, d.flags);
                    assertTrue(d.asStored);
                }
                // a serialized object, which get throws for while serialization is off: its
                // serialized bytes and flags 8, a kind of the format
                MemCachedClient ser = new MemCachedClient("wet-bytes");
                ser.setSerializationEnabled(true);
                assertTrue(ser.set("wet:ser", new ArrayList<>(java.util.Arrays.asList(1, 2))));
                try {
                    fail("get read " + mc.get("wet:ser"));
                } catch (ServerException e) {
                    assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                }
                d = mc.getBytes("wet:ser");
                assertEquals(8, d.flags);
                assertFalse(d.asStored);
                assertEquals((byte) 0xAC, d.data[0]); // Java serialization's stream magic
                assertEquals((byte) 0xED, d.data[1]);
                assertEquals(ser.get("wet:ser"), new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(d.data)).readObject());
                // the same as Mcpool.getBytes under the whalin format
                try (Mcpool strict = Mcpool.builder().servers(server.addr()).valueFormat("whalin").build()) {
                    for (String k : new String[] {"wetnokind16", "wetnokind1024"}) {
                        CachedData s = strict.getBytes(k), w = mc.getBytes(k);
                        assertArrayEquals(s.data, w.data);
                        assertEquals(s.flags, w.flags);
                        assertEquals(s.asStored, w.asStored);
                    }
                }
                assertEquals(0, r.calls.size());
                assertEquals(0, suppressed(mc, server.addr()));
                // the caller's mistakes are thrown
                try {
                    mc.getBytes(null);
                    fail();
                } catch (ClientException e) {
                    assertEquals(0, r.calls.size());
                }
            } finally {
                p.shutDown();
            }
        }
        String addr = closedAddr();
        SockIOPool p = pool("wet-bytes-down", addr);
        try {
            Recorder r = new Recorder();
            MemCachedClient mc = new MemCachedClient(null, r, "wet-bytes-down");
            assertNull(mc.getBytes("k1"));
            assertEquals(r.calls.toString(), 1, r.calls.size());
            assertEquals("get", r.calls.get(0).on);
            assertEquals("k1", r.calls.get(0).key);
            assertTrue(r.calls.get(0).error instanceof ConnectionException);
            assertEquals(1, suppressed(mc, addr));
        } finally {
            p.shutDown();
        }
    }

    /** Whalin's constructors: the loader and handler taken, the pool by name or "default". */
    @Test
    public void constructors() throws Exception {
        String addr = closedAddr();
        ClassLoader loader = new java.net.URLClassLoader(new java.net.URL[0], getClass().getClassLoader());
        Recorder r = new Recorder();
        SockIOPool p = pool("default", addr);
        try {
            MemCachedClient mc = new MemCachedClient(loader, r);
            assertNull(mc.get("c1"));
            assertEquals(1, r.calls.size());
            assertEquals("c1", r.calls.get(0).key);
            assertEquals(1, suppressed(mc, addr));
        } finally {
            p.shutDown();
        }
        p = pool("wet-ctor", addr);
        try {
            MemCachedClient mc = new MemCachedClient(loader, r, "wet-ctor");
            assertFalse(mc.delete("c2"));
            assertEquals(2, r.calls.size());
            assertEquals("delete", r.calls.get(1).on);
            assertEquals("c2", r.calls.get(1).key);
            new MemCachedClient(null, null, "wet-ctor").get("c3"); // none: nothing called
            assertEquals(2, r.calls.size());
        } finally {
            p.shutDown();
        }
        // a pool that is not initialized is thrown, not handled (handleErrorOnInit is never called)
        try {
            new MemCachedClient(loader, r, "wet-never").get("k");
            fail();
        } catch (ConfigurationException e) {
            assertEquals(2, r.calls.size());
        }
    }

    /** The pool's listeners: every exchange, and a server marked dead; settable only before
     * initialize(). */
    @Test
    public void poolListeners() throws Exception {
        String addr = closedAddr();
        List<OperationRecord> ops = Collections.synchronizedList(new ArrayList<>());
        List<ServerEvent> events = Collections.synchronizedList(new ArrayList<>());
        SockIOPool p = SockIOPool.getInstance("wet-listeners");
        p.setServers(new String[] {addr});
        p.setFailover(false);
        p.setSocketConnectTO(500);
        p.setInitConn(0);
        p.setMinConn(0);
        p.setOperationListener(rec -> {
            ops.add(rec);
            throw new IllegalStateException("listener bug");
        });
        p.setServerEventListener(events::add);
        p.initialize();
        try {
            try {
                p.setOperationListener(null);
                fail();
            } catch (ConfigurationException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("is initialized"));
            }
            MemCachedClient mc = new MemCachedClient("wet-listeners");
            for (int i = 0; i < 5 && events.isEmpty(); i++) assertNull(mc.get("k"));
            assertFalse(ops.isEmpty());
            assertEquals("get", ops.get(0).op());
            assertEquals(addr, ops.get(0).server());
            assertEquals(ops.size(), p.operationListenerErrors());
            assertEquals(1, events.size());
            assertEquals(ServerEvent.Kind.DOWN, events.get(0).kind());
            assertEquals(addr, events.get(0).server());
        } finally {
            p.shutDown();
        }
        // removed: the pool built again without them
        p.setOperationListener(null);
        p.setServerEventListener(null);
        p.initialize();
        try {
            int seen = ops.size();
            assertNull(new MemCachedClient("wet-listeners").get("k"));
            assertEquals(seen, ops.size());
        } finally {
            p.shutDown();
        }
    }
}
