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
 *
 * <p>Both encode Strings (and StringBuilder/StringBuffer) as strict UTF-8: a String with an
 * unpaired surrogate has no UTF-8 form and is refused with a {@link ClientException} instead
 * of being stored with {@code ?} in its place (a different value read back); characters
 * outside the BMP and NUL are stored as their real UTF-8 bytes. Reading is lenient, as in
 * Whalin and spymemcached: stored bytes that are not UTF-8 (written by some other client)
 * decode with U+FFFD in their place; {@code Mcpool.getBytes} gives the bytes as they are.
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
