package io.mcpool;

import static org.junit.Assert.*;

import java.util.Map;
import org.junit.Test;

/** The AutoCloseable entry point: every method, close semantics. */
public class McpoolTest extends ServerTestBase {

    @Test
    public void aValueJavaCannotStoreIsInvalidArgumentNamingItsKey() {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).build()) {
            java.util.List<Runnable> single = java.util.Arrays.asList(
                () -> mc.set("nv:one", null, 0), () -> mc.add("nv:one", null, 0),
                () -> mc.cas("nv:one", null, 0, 1), () -> mc.append("nv:one", null),
                () -> mc.set("nv:one", new Object(), 0));
            for (Runnable call : single) {
                try {
                    call.run();
                    fail("stored a value Java cannot encode");
                } catch (ClientException e) {
                    assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                    assertEquals(100, e.status());
                    assertTrue(e.getMessage(), e.getMessage().contains("(key \"nv:one\")"));
                }
            }
            Map<String, Object> many = new java.util.LinkedHashMap<>();
            for (int i = 0; i < 100; i++) many.put("nv:m" + i, i == 57 ? null : "v" + i);
            try {
                mc.setMulti(many, 0);
                fail("setMulti stored a null");
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("cannot store null (key \"nv:m57\")"));
            }
            assertNull(mc.get("nv:m0")); // refused before anything was sent
        }
    }

    @Test
    public void countersAreUnsigned() {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).build()) {
            assertTrue(mc.setBytes("m:u", "5".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, 0));
            // A negative delta or initial value is refused before any I/O: never sent as the
            // unsigned number with the same bits (incr -2 was a decrement, decr -1 zeroed).
            java.util.List<Runnable> bad = java.util.Arrays.asList(() -> mc.incr("m:u", -2), () -> mc.decr("m:u", -1),
                () -> mc.incrOrInit("m:u", -1, 0, 0), () -> mc.decrOrInit("m:u", -1, 0, 0),
                () -> mc.incrOrInit("m:u-new", 1, -7, 0), () -> mc.decrOrInit("m:u-new", 1, -7, 0));
            for (Runnable r : bad) {
                try {
                    r.run();
                    fail("a negative delta or initial value was accepted");
                } catch (ClientException e) {
                    assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                }
            }
            assertEquals(5, mc.incr("m:u", 0).getAsLong());
            assertNull(mc.getBytes("m:u-new"));
            // Above Long.MAX_VALUE: the exact value in an error, never a negative long.
            assertTrue(mc.setBytes("m:u", Long.toString(Long.MAX_VALUE).getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, 0));
            try {
                mc.incr("m:u", 2);
                fail("a counter above Long.MAX_VALUE came back as a long");
            } catch (ClientException e) {
                assertEquals("MCPOOL_OUT_OF_RANGE", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("9223372036854775809"));
            }
            assertEquals("9223372036854775809", new String(mc.getBytes("m:u").data, java.nio.charset.StandardCharsets.US_ASCII));
        }
    }

    /** An error names the call made ({@code set "k": ...}), as the C ABI's own set and get
     * do; before, Java said {@code store_kind_compress "k"}, {@code get_into "k"} and
     * {@code get_multi_into "k"}: C functions a Java caller never called. */
    @Test
    public void errorsNameTheCallNotTheCFunction() {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).build()) {
            String bad = "m:a b";
            java.util.Map<String, Runnable> calls = new java.util.LinkedHashMap<>();
            calls.put("set", () -> mc.set(bad, "v", 0));
            calls.put("add", () -> mc.add(bad, "v", 0));
            calls.put("replace", () -> mc.replace(bad, "v", 0));
            calls.put("get", () -> mc.get(bad));
            calls.put("gets", () -> mc.gets(bad));
            calls.put("get_multi", () -> mc.getMulti(bad, "m:ok"));
            for (Map.Entry<String, Runnable> c : calls.entrySet()) {
                try {
                    c.getValue().run();
                    fail(c.getKey() + " accepted a key with a space");
                } catch (ClientException e) {
                    String m = e.getMessage();
                    // the key named once (tester finding keys2 5)
                    assertTrue(c.getKey() + ": " + m, m.contains(c.getKey() + ": invalid key \"" + bad + "\": "));
                    assertFalse(c.getKey() + ": " + m, m.contains("store_kind") || m.contains("_into"));
                }
            }
        }
    }

    /** A negative TTL of a store, touch or counter stores the item already expired (the core's
     * it); the lease times, which have no such meaning, refuse one before anything is sent
     * (MCPOOL_INVALID_ARGUMENT, the TTL as given in the message). The meta
     * protocol, so that touch's TTL can be read back. */
    @Test
    public void negativeTtlsExpireAtOnceOrAreRefused() {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol("meta").build()) {
            for (int ttl : new int[] {-1, -2, Integer.MIN_VALUE}) {
                assertTrue(mc.set("m:ttl:old", "old", 100));
                long[] cas = {mc.gets("m:ttl:old").getCasUnique()};
                mc.delete("m:ttl:new");
                // stores: answered as stored, the item already gone
                java.util.Map<String, java.util.function.BooleanSupplier> stores = new java.util.LinkedHashMap<>();
                stores.put("set", () -> mc.set("m:ttl:new", "v", ttl));
                stores.put("add", () -> mc.add("m:ttl:new", "v", ttl));
                stores.put("setBytes", () -> mc.setBytes("m:ttl:new", new byte[] {1}, 0, ttl));
                stores.put("setMulti #1", () -> mc.setMulti(java.util.Collections.singletonMap("m:ttl:new", "v"), ttl).get("m:ttl:new"));
                stores.put("setMulti #2", () -> mc.setMulti(java.util.Collections.singletonMap("m:ttl:new", "v"), k -> ttl).get("m:ttl:new"));
                for (Map.Entry<String, java.util.function.BooleanSupplier> c : stores.entrySet()) {
                    assertTrue(c.getKey() + " " + ttl, c.getValue().getAsBoolean());
                    assertNull(c.getKey() + " " + ttl, mc.getBytes("m:ttl:new"));
                }
                assertEquals(5L, mc.incrOrInit("m:ttl:new", 1, 5, ttl));
                assertNull(mc.getBytes("m:ttl:new"));
                assertEquals(5L, mc.decrOrInit("m:ttl:new", 1, 5, ttl));
                assertNull(mc.getBytes("m:ttl:new"));
                // the old item, while it is there, until each of these expires it
                assertTrue(mc.cas("m:ttl:old", "new", ttl, cas[0]));
                assertNull(mc.getBytes("m:ttl:old"));
                assertTrue(mc.set("m:ttl:old", "old", 100));
                assertTrue(mc.replace("m:ttl:old", "new", ttl));
                assertNull(mc.getBytes("m:ttl:old"));
                assertTrue(mc.set("m:ttl:old", "old", 100));
                assertTrue(mc.touch("m:ttl:old", ttl));
                assertNull(mc.getBytes("m:ttl:old"));
                // lease times: refused, nothing sent
                assertTrue(mc.set("m:ttl:old", "old", 100));
                java.util.Map<String, Runnable> calls = new java.util.LinkedHashMap<>();
                calls.put("getLease", () -> mc.getLease("m:ttl:new", ttl, 0));
                calls.put("getLease (recacheBelow)", () -> mc.getLease("m:ttl:old", 30, ttl));
                calls.put("invalidate", () -> mc.invalidate("m:ttl:old", ttl));
                for (Map.Entry<String, Runnable> c : calls.entrySet()) {
                    try {
                        c.getValue().run();
                        fail(c.getKey() + " accepted the TTL " + ttl);
                    } catch (ClientException e) {
                        assertEquals(c.getKey(), "MCPOOL_INVALID_ARGUMENT", e.statusName());
                        // the number given (it was cast first: "4294967295 is above 2147483647")
                        assertTrue(c.getKey() + ": " + e.getMessage(), e.getMessage().contains(ttl + " is negative"));
                        assertFalse(c.getKey() + ": " + e.getMessage(), e.getMessage().contains(Integer.toUnsignedString(ttl) + " is above"));
                    }
                }
                assertNull(mc.getBytes("m:ttl:new"));
                assertEquals("old", mc.gets("m:ttl:old").getValue());
                long left = mc.metaInfo("m:ttl:old").ttlSeconds();
                assertTrue("TTL " + left, left > 90 && left <= 100);
            }
            // the largest TTL is stored and kept (an absolute time in 2038)
            assertTrue(mc.set("m:ttl:max", "v", Integer.MAX_VALUE));
            assertEquals("v", mc.get("m:ttl:max"));
            assertTrue(mc.touch("m:ttl:max", Integer.MAX_VALUE));
            assertEquals("v", mc.get("m:ttl:max"));
        }
    }

    @Test
    public void everyMethod() {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).distribution("whalin-native").minIdle(1)
                .maxConnections(4).ioTimeoutMillis(2000).connectTimeoutMillis(1000).poolTimeoutMillis(2000)
                .noDelay(true).testOnCheckOut(false).idleTimeoutMillis(60_000).retryTimeoutMillis(500)
                .compressionCodec("gzip").compressionThreshold(1024).compressionRatio(0.9).protocol("text")
                .failover("fail-fast").maxValueSize(1 << 20).build()) {
            assertFalse(Mcpool.coreVersion().isEmpty());
            assertEquals(1, mc.servers().size());
            assertEquals(0, mc.serverIndexFor("any"));
            assertTrue(mc.set("m:a", "1"));
            assertTrue(mc.set("m:b", 2, 60));
            assertFalse(mc.add("m:a", "x", 0));
            assertTrue(mc.add("m:c", "c", 0));
            assertTrue(mc.replace("m:c", "cc", 0));
            assertTrue(mc.append("m:c", "!"));
            assertTrue(mc.prepend("m:c", "?"));
            assertEquals("?cc!", mc.get("m:c"));
            MemcachedItem it = mc.gets("m:c");
            assertTrue(mc.cas("m:c", "new", 0, it.casUnique));
            assertFalse(mc.cas("m:c", "newer", 0, it.casUnique));
            Map<String, Object> m = mc.getMulti("m:a", "m:b", "m:none");
            assertEquals(2, m.size());
            assertEquals(2L, m.get("m:b")); // integers read back as Long
            assertTrue(mc.setBytes("m:raw", new byte[] {9, 8}, 77, 0));
            CachedData raw = mc.getBytes("m:raw");
            assertEquals(77, raw.flags);
            assertArrayEquals(new byte[] {9, 8}, raw.data);
            assertNull(mc.getBytes("m:none"));
            assertTrue(mc.touch("m:a", 100));
            assertFalse(mc.touch("m:none", 100));
            assertTrue(mc.delete("m:a"));
            assertFalse(mc.delete("m:a"));
            assertFalse(mc.incr("m:n", 1).isPresent());
            assertEquals(5, mc.incrOrInit("m:n", 1, 5, 0));
            assertEquals(6, mc.incr("m:n", 1).getAsLong());
            assertEquals(4, mc.decr("m:n", 2).getAsLong());
            assertEquals(3, mc.decrOrInit("m:n", 1, 100, 0));
            assertEquals(100, mc.decrOrInit("m:n2", 1, 100, 0));
            assertTrue(mc.setCounter("m:c", 41, 100));
            CachedData ctr = mc.getBytes("m:c");
            assertEquals(0, ctr.flags); // decimal text, raw flags 0, whatever the format
            assertArrayEquals("41".getBytes(java.nio.charset.StandardCharsets.US_ASCII), ctr.data);
            assertEquals(42, mc.incr("m:c", 1).getAsLong());
            // memcached's counters are unsigned 64-bit: a negative long is refused, never
            // stored (it was, as "-1", a counter no incr takes) nor read as 2^64-1
            for (long bad : new long[] {-1, Long.MIN_VALUE}) {
                try {
                    mc.setCounter("m:c", bad, 0);
                    fail("setCounter took " + bad);
                } catch (ClientException e) {
                    assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                    assertTrue(e.getMessage(), e.getMessage().contains("negative counter value " + bad));
                }
            }
            assertEquals(42, mc.incr("m:c", 0).getAsLong());
            assertTrue(mc.setCounter("m:c", Long.MAX_VALUE, 0));
            assertArrayEquals(Long.toString(Long.MAX_VALUE).getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                mc.getBytes("m:c").data);
            // 2^64-1, as the Javadoc says: its decimal text with flags 0; incr wraps to 0
            assertTrue(mc.setBytes("m:c", Long.toUnsignedString(-1L).getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, 0));
            assertEquals(0, mc.incr("m:c", 1).getAsLong());
            assertTrue(mc.stats(null).get(server.addr()).containsKey("curr_items"));
            assertTrue(mc.stats("settings").get(server.addr()).containsKey("maxbytes"));
            assertTrue(mc.versions().get(server.addr()).startsWith("1."));
            mc.flushAll();
            assertNull(mc.get("m:b"));
        }
    }

    /** setCounterUnsigned stores a counter from 2^63 to 2^64-1 as setCounter stores the others,
     * decimal text with raw flags 0, in every value format (tester finding javateam2 1: the
     * documented setBytes(..., 0, ...) recipe stored the bytes kind's flags under spymemcached
     * and whalin, a byte[] to those clients). */
    @Test
    public void setCounterUnsignedIsRawFlagsZeroInEveryFormat() throws Exception {
        for (String fmt : new String[] {"mcpool", "whalin", "spymemcached", "pylibmc"}) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).valueFormat(fmt).build()) {
                String k = "m:unsigned:" + fmt;
                assertTrue(mc.setCounterUnsigned(k, -1L, 0));
                TestServer.RawItem raw = server.raw(k);
                assertEquals(fmt, 0, raw.flags);
                assertArrayEquals(fmt, "18446744073709551615".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                    raw.data);
                assertEquals(fmt, 0, mc.incr(k, 1).getAsLong()); // wraps, as memcached's counters
                assertTrue(mc.setCounterUnsigned(k, Long.MIN_VALUE, 0));
                assertArrayEquals(fmt, "9223372036854775808".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
                    server.raw(k).data);
            }
        }
    }

    /** Tester findings: flags above 16 bits were rewritten (0x12345 stored as 0x1012345, a
     * text value), and cas with CAS 0 was an unconditional set over binary. The core refuses
     * both before anything is sent, on every protocol. */
    @Test
    public void batchedTouchArithAndStores() throws Exception {
        // The batched commands of the C ABI (touch_multi, arith_multi, store_multi), each one
        // pipelined round trip per server, a status per key; and flushAll with a delay.
        String other = server.addr();
        try (TestServer second = new TestServer();
             Mcpool mc = Mcpool.builder().servers(other, second.addr()).build()) {
            java.util.List<String> keys = new java.util.ArrayList<>();
            for (int i = 0; i < 12; i++) keys.add("bm:" + i);
            mc.deleteMulti(keys);
            Map<String, Object> vals = new java.util.LinkedHashMap<>();
            for (String k : keys) vals.put(k, "v-" + k);
            // add: stored where absent, false where present
            assertTrue(mc.set("bm:0", "old", 0));
            Map<String, Boolean> added = mc.addMulti(vals, 0);
            assertEquals(Boolean.FALSE, added.get("bm:0"));
            for (String k : keys.subList(1, keys.size())) assertEquals(k, Boolean.TRUE, added.get(k));
            assertEquals("old", mc.get("bm:0"));
            assertEquals("v-bm:5", mc.get("bm:5"));
            // replace: true where present, false where missing
            Map<String, Object> rep = new java.util.LinkedHashMap<>();
            rep.put("bm:1", "r1");
            rep.put("bm:missing", "r");
            mc.delete("bm:missing");
            Map<String, Boolean> replaced = mc.replaceMulti(rep, 0);
            assertEquals(Boolean.TRUE, replaced.get("bm:1"));
            assertEquals(Boolean.FALSE, replaced.get("bm:missing"));
            assertEquals("r1", mc.get("bm:1"));
            // append / prepend: text and bytes only
            Map<String, Object> app = new java.util.LinkedHashMap<>();
            app.put("bm:1", "+a");
            app.put("bm:missing", "+a");
            Map<String, Boolean> appended = mc.appendMulti(app);
            assertEquals(Boolean.TRUE, appended.get("bm:1"));
            assertEquals(Boolean.FALSE, appended.get("bm:missing"));
            Map<String, Object> pre = new java.util.LinkedHashMap<>();
            pre.put("bm:1", "p-");
            assertEquals(Boolean.TRUE, mc.prependMulti(pre).get("bm:1"));
            assertEquals("p-r1+a", mc.get("bm:1"));
            try {
                mc.appendMulti(java.util.Collections.singletonMap("bm:1", 5L));
                fail("an integer appended");
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
            }
            // cas: true where unchanged, false where another writer came first
            MemcachedItem g2 = mc.gets("bm:2"), g3 = mc.gets("bm:3");
            assertTrue(mc.set("bm:3", "changed", 0));
            Map<String, MemcachedItem> casItems = new java.util.LinkedHashMap<>();
            casItems.put("bm:2", new MemcachedItem("cas2", g2.casUnique));
            casItems.put("bm:3", new MemcachedItem("cas3", g3.casUnique));
            Map<String, Boolean> cased = mc.casMulti(casItems, 0);
            assertEquals(Boolean.TRUE, cased.get("bm:2"));
            assertEquals(Boolean.FALSE, cased.get("bm:3"));
            assertEquals("cas2", mc.get("bm:2"));
            assertEquals("changed", mc.get("bm:3"));
            // casMultiResults tells a changed key from a gone one
            assertTrue(mc.set("bm:cas2b", "before", 0));
            MemcachedItem g2b = mc.gets("bm:cas2b"), g3b = mc.gets("bm:3");
            assertTrue(mc.set("bm:3", "changed again", 0));
            mc.delete("bm:casgone");
            assertTrue(mc.set("bm:casgone", "x", 0));
            MemcachedItem gone = mc.gets("bm:casgone");
            assertTrue(mc.delete("bm:casgone"));
            Map<String, MemcachedItem> casItems2 = new java.util.LinkedHashMap<>();
            casItems2.put("bm:cas2b", new MemcachedItem("cas2b", g2b.casUnique));
            casItems2.put("bm:3", new MemcachedItem("cas3b", g3b.casUnique));
            casItems2.put("bm:casgone", new MemcachedItem("back", gone.casUnique));
            Map<String, CasResult> casRes = mc.casMultiResults(casItems2, 0);
            assertEquals(CasResult.OK, casRes.get("bm:cas2b"));
            assertEquals(CasResult.EXISTS, casRes.get("bm:3"));
            assertEquals(CasResult.NOT_FOUND, casRes.get("bm:casgone"));
            assertEquals("cas2b", mc.get("bm:cas2b"));
            assertEquals("changed again", mc.get("bm:3"));
            assertNull(mc.get("bm:casgone"));
            // an Integer under the default format goes through the kind path, read back as Long
            Map<String, Object> ints = new java.util.LinkedHashMap<>();
            ints.put("bm:int", 41);
            mc.delete("bm:int");
            assertEquals(Boolean.TRUE, mc.addMulti(ints, 0).get("bm:int"));
            assertEquals(41L, mc.get("bm:int"));
            // touch: true where present, false where missing; -1 expires at once
            java.util.List<String> touch = java.util.Arrays.asList("bm:4", "bm:5", "bm:missing");
            Map<String, Boolean> touched = mc.touchMulti(touch, 3600);
            assertEquals(Boolean.TRUE, touched.get("bm:4"));
            assertEquals(Boolean.TRUE, touched.get("bm:5"));
            assertEquals(Boolean.FALSE, touched.get("bm:missing"));
            assertEquals(Boolean.TRUE, mc.touchMulti(java.util.Arrays.asList("bm:4"), -1).get("bm:4"));
            assertNull(mc.get("bm:4"));
            // a ttl per key, as Rust, C and Perl take them: -1 expires bm:5 at once, bm:3 stays
            Map<String, Integer> ttlOf = new java.util.LinkedHashMap<>();
            ttlOf.put("bm:3", 3600);
            ttlOf.put("bm:5", -1);
            ttlOf.put("bm:missing", 10);
            Map<String, Boolean> touchedEach = mc.touchMulti(ttlOf);
            assertEquals(new java.util.ArrayList<>(ttlOf.keySet()), new java.util.ArrayList<>(touchedEach.keySet()));
            assertEquals(Boolean.TRUE, touchedEach.get("bm:3"));
            assertEquals(Boolean.TRUE, touchedEach.get("bm:5"));
            assertEquals(Boolean.FALSE, touchedEach.get("bm:missing"));
            assertNull(mc.get("bm:5"));
            assertNotNull(mc.get("bm:3"));
            ttlOf.put("bm:3", null);
            try {
                mc.touchMulti(ttlOf);
                fail("a null ttl was sent");
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("bm:3"));
            }
            // incr / decr: new values, empty for a missing key; a text value is the server's error
            java.util.List<String> ctrs = java.util.Arrays.asList("bm:c1", "bm:c2", "bm:cmissing");
            mc.delete("bm:cmissing");
            assertTrue(mc.setCounter("bm:c1", 10, 0));
            assertTrue(mc.setCounter("bm:c2", 20, 0));
            Map<String, java.util.OptionalLong> inc = mc.incrMulti(ctrs, 5);
            assertEquals(15, inc.get("bm:c1").getAsLong());
            assertEquals(25, inc.get("bm:c2").getAsLong());
            assertFalse(inc.get("bm:cmissing").isPresent());
            Map<String, java.util.OptionalLong> dec = mc.decrMulti(ctrs, 30);
            assertEquals(0, dec.get("bm:c1").getAsLong());
            assertEquals(0, dec.get("bm:c2").getAsLong());
            try {
                mc.incrMulti(ctrs, -1);
                fail("a negative delta was sent");
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
            }
            assertEquals(0, mc.incr("bm:c1", 0).getAsLong());
            try {
                mc.incrMulti(java.util.Arrays.asList("bm:c1", "bm:1"), 1); // bm:1 holds text
                fail("incr of text");
            } catch (PartialBatchException e) {
                assertEquals("MCPOOL_CLIENT_ERROR", e.statusName());
                assertTrue(e.errors().get("bm:1") instanceof ClientException);
                // the other key's answer is kept: it was counted
                assertEquals(java.util.OptionalLong.of(1), e.answers().get("bm:c1"));
            }
            assertEquals(1, mc.incr("bm:c1", 0).getAsLong()); // the other key was still counted
            // a delta per key, as Rust, C and Perl take them (tester finding mutations 4)
            Map<String, Long> per = new java.util.LinkedHashMap<>();
            per.put("bm:c1", 4L);
            per.put("bm:c2", 7L);
            per.put("bm:cmissing", 1L);
            Map<String, java.util.OptionalLong> each = mc.incrMulti(per);
            assertEquals(new java.util.ArrayList<>(per.keySet()), new java.util.ArrayList<>(each.keySet()));
            assertEquals(5, each.get("bm:c1").getAsLong());
            assertEquals(7, each.get("bm:c2").getAsLong());
            assertFalse(each.get("bm:cmissing").isPresent());
            per.put("bm:c1", 2L);
            per.put("bm:c2", 10L);
            each = mc.decrMulti(per);
            assertEquals(3, each.get("bm:c1").getAsLong());
            assertEquals(0, each.get("bm:c2").getAsLong());
            for (Long bad : new Long[] {-1L, null}) {
                per.put("bm:c2", bad);
                try {
                    mc.incrMulti(per);
                    fail("a delta of " + bad + " was sent");
                } catch (ClientException e) {
                    assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                    assertTrue(e.getMessage(), e.getMessage().contains("bm:c2"));
                }
            }
            assertEquals(3, mc.incr("bm:c1", 0).getAsLong()); // nothing was sent
            assertTrue(mc.setBytes("bm:big", Long.toString(Long.MAX_VALUE).getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0, 0));
            try {
                mc.incrMulti(java.util.Arrays.asList("bm:big"), 1);
                fail("a counter above Long.MAX_VALUE as a long");
            } catch (PartialBatchException e) {
                assertEquals("MCPOOL_OUT_OF_RANGE", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("9223372036854775808"));
            }
            // flushAll with a delay: nothing goes at once; flushAll(0) empties both servers
            mc.flushAll(3600);
            assertEquals("cas2", mc.get("bm:2"));
            mc.flushAll(0);
            assertNull(mc.get("bm:2"));
            assertNull(mc.get("bm:5"));
        }
    }

    @Test
    public void wideFlagsAndCasZeroAreRefused() {
        for (String proto : new String[] {"text", "meta", "binary"}) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(proto).build()) {
                String k = "m:wide:" + proto;
                assertTrue(mc.setBytes(k, new byte[] {1, 2}, 0xffff, 0));
                for (int wide : new int[] {0x10000, 0x12345, 0x70000, 0xffffffff}) {
                    try {
                        mc.setBytes(k, new byte[] {3}, wide, 0);
                        fail(proto + ": flags " + Integer.toHexString(wide) + " accepted");
                    } catch (McpoolException e) {
                        assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                        assertTrue(e.getMessage(), e.getMessage().contains("16 bits"));
                    }
                }
                CachedData raw = mc.getBytes(k);
                assertEquals(0xffff, raw.flags);
                assertArrayEquals(new byte[] {1, 2}, raw.data);

                assertTrue(mc.set(k, "original"));
                for (String key : new String[] {k, k + ":missing"}) {
                    try {
                        mc.cas(key, "overwritten", 0, 0L);
                        fail(proto + ": cas 0 accepted");
                    } catch (ClientException e) {
                        assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                    }
                }
                assertEquals("original", mc.get(k));
                assertNull(mc.get(k + ":missing"));
            }
        }
    }

    /** casResult tells a key someone changed (EXISTS) from a key that is gone (NOT_FOUND),
     * as spymemcached's CASResponse does, on every protocol; cas answers false for both
     * (tester finding javacompat 3). */
    @Test
    public void casResultTellsChangedFromGone() {
        for (String proto : new String[] {"text", "meta", "binary"}) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(proto).build()) {
                String k = "m:casr:" + proto, gone = k + ":gone";
                assertTrue(mc.set(k, "v0", 0));
                MemcachedItem it = mc.gets(k);
                assertEquals(proto, CasResult.OK, mc.casResult(k, "v1", 0, it.casUnique));
                assertEquals("v1", mc.get(k));
                // the CAS read before the store above is stale now
                assertEquals(proto, CasResult.EXISTS, mc.casResult(k, "v2", 0, it.casUnique));
                assertFalse(mc.cas(k, "v2", 0, it.casUnique));
                assertEquals("v1", mc.get(k));
                // a key that never was, and one deleted after its gets
                assertEquals(proto, CasResult.NOT_FOUND, mc.casResult(k + ":never", "v", 0, it.casUnique));
                assertTrue(mc.set(gone, "g", 0));
                MemcachedItem g = mc.gets(gone);
                assertTrue(mc.delete(gone));
                assertEquals(proto, CasResult.NOT_FOUND, mc.casResult(gone, "g2", 0, g.casUnique));
                assertFalse(mc.cas(gone, "g2", 0, g.casUnique));
                assertNull(mc.get(gone));
                assertNull(mc.get(k + ":never"));
                // the CAS unique read now is current: stored, with its TTL
                MemcachedItem now = mc.gets(k);
                assertEquals(proto, CasResult.OK, mc.casResult(k, 7L, 3600, now.casUnique));
                assertEquals(7L, mc.get(k));
                try {
                    mc.casResult(k, "zero", 0, 0L);
                    fail(proto + ": cas 0 accepted");
                } catch (ClientException e) {
                    assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                }
                assertEquals(7L, mc.get(k));
            }
        }
    }

    /** MemcachedItem prints its value and CAS (a byte[] as its length and a hex prefix, long
     * text cut), and compares by them, arrays by content (tester finding javacompat 5). */
    @Test
    public void memcachedItemPrintsAndComparesByValue() {
        byte[] big = new byte[36000];
        for (int i = 0; i < big.length; i++) big[i] = (byte) (i * 7);
        MemcachedItem b1 = new MemcachedItem(big, 42), b2 = new MemcachedItem(big.clone(), 42);
        assertEquals(b1, b2);
        assertEquals(b1.hashCode(), b2.hashCode());
        assertNotEquals(b1, new MemcachedItem(big.clone(), 43));
        byte[] other = big.clone();
        other[35999] ^= 1;
        assertNotEquals(b1, new MemcachedItem(other, 42));
        String s = b1.toString();
        assertEquals("MemcachedItem{value=byte[36000] 00070e151c232a31383f464d545b6269..., cas=42}", s);
        assertEquals("MemcachedItem{value=byte[2] 0aff, cas=1}", new MemcachedItem(new byte[] {10, -1}, 1).toString());

        assertEquals("MemcachedItem{value=\"hello\", cas=7}", new MemcachedItem("hello", 7).toString());
        String longText = "lorem ipsum ".repeat(3000);
        String t = new MemcachedItem(longText, 7).toString();
        assertTrue(t, t.length() < 120);
        assertTrue(t, t.contains("...(36000 chars)"));
        assertEquals("MemcachedItem{value=42 (Long), cas=9}", new MemcachedItem(42L, 9).toString());
        assertEquals("MemcachedItem{value=null, cas=0}", new MemcachedItem(null, 0).toString());
        // memcached's CAS is unsigned 64-bit
        assertEquals("MemcachedItem{value=null, cas=18446744073709551615}", new MemcachedItem(null, -1L).toString());
        assertEquals(new MemcachedItem("a", 1), new MemcachedItem("a", 1));
        assertEquals(new MemcachedItem("a", 1).hashCode(), new MemcachedItem("a", 1).hashCode());
        assertNotEquals(new MemcachedItem("a", 1), new MemcachedItem("b", 1));
        assertNotEquals(new MemcachedItem(1L, 1), new MemcachedItem(1, 1)); // a Long is not an Integer
        assertEquals(new MemcachedItem(null, 3), new MemcachedItem(null, 3));
        assertNotEquals(new MemcachedItem("a", 1), null);

        // an item read back equals an item of the value written and the CAS read
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).build()) {
            assertTrue(mc.set("m:item", new byte[] {1, 2, 3}, 0));
            MemcachedItem it = mc.gets("m:item");
            assertEquals(new MemcachedItem(new byte[] {1, 2, 3}, it.casUnique), it);
            assertTrue(it.toString(), it.toString().startsWith("MemcachedItem{value=byte[3] 010203, cas="));
        }
    }

    @Test
    public void closeIsIdempotentAndFreesOnce() {
        Mcpool mc = Mcpool.builder().servers(server.addr()).build();
        mc.set("m:close", "v");
        mc.close();
        mc.close();
        assertTrue(mc.isClosed());
        assertTrue(mc.nc.isFreed());
        try {
            mc.get("m:close");
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_CLOSED", e.statusName());
        }
    }

    @Test
    public void cleanerFreesUnreachableClients() throws Exception {
        java.util.List<NativeClient.State> states = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Mcpool mc = Mcpool.builder().servers(server.addr()).minIdle(0).build();
            states.add(stateOf(mc.nc));
        }
        for (int round = 0; round < 50; round++) {
            System.gc();
            Thread.sleep(50);
            if (states.stream().allMatch(s -> s.freed.get())) return;
        }
        fail("the cleaner did not free unreachable clients");
    }

    /** Closed, then dropped: the Cleaner registered for each client must not free it a
     * second time when the GC finds it (Cleanable.clean ran at close, and runs once). Each
     * handle goes to clientFree exactly once, closed ones at close(), dropped ones by the
     * Cleaner; a second close() does nothing. */
    @Test
    public void closedThenDroppedClientsAreFreedExactlyOnce() throws Exception {
        java.util.List<NativeClient.State> closed = new java.util.ArrayList<>(), dropped = new java.util.ArrayList<>();
        java.util.List<java.lang.ref.WeakReference<Mcpool>> gone = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Mcpool mc = Mcpool.builder().servers(server.addr()).minIdle(1).build();
            mc.set("m:drop" + i, "v");
            closed.add(stateOf(mc.nc));
            mc.close();
            mc.close();
            assertEquals(1, closed.get(i).frees.get());
            gone.add(new java.lang.ref.WeakReference<>(mc));
            Mcpool unclosed = Mcpool.builder().servers(server.addr()).minIdle(0).build();
            dropped.add(stateOf(unclosed.nc));
            gone.add(new java.lang.ref.WeakReference<>(unclosed));
        }
        boolean done = false;
        for (int round = 0; round < 100 && !done; round++) {
            System.gc();
            Thread.sleep(20); // the Cleaner's thread runs after the GC has queued the references
            done = gone.stream().allMatch(r -> r.get() == null) && dropped.stream().allMatch(st -> st.freed.get());
        }
        assertTrue("the clients were not collected and cleaned", done);
        for (NativeClient.State st : closed) assertEquals(1, st.frees.get());
        for (NativeClient.State st : dropped) assertEquals(1, st.frees.get());
    }

    static NativeClient.State stateOf(NativeClient nc) throws Exception {
        java.lang.reflect.Field f = NativeClient.class.getDeclaredField("state");
        f.setAccessible(true);
        return (NativeClient.State) f.get(nc);
    }

    @Test
    public void badConfig() {
        try {
            Mcpool.builder().build();
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_CONFIG", e.statusName());
        }
        try {
            Mcpool.builder().servers(server.addr()).distribution("no-such-profile").build();
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_CONFIG", e.statusName());
        }
        try {
            Mcpool.builder().server(server.addr(), 0).build();
            fail();
        } catch (ConfigurationException e) {
            assertEquals("MCPOOL_CONFIG", e.statusName());
        }
    }

    @Test
    public void timeoutIsATimeoutException() throws Exception {
        // A listening socket that never answers: the read times out.
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"));
             Mcpool mc = Mcpool.builder().servers("127.0.0.1:" + silent.getLocalPort()).minIdle(0)
                 .ioTimeoutMillis(200).build()) {
            try {
                mc.get("k");
                fail();
            } catch (TimeoutException e) {
                assertEquals("MCPOOL_IO_TIMEOUT", e.statusName());
            }
        }
    }

    /** Thread.interrupt() does not cut a call short (README, Errors: Whalin's behaviour): the
     * call runs to its I/O timeout and the interrupt status is kept for the caller. The
     * server is a deliberately silent fake server (a listener that never answers). */
    @Test
    public void anInterruptDoesNotEndACallAndIsKept() throws Exception {
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getByName("127.0.0.1"));
             Mcpool mc = Mcpool.builder().servers("127.0.0.1:" + silent.getLocalPort()).minIdle(0)
                 .ioTimeoutMillis(1000).build()) {
            Thread.currentThread().interrupt(); // before the call: the same rule, no race
            long t = System.nanoTime();
            try {
                mc.get("k");
                fail();
            } catch (TimeoutException e) {
                assertEquals("MCPOOL_IO_TIMEOUT", e.statusName());
            } finally {
                long ms = (System.nanoTime() - t) / 1_000_000;
                assertTrue("the interrupt status is kept", Thread.interrupted());
                assertTrue("ran to the I/O timeout: " + ms + " ms", ms >= 900);
            }
        }
    }

    /** Stored bytes flagged as a serialized object that do not deserialize (bytes prepended
     * to the stream header): MCPOOL_VALUE_FORMAT naming the key and flags, a ServerException
     * as for bytes after the object (it was a ClientException, status 0, the caller's input
     * class); getMulti keeps the other hits. */
    @Test
    public void aStoredObjectThatDoesNotDeserializeIsAValueFormatError() throws Exception {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).preset("spymemcached")
                .option("serialized_java", "true").build()) {
            String k = "m:undeser", other = "m:undeser-other";
            java.util.ArrayList<Integer> list = new java.util.ArrayList<>(java.util.List.of(1, 2));
            assertTrue(mc.set(k, list, 0));
            assertTrue(mc.set(other, list, 0));
            assertTrue(mc.prepend(k, "XX".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
            try {
                mc.get(k);
                fail("a corrupt serialized object was read");
            } catch (ServerException e) {
                assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                assertEquals(210, e.status());
                assertTrue(e.getMessage(), e.getMessage().contains("the value of " + k + " with flags ")
                    && e.getMessage().contains("cannot deserialize a stored Java object"));
            }
            try {
                mc.getMulti(k, other);
                fail("getMulti read a corrupt serialized object");
            } catch (UnreadableValuesException e) {
                assertEquals(java.util.Set.of(k), e.errors().keySet());
                assertEquals(list, e.hits().get(other));
            }
        }
    }

    /** memcached appends raw bytes and keeps the flags: a serialized object with bytes after
     * it (an append; a whole serialized object prepended) read as the first object alone
     * would be the value without them. MCPOOL_VALUE_FORMAT naming the key, as for a
     * compressed value (docs/value-format.md, Reading 2), on get, gets, getMulti and
     * getLease; an untouched object still reads. Before, every read returned [1, 2]. */
    @Test
    public void bytesAfterASerializedObjectAreAnError() throws Exception {
        for (String fmt : new String[] {"mcpool", "whalin", "spymemcached"}) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).valueFormat(fmt)
                    .option("serialized_java", "true").protocol("meta").build()) {
                String k = "m:ser:" + fmt, other = "m:ser-untouched:" + fmt;
                java.util.ArrayList<Integer> list = new java.util.ArrayList<>(java.util.List.of(1, 2));
                assertTrue(mc.set(k, list, 0));
                assertTrue(mc.set(other, list, 0));
                byte[] exact = server.raw(k).data;
                for (byte[] added : new byte[][] {"JUNK".getBytes(java.nio.charset.StandardCharsets.US_ASCII), {0x70}}) {
                    assertTrue(mc.set(k, list, 0));
                    assertTrue(mc.append(k, added));
                    assertEquals(exact.length + added.length, server.raw(k).data.length);
                    String why = added.length + " bytes after the serialized object";
                    java.util.List<java.util.function.Supplier<Object>> reads = java.util.List.of(
                        () -> mc.get(k), () -> mc.gets(k), () -> mc.getLease(k, 30, 0));
                    for (java.util.function.Supplier<Object> read : reads) {
                        try {
                            read.get();
                            fail(fmt + ": a serialized object with bytes appended was read");
                        } catch (ServerException e) {
                            assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                            assertTrue(e.getMessage(), e.getMessage().contains(k) && e.getMessage().contains(why));
                        }
                    }
                    try {
                        mc.getMulti(k, other);
                        fail(fmt + ": getMulti read a serialized object with bytes appended");
                    } catch (UnreadableValuesException e) {
                        assertEquals(java.util.Set.of(k), e.errors().keySet());
                        assertTrue(e.errors().get(k).getMessage().contains(why));
                        assertEquals(list, e.hits().get(other));
                    }
                }
                // a whole serialized object prepended would read as that object
                assertTrue(mc.set(k, list, 0));
                assertTrue(mc.prepend(k, Serialization.serialize("other")));
                try {
                    mc.get(k);
                    fail(fmt + ": a prepended serialized object was read as the value");
                } catch (ServerException e) {
                    assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                }
                assertEquals(list, mc.get(other));
                assertEquals(list, mc.getMulti(other).get(other));
            }
        }
    }

    /** getLease(key) and invalidate(key) take the core's default times, as Python's and
     * Perl's do (tester finding retest33 9: Perl had none, Java neither); the constants are
     * the C header's. */
    @Test
    public void leaseTimesMayBeOmittedAndAreTheCoresDefaults() throws Exception {
        String header = new String(java.nio.file.Files.readAllBytes(
            java.nio.file.Paths.get("../../include/mcpool.h")), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(header.contains("#define MCPOOL_LEASE_DEFAULT_VIVIFY_TTL " + Mcpool.LEASE_DEFAULT_VIVIFY_TTL + "\n"));
        assertTrue(header.contains("#define MCPOOL_LEASE_DEFAULT_STALE_TTL " + Mcpool.LEASE_DEFAULT_STALE_TTL + "\n"));
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol("meta").build()) {
            String k = "lease:default:" + System.nanoTime();
            assertEquals(Lease.State.RECOMPUTE, mc.getLease(k).state());
            assertEquals(Lease.State.WAIT, mc.getLease(k).state());
            assertTrue(mc.set(k, "v", 1000));
            assertTrue(mc.invalidate(k));
            long ttl = mc.metaInfo(k).ttlSeconds();
            assertTrue("stale for the default time: " + ttl, ttl > 0 && ttl <= Mcpool.LEASE_DEFAULT_STALE_TTL);
        }
    }

    /** Tester finding retest44 1: a duration that ends after INT64_MAX (the latest moment
     * the core answers) is refused by the core's rule for it
     * ({@code mcpool_expiry_moment_from_now_checked}), as C's, Python's and Perl's
     * expiry_from_now: "invalid duration: N is too long: from now it ends after
     * 9223372036854775807", never as the capped moment 9223372036854775807 refused as a TTL
     * above 2147483647 (a moment nobody asked for). Both forms, the same exception class as
     * every other refusal of a time (ClientException, MCPOOL_INVALID_ARGUMENT). A duration
     * that ends exactly at INT64_MAX is still answered: that moment, refused as a TTL after
     * 2038 like any other. */
    @Test
    public void expiryFromNowPastInt64MaxIsTooLong() {
        long now = System.currentTimeMillis() / 1000;
        Object[] beyond = {Long.MAX_VALUE, Long.MAX_VALUE - now + 5, Long.MAX_VALUE - now + 1_000_000,
            java.time.Duration.ofSeconds(Long.MAX_VALUE, 999_999_999), java.time.Duration.ofSeconds(Long.MAX_VALUE),
            java.time.Duration.ofSeconds(Long.MAX_VALUE - now + 5), java.time.Duration.ofSeconds(Long.MAX_VALUE - now + 5, 1),
            // a nanosecond past INT64_MAX - now: rounded up by the core's rule for fractions,
            // exactly (no double holds a fraction on 9.2e18 seconds)
            java.time.Duration.ofSeconds(Long.MAX_VALUE - now, 1)};
        for (Object d : beyond) {
            try {
                int t = d instanceof Long ? Mcpool.expiryFromNow((Long) d) : Mcpool.expiryFromNow((java.time.Duration) d);
                fail(d + " gave " + t);
            } catch (ClientException e) {
                assertEquals(e.getMessage(), "MCPOOL_INVALID_ARGUMENT", e.statusName());
                assertEquals(100, e.status());
                assertTrue(e.getMessage(), e.detail().startsWith("expiryFromNow(" + d + "): invalid duration: "));
                assertTrue(e.getMessage(), e.detail().contains(" is too long: from now it ends after 9223372036854775807"));
                assertFalse(e.getMessage(), e.detail().contains("invalid ttl"));
            }
        }
        // the long form names the duration as given
        try {
            Mcpool.expiryFromNow(Long.MAX_VALUE);
            fail();
        } catch (ClientException e) {
            assertTrue(e.getMessage(), e.detail().startsWith("expiryFromNow(9223372036854775807): invalid duration: "
                + "9223372036854775807 is too long: from now it ends after 9223372036854775807"));
        }
        // exactly INT64_MAX (and one second before it; a Duration whose fraction rounds up to
        // it): answered, the moment then refused as a TTL after 2038, naming that moment
        // (retried while the clock turns a second under it)
        for (int form = 0; form < 3; form++) {
            long back = form == 1 ? 1 : 0;
            for (int attempt = 0; ; attempt++) {
                long before = System.currentTimeMillis() / 1000;
                long d = Long.MAX_VALUE - before - back;
                Object given = form == 2 ? java.time.Duration.ofSeconds(d - 1, 500_000_000) : (Object) d;
                String detail;
                try {
                    fail("gave " + (form == 2 ? Mcpool.expiryFromNow((java.time.Duration) given) : Mcpool.expiryFromNow(d)));
                    return;
                } catch (ClientException e) {
                    assertEquals(e.getMessage(), "MCPOOL_INVALID_ARGUMENT", e.statusName());
                    detail = e.detail();
                }
                if (System.currentTimeMillis() / 1000 != before && attempt < 5) continue;
                assertEquals("expiryFromNow(" + given + "): invalid ttl: " + (Long.MAX_VALUE - back) + " is above 2147483647",
                    detail.substring(0, detail.indexOf(", ")));
                break;
            }
        }
    }

    /** Tester finding ttl 4: Mcpool.MAX_TTL, EXPIRED_AT_ONCE and RELATIVE_MAX are public and
     * the C header's (and the core's, by what it answers), and expiryFromNow is the core's
     * rule (mcpool_expiry_from_now), as Python's and Perl's expiry_from_now: up to 30 days as
     * it is, above the unix time it ends at, 0 or less expired at once, after 2038 refused. */
    @Test
    public void expiryFromNowIsTheCoresRule() throws Exception {
        String header = new String(java.nio.file.Files.readAllBytes(
            java.nio.file.Paths.get("../../include/mcpool.h")), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(header.contains("#define MCPOOL_MAX_TTL " + Mcpool.MAX_TTL + "\n"));
        assertTrue(header.contains("#define MCPOOL_EXPIRED_AT_ONCE " + Mcpool.EXPIRED_AT_ONCE + "\n"));
        assertTrue(header.contains("#define MCPOOL_RELATIVE_MAX " + Mcpool.RELATIVE_MAX + "\n"));
        assertEquals(Integer.MAX_VALUE, Mcpool.MAX_TTL);
        int day = 86400;
        assertEquals(60, Mcpool.expiryFromNow(60));
        assertEquals(1, Mcpool.expiryFromNow(1));
        assertEquals(Mcpool.RELATIVE_MAX, Mcpool.expiryFromNow(30 * day));
        assertEquals(Mcpool.RELATIVE_MAX, Mcpool.expiryFromNow(Mcpool.RELATIVE_MAX));
        // the core's answers are the constants
        assertEquals(Mcpool.EXPIRED_AT_ONCE, Mcpool.expiryFromNow(0));
        assertEquals(Mcpool.EXPIRED_AT_ONCE, Mcpool.expiryFromNow(-1));
        assertEquals(Mcpool.EXPIRED_AT_ONCE, Mcpool.expiryFromNow(Long.MIN_VALUE));
        // above 30 days: the unix time it ends at
        for (long d : new long[] {40L * day, Mcpool.RELATIVE_MAX + 1L, 365L * day}) {
            long before = System.currentTimeMillis() / 1000;
            long at = Mcpool.expiryFromNow(d);
            long after = System.currentTimeMillis() / 1000;
            assertTrue(d + " -> " + at, at >= before + d && at <= after + d);
        }
        // a Duration: whole seconds as they are; a fraction by the core's rule for fractions
        assertEquals(60, Mcpool.expiryFromNow(java.time.Duration.ofSeconds(60)));
        assertEquals(1, Mcpool.expiryFromNow(java.time.Duration.ofMillis(400)));
        assertEquals(2, Mcpool.expiryFromNow(java.time.Duration.ofMillis(1500)));
        assertEquals(1, Mcpool.expiryFromNow(java.time.Duration.ofNanos(1)));
        assertEquals(Mcpool.RELATIVE_MAX, Mcpool.expiryFromNow(java.time.Duration.ofSeconds(Mcpool.RELATIVE_MAX, 500_000_000)));
        assertEquals(Mcpool.EXPIRED_AT_ONCE, Mcpool.expiryFromNow(java.time.Duration.ZERO));
        assertEquals(Mcpool.EXPIRED_AT_ONCE, Mcpool.expiryFromNow(java.time.Duration.ofMillis(-300)));
        assertEquals(Mcpool.EXPIRED_AT_ONCE, Mcpool.expiryFromNow(java.time.Duration.ofDays(-40)));
        // a nanosecond on seconds far above a double's nanosecond step still rounds up
        long big = 100_000_000L; // about 3 years: a unix time before 2038
        long now = System.currentTimeMillis() / 1000;
        long at = Mcpool.expiryFromNow(java.time.Duration.ofSeconds(big, 1));
        assertTrue(at + " vs " + (now + big), at >= now + big + 1 && at <= now + big + 60);
        long days40 = Mcpool.expiryFromNow(java.time.Duration.ofDays(40));
        assertTrue(days40 >= now + 40L * day && days40 <= now + 40L * day + 60);
        // a moment after 2038: refused with the core's message, never a shorter TTL (a
        // duration that ends after INT64_MAX: expiryFromNowPastInt64MaxIsTooLong)
        Object[] tooFar = {1_000_000_000L, (long) Integer.MAX_VALUE, Long.MAX_VALUE - 4_000_000_000L,
            java.time.Duration.ofSeconds(1_000_000_000L), java.time.Duration.ofSeconds(Long.MAX_VALUE - 4_000_000_000L, 999_999_999)};
        for (Object d : tooFar) {
            try {
                int t = d instanceof Long ? Mcpool.expiryFromNow((Long) d) : Mcpool.expiryFromNow((java.time.Duration) d);
                fail(d + " gave " + t);
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                assertTrue(e.getMessage(), e.detail().startsWith("expiryFromNow(" + d + "): invalid ttl: "));
                assertTrue(e.getMessage(), e.getMessage().contains(" is above 2147483647"));
            }
        }
        // a moment after 2106 is named as it is, never as the 32-bit 4294967295 (tester
        // finding retest37 6)
        long century = 100L * 365 * day;
        try {
            Mcpool.expiryFromNow(century);
            fail();
        } catch (ClientException e) {
            assertFalse(e.getMessage(), e.getMessage().contains("4294967295"));
            long named = Long.parseLong(e.detail().replaceAll("(?s)^.*invalid ttl: (\\d+) is above.*$", "$1"));
            assertTrue(e.getMessage(), named >= now + century && named <= now + century + 60);
        }
        try {
            Mcpool.expiryFromNow((java.time.Duration) null);
            fail();
        } catch (ClientException e) {
            assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
        }
        // a duration of 40 days stored with its expiryFromNow is kept (40 * 86400 itself is
        // a moment in 1970: gone at once while set answers true)
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol("meta").build()) {
            String k = "m:from-now:" + System.nanoTime();
            assertTrue(mc.set(k, "v", 40 * day));
            assertNull(mc.get(k));
            assertTrue(mc.set(k, "v", Mcpool.expiryFromNow(40L * day)));
            assertEquals("v", mc.get(k));
            long left = mc.metaInfo(k).ttlSeconds();
            // memcached keeps its clock in whole seconds from a start it sets a few seconds back:
            // a unix-time expiry reads back a second or two off, as the other bindings' tests allow
            assertTrue("TTL " + left, Math.abs(left - 40L * day) <= 120);
        }
    }
}
