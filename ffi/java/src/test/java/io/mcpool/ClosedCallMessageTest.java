package io.mcpool;

import static org.junit.Assert.*;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.Test;

/**
 * Tester finding retest44 2: a call on a closed {@link Mcpool} threw only "MCPOOL_CLOSED: the
 * client is closed", a message of Java's own, where C ({@code mcpool_last_error_message}),
 * Python and Perl give the core's: the call, the key, and that nothing was sent. Java now
 * forwards the C ABI's message (the call runs on a closed stand-in of the same configuration:
 * the client's own handle is freed at close), so its message is C's, word for word.
 */
public class ClosedCallMessageTest extends ServerTestBase {
    private static final String CLOSED = ": the client is closed: nothing was sent (close() was called on it)";

    private static ClientException refused(String what, Runnable call) {
        try {
            call.run();
        } catch (ClientException e) {
            return e;
        }
        throw new AssertionError(what + " on a closed client returned");
    }

    private static void assertClosed(String detail, String what, Runnable call) {
        ClientException e = refused(what, call);
        assertEquals(e.getMessage(), 108, e.status());
        assertEquals(e.getMessage(), "MCPOOL_CLOSED", e.statusName());
        assertEquals(what, detail, e.detail());
    }

    /** get, set, getMulti, incr and delete (and a few more) after close name the call and the
     * key as C does, after the client was used against a live server. */
    @Test
    public void callsAfterCloseNameTheCallAndTheKey() {
        Mcpool mc = Mcpool.builder().servers(server.addr()).build();
        assertTrue(mc.set("cm:x", "v", 0));
        assertTrue(mc.setCounter("cm:n", 5, 0));
        mc.close();
        assertTrue("the client's own handle is still freed at close", mc.nc.isFreed());
        assertClosed("get \"cm:x\"" + CLOSED, "get", () -> mc.get("cm:x"));
        assertClosed("set \"cm:x\"" + CLOSED, "set", () -> mc.set("cm:x", "w"));
        assertClosed("get_multi \"cm:a\"" + CLOSED, "getMulti", () -> mc.getMulti(Arrays.asList("cm:a", "cm:b")));
        assertClosed("incr \"cm:n\"" + CLOSED, "incr", () -> mc.incr("cm:n", 1));
        assertClosed("delete \"cm:x\"" + CLOSED, "delete", () -> mc.delete("cm:x"));
        assertClosed("get \"cm:x\"" + CLOSED, "getBytes", () -> mc.getBytes("cm:x"));
        assertClosed("decr \"cm:n\"" + CLOSED, "decr", () -> mc.decr("cm:n", 1));
        assertClosed("add \"cm:y\"" + CLOSED, "add", () -> mc.add("cm:y", "v", 0));
        assertClosed("touch \"cm:x\"" + CLOSED, "touch", () -> mc.touch("cm:x", 10));
        Map<String, Object> items = new LinkedHashMap<>();
        items.put("cm:m1", "1");
        items.put("cm:m2", "2");
        assertClosed("set_multi \"cm:m1\"" + CLOSED, "setMulti", () -> mc.setMulti(items, 0));
        assertClosed("delete_multi \"cm:m1\"" + CLOSED, "deleteMulti", () -> mc.deleteMulti(Arrays.asList("cm:m1", "cm:m2")));
        // whole-server calls: the core's call names, thrown as a whole as before
        assertClosed("flush_all" + CLOSED, "flushAll", () -> mc.flushAll(0));
        assertClosed("flush_all" + CLOSED, "flushAllEach", () -> mc.flushAllEach(0));
        assertClosed("stats" + CLOSED, "stats", () -> mc.stats(null));
        assertClosed("set_servers" + CLOSED, "setServers", () -> mc.setServers(server.addr()));
        // nothing reached the server: the value and the counter are as they were
        try (Mcpool other = Mcpool.builder().servers(server.addr()).build()) {
            assertEquals("v", other.get("cm:x"));
            assertEquals(5, other.incr("cm:n", 0).getAsLong());
            assertNull(other.get("cm:y"));
        }
    }

    /** The stand-in has the client's options, so the core checks a call as that client's
     * first, as C does on a closed client: a key with a space is refused as such on the text
     * protocol, and is a closed call's key on the binary protocol, which can send it. */
    @Test
    public void theCoreChecksTheCallAsTheClientsOwn() {
        Mcpool text = Mcpool.builder().servers("127.0.0.1:1").minIdle(0).build();
        text.close();
        ClientException e = refused("get of a key with a space", () -> text.get("a b"));
        assertEquals(e.getMessage(), "MCPOOL_INVALID_KEY", e.statusName());
        assertEquals("get: invalid key \"a b\": key contains a space or control byte", e.detail());
        Mcpool binary = Mcpool.builder().servers("127.0.0.1:1").protocol("binary").minIdle(0).build();
        binary.close();
        assertClosed("get \"a b\"" + CLOSED, "binary get", () -> binary.get("a b"));
        Mcpool meta = Mcpool.builder().servers("127.0.0.1:1").protocol("meta").minIdle(0).build();
        meta.close();
        assertClosed("meta_info \"k\"" + CLOSED, "metaInfo", () -> meta.metaInfo("k"));
    }

    /** The stand-in is made only for a call after close, once, and shared by the threads
     * that call the closed client; calls the core answers on a closed client (the server list,
     * disconnectAll) and empty batches, which make no native call, are still refused here. */
    @Test
    public void theStandInIsMadeOnceOnUse() throws Exception {
        Mcpool mc = Mcpool.builder().servers("127.0.0.1:1").minIdle(0).build();
        mc.close();
        assertFalse(mc.nc.hasStandIn());
        Thread[] ts = new Thread[8];
        java.util.concurrent.atomic.AtomicReference<Throwable> bad = new java.util.concurrent.atomic.AtomicReference<>();
        for (int t = 0; t < ts.length; t++) {
            String key = "t" + t;
            ts[t] = new Thread(() -> {
                for (int i = 0; i < 200; i++) {
                    try {
                        mc.get(key);
                        bad.compareAndSet(null, new AssertionError("a get on a closed client returned"));
                    } catch (ClientException e) {
                        if (!("get \"" + key + "\"" + CLOSED).equals(e.detail())) bad.compareAndSet(null, e);
                    } catch (Throwable e) {
                        bad.compareAndSet(null, e);
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) t.join(30_000);
        assertNull(bad.get());
        assertTrue(mc.nc.hasStandIn());
        assertEquals(0, mc.nc.inFlight());
        ClientException e = refused("servers", mc::servers);
        assertEquals("MCPOOL_CLOSED", e.statusName());
        e = refused("getMulti of nothing", () -> mc.getMulti(Arrays.asList()));
        assertEquals("MCPOOL_CLOSED", e.statusName());
    }
}
