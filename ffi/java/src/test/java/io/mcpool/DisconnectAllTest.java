package io.mcpool;

import static org.junit.Assert.*;

import org.junit.Test;

/**
 * {@link Mcpool#disconnectAll()} (the C ABI's mcpool_client_disconnect_all; Python's and
 * Perl's disconnect_all): the connections close, the client stays usable and its next call
 * opens a new one (tester finding java2 6: Java had nothing between using the client and
 * close()).
 */
public class DisconnectAllTest extends ServerTestBase {
    private static long metric(Mcpool mc, String name) {
        return mc.metrics().get(server.addr()).get(name);
    }

    /** memcached's own count of connections it accepted. */
    private static long serverConnections(Mcpool mc) {
        return Long.parseLong(mc.stats(null).get(server.addr()).get("total_connections"));
    }

    @Test
    public void theNextCallOpensANewConnection() {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).build()) {
            assertTrue(mc.set("dc:k", "v", 0));
            assertEquals(1, metric(mc, "connects"));
            assertEquals(1, metric(mc, "pool_open"));
            long accepted = serverConnections(mc);
            long operations = metric(mc, "operations");

            mc.disconnectAll();
            assertEquals("the idle connection closed at once", 0, metric(mc, "pool_open"));
            assertEquals("v", mc.get("dc:k"));
            assertEquals("a new connection for the next call", 2, metric(mc, "connects"));
            assertEquals(1, metric(mc, "pool_open"));
            assertEquals("memcached saw one more connection", accepted + 1, serverConnections(mc));
            assertTrue("metrics kept", metric(mc, "operations") > operations);
            assertTrue(mc.serverStates().get(0).alive());
            assertEquals(java.util.Arrays.asList(server.addr()), mc.servers());

            mc.disconnectAll();
            mc.disconnectAll(); // again with nothing open: nothing to do
            assertEquals(0, metric(mc, "pool_open"));
            assertEquals("v", mc.get("dc:k"));
            assertEquals(3, metric(mc, "connects"));
        }
    }

    /** minIdle's connections are not opened again until calls need them (the core's
     * min_idle: "not opened again after disconnect_all"). */
    @Test
    public void minIdleConnectionsAreNotReopenedByItself() throws Exception {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).minIdle(2).build()) {
            long until = System.nanoTime() + 5_000_000_000L;
            while (metric(mc, "pool_open") < 2 && System.nanoTime() < until) Thread.sleep(5);
            assertEquals(2, metric(mc, "pool_open"));
            mc.disconnectAll();
            Thread.sleep(300);
            assertEquals(0, metric(mc, "pool_open"));
            assertNull(mc.get("dc:none"));
            assertEquals(1, metric(mc, "pool_open"));
        }
    }

    /** A connection in use when disconnectAll is called is closed when its call gives it
     * back; the call itself is not disturbed. */
    @Test
    public void aConnectionInUseClosesWhenItsCallEnds() throws Exception {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).ioTimeoutMillis(5000).build()) {
            assertTrue(mc.set("dc:busy", "v", 0));
            java.util.concurrent.CountDownLatch inCall = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.atomic.AtomicReference<Object> got = new java.util.concurrent.atomic.AtomicReference<>();
            server.signal("STOP"); // the call below waits for its answer on its connection
            Thread t = new Thread(() -> {
                inCall.countDown();
                got.set(mc.get("dc:busy"));
            });
            try {
                t.start();
                inCall.await();
                Thread.sleep(200);
                mc.disconnectAll();
                assertEquals("in use, not yet closed", 1, metric(mc, "pool_open"));
            } finally {
                server.signal("CONT");
            }
            t.join(10_000);
            assertEquals("v", got.get());
            assertEquals(0, metric(mc, "pool_open"));
            assertEquals(1, metric(mc, "connects"));
            assertEquals("v", mc.get("dc:busy"));
            assertEquals(2, metric(mc, "connects"));
        }
    }

    @Test
    public void aClosedClientRefusesIt() {
        Mcpool mc = Mcpool.builder().servers(server.addr()).build();
        mc.close();
        try {
            mc.disconnectAll();
            fail("disconnectAll on a closed client");
        } catch (ClientException e) {
            assertEquals(108, e.status());
            assertEquals("MCPOOL_CLOSED", e.statusName());
        }
    }
}
