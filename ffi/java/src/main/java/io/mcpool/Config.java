package io.mcpool;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A client configuration kept on the Java side (plain values, copyable) and turned into an
 * {@code mcpool_config} only for the moment a client is built, so no native configuration
 * outlives a call. Options are the core's, by name and in the core's text forms
 * ({@code "250ms"}, {@code "true"}, {@code "whalin-native"}): the core's option table parses
 * and checks them, and its error names the option, the value and the accepted form.
 */
final class Config {
    final List<String> servers = new ArrayList<>();
    final List<Integer> weights = new ArrayList<>();
    /** The preset, applied before every other option (null: none). */
    String preset;
    /** The core's options by name, in the order they were last set (the preset apart). */
    final Map<String, String> options = new LinkedHashMap<>();
    ServerEventListener listener;
    /** The per-operation listener with its error count (null: none). */
    Native.OperationDispatch operations;

    Config copy() {
        Config c = new Config();
        c.servers.addAll(servers);
        c.weights.addAll(weights);
        c.preset = preset;
        c.options.putAll(options);
        c.listener = listener;
        c.operations = operations;
        return c;
    }

    /** Sets a core option (a null value is a {@link ClientException} naming it). */
    Config set(String name, String value) {
        Mcpool.notNull(name, "option name");
        Mcpool.notNull(value, "option " + name);
        Utf8.text(name, "option name"); // text with no UTF-8 form is refused here, not at build
        Utf8.text(value, "option " + name);
        String n = canonicalName(name); // "io-timeout" and "io_timeout" are one option
        // options apply in the order given: one set again moves to its new place
        options.remove(n);
        options.put(n, value);
        return this;
    }

    /** An option name as the core reads it: trimmed, ASCII lower case, {@code -} as {@code _}. */
    static String canonicalName(String name) {
        String t = name.trim();
        StringBuilder b = new StringBuilder(t.length());
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            b.append(c == '-' ? '_' : c >= 'A' && c <= 'Z' ? (char) (c + 32) : c);
        }
        return b.toString();
    }

    /**
     * Refuses what the native side would misread, before any native call: a negative weight
     * (it would become 2^32 - 1 as the C ABI's unsigned weight), a null or unencodable string.
     * Text is passed to the C side as strict UTF-8 bytes ({@link Utf8}), never as JNI's
     * modified UTF-8.
     *
     * @return the client handle, the global reference to the event listener and the one to the
     *     operation listener (0 without one), which must outlive the client ({@link NativeClient}
     *     releases them)
     */
    long[] buildClient() {
        byte[][] addrs = new byte[servers.size()][];
        for (int i = 0; i < servers.size(); i++) {
            int w = weights.get(i);
            if (w < 0) {
                throw ClientException.invalidArgument("server " + servers.get(i) + ": weight " + w
                    + " is negative (weights start at 1)");
            }
            addrs[i] = Utf8.text(servers.get(i), "server address");
        }
        List<byte[]> names = new ArrayList<>(), values = new ArrayList<>();
        if (preset != null) {
            names.add(Utf8.text("preset", "option name"));
            values.add(Utf8.text(preset, "option preset"));
        }
        for (Map.Entry<String, String> e : options.entrySet()) {
            names.add(Utf8.text(e.getKey(), "option name"));
            values.add(Utf8.text(e.getValue(), "option " + e.getKey()));
        }
        long cfg = Native.configNew();
        try {
            for (int i = 0; i < addrs.length; i++) {
                Native.configAddServer(cfg, addrs[i], weights.get(i));
            }
            for (int i = 0; i < names.size(); i++) {
                Native.configSet(cfg, names.get(i), values.get(i));
            }
            long ref = listener == null ? 0 : Native.configSetEventListener(cfg, listener);
            long opRef = 0;
            try {
                opRef = operations == null ? 0 : Native.configSetOperationListener(cfg, operations);
                return new long[] {Native.clientNew(cfg), ref, opRef};
            } catch (RuntimeException | Error e) {
                Native.releaseRef(ref);
                Native.releaseRef(opRef);
                throw e;
            }
        } finally {
            Native.configFree(cfg);
        }
    }
}
