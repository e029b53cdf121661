package io.mcpool;

import static org.junit.Assert.*;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.transcoders.SerializingTranscoder;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/** Values and placement shared with spymemcached (Debian libspymemcached-java). */
public class SpymemcachedInteropTest {
    static TestServer[] servers = new TestServer[3];
    static String all;

    @BeforeClass
    public static void start() throws Exception {
        System.setProperty("net.spy.log.LoggerImpl", "net.spy.memcached.compat.log.SunLogger");
        Logger.getLogger("net.spy.memcached").setLevel(Level.WARNING);
        List<String> addrs = new ArrayList<>();
        for (int i = 0; i < servers.length; i++) {
            servers[i] = new TestServer();
            addrs.add(servers[i].addr());
        }
        all = String.join(" ", addrs);
    }

    @AfterClass
    public static void stop() throws Exception {
        for (TestServer s : servers) if (s != null) s.close();
    }

    /** A spymemcached client. FailureMode.Retry: an operation whose primary node is not
     * connected yet waits for it, where the default (Redistribute) sends it to the next
     * node of the ketama sequence, so a set made while the client still connects can land
     * on another server than its placement (the clean-clone CI run of eb25e56 failed so in
     * ketamaPlacement: the first key read back as a miss from its primary). */
    static MemcachedClient spy(String addrs, boolean ketama) throws Exception {
        ConnectionFactoryBuilder b = new ConnectionFactoryBuilder().setProtocol(ConnectionFactoryBuilder.Protocol.TEXT)
            .setDaemon(true).setOpTimeout(5000).setFailureMode(net.spy.memcached.FailureMode.Retry);
        if (ketama) b.setLocatorType(ConnectionFactoryBuilder.Locator.CONSISTENT).setHashAlg(DefaultHashAlgorithm.KETAMA_HASH);
        return new MemcachedClient(b.build(), AddrUtil.getAddresses(addrs));
    }

    static String big() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 40_000; i++) sb.append((char) ('a' + (7 * i + i / 13) % 26));
        return sb.toString();
    }

    /** The flags spymemcached sees, through a transcoder of its own kind. */
    static final class FlagsTranscoder implements net.spy.memcached.transcoders.Transcoder<Integer> {
        public boolean asyncDecode(net.spy.memcached.CachedData d) { return false; }
        public net.spy.memcached.CachedData encode(Integer o) { throw new UnsupportedOperationException(); }
        public Integer decode(net.spy.memcached.CachedData d) { return d.getFlags(); }
        public int getMaxSize() { return net.spy.memcached.CachedData.MAX_SIZE; }
    }

    @Test
    public void valuesBothWays() throws Exception {
        MemcachedClient spy = spy(servers[0].addr(), false);
        try (Mcpool ours = Mcpool.builder().servers(servers[0].addr()).transcoder(new SpyTranscoder())
                .compressionThreshold(16384).build();
             Mcpool whalin = Mcpool.builder().servers(servers[0].addr()).valueFormat("whalin").build()) {
            String big = big();
            // Each type reads back as the type written, both ways (Integer, Long and Byte
            // have their own flags in spymemcached; a small Long used to come back an Integer).
            Object[] values = {"plain string é", 12345678901L, 42, true, (byte) 7, "x", "y",
                "z", new byte[] {1, 2, 3}, big, 42L, 0L, -1L, Long.MIN_VALUE, 0, -1, (byte) -3};
            for (int i = 0; i < values.length; i++) {
                // spymemcached writes, we read
                assertTrue(spy.set("spy:w:" + i, 0, values[i]).get());
                Object got = ours.get("spy:w:" + i);
                check(values[i], got);
                // we write, spymemcached reads
                assertTrue(ours.set("ours:w:" + i, values[i]));
                check(values[i], spy.get("ours:w:" + i));
                // and through the batch calls
                assertTrue(ours.setMulti(java.util.Collections.singletonMap("ours:m:" + i, values[i]), 0).get("ours:m:" + i));
                check(values[i], spy.get("ours:m:" + i));
                check(values[i], ours.getMulti("spy:w:" + i).get("spy:w:" + i));
            }
            // spymemcached serializes a Short: so do we (serialization allowed), else refused
            try {
                ours.set("ours:short", (short) 9);
                fail("a Short stored as an integer (spymemcached would read an Integer)");
            } catch (ClientException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("serialization is off"));
            }
            try (Mcpool ser = Mcpool.builder().servers(servers[0].addr()).transcoder(new SpyTranscoder(true, null)).build()) {
                assertTrue(ser.set("ours:short", (short) 9));
                check((short) 9, spy.get("ours:short"));
                assertTrue(spy.set("spy:short", 0, (short) -4).get());
                check((short) -4, ser.get("spy:short"));
            }
            // spymemcached's Float, Double and Date have no kind: an error naming the key
            for (Object v : new Object[] {1.25f, 2.5d, new java.util.Date(1_700_000_000_000L)}) {
                assertTrue(spy.set("spy:nokind", 0, v).get());
                try {
                    ours.get("spy:nokind");
                    fail(v.toString());
                } catch (McpoolException e) {
                    assertTrue(e.getMessage(), e.getMessage().contains("spy:nokind"));
                }
            }
            // Compressed on the wire both ways: flag 2 with gzip.
            assertEquals(2, spy.get("ours:w:9", new FlagsTranscoder()) & 2);
            assertEquals(2, spy.get("spy:w:9", new FlagsTranscoder()) & 2);
            // Whalin's layout (the default) for strings is readable by spymemcached too.
            assertTrue(whalin.set("whalin:s", "hello"));
            assertTrue(whalin.set("whalin:big", big));
            assertEquals("hello", spy.get("whalin:s"));
            assertEquals(big, spy.get("whalin:big"));
            assertEquals(2, spy.get("whalin:big", new FlagsTranscoder()) & 2);
            // A serialized object written by spymemcached is refused unless allowed.
            assertTrue(spy.set("spy:ser", 0, new ArrayList<>(Arrays.asList(1, 2))).get());
            try {
                ours.get("spy:ser");
                fail();
            } catch (McpoolException e) { // the core delivers no serialized object unless enabled
                assertTrue(e.getMessage(), e.getMessage().contains("spy:ser"));
                assertTrue(e.getMessage(), e.getMessage().contains("serialized"));
            }
            try (Mcpool ser = Mcpool.builder().servers(servers[0].addr()).transcoder(new SpyTranscoder(true, null)).build()) {
                assertEquals(Arrays.asList(1, 2), ser.get("spy:ser"));
            }
        } finally {
            spy.shutdown();
        }
    }

    @Test
    public void theSpymemcachedFormatAloneWritesSpymemcachedTypes() throws Exception {
        // valueFormat("spymemcached") without a transcoder: a small Long went out as
        // SPECIAL_INT (the default transcoder's one integer kind) and spymemcached read an
        // Integer; now the format brings SpyTranscoder's types.
        MemcachedClient spy = spy(servers[0].addr(), false);
        try (Mcpool ours = Mcpool.builder().servers(servers[0].addr()).valueFormat("spymemcached").build()) {
            for (Object v : new Object[] {42L, 42, (byte) 4, Long.MIN_VALUE}) {
                assertTrue(ours.set("fmt:w", v));
                check(v, spy.get("fmt:w"));
                assertTrue(spy.set("fmt:s", 0, v).get());
                check(v, ours.get("fmt:s"));
            }
        } finally {
            spy.shutdown();
        }
    }

    /** Tester finding (jcc 02): build() always set value_format (to "mcpool" without
     * valueFormat), after the preset and over option("value_format"): preset("spymemcached")
     * read spymemcached's String as byte[] and wrote a Long spymemcached could not read. Options
     * now apply in the order given, the preset first, and the binding adds none of its own. */
    @Test
    public void aPresetOrAnOptionBringsTheSpymemcachedFormat() throws Exception {
        MemcachedClient spy = spy(servers[0].addr(), false);
        String a = servers[0].addr();
        java.util.Map<String, Mcpool.Builder> ways = new java.util.LinkedHashMap<>();
        ways.put("preset", Mcpool.builder().servers(a).preset("spymemcached"));
        ways.put("option value_format", Mcpool.builder().servers(a).option("value_format", "spymemcached"));
        ways.put("option Value-Format", Mcpool.builder().servers(a).option("Value-Format", "spymemcached"));
        ways.put("option preset", Mcpool.builder().servers(a).option("preset", "spymemcached"));
        // the preset first whatever the call order, then each option in the order given (the
        // whalin preset's sanitize_keys stays: these keys read the same sanitized)
        ways.put("valueFormat then preset", Mcpool.builder().servers(a).valueFormat("mcpool")
            .preset("whalin").valueFormat("spymemcached"));
        ways.put("value_format set again", Mcpool.builder().servers(a).option("value_format", "whalin")
            .option("failover", "rehash").option("value_format", "spymemcached"));
        try {
            assertTrue(spy.set("pf_s", 0, "hello").get());
            assertTrue(spy.set("pf_n", 0, 42L).get());
            assertTrue(spy.set("pf_i", 0, 42).get());
            for (java.util.Map.Entry<String, Mcpool.Builder> w : ways.entrySet()) {
                try (Mcpool ours = w.getValue().build()) {
                    String at = w.getKey();
                    assertEquals(at, "hello", ours.get("pf_s"));
                    assertEquals(at, 42L, ours.get("pf_n"));
                    assertEquals(at, 42, ours.get("pf_i"));
                    for (Object v : new Object[] {7L, 7, "text", (byte) 3, true}) {
                        assertTrue(at, ours.set("pf_w", v));
                        assertEquals(at, v, spy.get("pf_w"));
                    }
                }
            }
            // the preset's compression (on, above 16384 bytes, gzip bit 2) is kept too
            try (Mcpool ours = Mcpool.builder().servers(a).preset("spymemcached").build()) {
                String big = big();
                assertTrue(ours.set("pf_big", big));
                assertEquals(big, spy.get("pf_big"));
                assertEquals(Integer.valueOf(2), spy.get("pf_big", new FlagsTranscoder()));
            }
            // an option after the preset wins over the preset's
            try (Mcpool ours = Mcpool.builder().servers(a).preset("spymemcached").valueFormat("mcpool").build()) {
                assertTrue(ours.get("pf_s") instanceof byte[]);
            }
        } finally {
            spy.shutdown();
        }
    }

    /** Tester finding (jcc 01): over text, incrOrInit under the spymemcached format (and
     * Whalin's addOrIncr under whalin) created the counter with the format's bytes flags
     * (0x800, 4096); spymemcached's incr(key, by, default) creates flags 0, its String. Now
     * decimal text with flags 0 on every protocol. */
    @Test
    public void aCounterCreatedByIncrOrInitIsSpymemcachedsString() throws Exception {
        MemcachedClient spy = spy(servers[0].addr(), false);
        try {
            assertEquals(10L, spy.incr("ctr_spy", 1, 10));
            assertEquals("10", spy.get("ctr_spy"));
            for (String proto : new String[] {"text", "binary", "meta"}) {
                for (String fmt : new String[] {"spymemcached", "whalin", "mcpool"}) {
                    String k = "ctr_" + proto + "_" + fmt, at = fmt + " over " + proto;
                    try (Mcpool ours = Mcpool.builder().servers(servers[0].addr()).protocol(proto)
                            .valueFormat(fmt).build()) {
                        assertEquals(at, 10L, ours.incrOrInit(k, 1, 10, 0));
                        assertEquals(at, Integer.valueOf(0), spy.get(k, new FlagsTranscoder()));
                        assertEquals(at, "10", spy.get(k));
                        assertEquals(at, 11L, ours.incrOrInit(k, 1, 10, 0));
                        assertEquals(at, 5L, ours.decrOrInit(k + "_d", 1, 5, 0));
                        assertEquals(at, Integer.valueOf(0), spy.get(k + "_d", new FlagsTranscoder()));
                    }
                }
            }
            for (String proto : new String[] {"text", "binary"}) {
                SockIOPool pool = SockIOPool.getInstance("ctr-" + proto);
                pool.setServers(new String[] {servers[0].addr()});
                pool.setProtocol(proto);
                pool.initialize();
                try {
                    MemCachedClient w = new MemCachedClient("ctr-" + proto);
                    String k = "ctr_whalin_" + proto;
                    assertEquals(proto, 10L, w.addOrIncr(k, 10));
                    assertEquals(proto, Integer.valueOf(0), spy.get(k, new FlagsTranscoder()));
                    assertEquals(proto, 10L, w.getCounter(k));
                    // storeCounter: Javadoc "decimal text with flags 0" (stored 4096 before)
                    assertTrue(proto, w.storeCounter(k + "_s", 40L));
                    assertEquals(proto, Integer.valueOf(0), spy.get(k + "_s", new FlagsTranscoder()));
                    assertEquals(proto, "40", spy.get(k + "_s"));
                    assertEquals(proto, 42L, w.incr(k + "_s", 2));
                    // a negative counter is the caller's mistake (memcached's are unsigned
                    // 64-bit; Whalin stored "-5", which no incr takes): nothing stored
                    try {
                        w.storeCounter(k + "_n", -5L);
                        fail(proto + ": storeCounter took -5");
                    } catch (ClientException e) {
                        assertEquals(proto, "MCPOOL_INVALID_ARGUMENT", e.statusName());
                    }
                    assertNull(proto, spy.get(k + "_n"));
                } finally {
                    pool.shutDown();
                }
            }
        } finally {
            spy.shutdown();
        }
    }

    /** getBytes reads where get reads (tester finding retest29 1: its second reader, a
     * client of its own, still took a server the client had ejected for alive, and handed
     * out that server's older value): after A is ejected, the key's value is B's. */
    @Test
    public void getBytesReadsTheServerGetReadsAfterAnEjection() throws Exception {
        try (TestServer a = new TestServer(); TestServer b = new TestServer();
             Mcpool ours = Mcpool.builder().server(a.addr(), 1).server(b.addr(), 1).preset("spymemcached")
                 .failover("eject").failureLimit(1).ioTimeoutMillis(300)
                 .option("io_timeout_marks_dead", "true").option("retry_timeout", "60s").build();
             Mcpool lmA = Mcpool.builder().server(a.addr(), 1).valueFormat("libmemcached").build();
             Mcpool lmB = Mcpool.builder().server(b.addr(), 1).valueFormat("libmemcached").build()) {
            String k = null;
            for (int i = 0; i < 200 && k == null; i++) {
                String c = "gbe:" + i;
                assertTrue(ours.setBytes(c, new byte[] {1}, 0, 0));
                if (lmA.getBytes(c) != null) k = c;
            }
            assertNotNull("a key placed on A", k);
            byte[] older = {1, 1, 1}, newer = {2, 2, 2};
            assertTrue(lmA.setBytes(k, older, 1024, 0)); // spymemcached's Date flags
            assertArrayEquals(older, ours.getBytes(k).data);
            a.signal("STOP");
            try {
                try {
                    ours.get(k);
                    fail("read from a frozen server");
                } catch (McpoolException e) {
                    assertEquals("MCPOOL_IO_TIMEOUT", e.statusName());
                }
                assertTrue(lmB.setBytes(k, newer, 1536, 0)); // spymemcached's Float flags
            } finally {
                a.signal("CONT");
            }
            CachedData d = ours.getBytes(k);
            assertNotNull(d);
            assertEquals(1536, d.flags);
            assertArrayEquals(newer, d.data);
            assertTrue(d.asStored);
        }
    }

    /** getBytes hands out the stored bytes whatever the flags (tester finding javaspy 3: a
     * Date, Float or Double spymemcached wrote failed in getBytes as in get, so the bytes
     * needed a second client of the libmemcached format): a value the format cannot deliver
     * comes as memcached holds it, its flags as stored and its body not inflated (a compressed
     * serialized object with serialization off), through the same client, before and after
     * setServers; a readable value still comes decoded; a miss is null. */
    @Test
    public void getBytesHandsOutTheStoredBytesWhateverTheFlags() throws Exception {
        MemcachedClient spy = spy(servers[0].addr(), false);
        SerializingTranscoder st = new SerializingTranscoder();
        ArrayList<String> bigList = new ArrayList<>();
        for (int i = 0; i < 3000; i++) bigList.add("element " + i);
        try (Mcpool ours = Mcpool.builder().servers(servers[0].addr()).preset("spymemcached").build();
             Mcpool lm = Mcpool.builder().servers(servers[0].addr()).valueFormat("libmemcached").build()) {
            Object[] values = {new java.util.Date(1_700_000_000_123L), 1.25f, -2.5d, bigList};
            for (int i = 0; i < values.length; i++) {
                Object v = values[i];
                String k = "gb:any:" + i;
                assertTrue(spy.set(k, 0, v).get());
                try {
                    ours.get(k);
                    fail("read as an object: " + v);
                } catch (McpoolException e) {
                    assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                }
                net.spy.memcached.CachedData want = st.encode(v);
                CachedData d = ours.getBytes(k);
                assertNotNull(k, d);
                assertTrue(k + ": as stored", d.asStored);
                assertEquals(k, want.getFlags(), d.flags);
                if (v instanceof ArrayList) assertEquals("compressed and serialized", 1 | 2, d.flags);
                assertArrayEquals(k, lm.getBytes(k).data, d.data);
                assertEquals(v, st.decode(new net.spy.memcached.CachedData(d.flags, d.data, SPY_MAX_SIZE)));
            }
            // a compressed body that does not inflate (MCPOOL_DECOMPRESS in get): as stored
            byte[] notGzip = {1, 2, 3, 4};
            assertTrue(lm.setBytes("gb:badgzip", notGzip, 2, 0));
            try {
                ours.get("gb:badgzip");
                fail("not gzip, read");
            } catch (McpoolException e) {
                assertEquals("MCPOOL_DECOMPRESS", e.statusName());
            }
            CachedData bad = ours.getBytes("gb:badgzip");
            assertEquals(2, bad.flags);
            assertArrayEquals(notGzip, bad.data);
            assertTrue(bad.asStored);
            // a readable value is still the kind's form (an Integer as decimal text)
            assertTrue(spy.set("gb:int", 0, 42).get());
            CachedData i42 = ours.getBytes("gb:int");
            assertEquals("42", new String(i42.data, java.nio.charset.StandardCharsets.US_ASCII));
            assertEquals(512, i42.flags);
            assertFalse("delivered", i42.asStored);
            assertNull(ours.getBytes("gb:absent"));
            // after setServers, the stored bytes come from the new list's servers
            ours.setServers(servers[1].addr());
            MemcachedClient spy1 = spy(servers[1].addr(), false);
            try {
                assertTrue(spy1.set("gb:moved", 0, 0.5f).get());
                CachedData m = ours.getBytes("gb:moved");
                assertNotNull(m);
                assertEquals(st.encode(0.5f).getFlags(), m.flags);
                assertArrayEquals(st.encode(0.5f).getData(), m.data);
            } finally {
                spy1.shutdown();
            }
        } finally {
            spy.shutdown();
        }
        // setServers before the first such value: the reader starts on the new list
        MemcachedClient spy2 = spy(servers[2].addr(), false);
        try (Mcpool ours = Mcpool.builder().servers(servers[0].addr()).preset("spymemcached").build()) {
            ours.setServers(servers[2].addr());
            assertTrue(spy2.set("gb:later", 0, 3.5d).get());
            assertArrayEquals(st.encode(3.5d).getData(), ours.getBytes("gb:later").data);
            ours.close();
            try {
                ours.getBytes("gb:later");
                fail("read after close");
            } catch (ClientException e) {
                assertEquals("MCPOOL_CLOSED", e.statusName());
            }
        } finally {
            spy2.shutdown();
        }
    }

    private static final int SPY_MAX_SIZE = net.spy.memcached.CachedData.MAX_SIZE;

    /** A negative TTL, as README.md says (tester finding javaspy 4: it said spymemcached sent
     * one as mcpool does): mcpool stores the item already expired on every protocol;
     * spymemcached does so on text, but on binary sends -1 as the unsigned 4294967295, a unix
     * time in 2106, and its item stays. */
    @Test
    public void aNegativeTtlExpiresHereOnEveryProtocolAndInSpymemcachedOnTextOnly() throws Exception {
        for (ConnectionFactoryBuilder.Protocol p : ConnectionFactoryBuilder.Protocol.values()) {
            String proto = p.name().toLowerCase(java.util.Locale.ROOT);
            MemcachedClient spy = new MemcachedClient(new ConnectionFactoryBuilder().setProtocol(p).setDaemon(true)
                .setOpTimeout(5000).setFailureMode(net.spy.memcached.FailureMode.Retry).build(),
                AddrUtil.getAddresses(servers[0].addr()));
            try (Mcpool ours = Mcpool.builder().servers(servers[0].addr()).preset("spymemcached").protocol(proto).build()) {
                assertTrue(proto, spy.set("neg:spy:" + proto, -1, "v").get());
                assertEquals(proto, p == ConnectionFactoryBuilder.Protocol.BINARY ? "v" : null, spy.get("neg:spy:" + proto));
                assertTrue(proto, ours.set("neg:ours:" + proto, "v", -1));
                assertNull(proto, ours.get("neg:ours:" + proto));
                assertNull(proto, spy.get("neg:ours:" + proto));
            } finally {
                spy.shutdown();
            }
        }
    }

    /** Whalin 1.x's layout (spymemcached's WhalinV1Transcoder: flags 0, or 2 gzipped, and a
     * type byte before the body, from Whalin 1.6's NativeHandler) is not decoded: flags 0 are
     * bytes, so MemCachedClient reads such a value as a byte[] with the type byte first, as
     * README.md ("Leaving Whalin's client") says (tester finding javaspy 5). */
    @Test
    public void whalinOneValuesReadAsTheirBytesWithTheTypeByte() throws Exception {
        ConnectionFactoryBuilder b = new ConnectionFactoryBuilder().setProtocol(ConnectionFactoryBuilder.Protocol.TEXT)
            .setDaemon(true).setOpTimeout(5000).setFailureMode(net.spy.memcached.FailureMode.Retry)
            .setTranscoder(new net.spy.memcached.transcoders.WhalinV1Transcoder());
        MemcachedClient v1 = new MemcachedClient(b.build(), AddrUtil.getAddresses(servers[0].addr()));
        SockIOPool pool = SockIOPool.getInstance("whalin-v1");
        pool.setServers(new String[] {servers[0].addr()});
        pool.initialize();
        try {
            MemCachedClient mc = new MemCachedClient("whalin-v1");
            String big = big();
            Object[][] cases = {
                {"hello", new byte[] {6, 'h', 'e', 'l', 'l', 'o'}},
                {42, new byte[] {3, 0, 0, 0, 42}},
                {true, new byte[] {2, 1}},
                {5L, new byte[] {4, 0, 0, 0, 0, 0, 0, 0, 5}},
            };
            for (Object[] c : cases) { // keys without ':', which MemCachedClient URL-encodes
                assertTrue(v1.set("v1_" + c[0], 0, c[0]).get());
                assertArrayEquals(String.valueOf(c[0]), (byte[]) c[1], (byte[]) mc.get("v1_" + c[0]));
            }
            // gzipped (flag 2): inflated, the type byte still first
            assertTrue(v1.set("v1_big", 0, big).get());
            assertEquals(2, v1.get("v1_big", new FlagsTranscoder()).intValue());
            byte[] got = (byte[]) mc.get("v1_big");
            assertEquals(6, got[0]);
            assertEquals(big, new String(got, 1, got.length - 1, java.nio.charset.StandardCharsets.UTF_8));
        } finally {
            pool.shutDown();
            v1.shutdown();
        }
    }

    @Test
    public void getBytesThenSetBytesWithTheSameFlagsIsTheSameValue() throws Exception {
        // getBytes hands an integer out as its decimal text with spymemcached's flags;
        // setBytes of that same pair stored the text's bytes as the binary integer ("12"
        // under SPECIAL_INT read back as 12594, by us and by spymemcached). The core now
        // writes the wire form from the text: spymemcached reads the number it wrote.
        MemcachedClient spy = spy(servers[0].addr(), false);
        try (Mcpool ours = Mcpool.builder().servers(servers[0].addr()).valueFormat("spymemcached").build()) {
            Object[] values = {12, -7, 0, Integer.MIN_VALUE, 300L, -1L, Long.MAX_VALUE, (byte) -3, true, false,
                new byte[] {0, 1, (byte) 0xff}};
            for (int i = 0; i < values.length; i++) {
                Object v = values[i];
                assertTrue(spy.set("rt:s" + i, 0, v).get());
                CachedData d = ours.getBytes("rt:s" + i);
                assertTrue(ours.setBytes("rt:o" + i, d.data, d.flags, 0));
                check(v, spy.get("rt:o" + i));
                check(v, ours.get("rt:o" + i));
                CachedData again = ours.getBytes("rt:o" + i);
                assertArrayEquals(d.data, again.data);
                assertEquals(d.flags, again.flags);
            }
            // A body the flags cannot hold is refused, nothing stored.
            try {
                ours.setBytes("rt:bad", "x".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0x200, 0);
                fail("\"x\" under SPECIAL_INT");
            } catch (McpoolException e) {
                assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
            }
            assertNull(spy.get("rt:bad"));
        } finally {
            spy.shutdown();
        }
    }

    static void check(Object want, Object got) {
        assertNotNull(got);
        assertEquals(want.getClass(), got.getClass());
        if (want instanceof byte[]) assertArrayEquals((byte[]) want, (byte[]) got);
        else assertEquals(want, got);
    }

    @Test
    public void ketamaPlacement() throws Exception {
        MemcachedClient spy = spy(all, true);
        String[] addrs = all.split(" ");
        try (Mcpool ours = Mcpool.builder().servers(addrs).distribution("spymemcached-ketama")
                .transcoder(new SpyTranscoder()).build()) {
            List<String> labels = ours.servers();
            int[] perServer = new int[addrs.length];
            for (int i = 0; i < 300; i++) {
                String k = "ketama:" + i;
                assertTrue(spy.set(k, 0, "v" + i).get());
                InetSocketAddress sa = (InetSocketAddress) spy.getNodeLocator().getPrimary(k).getSocketAddress();
                int idx = ours.serverIndexFor(k);
                assertEquals(k, "127.0.0.1:" + sa.getPort(), labels.get(idx));
                perServer[idx]++;
                // and the value is there, on the server we compute
                assertEquals("v" + i, ours.get(k));
            }
            for (int n : perServer) assertTrue(Arrays.toString(perServer), n > 30);
        } finally {
            spy.shutdown();
        }
    }

    /** The README's spymemcached setups (tester findings javacompat 1, 3, 4): preset alone is
     * DefaultConnectionFactory's placement, KetamaConnectionFactory's needs the
     * spymemcached-ketama distribution too; under the mcpool value format spymemcached reads
     * a compressed String as garbage, under the preset as the String; casResult answers what
     * spymemcached's CASResponse does. */
    @Test
    public void theReadmesSpymemcachedSetups() throws Exception {
        String[] addrs = all.split(" ");
        MemcachedClient dflt = new MemcachedClient(new net.spy.memcached.DefaultConnectionFactory(), AddrUtil.getAddresses(all));
        MemcachedClient ketama = new MemcachedClient(new net.spy.memcached.KetamaConnectionFactory(), AddrUtil.getAddresses(all));
        try (Mcpool preset = Mcpool.builder().servers(addrs).preset("spymemcached").build();
             Mcpool presetKetama = Mcpool.builder().servers(addrs).distribution("spymemcached-ketama").preset("spymemcached").build();
             Mcpool mcpoolLayout = Mcpool.builder().servers(addrs).distribution("spymemcached-ketama").valueFormat("mcpool").build()) {
            List<String> labels = preset.servers();
            int ketamaMisplacedByPresetAlone = 0;
            for (int i = 0; i < 500; i++) {
                String k = "setup:" + i;
                int d = ((InetSocketAddress) dflt.getNodeLocator().getPrimary(k).getSocketAddress()).getPort();
                int kt = ((InetSocketAddress) ketama.getNodeLocator().getPrimary(k).getSocketAddress()).getPort();
                assertEquals(k, "127.0.0.1:" + d, labels.get(preset.serverIndexFor(k)));
                assertEquals(k, "127.0.0.1:" + kt, labels.get(presetKetama.serverIndexFor(k)));
                if (!labels.get(preset.serverIndexFor(k)).equals("127.0.0.1:" + kt)) ketamaMisplacedByPresetAlone++;
            }
            assertTrue("the preset alone placed every key as KetamaConnectionFactory", ketamaMisplacedByPresetAlone > 100);

            String big = big(); // 40,000 chars, compressed by both formats
            assertTrue(presetKetama.set("setup:big", big, 0));
            assertEquals(big, ketama.get("setup:big"));
            assertTrue(mcpoolLayout.set("setup:big", big, 0));
            Object garbage = ketama.get("setup:big");
            assertTrue(garbage instanceof String);
            assertNotEquals(big, garbage);
            assertTrue(((String) garbage).length() < big.length()); // the compressed bytes as text

            // casResult and spymemcached's CASResponse: the same answer in the same situations
            assertTrue(presetKetama.set("setup:cas", "v0", 0));
            long stale = presetKetama.gets("setup:cas").casUnique;
            assertEquals(CasResult.OK, presetKetama.casResult("setup:cas", "v1", 0, stale));
            assertEquals(net.spy.memcached.CASResponse.EXISTS, ketama.cas("setup:cas", stale, "v2"));
            assertEquals(CasResult.EXISTS, presetKetama.casResult("setup:cas", "v2", 0, stale));
            assertEquals(net.spy.memcached.CASResponse.NOT_FOUND, ketama.cas("setup:cas-none", stale, "v2"));
            assertEquals(CasResult.NOT_FOUND, presetKetama.casResult("setup:cas-none", "v2", 0, stale));
            long now = ketama.gets("setup:cas").getCas();
            assertEquals(presetKetama.gets("setup:cas"), new MemcachedItem("v1", now));
        } finally {
            dflt.shutdown();
            ketama.shutdown();
        }
    }
}
