package io.mcpool;

import static org.junit.Assert.*;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.Test;

/** A password given in a server address ({@code bob:PASSWORD@host:port}, which no address
 * form takes) is never shown: not in a refusal's message, nor in any cause's, nor in the
 * printed stack trace, on every path an address takes (Builder.servers and server(addr,
 * weight), option("servers", ...), Mcpool.setServers, SockIOPool's setServers/setWeights and
 * setOption, MemCachedClient's flushAll(String[])), whether the core or the binding refuses
 * it: the binding shows an address through the core's rule (Utf8.address,
 * mcpool_address_shown). Tester findings retest16 4 (a weight of 0 in SockIOPool quoted the
 * address) and 5 (an unpaired surrogate in an address quoted it). No server: each is refused
 * before any connection. */
public class AddressPasswordTest {
    /** Every password here holds this; no message may. */
    static final String MARK = "r1t";
    static final String[] PASSWORDS = {"Sekr1t", "Sek r1t", "Sek=r1t", "Sek\"r1t", "Sek\tr1t", "Sekr1t\uD800"};
    static final String HOST = "10.0.0.2:11211";

    static String addr(String pw) {
        return "bob:" + pw + "@" + HOST;
    }

    /** Runs a step that must be refused and checks the exception hides the password. */
    static McpoolException refused(String pw, Runnable step) {
        try {
            step.run();
        } catch (McpoolException e) {
            checkHidden(pw, e);
            return e;
        }
        fail("an address with a password was taken: " + pw.length() + " chars");
        return null;
    }

    static void checkHidden(String pw, Throwable e) {
        StringWriter trace = new StringWriter();
        e.printStackTrace(new PrintWriter(trace));
        String where = "password #" + java.util.Arrays.asList(PASSWORDS).indexOf(pw) + ": ";
        assertFalse(where + trace.toString().replace(MARK, "<MARK>"), trace.toString().contains(MARK));
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage()) + " " + t;
            assertFalse(where + m.replace(MARK, "<MARK>"), m.contains(MARK));
            assertFalse(where, m.contains(pw));
            for (Throwable s : t.getSuppressed()) checkHidden(pw, s);
        }
    }

    static Mcpool.Builder builder() {
        return Mcpool.builder().minIdle(0);
    }

    @Test
    public void theBuilderHidesIt() {
        for (String pw : PASSWORDS) {
            String a = addr(pw);
            refused(pw, () -> builder().servers(a).build().close());
            refused(pw, () -> builder().servers("127.0.0.1:1", a).build().close());
            refused(pw, () -> builder().server(a, 0).build().close());
            refused(pw, () -> builder().server(a, 1).build().close());
            refused(pw, () -> builder().server(a, 2).build().close());
            refused(pw, () -> builder().server(a, -1).build().close());
            refused(pw, () -> builder().option("servers", a).build().close());
            refused(pw, () -> builder().option("Servers", "127.0.0.1:1," + a).build().close());
            refused(pw, () -> builder().option("servers", a + ",127.0.0.1:1").build().close());
            refused(pw, () -> builder().option("libmemcached_config", "--SERVER=" + a).build().close());
        }
    }

    @Test
    public void setServersHidesIt() {
        try (Mcpool mc = builder().servers("127.0.0.1:1").build()) {
            for (String pw : PASSWORDS) {
                String a = addr(pw);
                refused(pw, () -> mc.setServers(a));
                refused(pw, () -> mc.setServers("127.0.0.1:1", a));
                refused(pw, () -> mc.setServers(new String[] {a}, new int[] {0}));
                refused(pw, () -> mc.setServers(new String[] {a}, new int[] {3}));
                refused(pw, () -> mc.setServers(new String[] {a}, new int[] {1, 2}));
            }
            assertEquals(java.util.Collections.singletonList("127.0.0.1:1"), mc.servers());
        }
    }

    @Test
    public void sockIOPoolHidesIt() {
        int n = 0;
        for (String pw : PASSWORDS) {
            for (Integer w : new Integer[] {0, -1, 1, 2, null}) {
                SockIOPool p = SockIOPool.getInstance("address-password-test-" + n++);
                p.setServers(new String[] {"127.0.0.1:1", addr(pw)});
                if (w != null) p.setWeights(new Integer[] {1, w});
                p.setInitConn(0);
                p.setMinConn(0);
                McpoolException e = refused(pw, p::initialize);
                assertFalse(p.isInitialized());
                if (w != null && w < 1) {
                    // the binding's own message: the address as the core shows it
                    assertTrue(e.getMessage(), e.getMessage().contains("<userinfo hidden>@" + HOST));
                }
                assertFalse(p.toString(), p.toString().contains(MARK));
            }
            SockIOPool p = SockIOPool.getInstance("address-password-test-" + n++);
            p.setServers(new String[] {"127.0.0.1:1"});
            p.setInitConn(0);
            p.setMinConn(0);
            p.setOption("servers", addr(pw));
            refused(pw, p::initialize);
            assertFalse(p.isInitialized());
        }
    }

    /** MemCachedClient takes addresses only to pick servers (flushAll, stats): one not in
     * the pool is false or left out, never an error quoting it. */
    @Test
    public void memCachedClientTakesNoneToShow() {
        SockIOPool p = SockIOPool.getInstance("address-password-test-mc");
        p.setServers(new String[] {"127.0.0.1:1"});
        p.setInitConn(0);
        p.setMinConn(0);
        p.initialize();
        try {
            MemCachedClient mc = new MemCachedClient("address-password-test-mc");
            for (String pw : PASSWORDS) {
                assertFalse(mc.flushAll(new String[] {addr(pw)}));
            }
        } finally {
            p.shutDown();
        }
    }

    /** An unpaired surrogate is still named as the reason, and the address shown the core's
     * way; one in the host shows as U+FFFD. */
    @Test
    public void anUnpairedSurrogateIsStillTheReason() {
        McpoolException e = refused("Sekr1t\uD800", () -> builder().servers(addr("Sekr1t\uD800")).build().close());
        assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
        assertTrue(e.getMessage(), e.getMessage().contains("unpaired surrogate"));
        assertTrue(e.getMessage(), e.getMessage().contains("<userinfo hidden>@" + HOST));
        try {
            builder().servers("h\uDC00st:1").build().close();
            fail("an unencodable address was taken");
        } catch (ClientException c) {
            assertTrue(c.getMessage(), c.getMessage().contains("h\uFFFDst:1"));
            assertTrue(c.getMessage(), c.getMessage().contains("unpaired surrogate"));
        }
    }

    /** The core's rule, through the binding's one helper. */
    @Test
    public void theHelperIsTheCoresRule() {
        assertEquals("<userinfo hidden>@h:1", Utf8.address("bob:Sekr1t@h:1"));
        assertEquals("<userinfo hidden>@h:1", Utf8.address("bob:Sekr1t\uD800@h:1"));
        assertEquals("h:1", Utf8.address("h:1"));
        assertEquals("/tmp/a@b.sock", Utf8.address("/tmp/a@b.sock"));
        assertEquals("caf\u00e9:1", Utf8.address("caf\u00e9:1"));
        assertEquals("\uD83D\uDE00:1", Utf8.address("\uD83D\uDE00:1"));
        assertEquals("null", Utf8.address(null));
        StringBuilder big = new StringBuilder("bob:");
        for (int i = 0; i < 5000; i++) big.append('x');
        String longHost = big.toString().replace("bob:", "") + ":1";
        assertEquals(longHost, Utf8.address(longHost)); // longer than the first buffer
        assertEquals("<userinfo hidden>@h:1", Utf8.address(big + "@h:1"));
    }
}
