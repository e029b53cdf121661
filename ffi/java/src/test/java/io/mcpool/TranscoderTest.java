package io.mcpool;

import static org.junit.Assert.*;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Java types as the core's kinds, in the value formats (the flags and wire forms are the
 * core's: docs/value-format.md), checked on the wire through a raw client (the
 * {@code libmemcached} format: bytes with the caller's flags), and the values that are
 * errors, never bytes.
 */
public class TranscoderTest {
    static TestServer server;
    static Mcpool raw;
    static final int MARK = 1 << 24, TEXT = MARK | 1 << 16, INT = MARK | 2 << 16, BOOL = MARK | 3 << 16,
        JAVA = MARK | 6 << 16, STORABLE = MARK | 5 << 16;

    @BeforeClass
    public static void start() throws Exception {
        server = new TestServer();
        raw = Mcpool.builder().servers(server.addr()).valueFormat("libmemcached").build();
    }

    @AfterClass
    public static void stop() throws Exception {
        raw.close();
        server.close();
    }

    static Mcpool client(String format, Transcoder t) {
        Mcpool.Builder b = Mcpool.builder().servers(server.addr()).valueFormat(format);
        return (t == null ? b : b.transcoder(t)).build();
    }

    static void wire(Mcpool mc, String key, Object v, int flags, byte[] bytes, Object back) {
        assertTrue(mc.set(key, v, 0));
        CachedData d = raw.getBytes(key);
        assertEquals(key + " flags", flags, d.flags);
        assertArrayEquals(key + " bytes", bytes, d.data);
        Object got = mc.get(key);
        assertEquals(key, back.getClass(), got.getClass());
        if (back instanceof byte[]) assertArrayEquals((byte[]) back, (byte[]) got);
        else assertEquals(key, back, got);
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    public void mcpoolLayout() {
        try (Mcpool mc = client("mcpool", null)) {
            wire(mc, "t:m:s", "hé", TEXT, utf8("hé"), "hé");
            wire(mc, "t:m:l", -7L, INT, utf8("-7"), -7L);
            wire(mc, "t:m:i", 42, INT, utf8("42"), 42L); // every integer reads back as a Long
            wire(mc, "t:m:t", true, BOOL, utf8("1"), true);
            wire(mc, "t:m:b", new byte[] {1, 2}, 0, new byte[] {1, 2}, new byte[] {1, 2});
            wire(mc, "t:m:sb", new StringBuilder("x"), TEXT, utf8("x"), "x");
        }
    }

    @Test
    public void whalinLayout() {
        try (Mcpool mc = client("whalin", null)) {
            wire(mc, "t:w:s", "hé", 32, utf8("hé"), "hé");
            // Each Java type with the marker Whalin's NativeHandler gives it, in its bytes,
            // read back as that type: a small Long is Whalin's Long (MARKER_LONG, 8 bytes),
            // never its Integer (which Whalin would read as an Integer).
            wire(mc, "t:w:l", 7L, 16384, new byte[] {0, 0, 0, 0, 0, 0, 0, 7}, 7L);
            wire(mc, "t:w:L", 1L << 40, 16384, new byte[] {0, 0, 1, 0, 0, 0, 0, 0}, 1L << 40);
            wire(mc, "t:w:Lm", Long.MIN_VALUE, 16384, new byte[] {-128, 0, 0, 0, 0, 0, 0, 0}, Long.MIN_VALUE);
            wire(mc, "t:w:i", 42, 4, new byte[] {0, 0, 0, 42}, 42); // MARKER_INTEGER
            wire(mc, "t:w:im", Integer.MIN_VALUE, 4, new byte[] {-128, 0, 0, 0}, Integer.MIN_VALUE);
            wire(mc, "t:w:h", (short) -2, 256, new byte[] {-1, -1, -1, -2}, (short) -2); // MARKER_SHORT
            wire(mc, "t:w:y", (byte) -3, 1, new byte[] {-3}, (byte) -3); // MARKER_BYTE
            wire(mc, "t:w:t", true, 8192, new byte[] {1}, true);
            wire(mc, "t:w:f", false, 8192, new byte[] {0}, false);
            wire(mc, "t:w:b", new byte[] {1}, 4096, new byte[] {1}, new byte[] {1});
            wireText(mc, "t:w:sb", new StringBuilder("hé"), 2048); // MARKER_STRINGBUILDER
            wireText(mc, "t:w:sf", new StringBuffer("hé"), 64); // MARKER_STRINGBUFFER
            // compressed: the gzip bit (2) next to the marker, the type kept
            String big = new String(new char[40_000]).replace('\0', 'z');
            assertTrue(mc.set("t:w:big", new StringBuilder(big), 0));
            assertEquals(2048 | 2, raw.getBytes("t:w:big").flags);
            Object got = mc.get("t:w:big");
            assertEquals(StringBuilder.class, got.getClass());
            assertEquals(big, got.toString());
            // what Whalin wrote, each marker read back as its type, in get and getMulti
            assertTrue(raw.setBytes("t:w:wi", new byte[] {0, 0, 0, 42}, 4, 0));
            assertTrue(raw.setBytes("t:w:wb", new byte[] {3}, 1, 0));
            assertTrue(raw.setBytes("t:w:ws", new byte[] {0, 0, 1, 0}, 256, 0));
            assertTrue(raw.setBytes("t:w:wl", new byte[] {0, 0, 0, 0, 0, 0, 0, 5}, 16384, 0));
            assertTrue(raw.setBytes("t:w:wf", utf8("x"), 64, 0));
            Object[] want = {42, (byte) 3, (short) 256, 5L};
            java.util.Map<String, Object> m = mc.getMulti("t:w:wi", "t:w:wb", "t:w:ws", "t:w:wl");
            String[] ks = {"t:w:wi", "t:w:wb", "t:w:ws", "t:w:wl"};
            for (int i = 0; i < ks.length; i++) {
                assertEquals(ks[i], want[i].getClass(), mc.get(ks[i]).getClass());
                assertEquals(ks[i], want[i], mc.get(ks[i]));
                assertEquals(ks[i], want[i], m.get(ks[i]));
            }
            assertEquals(StringBuffer.class, mc.get("t:w:wf").getClass());
            // getBytes, then setBytes with the same flags: the same wire value (an Integer's
            // decimal text under MARKER_INTEGER was stored as its ASCII bytes, "12345678" read
            // back as 3544952156018063160), the same Java value.
            for (String k : new String[] {"t:w:l", "t:w:Lm", "t:w:i", "t:w:im", "t:w:h", "t:w:y", "t:w:t",
                "t:w:f", "t:w:b", "t:w:sb", "t:w:wi", "t:w:wb", "t:w:ws", "t:w:wl", "t:w:wf"}) {
                CachedData d = mc.getBytes(k);
                assertTrue(k, mc.setBytes(k + ":rt", d.data, d.flags, 0));
                CachedData was = raw.getBytes(k), now = raw.getBytes(k + ":rt");
                assertEquals(k, was.flags, now.flags);
                assertArrayEquals(k, was.data, now.data);
                Object v = mc.get(k), back = mc.get(k + ":rt");
                assertEquals(k, v.getClass(), back.getClass());
                if (v instanceof byte[]) assertArrayEquals(k, (byte[]) v, (byte[]) back);
                else assertEquals(k, v.toString(), back.toString());
            }
            // a Short's 4 bytes beyond 16 bits are no Short Whalin wrote: an error, not a
            // truncated number
            assertTrue(raw.setBytes("t:w:wS", new byte[] {0, 1, 0, 0}, 256, 0));
            try {
                fail("read as " + mc.get("t:w:wS"));
            } catch (McpoolException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("t:w:wS"));
            }
            // an Integer is not appended (its 4 bytes next to others are no value)
            try {
                mc.append("t:w:i", 1);
                fail("append of an Integer");
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
            }
            // a Whalin Float, Double, Date or Character has no kind: an error, never bytes
            for (int marker : new int[] {128, 512, 1024, 16}) {
                assertTrue(raw.setBytes("t:w:no", new byte[] {0, 0, 0, 0, 0, 0, 0, 1}, marker, 0));
                try {
                    Object v = mc.get("t:w:no");
                    fail("marker " + marker + " read as " + v);
                } catch (McpoolException e) {
                    assertTrue(e.getMessage(), e.getMessage().contains("t:w:no"));
                }
            }
        }
        WhalinTranscoder pas = new WhalinTranscoder(true, false, null);
        CachedData d = pas.encode(12);
        assertEquals(Kind.TEXT, d.kind);
        assertEquals("12", new String(d.data, StandardCharsets.UTF_8));
        assertEquals("12", pas.decode(new byte[] {'1', '2'}, Kind.INT));
    }

    static void wireText(Mcpool mc, String key, CharSequence v, int flags) {
        assertTrue(mc.set(key, v, 0));
        CachedData d = raw.getBytes(key);
        assertEquals(key + " flags", flags, d.flags);
        assertArrayEquals(key + " bytes", utf8(v.toString()), d.data);
        Object got = mc.get(key);
        assertEquals(key, v.getClass(), got.getClass());
        assertEquals(key, v.toString(), got.toString());
    }

    @Test
    public void pythonIntBeyond64BitsReadsAsAnExactBigInteger() {
        // pylibmc's long flag (4) with a Python int's decimal text: beyond 64 bits it is a
        // BigInteger with the exact value, never a wrapped Long; within, a Long.
        try (Mcpool mc = client("pylibmc", null)) {
            String[] big = {"1208925819614629174706176", "-1180591620717411303424", "9223372036854775808",
                "-9223372036854775809"};
            for (String d : big) {
                assertTrue(raw.setBytes("t:p:big", utf8(d), 4, 0));
                assertEquals(d, new java.math.BigInteger(d), mc.get("t:p:big"));
            }
            assertTrue(raw.setBytes("t:p:big", utf8("-9223372036854775808"), 4, 0));
            assertEquals(Long.MIN_VALUE, mc.get("t:p:big"));
        }
    }

    @Test
    public void whalinTranscoderUnderAnotherFormatWritesKindsOnly() {
        // The markers are Whalin's: under mcpool (the builder's default) the same transcoder
        // stores an Integer as the integer kind, read back as a Long, and a StringBuilder as
        // text, read back as a String.
        try (Mcpool mc = client("mcpool", new WhalinTranscoder())) {
            wire(mc, "t:wm:i", 42, INT, utf8("42"), 42L);
            wire(mc, "t:wm:h", (short) 7, INT, utf8("7"), 7L);
            wire(mc, "t:wm:sb", new StringBuilder("x"), TEXT, utf8("x"), "x");
        }
    }

    @Test
    public void spyLayout() {
        try (Mcpool mc = client("spymemcached", new SpyTranscoder())) {
            wire(mc, "t:s:s", "s", 0, new byte[] {'s'}, "s");
            // Each Java integer type with spymemcached's own flags, read back as that type
            // (a small Long was written as SPECIAL_INT: spymemcached read an Integer).
            wire(mc, "t:s:i", 300, 512, new byte[] {1, 44}, 300); // SPECIAL_INT
            wire(mc, "t:s:l", 300L, 768, new byte[] {1, 44}, 300L); // SPECIAL_LONG
            wire(mc, "t:s:0", 0L, 768, new byte[] {}, 0L);
            wire(mc, "t:s:L", 1L << 40, 768, new byte[] {1, 0, 0, 0, 0, 0}, 1L << 40);
            wire(mc, "t:s:m", -1L, 768, new byte[] {-1, -1, -1, -1, -1, -1, -1, -1}, -1L);
            wire(mc, "t:s:y", (byte) -3, 1280, new byte[] {-3}, (byte) -3); // SPECIAL_BYTE
            wire(mc, "t:s:t", true, 256, new byte[] {'1'}, true);
            wire(mc, "t:s:f", false, 256, new byte[] {'0'}, false);
            wire(mc, "t:s:b", new byte[] {1}, 2048, new byte[] {1}, new byte[] {1});
        }
        // a transcoder given alone brings its format
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).transcoder(new SpyTranscoder()).build()) {
            assertTrue(mc.set("t:s:alone", "x", 0));
            assertEquals(0, raw.getBytes("t:s:alone").flags);
        }
    }

    /** SpyTranscoder's flags are spymemcached's: under another format (it used to write them
     * anyway, and mcpool's layout read "5" under 512 as bytes with application flags: Java got
     * byte[]{53}, Python b"5") every boxed integer is the core's int kind, read back as a
     * number by Java and every other reader, or refused where the format has no integers;
     * never a different type read back as if right. */
    @Test
    public void spyTranscoderWritesItsFlagsOnlyUnderSpymemcached() {
        Object[] boxed = {Integer.valueOf(5), Long.valueOf(5), Short.valueOf((short) 5), Byte.valueOf((byte) 5)};
        for (String fmt : new String[] {"mcpool", "libmemcached", "pylibmc", "spymemcached"}) {
            for (SpyTranscoder tc : new SpyTranscoder[] {new SpyTranscoder(), new SpyTranscoder(true, null)}) {
                try (Mcpool mc = client(fmt, tc); Mcpool plain = client(fmt, null)) {
                    for (Object v : boxed) {
                        String key = "t:sf:" + fmt + ":" + tc.allowSerializable() + ":" + v.getClass().getSimpleName();
                        String what = fmt + " " + v.getClass().getSimpleName() + " serializable=" + tc.allowSerializable();
                        boolean stored;
                        try {
                            stored = mc.set(key, v, 0);
                        } catch (McpoolException e) {
                            // a clear refusal: the format has no integers (libmemcached), or
                            // spymemcached's Short needs serialization, as spymemcached does
                            assertTrue(what + ": " + e.getMessage(), fmt.equals("libmemcached")
                                || (fmt.equals("spymemcached") && v instanceof Short && !tc.allowSerializable()));
                            if (fmt.equals("libmemcached")) assertEquals(what, "MCPOOL_UNSUPPORTED", e.statusName());
                            assertNull(what, raw.getBytes(key));
                            continue;
                        }
                        assertTrue(what, stored);
                        assertFalse(what + " was refused nowhere", fmt.equals("libmemcached"));
                        Object got = mc.get(key);
                        if (fmt.equals("spymemcached")) {
                            assertEquals(what, v, got); // each type as spymemcached reads it back
                        } else {
                            assertEquals(what, Long.valueOf(5), got); // the int kind, as a number
                            assertEquals(what, Long.valueOf(5), plain.get(key));
                            CachedData d = raw.getBytes(key); // the format's int flags, decimal
                            assertEquals(what, fmt.equals("mcpool") ? INT : 4, d.flags);
                            assertArrayEquals(what, utf8("5"), d.data);
                        }
                    }
                }
            }
        }
        // StringBuilder and Boolean as the kinds too (they had no spymemcached flags to leak)
        try (Mcpool mc = client("mcpool", new SpyTranscoder())) {
            wire(mc, "t:sf:sb", new StringBuilder("x"), TEXT, utf8("x"), "x");
            wire(mc, "t:sf:l", 300L, INT, utf8("300"), 300L);
            wire(mc, "t:sf:i", 300, INT, utf8("300"), 300L);
        }
    }

    @Test
    public void getMultiKeepsTheOtherHitsOfAnUnreadableValue() {
        // A Perl Storable image (Java cannot read it), flags that mean nothing in the format:
        // the other hits are kept, each bad key named (the whole call threw, hits lost).
        try (Mcpool mc = client("mcpool", null)) {
            assertTrue(raw.setBytes("t:gm:pl", new byte[] {4, 5}, STORABLE, 0));
            assertTrue(raw.setBytes("t:gm:weird", new byte[] {1}, 0x40000000, 0));
            assertTrue(mc.set("t:gm:a", "a", 0));
            assertTrue(mc.set("t:gm:n", 5, 0));
            try {
                mc.getMulti("t:gm:pl", "t:gm:a", "t:gm:weird", "t:gm:none", "t:gm:n");
                fail("unreadable values were not reported");
            } catch (UnreadableValuesException e) {
                assertEquals(Arrays.asList("t:gm:a", "t:gm:n"), new ArrayList<>(e.hits().keySet()));
                assertEquals(5L, e.hits().get("t:gm:n"));
                assertEquals(Arrays.asList("t:gm:pl", "t:gm:weird"), new ArrayList<>(e.errors().keySet()));
                assertTrue(e.errors().get("t:gm:pl").getMessage().contains("Storable"));
                assertEquals("MCPOOL_VALUE_FORMAT", e.errors().get("t:gm:weird").statusName());
                assertTrue(e.errors().get("t:gm:weird").getMessage().contains("t:gm:weird"));
            }
            assertEquals("a", mc.getMulti("t:gm:a", "t:gm:none").get("t:gm:a"));
        }
        // With Storable images on, Java still cannot read one: named with its key and flags,
        // as Python and Perl name it, in get and in getMulti; the same ServerException
        // MCPOOL_VALUE_FORMAT as with them off, where the core refuses it (it was a
        // ClientException of status 0, MCPOOL_OK, named "JAVA": hostile3 3)
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).valueFormat("mcpool")
                .option("serialized_perl", "true").build()) {
            try {
                mc.getMulti("t:gm:pl", "t:gm:a");
                fail("a Storable image was read");
            } catch (UnreadableValuesException e) {
                assertEquals("a", e.hits().get("t:gm:a"));
                assertEquals(210, e.status());
                McpoolException one = e.errors().get("t:gm:pl");
                assertEquals(ServerException.class, one.getClass());
                assertEquals("MCPOOL_VALUE_FORMAT", one.statusName());
                assertTrue(one.getMessage(), one.getMessage().contains("the value of t:gm:pl with flags " + STORABLE + " (0x"));
            }
            try {
                mc.get("t:gm:pl");
                fail("a Storable image was read");
            } catch (ServerException e) {
                assertEquals(210, e.status());
                assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("the value of t:gm:pl with flags " + STORABLE
                    + " (0x" + Integer.toHexString(STORABLE) + "): the value is a Perl Storable image"));
            }
        }
        try (Mcpool off = client("mcpool", null)) {
            McpoolException e = assertThrows(McpoolException.class, () -> off.get("t:gm:pl"));
            assertEquals(ServerException.class, e.getClass());
            assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
        }
    }

    @Test
    public void typesWithoutAKindAreRefused() {
        for (Object v : new Object[] {1.5f, 2.5d, new Date(1), 'c', new ArrayList<String>()}) {
            try {
                new WhalinTranscoder().encode(v);
                fail(v.toString());
            } catch (ClientException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("serialization is off"));
            }
        }
    }

    @Test
    public void serializationOnlyWhenEnabled() {
        try (Mcpool off = client("mcpool", null); Mcpool on = client("mcpool", new WhalinTranscoder(false, true, null))) {
            ArrayList<String> list = new ArrayList<>();
            list.add("a");
            assertTrue(on.set("t:ser", list, 0));
            assertEquals(JAVA, raw.getBytes("t:ser").flags);
            assertEquals(list, on.get("t:ser"));
            assertEquals(1.5f, roundTrip(on, "t:ser:f", 1.5f));
            try {
                off.get("t:ser");
                fail();
            } catch (McpoolException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("t:ser"));
            }
            // a Perl Storable image or any other language's object: an error, never bytes
            assertTrue(raw.setBytes("t:storable", new byte[] {5, 11, 3}, STORABLE, 0));
            for (Mcpool mc : new Mcpool[] {off, on}) {
                try {
                    mc.get("t:storable");
                    fail();
                } catch (McpoolException e) {
                    assertTrue(e.getMessage(), e.getMessage().contains("t:storable"));
                }
            }
        }
        // a transcoder's refusal of a value read is MCPOOL_VALUE_FORMAT, as the core's
        try {
            new WhalinTranscoder().decode(new byte[] {(byte) 0xac, (byte) 0xed}, Kind.JAVA_SERIALIZED);
            fail();
        } catch (ServerException e) { // never deserialized
            assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains("serialization is off"));
        }
        try {
            new SpyTranscoder().decode(new byte[] {1}, Kind.PYTHON_PICKLE);
            fail();
        } catch (ServerException e) {
            assertEquals("MCPOOL_VALUE_FORMAT", e.statusName());
            assertTrue(e.getMessage().contains("Python pickle"));
        }
    }

    /** option("serialized_java", ...) was overwritten at build from the transcoder (off by
     * default), so a Serializable was refused with the option on. Now the option sets the
     * default transcoder's serialization (Whalin's and, for the spymemcached format,
     * spymemcached's), and a transcoder given that disagrees with it is refused at build. */
    @Test
    public void serializedJavaOptionWins() {
        ArrayList<Integer> list = new ArrayList<>(Arrays.asList(1, 2));
        for (String format : new String[] {"mcpool", "spymemcached"}) {
            for (String name : new String[] {"serialized_java", "Serialized-Java"}) {
                try (Mcpool on = Mcpool.builder().servers(server.addr()).valueFormat(format).option(name, "true").build()) {
                    assertTrue(on.set("t:sero:" + format, list, 0));
                    assertEquals(list, on.get("t:sero:" + format));
                }
            }
        }
        assertEquals(JAVA, raw.getBytes("t:sero:mcpool").flags);
        try (Mcpool off = Mcpool.builder().servers(server.addr()).option("serialized_java", "off").build()) {
            try {
                off.set("t:sero:off", list, 0);
                fail("stored with serialization off");
            } catch (ClientException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("serialization is off"));
            }
            try {
                off.get("t:sero:mcpool");
                fail("deserialized with serialization off");
            } catch (McpoolException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("t:sero:mcpool"));
            }
        }
        // a transcoder that agrees with the option: as without it
        try (Mcpool both = Mcpool.builder().servers(server.addr()).valueFormat("mcpool").option("serialized_java", "true")
                 .transcoder(new WhalinTranscoder(false, true, null)).build()) {
            assertEquals(list, both.get("t:sero:mcpool"));
        }
        // one that disagrees: refused at build, naming both
        Transcoder[] disagree = {new WhalinTranscoder(), new SpyTranscoder(true, null)};
        String[] option = {"true", "false"};
        for (int i = 0; i < disagree.length; i++) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).option("serialized_java", option[i])
                     .transcoder(disagree[i]).build()) {
                fail("serialized_java=" + option[i] + " with " + disagree[i].getClass().getName() + " was built");
            } catch (ConfigurationException e) {
                assertEquals("MCPOOL_CONFIG", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("serialized_java=" + option[i]));
                assertTrue(e.getMessage(), e.getMessage().contains(disagree[i].getClass().getName()));
            }
        }
        // a value that is not a boolean: the core's error, naming the option
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).option("serialized_java", "maybe").build()) {
            fail("serialized_java=maybe was built");
        } catch (ClientException e) {
            assertEquals("MCPOOL_CONFIG", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains("serialized_java"));
        }
    }

    @Test
    public void wrongLayoutReadsAreErrors() {
        // pylibmc's zlib bit under whalin, a corrupt gzip stream, mcpool's text flag under whalin
        int[][] cases = {{8 | 32, 0}, {2 | 32, 1}, {TEXT, 2}};
        try (Mcpool mc = client("whalin", null)) {
            for (int[] c : cases) {
                assertTrue(raw.setBytes("t:wrong", "not what the flags say".getBytes(StandardCharsets.US_ASCII), c[0], 0));
                try {
                    Object v = mc.get("t:wrong");
                    fail("flags " + c[0] + " read as " + v);
                } catch (McpoolException e) {
                    assertTrue(e.getMessage(), e.getMessage().contains("t:wrong"));
                }
            }
        }
    }

    @Test
    public void unknownValueFormatIsAConfigError() {
        try {
            client("nope", null).close();
            fail();
        } catch (ClientException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("nope") || e.getMessage().contains("value"));
        }
    }

    static Object roundTrip(Mcpool mc, String k, Object v) {
        assertTrue(mc.set(k, v, 0));
        return mc.get(k);
    }
}
