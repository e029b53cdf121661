package io.mcpool;

import static org.junit.Assert.*;

import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * Whalin's failure answers in MemCachedClient (null / false / -1 when the server is down,
 * counted in the metrics), the strict exceptions of io.mcpool.Mcpool, server states and
 * events: against a closed loopback port and a real memcached that is killed.
 */
public class FailureSemanticsTest {
    /** A loopback port nothing listens on (bound, then closed). */
    static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    static SockIOPool pool(String name, String... servers) {
        SockIOPool p = SockIOPool.getInstance(name);
        p.setServers(servers);
        p.setFailover(false);
        p.setSocketConnectTO(500);
        p.setSocketTO(1000);
        p.setInitConn(0);
        p.setMinConn(0);
        p.initialize();
        return p;
    }

    static long suppressed(Map<String, Map<String, Long>> metrics, String server) {
        return metrics.get(server).get("suppressed_errors");
    }

    @Test
    public void closedPortGivesWhalinsAnswers() throws Exception {
        String addr = "127.0.0.1:" + closedPort();
        SockIOPool p = pool("fst-closed", addr);
        try {
            MemCachedClient mc = new MemCachedClient("fst-closed");
            assertNull(mc.get("k"));
            assertNull(mc.gets("k"));
            assertFalse(mc.set("k", "v"));
            assertFalse(mc.add("k", "v"));
            assertFalse(mc.replace("k", "v"));
            assertFalse(mc.append("k", "v"));
            assertFalse(mc.cas("k", "v", 1L));
            assertFalse(mc.delete("k"));
            assertFalse(mc.keyExists("k"));
            assertEquals(-1, mc.incr("n"));
            assertEquals(-1, mc.decr("n", 2));
            assertEquals(-1, mc.addOrIncr("n", 1));
            assertEquals(-1, mc.addOrDecr("n", 1));
            assertFalse(mc.storeCounter("n", 5L));
            assertEquals(-1, mc.getCounter("n"));
            assertTrue(mc.getMulti(new String[] {"a", "b"}).isEmpty());
            assertFalse(mc.flushAll());
            // 15 calls above that name a key, plus two getMulti keys, each counted once on the
            // key's server, and flushAll's failure on the server that failed.
            Map<String, Map<String, Long>> m = mc.metrics();
            assertEquals(18, suppressed(m, addr));
            assertTrue("connect errors counted by the core: " + m, m.get(addr).get("connect_errors") >= 1);
            // The caller's own mistakes are still thrown.
            try {
                mc.get(new String(new char[300]).replace('\0', 'k')); // too long even sanitized
                fail("an invalid key is the caller's error");
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_KEY", e.statusName());
            }
            assertEquals(18, suppressed(mc.metrics(), addr));
        } finally {
            p.shutDown();
        }
    }

    @Test
    public void strictApiThrowsWhatMemCachedClientAnswers() throws Exception {
        String addr = "127.0.0.1:" + closedPort();
        try (Mcpool mc = Mcpool.builder().servers(addr).connectTimeoutMillis(500).minIdle(0).build()) {
            try {
                mc.get("k");
                fail("a down server is an exception in io.mcpool.Mcpool");
            } catch (ConnectionException e) {
                assertTrue(e.status() >= 200);
            }
            try {
                mc.set("k", "v", 0);
                fail();
            } catch (ConnectionException e) {
                assertTrue(e.getMessage(), e.getMessage().contains(addr.split(":")[1]));
            }
            try {
                mc.getMulti("a", "b");
                fail();
            } catch (PartialResultException e) {
                // the strict multi-get throws once every key was tried, each key's own error
                assertTrue(e.hits().isEmpty());
                assertEquals(Arrays.asList("a", "b"), new ArrayList<>(e.errors().keySet()));
                for (McpoolException each : e.errors().values()) assertTrue(each instanceof ConnectionException);
                assertTrue(e.getCause() instanceof ConnectionException);
                assertEquals(e.errors().get("a").status(), e.status());
            }
            assertEquals(0L, (long) mc.metrics().get(addr).get("suppressed_errors"));
        }
    }

    @Test
    public void killedServerGivesWhalinsAnswers() throws Exception {
        TestServer server = new TestServer();
        String addr = server.addr();
        SockIOPool p = pool("fst-killed", addr);
        try {
            MemCachedClient mc = new MemCachedClient("fst-killed");
            assertTrue(mc.set("k", "v"));
            assertEquals("v", mc.get("k"));
            assertEquals(0L, suppressed(mc.metrics(), addr));
            server.close();
            assertNull(mc.get("k"));
            assertFalse(mc.set("k", "w"));
            assertFalse(mc.delete("k"));
            assertEquals(-1, mc.incr("k"));
            assertTrue(mc.getMulti(new String[] {"k"}).isEmpty());
            assertEquals(5L, suppressed(mc.metrics(), addr));
        } finally {
            p.shutDown();
            server.close();
        }
    }

    @Test
    public void multiGetKeepsTheLiveServersKeys() throws Exception {
        try (TestServer live = new TestServer()) {
            String dead = "127.0.0.1:" + closedPort();
            SockIOPool p = pool("fst-half", live.addr(), dead);
            try {
                MemCachedClient mc = new MemCachedClient("fst-half");
                try (Mcpool probe = Mcpool.builder().servers(live.addr(), dead).distribution("whalin-native").build()) {
                    List<String> onLive = new ArrayList<>(), onDead = new ArrayList<>();
                    for (int i = 0; i < 40 && (onLive.size() < 3 || onDead.size() < 3); i++) {
                        String k = "fst-half:" + i;
                        (probe.serverIndexFor(k) == 0 ? onLive : onDead).add(k);
                    }
                    assertTrue(onLive.size() >= 3 && onDead.size() >= 3);
                    for (String k : onLive) assertTrue(mc.set(k, k));
                    List<String> all = new ArrayList<>(onLive);
                    all.addAll(onDead);
                    Collections.shuffle(all);
                    Map<String, Object> got = mc.getMulti(all.toArray(new String[0]));
                    assertEquals(onLive.size(), got.size());
                    for (String k : onLive) assertEquals(k, got.get(k));
                    Map<String, Map<String, Long>> m = mc.metrics();
                    assertEquals(0L, suppressed(m, live.addr()));
                    assertEquals(onDead.size(), suppressed(m, dead));
                }
            } finally {
                p.shutDown();
            }
        }
    }

    @Test
    public void strictMultiGetCarriesTheLiveServersHits() throws Exception {
        // One server down: Mcpool.getMulti used to throw a ConnectionException and drop every
        // hit of the live server; now the hits and each failed key's own error come along.
        try (TestServer live = new TestServer()) {
            String dead = "127.0.0.1:" + closedPort();
            try (Mcpool mc = Mcpool.builder().servers(live.addr(), dead).connectTimeoutMillis(500).minIdle(0).build()) {
                List<String> onLive = new ArrayList<>(), onDead = new ArrayList<>();
                for (int i = 0; i < 60 && (onLive.size() < 4 || onDead.size() < 4); i++) {
                    String k = "fst-strict:" + i;
                    (mc.serverIndexFor(k) == 0 ? onLive : onDead).add(k);
                }
                assertTrue(onLive.size() >= 4 && onDead.size() >= 4);
                for (String k : onLive.subList(1, onLive.size())) assertTrue(mc.set(k, "v-" + k, 0));
                List<String> all = new ArrayList<>(onDead);
                all.addAll(onLive); // the first key is a dead server's: its status is the exception's
                try {
                    mc.getMulti(all);
                    fail("a down server's keys failed");
                } catch (PartialResultException e) {
                    assertFalse(e instanceof UnreadableValuesException);
                    assertEquals(onLive.size() - 1, e.hits().size()); // onLive.get(0) is a miss
                    for (String k : onLive.subList(1, onLive.size())) assertEquals("v-" + k, e.hits().get(k));
                    assertEquals(new ArrayList<>(onDead), new ArrayList<>(e.errors().keySet()));
                    for (String k : onDead) {
                        McpoolException each = e.errors().get(k);
                        assertTrue(k + ": " + each, each instanceof ConnectionException);
                        // each key's own message (the core's per-item message), naming it
                        assertTrue(each.getMessage(), each.getMessage().contains("\"" + k + "\""));
                        assertTrue(each.getMessage(), each.getMessage().contains(dead));
                    }
                    assertSame(e.errors().get(onDead.get(0)), e.getCause());
                    assertEquals("MCPOOL_" , e.statusName().substring(0, 7));
                }
            }
        }
    }

    @Test
    public void flushAllOfSomeServers() throws Exception {
        // Whalin's flushAll(String[] servers): only those servers; false for one that failed
        // or is not in the pool (the others flushed all the same).
        String dead = "127.0.0.1:" + closedPort();
        try (TestServer a = new TestServer(); TestServer b = new TestServer()) {
            SockIOPool p = pool("fst-flush", a.addr(), b.addr(), dead);
            try (Mcpool onA = Mcpool.builder().servers(a.addr()).build();
                 Mcpool onB = Mcpool.builder().servers(b.addr()).build()) {
                MemCachedClient mc = new MemCachedClient("fst-flush");
                assertTrue(onA.set("k", "a", 0));
                assertTrue(onB.set("k", "b", 0));
                assertTrue(mc.flushAll(new String[] {b.addr()}));
                assertEquals("a", onA.get("k"));
                assertNull(onB.get("k"));
                assertTrue(onB.set("k", "b", 0));
                assertFalse(mc.flushAll(new String[] {"127.0.0.1:1", a.addr()})); // not in the pool
                assertNull(onA.get("k"));
                assertEquals("b", onB.get("k"));
                assertFalse(mc.flushAll(new String[] {dead, b.addr()})); // down
                assertNull(onB.get("k"));
                assertTrue(mc.flushAll(new String[0]));
            } finally {
                p.shutDown();
            }
        }
    }

    @Test
    public void flushAllRefusedByAServer() throws Exception {
        // memcached -F (flush_all disabled) answers a flush with an error reply (text and meta:
        // CLIENT_ERROR flush_all not allowed; binary: status 0x20): Whalin's false, never an
        // exception, and the servers listed after it are flushed all the same (tester finding
        // servererrors 1: a ClientException left the loop, P kept its stale value).
        try (TestServer f = new TestServer("-F"); TestServer p = new TestServer()) {
            for (String protocol : new String[] {"text", "meta", "binary"}) {
                String name = "fst-flush-refused-" + protocol;
                SockIOPool pool = SockIOPool.getInstance(name);
                pool.setServers(new String[] {f.addr(), p.addr()});
                pool.setFailover(false);
                pool.setProtocol(protocol);
                pool.initialize();
                try (Mcpool onF = Mcpool.builder().servers(f.addr()).build();
                     Mcpool onP = Mcpool.builder().servers(p.addr()).build()) {
                    MemCachedClient mc = new MemCachedClient(name);
                    assertTrue(onF.set("k", "f", 0));
                    assertTrue(onP.set("k", "p", 0));
                    assertFalse(protocol, mc.flushAll(new String[] {f.addr(), p.addr()}));
                    assertNull(protocol + ": P was flushed after F refused", onP.get("k"));
                    assertEquals(protocol + ": F refused the flush", "f", onF.get("k"));
                    assertTrue(mc.flushAll(new String[] {p.addr()}));
                    assertTrue(onP.set("k", "p", 0));
                    assertFalse(protocol, mc.flushAll());
                    assertNull(protocol + ": P was flushed after F refused", onP.get("k"));
                    assertEquals("f", onF.get("k"));
                    assertFalse(protocol, mc.flushAll(new String[] {f.addr()}));
                } finally {
                    pool.shutDown();
                }
            }
        }
    }

    @Test
    public void flushAllEachNamesEveryServersOutcome() throws Exception {
        // Mcpool.flushAll threw the first refusing server's error and said nothing of the
        // others (tester finding retest26 6): flushAllEach answers each server's outcome,
        // and flushAll's exception carries the other failures as suppressed ones.
        try (TestServer f1 = new TestServer("-F"); TestServer p = new TestServer();
             TestServer f2 = new TestServer("-F")) {
            for (String protocol : new String[] {"text", "meta", "binary"}) {
                try (Mcpool c = Mcpool.builder().servers(f1.addr(), p.addr(), f2.addr())
                         .option("protocol", protocol).build();
                     Mcpool onP = Mcpool.builder().servers(p.addr()).build()) {
                    assertTrue(onP.set("k", "p", 0));
                    Map<String, McpoolException> each = c.flushAllEach(0);
                    assertEquals(protocol, Arrays.asList(f1.addr(), p.addr(), f2.addr()),
                        new ArrayList<>(each.keySet()));
                    assertNull(protocol, each.get(p.addr()));
                    for (String f : new String[] {f1.addr(), f2.addr()}) {
                        McpoolException e = each.get(f);
                        assertTrue(protocol + ": " + e, e instanceof ClientException);
                        assertTrue(protocol + ": " + e, e.getMessage().contains("not allowed"));
                    }
                    assertNull(protocol + ": P flushed", onP.get("k"));
                    try {
                        c.flushAll(0);
                        fail(protocol + ": flushAll should throw");
                    } catch (ClientException e) {
                        assertTrue(protocol + ": " + e, e.getMessage().contains(f1.addr()));
                        assertEquals(protocol, 1, e.getSuppressed().length);
                        assertTrue(protocol, e.getSuppressed()[0].getMessage().contains(f2.addr()));
                    }
                    onP.flushAll(0); // every server flushed: no exception
                }
            }
        }
    }

    @Test
    public void serverStatesAndEvents() throws Exception {
        String dead = "127.0.0.1:" + closedPort();
        List<ServerEvent> events = Collections.synchronizedList(new ArrayList<>());
        try (TestServer live = new TestServer();
             Mcpool mc = Mcpool.builder().servers(live.addr(), dead).connectTimeoutMillis(500).minIdle(0)
                 .retryTimeoutMillis(60_000).retryTimeoutMaxMillis(60_000).onServerEvent(events::add).build()) {
            List<ServerState> before = mc.serverStates();
            assertEquals(2, before.size());
            assertEquals(dead, before.get(1).server());
            assertTrue(before.get(1).alive());
            String k = null;
            for (int i = 0; i < 100 && k == null; i++) if (mc.serverIndexFor("ev:" + i) == 1) k = "ev:" + i;
            assertNotNull(k);
            for (int i = 0; i < 5 && events.isEmpty(); i++) {
                try {
                    mc.get(k);
                } catch (ConnectionException e) {
                    // expected until the server is marked dead
                }
            }
            assertEquals(events.toString(), 1, events.size());
            ServerEvent e = events.get(0);
            assertEquals(ServerEvent.Kind.DOWN, e.kind());
            assertEquals(dead, e.server());
            assertTrue(e.failures() >= 1);
            assertTrue(e.retryInMillis() > 0);
            ServerState after = mc.serverStates().get(1);
            assertFalse(after.alive());
            assertTrue(after.failures() >= 1);
            assertTrue(after.retryInMillis() > 0 && after.retryInMillis() <= 60_000);
            assertTrue(mc.serverStates().get(0).alive());
            assertTrue(mc.metrics().get(dead).get("ejections") >= 1);
        }
    }

    @Test
    public void aThrowingListenerDoesNotReachTheCore() throws Exception {
        String dead = "127.0.0.1:" + closedPort();
        int[] calls = {0};
        try (Mcpool mc = Mcpool.builder().servers(dead).connectTimeoutMillis(500).minIdle(0).retryTimeoutMillis(60_000).retryTimeoutMaxMillis(60_000)
                 .onServerEvent(ev -> {
                     calls[0]++;
                     throw new IllegalStateException("listener bug");
                 }).build()) {
            for (int i = 0; i < 5 && calls[0] == 0; i++) {
                try {
                    mc.get("k");
                } catch (ConnectionException e) {
                    // the call's own error, never the listener's
                }
            }
            assertEquals(1, calls[0]);
            assertFalse(mc.serverStates().get(0).alive());
        }
    }

    /** Issue 21 item 6: metadata without the value; explicit CAS versions refused by the
     * installed memcached (older than 1.6.27) with its version named. */
    @Test
    public void metaInfoAndExplicitVersions() throws Exception {
        try (TestServer server = new TestServer();
             Mcpool mc = Mcpool.builder().servers(server.addr()).protocol("meta").build();
             Mcpool text = Mcpool.builder().servers(server.addr()).build()) {
            assertTrue(mc.set("info:k", "twelve bytes", 100));
            ItemInfo info = mc.metaInfo("info:k");
            assertFalse(info.hitBefore());
            assertTrue(info.ttlSeconds() > 90 && info.ttlSeconds() <= 100);
            assertTrue(info.cas() != 0 && info.size() > 0);
            assertEquals("twelve bytes", mc.get("info:k"));
            assertTrue(mc.metaInfo("info:k").hitBefore());
            assertTrue(mc.set("info:forever", "v", 0));
            assertEquals(-1, mc.metaInfo("info:forever").ttlSeconds());
            assertNull(mc.metaInfo("info:absent"));
            try {
                mc.setWithVersion("info:e", "v", 0, 12345L);
                fail("memcached older than 1.6.27 has no E flag");
            } catch (ClientException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("1.6.27"));
            }
            assertNull(mc.get("info:e"));
            try {
                text.metaInfo("info:k");
                fail("metadata needs the meta protocol");
            } catch (ClientException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("meta"));
            }
        }
    }

    @Test
    public void leasesOnTheMetaProtocol() throws Exception {
        try (TestServer server = new TestServer();
             Mcpool mc = Mcpool.builder().servers(server.addr()).protocol("meta").build();
             Mcpool text = Mcpool.builder().servers(server.addr()).build()) {
            Lease first = mc.getLease("lease:k", 30, 0);
            assertEquals(Lease.State.RECOMPUTE, first.state());
            assertNull(first.value());
            assertEquals(Lease.State.WAIT, mc.getLease("lease:k", 30, 0).state());
            assertTrue(mc.set("lease:k", "fresh", 0));
            Lease hit = mc.getLease("lease:k", 30, 0);
            assertEquals(Lease.State.HIT, hit.state());
            assertEquals("fresh", hit.value());
            assertTrue(mc.invalidate("lease:k", 30));
            Lease stale = mc.getLease("lease:k", 30, 0);
            assertEquals(Lease.State.RECOMPUTE, stale.state());
            assertEquals("fresh", stale.value());
            // An empty value is a value: stale after invalidate, and the current one when a
            // lease with recacheBelow wins its recompute (an empty String: flags of its own).
            assertTrue(mc.set("lease:empty", "", 0));
            assertTrue(mc.invalidate("lease:empty", 30));
            Lease emptyStale = mc.getLease("lease:empty", 30, 0);
            assertEquals(Lease.State.RECOMPUTE, emptyStale.state());
            assertEquals("", emptyStale.value());
            assertTrue(mc.set("lease:recache", "", 100));
            Lease recache = mc.getLease("lease:recache", 30, 200);
            assertEquals(Lease.State.RECOMPUTE, recache.state());
            assertEquals("", recache.value());
            assertEquals("", mc.get("lease:recache"));
            assertFalse(mc.invalidate("lease:missing", 30));
            try {
                text.getLease("lease:k", 30, 0);
                fail("leases need the meta protocol");
            } catch (ClientException e) {
                assertEquals("MCPOOL_UNSUPPORTED", e.statusName());
            }
        }
    }
}
