package io.mcpool;

import static org.junit.Assert.*;

import java.util.Date;
import org.junit.Test;

/** The byte layouts, checked against what Whalin 2.x and spymemcached write (no server). */
public class TranscoderTest {
    @Test
    public void whalinLayout() {
        WhalinTranscoder t = new WhalinTranscoder();
        check(t, 42, 4, new byte[] {0, 0, 0, 42});
        check(t, 7L, 16384, new byte[] {0, 0, 0, 0, 0, 0, 0, 7});
        check(t, (byte) 3, 1, new byte[] {3});
        check(t, true, 8192, new byte[] {1});
        check(t, 'A', 16, new byte[] {0, 0, 0, 65});
        check(t, (short) -2, 256, new byte[] {-1, -1, -1, -2});
        check(t, "hé", 32, new byte[] {'h', (byte) 0xc3, (byte) 0xa9});
        check(t, new Date(258L), 1024, new byte[] {0, 0, 0, 0, 0, 0, 1, 2});
        check(t, 1.0f, 128, Bytes.int4(Float.floatToIntBits(1.0f)));
        check(t, 1.0d, 512, Bytes.long8(Double.doubleToLongBits(1.0d)));
        assertEquals(4096, t.encode(new byte[] {1}).flags);
        assertEquals(64, t.encode(new StringBuffer("x")).flags);
        assertEquals(2048, t.encode(new StringBuilder("x")).flags);
        assertEquals("no marker", t.decode("no marker".getBytes(), 0));
        WhalinTranscoder pas = new WhalinTranscoder(true, false, null);
        CachedData d = pas.encode(12);
        assertEquals(0, d.flags);
        assertEquals("12", new String(d.data));
        assertEquals("12", pas.decode(new byte[] {'1', '2'}, 0));
        try {
            t.decode(new byte[] {1, 2}, 4); // an int must have 4 bytes
            fail();
        } catch (ClientException e) {
            // refused, not misread
        }
    }

    @Test
    public void spyLayout() {
        SpyTranscoder t = new SpyTranscoder();
        check(t, "s", 0, new byte[] {'s'});
        check(t, 42, 512, new byte[] {42});
        check(t, 0, 512, new byte[] {});
        check(t, -1, 512, new byte[] {-1, -1, -1, -1});
        check(t, 300L, 768, new byte[] {1, 44});
        check(t, true, 256, new byte[] {'1'});
        check(t, false, 256, new byte[] {'0'});
        check(t, (byte) 5, 1280, new byte[] {5});
        check(t, new Date(1L), 1024, new byte[] {1});
        assertEquals(2048, t.encode(new byte[] {1}).flags);
        assertEquals(1.5f, t.decode(t.encode(1.5f).data, 1536));
        assertEquals(-2.5d, t.decode(t.encode(-2.5d).data, 1792));
    }

    @Test
    public void serializationRefusedByDefault() {
        for (Transcoder t : new Transcoder[] {new WhalinTranscoder(), new SpyTranscoder()}) {
            try {
                t.encode(new java.util.ArrayList<String>());
                fail();
            } catch (ClientException e) {
                assertTrue(e.getMessage().contains("serialization is off"));
            }
        }
        try {
            new WhalinTranscoder().decode(new byte[] {(byte) 0xac, (byte) 0xed}, 8);
            fail();
        } catch (ClientException e) {
            // never deserialized
        }
        try {
            new SpyTranscoder().decode(new byte[] {(byte) 0xac, (byte) 0xed}, 1);
            fail();
        } catch (ClientException e) {
            // never deserialized
        }
        // Enabled, but flags without the serialized bit are never handed to ObjectInputStream.
        WhalinTranscoder on = new WhalinTranscoder(false, true, null);
        byte[] ser = on.encode(new java.util.ArrayList<String>()).data;
        assertTrue(on.decode(ser, 4096) instanceof byte[]);
        assertTrue(on.decode(ser, 8) instanceof java.util.ArrayList);
    }

    static void check(Transcoder t, Object v, int flags, byte[] bytes) {
        CachedData d = t.encode(v);
        assertEquals(v.toString(), flags, d.flags);
        assertArrayEquals(v.toString(), bytes, d.data);
        Object back = t.decode(d.data, d.flags);
        assertEquals(v.getClass(), back.getClass());
        assertEquals(v.toString(), back.toString());
    }
}
