package io.mcpool;

/**
 * The Java side of spymemcached's {@code SerializingTranscoder}: with the
 * {@code spymemcached} value format (what this transcoder stands for when the builder sets
 * none), values spymemcached wrote read back and the other way round, each as the Java type
 * it was written as, except a {@code StringBuilder} or {@code StringBuffer}, which is stored as
 * its text (flags 0) and reads back as a {@code String} (spymemcached serializes them; a
 * serialized one it wrote reads back as the builder). Java types map to the core's kinds
 * ({@link Transcoder}); the core writes
 * spymemcached's flags (String 0, Boolean 256, Integer 512, Long 768, Byte 1280, byte[] 2048,
 * serialized 1, gzip 2) and packed integers.
 *
 * <p>As spymemcached: an Integer is written with SPECIAL_INT (512), a Long with SPECIAL_LONG
 * (768) whatever its size, a Byte with SPECIAL_BYTE (1280), and each reads back as that type
 * (spymemcached reads them the same way); a Short, which spymemcached serializes, is stored
 * serialized and so needs serialization allowed.
 *
 * <p>Under another value format ({@code mcpool}, {@code libmemcached}, the Python ones, ...)
 * spymemcached's flags mean nothing, so the same transcoder maps the types to the core's kinds
 * only, as {@link WhalinTranscoder} does outside {@code whalin}: Integer, Long, Short and Byte
 * are the integer kind and read back as {@code Long} (every language reads them as a number),
 * never bytes under flags 512/768/1280 (which the {@code mcpool} layout took as a bytes value's
 * application flags: Java read back {@code byte[]} and Python {@code b"5"}).
 *
 * <p>Departures: a Float, Double, Date or Character (and under {@code spymemcached} a Short) is
 * refused unless serialization is allowed (spymemcached's Float, Double and Date flags have no
 * kind: reading one is an {@link McpoolException} naming the key and its flags).
 */
public final class SpyTranscoder implements Transcoder {
    /** spymemcached's {@code SerializingTranscoder} flags for these types. */
    static final int SPECIAL_INT = 0x200, SPECIAL_LONG = 0x300, SPECIAL_BYTE = 0x500;

    private final boolean allowSerializable;
    private final ClassLoader loader;
    /** Writes and reads spymemcached's own flags (the client's value format is spymemcached;
     * a transcoder made by its constructors does, the format it stands for). */
    private final boolean markers;
    /** The same settings with {@link #markers} the other way. */
    private final SpyTranscoder twin;

    /** spymemcached's types without Java serialization: a Short, Float, Double, Date or other
     * {@code Serializable} is refused, and a serialized value read is an
     * {@link McpoolException} naming the key. */
    public SpyTranscoder() {
        this(false, null);
    }

    /** spymemcached's types, with Java serialization when {@code allowSerializable} (a Short
     * and any other {@code Serializable} stored serialized, flags 1; serialized values read
     * back as their objects: only for writers you trust). {@code loader} resolves the classes
     * of deserialized objects, with {@code ObjectInputStream}'s own resolution for a class it
     * does not find; null: that resolution alone. */
    public SpyTranscoder(boolean allowSerializable, ClassLoader loader) {
        this(allowSerializable, loader, true, null);
    }

    private SpyTranscoder(boolean allowSerializable, ClassLoader loader, boolean markers, SpyTranscoder twin) {
        this.allowSerializable = allowSerializable;
        this.loader = loader;
        this.markers = markers;
        this.twin = twin != null ? twin : new SpyTranscoder(allowSerializable, loader, !markers, this);
    }

    @Override
    public boolean allowSerializable() {
        return allowSerializable;
    }

    @Override
    public String valueFormat() {
        return "spymemcached";
    }

    /** This transcoder with spymemcached's own flags under {@code spymemcached}, without
     * elsewhere (the types map to the core's kinds only). */
    @Override
    public Transcoder forValueFormat(String format) {
        return "spymemcached".equals(format) == markers ? this : twin;
    }

    /**
     * Under {@code spymemcached}, as spymemcached encodes: an Integer, a Long and a Byte as
     * their decimal text with their own flags (SPECIAL_INT, SPECIAL_LONG, SPECIAL_BYTE), which
     * the core writes as spymemcached's packed big-endian bytes (the core's integer kind is
     * Java's Long under this format, whatever its size, as every other surface's int), a
     * Short serialized. Under another format: the core's kinds (every integer type an INT).
     */
    @Override
    public CachedData encode(Object v) {
        if (!markers) return Kinds.encode(v, false, allowSerializable);
        if (v instanceof Integer) return Kinds.marked(v, SPECIAL_INT);
        if (v instanceof Long) return Kinds.marked(v, SPECIAL_LONG);
        if (v instanceof Byte) return Kinds.marked(v, SPECIAL_BYTE);
        if (v instanceof Short) {
            if (!allowSerializable) {
                throw Serialization.refused("cannot store a java.lang.Short (spymemcached stores it serialized)");
            }
            return new CachedData(Kind.JAVA_SERIALIZED, Serialization.serialize(v));
        }
        return Kinds.encode(v, false, allowSerializable);
    }

    @Override
    public Object decode(byte[] b, Kind kind) {
        return Kinds.decode(b, kind, false, allowSerializable, loader);
    }

    /** Under {@code spymemcached}, an integer as the type its flags name: SPECIAL_INT an
     * Integer, SPECIAL_BYTE a Byte, SPECIAL_LONG (and any other integer flags) a Long. */
    @Override
    public Object decode(byte[] b, Kind kind, int flags) {
        Object v = decode(b, kind);
        if (!markers || kind != Kind.INT || !(v instanceof Long)) return v;
        long n = (Long) v;
        if (flags == SPECIAL_INT && n == (int) n) return Integer.valueOf((int) n);
        if (flags == SPECIAL_BYTE && n == (byte) n) return Byte.valueOf((byte) n);
        return v;
    }
}
