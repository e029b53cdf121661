package io.mcpool;

import static org.junit.Assert.*;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Date;
import java.util.Map;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/** Every SockIOPool / MemCachedClient method against a real memcached. */
public class MemCachedClientTest {
    static TestServer server;
    static SockIOPool pool;
    static MemCachedClient mc;

    @BeforeClass
    public static void start() throws Exception {
        server = new TestServer();
        pool = SockIOPool.getInstance("mcct");
        pool.setServers(new String[] {server.addr()});
        pool.setWeights(new Integer[] {1});
        pool.setInitConn(2);
        pool.setMinConn(2);
        pool.setMaxConn(8);
        pool.setMaxIdle(60_000);
        pool.setMaxBusyTime(5_000);
        pool.setSocketTO(3_000);
        pool.setSocketConnectTO(1_000);
        pool.setNagle(false);
        pool.setFailover(true);
        pool.setFailback(true);
        pool.setAliveCheck(false);
        pool.setHashingAlg(SockIOPool.CONSISTENT_HASH);
        pool.initialize();
        assertTrue(pool.isInitialized());
        mc = new MemCachedClient("mcct");
    }

    @AfterClass
    public static void stop() throws Exception {
        pool.shutDown();
        server.close();
    }

    /** A refused authentication (here binary SASL to a memcached without SASL, MCPOOL_AUTH)
     * is thrown, never answered as a miss (tester finding tlssasl 1: get null, set false). */
    @Test
    public void aRefusedAuthenticationIsThrownNotAMiss() {
        SockIOPool p = SockIOPool.getInstance("mcct-auth");
        p.setServers(new String[] {server.addr()});
        p.setOption("protocol", "binary");
        p.setOption("sasl_username", "alice");
        p.setOption("sasl_password", "not-shown-secret");
        p.initialize();
        try {
            MemCachedClient m = new MemCachedClient("mcct-auth");
            for (Runnable call : new Runnable[] {() -> m.get("k"), () -> m.set("k", "v"), () -> m.keyExists("k"),
                    () -> m.getMulti(new String[] {"a", "b"}), () -> m.getMultiArray(new String[] {"a", "b"}),
                    () -> m.stats(), () -> m.statsItems()}) {
                try {
                    call.run();
                    fail("a refused authentication was answered");
                } catch (ConnectionException e) {
                    assertEquals("MCPOOL_AUTH", e.statusName());
                    assertFalse(e.getMessage(), e.getMessage().contains("not-shown-secret"));
                }
            }
        } finally {
            p.shutDown();
        }
    }

    @Test
    public void getInstanceIsPerName() {
        assertSame(pool, SockIOPool.getInstance("mcct"));
        assertNotSame(pool, SockIOPool.getInstance("other-pool"));
    }

    @Test
    public void setGetTypes() {
        // as Whalin: each type with its own marker, read back as that type
        Object[] values = {"text é ü", 42, 7L, (byte) 3, true, false, (short) -5,
            new StringBuilder("sb"), new StringBuffer("sbuf"), new byte[] {0, 1, 2, (byte) 255},
            Integer.MIN_VALUE, Long.MAX_VALUE, 1L};
        for (int i = 0; i < values.length; i++) {
            String k = "mcct:type:" + i;
            assertTrue(mc.set(k, values[i]));
            Object got = mc.get(k);
            assertEquals(k, values[i].getClass(), got.getClass());
            if (got instanceof byte[]) assertArrayEquals((byte[]) values[i], (byte[]) got);
            else if (got instanceof CharSequence) assertEquals(values[i].toString(), got.toString());
            else assertEquals(values[i], got);
        }
        // no kind for these: refused unless serialization is on, then serialized
        Object[] others = {'x', 1.5f, 2.25d, new Date(1234567890123L)};
        for (Object v : others) {
            try {
                mc.set("mcct:type:other", v);
                fail(v.toString());
            } catch (ClientException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("serialization is off"));
            }
        }
        mc.setSerializationEnabled(true);
        try {
            for (Object v : others) {
                assertTrue(mc.set("mcct:type:other", v));
                assertEquals(v, mc.get("mcct:type:other"));
            }
        } finally {
            mc.setSerializationEnabled(false);
        }
    }

    @Test
    public void addReplaceAppendPrependDelete() {
        String k = "mcct:arap";
        mc.delete(k);
        assertFalse(mc.replace(k, "x"));
        assertTrue(mc.add(k, "mid"));
        assertFalse(mc.add(k, "again"));
        assertTrue(mc.replace(k, "mid"));
        assertTrue(mc.append(k, ">"));
        assertTrue(mc.prepend(k, "<"));
        assertEquals("<mid>", mc.get(k));
        assertTrue(mc.keyExists(k));
        assertTrue(mc.delete(k));
        assertFalse(mc.delete(k, new Date()));
        assertFalse(mc.keyExists(k));
        assertNull(mc.get(k));
        assertFalse(mc.append(k, "x"));
        assertFalse(mc.prepend(k, "x"));
        // Bytes and text only: an Integer's 4 bytes after another's are no value (the
        // whalin format's binary integers), so the value is refused and the stored one stays.
        String n = "mcct:arap-int";
        assertTrue(mc.set(n, 1));
        for (Object v : new Object[] {2, 2L, (short) 2, (byte) 2, true}) {
            try {
                mc.append(n, v);
                fail("append of a " + v.getClass().getName());
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
            }
            try {
                mc.prepend(n, v);
                fail("prepend of a " + v.getClass().getName());
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
            }
        }
        assertEquals(1, mc.get(n)); // the Integer stored
    }

    @Test
    public void expiry() throws Exception {
        assertTrue(mc.set("mcct:exp", "v", new Date(1000)));
        assertTrue(mc.add("mcct:exp2", "v", new Date(60_000)));
        assertTrue(mc.replace("mcct:exp2", "w", new Date(60_000)));
        assertEquals("v", mc.get("mcct:exp"));
        Thread.sleep(2100);
        assertNull(mc.get("mcct:exp"));
        assertEquals("w", mc.get("mcct:exp2"));
    }

    /** A Date under a second is one second, not Whalin's 0 = never expires (tester finding
     * expiry 7); from a second on, Whalin's {@code getTime() / 1000}. */
    @Test
    public void expiryUnderASecondIsOneSecond() {
        assertEquals(1, MemCachedClient.ttl(new Date(500)));
        assertEquals(1, MemCachedClient.ttl(new Date(1)));
        assertEquals(1, MemCachedClient.ttl(new Date(1500)));
        assertEquals(0, MemCachedClient.ttl(new Date(0)));
        assertEquals(0, MemCachedClient.ttl(null));
        assertEquals(60, MemCachedClient.ttl(new Date(60_999)));
    }

    /** A Date before the epoch stores the item already expired, as memcached reads a negative
     * expiry (Whalin sent it so; before, the store answered false and kept the old value). */
    @Test
    public void expiryBeforeTheEpochStoresTheItemExpired() {
        Date[] past = {new Date(-1000), new Date(-1), new Date(-999), new Date(Long.MIN_VALUE)};
        assertEquals(-1, MemCachedClient.ttl(new Date(-1)));
        assertEquals(-1, MemCachedClient.ttl(new Date(-1000)));
        assertEquals(-2, MemCachedClient.ttl(new Date(-1001)));
        for (Date d : past) {
            assertTrue(mc.set("mcct:xp:k", "old"));
            assertTrue(d.toString(), mc.set("mcct:xp:k", "v", d));
            assertNull(d.toString(), mc.get("mcct:xp:k"));
            assertTrue(d.toString(), mc.add("mcct:xp:k", "v", d));
            assertNull(d.toString(), mc.get("mcct:xp:k"));
            assertTrue(mc.set("mcct:xp:k", "old"));
            assertTrue(d.toString(), mc.replace("mcct:xp:k", "v", d));
            assertNull(d.toString(), mc.get("mcct:xp:k"));
            assertTrue(mc.set("mcct:xp:k", "old"));
            assertTrue(d.toString(), mc.cas("mcct:xp:k", "v", d, mc.gets("mcct:xp:k").getCasUnique()));
            assertNull(d.toString(), mc.get("mcct:xp:k"));
        }
    }

    /** A Date after 2038-01-19T03:14:07Z (more than 2^31-1 seconds, which memcached reads as
     * a negative expiry) is not sent: the store answers false, as Whalin answered a store that
     * did not happen; a set deletes the key, as the core does for a set refused so (tester
     * finding ttl 1: Whalin's set was stored already expired, no older value left to read),
     * add, replace and cas leave it. */
    @Test
    public void expiryAfter2038IsNotStored() {
        Date[] far = {new Date((Integer.MAX_VALUE + 1L) * 1000), new Date(0xffffffffL * 1000),
            new Date(Long.MAX_VALUE)};
        for (Date d : far) {
            assertTrue(mc.set("mcct:xr:old", "old"));
            long cas = mc.gets("mcct:xr:old").getCasUnique();
            mc.delete("mcct:xr:new");
            assertFalse(d.toString(), mc.add("mcct:xr:new", "v", d));
            assertFalse(d.toString(), mc.replace("mcct:xr:old", "new", d));
            assertFalse(d.toString(), mc.cas("mcct:xr:old", "new", d, cas));
            assertNull(mc.get("mcct:xr:new"));
            assertEquals("old", mc.get("mcct:xr:old"));
            assertEquals(cas, mc.gets("mcct:xr:old").getCasUnique());
            // set: false, and the old value gone
            assertFalse(d.toString(), mc.set("mcct:xr:old", "new", d));
            assertNull(d.toString(), mc.get("mcct:xr:old"));
            assertFalse(mc.keyExists("mcct:xr:old"));
            assertFalse(d.toString(), mc.set("mcct:xr:new", "v", d));
            assertNull(mc.get("mcct:xr:new"));
        }
        // still the caller's mistake, thrown: a null key, whatever the expiry
        for (Date d : new Date[] {new Date(-1000), far[0]}) {
            try {
                mc.set(null, "v", d);
                fail();
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
            }
        }
        // the last second memcached reads as meant (2038-01-19T03:14:07Z) is stored and kept
        Date last = new Date(Integer.MAX_VALUE * 1000L + 999);
        assertTrue(mc.set("mcct:xr:max", "v", last));
        assertTrue(mc.replace("mcct:xr:max", "w", last));
        assertEquals("w", mc.get("mcct:xr:max"));
    }

    /** The core's refusal, through the native the Date stores use: it names the number as
     * given (the Date's seconds, not a saturated 4294967295), and for a set the deletion. */
    @Test
    public void expiryRefusalIsTheCoresMessage() {
        assertTrue(mc.set("mcct:xm", "old"));
        Mcpool c = pool.client(true);
        byte[] k = "mcct:xm".getBytes(StandardCharsets.UTF_8);
        long h = c.nc.acquire();
        try {
            assertEquals(60, Native.storeExpiry(h, Native.OP_SET, k, k.length, 60));
            assertEquals(Mcpool.EXPIRED_AT_ONCE, Native.storeExpiry(h, Native.OP_SET, k, k.length, -1));
            assertEquals(Mcpool.MAX_TTL, Native.storeExpiry(h, Native.OP_ADD, k, k.length, Mcpool.MAX_TTL));
            for (int op : new int[] {Native.OP_ADD, Native.OP_SET}) {
                try {
                    Native.storeExpiry(h, op, k, k.length, 1L << 32);
                    fail();
                } catch (ClientException e) {
                    assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                    assertTrue(e.getMessage(), e.getMessage().contains("invalid ttl: 4294967296 is above 2147483647"));
                    assertTrue(e.getMessage(), e.detail().startsWith(op == Native.OP_SET ? "set \"mcct" : "add \"mcct"));
                    assertEquals(e.getMessage(), op == Native.OP_SET, e.getMessage().contains("deleted"));
                }
                assertEquals(op == Native.OP_SET ? null : "old", mc.get("mcct:xm"));
            }
        } finally {
            c.nc.release();
        }
    }

    @Test
    public void casAndGets() {
        String k = "mcct:cas";
        mc.set(k, "one");
        MemcachedItem it = mc.gets(k);
        assertEquals("one", it.getValue());
        assertTrue(it.getCasUnique() != 0);
        assertTrue(mc.cas(k, "two", it.getCasUnique()));
        assertFalse(mc.cas(k, "three", it.casUnique));
        assertEquals("two", mc.get(k));
        MemcachedItem it2 = mc.gets(k);
        assertTrue(mc.cas(k, "four", new Date(60_000), it2.casUnique));
        assertEquals("four", mc.get(k));
        assertNull(mc.gets("mcct:cas:none"));
        assertFalse(mc.cas("mcct:cas:none", "x", 1));
    }

    /** A CAS unique of 0 (what gets reads from memcached -C) is the caller's error, thrown,
     * never answered (tester finding mutations 3): Whalin's text client answered false, on
     * which a retry loop never ends, its binary client stored unconditionally. Nothing is
     * sent, the ErrorHandler is not told, nothing is counted. */
    @Test
    public void casOfZeroIsThrownNotAnswered() {
        MemCachedClient c = new MemCachedClient("mcct");
        WhalinErrorsTest.Recorder told = new WhalinErrorsTest.Recorder();
        c.setErrorHandler(told);
        String k = "mcct:cas0";
        assertTrue(c.set(k, "one"));
        long suppressed = c.metrics().get(server.addr()).get("suppressed_errors");
        for (String key : new String[] {k, k + ":none"}) {
            for (Date expiry : new Date[] {null, new Date(60_000)}) {
                try {
                    c.cas(key, "two", expiry, 0);
                    fail(key + ": a cas of 0 answered");
                } catch (ClientException e) {
                    assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                }
            }
        }
        assertEquals("one", c.get(k));
        assertNull(c.get(k + ":none"));
        assertTrue(told.calls.toString(), told.calls.isEmpty());
        assertEquals(suppressed, (long) c.metrics().get(server.addr()).get("suppressed_errors"));
    }

    @Test
    public void multi() {
        String[] keys = new String[50];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = "mcct:multi:" + i;
            if (i % 3 != 0) mc.set(keys[i], i);
            else mc.delete(keys[i]);
        }
        Map<String, Object> m = mc.getMulti(keys);
        Object[] a = mc.getMultiArray(keys);
        assertEquals(keys.length, a.length);
        for (int i = 0; i < keys.length; i++) {
            if (i % 3 != 0) {
                assertEquals(i, m.get(keys[i])); // an Integer reads back as an Integer
                assertEquals(i, a[i]);
            } else {
                assertFalse(m.containsKey(keys[i]));
                assertNull(a[i]);
            }
        }
        assertEquals(0, mc.getMultiArray(new String[0]).length);
    }

    @Test
    public void counters() {
        String k = "mcct:ctr";
        mc.delete(k);
        assertEquals(-1, mc.incr(k));
        assertEquals(-1, mc.decr(k));
        assertEquals(-1, mc.getCounter(k));
        assertTrue(mc.storeCounter(k, 10L));
        assertEquals(10, mc.getCounter(k));
        assertEquals(11, mc.incr(k));
        assertEquals(16, mc.incr(k, 5));
        assertEquals(15, mc.decr(k));
        assertEquals(5, mc.decr(k, 10));
        assertEquals(0, mc.decr(k, 10));
        mc.delete(k);
        assertEquals(7, mc.addOrIncr(k, 7));
        assertEquals(14, mc.addOrIncr(k, 7));
        assertEquals(14, mc.addOrIncr(k));
        mc.delete(k);
        assertEquals(3, mc.addOrDecr(k, 3));
        assertEquals(0, mc.addOrDecr(k, 3));
        assertEquals(0, mc.addOrDecr(k));
        mc.set("mcct:notnum", "abc");
        assertEquals(-1, mc.getCounter("mcct:notnum"));
        // The server's CLIENT_ERROR for a value that is not a number (text, a counter
        // stored as "-5"): Whalin's -1, counted as a suppressed error.
        long suppressed = mc.metrics().get(server.addr()).get("suppressed_errors");
        assertEquals(-1, mc.incr("mcct:notnum"));
        assertEquals(-1, mc.decr("mcct:notnum", 2));
        // a negative counter is the caller's mistake (memcached's are unsigned), nothing stored
        try {
            mc.storeCounter("mcct:minus5", -5L);
            fail("storeCounter took -5");
        } catch (ClientException e) {
            assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
        }
        assertNull(mc.get("mcct:minus5"));
        assertTrue(mc.set("mcct:minus5", "-5"));
        assertEquals(-1, mc.incr("mcct:minus5"));
        assertEquals(-1, mc.addOrIncr("mcct:minus5", 1));
        assertEquals(suppressed + 4, (long) mc.metrics().get(server.addr()).get("suppressed_errors"));
        assertEquals("abc", mc.get("mcct:notnum"));
    }

    @Test
    public void getCounterOfBinaryNumbersIsMinusOne() {
        // Whalin's markers store an Integer, Long, Short or Boolean in binary (4 bytes "00 00
        // 00 2a"): memcached's incr refuses them and Whalin's getCounter cannot parse them,
        // both -1. getCounter used to read the core's decimal text of them: 42, 5, 3, 1.
        Object[] binary = {42, 5L, (short) 3, true, (byte) 7};
        for (int i = 0; i < binary.length; i++) {
            String k = "mcct:bin:" + i;
            assertTrue(mc.set(k, binary[i]));
            assertEquals(k, -1, mc.getCounter(k));
            assertEquals(k, -1, mc.incr(k, 0));
            assertEquals(k, binary[i], mc.get(k)); // the value itself is intact
        }
        // text holding digits (MARKER_STRING, or a String under primitiveAsString) and a
        // counter (flags 0) are numbers for incr and for getCounter alike
        assertTrue(mc.set("mcct:bin:text", "12"));
        assertEquals(12, mc.getCounter("mcct:bin:text"));
        assertEquals(13, mc.incr("mcct:bin:text", 1));
        assertTrue(mc.storeCounter("mcct:bin:ctr", 9L));
        assertEquals(9, mc.getCounter("mcct:bin:ctr"));
        // under a value format whose integers are decimal text, a Long is a counter
        SockIOPool dec = SockIOPool.getInstance("mcct-decimal");
        dec.setServers(new String[] {server.addr()});
        dec.setValueFormat("mcpool");
        dec.initialize();
        try {
            MemCachedClient d = new MemCachedClient("mcct-decimal");
            assertTrue(d.set("mcct:declong", 21L));
            assertEquals(21, d.getCounter("mcct:declong"));
            assertEquals(22, d.incr("mcct:declong", 1));
        } finally {
            dec.shutDown();
        }
    }

    @Test
    public void emptyAndFlagsZeroValuesAreValuesNotMisses() {
        // A deliberate difference from Whalin (README, class Javadoc): its get answered null
        // for an empty body and for flags 0; here a key that exists is never a null.
        assertTrue(mc.set("mcct:empty:s", ""));
        assertEquals("", mc.get("mcct:empty:s"));
        assertTrue(mc.set("mcct:empty:b", new byte[0]));
        assertArrayEquals(new byte[0], (byte[]) mc.get("mcct:empty:b"));
        assertTrue(mc.keyExists("mcct:empty:s"));
        Map<String, Object> both = mc.getMulti(new String[] {"mcct:empty:s", "mcct:empty:b"});
        assertEquals(2, both.size());
        assertTrue(mc.storeCounter("mcct:flags0", 10L));
        assertArrayEquals("10".getBytes(StandardCharsets.US_ASCII), (byte[]) mc.get("mcct:flags0"));
        assertEquals(10, mc.getCounter("mcct:flags0"));
        mc.delete("mcct:flags0:aoi");
        assertEquals(0, mc.addOrIncr("mcct:flags0:aoi"));
        assertArrayEquals("0".getBytes(StandardCharsets.US_ASCII), (byte[]) mc.get("mcct:flags0:aoi"));
    }

    @Test
    public void negativeDeltasAnswerMinusOne() {
        // memcached's deltas are unsigned: Whalin sent a negative one and got -1 back (an
        // error reply). Never a counter changed the other way (incr -1 decremented, decr -1
        // zeroed, addOrIncr -1 stored 2^64-1).
        String k = "mcct:negdelta";
        assertTrue(mc.storeCounter(k, 5L));
        assertEquals(-1, mc.incr(k, -1));
        assertEquals(-1, mc.decr(k, -1));
        assertEquals(5, mc.getCounter(k));
        mc.delete("mcct:negnew");
        assertEquals(-1, mc.addOrIncr("mcct:negnew", -1));
        assertEquals(-1, mc.addOrDecr("mcct:negnew", -1));
        assertFalse(mc.keyExists("mcct:negnew"));
        // Above Long.MAX_VALUE: an error with the exact value, never a negative counter.
        assertTrue(mc.storeCounter(k, Long.MAX_VALUE));
        try {
            mc.incr(k, 1);
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_OUT_OF_RANGE", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains("9223372036854775808"));
        }
        // getCounter follows the same rule (it returned -1, its "missing" answer, for a
        // counter the server holds above Long.MAX_VALUE; Whalin returns -1 there too). A
        // counter as incr leaves it: decimal text, flags 0.
        // (a key Whalin's sanitizing leaves as it is, for the raw client to write)
        k = "mcctbigcounter";
        try (Mcpool raw = Mcpool.builder().servers(server.addr()).valueFormat("libmemcached").build()) {
            for (String big : new String[] {"9223372036854775808", "18446744073709551615"}) {
                assertTrue(raw.setBytes(k, big.getBytes(StandardCharsets.US_ASCII), 0, 0));
                try {
                    fail(big + " was read as " + mc.getCounter(k));
                } catch (ClientException e) {
                    assertEquals("MCPOOL_OUT_OF_RANGE", e.statusName());
                    assertTrue(e.getMessage(), e.getMessage().contains(big));
                    assertTrue(e.getMessage(), e.getMessage().contains(k));
                }
            }
            // beyond memcached's counters (incr answers -1 for it too): not a counter, -1
            assertTrue(raw.setBytes("mccthuge", "18446744073709551616".getBytes(StandardCharsets.US_ASCII), 0, 0));
            assertEquals(-1, mc.getCounter("mccthuge"));
            assertEquals(Long.MAX_VALUE, storeAndRead(raw, k, "9223372036854775807")); // the largest long: read
        }
    }

    private long storeAndRead(Mcpool raw, String k, String digits) {
        assertTrue(raw.setBytes(k, digits.getBytes(StandardCharsets.US_ASCII), 0, 0));
        return mc.getCounter(k);
    }

    @Test
    public void sanitizedKeysAndCompression() {
        // Whalin URL-encodes keys by default, so spaces and controls are fine.
        assertTrue(mc.set("a key with spaces\n", "v"));
        assertEquals("v", mc.get("a key with spaces\n"));
        MemCachedClient raw = new MemCachedClient("mcct");
        raw.setSanitizeKeys(false);
        assertEquals("v", raw.get("a+key+with+spaces%0A"));
        try {
            raw.get("a key");
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_INVALID_KEY", e.statusName());
        }
        char[] big = new char[100_000];
        Arrays.fill(big, 'z');
        String s = new String(big);
        assertTrue(mc.set("mcct:big", s));
        assertEquals(s, mc.get("mcct:big"));
        // Stored compressed: the server holds far fewer bytes (read raw, compression off).
        MemCachedClient nz = new MemCachedClient("mcct");
        nz.setCompressEnable(false);
        nz.setCompressThreshold(10);
        assertFalse(nz.getCompressEnable());
        assertTrue(nz.set("mcct:big2", s));
        assertEquals(s, nz.get("mcct:big2"));
        MemCachedClient small = new MemCachedClient("mcct");
        small.setCompressThreshold(10);
        assertTrue(small.set("mcct:small", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"));
        assertEquals("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", mc.get("mcct:small"));
    }

    /** The raw `get` reply's header line for key: "VALUE key flags bytes", or "END". */
    static String rawHeader(String key) throws Exception {
        String[] hp = server.addr().split(":");
        try (java.net.Socket so = new java.net.Socket(hp[0], Integer.parseInt(hp[1]))) {
            so.setSoTimeout(5_000);
            so.getOutputStream().write(("get " + key + "\r\n").getBytes("US-ASCII"));
            java.io.InputStream in = so.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int c; (c = in.read()) != -1 && c != '\n' && line.length() < 400; ) {
                if (c != '\r') line.append((char) c);
            }
            return line.toString();
        }
    }

    /** Stores value under key with these flags, as another client would (a raw text set). */
    static void rawSet(String key, int flags, byte[] value) throws Exception {
        String[] hp = server.addr().split(":");
        try (java.net.Socket so = new java.net.Socket(hp[0], Integer.parseInt(hp[1]))) {
            so.setSoTimeout(5_000);
            java.io.OutputStream out = so.getOutputStream();
            out.write(("set " + key + " " + Integer.toUnsignedString(flags) + " 0 " + value.length + "\r\n").getBytes("US-ASCII"));
            out.write(value);
            out.write("\r\n".getBytes("US-ASCII"));
            byte[] reply = new byte[8];
            int n = so.getInputStream().read(reply);
            assertEquals("STORED\r\n", new String(reply, 0, Math.max(n, 0), "US-ASCII"));
        }
    }

    @Test
    public void unreadableValueExistsAndReadsThrow() throws Exception {
        // Flags that mean nothing in the whalin format (written by another client), and an
        // Integer with bytes appended (8 bytes under the 4-byte Integer marker): the key
        // exists, so keyExists is true and every read throws naming the key, never a null
        // that looks like a miss (and the error is not counted as a server's).
        rawSet("mcct-weird", 0x40000000, "abc".getBytes("US-ASCII"));
        rawSet("mcct-int8", 4, new byte[] {0, 0, 0, 1, 0, 0, 0, 2});
        long suppressedBefore = mc.metrics().get(server.addr()).get("suppressed_errors");
        for (String k : new String[] {"mcct-weird", "mcct-int8"}) {
            assertTrue(k, mc.keyExists(k));
            assertFalse(k, mc.add(k, "x"));
            java.util.List<Runnable> reads = Arrays.asList(() -> mc.get(k), () -> mc.gets(k),
                () -> mc.getMulti(new String[] {k}), () -> mc.getMultiArray(new String[] {k}));
            for (Runnable r : reads) {
                try {
                    r.run();
                    fail(k + ": read as a miss");
                } catch (McpoolException e) {
                    assertEquals(k, "MCPOOL_VALUE_FORMAT", e.statusName());
                    assertTrue(e.getMessage(), e.getMessage().contains(k));
                }
            }
        }
        assertEquals(suppressedBefore, (long) mc.metrics().get(server.addr()).get("suppressed_errors"));
    }

    @Test
    public void getMultiKeepsTheOtherHitsOfAnUnreadableValue() throws Exception {
        // One unreadable value made the whole getMulti throw and the other hits were lost.
        rawSet("mcct-gm-weird", 0x40000000, "abc".getBytes("US-ASCII"));
        rawSet("mcct-gm-int8", 4, new byte[] {0, 0, 0, 1, 0, 0, 0, 2});
        assertTrue(mc.set("mcct-gm-a", "a"));
        assertTrue(mc.set("mcct-gm-b", 2L));
        mc.delete("mcct-gm-none");
        String[] keys = {"mcct-gm-a", "mcct-gm-weird", "mcct-gm-none", "mcct-gm-b", "mcct-gm-int8"};
        for (int round = 0; round < 2; round++) {
            try {
                if (round == 0) mc.getMulti(keys);
                else mc.getMultiArray(keys);
                fail("unreadable values were left out silently");
            } catch (UnreadableValuesException e) {
                assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                assertEquals(Arrays.asList("mcct-gm-a", "mcct-gm-b"),
                    new java.util.ArrayList<>(e.hits().keySet()));
                assertEquals("a", e.hits().get("mcct-gm-a"));
                assertEquals(2L, e.hits().get("mcct-gm-b"));
                assertEquals(Arrays.asList("mcct-gm-weird", "mcct-gm-int8"), new java.util.ArrayList<>(e.errors().keySet()));
                for (Map.Entry<String, McpoolException> x : e.errors().entrySet()) {
                    assertEquals("MCPOOL_VALUE_FORMAT", x.getValue().statusName());
                    assertTrue(x.getValue().getMessage(), x.getValue().getMessage().contains(x.getKey()));
                }
            }
        }
    }

    @Test
    public void compressionSettingsShareOneNativeClient() throws Exception {
        // Each MemCachedClient's compressEnable / compressThreshold travels with its stores;
        // the core compares (Whalin: longer than the threshold), on the pool's one client.
        SockIOPool one = SockIOPool.getInstance("mcct-one");
        one.setServers(new String[] {server.addr()});
        one.initialize();
        try {
            compressionOnOneClient(one);
        } finally {
            one.shutDown();
        }
    }

    static void compressionOnOneClient(SockIOPool one) throws Exception {
        MemCachedClient mc = new MemCachedClient("mcct-one");
        MemCachedClient a = new MemCachedClient("mcct-one");
        a.setCompressThreshold(1000);
        MemCachedClient off = new MemCachedClient("mcct-one");
        off.setCompressEnable(false);
        off.setCompressThreshold(5);
        char[] z = new char[1001];
        Arrays.fill(z, 'z');
        String at = new String(z, 0, 1000), above = new String(z);
        assertTrue(a.set("mcct-cz-1000", at));
        assertTrue(a.set("mcct-cz-1001", above));
        assertTrue(off.set("mcct-cz-off", above));
        assertTrue(mc.set("mcct-cz-dflt", above)); // default threshold 30720: not compressed
        assertEquals("VALUE mcct-cz-1000 32 1000", rawHeader("mcct-cz-1000"));
        String h = rawHeader("mcct-cz-1001");
        assertTrue(h, h.startsWith("VALUE mcct-cz-1001 34 ")); // 32 (String) | 2 (gzip)
        assertTrue(h, Integer.parseInt(h.substring(h.lastIndexOf(' ') + 1)) < 200);
        assertEquals("VALUE mcct-cz-off 32 1001", rawHeader("mcct-cz-off"));
        assertEquals("VALUE mcct-cz-dflt 32 1001", rawHeader("mcct-cz-dflt"));
        assertEquals(above, off.get("mcct-cz-1001"));
        assertEquals(1, one.nativeClients());
        // One client: the operations of every MemCachedClient are counted together.
        long before = a.metrics().get(server.addr()).get("operations");
        for (int i = 0; i < 5; i++) off.get("mcct-cz-off");
        assertEquals(before + 5, (long) a.metrics().get(server.addr()).get("operations"));
        assertEquals(1, one.nativeClients());
        // Key sanitizing is the one per-client rule in the core: turning it off builds the
        // pool's second native client.
        MemCachedClient raw = new MemCachedClient("mcct-one");
        raw.setSanitizeKeys(false);
        assertEquals(above, raw.get("mcct-cz-off"));
        assertEquals(2, one.nativeClients());
    }

    /** Whalin's API answers a server failure with null, but a value that exists and cannot be
     * read is thrown: a serialized object with bytes appended (memcached keeps the flags) is
     * MCPOOL_VALUE_FORMAT naming the key, never the object without them nor a null that looks
     * like a miss. Before, get returned [1, 2]. */
    @Test
    public void bytesAppendedToASerializedObjectAreAnError() {
        MemCachedClient s = new MemCachedClient("mcct");
        s.setSerializationEnabled(true);
        java.util.ArrayList<Integer> list = new java.util.ArrayList<>(Arrays.asList(1, 2));
        assertTrue(s.set("mcct:ser", list));
        assertTrue(s.set("mcct:ser-untouched", list));
        assertTrue(s.append("mcct:ser", "JUNK"));
        try {
            s.get("mcct:ser");
            fail("a serialized object with bytes appended was read");
        } catch (ServerException e) {
            assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains("mcct:ser")
                && e.getMessage().contains("4 bytes after the serialized object"));
        }
        try {
            s.getMulti(new String[] {"mcct:ser", "mcct:ser-untouched"});
            fail("getMulti read a serialized object with bytes appended");
        } catch (UnreadableValuesException e) {
            assertEquals(list, e.hits().get("mcct:ser-untouched"));
            assertEquals("MCPOOL_VALUE_FORMAT", e.errors().get("mcct:ser").statusName());
        }
        assertEquals(list, s.get("mcct:ser-untouched"));
    }

    /** primitiveAsString: natively handled values other than byte[] are stored as their
     * toString() under MARKER_STRING (32), which every Whalin client reads as that String (Whalin
     * 2.0 wrote flags 0, which its clients without primitiveAsString read as null; 2.6 wrote
     * each type's marker over the text, which they decode as that type's binary form); every
     * value that is not serialized or byte[] reads back as a String; a byte[] is stored and read
     * back as its bytes (MARKER_BYTEARR), never the String of a UTF-8 decoding (0xff 0xfe read
     * back as U+FFFD U+FFFD). */
    /** The item as memcached holds it under a key this API URL-encodes (sanitizeKeys). */
    private static TestServer.RawItem raw(String key) throws Exception {
        return server.raw(java.net.URLEncoder.encode(key, "UTF-8"));
    }

    @Test
    public void primitiveAsString() throws Exception {
        MemCachedClient p = new MemCachedClient("mcct");
        p.setPrimitiveAsString(true);
        assertTrue(p.set("mcct:pas", 123));
        TestServer.RawItem raw = raw("mcct:pas");
        assertEquals(32, raw.flags); // MARKER_STRING
        assertArrayEquals("123".getBytes(StandardCharsets.US_ASCII), raw.data);
        assertEquals("123", p.get("mcct:pas"));
        assertEquals(124, p.incr("mcct:pas"));
        assertEquals("124", mc.get("mcct:pas")); // MARKER_STRING: a String for the default client too
        Object[] natives = {7L, (short) 5, (byte) 1, true, new StringBuilder("sb"), "t\u00e9xt"};
        for (Object v : natives) {
            assertTrue(p.set("mcct:pas:n", v));
            assertEquals(v.toString(), 32, raw("mcct:pas:n").flags);
            assertEquals(v.toString(), p.get("mcct:pas:n"));
            assertEquals(v.toString(), mc.get("mcct:pas:n"));
        }
        // byte[]: its bytes both ways, under MARKER_BYTEARR
        byte[] bin = {(byte) 0xff, (byte) 0xfe, 0x41};
        assertTrue(p.set("mcct:pas:b", bin));
        raw = raw("mcct:pas:b");
        assertEquals(4096, raw.flags);
        assertArrayEquals(bin, raw.data);
        assertArrayEquals(bin, (byte[]) p.get("mcct:pas:b"));
        assertTrue(mc.set("mcct:pas:b2", bin)); // written by a client without primitiveAsString
        assertArrayEquals(bin, (byte[]) p.get("mcct:pas:b2"));
        assertArrayEquals(bin, (byte[]) p.getMulti(new String[] {"mcct:pas:b2"}).get("mcct:pas:b2"));
        // a typed value another client wrote reads as its text
        assertTrue(mc.set("mcct:pas:long", 42L));
        assertEquals(16384, raw("mcct:pas:long").flags);
        assertEquals("42", p.get("mcct:pas:long"));
    }

    @Test
    public void statsFlush() {
        Map<String, Map<String, String>> st = mc.stats();
        assertEquals(1, st.size());
        assertTrue(st.get(server.addr()).containsKey("pid"));
        assertTrue(mc.stats(new String[] {server.addr()}).containsKey(server.addr()));
        assertTrue(mc.stats(new String[] {"nope:1"}).isEmpty());
        mc.set("mcct:stats", "x");
        assertFalse(mc.statsItems().get(server.addr()).isEmpty());
        assertFalse(mc.statsSlabs().get(server.addr()).isEmpty());
        assertTrue(mc.flushAll());
        assertNull(mc.get("mcct:stats"));
    }

    @Test
    public void badInput() {
        try {
            mc.set(null, "v");
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
        }
        try {
            mc.get(null);
            fail();
        } catch (ClientException e) {
            // documented: null key
        }
        char[] longKey = new char[251];
        Arrays.fill(longKey, 'k');
        try {
            mc.set(new String(longKey), "v");
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_INVALID_KEY", e.statusName());
        }
        try {
            mc.set("mcct:obj", new Object());
            fail();
        } catch (ClientException e) {
            assertTrue(e.getMessage().contains("java.lang.Object"));
        }
        MemCachedClient ser = new MemCachedClient("mcct");
        ser.setSerializationEnabled(true);
        try {
            ser.set("mcct:obj", new Object()); // not Serializable even when enabled
            fail();
        } catch (ClientException e) {
            assertTrue(e.getMessage().contains("not Serializable"));
        }
        try {
            mc.set("mcct:null", null);
            fail();
        } catch (ClientException e) {
            // null value
        }
        try {
            pool.setHashingAlg(7); // on the initialized pool: refused whatever the number
            fail();
        } catch (ConfigurationException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("SockIOPool mcct is initialized"));
            assertEquals(SockIOPool.CONSISTENT_HASH, pool.getHashingAlg());
        }
        try {
            new MemCachedClient("never-initialized").get("k");
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_CONFIG", e.statusName());
        }
        // a value too large is no caller's mistake here: Whalin's false (WhalinErrorsTest)
        byte[] huge = new byte[2 * 1024 * 1024];
        new java.util.Random(1).nextBytes(huge);
        assertFalse(mc.set("mcct:huge", huge));
    }

    @Test
    public void serializationOnlyWhenEnabled() {
        MemCachedClient ser = new MemCachedClient("mcct");
        ser.setSerializationEnabled(true);
        java.util.ArrayList<String> list = new java.util.ArrayList<>(Arrays.asList("a", "b"));
        assertTrue(ser.set("mcct:ser", list));
        assertEquals(list, ser.get("mcct:ser"));
        try {
            mc.get("mcct:ser"); // flag 8, serialization off: never deserialized
            fail();
        } catch (ServerException e) { // a value that cannot be delivered, as Mcpool's
            assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
            assertTrue(e.getMessage().contains("serialization is off"));
        }
    }

    /** A Whalin serialized value (flags 8: a Java-serialized "hello", as a Whalin writer
     * stores it) read with serialization off is the error the strict {@link Mcpool} gives for
     * the same item under the same format: a {@link ServerException} MCPOOL_VALUE_FORMAT
     * naming the key and its flags, from get, gets and (in an
     * {@link UnreadableValuesException}, the other hits kept) getMulti and getMultiArray.
     * Before (hostile3 3), MemCachedClient threw a ClientException with status 0 (MCPOOL_OK)
     * and the name "JAVA". */
    @Test
    public void aSerializedValueWithSerializationOffIsValueFormatAsInMcpool() throws Exception {
        java.io.ByteArrayOutputStream bos = new java.io.ByteArrayOutputStream();
        try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(bos)) {
            out.writeObject("hello");
        }
        String key = "mcct-whalin-ser", other = "mcct-whalin-ser-other"; // unchanged by key sanitizing
        McpoolException strictError;
        try (Mcpool writer = Mcpool.builder().servers(server.addr()).valueFormat("libmemcached").build();
             Mcpool strict = Mcpool.builder().servers(server.addr()).valueFormat("whalin").build()) {
            assertTrue(writer.setBytes(key, bos.toByteArray(), 8, 0));
            strictError = assertThrows(McpoolException.class, () -> strict.get(key));
        }
        assertEquals(ServerException.class, strictError.getClass());
        assertEquals("MCPOOL_VALUE_FORMAT", strictError.statusName());
        assertTrue(mc.set(other, "world"));
        java.util.List<McpoolException> errors = new java.util.ArrayList<>();
        errors.add(assertThrows(McpoolException.class, () -> mc.get(key)));
        errors.add(assertThrows(McpoolException.class, () -> mc.gets(key)));
        UnreadableValuesException multi = assertThrows(UnreadableValuesException.class,
            () -> mc.getMulti(new String[] {key, other}));
        assertEquals(Map.of(other, "world"), multi.hits());
        assertEquals(strictError.status(), multi.status());
        errors.add(multi.errors().get(key));
        errors.add(assertThrows(UnreadableValuesException.class,
            () -> mc.getMultiArray(new String[] {other, key})).errors().get(key));
        for (McpoolException e : errors) {
            assertNotNull(e);
            assertEquals(e.getMessage(), strictError.getClass(), e.getClass());
            assertEquals(e.getMessage(), strictError.status(), e.status());
            assertEquals(e.getMessage(), strictError.statusName(), e.statusName());
            assertTrue(e.getMessage(), e.getMessage().startsWith("MCPOOL_VALUE_FORMAT: the value of " + key
                + " with flags 8 (0x8): the value is a Java serialized object"));
            assertTrue(e.getMessage(), e.getMessage().contains("serialization is off"));
        }
        assertTrue(mc.keyExists(key));
        MemCachedClient ser = new MemCachedClient("mcct");
        ser.setSerializationEnabled(true);
        assertEquals("hello", ser.get(key)); // the same item, read where serialization is on
    }

    @Test
    public void connectionErrors() throws Exception {
        SockIOPool dead = SockIOPool.getInstance("mcct-dead");
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        dead.setServers(new String[] {"127.0.0.1:" + port});
        dead.setFailover(false);
        dead.setSocketConnectTO(500);
        dead.initialize();
        try {
            // Whalin's answer to a down server: false, not an exception (FailureSemanticsTest)
            assertFalse(new MemCachedClient("mcct-dead").set("k", "v"));
        } finally {
            dead.shutDown();
        }
        assertFalse(dead.isInitialized());
    }

    @Test
    public void hashingAlgorithms() throws Exception {
        for (int alg = 0; alg <= 3; alg++) {
            SockIOPool p = SockIOPool.getInstance("mcct-alg" + alg);
            p.setServers(new String[] {server.addr()});
            p.setHashingAlg(alg);
            p.initialize();
            try {
                MemCachedClient c = new MemCachedClient("mcct-alg" + alg);
                assertTrue(c.set("alg key", alg));
                assertEquals(alg, c.get("alg key")); // an Integer, as stored
            } finally {
                p.shutDown();
            }
        }
    }

    /** setDefaultEncoding: Whalin's charset of String values. mcpool's core reads and writes
     * text as UTF-8 in every value format, so only UTF-8 is taken; any other name is refused
     * at the call (before, every name was accepted and ignored: Latin-1 strings Whalin wrote
     * then failed on read, and ours reached Whalin as UTF-8 mojibake). A Whalin string that
     * is not UTF-8 is an unreadable value (MCPOOL_VALUE_FORMAT naming the key), not text
     * with U+FFFD; its bytes are readable through the libmemcached format's getBytes. */
    @Test
    public void defaultEncodingIsUtf8OrRefused() throws Exception {
        MemCachedClient c = new MemCachedClient("mcct");
        c.setDefaultEncoding("UTF-8");
        c.setDefaultEncoding("utf8");
        for (String enc : new String[] {"ISO-8859-1", "UTF-16", "no-such-charset", "bad name!"}) {
            try {
                c.setDefaultEncoding(enc);
                fail("setDefaultEncoding(" + enc + ") was accepted and ignored");
            } catch (ConfigurationException e) {
                assertEquals("MCPOOL_UNSUPPORTED", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains(enc) && e.getMessage().contains("UTF-8"));
            }
        }
        // What Whalin with setDefaultEncoding("ISO-8859-1") stores for "caf\u00e9".
        rawSet("mcct_latin1", 32, new byte[] {'c', 'a', 'f', (byte) 0xe9});
        try {
            c.get("mcct_latin1");
            fail("a non-UTF-8 string was read as text");
        } catch (ServerException e) {
            assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains("mcct_latin1"));
        }
        // The bytes and flags as stored: a client of the libmemcached format (flags uninterpreted).
        try (Mcpool raw = Mcpool.builder().servers(server.addr()).valueFormat("libmemcached").build()) {
            CachedData d = raw.getBytes("mcct_latin1");
            assertEquals(32, d.flags);
            assertEquals("caf\u00e9", new String(d.data, java.nio.charset.StandardCharsets.ISO_8859_1));
        }
    }
}
