package io.mcpool;

/** The caller's input was refused before any byte was sent (MCPOOL_INVALID_ARGUMENT, MCPOOL_INVALID_KEY, MCPOOL_VALUE_TOO_LARGE, MCPOOL_CONFIG, MCPOOL_OUT_OF_RANGE, MCPOOL_UNSUPPORTED), or the Java side refused it: a null key or argument, a key or String with an unpaired surrogate (no UTF-8 form), a value it cannot or may not encode, a closed client. A value that was read but cannot be delivered is a {@link ServerException} (MCPOOL_VALUE_FORMAT). */
public class ClientException extends McpoolException {
    private static final long serialVersionUID = 1L;

    /** An exception of this status (its number and name, as {@link McpoolException}'s) and
     * message, which reads {@code statusName + ": " + message}. */
    public ClientException(int status, String statusName, String message) {
        super(status, statusName, message);
    }

    ClientException(int status, String statusName, String message, Throwable cause) {
        super(status, statusName, message, cause);
    }

    ClientException(String message, Throwable cause) {
        super(0, "JAVA", message, cause);
    }

    // The two statuses the Java side gives itself, before calling the core (include/mcpool.h).
    private static final int INVALID_ARGUMENT = 100, INVALID_KEY = 101, OUT_OF_RANGE = 104;

    /** MCPOOL_INVALID_ARGUMENT raised on the Java side (a null, a number out of range, ...). */
    static ClientException invalidArgument(String message) {
        return new ClientException(INVALID_ARGUMENT, "MCPOOL_INVALID_ARGUMENT", message);
    }

    /** MCPOOL_INVALID_ARGUMENT with its cause (text that has no UTF-8 form). */
    static ClientException invalidArgument(String message, Throwable cause) {
        return new ClientException(INVALID_ARGUMENT, "MCPOOL_INVALID_ARGUMENT", message, cause);
    }

    /** MCPOOL_OUT_OF_RANGE raised on the Java side (a number Java's long cannot hold). */
    static ClientException outOfRange(String message) {
        return new ClientException(OUT_OF_RANGE, "MCPOOL_OUT_OF_RANGE", message);
    }

    /** MCPOOL_INVALID_KEY raised on the Java side (a key with no UTF-8 form). */
    static ClientException invalidKey(String message, Throwable cause) {
        return new ClientException(INVALID_KEY, "MCPOOL_INVALID_KEY", message, cause);
    }
}
