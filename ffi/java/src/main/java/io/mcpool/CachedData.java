package io.mcpool;

/**
 * A value as a transcoder hands it to the core: its {@link Kind} and that kind's bytes (for
 * INT the decimal ASCII text, for BOOL {@code "1"} or {@code "0"}), which the value format
 * turns into flags and a wire form. A raw value (kind null: {@link Mcpool#setBytes},
 * counters) carries its own flags instead.
 */
public final class CachedData {
    public final byte[] data;
    /** The flags of a raw value (kind null); 0 otherwise. */
    public final int flags;
    /** The value's kind, or null for a raw value stored with {@link #flags}. */
    public final Kind kind;

    /** A raw value with the caller's flags (they must mean something in the value format). */
    public CachedData(byte[] data, int flags) {
        this.data = data;
        this.flags = flags;
        this.kind = null;
    }

    /** A value of a kind. */
    public CachedData(Kind kind, byte[] data) {
        Mcpool.notNull(kind, "kind");
        this.data = data;
        this.flags = 0;
        this.kind = kind;
    }
}
