package io.mcpool;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * Every String that becomes bytes for the core (keys, the key prefix, server addresses and
 * option names, statistics groups, String values) is encoded here, as real UTF-8 and
 * strictly: a String with an unpaired surrogate has no UTF-8 form, and is refused with a
 * {@link ClientException} instead of being sent with {@code ?} in its place
 * ({@code String.getBytes(UTF_8)} would make {@code "user:\ud800"} and {@code "user:?"} one
 * key). Properly paired surrogates (characters outside the BMP, e.g. U+1F600) and NUL are
 * ordinary characters and are encoded as UTF-8 (four bytes; one zero byte), never as the
 * modified UTF-8 of JNI's string functions. A message, warning or log line that names a
 * server address shows it only through {@link #address(String)}, the core's rule.
 */
final class Utf8 {
    private Utf8() {}

    /** A key's bytes; null or unencodable: {@link ClientException} (MCPOOL_INVALID_KEY). */
    static byte[] key(String key) {
        if (key == null) throw ClientException.invalidArgument("null key");
        if (!hasSurrogate(key)) return key.getBytes(StandardCharsets.UTF_8);
        return strict(key, e -> ClientException.invalidKey("key \"" + printable(key) + "\" " + problem(key), e));
    }

    /** Configuration text (what names it, e.g. "server address"); MCPOOL_INVALID_ARGUMENT. */
    static byte[] text(String s, String what) {
        if (s == null) throw ClientException.invalidArgument(what + " is null");
        if (!hasSurrogate(s)) return s.getBytes(StandardCharsets.UTF_8);
        return strict(s, e -> ClientException.invalidArgument(what + " \"" + printable(s) + "\" " + problem(s), e));
    }

    /** A secret's bytes (the SASL password): as {@link #text}, but a refusal never shows the
     * text, nor any char of it: it says what (the option's name), the length and the index
     * of the unpaired surrogate, and chains no exception (tester finding secure2 3: the
     * password was quoted in the message). */
    static byte[] secret(String s, String what) {
        if (s == null) throw ClientException.invalidArgument(what + " is null");
        if (!hasSurrogate(s)) return s.getBytes(StandardCharsets.UTF_8);
        return strict(s, e -> ClientException.invalidArgument(what + " (not shown, " + s.length()
            + " chars) has an unpaired surrogate at index " + unpairedSurrogate(s)
            + ", which has no UTF-8 encoding"));
    }

    /** A server address's bytes, or a {@code servers} option's list (what names it, e.g.
     * "server address"); MCPOOL_INVALID_ARGUMENT. As {@link #text}, but a refusal shows the
     * text as the core shows an address ({@link #address}: a {@code user:password@} before
     * the host hidden, tester finding retest16 5: the password was quoted), and says no
     * index (it may fall in the hidden part). */
    static byte[] address(String s, String what) {
        if (s == null) throw ClientException.invalidArgument(what + " is null");
        if (unpairedSurrogate(s) < 0) return s.getBytes(StandardCharsets.UTF_8); // pairs are exact
        throw ClientException.invalidArgument(what + " \"" + printable(address(s)) + "\" has an unpaired "
            + "surrogate (U+FFFD in the text shown), which has no UTF-8 encoding");
    }

    /**
     * A server address (or a list of them, as the {@code servers} option takes it) as the
     * core's errors show it, for the binding's own messages, warnings and logs that name one:
     * the core's rule ({@code mcpool_address_shown}), never one of the binding's own, so a
     * {@code user:password@} before the host shows as {@code <userinfo hidden>@}. An unpaired
     * surrogate (no UTF-8 form) is passed as U+FFFD, which leaves the address's shape, so it
     * is hidden with the userinfo it is in. null is "null"; should the JNI library be
     * unusable, nothing of the address is shown.
     */
    static String address(String s) {
        if (s == null) return "null";
        String t = s;
        if (unpairedSurrogate(s) >= 0) {
            StringBuilder b = new StringBuilder(s.length());
            for (int i = 0, n = s.length(); i < n; i++) {
                char c = s.charAt(i);
                if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    b.append(c).append(s.charAt(++i));
                } else {
                    b.append(Character.isSurrogate(c) ? '\uFFFD' : c);
                }
            }
            t = b.toString();
        }
        try {
            return decode(Native.addressShown(t.getBytes(StandardCharsets.UTF_8)));
        } catch (LinkageError e) {
            return "<address not shown>";
        }
    }

    /** A String value's bytes (the transcoders); the value itself is not quoted in the error. */
    static byte[] value(String s) {
        if (!hasSurrogate(s)) return s.getBytes(StandardCharsets.UTF_8);
        return strict(s, e -> new ClientException("cannot store a String of " + s.length() + " chars that "
            + problem(s), e));
    }

    /** Bytes from the core or a server as a String (labels, statistics, messages). */
    static String decode(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    /** The fast path: a String without any surrogate char encodes the same either way. */
    private static boolean hasSurrogate(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            if (Character.isSurrogate(s.charAt(i))) return true;
        }
        return false;
    }

    private static byte[] strict(String s, Function<CharacterCodingException, ClientException> error) {
        CharsetEncoder enc = StandardCharsets.UTF_8.newEncoder()
            .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer bb;
        try {
            bb = enc.encode(CharBuffer.wrap(s));
        } catch (CharacterCodingException e) {
            throw error.apply(e);
        }
        byte[] out = new byte[bb.remaining()];
        bb.get(out);
        return out;
    }

    /** Index of the first unpaired surrogate, or -1. */
    static int unpairedSurrogate(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }

    private static String problem(String s) {
        int i = unpairedSurrogate(s);
        return "has an unpaired surrogate " + String.format("\\u%04X", (int) s.charAt(Math.max(i, 0)))
            + " at index " + i + ", which has no UTF-8 encoding";
    }

    /** The string for a message: control characters and unpaired surrogates as \\uXXXX, at
     * most 100 chars. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder();
        int n = Math.min(s.length(), 100);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
            if (paired) {
                b.append(c).append(s.charAt(++i));
            } else if (Character.isSurrogate(c) || Character.isISOControl(c) || c == '"' || c == '\\') {
                b.append(String.format("\\u%04X", (int) c));
            } else {
                b.append(c);
            }
        }
        if (n < s.length()) b.append("...");
        return b.toString();
    }
}
