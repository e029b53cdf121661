package io.mcpool;

import java.nio.charset.StandardCharsets;

/** The one mapping of Java types to the core's kinds, used by both transcoders. */
final class Kinds {
    private Kinds() {}

    static CachedData encode(Object v, boolean primitiveAsString, boolean allowSerializable) {
        if (v == null) throw new ClientException("cannot store null", null);
        if (v instanceof byte[]) return new CachedData(Kind.BYTES, (byte[]) v);
        if (primitiveAsString && isNative(v)) return new CachedData(Kind.TEXT, Utf8.value(v.toString()));
        if (v instanceof String) return new CachedData(Kind.TEXT, Utf8.value((String) v));
        if (v instanceof StringBuilder || v instanceof StringBuffer) {
            return new CachedData(Kind.TEXT, Utf8.value(v.toString()));
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return new CachedData(Kind.INT, Long.toString(((Number) v).longValue()).getBytes(StandardCharsets.US_ASCII));
        }
        if (v instanceof Boolean) return new CachedData(Kind.BOOL, new byte[] {(byte) (((Boolean) v) ? '1' : '0')});
        if (!allowSerializable) {
            throw Serialization.refused("cannot store a " + v.getClass().getName()
                + " (the value formats' kinds are byte[], String, integers and Boolean)");
        }
        return new CachedData(Kind.JAVA_SERIALIZED, Serialization.serialize(v));
    }

    /** An integer under its format's flags for its Java type (Whalin's MARKER_INTEGER,
     * spymemcached's SPECIAL_LONG...): its decimal text, the body the byte API takes under
     * any flags of the integer kind; the core writes the format's binary form and checks the
     * range (docs/value-format.md). */
    static CachedData marked(Object v, int flags) {
        byte[] text = Long.toString(((Number) v).longValue()).getBytes(StandardCharsets.US_ASCII);
        return new CachedData(text, flags, Kind.INT);
    }

    private static boolean isNative(Object v) {
        return v instanceof String || v instanceof Number || v instanceof Boolean || v instanceof Character
            || v instanceof java.util.Date || v instanceof StringBuffer || v instanceof StringBuilder;
    }

    static Object decode(byte[] b, Kind kind, boolean primitiveAsString, boolean allowSerializable,
                         ClassLoader loader) {
        Mcpool.notNull(b, "data");
        // A value read that cannot be delivered is MCPOOL_VALUE_FORMAT (Serialization.Unreadable),
        // as the core's refusal of the same item.
        if (kind == null) {
            throw new Serialization.Unreadable("the core delivered a value of a kind this binding does not know", null);
        }
        switch (kind) {
            case JAVA_SERIALIZED:
                if (!allowSerializable) throw Serialization.off();
                return Serialization.deserialize(b, loader);
            case PYTHON_PICKLE:
                throw new Serialization.Unreadable("the value is a Python pickle: Java cannot read it", null);
            case PERL_STORABLE:
                throw new Serialization.Unreadable("the value is a Perl Storable image: Java cannot read it", null);
            default:
                break;
        }
        if (kind == Kind.BYTES) return b; // also with primitiveAsString: its bytes, never a lossy String
        String text = new String(b, StandardCharsets.UTF_8);
        if (primitiveAsString) return text;
        switch (kind) {
            case TEXT: return text;
            case INT:
                try {
                    return Long.valueOf(text);
                } catch (NumberFormatException beyond64Bits) {
                    return new java.math.BigInteger(text); // a Python writer's larger int, exact
                }
            default: return Boolean.valueOf(b.length == 1 && b[0] == '1'); // BOOL
        }
    }
}
