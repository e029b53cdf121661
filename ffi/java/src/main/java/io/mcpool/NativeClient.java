package io.mcpool;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Owns one {@code mcpool_client} handle and frees it exactly once: on {@link #close()}, or
 * through a {@link Cleaner} when the owner became unreachable without being closed.
 *
 * <p>Every call brackets its native work with {@link #acquire()} / {@link #release()}: the
 * handle is freed only once it is closed <em>and</em> no call is in flight, so closing while
 * other threads still use the client makes their later calls fail with a
 * {@link ClientException} instead of touching freed memory.
 *
 * <p>The count of calls in flight is striped: each thread counts in its own cache line
 * (chosen by thread id), so threads sharing the client do not all increment and decrement
 * one shared counter twice per call. The handshake with {@code close} is the usual one for
 * sequentially consistent operations: a caller increments, then reads {@code closed}; the
 * closer writes {@code closed}, then sums the stripes. Either the caller sees the client
 * closed (and backs out), or the closer sees the caller's count (and leaves the free to the
 * last caller to leave, who sums again).
 *
 * <p>The listeners ({@code onServerEvent}, {@code onOperation}) and the {@link Resolver} are
 * held strongly here and only weakly by the native side (JNI weak global references): a
 * listener (or resolver) that refers back to its
 * client (a lambda using the client) then keeps nothing alive, and the Cleaner frees a client
 * dropped unclosed. A strong global reference would be a GC root reaching the client through
 * the listener: never freed. The Cleaner's {@link State} holds neither the listeners nor this
 * object, only the handles.
 *
 * <p>A call made once the client is closed is refused by the core, in its words, as on every
 * other surface: C's {@code mcpool_last_error_message}, Python's and Perl's errors name the
 * call and the key and say nothing was sent ({@code get "x": the client is closed: nothing
 * was sent (close() was called on it)}). The handle itself is freed at close, so such a call
 * ({@link #acquireCommand()}) runs on a stand-in: a client of the same configuration, closed
 * before its first use and never connected ({@link Config#buildClosed()}), made on the
 * first call after the close and freed by the {@link Cleaner} with this object (tester
 * finding retest44 2: Java said only "the client is closed", a message of its own).
 */
final class NativeClient implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /** Longs per stripe: 16 (128 bytes) keeps stripes off each other's and the adjacent line. */
    private static final int PAD = 16;
    /** Stripes: a power of two, about twice the CPUs (at least 8, at most 256). */
    static final int STRIPES = stripes(Runtime.getRuntime().availableProcessors());

    static int stripes(int cpus) {
        int n = 8;
        while (n < 2 * cpus && n < 256) n <<= 1;
        return n;
    }

    /** The state the cleaner holds: it must not refer to the NativeClient itself, nor to
     * anything that may (a listener): the Cleaner holds it strongly until it runs. */
    static final class State implements Runnable {
        final AtomicLong handle;
        /** The event listener's weak global reference (0: none), released after the client. */
        final long listenerRef;
        /** The operation listener's weak global reference (0: none), released after the client. */
        final long operationRef;
        /** Calls in flight, striped; stripe i at index i * PAD. */
        final AtomicLongArray users = new AtomicLongArray(STRIPES * PAD);
        volatile boolean closed;
        /** The client's metrics as they were when it closed ({Native.snapshot, the Prometheus
         * text}), for reads after close (tester finding metrics2 6: a shutdown hook that
         * closes the client, then exports its final counters, as on every other surface):
         * taken before {@link #closed} is set, and again just before the handle is freed,
         * once the calls in flight have ended. Null while the client is open. */
        volatile Object[] finalMetrics;
        final AtomicBoolean freed = new AtomicBoolean();
        /** How many times the handle was given to clientFree (for tests: at most 1). */
        final AtomicInteger frees = new AtomicInteger();

        State(long[] built) {
            handle = new AtomicLong(built[0]);
            listenerRef = built[1];
            operationRef = built.length > 2 ? built[2] : 0;
        }

        long inFlight() {
            long n = 0;
            for (int i = 0; i < STRIPES; i++) n += users.get(i * PAD);
            return n;
        }

        void freeIfIdle() {
            if (closed && inFlight() == 0) {
                long h = handle.getAndSet(0);
                if (h != 0 && freed.compareAndSet(false, true)) {
                    keepMetrics(h);
                    frees.incrementAndGet();
                    Native.clientFree(h);
                    Native.releaseRef(listenerRef);
                    Native.releaseRef(operationRef);
                }
            }
        }

        /** Keeps the metrics of the live handle h in {@link #finalMetrics} (best effort: a
         * failure, such as an OutOfMemoryError, keeps the earlier copy and never stops the
         * close or the free). */
        void keepMetrics(long h) {
            try {
                finalMetrics = new Object[] {Native.snapshot(h), Native.metricsPrometheus(h)};
            } catch (Throwable t) {
                // the copy taken at close stands
            }
        }

        @Override
        public void run() { // close() or the cleaner; Cleanable.clean() runs this at most once
            // Counted as a call of its own while it closes the native client, so that no
            // thread leaving meanwhile frees the handle under it.
            int i = stripe();
            users.getAndIncrement(i);
            long h = handle.get();
            if (h != 0) keepMetrics(h); // before closed: a reader that sees closed sees it
            closed = true;
            // Calls in line for a pooled connection end now with MCPOOL_CLOSED, and none
            // opens a connection (tester finding java 1: they waited out the pool timeout).
            if (h != 0) Native.clientClose(h);
            leave(this, i);
        }
    }

    private final State state;
    private final Cleaner.Cleanable cleanable;
    /** The listeners and the resolver the native side holds weakly: reachable exactly as long
     * as this client (never read: they are here for the GC). The resolver's weak reference is
     * the library's to release (once no resolver call can start or is running), not
     * {@link State}'s. */
    private final Object listener, operations, resolver;
    /** The configuration the client was built with (no listener, no resolver), for the
     * closed stand-in ({@link #acquireCommand()}). */
    private final Config config;
    /** The closed stand-in's handle (0: not made, or it could not be made), shared with the
     * {@link Cleaner} action that frees it; made at most once ({@link #standInTried}). */
    private final AtomicLong standIn = new AtomicLong();
    private volatile boolean standInTried;

    NativeClient(Config cfg) {
        listener = cfg.listener;
        operations = cfg.operations;
        resolver = cfg.resolver;
        config = cfg.copy();
        config.listener = null;
        config.operations = null;
        config.resolver = null;
        state = new State(cfg.buildClient());
        cleanable = CLEANER.register(this, state);
    }

    /** Frees the closed stand-in once its client is unreachable (it holds neither). */
    private static final class FreeStandIn implements Runnable {
        private final AtomicLong handle;

        FreeStandIn(AtomicLong handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            long h = handle.getAndSet(0);
            if (h != 0) Native.clientFree(h);
        }
    }

    /** This thread's stripe (the same for the acquire and the release of one call). */
    @SuppressWarnings("deprecation") // Thread.getId: threadId() is Java 19+
    private static int stripe() {
        long id = Thread.currentThread().getId();
        return ((int) (id ^ (id >>> 32)) & (STRIPES - 1)) * PAD;
    }

    /** Starts a native call: returns the handle, or throws MCPOOL_CLOSED when the client is
     * closed (a call the core answers on a closed client, or that reads the client itself:
     * its metrics, its servers, disconnectAll; a command takes {@link #acquireCommand()}). */
    long acquire() {
        State s = state;
        int i = stripe();
        s.users.getAndIncrement(i);
        if (s.closed) {
            leave(s, i);
            throw closed();
        }
        return s.handle.get();
    }

    /**
     * Starts a native call that the core refuses, with its message, on a closed client (a
     * command: every call on keys, and flush_all, stats, version, noop, set_servers): returns
     * the handle while the client is open, and once it is closed the closed stand-in, on which
     * the call ends as it would on the closed client itself: {@code MCPOOL_CLOSED} in the
     * core's words, naming the call and the key ({@code get "x": the client is closed:
     * nothing was sent (close() was called on it)}), or the refusal of an argument the core
     * checks first (a key the protocol cannot send), as C answers on a closed client. Only
     * when the stand-in cannot be made (a TLS file gone since the build) is the call refused
     * here, as {@link #acquire()}. Either way {@link #release()} ends it.
     */
    long acquireCommand() {
        State s = state;
        int i = stripe();
        s.users.getAndIncrement(i);
        if (!s.closed) return s.handle.get();
        long h;
        try {
            h = standIn();
        } catch (RuntimeException | Error e) {
            leave(s, i);
            throw e;
        }
        if (h == 0) {
            leave(s, i);
            throw closed();
        }
        return h; // counted until release(), as any call: the client's own handle is freed then
    }

    /** The closed stand-in, made on first use (0 when it could not be made). */
    private long standIn() {
        if (standInTried) return standIn.get();
        synchronized (standIn) {
            if (!standInTried) {
                try {
                    standIn.set(config.buildClosed());
                    CLEANER.register(this, new FreeStandIn(standIn));
                } catch (McpoolException e) {
                    // the configuration no longer builds (a TLS file gone): refused here
                } finally {
                    standInTried = true;
                }
            }
            return standIn.get();
        }
    }

    /** True once the closed stand-in was made (for tests). */
    boolean hasStandIn() {
        return standIn.get() != 0;
    }

    /** Throws MCPOOL_CLOSED when the client is closed: for a call that needs no native call
     * (an empty batch), which a closed client refuses as it refuses every other (tester
     * finding retest33 7). */
    void ensureOpen() {
        if (state.closed) throw closed();
    }

    private static ClientException closed() {
        return new ClientException(Native.CLOSED, "MCPOOL_CLOSED", "the client is closed");
    }

    void release() {
        leave(state, stripe());
        // This client (and so its listeners, which the native callbacks reach weakly) stays
        // reachable until the call that acquired it returned, even when its caller dropped it.
        Reference.reachabilityFence(this);
    }

    private static void leave(State s, int i) {
        s.users.getAndDecrement(i);
        if (s.closed) s.freeIfIdle();
    }

    /** Calls in flight (for tests). */
    long inFlight() {
        return state.inFlight();
    }

    boolean isClosed() {
        return state.closed;
    }

    /** The metrics kept when the client closed ({Native.snapshot, the Prometheus text}), or
     * null while it is open. */
    Object[] finalMetrics() {
        return state.closed ? state.finalMetrics : null;
    }

    /** True once the native handle has been freed (for tests). */
    boolean isFreed() {
        return state.freed.get();
    }

    @Override
    public void close() {
        cleanable.clean();
    }
}
