package io.mcpool;

import static org.junit.Assert.*;

import java.io.File;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.Test;

/**
 * A listener that refers back to its client (a lambda using the client, the common case) must
 * not keep the client alive: a client dropped unclosed is freed by the Cleaner once a GC finds
 * it unreachable, its sockets closed, listeners or not (tester finding soak 2: the JNI layer
 * held the listener through a strong global reference, a GC root, so such a client was never
 * freed). And while the client is reachable its listeners keep firing, GCs or not.
 */
public class ListenerCycleTest extends ServerTestBase {
    /** How many clients of each kind are dropped. */
    static final int N = 16;
    /** The bound on every wait for the GC and the Cleaner. */
    static final long WAIT_NANOS = 10_000_000_000L;

    static int fds() {
        return new File("/proc/self/fd").list().length;
    }

    /** A loopback port nothing listens on (bound, then closed). */
    static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    /** What a dropped client leaves for the test: its native state and a weak reference to it. */
    static final class Dropped {
        final NativeClient.State state;
        final WeakReference<Mcpool> ref;

        Dropped(Mcpool mc, ReferenceQueue<Mcpool> q) throws Exception {
            state = McpoolTest.stateOf(mc.nc);
            ref = new WeakReference<>(mc, q);
        }
    }

    /** A client whose listener (operation, event, or both) uses the client itself, used once
     * (a connection open) and dropped unclosed: built in its own frame, so nothing on the
     * test's stack refers to it once this returns. */
    static Dropped dropCyclic(boolean operation, boolean event, AtomicInteger fired, ReferenceQueue<Mcpool> q)
            throws Exception {
        Mcpool[] self = new Mcpool[1];
        Mcpool.Builder b = Mcpool.builder().servers(server.addr()).minIdle(0);
        if (operation) b.onOperation(r -> {
            if (self[0] != null && !self[0].isClosed()) fired.incrementAndGet();
        });
        if (event) b.onServerEvent(e -> {
            if (self[0] != null) self[0].serverStates();
        });
        self[0] = b.build();
        assertTrue(self[0].set("lc:k", "v"));
        return new Dropped(self[0], q);
    }

    /** GCs until done holds, waiting on the reference queue between GCs (a weak reference
     * cleared wakes it at once); false after WAIT_NANOS. */
    static boolean gcUntil(BooleanSupplier done, ReferenceQueue<?> q) throws InterruptedException {
        long t0 = System.nanoTime();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - t0 > WAIT_NANOS) return false;
            System.gc();
            q.remove(50);
        }
        return true;
    }

    @Test
    public void droppedClientsWhoseListenersUseThemAreFreed() throws Exception {
        ReferenceQueue<Mcpool> q = new ReferenceQueue<>();
        AtomicInteger fired = new AtomicInteger();
        List<Dropped> dropped = new ArrayList<>();
        gcUntil(() -> true, q); // the earlier tests' garbage first
        int before = fds();
        for (int i = 0; i < N; i++) {
            dropped.add(dropCyclic(true, false, fired, q));
            dropped.add(dropCyclic(false, true, fired, q));
            dropped.add(dropCyclic(true, true, fired, q));
        }
        int open = fds();
        // a GC during the loop may already have freed a dropped client (and closed its
        // connection): counted after the fds, so a free before the count is in it too; and an
        // fd of an earlier test may close meanwhile (its connection's idle end, a Cleaner):
        // two of slack, as for the count after (a CI run under load was one short)
        long freedEarly = dropped.stream().filter(d -> d.state.freed.get()).count();
        assertTrue("each client not yet freed holds a connection: " + before + " fds before, " + open
            + " after, " + freedEarly + " freed already", open + 2 >= before + 3 * N - freedEarly);
        assertEquals("the operation listeners fired while their clients were alive", 2 * N, fired.get());
        boolean freed = gcUntil(() -> dropped.stream().allMatch(d -> d.state.freed.get()), q);
        long collected = dropped.stream().filter(d -> d.ref.get() == null).count();
        long nfreed = dropped.stream().filter(d -> d.state.freed.get()).count();
        assertTrue("dropped clients whose listener uses the client: " + collected + " of " + dropped.size()
            + " collected, " + nfreed + " freed within 10 s", freed);
        for (Dropped d : dropped) {
            assertNull(d.ref.get());
            assertEquals(1, d.state.frees.get());
        }
        // their sockets are closed with them (the memcached server is another process)
        assertTrue("fds " + before + " before, " + open + " with the clients, " + fds() + " after",
            gcUntil(() -> fds() <= before + 2, q));
    }

    /** The listeners belong to the client: while it is reachable a GC does not take them (the
     * native side holds them weakly), and a listener may use its client. */
    @Test
    public void listenersFireWhileTheClientIsAliveAcrossGcs() throws Exception {
        String dead = "127.0.0.1:" + closedPort();
        AtomicInteger ops = new AtomicInteger();
        List<ServerEvent> events = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Integer> seenFromListener = java.util.Collections.synchronizedList(new ArrayList<>());
        Mcpool[] self = new Mcpool[1];
        // listeners made here, kept by nothing but the client
        self[0] = Mcpool.builder().servers(server.addr(), dead).connectTimeoutMillis(500).minIdle(0)
            .retryTimeoutMillis(60_000).retryTimeoutMaxMillis(60_000)
            .onOperation(r -> {
                if (self[0] != null) ops.incrementAndGet();
            })
            .onServerEvent(e -> {
                events.add(e);
                seenFromListener.add(self[0].serverStates().size()); // the client, from its listener
            })
            .build();
        try (Mcpool mc = self[0]) {
            String live = null, down = null;
            for (int i = 0; i < 200 && (live == null || down == null); i++) {
                String k = "lc:alive:" + i;
                if (mc.serverIndexFor(k) == 0) live = live == null ? k : live;
                else down = down == null ? k : down;
            }
            assertNotNull(live);
            assertNotNull(down);
            for (int round = 0; round < 5; round++) {
                ReferenceQueue<Object> q = new ReferenceQueue<>();
                WeakReference<Object> garbage = new WeakReference<>(new Object(), q);
                assertTrue(gcUntil(() -> garbage.get() == null, q)); // a GC did run
                int had = ops.get();
                assertTrue(mc.set(live, "v" + round));
                assertEquals("v" + round, mc.get(live));
                assertEquals("round " + round, had + 2, ops.get());
            }
            for (int i = 0; i < 5 && events.isEmpty(); i++) {
                try {
                    mc.get(down);
                } catch (ConnectionException e) {
                    // expected until the server is marked dead
                }
            }
            assertEquals(events.toString(), 1, events.size());
            assertEquals(ServerEvent.Kind.DOWN, events.get(0).kind());
            assertEquals(dead, events.get(0).server());
            assertEquals(List.of(2), seenFromListener);
            assertEquals(0, mc.operationListenerErrors());
        }
        assertTrue(self[0].nc.isFreed());
    }

    /** Two clients from one builder share its listener: dropping one (freed, its native
     * reference released) leaves the other's working. */
    @Test
    public void aSharedListenerOutlivesOneOfItsClients() throws Exception {
        AtomicInteger ops = new AtomicInteger();
        Mcpool.Builder b = Mcpool.builder().servers(server.addr()).minIdle(0).onOperation(r -> ops.incrementAndGet());
        ReferenceQueue<Mcpool> q = new ReferenceQueue<>();
        Dropped gone = dropOne(b, q);
        try (Mcpool kept = b.build()) {
            assertTrue(gcUntil(() -> gone.state.freed.get(), q));
            int had = ops.get();
            assertTrue(kept.set("lc:shared", "v"));
            assertEquals(had + 1, ops.get());
        }
    }

    static Dropped dropOne(Mcpool.Builder b, ReferenceQueue<Mcpool> q) throws Exception {
        Mcpool mc = b.build();
        assertTrue(mc.set("lc:one", "v"));
        return new Dropped(mc, q);
    }
}
