package io.mcpool;

/**
 * The Java side of Whalin 2.x's MemCachedClient: with the {@code whalin} value format (its
 * default here, and {@link MemCachedClient}'s), values written by the old client read back
 * and the other way round. Java types map to the core's kinds ({@link Transcoder}); the core
 * writes Whalin's markers (String 32, Long 16384, Integer 4, Boolean 8192, byte[] 4096,
 * serialized 8, gzip 2) and reads every marker it has a kind for.
 *
 * <p>Departures from Whalin, on purpose: Integer, Short and Byte are stored as integers and
 * read back as {@code Long}; StringBuilder and StringBuffer as text, read back as
 * {@code String}; a Float, Double, Date or Character (no kind in the cross-language model)
 * is refused unless serialization is allowed (then stored serialized); a value Whalin wrote
 * with one of those markers is a {@link ClientException} naming the key and its flags, never
 * bytes.
 *
 * <p>With {@code primitiveAsString} (Whalin's {@code setPrimitiveAsString}), natively handled
 * values other than byte[] are stored as their {@code toString()} text, and every value that
 * is not serialized or byte[] reads back as a String.
 */
public final class WhalinTranscoder implements Transcoder {
    private final boolean primitiveAsString;
    private final boolean allowSerializable;
    private final ClassLoader loader;

    /** Whalin's defaults: typed values; serialization off. */
    public WhalinTranscoder() {
        this(false, false, null);
    }

    public WhalinTranscoder(boolean primitiveAsString, boolean allowSerializable, ClassLoader loader) {
        this.primitiveAsString = primitiveAsString;
        this.allowSerializable = allowSerializable;
        this.loader = loader;
    }

    public boolean primitiveAsString() {
        return primitiveAsString;
    }

    @Override
    public boolean allowSerializable() {
        return allowSerializable;
    }

    @Override
    public String valueFormat() {
        return "whalin";
    }

    @Override
    public CachedData encode(Object v) {
        return Kinds.encode(v, primitiveAsString, allowSerializable);
    }

    @Override
    public Object decode(byte[] b, Kind kind) {
        return Kinds.decode(b, kind, primitiveAsString, allowSerializable, loader);
    }
}
