package io.mcpool;

/**
 * What a value is, as the mcpool core knows it: the value format (see
 * {@link Mcpool.Builder#valueFormat(String)}) decides each kind's flags and wire form, the
 * same in every language. The ordinals are the C ABI's {@code mcpool_kind} numbers.
 */
public enum Kind {
    /** Bytes, as given ({@code byte[]}). */
    BYTES,
    /** UTF-8 text ({@code String}). */
    TEXT,
    /** A signed 64-bit integer ({@code Long}; Integer, Short and Byte are stored as one, except
     * under {@code whalin}, whose markers keep each type: {@link WhalinTranscoder}). Under the
     * Python formats another writer's integer may be beyond 64 bits: read as a
     * {@code java.math.BigInteger}, exact. */
    INT,
    /** A boolean ({@code Boolean}). */
    BOOL,
    /** A Python pickle: Java cannot read it. */
    PYTHON_PICKLE,
    /** A Perl Storable image: Java cannot read it. */
    PERL_STORABLE,
    /** A Java serialized object (only with serialization enabled). */
    JAVA_SERIALIZED;

    private static final Kind[] ALL = values();

    /** The kind of an ABI number, or null for one this binding does not know. */
    static Kind of(long n) {
        return n >= 0 && n < ALL.length ? ALL[(int) n] : null;
    }
}
