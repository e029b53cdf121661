package io.mcpool;

/** One server's health as the core sees it ({@link Mcpool#serverStates()}), read without I/O. */
public final class ServerState {
    private final String server;
    private final boolean alive;
    private final int failures;
    private final long retryInMillis;

    ServerState(String server, boolean alive, int failures, long retryInMillis) {
        this.server = server;
        this.alive = alive;
        this.failures = failures;
        this.retryInMillis = retryInMillis;
    }

    /** The {@code host:port} label, as configured. */
    public String server() { return server; }
    /** Whether calls may go to it now (false while it is marked dead). */
    public boolean alive() { return alive; }
    /** Its consecutive failures. */
    public int failures() { return failures; }
    /** While marked dead: milliseconds until it is retried (0 otherwise). */
    public long retryInMillis() { return retryInMillis; }

    @Override
    public String toString() {
        return server + (alive ? " alive" : " dead (retry in " + retryInMillis + " ms)") + ", failures " + failures;
    }
}
