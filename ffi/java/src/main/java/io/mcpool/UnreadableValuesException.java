package io.mcpool;

import java.util.Map;

/**
 * A multi-get in which some values were read but cannot be delivered (flags that mean nothing
 * in the value format, a compressed value that does not inflate, a kind Java cannot read or
 * may not deserialize), and nothing else failed, thrown once every key was read:
 * {@link #hits()} has the other keys' values, {@link #errors()} each unreadable key's
 * exception (naming the key, never the bytes). Its status is the first such key's. Misses
 * are in neither map. When other keys failed too (a server down), the multi-get throws a
 * plain {@link PartialResultException} (or, by {@link MemCachedClient}, leaves a failed
 * server's keys out).
 */
public class UnreadableValuesException extends PartialResultException {
    private static final long serialVersionUID = 1L;

    UnreadableValuesException(Map<String, Object> hits, Map<String, McpoolException> errors) {
        super(hits, errors, "value(s) of a multi-get cannot be read");
    }
}
