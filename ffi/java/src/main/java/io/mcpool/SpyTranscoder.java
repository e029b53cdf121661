package io.mcpool;

/**
 * The Java side of spymemcached's {@code SerializingTranscoder}: with the
 * {@code spymemcached} value format (what this transcoder stands for when the builder sets
 * none), values spymemcached wrote read back and the other way round. Java types map to the
 * core's kinds ({@link Transcoder}); the core writes spymemcached's flags (String 0, Boolean
 * 256, Integer 512, Long 768, byte[] 2048, serialized 1, gzip 2) and packed integers.
 *
 * <p>Departures: Integer, Short and Byte read back as {@code Long}; a Float, Double or Date
 * is refused unless serialization is allowed, and one spymemcached wrote is a
 * {@link ClientException} naming the key and its flags.
 */
public final class SpyTranscoder implements Transcoder {
    private final boolean allowSerializable;
    private final ClassLoader loader;

    public SpyTranscoder() {
        this(false, null);
    }

    public SpyTranscoder(boolean allowSerializable, ClassLoader loader) {
        this.allowSerializable = allowSerializable;
        this.loader = loader;
    }

    @Override
    public boolean allowSerializable() {
        return allowSerializable;
    }

    @Override
    public String valueFormat() {
        return "spymemcached";
    }

    @Override
    public CachedData encode(Object v) {
        return Kinds.encode(v, false, allowSerializable);
    }

    @Override
    public Object decode(byte[] b, Kind kind) {
        return Kinds.decode(b, kind, false, allowSerializable, loader);
    }
}
