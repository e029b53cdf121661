package io.mcpool;

import java.nio.charset.StandardCharsets;
import java.util.Date;

/**
 * spymemcached's {@code SerializingTranscoder} layout: strings are UTF-8 with flags 0; the
 * special types carry their type in bits 8..15 and are stored big-endian with leading zero
 * bytes dropped; Java serialization is flag 1 (only when allowed); compression is flag 2
 * (gzip, by the core).
 *
 * <table>
 * <caption>flags</caption>
 * <tr><th>type</th><th>flag</th></tr>
 * <tr><td>String</td><td>0</td></tr>
 * <tr><td>Boolean ('1' / '0')</td><td>256</td></tr>
 * <tr><td>Integer</td><td>512</td></tr>
 * <tr><td>Long</td><td>768</td></tr>
 * <tr><td>Date</td><td>1024</td></tr>
 * <tr><td>Byte</td><td>1280</td></tr>
 * <tr><td>Float (raw int bits)</td><td>1536</td></tr>
 * <tr><td>Double (raw long bits)</td><td>1792</td></tr>
 * <tr><td>byte[]</td><td>2048</td></tr>
 * <tr><td>Serializable (only if allowed)</td><td>1</td></tr>
 * </table>
 */
public final class SpyTranscoder implements Transcoder {
    public static final int SERIALIZED = 1, COMPRESSED = 2, SPECIAL_MASK = 0xff00, SPECIAL_BOOLEAN = 1 << 8,
        SPECIAL_INT = 2 << 8, SPECIAL_LONG = 3 << 8, SPECIAL_DATE = 4 << 8, SPECIAL_BYTE = 5 << 8,
        SPECIAL_FLOAT = 6 << 8, SPECIAL_DOUBLE = 7 << 8, SPECIAL_BYTEARRAY = 8 << 8;

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
    public CachedData encode(Object v) {
        if (v == null) throw new ClientException("cannot store null", null);
        if (v instanceof String) return new CachedData(Utf8.value((String) v), 0);
        if (v instanceof byte[]) return new CachedData((byte[]) v, SPECIAL_BYTEARRAY);
        if (v instanceof Long) return new CachedData(Bytes.packed((Long) v), SPECIAL_LONG);
        if (v instanceof Integer) return new CachedData(Bytes.packed(((Integer) v) & 0xffffffffL), SPECIAL_INT);
        if (v instanceof Boolean) return new CachedData(new byte[] {(byte) (((Boolean) v) ? '1' : '0')}, SPECIAL_BOOLEAN);
        if (v instanceof Date) return new CachedData(Bytes.packed(((Date) v).getTime()), SPECIAL_DATE);
        if (v instanceof Byte) return new CachedData(new byte[] {(Byte) v}, SPECIAL_BYTE);
        if (v instanceof Float) return new CachedData(Bytes.packed(Float.floatToRawIntBits((Float) v) & 0xffffffffL), SPECIAL_FLOAT);
        if (v instanceof Double) return new CachedData(Bytes.packed(Double.doubleToRawLongBits((Double) v)), SPECIAL_DOUBLE);
        if (!allowSerializable) throw Serialization.refused("cannot store a " + v.getClass().getName());
        return new CachedData(Serialization.serialize(v), SERIALIZED);
    }

    @Override
    public Object decode(byte[] b, int flags) {
        Mcpool.notNull(b, "data");
        if ((flags & SERIALIZED) != 0) {
            if (!allowSerializable) throw Serialization.refused("a serialized Java object (flag 1) was read");
            return Serialization.deserialize(b, loader);
        }
        switch (flags & SPECIAL_MASK) {
            case 0: return new String(b, StandardCharsets.UTF_8);
            case SPECIAL_BOOLEAN: return b.length == 1 && b[0] == '1';
            case SPECIAL_INT: return (int) Bytes.unpacked(b, 4);
            case SPECIAL_LONG: return Bytes.unpacked(b, 8);
            case SPECIAL_DATE: return new Date(Bytes.unpacked(b, 8));
            case SPECIAL_BYTE: return b.length == 1 ? b[0] : (byte) Bytes.unpacked(b, 1);
            case SPECIAL_FLOAT: return Float.intBitsToFloat((int) Bytes.unpacked(b, 4));
            case SPECIAL_DOUBLE: return Double.longBitsToDouble(Bytes.unpacked(b, 8));
            case SPECIAL_BYTEARRAY: return b;
            default: return b;
        }
    }
}
