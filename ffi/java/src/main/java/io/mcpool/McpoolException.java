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
 *
 * <p>{@link #outcomeUnknown()} tells a write that may have been applied (sent, then timed out
 * or cut off) from one that certainly was not.
 */
public class McpoolException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** The C ABI's status number (0: raised by the Java side). */
    private final int status;
    /** The status's name, e.g. {@code MCPOOL_IO}. */
    private final String statusName;
    /** The message without the status name before it. */
    private final String detail;
    /** Set by the native code from the core's answer (mcpool_last_error_outcome_unknown,
     * mcpool_last_item_outcome_unknown), or a batch's from its keys'; never by a public
     * constructor. */
    private boolean outcomeUnknown;

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

    /** A batch's exception ({@link PartialBatchException}, {@link PartialResultException}):
     * its status and cause the first failed key's, its outcome unknown when any key's is. */
    McpoolException(String message, java.util.Map<String, McpoolException> errors) {
        this(first(errors).status(), first(errors).statusName(), message, first(errors));
        for (McpoolException e : errors.values()) outcomeUnknown |= e.outcomeUnknown;
    }

    /** The first failed key's exception of a batch. */
    static McpoolException first(java.util.Map<String, McpoolException> errors) {
        return errors.values().iterator().next();
    }

    /** The C ABI status number (0 for errors raised by the Java side). */
    public int status() {
        return status;
    }

    /** The status name, e.g. {@code MCPOOL_INVALID_KEY}. */
    public String statusName() {
        return statusName;
    }

    /**
     * Whether the request was sent and its outcome is unknown: a write that timed out waiting
     * for its reply, or whose connection was closed or reset after it was sent, may or may not
     * have been applied (the message then says "whether it was applied is unknown"). Read the
     * key back before repeating it: an {@code incr} or {@code append} repeated blindly may be
     * applied twice. False for a failure before anything was sent (a refused connect, a bad
     * key), for an error the server answered, for a read, and for exceptions the Java side
     * makes itself. The core decides ({@code mcpool_last_error_outcome_unknown}, per batch item
     * {@code mcpool_last_item_outcome_unknown}); a {@link PartialBatchException} (or
     * {@link PartialResultException}) is true when any of its {@code errors()} is.
     */
    public boolean outcomeUnknown() {
        return outcomeUnknown;
    }

    /** The message without the status name before it. */
    String detail() {
        return detail;
    }
}
