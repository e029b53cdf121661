package io.mcpool;

import static org.junit.Assert.*;

import java.io.IOException;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.Test;

/**
 * {@link Mcpool.Builder#resolver}: the core's resolver hook (C
 * {@code mcpool_config_set_resolver_owned}) from Java (tester finding leaks 2: only C and
 * Python had it; Java refused {@code resolver} as an unknown option). A name is placed on a
 * real memcached through the addresses the resolver answers; every way of not answering fails
 * the call with a {@link ConnectionException} quoting the resolver's reason; it runs on the
 * library's thread, never the caller's; and neither the resolver nor the native block that
 * reaches it outlives its clients (the block is freed by the library, the resolver collected).
 */
public class ResolverTest extends ServerTestBase {
    /** The bound on every wait for the GC, the Cleaner or the library. */
    static final long WAIT_NANOS = 10_000_000_000L;

    /** A name nothing else resolves ({@code .test} is reserved), on the test server's port. */
    static String name(String host) {
        return host + ".test:" + server.port;
    }

    /** GCs until done holds, waiting on the reference queue between GCs (a reference cleared
     * wakes it at once); false after WAIT_NANOS. */
    static boolean gcUntil(BooleanSupplier done, ReferenceQueue<?> q) throws InterruptedException {
        long t0 = System.nanoTime();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - t0 > WAIT_NANOS) return false;
            System.gc();
            q.remove(20);
        }
        return true;
    }

    /** Awaits the library's frees of resolver blocks (no GC needed: the library frees a block
     * once its client is freed and its last call returned, possibly on its own thread). */
    static boolean blocksAtMost(long n) throws InterruptedException {
        return gcUntil(() -> Native.resolverBlocks() <= n, new ReferenceQueue<>());
    }

    /** A name placed on a real memcached through the resolver's answer: asked with the host as
     * written and the port, on a thread of the library's (not the caller's), attached for the
     * call and detached after it. */
    @Test
    public void aNameIsPlacedOnTheAddressesTheResolverAnswers() throws Exception {
        List<String> asked = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = Collections.synchronizedList(new ArrayList<>());
        Thread caller = Thread.currentThread();
        Resolver r = (host, port) -> {
            asked.add(host + " " + port);
            threads.add(Thread.currentThread());
            return List.of("127.0.0.1");
        };
        try (Mcpool mc = Mcpool.builder().servers(name("cache.service")).minIdle(0).resolver(r).build()) {
            assertTrue(mc.set("res:k", "v"));
            assertEquals("v", mc.get("res:k"));
        }
        try (Mcpool plain = Mcpool.builder().servers(server.addr()).build()) {
            assertEquals("the value is on the server the resolver named", "v", plain.get("res:k"));
        }
        assertFalse(asked.isEmpty());
        for (String a : asked) assertEquals("cache.service.test " + server.port, a);
        for (Thread t : threads) {
            assertNotSame("the resolver ran on the caller's thread", caller, t);
            assertEquals("mcpool-resolve", t.getName());
            assertTrue(t.isDaemon());
            t.join(10_000); // detached after the call: its Thread ends
            assertFalse("the library's thread stays attached to the JVM after the call", t.isAlive());
        }
    }

    /** Only names reach the resolver: an IP literal never does. */
    @Test
    public void anIpLiteralNeverReachesTheResolver() {
        AtomicInteger calls = new AtomicInteger();
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).minIdle(0)
                .resolver((h, p) -> {
                    calls.incrementAndGet();
                    return List.of("127.0.0.1");
                }).build()) {
            assertTrue(mc.set("res:literal", "v"));
            assertEquals("v", mc.get("res:literal"));
        }
        assertEquals(0, calls.get());
    }

    /** The answer's addresses are tried in order: a first one nothing listens on, then the
     * server (the most an answer may hold: 64). */
    @Test
    public void theAddressesAreTriedInOrder() {
        List<String> answer = new ArrayList<>(Collections.nCopies(63, "127.0.0.1"));
        answer.add(0, "127.0.0.2"); // loopback too, but memcached listens on 127.0.0.1 only
        try (Mcpool mc = Mcpool.builder().servers(name("ordered")).minIdle(0).connectTimeoutMillis(2000)
                .resolver((h, p) -> answer).build()) {
            assertEquals(64, answer.size());
            assertTrue(mc.set("res:ordered", "v"));
            assertEquals("v", mc.get("res:ordered"));
        }
    }

    /** The failure of a get through a client whose one server's name {@code r} answers: a
     * ConnectionException (not a timeout) whose message quotes {@code says}. */
    static ConnectionException failure(Resolver r, String says) {
        try (Mcpool mc = Mcpool.builder().servers(name("nowhere")).minIdle(0).connectTimeoutMillis(2000)
                .resolver(r).build()) {
            mc.get("res:k");
            fail("a get through a resolver that answers no address succeeded (" + says + ")");
            return null;
        } catch (ConnectionException e) {
            assertFalse(e.toString(), e instanceof TimeoutException);
            assertEquals(e.toString(), "MCPOOL_IO", e.statusName());
            assertTrue(e.getMessage() + " does not say " + says, e.getMessage().contains(says));
            assertTrue(e.getMessage(), e.getMessage().contains("nowhere.test"));
            assertFalse(e.getMessage(), e.getMessage().contains("resolver callback returned"));
            return e;
        }
    }

    @Test
    public void aResolverThatThrowsFailsTheCallQuotingTheException() {
        failure((h, p) -> {
            throw new IOException("discovery is down");
        }, "the resolver threw java.io.IOException: discovery is down");
        failure((h, p) -> {
            throw new IllegalStateException();
        }, "the resolver threw java.lang.IllegalStateException");
        // an Error too: nothing the resolver throws reaches the library
        failure((h, p) -> {
            throw new AssertionError("boom");
        }, "the resolver threw java.lang.AssertionError: boom");
    }

    /** A reason longer than the 1024 bytes the core takes is cut at a character boundary. */
    @Test
    public void aLongReasonIsCutNotDropped() {
        String text = String.join("", Collections.nCopies(3000, "é")); // 2 bytes each
        ConnectionException e = failure((h, p) -> {
            throw new IOException(text);
        }, "the resolver threw java.io.IOException: éé");
        assertTrue(e.getMessage(), e.getMessage().contains("é..."));
        assertFalse(e.getMessage(), e.getMessage().contains("\uFFFD"));
        byte[] reason = Native.reasonBytes("x" + text);
        assertEquals(1024, reason.length); // "x", 510 é (1020 bytes), "..."
    }

    @Test
    public void aResolverThatAnswersNullFailsTheCall() {
        failure((h, p) -> null, "the resolver answered null");
    }

    @Test
    public void aResolverThatAnswersNoAddressFailsTheCall() {
        failure((h, p) -> List.of(), "the resolver answered no address");
    }

    @Test
    public void aResolverThatAnswersSomethingElseThanAnIpFailsTheCall() {
        failure((h, p) -> List.of("not-an-ip"), "the resolver answered \"not-an-ip\": ");
        failure((h, p) -> List.of("127.0.0.1:11211"), "the resolver answered \"127.0.0.1:11211\": ");
        failure((h, p) -> Arrays.asList("127.0.0.1", null),
            "the resolver answered null among its addresses (item 1), not an IP literal as a String");
        @SuppressWarnings({"unchecked", "rawtypes"})
        Resolver raw = (h, p) -> (List) List.of(127001);
        failure(raw, "the resolver answered a java.lang.Integer among its addresses (item 0)");
        failure((h, p) -> Collections.nCopies(65, "127.0.0.1"),
            "the resolver answered 65 addresses, more than the 64 an answer may hold");
    }

    /** With {@code resolve_interval} the name is resolved again in the background, on the
     * library's thread, while the calls go on. */
    @Test
    public void resolveIntervalAsksAgain() throws Exception {
        CountDownLatch thrice = new CountDownLatch(3);
        Thread caller = Thread.currentThread();
        AtomicReference<Thread> onCaller = new AtomicReference<>();
        try (Mcpool mc = Mcpool.builder().servers(name("interval")).minIdle(0).option("resolve_interval", "20ms")
                .resolver((h, p) -> {
                    if (Thread.currentThread() == caller) onCaller.set(caller);
                    thrice.countDown();
                    return List.of("127.0.0.1");
                }).build()) {
            long t0 = System.nanoTime();
            // each call checks a connection out and in, which starts a due re-resolution
            while (!thrice.await(10, TimeUnit.MILLISECONDS)) {
                assertTrue("the resolver was asked " + (3 - thrice.getCount()) + " times in 10 s",
                    System.nanoTime() - t0 < WAIT_NANOS);
                assertTrue(mc.set("res:interval", "v"));
            }
        }
        assertNull("the resolver ran on the caller's thread", onCaller.get());
    }

    /** {@code resolver(null)} removes the one set: the system's resolver answers then, and no
     * native block is made. */
    @Test
    public void aNullResolverRemovesTheOneSet() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        assertTrue(blocksAtMost(0));
        try (Mcpool mc = Mcpool.builder().servers("localhost:" + server.port).minIdle(0)
                .resolver((h, p) -> {
                    calls.incrementAndGet();
                    return List.of("127.0.0.1");
                })
                .resolver(null).build()) {
            assertEquals(0, Native.resolverBlocks());
            assertTrue(mc.set("res:null", "v"));
        }
        assertEquals(0, calls.get());
    }

    /** One resolver, two clients of one builder: closing one leaves the other's working. */
    @Test
    public void aSharedResolverOutlivesOneOfItsClients() {
        AtomicInteger calls = new AtomicInteger();
        Mcpool.Builder b = Mcpool.builder().servers(name("shared")).minIdle(0).resolver((h, p) -> {
            calls.incrementAndGet();
            return List.of("127.0.0.1");
        });
        try (Mcpool kept = b.build()) {
            try (Mcpool gone = b.build()) {
                assertTrue(gone.set("res:shared", "v"));
            }
            kept.disconnectAll(); // the next call connects: asks the resolver again
            int had = calls.get();
            assertEquals("v", kept.get("res:shared"));
            assertTrue(calls.get() > had);
        }
    }

    /** A client built with a fresh resolver, used once (the resolver asked) and closed, in a
     * frame of its own: only the weak reference returned is left. */
    static WeakReference<Resolver> useAndClose(int i, ReferenceQueue<Resolver> q) {
        // capturing i: a lambda that captures nothing is one shared instance, never collected
        Resolver r = (h, p) -> List.of(i >= 0 ? "127.0.0.1" : "::1");
        try (Mcpool mc = Mcpool.builder().servers(name("many")).minIdle(0).resolver(r).build()) {
            assertTrue(mc.set("res:many:" + i, "v"));
        }
        return new WeakReference<>(r, q);
    }

    /** Clients built and closed many times with a resolver leave nothing behind: each native
     * block (the JNI reference to the resolver) is freed by the library, and the resolvers are
     * collected. While clients are open, each holds exactly its one block. */
    @Test
    public void clientsWithAResolverLeaveNoReferenceBehind() throws Exception {
        assertTrue("resolver blocks of earlier tests still held: " + Native.resolverBlocks(), blocksAtMost(0));
        List<Mcpool> open = new ArrayList<>();
        try {
            for (int i = 0; i < 10; i++) {
                open.add(Mcpool.builder().servers(name("open")).minIdle(0).resolver((h, p) -> List.of("127.0.0.1"))
                    .build());
            }
            assertTrue(open.get(0).set("res:open", "v"));
            assertEquals("one block per open client (the configuration's share freed at build)",
                10, Native.resolverBlocks());
        } finally {
            for (Mcpool mc : open) mc.close();
        }
        assertTrue("blocks of closed clients: " + Native.resolverBlocks(), blocksAtMost(0));
        // a configuration the core refuses at build (the block made, then no client) leaves no
        // block either
        for (int i = 0; i < 10; i++) {
            try {
                Mcpool.builder().resolver((h, p) -> List.of("127.0.0.1")).build().close();
                fail("a client without servers was built");
            } catch (ConfigurationException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("no servers"));
            }
        }
        assertTrue("blocks of refused configurations: " + Native.resolverBlocks(), blocksAtMost(0));
        ReferenceQueue<Resolver> q = new ReferenceQueue<>();
        List<WeakReference<Resolver>> refs = new ArrayList<>();
        for (int i = 0; i < 200; i++) refs.add(useAndClose(i, q));
        assertTrue("blocks left by 200 closed clients: " + Native.resolverBlocks(), blocksAtMost(0));
        boolean collected = gcUntil(() -> refs.stream().allMatch(w -> w.get() == null), q);
        assertTrue(refs.stream().filter(w -> w.get() != null).count() + " of 200 resolvers still reachable",
            collected);
    }

    /** A resolver still running when its client is closed: the caller's call ends at its
     * connect timeout, the client is freed at close, and the library frees the block (the
     * resolver's reference) only once the stalled call has returned, never under it. */
    @Test
    public void aStalledResolverKeepsItsBlockUntilItReturns() throws Exception {
        assertTrue("resolver blocks of earlier tests still held: " + Native.resolverBlocks(), blocksAtMost(0));
        CountDownLatch entered = new CountDownLatch(1), release = new CountDownLatch(1);
        AtomicReference<Thread> ran = new AtomicReference<>();
        Resolver r = (h, p) -> {
            ran.set(Thread.currentThread());
            entered.countDown();
            assertTrue(release.await(WAIT_NANOS, TimeUnit.NANOSECONDS));
            return List.of("127.0.0.1");
        };
        Mcpool mc = Mcpool.builder().servers(name("stalled")).minIdle(0).connectTimeoutMillis(300).resolver(r).build();
        try {
            mc.get("res:stalled");
            fail("a get whose resolver stalls succeeded");
        } catch (TimeoutException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("stalled.test"));
        }
        assertTrue(entered.await(10, TimeUnit.SECONDS));
        mc.close();
        assertTrue(mc.nc.isFreed());
        assertEquals("the running resolver call still holds its block", 1, Native.resolverBlocks());
        release.countDown();
        assertTrue("the block once the stalled call returned: " + Native.resolverBlocks(), blocksAtMost(0));
        ran.get().join(10_000);
        assertFalse(ran.get().isAlive());
    }

    /** What a client dropped unclosed leaves for the test. */
    static final class Dropped {
        final NativeClient.State state;
        final WeakReference<Mcpool> client;
        final WeakReference<Resolver> resolver;

        Dropped(Mcpool mc, Resolver r, ReferenceQueue<Object> q) throws Exception {
            state = McpoolTest.stateOf(mc.nc);
            client = new WeakReference<>(mc, q);
            resolver = new WeakReference<>(r, q);
        }
    }

    /** A client whose resolver refers to the client, used once and dropped unclosed, in a
     * frame of its own. */
    static Dropped dropCyclic(AtomicInteger calls, ReferenceQueue<Object> q) throws Exception {
        Mcpool[] self = new Mcpool[1];
        Resolver r = (h, p) -> {
            if (self[0] != null) calls.incrementAndGet(); // refers to its client
            return List.of("127.0.0.1");
        };
        self[0] = Mcpool.builder().servers(name("cycle")).minIdle(0).resolver(r).build();
        assertTrue(self[0].set("res:cycle", "v"));
        return new Dropped(self[0], r, q);
    }

    /** A resolver that refers to its client keeps nothing alive (the native side reaches it
     * weakly, as the listeners): the Cleaner frees a client dropped unclosed, and the library
     * then frees its block. */
    @Test
    public void aDroppedClientItsResolverRefersToIsFreed() throws Exception {
        assertTrue("resolver blocks of earlier tests still held: " + Native.resolverBlocks(), blocksAtMost(0));
        AtomicInteger calls = new AtomicInteger();
        ReferenceQueue<Object> q = new ReferenceQueue<>();
        List<Dropped> dropped = new ArrayList<>();
        for (int i = 0; i < 8; i++) dropped.add(dropCyclic(calls, q));
        assertEquals(8, calls.get());
        boolean freed = gcUntil(() -> dropped.stream().allMatch(d -> d.state.freed.get()
            && d.client.get() == null && d.resolver.get() == null), q);
        assertTrue(dropped.stream().filter(d -> d.state.freed.get()).count() + " of 8 dropped clients freed", freed);
        for (Dropped d : dropped) assertEquals(1, d.state.frees.get());
        assertTrue("blocks of the dropped clients: " + Native.resolverBlocks(), blocksAtMost(0));
    }
}
