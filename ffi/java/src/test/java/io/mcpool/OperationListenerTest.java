package io.mcpool;

import static org.junit.Assert.*;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * The per-operation listener (docs/tracing.md) and fail_open, against a real memcached, a
 * closed loopback port and a killed server: the records' fields, a listener that throws
 * (swallowed and counted, the JVM unharmed), and an outage answered as misses.
 */
public class OperationListenerTest extends ServerTestBase {

    static String key(String k) {
        return "olt-" + ProcessHandle.current().pid() + "-" + System.nanoTime() + "-" + k;
    }

    @Test
    public void recordsCarryTheirFields() {
        List<OperationRecord> recs = Collections.synchronizedList(new ArrayList<>());
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).onOperation(recs::add).build()) {
            String k = key("k");
            assertTrue(mc.set(k, "hello"));
            assertEquals("hello", mc.get(k));
            assertNull(mc.get(k + "-none"));
            Map<String, Object> m = mc.getMulti(k, k + "-none");
            assertEquals(1, m.size());
            assertEquals(4, recs.size());
            OperationRecord set = recs.get(0);
            assertEquals("set", set.op());
            assertEquals("stored", set.outcome());
            assertEquals(server.addr(), set.server());
            assertEquals("127.0.0.1", set.host());
            assertEquals(server.port, set.port());
            assertEquals("text", set.protocol());
            assertEquals(1, set.keys());
            assertTrue(set.bytesSent() > k.length());
            assertTrue(set.bytesReceived() >= 8);
            assertTrue(set.durationNanos() > 0);
            assertNull(set.error());
            assertNull(set.errorClass());
            assertEquals("hit", recs.get(1).outcome());
            assertEquals("miss", recs.get(2).outcome());
            assertEquals("get_multi", recs.get(3).op());
            assertEquals(2, recs.get(3).keys());
            assertEquals(1, recs.get(3).hits());
            assertEquals(0, mc.operationListenerErrors());
        }
    }

    @Test
    public void aThrowingListenerIsCountedNotPropagated() {
        try (Mcpool mc = Mcpool.builder().servers(server.addr())
                .onOperation(r -> { throw new IllegalStateException("listener failed"); }).build()) {
            String k = key("t");
            for (int i = 0; i < 5; i++) assertTrue(mc.set(k, "v"));
            assertEquals("v", mc.get(k));
            assertEquals(6, mc.operationListenerErrors());
        }
    }

    @Test
    public void listenersRunOnEveryCallingThread() throws Exception {
        List<OperationRecord> recs = Collections.synchronizedList(new ArrayList<>());
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).onOperation(recs::add).build()) {
            Thread[] ts = new Thread[4];
            for (int t = 0; t < ts.length; t++) {
                final int id = t;
                ts[t] = new Thread(() -> {
                    for (int i = 0; i < 25; i++) mc.set(key("th" + id + "-" + i), "v");
                });
                ts[t].start();
            }
            for (Thread t : ts) t.join(30_000);
            assertEquals(100, recs.size());
            for (OperationRecord r : recs) assertEquals("stored", r.outcome());
        }
    }

    @Test
    public void failOpenAnswersMissesAndReportsThem() throws Exception {
        String addr = "127.0.0.1:" + FailureSemanticsTest.closedPort();
        List<OperationRecord> recs = Collections.synchronizedList(new ArrayList<>());
        try (Mcpool mc = Mcpool.builder().servers(addr).minIdle(0).failOpen(true)
                .onOperation(recs::add).build()) {
            assertNull(mc.get("k"));
            assertFalse(mc.set("k", "v"));
            assertFalse(mc.delete("k"));
            assertFalse(mc.incr("k", 1).isPresent());
            assertTrue(mc.getMulti("a", "b").isEmpty());
            assertFalse(mc.setCounter("k", 5, 0)); // not stored, as set: never an exception
            Map<String, Long> m = mc.metrics().get(addr);
            assertEquals(Long.valueOf(3), m.get("fail_open_misses"));
            // The same in the Prometheus text format (tester finding observe 5).
            String text = mc.metricsPrometheus();
            assertTrue(text, text.contains("mcpool_fail_open_misses_total{server=\"" + addr + "\"} 3\n"));
            assertEquals(Long.valueOf(4), m.get("fail_open_not_stored"));
            assertEquals(6, recs.size());
            for (OperationRecord r : recs) {
                assertEquals("failed_open", r.outcome());
                assertTrue(r.errorClass(), r.errorClass().equals("CONNECTION") || r.errorClass().equals("TIMEOUT"));
                assertEquals(addr, r.server());
                assertNotNull(r.error());
            }
        }
        // Without fail_open, the same outage throws.
        try (Mcpool mc = Mcpool.builder().servers(addr).minIdle(0).build()) {
            try {
                mc.get("k");
                fail("expected a ConnectionException");
            } catch (ConnectionException expected) {
                // the strict API
            }
        }
    }

    @Test
    public void failOpenUnderAKilledServer() throws Exception {
        TestServer s = new TestServer();
        try (Mcpool mc = Mcpool.builder().servers(s.addr()).failOpen(true).ioTimeoutMillis(300)
                .connectTimeoutMillis(300).build()) {
            String k = key("kill");
            assertTrue(mc.set(k, "v"));
            s.close();
            for (int i = 0; i < 3; i++) {
                assertNull(mc.get(k));
                assertFalse(mc.set(k, "w"));
            }
            Map<String, Long> m = mc.metrics().get(s.addr());
            assertEquals(Long.valueOf(3), m.get("fail_open_misses"));
            assertEquals(Long.valueOf(3), m.get("fail_open_not_stored"));
        }
    }
}
