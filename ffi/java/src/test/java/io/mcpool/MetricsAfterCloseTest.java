package io.mcpool;

import static org.junit.Assert.*;

import java.util.Map;
import org.junit.Test;

/**
 * A closed client's metrics, Prometheus text and server states still answer, as they were
 * when it closed (tester finding metrics2 6: they threw MCPOOL_CLOSED, where Python, Perl and
 * C answer the final counters, so a shutdown hook could not close the client and then export
 * them). Calls other than those reads still end with MCPOOL_CLOSED.
 */
public class MetricsAfterCloseTest {
    @Test
    public void metricsAnswerAfterClose() throws Exception {
        try (TestServer s = new TestServer()) {
            Mcpool mc = Mcpool.builder().servers(s.addr()).build();
            assertTrue(mc.set("k", "v", 0));
            assertEquals("v", mc.get("k"));
            assertNull(mc.get("missing"));
            long before = mc.metrics().get(s.addr()).get("operations");
            assertEquals(3, before);
            mc.close();
            Map<String, Long> after = mc.metrics().get(s.addr());
            assertNotNull(mc.metrics().toString(), after);
            assertEquals(3L, (long) after.get("operations"));
            assertEquals(1L, (long) after.get("misses"));
            assertTrue(mc.metricsPrometheus(),
                mc.metricsPrometheus().contains("mcpool_operations_total{server=\"" + s.addr() + "\"} 3"));
            assertEquals(1, mc.serverStates().size());
            try {
                mc.get("k");
                fail("a call after close");
            } catch (ClientException e) {
                assertEquals("MCPOOL_CLOSED", e.statusName());
            }
            mc.close(); // again: nothing happens, the metrics stay
            assertEquals(3L, (long) mc.metrics().get(s.addr()).get("operations"));
        }
    }
}
