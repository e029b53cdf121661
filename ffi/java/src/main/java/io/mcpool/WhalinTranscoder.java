package io.mcpool;

/**
 * The Java side of Whalin 2.x's MemCachedClient (Whalin 1.x's layout, a type byte before the
 * body under flags 0, is not decoded: such a value reads as those bytes, see README.md): with
 * the {@code whalin} value format (its
 * default here, and {@link MemCachedClient}'s), values written by the old client read back
 * and the other way round, each as the Java type it was written as. Java types map to the
 * core's kinds ({@link Transcoder}); under {@code whalin} each type is written with the
 * marker Whalin's {@code NativeHandler} gives it, and read back as that type:
 *
 * <table>
 * <caption>Whalin's markers (flags; compressed: | 2)</caption>
 * <tr><th>Java type</th><th>flags</th><th>bytes</th></tr>
 * <tr><td>{@code String}</td><td>32 MARKER_STRING</td><td>UTF-8</td></tr>
 * <tr><td>{@code StringBuffer}</td><td>64 MARKER_STRINGBUFFER</td><td>UTF-8</td></tr>
 * <tr><td>{@code StringBuilder}</td><td>2048 MARKER_STRINGBUILDER</td><td>UTF-8</td></tr>
 * <tr><td>{@code Long}</td><td>16384 MARKER_LONG</td><td>8, big-endian, whatever its size</td></tr>
 * <tr><td>{@code Integer}</td><td>4 MARKER_INTEGER</td><td>4, big-endian</td></tr>
 * <tr><td>{@code Short}</td><td>256 MARKER_SHORT</td><td>4, big-endian</td></tr>
 * <tr><td>{@code Byte}</td><td>1 MARKER_BYTE</td><td>1</td></tr>
 * <tr><td>{@code Boolean}</td><td>8192 MARKER_BOOLEAN</td><td>1: 0 or 1</td></tr>
 * <tr><td>{@code byte[]}</td><td>4096 MARKER_BYTEARR</td><td>as given</td></tr>
 * <tr><td>{@code Serializable}, serialization allowed</td><td>8 F_SERIALIZED</td><td>Java serialization</td></tr>
 * </table>
 *
 * <p>The core writes every wire form: the kinds' markers (Long, String, Boolean, byte[],
 * serialized), and the others, which this transcoder hands it as the kind's body (an
 * Integer, Short or Byte as its decimal text) with their marker: the core writes
 * NativeHandler's bytes (4 for an Integer or a Short, 1 for a Byte) and checks the range (a
 * Short must hold 16 bits). Another language's integer is written as a Long, and reads back
 * in Java as a {@code Long}.
 *
 * <p>Under another value format (the builder's default {@code mcpool}) the types map to
 * the kinds only: Integer, Short and Byte are integers and read back as {@code Long},
 * StringBuilder and StringBuffer are text and read back as {@code String}.
 *
 * <p>Departures from Whalin, on purpose: a Float, Double, Date or Character (no kind in the
 * cross-language model) is refused unless serialization is allowed (then stored serialized,
 * which Whalin reads back as that type); a value Whalin wrote with one of those markers is
 * a {@link ServerException} MCPOOL_VALUE_FORMAT naming the key and its flags, never bytes.
 *
 * <p>With {@code primitiveAsString} (Whalin's {@code setPrimitiveAsString}), natively handled
 * values other than byte[] are stored as their {@code toString()} text (the text kind: under
 * {@code whalin} MARKER_STRING, 32, which every Whalin client reads as that String), and
 * every value of a kind that is not serialized or byte[] reads back as a String; a byte[] is
 * stored and read back as its bytes (MARKER_BYTEARR under {@code whalin}), never as a String
 * decoded from them (see {@link MemCachedClient#setPrimitiveAsString} for how Whalin's
 * versions differ). The Float, Double, Date and Character markers have no kind: still a
 * {@link ServerException} MCPOOL_VALUE_FORMAT.
 */
public final class WhalinTranscoder implements Transcoder {
    /** Whalin's markers of the types the core's kinds do not tell apart (MemCachedClient). */
    static final int MARKER_BYTE = 1, MARKER_INTEGER = 4, MARKER_STRINGBUFFER = 64, MARKER_SHORT = 256,
        MARKER_STRINGBUILDER = 2048;

    private final boolean primitiveAsString;
    private final boolean allowSerializable;
    private final ClassLoader loader;
    /** Writes and reads Whalin's own markers (the client's value format is whalin). */
    private final boolean markers;
    /** The same settings with {@link #markers} the other way. */
    private final WhalinTranscoder twin;

    /** Whalin's defaults: typed values; serialization off. */
    public WhalinTranscoder() {
        this(false, false, null);
    }

    /** Whalin's types with its settings: {@code primitiveAsString} as Whalin's
     * {@code setPrimitiveAsString} (see the class comment), {@code allowSerializable} turns
     * Java serialization on (flags 8; serialized values read back as their objects: only for
     * writers you trust), and {@code loader} resolves the classes of deserialized objects, with
     * {@code ObjectInputStream}'s own resolution for a class it does not find (null: that
     * resolution alone), as Whalin's {@code setClassLoader}. */
    public WhalinTranscoder(boolean primitiveAsString, boolean allowSerializable, ClassLoader loader) {
        this(primitiveAsString, allowSerializable, loader, false, null);
    }

    private WhalinTranscoder(boolean primitiveAsString, boolean allowSerializable, ClassLoader loader,
                             boolean markers, WhalinTranscoder twin) {
        this.primitiveAsString = primitiveAsString;
        this.allowSerializable = allowSerializable;
        this.loader = loader;
        this.markers = markers;
        this.twin = twin != null ? twin : new WhalinTranscoder(primitiveAsString, allowSerializable, loader, !markers, this);
    }

    /** Whether natively handled values are stored as their text (Whalin's
     * {@code setPrimitiveAsString}). */
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

    /** This transcoder with Whalin's own markers under {@code whalin}, without elsewhere. */
    @Override
    public Transcoder forValueFormat(String format) {
        return "whalin".equals(format) == markers ? this : twin;
    }

    @Override
    public CachedData encode(Object v) {
        if (markers && !primitiveAsString) {
            if (v instanceof Integer) return Kinds.marked(v, MARKER_INTEGER);
            if (v instanceof Short) return Kinds.marked(v, MARKER_SHORT);
            if (v instanceof Byte) return Kinds.marked(v, MARKER_BYTE);
            if (v instanceof StringBuffer) return new CachedData(Utf8.value(v.toString()), MARKER_STRINGBUFFER, Kind.TEXT);
            if (v instanceof StringBuilder) return new CachedData(Utf8.value(v.toString()), MARKER_STRINGBUILDER, Kind.TEXT);
        }
        return Kinds.encode(v, primitiveAsString, allowSerializable);
    }

    @Override
    public Object decode(byte[] b, Kind kind) {
        return Kinds.decode(b, kind, primitiveAsString, allowSerializable, loader);
    }

    /** Under {@code whalin}, an integer or text as the type its marker names (the core has
     * checked the range: a Short's value holds 16 bits). */
    @Override
    public Object decode(byte[] b, Kind kind, int flags) {
        Object v = decode(b, kind);
        if (!markers || primitiveAsString) return v;
        if (kind == Kind.INT && v instanceof Long) {
            long n = (Long) v;
            if (flags == MARKER_INTEGER && n == (int) n) return Integer.valueOf((int) n);
            if (flags == MARKER_SHORT && n == (short) n) return Short.valueOf((short) n);
            if (flags == MARKER_BYTE && n == (byte) n) return Byte.valueOf((byte) n);
        } else if (kind == Kind.TEXT && v instanceof String) {
            if (flags == MARKER_STRINGBUFFER) return new StringBuffer((String) v);
            if (flags == MARKER_STRINGBUILDER) return new StringBuilder((String) v);
        }
        return v;
    }
}
