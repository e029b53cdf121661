package io.mcpool;

import static org.junit.Assert.*;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.Test;

/** SockIOPool's setters against the core: each value takes Whalin's meaning where the core
 * has one, and is refused by initialize() (naming the setter or the core's option) where it
 * has none; nothing is clamped or dropped in silence. A setter keeps any value until
 * initialize() (tester finding configwords 4: setHashingAlg(9) threw at the call), and is
 * refused on an initialized pool, whose getters report the settings in force; shutDown()
 * then initialize() takes new ones. */
public class SockIOPoolTest extends ServerTestBase {
    static int pools;

    static SockIOPool pool(String addr, Consumer<SockIOPool> setup) {
        SockIOPool p = SockIOPool.getInstance("sockiopool-test-" + pools++);
        p.setServers(new String[] {addr});
        setup.accept(p);
        return p;
    }

    /** initialize() refuses the setting with a ConfigurationException whose message names
     * each of words; the pool stays uninitialized. */
    static void refused(Consumer<SockIOPool> setup, String... words) {
        SockIOPool p = pool(server.addr(), setup);
        try {
            p.initialize();
            p.shutDown();
            fail("initialized without a word; expected a refusal naming " + String.join(", ", words));
        } catch (ConfigurationException e) {
            assertEquals("MCPOOL_CONFIG", e.statusName());
            for (String w : words) assertTrue(e.getMessage(), e.getMessage().contains(w));
            assertFalse(p.isInitialized());
        }
    }

    @Test
    public void countsOutsideTheCoresRangeAreRefusedNotClamped() {
        refused(p -> p.setMaxConn(0), "max_size", "0");
        refused(p -> p.setMaxConn(-3), "max_size", "-3");
        refused(p -> { p.setMaxConn(10); p.setInitConn(50); }, "min_idle", "50", "max_size", "10");
        refused(p -> { p.setMaxConn(10); p.setMinConn(11); }, "min_idle", "11");
        refused(p -> p.setInitConn(-1), "setInitConn(-1)");
        refused(p -> { p.setInitConn(0); p.setMinConn(-2); }, "setMinConn(-2)");
    }

    /** A libmemcached string on a SockIOPool is refused naming setOption, never a preset
     * "whalin" the caller did not write (retest38 note); an empty or blank one is no string. */
    @Test
    public void aLibmemcachedConfigIsRefusedNamingSetOption() {
        refused(p -> p.setOption("libmemcached_config", "--DISTRIBUTION=consistent"),
            "setOption(\"libmemcached_config\"", "Mcpool.builder()");
        refused(p -> p.setOption("LIBMEMCACHED-CONFIG", " --HASH=md5 "), "setOption(\"LIBMEMCACHED-CONFIG\"");
        refused(p -> p.setOption(" libmemcached_config ", "--HASH=md5"), "setOption(\" libmemcached_config \"");
        // (the name read by the core's rule: a no-break space around it is trimmed there, so
        // here: tester finding retest40 5)
        refused(p -> p.setOption("\u00a0libmemcached_config", "--HASH=md5"),
            "setOption(\"\u00a0libmemcached_config\"");
        // (an em space is no blank to the core beside a preset: refused there as here)
        refused(p -> p.setOption("libmemcached_config", "\u2003"), "setOption(\"libmemcached_config\"");
        for (String none : new String[] {"", " "}) {
            SockIOPool p = pool(server.addr(), q -> q.setOption("libmemcached_config", none));
            p.initialize();
            assertTrue(p.isInitialized());
            p.shutDown();
        }
    }

    @Test
    public void zeroTimesWithoutACounterpartAreRefused() {
        refused(p -> p.setMaxIdle(0), "setMaxIdle(0)", "idle_timeout");
        refused(p -> p.setMaxIdle(-5), "setMaxIdle(-5)");
        refused(p -> p.setMaxBusyTime(0), "setMaxBusyTime(0)");
        refused(p -> { p.setSocketTO(0); p.setMaxBusyTime(0); }, "setMaxBusyTime(0)");
        refused(p -> p.setSocketTO(-1), "setSocketTO(-1)");
        refused(p -> p.setSocketConnectTO(0), "setSocketConnectTO(0)");
        refused(p -> p.setSocketConnectTO(-1), "setSocketConnectTO(-1)");
    }

    @Test
    public void valuesTheCoreHasAreForwardedAsGiven() {
        SockIOPool p = pool(server.addr(), q -> {
            q.setMaxConn(3);
            q.setInitConn(2);
            q.setMinConn(3);
            q.setMaxIdle(1234);
            q.setSocketTO(700);
            q.setMaxBusyTime(5000);
            q.setSocketConnectTO(900);
        });
        Config c = p.config(true);
        assertEquals("3", c.options.get("max_size"));
        assertEquals("3", c.options.get("min_idle"));
        assertEquals("1234ms", c.options.get("idle_timeout"));
        assertEquals("700ms", c.options.get("io_timeout"));
        assertEquals("900ms", c.options.get("connect_timeout"));
        p.setMaxBusyTime(400); // the cap of each read and write
        assertEquals("400ms", p.config(true).options.get("io_timeout"));
        p.initialize();
        try {
            MemCachedClient mc = new MemCachedClient(p.getName());
            assertTrue(mc.set("sockiopool:k", "v"));
            assertEquals("v", mc.get("sockiopool:k"));
        } finally {
            p.shutDown();
        }
    }

    /** setSocketTO(0) is Whalin's "no read timeout", where its maintenance thread still
     * closes a socket busy for longer than maxBusyTime: a get from a server that never
     * answers ends after maxBusyTime (Whalin's null), not after the preset's 30 s. */
    @Test
    public void socketTimeoutZeroIsBoundedByMaxBusyTime() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            String addr = "127.0.0.1:" + silent.getLocalPort();
            SockIOPool p = pool(addr, q -> {
                q.setSocketTO(0);
                q.setMaxBusyTime(400);
                q.setInitConn(0);
                q.setMinConn(0);
            });
            assertEquals("400ms", p.config(true).options.get("io_timeout"));
            p.initialize();
            try {
                MemCachedClient mc = new MemCachedClient(p.getName());
                long t0 = System.nanoTime();
                assertNull(mc.get("sockiopool:silent"));
                long ms = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(ms + " ms", ms >= 350 && ms < 5000);
            } finally {
                p.shutDown();
            }
        }
    }

    /** A hashing algorithm that is none of the four is kept by the setter (its getter says
     * so) and refused by initialize(), naming setHashingAlg and the number, as every other
     * value the core has no form for; before, setHashingAlg(9) threw
     * MCPOOL_INVALID_ARGUMENT at the call. */
    @Test
    public void anUnknownHashingAlgorithmIsRefusedByInitialize() {
        for (int alg : new int[] {9, 4, -1, Integer.MIN_VALUE}) {
            refused(p -> {
                p.setHashingAlg(alg);
                assertEquals(alg, p.getHashingAlg());
            }, "setHashingAlg(" + alg + ")", "unknown hashing algorithm");
        }
        SockIOPool p = pool(server.addr(), q -> q.setHashingAlg(9));
        try {
            p.initialize();
            fail("initialized with hashing algorithm 9");
        } catch (ConfigurationException e) {
            assertEquals("MCPOOL_CONFIG", e.statusName());
        }
        assertFalse(p.isInitialized());
        assertEquals(0, p.nativeClients());
        try {
            new MemCachedClient(p.getName()).get("k");
            fail("a client of the uninitialized pool answered");
        } catch (ConfigurationException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("is not initialized"));
        }
        p.setHashingAlg(SockIOPool.CONSISTENT_HASH); // still settable: it never initialized
        p.initialize();
        try {
            MemCachedClient mc = new MemCachedClient(p.getName());
            assertTrue(mc.set("sockiopool:alg", "v"));
            assertEquals("v", mc.get("sockiopool:alg"));
        } finally {
            p.shutDown();
        }
    }

    /** The one rule for every setter: none throws for a value (only a null name or value,
     * which the class documents apart); initialize() refuses each bad one with a
     * ConfigurationException naming the setter or the core's option and the value. */
    @Test
    public void everySettersBadValueIsRefusedByInitializeNotTheSetter() {
        refused(p -> p.setServers(new String[0]), "no servers");
        refused(p -> p.setServers(null), "no servers");
        refused(p -> p.setServers(new String[] {"127.0.0.1:1", null}), "server 1 is null");
        refused(p -> p.setWeights(new Integer[] {1, 2}), "2 weights for 1 servers");
        refused(p -> p.setWeights(new Integer[] {0}), "weight 0");
        refused(p -> p.setHashingAlg(9), "setHashingAlg(9)");
        refused(p -> p.setProtocol("bianry"), "protocol", "bianry");
        refused(p -> p.setValueFormat("whalinn"), "value_format", "whalinn");
        refused(p -> p.setOption("io_timout", "1s"), "io_timout");
        refused(p -> p.setOption("io_timeout", "soon"), "io_timeout", "soon");
        refused(p -> p.setMaxConn(0), "max_size", "0");
        refused(p -> p.setInitConn(-1), "setInitConn(-1)");
        refused(p -> p.setMinConn(-1), "setMinConn(-1)");
        refused(p -> p.setMaxIdle(0), "setMaxIdle(0)");
        refused(p -> p.setMaxBusyTime(-1), "setMaxBusyTime(-1)");
        refused(p -> p.setSocketTO(-1), "setSocketTO(-1)");
        refused(p -> p.setSocketConnectTO(0), "setSocketConnectTO(0)");
        // null arguments: refused at the call, as documented apart (MCPOOL_INVALID_ARGUMENT)
        SockIOPool p = pool(server.addr(), q -> { });
        for (Runnable call : new Runnable[] {() -> p.setValueFormat(null), () -> p.setOption(null, "1s"),
                                             () -> p.setOption("io_timeout", null)}) {
            try {
                call.run();
                fail("a null argument was taken");
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("is null"));
            }
        }
    }

    /** Every setter, with a value initialize() would take. */
    static Map<String, Consumer<SockIOPool>> everySetter(String... servers) {
        Map<String, Consumer<SockIOPool>> m = new LinkedHashMap<>();
        m.put("setServers", p -> p.setServers(servers));
        m.put("setWeights", p -> p.setWeights(new Integer[servers.length]));
        m.put("setInitConn", p -> p.setInitConn(2));
        m.put("setMinConn", p -> p.setMinConn(2));
        m.put("setMaxConn", p -> p.setMaxConn(5));
        m.put("setMaxIdle", p -> p.setMaxIdle(12_000));
        m.put("setMaxBusyTime", p -> p.setMaxBusyTime(6_000));
        m.put("setMaintSleep", p -> p.setMaintSleep(1_000));
        m.put("setSocketTO", p -> p.setSocketTO(2_000));
        m.put("setSocketConnectTO", p -> p.setSocketConnectTO(1_500));
        m.put("setNagle", p -> p.setNagle(true));
        m.put("setFailover", p -> p.setFailover(false));
        m.put("setFailback", p -> p.setFailback(false));
        m.put("setAliveCheck", p -> p.setAliveCheck(true));
        m.put("setHashingAlg", p -> p.setHashingAlg(SockIOPool.CONSISTENT_HASH));
        m.put("setProtocol", p -> p.setProtocol("meta"));
        m.put("setValueFormat", p -> p.setValueFormat("mcpool"));
        m.put("setOption", p -> p.setOption("operation_timeout", "3s"));
        return m;
    }

    /** What every getter reports. */
    static List<Object> getters(SockIOPool p) {
        return Arrays.asList(Arrays.asList(p.getServers()), p.getWeights() == null ? null : Arrays.asList(p.getWeights()),
            p.getInitConn(), p.getMinConn(), p.getMaxConn(), p.getMaxIdle(), p.getMaxBusyTime(), p.getMaintSleep(),
            p.getSocketTO(), p.getSocketConnectTO(), p.getNagle(), p.getFailover(), p.getFailback(),
            p.getAliveCheck(), p.getHashingAlg(), p.getValueFormat());
    }

    /** Which of the two servers (0: server, 1: other) holds each key, read from memcached. */
    static List<Integer> holders(TestServer other, List<String> keys) throws Exception {
        List<Integer> at = new ArrayList<>();
        for (String k : keys) {
            boolean onServer = server.raw(k) != null, onOther = other.raw(k) != null;
            assertTrue(k + " is on exactly one server", onServer != onOther);
            at.add(onServer ? 0 : 1);
        }
        return at;
    }

    /** Where the core's distribution places each key among (server, other). */
    static List<Integer> placement(String distribution, TestServer other, List<String> keys) {
        try (Mcpool ref = Mcpool.builder().servers(server.addr(), other.addr()).preset("whalin")
                 .distribution(distribution).build()) {
            List<Integer> at = new ArrayList<>();
            for (String k : keys) at.add(ref.serverIndexFor(k));
            return at;
        }
    }

    static List<String> keys(String prefix) {
        List<String> k = new ArrayList<>();
        for (int i = 0; i < 40; i++) k.add(prefix + i); // no ':', which the Whalin layer URL-encodes
        return k;
    }

    /** Tester finding configwords 4: a setter after initialize() was taken and its getter
     * reported it while the running pool kept its placement. Now each setter of an
     * initialized pool is refused at the call and changes nothing (the getters report the
     * settings in force, the keys stay where they were); after shutDown() the setters take
     * values again and initialize() puts them in force, for a MemCachedClient made before. */
    @Test
    public void aSetterOfAnInitializedPoolIsRefusedUntilShutDown() throws Exception {
        try (TestServer other = new TestServer()) {
            String[] both = {server.addr(), other.addr()};
            SockIOPool p = pool(server.addr(), q -> {
                q.setServers(both);
                q.setHashingAlg(SockIOPool.NATIVE_HASH);
            });
            p.initialize();
            MemCachedClient mc = new MemCachedClient(p.getName());
            try {
                List<Object> inForce = getters(p);
                for (Map.Entry<String, Consumer<SockIOPool>> e : everySetter(both).entrySet()) {
                    try {
                        e.getValue().accept(p);
                        fail(e.getKey() + " was taken by the initialized pool");
                    } catch (ConfigurationException x) {
                        assertEquals("MCPOOL_CONFIG", x.statusName());
                        assertEquals(e.getKey(), "MCPOOL_CONFIG: SockIOPool " + p.getName() + " is initialized: its "
                            + "settings apply at initialize(); shutDown() it first", x.getMessage());
                    }
                    assertEquals(e.getKey() + " changed a getter", inForce, getters(p));
                    assertTrue(p.isInitialized());
                }
                assertEquals(SockIOPool.NATIVE_HASH, p.getHashingAlg());
                List<String> before = keys("nat");
                for (String k : before) assertTrue(mc.set(k, k));
                assertEquals(placement("whalin-native", other, before), holders(other, before));
            } finally {
                p.shutDown();
            }
            // shut down: no native client is built again behind the pool's back
            try {
                mc.get("nat0");
                fail("a client of a shut down pool answered");
            } catch (ConfigurationException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("is not initialized"));
            }
            assertEquals(0, p.nativeClients());
            for (Consumer<SockIOPool> set : everySetter(both).values()) set.accept(p);
            assertEquals(SockIOPool.CONSISTENT_HASH, p.getHashingAlg());
            assertFalse(p.isInitialized());
            p.initialize();
            try {
                assertEquals(SockIOPool.CONSISTENT_HASH, p.getHashingAlg());
                assertEquals("mcpool", p.getValueFormat());
                List<String> after = keys("con");
                List<Integer> consistent = placement("whalin-consistent", other, after);
                assertNotEquals("the test's keys tell the two placements apart",
                    placement("whalin-native", other, after), consistent);
                for (String k : after) assertTrue(mc.set(k, k)); // the same MemCachedClient
                assertEquals(consistent, holders(other, after));
                assertEquals("con7", mc.get("con7"));
                assertEquals(Long.valueOf(42), (Long) setAndGet(mc, "num", 42)); // the mcpool format: an integer is a Long
                assertEquals(1, p.nativeClients());
            } finally {
                p.shutDown();
            }
        }
    }

    static Object setAndGet(MemCachedClient mc, String key, Object value) {
        assertTrue(mc.set(key, value));
        return mc.get(key);
    }
}
