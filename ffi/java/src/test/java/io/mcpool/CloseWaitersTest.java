package io.mcpool;

import static org.junit.Assert.*;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * close() while calls wait for the one pooled connection: they end at once with MCPOOL_CLOSED
 * and open no connection (tester finding java 1: they waited out the pool timeout, and one of
 * them connected again after close). The server is a deliberately silent fake (not
 * memcached): it accepts and never answers, so the first call holds the connection.
 */
public class CloseWaitersTest {
    /**
     * A client of one silent server (it accepts, never answers) whose only connection a get
     * holds, waiting for its 4 s I/O timeout: every other call waits for a connection. The
     * holding thread is put in {@code holder[0]}; the accepted sockets in {@code held}.
     */
    private static Mcpool occupied(ServerSocket silent, List<Socket> held, AtomicInteger accepted,
                                   Thread[] holder) throws Exception {
        Thread acceptor = new Thread(() -> {
            try {
                for (int i = 0; i < 16; i++) {
                    Socket s = silent.accept();
                    synchronized (held) { held.add(s); }
                    accepted.incrementAndGet();
                }
            } catch (Exception closed) {
                // the listener closed at the end of the test
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
        Mcpool mc = Mcpool.builder().servers("127.0.0.1:" + silent.getLocalPort())
            .maxConnections(1).minIdle(0).ioTimeoutMillis(4000)
            .option("pool_timeout", "30000").option("failure_limit", "1000").build();
        holder[0] = new Thread(() -> {
            try { mc.get("held"); } catch (McpoolException expected) { /* its I/O timeout */ }
        });
        holder[0].start();
        long until = System.nanoTime() + 10_000_000_000L;
        while (accepted.get() < 1 && System.nanoTime() < until) Thread.sleep(5);
        assertEquals(1, accepted.get());
        return mc;
    }

    @Test
    public void closeEndsTheCallsWaitingForAConnection() throws Exception {
        AtomicInteger accepted = new AtomicInteger();
        List<Socket> held = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread[] holder = new Thread[1];
            Mcpool mc = occupied(silent, held, accepted, holder);
            AtomicReference<Throwable> wrong = new AtomicReference<>();
            long[] endedAt = new long[3];
            Thread[] waiters = new Thread[3];
            for (int t = 0; t < waiters.length; t++) {
                final int id = t;
                waiters[t] = new Thread(() -> {
                    try {
                        mc.get("w" + id);
                        wrong.compareAndSet(null, new AssertionError("a waiter got an answer"));
                    } catch (ClientException e) {
                        if (!"MCPOOL_CLOSED".equals(e.statusName()) || e.status() != 108) {
                            wrong.compareAndSet(null, e);
                        }
                    } catch (Throwable e) {
                        wrong.compareAndSet(null, e);
                    }
                    endedAt[id] = System.nanoTime();
                });
                waiters[t].start();
            }
            // Not a synchronisation: a waiter not yet in line when the client closes is
            // refused with the same status; the pause lets most of them get in line.
            Thread.sleep(300);
            long closedAt = System.nanoTime();
            mc.close();
            for (Thread w : waiters) w.join(20_000);
            if (wrong.get() != null) throw new AssertionError(wrong.get());
            for (long at : endedAt) {
                assertTrue("a waiter ended " + (at - closedAt) / 1_000_000 + " ms after close",
                           at - closedAt < 3_000_000_000L);
            }
            holder[0].join(20_000);
            assertEquals("a connection opened after close", 1, accepted.get());
        } finally {
            synchronized (held) { for (Socket s : held) s.close(); }
        }
    }

    /**
     * The batch calls waiting for the one pooled connection when the client closes end with
     * the {@link ClientException} MCPOOL_CLOSED, as get, set and getMulti do (README: "calls
     * waiting for a pooled connection end at once with a ClientException (MCPOOL_CLOSED)").
     * Tester finding java2 3: every write batch threw a PartialBatchException "0 answered",
     * which is no ClientException, so a worker stopping on {@code catch (ClientException e)}
     * missed it.
     */
    @Test
    public void closeEndsTheBatchesWaitingForAConnectionWithClientException() throws Exception {
        List<Socket> held = new ArrayList<>();
        AtomicInteger accepted = new AtomicInteger();
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread[] holder = new Thread[1];
            Mcpool mc = occupied(silent, held, accepted, holder);
            java.util.Map<String, Object> two = new java.util.LinkedHashMap<>();
            two.put("c1", "v1");
            two.put("c2", "v2");
            java.util.Map<String, MemcachedItem> items = new java.util.LinkedHashMap<>();
            items.put("c1", new MemcachedItem("v1", 1));
            items.put("c2", new MemcachedItem("v2", 2));
            List<String> keys = java.util.Arrays.asList("c1", "c2");
            java.util.Map<String, Runnable> calls = new java.util.LinkedHashMap<>();
            calls.put("setMulti", () -> mc.setMulti(two, 0));
            calls.put("addMulti", () -> mc.addMulti(two, 0));
            calls.put("appendMulti", () -> mc.appendMulti(two));
            calls.put("casMultiResults", () -> mc.casMultiResults(items, 0));
            calls.put("deleteMulti", () -> mc.deleteMulti(keys));
            calls.put("touchMulti", () -> mc.touchMulti(keys, 10));
            calls.put("incrMulti", () -> mc.incrMulti(keys, 1));
            calls.put("decrMulti", () -> mc.decrMulti(keys, 1));
            calls.put("getMulti", () -> mc.getMulti(keys));
            calls.put("set", () -> mc.set("c3", "v3", 0));
            java.util.Map<String, Throwable> wrong = new java.util.concurrent.ConcurrentHashMap<>();
            List<Thread> waiters = new ArrayList<>();
            for (java.util.Map.Entry<String, Runnable> call : calls.entrySet()) {
                Thread t = new Thread(() -> {
                    try {
                        call.getValue().run();
                        wrong.put(call.getKey(), new AssertionError(call.getKey() + " got an answer"));
                    } catch (ClientException e) {
                        if (e.status() != 108 || !"MCPOOL_CLOSED".equals(e.statusName())) wrong.put(call.getKey(), e);
                    } catch (Throwable e) {
                        wrong.put(call.getKey(), e);
                    }
                });
                waiters.add(t);
                t.start();
            }
            // Every waiter inside its native call (past the Java side's closed check), then a
            // moment for each to get in line for the connection: the close must end waits.
            long until = System.nanoTime() + 10_000_000_000L;
            while (mc.nc.inFlight() < 1 + waiters.size() && System.nanoTime() < until) Thread.sleep(5);
            assertEquals(1 + waiters.size(), mc.nc.inFlight());
            Thread.sleep(300);
            mc.close();
            for (Thread w : waiters) w.join(20_000);
            for (Thread w : waiters) assertFalse("a waiter still running", w.isAlive());
            if (!wrong.isEmpty()) {
                AssertionError e = new AssertionError("not ClientException MCPOOL_CLOSED: " + wrong);
                for (Throwable t : wrong.values()) e.addSuppressed(t);
                throw e;
            }
            holder[0].join(20_000);
        } finally {
            synchronized (held) { for (Socket s : held) s.close(); }
        }
    }

    /** The decision, in the one place batch results become an exception: nothing answered
     * and every item MCPOOL_CLOSED is that ClientException; an answered item or another
     * error keeps the PartialBatchException, whose answers say what happened. */
    @Test
    public void aBatchRefusedAsAWholeByTheClosedClientIsNotPartial() {
        ClientException closed1 = new ClientException(108, "MCPOOL_CLOSED", "the client is closed");
        ClientException closed2 = new ClientException(108, "MCPOOL_CLOSED", "the client is closed");
        java.util.Map<String, McpoolException> allClosed = new java.util.LinkedHashMap<>();
        allClosed.put("a", closed1);
        allClosed.put("b", closed2);
        assertSame(closed1, Mcpool.batchFailure("setMulti", new java.util.LinkedHashMap<>(), allClosed));

        java.util.Map<String, Object> oneAnswered = new java.util.LinkedHashMap<>();
        oneAnswered.put("c", true);
        McpoolException partial = Mcpool.batchFailure("setMulti", oneAnswered, allClosed);
        assertTrue(partial instanceof PartialBatchException);
        assertEquals(oneAnswered, ((PartialBatchException) partial).answers());

        java.util.Map<String, McpoolException> mixed = new java.util.LinkedHashMap<>(allClosed);
        mixed.put("d", new ConnectionException(200, "MCPOOL_SERVER_DEAD", "server marked dead"));
        assertTrue(Mcpool.batchFailure("deleteMulti", new java.util.LinkedHashMap<>(), mixed)
                   instanceof PartialBatchException);

        java.util.Map<String, McpoolException> notClosed = new java.util.LinkedHashMap<>();
        notClosed.put("a", new ClientException(101, "MCPOOL_INVALID_KEY", "key too long"));
        assertTrue(Mcpool.batchFailure("setMulti", new java.util.LinkedHashMap<>(), notClosed)
                   instanceof PartialBatchException);
    }

    /** An empty batch on a closed client throws MCPOOL_CLOSED as every other call does,
     * although it needs no native call (tester finding retest33 7: it returned normally).
     * No server is needed: the client is closed before any call. */
    @Test
    public void anEmptyBatchOnAClosedClientThrowsClosed() {
        Mcpool mc = Mcpool.builder().servers("127.0.0.1:1").minIdle(0).build();
        mc.close();
        java.util.Map<String, Runnable> calls = new java.util.LinkedHashMap<>();
        java.util.List<String> none = new ArrayList<>();
        calls.put("getMulti", () -> mc.getMulti(none));
        calls.put("getsMulti", () -> mc.getsMulti(none));
        calls.put("gatMulti", () -> mc.gatMulti(10, none));
        calls.put("setMulti", () -> mc.setMulti(new java.util.HashMap<String, Object>(), 0));
        calls.put("setMultiNoreply", () -> mc.setMultiNoreply(new java.util.HashMap<>(), 0));
        calls.put("addMulti", () -> mc.addMulti(new java.util.HashMap<String, Object>(), 0));
        calls.put("casMulti", () -> mc.casMulti(new java.util.HashMap<>(), 0));
        calls.put("deleteMulti", () -> mc.deleteMulti(none));
        calls.put("touchMulti", () -> mc.touchMulti(none, 10));
        calls.put("incrMulti", () -> mc.incrMulti(none, 1));
        for (java.util.Map.Entry<String, Runnable> c : calls.entrySet()) {
            try {
                c.getValue().run();
                fail(c.getKey() + " of nothing returned on a closed client");
            } catch (ClientException e) {
                assertEquals(c.getKey(), "MCPOOL_CLOSED", e.statusName());
            }
        }
    }
}
