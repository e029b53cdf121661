package io.mcpool;

import static org.junit.Assert.*;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.Test;

/** Commands the core and the C ABI had that Java lacked: gat, gats, gatMulti, noop,
 * deleteWithVersion, incrWithVersion, decrWithVersion. Against a real memcached on every
 * protocol; the explicit-version answers from a deliberately fake meta server reporting
 * memcached 1.6.27 (the installed one is older and refuses them). */
public class ParityOpsTest extends ServerTestBase {
    static final String[] PROTOCOLS = {"text", "meta", "binary"};

    private static String free() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return "127.0.0.1:" + s.getLocalPort();
        }
    }

    @Test
    public void gatReadsAndSetsTheExpiryAsTouch() {
        try (Mcpool meta = Mcpool.builder().servers(server.addr()).protocol("meta").build()) {
            for (String p : PROTOCOLS) {
                try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(p).build()) {
                    String k = "pg:" + p;
                    assertTrue(mc.set(k, "value", 0));
                    assertEquals(p, "value", mc.gat(k, 1000));
                    long left = meta.metaInfo(k).ttlSeconds();
                    assertTrue(p + " TTL " + left, left > 990 && left <= 1000);
                    assertEquals(p, "value", mc.gat(k, 0)); // 0: never expires
                    assertEquals(p, -1, meta.metaInfo(k).ttlSeconds());
                    assertNull(p, mc.gat("pg:missing:" + p, 100));
                    assertTrue(mc.set(k, 42, 0));
                    Object viaGet = mc.get(k);
                    assertEquals(p, viaGet, mc.gat(k, 500)); // decoded as get decodes it
                    assertEquals(p, viaGet, mc.gat(k, -1)); // negative: expired at once, as touch
                    assertNull(p, mc.get(k));
                }
            }
        }
    }

    @Test
    public void gatsReturnsTheCasThatCasAccepts() {
        for (String p : PROTOCOLS) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(p).build()) {
                String k = "pgs:" + p;
                assertTrue(mc.set(k, "one", 0));
                MemcachedItem it = mc.gats(k, 2000);
                assertEquals(p, "one", it.getValue());
                assertTrue(p, it.getCasUnique() != 0);
                assertEquals(p, mc.gets(k).getCasUnique(), it.getCasUnique());
                assertTrue(p, mc.cas(k, "two", 0, it.getCasUnique()));
                assertFalse(p, mc.cas(k, "three", 0, it.getCasUnique()));
                assertNull(p, mc.gats("pgs:missing:" + p, 10));
            }
        }
    }

    @Test
    public void gatMultiReadsEveryKeyAndTouchesTheHits() {
        try (Mcpool meta = Mcpool.builder().servers(server.addr()).protocol("meta").build()) {
            for (String p : PROTOCOLS) {
                try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(p).build()) {
                    String a = "pgm:a:" + p, b = "pgm:b:" + p, miss = "pgm:miss:" + p;
                    assertTrue(mc.set(a, "A", 0));
                    assertTrue(mc.set(b, 7, 0));
                    Map<String, Object> got = mc.gatMulti(3000, a, miss, b);
                    assertEquals(p, Arrays.asList(a, b), new java.util.ArrayList<>(got.keySet()));
                    assertEquals(p, "A", got.get(a));
                    assertEquals(p, mc.get(b), got.get(b)); // decoded as get decodes it
                    for (String k : new String[] {a, b}) {
                        long left = meta.metaInfo(k).ttlSeconds();
                        assertTrue(p + " TTL " + left, left > 2990 && left <= 3000);
                    }
                    assertNull(meta.metaInfo(miss));
                    assertTrue(mc.gatMulti(10, Arrays.asList(miss)).isEmpty());
                }
            }
        }
    }

    @Test
    public void gatOfADownServerThrowsAndGatMultiNamesTheKey() throws Exception {
        String down = free();
        try (Mcpool mc = Mcpool.builder().servers(down).build()) {
            try {
                mc.gat("k", 10);
                fail("gat on a server that is down answered");
            } catch (ConnectionException e) {
                assertTrue(e.getMessage(), e.getMessage().contains(down));
            }
            try {
                mc.gatMulti(10, "k1", "k2");
                fail("gatMulti on a server that is down answered");
            } catch (PartialResultException e) {
                assertTrue(e.hits().isEmpty());
                assertEquals(2, e.errors().size());
            }
            try {
                mc.gats("k", 10);
                fail("gats on a server that is down answered");
            } catch (ConnectionException e) {
                // expected
            }
        }
    }

    @Test
    public void noopAnswersPerServer() throws Exception {
        String down = free();
        for (String p : PROTOCOLS) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr(), down).protocol(p).build()) {
                Map<String, Boolean> r = mc.noop();
                assertEquals(p, 2, r.size());
                assertEquals(p, Boolean.TRUE, r.get(server.addr()));
                assertEquals(p, Boolean.FALSE, r.get(down));
            }
        }
    }

    @Test
    public void withVersionIsRefusedByThisMemcachedAndChangesNothing() {
        for (String p : PROTOCOLS) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(p).build()) {
                String k = "pv:" + p;
                assertTrue(mc.setCounter(k, 5, 0));
                Runnable[] calls = {
                    () -> mc.deleteWithVersion(k, 5),
                    () -> mc.incrWithVersion(k, 1, 5),
                    () -> mc.decrWithVersion(k, 1, 5),
                };
                for (Runnable c : calls) {
                    try {
                        c.run();
                        fail(p + ": answered");
                    } catch (ClientException e) {
                        assertEquals(p, "MCPOOL_UNSUPPORTED", e.statusName());
                        if (p.equals("meta")) assertTrue(e.getMessage(), e.getMessage().contains("1.6.27"));
                    }
                }
                assertEquals(p, 6L, mc.incr(k, 1).getAsLong());
                try {
                    mc.incrWithVersion(k, -1, 5);
                    fail("a negative delta was accepted");
                } catch (ClientException e) {
                    assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
                }
            }
        }
    }

    @Test
    public void withVersionOfADownServerThrows() throws Exception {
        try (Mcpool mc = Mcpool.builder().servers(free()).protocol("meta").build()) {
            try {
                mc.deleteWithVersion("k", 5);
                fail("answered");
            } catch (ConnectionException e) {
                // expected
            }
            try {
                mc.incrWithVersion("k", 1, 5);
                fail("answered");
            } catch (ConnectionException e) {
                // expected
            }
        }
    }

    /** A deliberately fake meta server reporting memcached 1.6.27: md/ma on a key holding
     * "absent" answer NF, else HD and VA 1 with 7; the request's opaque is echoed. */
    @Test
    public void withVersionAnswersFromAServerThatTakesIt() throws Exception {
        try (ServerSocket ls = new ServerSocket(0, 4, InetAddress.getByName("127.0.0.1"))) {
            ls.setSoTimeout(10000);
            Thread t = new Thread(() -> {
                try (Socket s = ls.accept()) {
                    s.setSoTimeout(10000);
                    BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
                    OutputStream out = s.getOutputStream();
                    for (int i = 0; i < 100; i++) { // bounded
                        String line = in.readLine();
                        if (line == null) return;
                        String[] w = line.trim().split(" ");
                        String o = "";
                        for (String x : w) if (x.startsWith("O")) o = x;
                        boolean absent = line.contains("absent");
                        String reply = w[0].equals("version") ? "VERSION 1.6.27\r\n"
                            : w[0].equals("md") ? (absent ? "NF " : "HD ") + o + "\r\n"
                            : w[0].equals("ma") ? (absent ? "NF " + o + "\r\n" : "VA 1 " + o + "\r\n7\r\n")
                            : "CLIENT_ERROR fake\r\n";
                        out.write(reply.getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    }
                } catch (Exception e) {
                    // the client closed: done
                }
            });
            t.start();
            try (Mcpool mc = Mcpool.builder().servers("127.0.0.1:" + ls.getLocalPort()).protocol("meta").build()) {
                assertTrue(mc.deleteWithVersion("k", 777));
                assertFalse(mc.deleteWithVersion("absent", 777));
                assertEquals(OptionalLong.of(7), mc.incrWithVersion("n", 1, 99));
                assertEquals(OptionalLong.of(7), mc.decrWithVersion("n", 1, 99));
                assertEquals(OptionalLong.empty(), mc.incrWithVersion("absent", 1, 99));
            }
            t.join(10000);
        }
    }

    /** stats of a group memcached does not know fails on every server: an error on every
     * protocol, as Python's, Perl's and the CLI's stats raise, not an empty map read as "no
     * servers" (before). A server that answers still gives its map beside one that failed;
     * versions() with every server down throws too. */
    @Test
    public void statsOfAnUnknownGroupThrows() throws Exception {
        for (String proto : PROTOCOLS) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(proto).build()) {
                try {
                    Map<String, Map<String, String>> r = mc.stats("bogus");
                    fail(proto + ": stats(\"bogus\") answered " + r);
                } catch (ClientException | ServerException e) {
                    // text and meta: memcached's ERROR (CLIENT_ERROR class); binary: status 0x01
                    assertTrue(proto + ": " + e.getMessage(), e.getMessage().contains(server.addr()) || e.getMessage().contains("stats"));
                }
                assertTrue(mc.stats("settings").get(server.addr()).containsKey("maxbytes"));
            }
        }
        String down = free();
        try (Mcpool mc = Mcpool.builder().servers(server.addr(), down).minIdle(0).connectTimeoutMillis(500).build()) {
            Map<String, Map<String, String>> r = mc.stats(null);
            assertTrue(r.containsKey(server.addr()));
            assertFalse(r.containsKey(down));
        }
        try (Mcpool mc = Mcpool.builder().servers(down).minIdle(0).connectTimeoutMillis(500).build()) {
            try {
                mc.versions();
                fail("versions() of a down server answered");
            } catch (ConnectionException e) {
                assertTrue(e.getMessage(), e.getMessage().contains(down));
            }
            try {
                mc.stats(null);
                fail("stats() of a down server answered");
            } catch (ConnectionException e) {
                assertTrue(e.getMessage(), e.getMessage().contains(down));
            }
        }
    }
}
