package io.mcpool;

/** The server answered with an error (MCPOOL_SERVER_ERROR, MCPOOL_CLIENT_ERROR), an invalid reply (MCPOOL_PROTOCOL) or a value that did not inflate (MCPOOL_DECOMPRESS). */
public class ServerException extends McpoolException {
    private static final long serialVersionUID = 1L;

    /** An exception of this status (its number and name, as {@link McpoolException}'s) and
     * message, which reads {@code statusName + ": " + message}. */
    public ServerException(int status, String statusName, String message) {
        super(status, statusName, message);
    }

    ServerException(String message, Throwable cause) {
        super(0, "JAVA", message, cause);
    }
}
