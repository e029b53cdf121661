package io.mcpool;

import java.util.Arrays;
import java.util.Objects;

/** A value with its CAS unique, from {@code gets} (as Whalin's MemcachedItem). Two items are
 * equal when their CAS uniques are and their values are (arrays by content). */
public final class MemcachedItem {
    /** How much of a value {@link #toString()} shows: this many bytes of a {@code byte[]} (in
     * hex), this many characters of any other value's text. */
    static final int SHOWN_BYTES = 16, SHOWN_CHARS = 64;

    /** The value (decoded as {@link Mcpool#get} decodes it). */
    public final Object value;
    /** The item's CAS unique, for {@link Mcpool#cas} and {@link Mcpool#casMulti}. */
    public final long casUnique;

    /** An item of a value and its CAS unique (as {@link Mcpool#gets} returns; for
     * {@link Mcpool#casMulti}, the value to store and the CAS unique read). */
    public MemcachedItem(Object value, long casUnique) {
        this.value = value;
        this.casUnique = casUnique;
    }

    /** The value, as {@link #value}. */
    public Object getValue() {
        return value;
    }

    /** The CAS unique, as {@link #casUnique}. */
    public long getCasUnique() {
        return casUnique;
    }

    /** Equal to another item with the same CAS unique and an equal value: arrays (a
     * {@code byte[]}) compared by content ({@link Objects#deepEquals}). */
    @Override
    public boolean equals(Object o) {
        if (this == o) return true;
        if (!(o instanceof MemcachedItem)) return false;
        MemcachedItem other = (MemcachedItem) o;
        return casUnique == other.casUnique && Objects.deepEquals(value, other.value);
    }

    /** Consistent with {@link #equals}: an array value hashed by content. */
    @Override
    public int hashCode() {
        return 31 * Arrays.deepHashCode(new Object[] {value}) + Long.hashCode(casUnique);
    }

    /** For logs, bounded whatever the value's size: {@code MemcachedItem{value="text", cas=12}};
     * a {@code byte[]} as its length and its first {@value #SHOWN_BYTES} bytes in hex
     * ({@code byte[36000] 789cedc1...}), any value's text cut after {@value #SHOWN_CHARS}
     * characters (with its full length), a value other than a String followed by its type. */
    @Override
    public String toString() {
        return "MemcachedItem{value=" + show(value) + ", cas=" + Long.toUnsignedString(casUnique) + "}";
    }

    /** A value's bounded text for {@link #toString()}. */
    static String show(Object v) {
        if (v == null) return "null";
        if (v instanceof byte[]) {
            byte[] b = (byte[]) v;
            StringBuilder s = new StringBuilder("byte[").append(b.length).append(']');
            int n = Math.min(b.length, SHOWN_BYTES);
            if (n > 0) s.append(' ');
            for (int i = 0; i < n; i++) {
                s.append(Character.forDigit((b[i] >> 4) & 0xf, 16)).append(Character.forDigit(b[i] & 0xf, 16));
            }
            if (b.length > n) s.append("...");
            return s.toString();
        }
        String text = v instanceof Object[] ? Arrays.deepToString((Object[]) v) : String.valueOf(v);
        String cut = text;
        if (text.length() > SHOWN_CHARS) {
            int end = Character.isHighSurrogate(text.charAt(SHOWN_CHARS - 1)) ? SHOWN_CHARS - 1 : SHOWN_CHARS; // never half a pair
            cut = text.substring(0, end) + "...(" + text.length() + " chars)";
        }
        return v instanceof String ? "\"" + cut + "\"" : cut + " (" + v.getClass().getSimpleName() + ")";
    }
}
