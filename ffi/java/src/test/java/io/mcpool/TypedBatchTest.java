package io.mcpool;

import static org.junit.Assert.*;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/** The batch writes store every value as the single store of its op does, in one pipelined
 * call per server (typed values and values with a transcoder's own flags alike), never
 * item by item (tester finding batches 3: a String under spymemcached was stored alone); and
 * setMultiNoreply. memcached's own view (TestServer.raw) is the judge of flags and bytes. */
public class TypedBatchTest extends ServerTestBase {
    /** "none": mcpool's default value format. Keys use only characters Whalin's key
     * encoding leaves as they are, so that raw() finds them. */
    private static final String[] PRESETS = {"spymemcached", "whalin", "none"};

    private Mcpool client(String preset, List<OperationRecord> recs) {
        Mcpool.Builder b = Mcpool.builder().servers(server.addr()).option("serialized_java", "true");
        if (!preset.equals("none")) b = b.preset(preset);
        if (recs != null) b = b.onOperation(recs::add);
        return b.build();
    }

    /** Every type the transcoders map, small and (String, byte[]) compressed under every
     * format's threshold. */
    private static Object[] values() {
        StringBuilder big = new StringBuilder();
        for (int i = 0; big.length() < 50000; i++) big.append("typed batch \u00e9t\u00e9 ").append(i).append(' ');
        byte[] bigBytes = big.toString().getBytes(StandardCharsets.UTF_8);
        return new Object[] {"v\u00e9", "", big.toString(), 42, -7, 1234567890123L, Long.MIN_VALUE, true, false,
            new byte[] {0, 1, 2, (byte) 255}, new byte[0], bigBytes, new ArrayList<>(List.of("a", "b\u00e9"))};
    }

    private static String key(String preset, String op, String which, int i) {
        return "tb-" + preset + "-" + op + "-" + which + "-" + i;
    }

    /** What memcached holds under key "one" i and "many" i is the same flags and bytes, and
     * both read back as equal values, equal to v (an integer as its number: mcpool's format
     * reads every integer as a Long). */
    private void assertSameItem(Mcpool mc, String what, String one, String many, Object v) throws Exception {
        TestServer.RawItem a = server.raw(one), b = server.raw(many);
        assertNotNull(what + ": single store missing", a);
        assertNotNull(what + ": batch store missing", b);
        assertEquals(what + " flags", a.flags, b.flags);
        assertArrayEquals(what + " bytes", a.data, b.data);
        Object ra = mc.get(one), rb = mc.get(many);
        assertTrue(what + ": " + ra + " / " + rb, java.util.Objects.deepEquals(ra, rb));
        if (v instanceof Number) {
            assertEquals(what, ((Number) v).longValue(), ((Number) rb).longValue());
        } else if (v instanceof byte[] && rb instanceof byte[]) {
            assertArrayEquals(what, (byte[]) v, (byte[]) rb);
        } else {
            assertEquals(what, v, rb);
        }
    }

    /** The exchanges of the last batch: every key in one record, never one per item. */
    private static void assertBatched(String what, List<OperationRecord> recs, int n) {
        int keys = 0;
        for (OperationRecord r : recs) keys += r.keys();
        assertEquals(what + ": keys in " + recs, n, keys);
        assertTrue(what + ": " + recs.size() + " exchanges for " + n + " items", recs.size() == 1);
    }

    @Test
    public void setAddReplaceAndCasBatchesStoreWhatSingleStoresStore() throws Exception {
        Object[] v = values();
        int n = v.length;
        for (String preset : PRESETS) {
            List<OperationRecord> recs = Collections.synchronizedList(new ArrayList<>());
            try (Mcpool mc = client(preset, recs)) {
                // set: every item first stored, then compared
                Map<String, Object> batch = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    assertTrue(mc.set(key(preset, "set", "one", i), v[i], 0));
                    batch.put(key(preset, "set", "many", i), v[i]);
                }
                recs.clear();
                Map<String, Boolean> ok = mc.setMulti(batch, 0);
                assertBatched(preset + " setMulti", recs, n);
                assertEquals(preset, n, ok.size());
                assertFalse(preset + " " + ok, ok.containsValue(false));
                for (int i = 0; i < n; i++) {
                    assertSameItem(mc, preset + " set " + i, key(preset, "set", "one", i), key(preset, "set", "many", i), v[i]);
                }

                // add of absent keys; a present one answers false in both
                batch.clear();
                for (int i = 0; i < n; i++) {
                    assertTrue(mc.add(key(preset, "add", "one", i), v[i], 0));
                    batch.put(key(preset, "add", "many", i), v[i]);
                }
                batch.put(key(preset, "set", "many", 0), "exists");
                recs.clear();
                ok = mc.addMulti(batch, 0);
                assertBatched(preset + " addMulti", recs, n + 1);
                assertEquals(preset, Boolean.FALSE, ok.get(key(preset, "set", "many", 0)));
                assertFalse(mc.add(key(preset, "set", "one", 0), "exists", 0));
                for (int i = 0; i < n; i++) {
                    assertEquals(preset + " add " + i, Boolean.TRUE, ok.get(key(preset, "add", "many", i)));
                    assertSameItem(mc, preset + " add " + i, key(preset, "add", "one", i), key(preset, "add", "many", i), v[i]);
                }

                // replace of the set keys with another value of another type
                batch.clear();
                for (int i = 0; i < n; i++) {
                    Object w = v[(i + 1) % n];
                    assertTrue(mc.replace(key(preset, "set", "one", i), w, 0));
                    batch.put(key(preset, "set", "many", i), w);
                }
                recs.clear();
                ok = mc.replaceMulti(batch, 0);
                assertBatched(preset + " replaceMulti", recs, n);
                assertFalse(preset + " " + ok, ok.containsValue(false));
                for (int i = 0; i < n; i++) {
                    assertSameItem(mc, preset + " replace " + i, key(preset, "set", "one", i),
                        key(preset, "set", "many", i), v[(i + 1) % n]);
                }

                // cas with the uniques of gets / getsMulti
                List<String> many = new ArrayList<>();
                for (int i = 0; i < n; i++) many.add(key(preset, "set", "many", i));
                Map<String, MemcachedItem> seen = mc.getsMulti(many);
                assertEquals(preset, n, seen.size());
                Map<String, MemcachedItem> items = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    Object w = v[(i + 2) % n];
                    String one = key(preset, "set", "one", i), m = key(preset, "set", "many", i);
                    assertTrue(mc.cas(one, w, 0, mc.gets(one).casUnique));
                    items.put(m, new MemcachedItem(w, seen.get(m).casUnique));
                }
                recs.clear();
                ok = mc.casMulti(items, 0);
                assertBatched(preset + " casMulti", recs, n);
                assertFalse(preset + " " + ok, ok.containsValue(false));
                for (int i = 0; i < n; i++) {
                    assertSameItem(mc, preset + " cas " + i, key(preset, "set", "one", i),
                        key(preset, "set", "many", i), v[(i + 2) % n]);
                }
            }
        }
    }

    /** Under spymemcached a batch of Strings (flags 0, which the byte calls take as byte[])
     * is one exchange per server: they used to be one each. */
    @Test
    public void stringsUnderSpymemcachedShareOneExchange() throws Exception {
        List<OperationRecord> recs = Collections.synchronizedList(new ArrayList<>());
        try (Mcpool mc = client("spymemcached", recs)) {
            Map<String, Object> batch = new LinkedHashMap<>();
            for (int i = 0; i < 30; i++) batch.put("tb-spy-str-" + i, "s" + i);
            recs.clear();
            assertFalse(mc.setMulti(batch, 0).containsValue(false));
            assertEquals(recs.toString(), 1, recs.size());
            assertEquals(30, recs.get(0).keys());
            for (int i = 0; i < 30; i++) {
                TestServer.RawItem r = server.raw("tb-spy-str-" + i);
                assertEquals(0, r.flags);
                assertArrayEquals(("s" + i).getBytes(StandardCharsets.UTF_8), r.data);
            }
        }
    }

    /** A refused item of a mixed batch fails alone, with its own message, whatever its form,
     * and every other item is stored. */
    @Test
    public void aRefusedItemOfAMixedBatchFailsAlone() throws Exception {
        for (String preset : new String[] {"spymemcached", "whalin"}) {
            try (Mcpool mc = client(preset, null)) {
                Map<String, Object> batch = new LinkedHashMap<>();
                String p = "tb-" + preset + "-mixbad-";
                batch.put(p + "s", "text");
                batch.put(p + "i", 5); // its format's own flags: the second call
                batch.put(p + "b", true);
                String tooLong = p + "x".repeat(300);
                batch.put(tooLong, "text");
                String tooLongInt = p + "y".repeat(300);
                batch.put(tooLongInt, 6);
                try {
                    mc.setMulti(batch, 0);
                    fail(preset);
                } catch (PartialBatchException e) {
                    assertEquals(preset, List.of(tooLong, tooLongInt), new ArrayList<>(e.errors().keySet()));
                    assertEquals(preset, Map.of(p + "s", true, p + "i", true, p + "b", true), e.answers());
                    for (McpoolException x : e.errors().values()) {
                        assertEquals(preset, "MCPOOL_INVALID_KEY", x.statusName());
                        assertTrue(preset + ": " + x.getMessage(), x.getMessage().contains("longer than 250 bytes"));
                    }
                }
                assertEquals("text", mc.get(p + "s"));
                assertEquals(5L, ((Number) mc.get(p + "i")).longValue());
                assertEquals(Boolean.TRUE, mc.get(p + "b"));
            }
        }
    }

    @Test
    public void setMultiNoreplyStoresEveryItem() throws Exception {
        try (Mcpool mc = client("none", null)) {
            Map<String, byte[]> batch = new LinkedHashMap<>();
            for (int i = 0; i < 50; i++) batch.put("tb-nr-" + i, ("value " + i).getBytes(StandardCharsets.UTF_8));
            batch.put("tb-nr-empty", new byte[0]);
            mc.setMultiNoreply(batch, 0);
            for (Map.Entry<String, byte[]> e : batch.entrySet()) {
                TestServer.RawItem r = server.raw(e.getKey());
                assertNotNull(e.getKey(), r);
                assertEquals(e.getKey(), 0, r.flags);
                assertArrayEquals(e.getKey(), e.getValue(), r.data);
                assertArrayEquals(e.getKey(), e.getValue(), (byte[]) mc.get(e.getKey()));
                assertArrayEquals(e.getKey(), e.getValue(), mc.getBytes(e.getKey()).data);
            }
            // an empty map sends nothing and answers nothing
            mc.setMultiNoreply(new LinkedHashMap<>(), 0);
            // a negative TTL stores the items already expired, as setMulti
            mc.setMultiNoreply(Map.of("tb-nr-0", "gone".getBytes(StandardCharsets.UTF_8)), -1);
            assertNull(mc.get("tb-nr-0"));
        }
    }

    @Test
    public void setMultiNoreplyThrowsTheRefusedKeyAfterStoringTheOthers() throws Exception {
        try (Mcpool mc = client("none", null)) {
            Map<String, byte[]> batch = new LinkedHashMap<>();
            batch.put("tb-nrbad-a", "a".getBytes(StandardCharsets.UTF_8));
            batch.put("bad key", "x".getBytes(StandardCharsets.UTF_8));
            batch.put("tb-nrbad-b", "b".getBytes(StandardCharsets.UTF_8));
            try {
                mc.setMultiNoreply(batch, 0);
                fail();
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_KEY", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("bad key"));
            }
            assertArrayEquals("a".getBytes(StandardCharsets.UTF_8), (byte[]) mc.get("tb-nrbad-a"));
            assertArrayEquals("b".getBytes(StandardCharsets.UTF_8), (byte[]) mc.get("tb-nrbad-b"));
            // a key too long fails the same way
            String tooLong = "tb-nrbad-" + "z".repeat(300);
            Map<String, byte[]> two = new LinkedHashMap<>();
            two.put(tooLong, "x".getBytes(StandardCharsets.UTF_8));
            two.put("tb-nrbad-c", "c".getBytes(StandardCharsets.UTF_8));
            try {
                mc.setMultiNoreply(two, 0);
                fail();
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_KEY", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("longer than 250 bytes"));
            }
            assertArrayEquals("c".getBytes(StandardCharsets.UTF_8), (byte[]) mc.get("tb-nrbad-c"));
            // the caller's own nulls: nothing sent
            Map<String, byte[]> nul = new LinkedHashMap<>();
            nul.put("tb-nrbad-d", "d".getBytes(StandardCharsets.UTF_8));
            nul.put("tb-nrbad-e", null);
            try {
                mc.setMultiNoreply(nul, 0);
                fail();
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
            }
            assertNull(mc.get("tb-nrbad-d"));
            try {
                mc.setMultiNoreply(null, 0);
                fail();
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
            }
        }
    }
}
