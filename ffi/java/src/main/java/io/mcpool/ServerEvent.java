package io.mcpool;

/**
 * A server state change, as the core reports it: a server marked dead after too many
 * consecutive failures ({@link Kind#DOWN}), or answering again ({@link Kind#UP}). Delivered
 * to the {@link ServerEventListener} given to {@link Mcpool.Builder#onServerEvent}.
 */
public final class ServerEvent {
    /** What happened. */
    public enum Kind {
        /** Marked dead: {@link #failures()} consecutive failures; retried after {@link #retryInMillis()}. */
        DOWN,
        /** Answering again after being marked dead. */
        UP,
        /** A kind this version of the binding has no name for (from a newer core). */
        OTHER
    }

    private final Kind kind;
    private final String server;
    private final int failures;
    private final long retryInMillis;

    ServerEvent(int kind, String server, int failures, long retryInMillis) {
        this.kind = kind == 0 ? Kind.DOWN : kind == 1 ? Kind.UP : Kind.OTHER;
        this.server = server;
        this.failures = failures;
        this.retryInMillis = retryInMillis;
    }

    /** Whether the server was marked dead or answers again. */
    public Kind kind() { return kind; }
    /** The server's {@code host:port} label, as configured. */
    public String server() { return server; }
    /** For DOWN: the consecutive failures so far (0 otherwise). */
    public int failures() { return failures; }
    /** For DOWN: milliseconds until the server is tried again (0 otherwise). */
    public long retryInMillis() { return retryInMillis; }

    @Override
    public String toString() {
        return "ServerEvent(" + kind + ", " + server + (kind == Kind.DOWN ? ", failures " + failures
            + ", retry in " + retryInMillis + " ms" : "") + ")";
    }
}
