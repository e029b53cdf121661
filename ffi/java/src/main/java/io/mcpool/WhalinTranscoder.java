package io.mcpool;

import java.nio.charset.StandardCharsets;
import java.util.Date;

/**
 * Whalin 2.x's value layout (com.danga/com.whalin MemCachedClient with NativeHandler): the
 * Java type is a flag marker and the bytes are the bare value, so values written by the old
 * client read back as the same Java types, and the other way round.
 *
 * <table>
 * <caption>flags</caption>
 * <tr><th>type</th><th>flag</th><th>bytes</th></tr>
 * <tr><td>Byte</td><td>1</td><td>1 byte</td></tr>
 * <tr><td>Integer</td><td>4</td><td>4 bytes big-endian</td></tr>
 * <tr><td>Character</td><td>16</td><td>4 bytes big-endian (the char as an int)</td></tr>
 * <tr><td>String</td><td>32</td><td>UTF-8</td></tr>
 * <tr><td>StringBuffer</td><td>64</td><td>UTF-8</td></tr>
 * <tr><td>Float</td><td>128</td><td>4 bytes, floatToIntBits</td></tr>
 * <tr><td>Short</td><td>256</td><td>4 bytes big-endian</td></tr>
 * <tr><td>Double</td><td>512</td><td>8 bytes, doubleToLongBits</td></tr>
 * <tr><td>Date</td><td>1024</td><td>8 bytes, getTime()</td></tr>
 * <tr><td>StringBuilder</td><td>2048</td><td>UTF-8</td></tr>
 * <tr><td>byte[]</td><td>4096</td><td>as is</td></tr>
 * <tr><td>Boolean</td><td>8192</td><td>1 byte, 1 or 0</td></tr>
 * <tr><td>Long</td><td>16384</td><td>8 bytes big-endian</td></tr>
 * <tr><td>Serializable (only if allowed)</td><td>8</td><td>Java serialization</td></tr>
 * </table>
 * Compressed values add flag 2 (gzip), handled by the core.
 *
 * <p>With {@code primitiveAsString} (Whalin's {@code setPrimitiveAsString}), natively handled
 * values other than byte[] are stored as their {@code toString()} in UTF-8 with flags 0, and
 * every unserialized value reads back as a String. Departure from Whalin, on purpose: a value
 * with no marker (flags 0, e.g. written by spymemcached, PHP or Python) reads back as a UTF-8
 * String, where Whalin returned null.
 */
public final class WhalinTranscoder implements Transcoder {
    public static final int MARKER_BYTE = 1, MARKER_BOOLEAN = 8192, MARKER_INTEGER = 4, MARKER_LONG = 16384,
        MARKER_CHARACTER = 16, MARKER_STRING = 32, MARKER_STRINGBUFFER = 64, MARKER_FLOAT = 128,
        MARKER_SHORT = 256, MARKER_DOUBLE = 512, MARKER_DATE = 1024, MARKER_STRINGBUILDER = 2048,
        MARKER_BYTEARR = 4096, F_COMPRESSED = 2, F_SERIALIZED = 8;

    private final boolean primitiveAsString;
    private final boolean allowSerializable;
    private final ClassLoader loader;

    /** Whalin's defaults: typed markers; serialization off. */
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

    public boolean allowSerializable() {
        return allowSerializable;
    }

    @Override
    public CachedData encode(Object v) {
        if (v == null) throw new ClientException("cannot store null", null);
        if (v instanceof byte[]) return new CachedData((byte[]) v, MARKER_BYTEARR);
        if (primitiveAsString && isNative(v)) {
            return new CachedData(Utf8.value(v.toString()), 0);
        }
        if (v instanceof String) return new CachedData(Utf8.value((String) v), MARKER_STRING);
        if (v instanceof Long) return new CachedData(Bytes.long8(((Long) v).longValue()), MARKER_LONG);
        if (v instanceof Integer) return new CachedData(Bytes.int4(((Integer) v).intValue()), MARKER_INTEGER);
        if (v instanceof Byte) return new CachedData(new byte[] {((Byte) v).byteValue()}, MARKER_BYTE);
        if (v instanceof Boolean) return new CachedData(new byte[] {(byte) (((Boolean) v) ? 1 : 0)}, MARKER_BOOLEAN);
        if (v instanceof Character) return new CachedData(Bytes.int4(((Character) v).charValue()), MARKER_CHARACTER);
        if (v instanceof Short) return new CachedData(Bytes.int4(((Short) v).shortValue()), MARKER_SHORT);
        if (v instanceof Float) return new CachedData(Bytes.int4(Float.floatToIntBits((Float) v)), MARKER_FLOAT);
        if (v instanceof Double) return new CachedData(Bytes.long8(Double.doubleToLongBits((Double) v)), MARKER_DOUBLE);
        if (v instanceof Date) return new CachedData(Bytes.long8(((Date) v).getTime()), MARKER_DATE);
        if (v instanceof StringBuffer) return new CachedData(Utf8.value(v.toString()), MARKER_STRINGBUFFER);
        if (v instanceof StringBuilder) return new CachedData(Utf8.value(v.toString()), MARKER_STRINGBUILDER);
        if (!allowSerializable) throw Serialization.refused("cannot store a " + v.getClass().getName());
        return new CachedData(Serialization.serialize(v), F_SERIALIZED);
    }

    private static boolean isNative(Object v) {
        return v instanceof String || v instanceof Long || v instanceof Integer || v instanceof Byte
            || v instanceof Boolean || v instanceof Character || v instanceof Short || v instanceof Float
            || v instanceof Double || v instanceof Date || v instanceof StringBuffer || v instanceof StringBuilder;
    }

    @Override
    public Object decode(byte[] b, int flags) {
        Mcpool.notNull(b, "data");
        if ((flags & F_SERIALIZED) != 0) {
            if (!allowSerializable) throw Serialization.refused("a serialized Java object (flag 8) was read");
            return Serialization.deserialize(b, loader);
        }
        if (primitiveAsString) return new String(b, StandardCharsets.UTF_8);
        if ((flags & MARKER_BYTE) != 0) return b.length == 1 ? Byte.valueOf(b[0]) : bad(flags, b);
        if ((flags & MARKER_BOOLEAN) != 0) return b.length == 1 ? Boolean.valueOf(b[0] == 1) : bad(flags, b);
        if ((flags & MARKER_INTEGER) != 0) return b.length == 4 ? Integer.valueOf(Bytes.int4(b)) : bad(flags, b);
        if ((flags & MARKER_LONG) != 0) return b.length == 8 ? Long.valueOf(Bytes.long8(b)) : bad(flags, b);
        if ((flags & MARKER_CHARACTER) != 0) return b.length == 4 ? Character.valueOf((char) Bytes.int4(b)) : bad(flags, b);
        if ((flags & MARKER_STRING) != 0) return new String(b, StandardCharsets.UTF_8);
        if ((flags & MARKER_STRINGBUFFER) != 0) return new StringBuffer(new String(b, StandardCharsets.UTF_8));
        if ((flags & MARKER_FLOAT) != 0) return b.length == 4 ? Float.valueOf(Float.intBitsToFloat(Bytes.int4(b))) : bad(flags, b);
        if ((flags & MARKER_SHORT) != 0) return b.length == 4 ? Short.valueOf((short) Bytes.int4(b)) : bad(flags, b);
        if ((flags & MARKER_DOUBLE) != 0) return b.length == 8 ? Double.valueOf(Double.longBitsToDouble(Bytes.long8(b))) : bad(flags, b);
        if ((flags & MARKER_DATE) != 0) return b.length == 8 ? new Date(Bytes.long8(b)) : bad(flags, b);
        if ((flags & MARKER_STRINGBUILDER) != 0) return new StringBuilder(new String(b, StandardCharsets.UTF_8));
        if ((flags & MARKER_BYTEARR) != 0) return b;
        return new String(b, StandardCharsets.UTF_8);
    }

    private static Object bad(int flags, byte[] b) {
        throw new ClientException("value with flags " + flags + " has " + b.length
            + " bytes, not the length that type has in Whalin's layout", null);
    }
}
