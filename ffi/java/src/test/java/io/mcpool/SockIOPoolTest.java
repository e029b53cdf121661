package io.mcpool;

import static org.junit.Assert.*;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.function.Consumer;
import org.junit.Test;

/** SockIOPool's setters against the core: each value takes Whalin's meaning where the core
 * has one, and is refused by initialize() (naming the setter or the core's option) where it
 * has none; nothing is clamped or dropped in silence. */
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
}
