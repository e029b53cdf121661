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
    @Test
    public void closeEndsTheCallsWaitingForAConnection() throws Exception {
        AtomicInteger accepted = new AtomicInteger();
        List<Socket> held = new ArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
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
            Thread holder = new Thread(() -> {
                try { mc.get("held"); } catch (McpoolException expected) { /* its I/O timeout */ }
            });
            holder.start();
            long until = System.nanoTime() + 10_000_000_000L;
            while (accepted.get() < 1 && System.nanoTime() < until) Thread.sleep(5);
            assertEquals(1, accepted.get());
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
            holder.join(20_000);
            assertEquals("a connection opened after close", 1, accepted.get());
        } finally {
            synchronized (held) { for (Socket s : held) s.close(); }
        }
    }
}
