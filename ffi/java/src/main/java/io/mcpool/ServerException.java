package io.mcpool;

/** The server answered with an error (MCPOOL_SERVER_ERROR, MCPOOL_CLIENT_ERROR), an invalid reply (MCPOOL_PROTOCOL), a value that did not inflate (MCPOOL_DECOMPRESS) or a value that was read but cannot be delivered (MCPOOL_VALUE_FORMAT: flags that mean nothing in the value format, a body its flags cannot hold, a kind Java cannot or may not read, such as a serialized object while serialization is off, whether the core or the Java side refuses it). */
public class ServerException extends McpoolException {
    private static final long serialVersionUID = 1L;

    /** An exception of this status (its number and name, as {@link McpoolException}'s) and
     * message, which reads {@code statusName + ": " + message}. */
    public ServerException(int status, String statusName, String message) {
        super(status, statusName, message);
    }

    ServerException(int status, String statusName, String message, Throwable cause) {
        super(status, statusName, message, cause);
    }
}
