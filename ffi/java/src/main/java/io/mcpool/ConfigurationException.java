package io.mcpool;

/** The configuration is unusable or lacks what the call needs (the core's CONFIGURATION
 * class: MCPOOL_CONFIG, MCPOOL_UNSUPPORTED), e.g. an unknown option, a bad option value, a
 * lease on the text protocol. A {@link ClientException}: the caller's to fix. */
public class ConfigurationException extends ClientException {
    private static final long serialVersionUID = 1L;

    /** An exception of this status (its number and name, as {@link McpoolException}'s) and
     * message, which reads {@code statusName + ": " + message}. */
    public ConfigurationException(int status, String statusName, String message) {
        super(status, statusName, message);
    }
}
