package io.mcpool;

/**
 * One exchange with one server, as an {@link OperationListener} receives it (docs/tracing.md).
 * Immutable.
 */
public final class OperationRecord {
    private static final String[] OUTCOMES = {
        "hit", "miss", "stored", "not_stored", "ok", "error", "failed_open"};
    private static final String[] CLASSES = {
        "OK", "MISS", "NOT_STORED", "CLIENT_ERROR", "SERVER_ERROR", "TIMEOUT", "CONNECTION",
        "CONFIGURATION", "INTERNAL"};

    private final String op;
    private final int keys;
    private final int hits;
    private final String server;
    private final String protocol;
    private final long durationNanos;
    private final String outcome;
    private final String errorClass;
    private final String error;
    private final long bytesSent;
    private final long bytesReceived;
    private final long endedAgoNanos;

    OperationRecord(String op, int keys, int hits, String server, String protocol, long durationNanos,
                    int outcome, int errorClass, String error, long bytesSent, long bytesReceived,
                    long endedAgoNanos) {
        this.op = op;
        this.keys = keys;
        this.hits = hits;
        this.server = server == null || server.isEmpty() ? null : server;
        this.protocol = protocol;
        this.durationNanos = durationNanos;
        this.outcome = outcome >= 0 && outcome < OUTCOMES.length ? OUTCOMES[outcome] : "other";
        this.errorClass = errorClass > 0 && errorClass < CLASSES.length ? CLASSES[errorClass] : null;
        this.error = error == null || error.isEmpty() ? null : error;
        this.bytesSent = bytesSent;
        this.bytesReceived = bytesReceived;
        this.endedAgoNanos = endedAgoNanos;
    }

    /** {@code "get"}, {@code "get_multi"}, {@code "set"}, {@code "delete"}, {@code "incr"}, ... */
    public String op() { return op; }
    /** Keys in this exchange (0 for the whole-server commands). */
    public int keys() { return keys; }
    /** Keys found (reads), stored (stores), or that existed (delete, touch, incr/decr). */
    public int hits() { return hits; }
    /** {@code host:port} (for keys of a server marked dead: that server), or null for keys
     * refused before placement (a bad key or value). */
    public String server() { return server; }
    /** The server's host (without brackets for IPv6), or its socket path; null without one. */
    public String host() {
        if (server == null) return null;
        int i = server.lastIndexOf(':');
        if (server.startsWith("/") || i < 0) return server;
        String h = server.substring(0, i);
        return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
    }
    /** The server's port, or 0 for a socket path or no server. */
    public long port() {
        if (server == null || server.startsWith("/")) return 0;
        int i = server.lastIndexOf(':');
        try {
            return i < 0 ? 0 : Long.parseLong(server.substring(i + 1));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
    /** {@code "text"}, {@code "meta"} or {@code "binary"}. */
    public String protocol() { return protocol; }
    /** From the start of the call to the end of this exchange. */
    public long durationNanos() { return durationNanos; }
    /** {@code "hit"}, {@code "miss"}, {@code "stored"}, {@code "not_stored"}, {@code "ok"},
     * {@code "error"}, or {@code "failed_open"} (a timeout or unreachable server answered as
     * a miss or not stored, with the {@code fail_open} option). */
    public String outcome() { return outcome; }
    /** The error's class ({@code "TIMEOUT"}, {@code "CONNECTION"}, {@code "SERVER_ERROR"}, ...)
     * for {@code error} and {@code failed_open}; null otherwise. */
    public String errorClass() { return errorClass; }
    /** The error's message for {@code error} and {@code failed_open}; null otherwise. */
    public String error() { return error; }
    /** Bytes written to the server for this exchange. */
    public long bytesSent() { return bytesSent; }
    /** Bytes read from the server for this exchange. */
    public long bytesReceived() { return bytesReceived; }
    /** Nanoseconds between the end of this exchange and the listener's call: 0, unless the call
     * kept the record until its other servers had answered (a call over several servers). The
     * exchange ran from {@code now - endedAgoNanos - durationNanos} to {@code now - endedAgoNanos}. */
    public long endedAgoNanos() { return endedAgoNanos; }

    @Override
    public String toString() {
        return "OperationRecord{" + op + " keys=" + keys + " hits=" + hits + " server=" + server + " "
            + protocol + " " + durationNanos + "ns " + outcome
            + (errorClass == null ? "" : " " + errorClass + ": " + error)
            + " sent=" + bytesSent + " received=" + bytesReceived + "}";
    }
}
