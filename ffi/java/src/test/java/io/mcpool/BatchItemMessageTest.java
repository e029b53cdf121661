package io.mcpool;

import static org.junit.Assert.*;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/** Each failed key of a batch write carries the core's message for that key. Under
 * preset("spymemcached") setMulti's "a b" carried kind_flags' refusal of a String (the last
 * call's error), addMulti's "a b" the message of "x y", and under cache-memcached-fast every
 * Integer's error read `set "sp59"` (tester finding batches 2): the binding took the thread's
 * last error once the whole batch had run. Also: a String setMulti under spymemcached writes
 * what a single set writes (tester finding batches 3). */
public class BatchItemMessageTest extends ServerTestBase {
    /** (whalin's preset encodes a key's spaces, so "a b" is a key there) */
    private static final String[] PRESETS = {"spymemcached", "cache-memcached-fast", "pylibmc", "none"};

    private Mcpool client(String preset) {
        Mcpool.Builder b = Mcpool.builder().servers(server.addr());
        if (!preset.equals("none")) b = b.preset(preset);
        return b.build();
    }

    /** e's errors are exactly the keys `bad`, each one's message the core's for that key:
     * it names the key and no other key of the batch. */
    private static void assertOwnMessages(String what, PartialBatchException e, List<String> bad, List<String> all,
                                          String because) {
        assertEquals(what, bad, Arrays.asList(e.errors().keySet().toArray()));
        for (String k : bad) {
            String m = e.errors().get(k).getMessage();
            assertTrue(what + " " + k + ": " + m, m.contains("\"" + k + "\"") && m.contains(because));
            for (String other : all) {
                if (!other.equals(k)) assertFalse(what + " " + k + " names " + other + ": " + m, m.contains("\"" + other + "\""));
            }
            assertFalse(what + " " + k + ": " + m, m.contains("kind_flags"));
        }
        assertSame(e.errors().get(bad.get(0)), e.getCause());
    }

    private static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    @Test
    public void eachBadKeyOfAStoreBatchCarriesItsOwnMessage() {
        for (String preset : PRESETS) {
            try (Mcpool mc = client(preset)) {
                String p = "bim:" + preset + ":";
                // Strings (alone under spymemcached), byte[] (batched everywhere), mixed
                Object[][] valueSets = {{"1", "2", "3"}, {"1".getBytes(), "2".getBytes(), "3".getBytes()},
                    {"1", "2".getBytes(), "3"}, {"1".getBytes(), "2", "3".getBytes()}};
                for (Object[] v : valueSets) {
                    String what = preset + " " + v[1].getClass().getSimpleName();
                    try {
                        mc.setMulti(map(p + "ok1", v[0], "a b", v[1], p + "ok2", v[2]), 0);
                        fail(what);
                    } catch (PartialBatchException e) {
                        assertOwnMessages(what + " setMulti", e, List.of("a b"), List.of(p + "ok1", "a b", p + "ok2"),
                            "invalid key");
                        assertEquals(Map.of(p + "ok1", true, p + "ok2", true), e.answers());
                    }
                    mc.delete(p + "ok1");
                    try {
                        mc.addMulti(map(p + "ok1", v[0], "a b", v[1], "x y", v[2]), 0);
                        fail(what);
                    } catch (PartialBatchException e) {
                        assertOwnMessages(what + " addMulti", e, List.of("a b", "x y"), List.of(p + "ok1", "a b", "x y"),
                            "invalid key");
                        assertEquals(Map.of(p + "ok1", true), e.answers());
                    }
                    try {
                        mc.replaceMulti(map("x y", v[0], p + "ok1", v[1], "a b", v[2]), 0);
                        fail(what);
                    } catch (PartialBatchException e) {
                        assertOwnMessages(what + " replaceMulti", e, List.of("x y", "a b"),
                            List.of(p + "ok1", "a b", "x y"), "invalid key");
                    }
                }
            }
        }
    }

    /** cache-memcached-fast has no integer kind: a single set of an Integer is refused
     * (MCPOOL_UNSUPPORTED, as the README says), and setMulti refuses each one the same way,
     * each with its own key's message, while the other values are stored. */
    @Test
    public void integersUnderAFormatWithoutThemFailEachWithItsOwnMessage() {
        for (String preset : new String[] {"cache-memcached-fast", "cache-memcached", "libmemcached"}) {
            try (Mcpool mc = client(preset)) {
                try {
                    mc.set("bim-int:one", 5, 0);
                    fail(preset);
                } catch (McpoolException e) {
                    assertEquals("MCPOOL_UNSUPPORTED", e.statusName());
                }
                Map<String, Object> m = new LinkedHashMap<>();
                List<String> keys = new java.util.ArrayList<>();
                for (int i = 0; i < 6; i++) {
                    String k = "bim-int:" + preset + ":" + i;
                    keys.add(k);
                    m.put(k, i % 2 == 0 ? (Object) Integer.valueOf(i) : (Object) Long.valueOf(i));
                }
                m.put("bim-int:" + preset + ":bytes", "t".getBytes());
                List<String> all = new java.util.ArrayList<>(m.keySet());
                try {
                    mc.setMulti(m, 0);
                    fail(preset);
                } catch (PartialBatchException e) {
                    assertOwnMessages(preset, e, keys, all, "no int kind");
                    for (String k : keys) assertEquals("MCPOOL_UNSUPPORTED", e.errors().get(k).statusName());
                    assertEquals(Map.of("bim-int:" + preset + ":bytes", true), e.answers());
                }
            }
        }
    }

    @Test
    public void eachBadKeyOfADeleteTouchOrCounterBatchCarriesItsOwnMessage() {
        try (Mcpool mc = client("spymemcached")) {
            List<String> keys = List.of("bim-d:ok", "a b", "x y");
            try {
                mc.deleteMulti(keys);
                fail();
            } catch (PartialBatchException e) {
                assertOwnMessages("deleteMulti", e, List.of("a b", "x y"), keys, "invalid key");
            }
            try {
                mc.touchMulti(keys, 10);
                fail();
            } catch (PartialBatchException e) {
                assertOwnMessages("touchMulti", e, List.of("a b", "x y"), keys, "invalid key");
            }
            try {
                mc.incrMulti(keys, 1);
                fail();
            } catch (PartialBatchException e) {
                assertOwnMessages("incrMulti", e, List.of("a b", "x y"), keys, "invalid key");
            }
        }
    }

    /** Under spymemcached a String is stored as spymemcached writes it (flags 0, its UTF-8
     * bytes; above 16,384 bytes gzip under flag 2), by setMulti exactly as by set: memcached
     * holds the same flags and bytes, small and compressed. */
    @Test
    public void aStringSetMultiWritesWhatASingleSetWrites() throws Exception {
        StringBuilder big = new StringBuilder();
        while (big.length() < 40000) big.append("spymemcached string \u00e9t\u00e9 ").append(big.length()).append(' ');
        String[] values = {"v\u00e9", "", big.toString()};
        try (Mcpool mc = client("spymemcached")) {
            for (int i = 0; i < values.length; i++) {
                String one = "bim-wire:one:" + i, many = "bim-wire:many:" + i;
                assertTrue(mc.set(one, values[i], 0));
                assertEquals(Map.of(many, true, "bim-wire:other", true),
                    mc.setMulti(map(many, values[i], "bim-wire:other", "x".getBytes()), 0));
                TestServer.RawItem a = server.raw(one), b = server.raw(many);
                assertEquals(i < 2 ? 0 : 2, a.flags);
                if (i < 2) assertArrayEquals(values[i].getBytes(StandardCharsets.UTF_8), a.data);
                assertEquals("flags of " + i, a.flags, b.flags);
                assertArrayEquals("bytes of " + i, a.data, b.data);
                assertEquals(values[i], mc.get(many));
            }
        }
    }
}
