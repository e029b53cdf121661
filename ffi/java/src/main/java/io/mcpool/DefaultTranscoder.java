package io.mcpool;

/**
 * The transcoder of a client whose caller gives none: {@link Mcpool.Builder} without
 * {@link Mcpool.Builder#transcoder}, and {@link MemCachedClient} without
 * {@link MemCachedClient#setTranscoder} (with its settings: primitiveAsString, serialization,
 * class loader). The choice by value format is made here and nowhere else, so both APIs
 * write a type the same way under the same format (tester finding java2 2: under
 * {@code spymemcached} the Whalin layer wrote an Integer as spymemcached's Long, flags 768,
 * where {@link Mcpool} wrote an Integer, 512):
 * <ul>
 * <li>{@code spymemcached}: a {@link SpyTranscoder}, so each Java type is written and read as
 *     spymemcached does;</li>
 * <li>any other format: a {@link WhalinTranscoder} (Whalin's markers under {@code whalin},
 *     the core's kinds elsewhere).</li>
 * </ul>
 * With primitiveAsString (Whalin's {@code setPrimitiveAsString}, which spymemcached has no
 * form of) it is the WhalinTranscoder under every format: the caller asked for text.
 *
 * <p>A client resolves it with {@link #forValueFormat} before each use, as it does every
 * transcoder (Mcpool's constructor, store, get, getMultiArray); used unresolved it is the
 * WhalinTranscoder without a format (the core's kinds).
 */
final class DefaultTranscoder implements Transcoder {
    private final WhalinTranscoder whalin;
    /** null with primitiveAsString. */
    private final SpyTranscoder spy;

    DefaultTranscoder(boolean primitiveAsString, boolean allowSerializable, ClassLoader loader) {
        this.whalin = new WhalinTranscoder(primitiveAsString, allowSerializable, loader);
        this.spy = primitiveAsString ? null : new SpyTranscoder(allowSerializable, loader);
    }

    /** The transcoder of a client whose value format is {@code format}. */
    @Override
    public Transcoder forValueFormat(String format) {
        Transcoder t = "spymemcached".equals(format) && spy != null ? spy : whalin;
        return t.forValueFormat(format);
    }

    @Override
    public CachedData encode(Object value) {
        return whalin.encode(value);
    }

    @Override
    public Object decode(byte[] data, Kind kind) {
        return whalin.decode(data, kind);
    }

    @Override
    public Object decode(byte[] data, Kind kind, int flags) {
        return whalin.decode(data, kind, flags);
    }

    @Override
    public boolean allowSerializable() {
        return whalin.allowSerializable();
    }
}
