package io.mcpool;

/**
 * Base of every error the binding throws. {@link #status()} is the C ABI's status number
 * (see include/mcpool.h), {@link #statusName()} its name, e.g. {@code MCPOOL_IO}; errors raised
 * by the Java side itself for a value it cannot or may not encode (one that needs
 * serialization while it is off, one that does not serialize) use status 0 and a name of
 * their own; a value that was read but cannot be delivered is MCPOOL_VALUE_FORMAT whichever
 * side refuses it.
 *
 * <p>Subclasses: {@link ClientException} (the caller's input was refused before any I/O: null
 * or invalid key, value too large, a value that cannot be serialized, bad configuration, a
 * closed client), {@link ConnectionException} (the server could not be reached or the
 * connection failed; {@link TimeoutException} is the timed-out kind), {@link ServerException}
 * (the server answered with an error, or an answer that could not be understood, or a value
 * that was read but cannot be delivered).
 * Misses and stores that did not happen are answers, never exceptions.
 */
public class McpoolException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** The C ABI's status number (0: raised by the Java side). */
    private final int status;
    /** The status's name, e.g. {@code MCPOOL_IO}. */
    private final String statusName;
    /** The message without the status name before it. */
    private final String detail;

    /** An exception of this status: the C ABI's number ({@link #status()}, 0 for the Java
     * side's own) and name ({@link #statusName()}); its message reads
     * {@code statusName + ": " + message}. */
    public McpoolException(int status, String statusName, String message) {
        super(statusName + ": " + message);
        this.status = status;
        this.statusName = statusName;
        this.detail = message;
    }

    McpoolException(int status, String statusName, String message, Throwable cause) {
        this(status, statusName, message);
        initCause(cause);
    }

    /** The C ABI status number (0 for errors raised by the Java side). */
    public int status() {
        return status;
    }

    /** The status name, e.g. {@code MCPOOL_INVALID_KEY}. */
    public String statusName() {
        return statusName;
    }

    /** The message without the status name before it. */
    String detail() {
        return detail;
    }
}
