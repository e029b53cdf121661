package io.mcpool;

import static org.junit.Assert.*;

import java.util.Arrays;
import java.util.logging.Level;
import java.util.logging.Logger;
import net.spy.memcached.MemcachedClient;
import org.junit.Test;

/**
 * The Whalin layer on a pool whose value format is {@code spymemcached} writes each Java type
 * as {@link Mcpool} with that format does: the one default transcoder ({@link DefaultTranscoder},
 * a {@link SpyTranscoder} there) for both APIs. Tester finding java2 2: {@code MemCachedClient}
 * wrote an Integer as spymemcached's Long (flags 768; spymemcached read a Long, and
 * {@code (Integer) spy.get(k)} threw ClassCastException) where Mcpool wrote an Integer (512).
 */
public class SpyFormatWhalinLayerTest extends ServerTestBase {
    // Keys without ':' and the like: the Whalin layer URL-encodes keys (sanitizeKeys), and
    // the raw reads of TestServer ask for the key as sent.
    private static SockIOPool pool(String name) {
        SockIOPool p = SockIOPool.getInstance(name);
        p.setServers(new String[] {server.addr()});
        p.setValueFormat("spymemcached");
        p.initialize();
        return p;
    }

    private static void assertSameValue(String what, Object want, Object got) {
        assertNotNull(what, got);
        assertEquals(what, want.getClass(), got.getClass());
        if (want instanceof byte[]) assertArrayEquals(what, (byte[]) want, (byte[]) got);
        else assertEquals(what, want, got);
    }

    @Test
    public void memCachedClientWritesEachTypeAsMcpoolUnderTheSameFormat() throws Exception {
        SockIOPool p = pool("spyfmt");
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).valueFormat("spymemcached").build()) {
            MemCachedClient whalin = new MemCachedClient("spyfmt");
            Object[] values = {42, 42L, (byte) 7, "text", true, new byte[] {1, 2, 3}};
            for (int i = 0; i < values.length; i++) {
                Object v = values[i];
                String what = v.getClass().getSimpleName(), kw = "spyfmt_w_" + i, km = "spyfmt_m_" + i;
                assertTrue(what, whalin.set(kw, v));
                assertTrue(what, mc.set(km, v));
                TestServer.RawItem viaWhalin = server.raw(kw), viaMcpool = server.raw(km);
                assertEquals(what + ": flags", viaMcpool.flags, viaWhalin.flags);
                assertArrayEquals(what + ": bytes", viaMcpool.data, viaWhalin.data);
                // each API reads its own and the other's value as the type written
                assertSameValue(what, v, whalin.get(kw));
                assertSameValue(what, v, whalin.get(km));
                assertSameValue(what, v, mc.get(kw));
                assertSameValue(what, v, whalin.getMulti(new String[] {kw}).get(kw));
            }
            assertEquals("spymemcached's SPECIAL_INT", SpyTranscoder.SPECIAL_INT, server.raw("spyfmt_w_0").flags);
            assertEquals("spymemcached's SPECIAL_LONG", SpyTranscoder.SPECIAL_LONG, server.raw("spyfmt_w_1").flags);
            // A Short, which spymemcached serializes, is refused by both without serialization
            for (Runnable store : new Runnable[] {() -> whalin.set("spyfmt_short", (short) 3),
                                                  () -> mc.set("spyfmt_short", (short) 3, 0)}) {
                try {
                    store.run();
                    fail("a Short stored without serialization under spymemcached");
                } catch (ClientException expected) {
                    assertTrue(expected.getMessage(), expected.getMessage().contains("Short"));
                }
            }
        } finally {
            p.shutDown();
        }
    }

    @Test
    public void spymemcachedReadsTheWhalinLayersIntegerAsAnInteger() throws Exception {
        System.setProperty("net.spy.log.LoggerImpl", "net.spy.memcached.compat.log.SunLogger");
        Logger.getLogger("net.spy.memcached").setLevel(Level.WARNING);
        SockIOPool p = pool("spyfmt-spy");
        MemcachedClient spy = SpymemcachedInteropTest.spy(server.addr(), false);
        try {
            MemCachedClient whalin = new MemCachedClient("spyfmt-spy");
            assertTrue(whalin.set("spyfmt_int", 42));
            assertTrue(whalin.set("spyfmt_byte", (byte) 9));
            Object got = spy.get("spyfmt_int");
            assertEquals(Integer.class, got.getClass());
            assertEquals(42, ((Integer) got).intValue());
            assertEquals(Byte.valueOf((byte) 9), spy.get("spyfmt_byte"));
            // and spymemcached's Integer reads back as an Integer here
            assertTrue(spy.set("spyfmt_fromspy", 0, 17).get());
            assertEquals(Integer.valueOf(17), whalin.get("spyfmt_fromspy"));
        } finally {
            spy.shutdown();
            p.shutDown();
        }
    }

    /** The client's own settings still count: serialization on is SpyTranscoder's (a Short
     * serialized, as spymemcached stores it), primitiveAsString stores text (flags 0, a
     * String to spymemcached), and setTranscoder(null) returns to the format's default. */
    @Test
    public void theClientsSettingsStillApply() throws Exception {
        SockIOPool p = pool("spyfmt-settings");
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).valueFormat("spymemcached")
                 .option("serialized_java", "true").build()) {
            MemCachedClient whalin = new MemCachedClient("spyfmt-settings");
            whalin.setSerializationEnabled(true);
            assertTrue(whalin.set("spyfmt_s_short", (short) 3));
            assertTrue(mc.set("spyfmt_m_short", (short) 3, 0));
            assertEquals(server.raw("spyfmt_m_short").flags, server.raw("spyfmt_s_short").flags);
            assertEquals(Short.valueOf((short) 3), whalin.get("spyfmt_s_short"));

            whalin.setSerializationEnabled(false);
            whalin.setPrimitiveAsString(true);
            assertTrue(whalin.set("spyfmt_s_text", 42));
            assertEquals(0, server.raw("spyfmt_s_text").flags); // spymemcached's String
            assertArrayEquals("42".getBytes(java.nio.charset.StandardCharsets.US_ASCII), server.raw("spyfmt_s_text").data);
            assertEquals("42", whalin.get("spyfmt_s_text"));

            whalin.setPrimitiveAsString(false);
            whalin.setTranscoder(new WhalinTranscoder());
            assertTrue(whalin.set("spyfmt_s_given", 5));
            assertEquals("a transcoder given is used as given", Long.valueOf(5), whalin.get("spyfmt_s_given"));
            whalin.setTranscoder(null);
            assertTrue(whalin.set("spyfmt_s_back", 5));
            assertEquals(SpyTranscoder.SPECIAL_INT, server.raw("spyfmt_s_back").flags);
            assertEquals(Integer.valueOf(5), whalin.get("spyfmt_s_back"));
        } finally {
            p.shutDown();
        }
    }

    /** Under the pool's default whalin format and under mcpool nothing changed: Whalin's
     * markers, and the core's kinds (integers read back as Long). */
    @Test
    public void otherFormatsKeepTheirTypes() throws Exception {
        for (String format : Arrays.asList("whalin", "mcpool")) {
            SockIOPool p = SockIOPool.getInstance("spyfmt-" + format);
            p.setServers(new String[] {server.addr()});
            p.setValueFormat(format);
            p.initialize();
            try {
                MemCachedClient whalin = new MemCachedClient("spyfmt-" + format);
                assertTrue(whalin.set("spyfmt_o_" + format, 42));
                Object got = whalin.get("spyfmt_o_" + format);
                assertEquals(format, format.equals("whalin") ? Integer.class : Long.class, got.getClass());
                if (format.equals("whalin")) {
                    assertEquals(WhalinTranscoder.MARKER_INTEGER, server.raw("spyfmt_o_" + format).flags);
                }
            } finally {
                p.shutDown();
            }
        }
    }
}
