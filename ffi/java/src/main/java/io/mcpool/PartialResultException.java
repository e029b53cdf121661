package io.mcpool;

import java.util.Collections;
import java.util.Iterator;
import java.util.Map;

/**
 * A multi-get in which some keys failed (a server down or timing out, an error reply, a value
 * that cannot be delivered), thrown once every key was tried: {@link #hits()} has the values
 * that were read, {@link #errors()} each failed key's own exception (its class and message
 * the core's for that key: a {@link ConnectionException} naming the down server, a
 * {@link TimeoutException}, ...). Misses are in neither map. Its {@link #status()} and cause
 * are the first failed key's. {@link UnreadableValuesException} is the case where every
 * failure is a value that was read but cannot be delivered.
 */
public class PartialResultException extends McpoolException {
    private static final long serialVersionUID = 1L;
    private final transient Map<String, Object> hits;
    private final transient Map<String, McpoolException> errors;

    PartialResultException(Map<String, Object> hits, Map<String, McpoolException> errors) {
        this(hits, errors, "key(s) of a multi-get failed");
    }

    PartialResultException(Map<String, Object> hits, Map<String, McpoolException> errors, String what) {
        super(errors.size() + " " + what + " (" + someKeys(errors) + "), " + hits.size() + " read: "
            + first(errors).getMessage(), errors);
        this.hits = Collections.unmodifiableMap(hits);
        this.errors = Collections.unmodifiableMap(errors);
    }

    /** The first ten keys, for the message (a down server may fail thousands). */
    static String someKeys(Map<String, McpoolException> errors) {
        StringBuilder sb = new StringBuilder();
        Iterator<String> it = errors.keySet().iterator();
        for (int i = 0; it.hasNext(); i++) {
            if (i == 10) return sb.append(", ...").toString();
            if (i > 0) sb.append(", ");
            sb.append(it.next());
        }
        return sb.toString();
    }

    /** The values that were read, by key, in key order (misses and failed keys absent). */
    public Map<String, Object> hits() {
        return hits;
    }

    /** Each failed key's exception, in key order. */
    public Map<String, McpoolException> errors() {
        return errors;
    }
}
