package io.mcpool;

import static org.junit.Assert.*;

import java.util.Arrays;
import org.junit.Test;

/** Servers that change at run time: Mcpool.setServers through the core's atomic set_servers. */
public class TopologyTest extends TwoServers {

    @Test
    public void setServersReplacesTheListKeepsKeptServersAndRefusesABadList() {
        try (Mcpool mc = Mcpool.builder().servers(a.addr()).maxConnections(1).build()) {
            assertTrue(mc.set("topo:k", "v"));
            long connectsA = mc.metrics().get(a.addr()).get("connects");
            mc.setServers(new String[] {a.addr(), b.addr()}, new int[] {1, 2});
            assertEquals(Arrays.asList(a.addr(), b.addr()), mc.servers());
            for (int i = 0; i < 40; i++) {
                assertTrue(mc.set("topo:n" + i, "v" + i));
                assertEquals("v" + i, mc.get("topo:n" + i));
            }
            // a was kept: same connections, no new connect for it
            assertEquals(connectsA, (long) mc.metrics().get(a.addr()).get("connects"));
            try {
                mc.setServers(a.addr(), "host:notaport");
                fail("a bad list was accepted");
            } catch (ClientException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("notaport"));
            }
            for (int w : new int[] {0, -1}) {
                try {
                    mc.setServers(new String[] {a.addr()}, new int[] {w});
                    fail("weight " + w + " was accepted");
                } catch (ConfigurationException e) { // naming the entry, as for a.addr() + ":0"
                    assertTrue(e.getMessage(), e.getMessage().contains(a.addr())
                        && e.getMessage().contains("weight must be at least 1"));
                }
            }
            try {
                mc.setServers(new String[] {a.addr()}, new int[] {1, 2});
                fail("two weights for one server were accepted");
            } catch (ClientException e) { // was an IllegalArgumentException
                assertEquals("MCPOOL_CONFIG", e.statusName());
            }
            assertEquals(Arrays.asList(a.addr(), b.addr()), mc.servers());
            mc.setServers(a.addr());
            assertEquals(Arrays.asList(a.addr()), mc.servers());
            assertEquals("v", mc.get("topo:k"));
        }
    }

    /** docs/metrics.md: an address listed twice (a double share) is one server in the
     * reports, its entries' counters summed by the core (the metrics map kept one entry of
     * two and reported 40 of 80 operations). */
    @Test
    public void aRepeatedAddressIsOneServerInMetricsAndStates() {
        try (Mcpool mc = Mcpool.builder().servers(a.addr(), a.addr(), b.addr()).build()) {
            java.util.Map<String, Long> sent = new java.util.HashMap<>();
            for (int i = 0; i < 40; i++) {
                String k = "topo:dup" + i;
                assertTrue(mc.set(k, "v"));
                assertEquals("v", mc.get(k));
                sent.merge(mc.servers().get(mc.serverIndexFor(k)), 2L, Long::sum);
            }
            java.util.Map<String, java.util.Map<String, Long>> m = mc.metrics();
            assertEquals(new java.util.HashSet<>(Arrays.asList(a.addr(), b.addr())), m.keySet());
            long sum = 0;
            for (String s : m.keySet()) {
                assertEquals(s, sent.getOrDefault(s, 0L), m.get(s).get("operations"));
                sum += m.get(s).get("operations");
            }
            assertEquals(80, sum);
            java.util.List<ServerState> states = mc.serverStates();
            assertEquals(2, states.size());
            assertEquals(a.addr(), states.get(0).server());
            assertEquals(b.addr(), states.get(1).server());
        }
    }
}
