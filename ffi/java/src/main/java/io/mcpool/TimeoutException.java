package io.mcpool;

/** A timeout: no pooled connection in time (MCPOOL_POOL_TIMEOUT), connecting
 * (MCPOOL_CONNECT_TIMEOUT) or a read or write (MCPOOL_IO_TIMEOUT). The connection involved was
 * dropped, never reused. */
public class TimeoutException extends ConnectionException {
    private static final long serialVersionUID = 1L;

    /** An exception of this status (its number and name, as {@link McpoolException}'s) and
     * message, which reads {@code statusName + ": " + message}. */
    public TimeoutException(int status, String statusName, String message) {
        super(status, statusName, message);
    }
}
