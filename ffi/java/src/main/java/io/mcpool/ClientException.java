package io.mcpool;

/** The caller's input was refused before any byte was sent (MCPOOL_INVALID_ARGUMENT, MCPOOL_INVALID_KEY, MCPOOL_VALUE_TOO_LARGE, MCPOOL_CONFIG, MCPOOL_OUT_OF_RANGE, MCPOOL_UNSUPPORTED), or the Java side refused it: a null key or argument, a key or String with an unpaired surrogate (no UTF-8 form), a value it cannot encode or may not decode, a closed client. */
public class ClientException extends McpoolException {
    private static final long serialVersionUID = 1L;

    public ClientException(int status, String statusName, String message) {
        super(status, statusName, message);
    }

    ClientException(int status, String statusName, String message, Throwable cause) {
        super(status, statusName, message, cause);
    }

    ClientException(String message, Throwable cause) {
        super(0, "JAVA", message, cause);
    }
}
