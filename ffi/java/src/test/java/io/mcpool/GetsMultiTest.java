package io.mcpool;

import static org.junit.Assert.*;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/** getsMulti and gatsMulti (tester finding cas 4): the multi-key reads with CAS that Rust, C,
 * Python and Perl had, so that feeding N keys to casMulti took N gets round trips. Each item
 * is what gets (gats) reads, in one round trip per server; misses and failures as getMulti.
 * Two private memcached servers, every protocol. */
public class GetsMultiTest extends TwoServers {
    static final String[] PROTOCOLS = {"text", "meta", "binary"};

    private static Mcpool client(String protocol) {
        return Mcpool.builder().servers(a.addr(), b.addr()).protocol(protocol).build();
    }

    /** Keys named prefix + i until each server holds at least `each` of them. */
    private static List<String> onBothServers(Mcpool mc, String prefix, int each) {
        List<String> keys = new ArrayList<>();
        int[] per = new int[2];
        for (int i = 0; i < 200 && (per[0] < each || per[1] < each); i++) {
            String k = prefix + i;
            keys.add(k);
            per[mc.serverIndexFor(k)]++;
        }
        assertTrue(Arrays.toString(per), per[0] >= each && per[1] >= each);
        return keys;
    }

    /** Each server's request/reply exchanges so far (docs/metrics.md: a multi-key call counts
     * once per server it touches). */
    private static long[] operations(Mcpool mc) {
        Map<String, Map<String, Long>> m = mc.metrics();
        return new long[] {m.get(a.addr()).get("operations"), m.get(b.addr()).get("operations")};
    }

    @Test
    public void getsMultiReadsWhatGetsReadsAndItsCasUniquesFeedCasMulti() {
        char[] big = new char[9000]; // above the JNI's 4096-byte arena: its own byte[] path
        Arrays.fill(big, 'x');
        for (String p : PROTOCOLS) {
            try (Mcpool mc = client(p)) {
                List<String> keys = onBothServers(mc, "gm:" + p + ":", 2);
                Object[] values = {"text", 42, new byte[] {1, 2, 3}, new String(big), 7L, ""};
                for (int i = 0; i < keys.size(); i++) assertTrue(mc.set(keys.get(i), values[i % values.length], 0));
                String miss = "gm:" + p + ":miss";
                List<String> asked = new ArrayList<>(keys);
                asked.add(1, miss);
                asked.add(keys.get(0)); // a key given twice: one entry

                Map<String, MemcachedItem> got = mc.getsMulti(asked);
                assertEquals(p, keys, new ArrayList<>(got.keySet())); // key order, the miss absent
                for (String k : keys) {
                    MemcachedItem one = mc.gets(k);
                    assertEquals(p + " " + k, one, got.get(k)); // same value (decoded alike), same CAS
                    assertTrue(p, got.get(k).getCasUnique() != 0);
                }
                assertEquals(p, mc.getMulti(keys).keySet(), got.keySet());
                assertEquals(p, got, mc.getsMulti(asked.toArray(new String[0]))); // the varargs form

                // The CAS uniques read are the ones casMulti takes; used again they are stale.
                Map<String, MemcachedItem> updates = new LinkedHashMap<>();
                for (String k : keys) updates.put(k, new MemcachedItem("new:" + k, got.get(k).getCasUnique()));
                for (Boolean stored : mc.casMulti(updates, 0).values()) assertTrue(p, stored);
                for (String k : keys) assertEquals(p, "new:" + k, mc.get(k));
                Map<String, MemcachedItem> stale = new LinkedHashMap<>();
                for (String k : keys) stale.put(k, new MemcachedItem("stale:" + k, got.get(k).getCasUnique()));
                for (Boolean stored : mc.casMulti(stale, 0).values()) assertFalse(p, stored);
                for (CasResult r : mc.casMultiResults(stale, 0).values()) assertEquals(p, CasResult.EXISTS, r);
                for (String k : keys) assertEquals(p, "new:" + k, mc.get(k));
                Map<String, MemcachedItem> again = mc.getsMulti(keys);
                for (String k : keys) assertNotEquals(p, got.get(k).getCasUnique(), again.get(k).getCasUnique());

                assertTrue(p, mc.getsMulti(Arrays.asList(miss)).isEmpty());
                assertTrue(p, mc.getsMulti(Collections.emptyList()).isEmpty());
                assertTrue(p, mc.gatsMulti(10, Collections.emptyList()).isEmpty());
            }
        }
    }

    @Test
    public void oneRoundTripPerServer() {
        for (String p : PROTOCOLS) {
            try (Mcpool mc = client(p)) {
                List<String> keys = onBothServers(mc, "gm:rt:" + p + ":", 3);
                for (String k : keys) assertTrue(mc.set(k, "v", 0));
                long[] before = operations(mc);
                assertEquals(p, keys.size(), mc.getsMulti(keys).size());
                long[] after = operations(mc);
                assertEquals(p, before[0] + 1, after[0]);
                assertEquals(p, before[1] + 1, after[1]);
                assertEquals(p, keys.size(), mc.gatsMulti(100, keys).size());
                long[] touched = operations(mc);
                assertEquals(p, after[0] + 1, touched[0]);
                assertEquals(p, after[1] + 1, touched[1]);
            }
        }
    }

    @Test
    public void gatsMultiSetsTheExpiryAndReadsWhatGatsReads() {
        try (Mcpool meta = Mcpool.builder().servers(a.addr(), b.addr()).protocol("meta").build()) {
            for (String p : PROTOCOLS) {
                try (Mcpool mc = client(p)) {
                    List<String> keys = onBothServers(mc, "gts:" + p + ":", 2);
                    for (String k : keys) assertTrue(mc.set(k, k.length(), 0));
                    String miss = "gts:" + p + ":miss";
                    List<String> asked = new ArrayList<>(keys);
                    asked.add(0, miss);
                    Map<String, MemcachedItem> got = mc.gatsMulti(3000, asked);
                    assertEquals(p, keys, new ArrayList<>(got.keySet()));
                    for (String k : keys) {
                        long left = meta.metaInfo(k).ttlSeconds();
                        assertTrue(p + " TTL " + left, left > 2990 && left <= 3000);
                        assertEquals(p + " " + k, mc.gets(k), got.get(k)); // the value and CAS gets reads
                    }
                    assertNull(p, meta.metaInfo(miss));
                    Map<String, MemcachedItem> never = mc.gatsMulti(0, keys.toArray(new String[0]));
                    for (String k : keys) {
                        assertEquals(p, -1, meta.metaInfo(k).ttlSeconds()); // 0: never expires, as touch
                        assertEquals(p, got.get(k).getCasUnique(), never.get(k).getCasUnique());
                    }
                    assertEquals(p, Collections.singletonMap(keys.get(0), got.get(keys.get(0))),
                        mc.gatsMulti(-1, keys.get(0), miss)); // negative: expired at once, as touch
                    assertNull(p, mc.get(keys.get(0)));
                    // its CAS works for casMulti
                    String k = keys.get(1);
                    assertTrue(p, mc.casMulti(Collections.singletonMap(k, new MemcachedItem("v2", got.get(k).getCasUnique())), 0).get(k));
                }
            }
        }
    }

    /** A key no server takes: the same ClientException getMulti throws, naming the call and
     * the key; a null key or collection refused before anything is sent. */
    @Test
    public void aBadKeyIsThrownAsGetMultiThrowsIt() {
        char[] longKey = new char[251];
        Arrays.fill(longKey, 'k');
        try (Mcpool mc = client("text")) {
            for (String bad : new String[] {"gm:a b", new String(longKey), "gm:\ud800"}) {
                ClientException viaGet = refused(() -> mc.getMulti("gm:ok", bad));
                ClientException viaGets = refused(() -> mc.getsMulti("gm:ok", bad));
                ClientException viaGats = refused(() -> mc.gatsMulti(10, "gm:ok", bad));
                for (ClientException e : new ClientException[] {viaGets, viaGats}) {
                    assertEquals(viaGet.statusName(), e.statusName());
                    assertEquals(viaGet.getClass(), e.getClass());
                }
                if (bad.equals("gm:a b")) {
                    // the key named once (tester finding keys2 5)
                    assertTrue(viaGets.getMessage(), viaGets.getMessage().contains("gets_multi: invalid key \"" + bad + "\": "));
                    assertTrue(viaGats.getMessage(), viaGats.getMessage().contains("gats_multi: invalid key \"" + bad + "\": "));
                }
            }
            assertEquals("MCPOOL_INVALID_ARGUMENT", refused(() -> mc.getsMulti((java.util.Collection<String>) null)).statusName());
            assertEquals("MCPOOL_INVALID_ARGUMENT", refused(() -> mc.getsMulti((String[]) null)).statusName());
            assertEquals("MCPOOL_INVALID_ARGUMENT", refused(() -> mc.getsMulti("a", null)).statusName());
            assertEquals("MCPOOL_INVALID_ARGUMENT", refused(() -> mc.gatsMulti(1, (java.util.Collection<String>) null)).statusName());
            assertEquals("MCPOOL_INVALID_ARGUMENT", refused(() -> mc.gatsMulti(1, "a", null)).statusName());
            assertEquals(0, mc.nc.inFlight());
        }
    }

    private static ClientException refused(Runnable r) {
        try {
            r.run();
        } catch (ClientException e) {
            return e;
        }
        fail("accepted");
        return null;
    }

    private static String free() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return "127.0.0.1:" + s.getLocalPort();
        }
    }

    /** One server down: as getMulti, every key is tried and a PartialResultException carries
     * the live server's items (with their CAS) and each down key's own ConnectionException. */
    @Test
    public void aDownServersKeysFailAsInGetMulti() throws Exception {
        String dead = free();
        try (Mcpool mc = Mcpool.builder().servers(a.addr(), dead).connectTimeoutMillis(500).minIdle(0).build()) {
            List<String> onLive = new ArrayList<>(), onDead = new ArrayList<>();
            for (int i = 0; i < 60 && (onLive.size() < 3 || onDead.size() < 3); i++) {
                String k = "gm:down:" + i;
                (mc.serverIndexFor(k) == 0 ? onLive : onDead).add(k);
            }
            for (String k : onLive) assertTrue(mc.set(k, "v-" + k, 0));
            List<String> all = new ArrayList<>(onDead);
            all.addAll(onLive);
            for (int call = 0; call < 2; call++) {
                try {
                    if (call == 0) mc.getsMulti(all);
                    else mc.gatsMulti(100, all);
                    fail("a down server's keys failed");
                } catch (PartialResultException e) {
                    assertFalse(e instanceof UnreadableValuesException);
                    assertEquals(onLive, new ArrayList<>(e.hits().keySet()));
                    for (String k : onLive) {
                        MemcachedItem it = (MemcachedItem) e.hits().get(k);
                        assertEquals("v-" + k, it.getValue());
                        assertEquals(mc.gets(k).getCasUnique(), it.getCasUnique());
                    }
                    assertEquals(onDead, new ArrayList<>(e.errors().keySet()));
                    for (String k : onDead) {
                        McpoolException each = e.errors().get(k);
                        assertTrue(k + ": " + each, each instanceof ConnectionException);
                        assertTrue(each.getMessage(), each.getMessage().contains("\"" + k + "\""));
                    }
                }
            }
        }
    }
}
