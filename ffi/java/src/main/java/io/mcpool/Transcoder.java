package io.mcpool;

/**
 * Turns Java objects into one of the core's value {@link Kind}s and back. The flags, the wire
 * form of every kind (Whalin's binary integers, spymemcached's markers, ...) and compression
 * are not the transcoder's job: the value format does them, in the core, the same in every
 * language ({@link Mcpool.Builder#valueFormat(String)}, docs/value-format.md).
 *
 * <p>Two come with the binding, {@link WhalinTranscoder} and {@link SpyTranscoder}: they map
 * the same Java types (byte[] to BYTES, String/StringBuilder/StringBuffer to TEXT, Long,
 * Integer, Short and Byte to INT, Boolean to BOOL) and differ in the value format they stand
 * for when none is set ({@link #valueFormat()}) and in the types they keep apart with their
 * format's own flags (Whalin's markers under {@code whalin}, spymemcached's under
 * {@code spymemcached}). Neither stores or reads a Java serialized
 * object unless constructed with serialization allowed.
 *
 * <p>Strings are encoded as strict UTF-8: a String with an unpaired surrogate has no UTF-8
 * form and is refused with a {@link ClientException} instead of being stored with {@code ?}
 * in its place (a different value read back).
 */
public interface Transcoder {
    /** Encodes a value as a kind and its bytes; throws {@link ClientException} for one it
     * cannot or may not encode. */
    CachedData encode(Object value);

    /** Decodes a value the core delivered as this kind (already inflated; an INT as decimal
     * text, a BOOL as "1"/"0"); the two transcoders of the binding throw a
     * {@link ServerException} MCPOOL_VALUE_FORMAT for a kind Java cannot or may not read (a
     * serialized object while serialization is off, another language's object), the status
     * the core gives a value it cannot deliver; the client's reads add the key and flags. */
    Object decode(byte[] data, Kind kind);

    /** Decodes a value with its flags as delivered (without the compression bit): for a
     * transcoder whose format has several flags for one kind (spymemcached's Integer, Long
     * and Byte are all INT). The default ignores the flags. */
    default Object decode(byte[] data, Kind kind, int flags) {
        return decode(data, kind);
    }

    /** The transcoder a client whose value format is {@code format} (the core's name:
     * {@code whalin}, {@code mcpool}, ...) uses in this one's place: for a transcoder that
     * writes a format's own flags for some Java types ({@link WhalinTranscoder} under
     * {@code whalin}). The default is this transcoder. */
    default Transcoder forValueFormat(String format) {
        return this;
    }

    /** Whether Java serialized objects may be stored and read (off unless enabled). */
    default boolean allowSerializable() {
        return false;
    }

    /** The value format this transcoder stands for when the builder sets none (null: the
     * builder's default, {@code mcpool}). */
    default String valueFormat() {
        return null;
    }

    /** The bytes and flags of a counter as memcached's incr/decr expect: decimal text.
     * @deprecated not used: a counter's form is the core's (decimal text, raw flags 0, in
     * every value format), which {@link MemCachedClient#storeCounter} now stores. */
    @Deprecated
    default CachedData encodeCounter(long value) {
        return new CachedData(Long.toString(value).getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0);
    }
}
