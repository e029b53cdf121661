package io.mcpool;

import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Owns one {@code mcpool_client} handle and frees it exactly once: on {@link #close()}, or
 * through a {@link Cleaner} when the owner became unreachable without being closed.
 *
 * <p>Every call brackets its native work with {@link #acquire()} / {@link #release()}: the
 * handle is freed only once it is closed <em>and</em> no call is in flight, so closing while
 * other threads still use the client makes their later calls fail with a
 * {@link ClientException} instead of touching freed memory.
 */
final class NativeClient implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    /** The state the cleaner holds: it must not refer to the NativeClient itself. */
    static final class State implements Runnable {
        final AtomicLong handle;
        final AtomicInteger users = new AtomicInteger();
        volatile boolean closed;
        final AtomicBoolean freed = new AtomicBoolean();

        State(long h) {
            handle = new AtomicLong(h);
        }

        void freeIfIdle() {
            if (closed && users.get() == 0) {
                long h = handle.getAndSet(0);
                if (h != 0 && freed.compareAndSet(false, true)) Native.clientFree(h);
            }
        }

        @Override
        public void run() { // close() or the cleaner; Cleanable.clean() runs this at most once
            closed = true;
            freeIfIdle();
        }
    }

    private final State state;
    private final Cleaner.Cleanable cleanable;

    NativeClient(Config cfg) {
        state = new State(cfg.buildClient());
        cleanable = CLEANER.register(this, state);
    }

    /** Starts a native call: returns the handle, or throws when the client is closed. */
    long acquire() {
        State s = state;
        s.users.incrementAndGet();
        if (s.closed) {
            release();
            throw new ClientException(Native.OK, "MCPOOL_CLOSED", "the client is closed");
        }
        return s.handle.get();
    }

    void release() {
        State s = state;
        if (s.users.decrementAndGet() == 0 && s.closed) s.freeIfIdle();
    }

    boolean isClosed() {
        return state.closed;
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
