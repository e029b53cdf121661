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

    NativeClient(Config cfg) {
        listener = cfg.listener;
        operations = cfg.operations;
        resolver = cfg.resolver;
        state = new State(cfg.buildClient());
        cleanable = CLEANER.register(this, state);
    }

    /** This thread's stripe (the same for the acquire and the release of one call). */
    @SuppressWarnings("deprecation") // Thread.getId: threadId() is Java 19+
    private static int stripe() {
        long id = Thread.currentThread().getId();
        return ((int) (id ^ (id >>> 32)) & (STRIPES - 1)) * PAD;
    }

    /** Starts a native call: returns the handle, or throws when the client is closed. */
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
