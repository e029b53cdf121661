package io.mcpool;

/**
 * Turns Java objects into stored bytes and flags and back. Compression is not the
 * transcoder's job: the core compresses large values and sets flag bit 2 (gzip), exactly the
 * bit Whalin and spymemcached use, and inflates on read before {@link #decode} sees the bytes.
 *
 * <p>Two layouts come with the binding: {@link WhalinTranscoder} (Whalin 2.x's flag markers,
 * the default) and {@link SpyTranscoder} (spymemcached's SerializingTranscoder). Neither
 * deserializes a Java object unless constructed with serialization allowed, and then only a
 * value whose flags say it is serialized.
 */
public interface Transcoder {
    /** Encodes a value; throws {@link ClientException} for one it cannot or may not encode. */
    CachedData encode(Object value);

    /** Decodes a value read with these flags (compression already undone). */
    Object decode(byte[] data, int flags);

    /** The bytes and flags of a counter as memcached's incr/decr expect: decimal text. */
    default CachedData encodeCounter(long value) {
        return new CachedData(Long.toString(value).getBytes(java.nio.charset.StandardCharsets.US_ASCII), 0);
    }
}
