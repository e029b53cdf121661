package io.mcpool;

import java.util.Collections;
import java.util.Map;

/**
 * A multi-get in which some values were read but cannot be delivered (flags that mean nothing
 * in the value format, a compressed value that does not inflate, a kind Java cannot read or
 * may not deserialize), thrown once every key was read: {@link #hits()} has the other keys'
 * values, {@link #errors()} each unreadable key's exception (naming the key, never the
 * bytes). Its status is the first such key's. Misses are in neither map; a failure of the
 * server or the network is thrown as before (or, by {@link MemCachedClient}, answered).
 */
public class UnreadableValuesException extends McpoolException {
    private static final long serialVersionUID = 1L;
    private final transient Map<String, Object> hits;
    private final transient Map<String, McpoolException> errors;

    UnreadableValuesException(Map<String, Object> hits, Map<String, McpoolException> errors) {
        super(first(errors).status(), first(errors).statusName(), errors.size() + " value(s) of a multi-get cannot be read ("
            + String.join(", ", errors.keySet()) + "), " + hits.size() + " read: " + first(errors).getMessage());
        initCause(first(errors));
        this.hits = Collections.unmodifiableMap(hits);
        this.errors = Collections.unmodifiableMap(errors);
    }

    private static McpoolException first(Map<String, McpoolException> errors) {
        return errors.values().iterator().next();
    }

    /** The values that were read, by key, in key order (misses and unreadable keys absent). */
    public Map<String, Object> hits() {
        return hits;
    }

    /** Each unreadable key's exception, in key order. */
    public Map<String, McpoolException> errors() {
        return errors;
    }
}
