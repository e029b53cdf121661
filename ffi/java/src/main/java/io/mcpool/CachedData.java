package io.mcpool;

/**
 * A value as a transcoder hands it to the core: its {@link Kind} and that kind's bytes (for
 * INT the decimal ASCII text, for BOOL {@code "1"} or {@code "0"}), which the value format
 * turns into flags and a wire form. A raw value (kind null: {@link Mcpool#setBytes},
 * counters) carries its own flags instead.
 */
public final class CachedData {
    /** The body: a kind's bytes (for INT the decimal ASCII text, for BOOL "1" or "0"), or a
     * raw value's bytes. */
    public final byte[] data;
    /** The flags of a raw value (kind null); 0 otherwise. */
    public final int flags;
    /** The value's kind, or null for a raw value stored with {@link #flags}. */
    public final Kind kind;
    /** The kind a raw value's flags mean, when the transcoder that made it knows (Whalin's
     * Integer under MARKER_INTEGER is an INT): append and prepend refuse all but bytes and
     * text. Null: not known. */
    final Kind rawKind;
    /** True when {@link Mcpool#getBytes} handed the value out as memcached holds it: the
     * value format cannot deliver it (another client's flags, a compressed body that does not
     * inflate), so {@link #flags} are as stored, compression bits included, and the body is
     * not inflated. False for every other value. */
    public final boolean asStored;

    /** A raw value with the caller's flags (they must mean something in the value format),
     * its body as {@link Mcpool#getBytes} delivers one under those flags (an integer as
     * decimal text, a boolean as "1"/"0"). */
    public CachedData(byte[] data, int flags) {
        this(data, flags, null);
    }

    /** A raw value with its format's flags for a type, of this kind: its body in the kind's
     * form (an integer's decimal text), which the core writes in the format's wire form. */
    CachedData(byte[] data, int flags, Kind rawKind) {
        this.data = data;
        this.flags = flags;
        this.kind = null;
        this.rawKind = rawKind;
        this.asStored = false;
    }

    /** What {@link Mcpool#getBytes} read: a raw value, as memcached holds it when
     * {@code asStored}. */
    CachedData(byte[] data, int flags, boolean asStored) {
        this.data = data;
        this.flags = flags;
        this.kind = null;
        this.rawKind = null;
        this.asStored = asStored;
    }

    /** A value of a kind. */
    public CachedData(Kind kind, byte[] data) {
        Mcpool.notNull(kind, "kind");
        this.data = data;
        this.flags = 0;
        this.kind = kind;
        this.rawKind = null;
        this.asStored = false;
    }
}
