package io.mcpool;

/** The server could not be used: marked dead (MCPOOL_SERVER_DEAD), a socket error (MCPOOL_IO), SASL or TLS refused (MCPOOL_AUTH: a refused login or certificate, a server that does not speak TLS); {@link TimeoutException} for timeouts. */
public class ConnectionException extends McpoolException {
    private static final long serialVersionUID = 1L;

    /** An exception of this status (its number and name, as {@link McpoolException}'s) and
     * message, which reads {@code statusName + ": " + message}. */
    public ConnectionException(int status, String statusName, String message) {
        super(status, statusName, message);
    }
}
