package io.mcpool;

import java.util.ArrayList;
import java.util.HashMap;
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
    /** One call to replay on the native configuration: a server added ({@code option} null)
     * or an option set. */
    private static final class Step {
        final String option, value;
        final int weight;
        /** The value's bytes as given (an option that takes bytes: the key prefix), or null:
         * {@link #value}'s UTF-8. */
        final byte[] raw;

        Step(String option, String value, int weight) {
            this(option, value, weight, null);
        }

        Step(String option, String value, int weight, byte[] raw) {
            this.option = option;
            this.value = value;
            this.weight = weight;
            this.raw = raw;
        }
    }

    /** The servers added and the options set (the preset apart), in call order: build()
     * replays them in that order, as a C program calls {@code mcpool_config_add_server} and
     * {@code mcpool_config_set}, so the core's rules decide what each does to the ones
     * before (a {@code servers} option replaces the servers so far, a server added after it
     * is appended; an option set again takes its new value). */
    private final List<Step> steps = new ArrayList<>();
    /** The preset, applied before every other option (null: none). */
    String preset;
    /** Each option's last value, by canonical name, for the binding's own lookups
     * ({@code value_format}, {@code serialized_java}); the core reads {@link #steps}. */
    final Map<String, String> options = new HashMap<>();
    ServerEventListener listener;
    /** The per-operation listener with its error count (null: none). */
    Native.OperationDispatch operations;
    /** The resolver of server host names (null: the system's). */
    Resolver resolver;

    Config copy() {
        Config c = new Config();
        c.steps.addAll(steps);
        c.preset = preset;
        c.options.putAll(options);
        c.listener = listener;
        c.operations = operations;
        c.resolver = resolver;
        return c;
    }

    /** Sets a core option (a null value is a {@link ClientException} naming it). */
    Config set(String name, String value) {
        Mcpool.notNull(name, "option name");
        Mcpool.notNull(value, "option " + name);
        Utf8.text(name, "option name"); // text with no UTF-8 form is refused here, not at build
        String n = canonicalName(name); // "io-timeout" and "io_timeout" are one option
        value(n, value, "option " + name);
        steps.add(new Step(n, value, 0));
        options.put(n, value);
        return this;
    }

    /** The options whose value no message shows (only its length), by canonical name: the
     * core's rule ({@code mcpool_option_is_secret}: the SASL password), as the core shows it
     * ({@code <redacted, N bytes>}). */
    static boolean secret(String canonicalName) {
        return Secrets.NAMES.contains(canonicalName);
    }

    /** The secret options' names, read from the core's table once. */
    private static final class Secrets {
        static final java.util.Set<String> NAMES = names();

        private static java.util.Set<String> names() {
            java.util.Set<String> out = new java.util.HashSet<>();
            for (int i = 0, n = Native.optionCount(); i < n; i++) {
                if (Native.optionIsSecret(i)) out.add(Native.optionName(i, false));
            }
            return java.util.Collections.unmodifiableSet(out);
        }
    }

    /** An option's value as UTF-8 ({@code what} names it in a refusal), shown in a refusal
     * as the core shows it: a secret's text never ({@link Utf8#secret}), nor a
     * {@code libmemcached_config} string's (the core shows its length only: it may hold
     * {@code --SASL-PASSWORD=} or a {@code --SERVER=} with a password); a server list's
     * as an address ({@link Utf8#address(String, String)}: a {@code user:password@} hidden). */
    private static byte[] value(String canonicalName, String value, String what) {
        if (secret(canonicalName) || canonicalName.equals("libmemcached_config")) return Utf8.secret(value, what);
        if (canonicalName.equals("servers")) return Utf8.address(value, what);
        return Utf8.text(value, what);
    }

    /** Sets the key prefix to {@code prefix}'s bytes as given, any bytes (a Latin-1
     * namespace a Cache::Memcached::Fast fleet uses), for the core to check as it checks a
     * key (tester finding keys2 2: only UTF-8 text could be given). */
    Config setKeyPrefixBytes(byte[] prefix) {
        Mcpool.notNull(prefix, "option key_prefix");
        byte[] copy = prefix.clone();
        String shown = new String(copy, java.nio.charset.StandardCharsets.ISO_8859_1);
        steps.add(new Step("key_prefix", shown, 0, copy));
        options.put("key_prefix", shown);
        return this;
    }

    /** Adds a server (after the servers and the {@code servers} option given so far). */
    Config addServer(String addr, int weight) {
        Mcpool.notNull(addr, "server address");
        steps.add(new Step(null, addr, weight));
        return this;
    }

    /** The number of the option {@code name} names, by the core's one rule for option names
     * ({@code mcpool_option_find}: space around it trimmed, case ignored, {@code -} as
     * {@code _}), or -1 for none; the binding keeps no spelling rule of its own (tester finding
     * retest40 5: its own trim() kept a no-break space the core trims). */
    static int optionIndex(String name) {
        return Native.optionFind(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** An option name as the core reads it: the name of the option it names
     * ({@link #optionIndex}), or, naming none, the name as given (which the core refuses). */
    static String canonicalName(String name) {
        int i = optionIndex(name);
        return i >= 0 ? Native.optionName(i, false) : name;
    }

    /**
     * Refuses what the native side would misread, before any native call: a null or
     * unencodable string. (A weight below 1 goes to the core, which refuses it as a
     * configuration error naming the server: the JNI side passes a negative one as 0.)
     * Text is passed to the C side as strict UTF-8 bytes ({@link Utf8}), never as JNI's
     * modified UTF-8.
     *
     * <p>The resolver goes to the native configuration as a block the library frees once
     * nothing can call it any more ({@link Native#configSetResolver}): nothing to release here,
     * but the caller keeps the resolver reachable as long as the client ({@link NativeClient}).
     *
     * @return the client handle, the weak global reference to the event listener and the one
     *     to the operation listener (0 without one), which must outlive the client
     *     ({@link NativeClient} releases them, and keeps the listeners themselves reachable)
     */
    long[] buildClient() {
        long cfg = nativeConfig();
        try {
            if (resolver != null) Native.configSetResolver(cfg, resolver);
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

    /**
     * A client of this configuration, closed before it is returned (mcpool_client_close), for
     * a closed client's calls to be refused by the core in its words ({@link NativeClient}:
     * the client itself is freed at close). Its options are the client's, so the core checks
     * a call's key, value and arguments as that client's (a key a Whalin pool sanitizes, a
     * meta-only call) and then refuses it as closed, naming the call and the key, exactly as
     * C's {@code mcpool_last_error_message} after a call on a closed client. It never talks to
     * a server: min idle 0 (no connection opened in the background before the close), no
     * resolver and no listeners (nothing of the caller's is called), and closed at once.
     * The caller frees it with {@link Native#clientFree}.
     */
    long buildClosed() {
        long cfg = nativeConfig();
        try {
            Native.configSet(cfg, Utf8.text("min_idle", "option name"), Utf8.text("0", "option min_idle"));
            long h = Native.clientNew(cfg);
            Native.clientClose(h);
            return h;
        } finally {
            Native.configFree(cfg);
        }
    }

    /** A native configuration of the preset and the steps, replayed in call order (the
     * caller frees it); every text is encoded before it is made. */
    private long nativeConfig() {
        List<byte[]> names = new ArrayList<>(), values = new ArrayList<>();
        List<Integer> weights = new ArrayList<>();
        if (preset != null) {
            names.add(Utf8.text("preset", "option name"));
            values.add(Utf8.text(preset, "option preset"));
            weights.add(0);
        }
        for (Step st : steps) {
            if (st.option == null) {
                names.add(null);
                values.add(Utf8.address(st.value, "server address"));
            } else {
                names.add(Utf8.text(st.option, "option name"));
                values.add(st.raw != null ? st.raw : value(st.option, st.value, "option " + st.option));
            }
            weights.add(st.weight);
        }
        long cfg = Native.configNew();
        try {
            for (int i = 0; i < names.size(); i++) { // in call order, the preset first
                if (names.get(i) == null) Native.configAddServer(cfg, values.get(i), weights.get(i));
                else Native.configSet(cfg, names.get(i), values.get(i));
            }
            return cfg;
        } catch (RuntimeException | Error e) {
            Native.configFree(cfg);
            throw e;
        }
    }
}
