package io.mcpool;

/** The server could not be used: marked dead (MCPOOL_SERVER_DEAD), a socket error (MCPOOL_IO), SASL refused (MCPOOL_AUTH); {@link TimeoutException} for timeouts. */
public class ConnectionException extends McpoolException {
    private static final long serialVersionUID = 1L;

    public ConnectionException(int status, String statusName, String message) {
        super(status, statusName, message);
    }

    ConnectionException(String message, Throwable cause) {
        super(0, "JAVA", message, cause);
    }
}
