package io.mcpool;

import java.util.Arrays;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The modern entry point: one thread-safe client over the mcpool core, closed with
 * {@link #close()} (or try-with-resources). Share one instance between all threads. An
 * instance dropped unclosed is freed by a {@link java.lang.ref.Cleaner}, but only after a
 * garbage collection finds it unreachable: until then it keeps its connections and file
 * descriptors, so a client per request is a leak in all but name.
 *
 * <pre>{@code
 * try (Mcpool mc = Mcpool.builder().servers("10.0.0.1:11211", "10.0.0.2:11211")
 *         .distribution("spymemcached-ketama").valueFormat("mcpool").build()) {
 *     mc.set("user:1", "Ada", 3600);
 *     String name = (String) mc.get("user:1");
 * }
 * }</pre>
 *
 * Keys are Java Strings sent as UTF-8 (characters outside the BMP as their four UTF-8 bytes).
 * A key with an unpaired surrogate has no UTF-8 form and is refused with a
 * {@link ClientException} (MCPOOL_INVALID_KEY), never sent with {@code ?} in its place; so are
 * String values with one (the transcoders refuse them). Errors are {@link McpoolException}s
 * (see there); misses and stores that did not happen are answers: null, false, an empty
 * OptionalLong. A null key, key collection, value or setting is a {@link ClientException}
 * (MCPOOL_INVALID_ARGUMENT), never a NullPointerException.
 *
 * <p>TTLs are seconds (0 = never expires; above 30 days, {@link #RELATIVE_MAX}, memcached
 * reads an absolute Unix time, up to {@link #MAX_TTL}, 2147483647). A duration longer than
 * 30 days ({@code 40 * 86400}) is no TTL as it is: memcached would read a moment in 1970 and
 * drop the item while {@code set} answers true. {@link #expiryFromNow(long)} (or of a
 * {@link java.time.Duration}) makes any duration the TTL memcached reads as meant, by the
 * core's rule, as C's {@code mcpool_expiry_from_now}, Python's
 * {@code mcpool.expiry_from_now} and Perl's {@code Mcpool::expiry_from_now} do. A negative
 * TTL of a store, touch or counter (set, add, replace, cas, setBytes, setMulti,
 * setMultiNoreply, setWithVersion, touch, incrOrInit, decrOrInit; and of gat, gats,
 * gatMulti, gatsMulti) stores the item already expired, on every protocol, as memcached reads
 * a negative expiry: the core's rule for signed expiries ({@link #EXPIRED_AT_ONCE}; Python and
 * Perl do the same). spymemcached does so on the text protocol only: on binary it sends -1 as
 * the unsigned 4294967295, a unix time in 2106, and its item stays. The lease
 * times of {@link #getLease} and {@link #invalidate}, which have no such meaning, refuse a
 * negative one: a {@link ClientException} (MCPOOL_INVALID_ARGUMENT) naming it, nothing sent.
 *
 * <p>Values: byte[] reads back as byte[], String as String, Long/Integer/Short/Byte as Long
 * (with a {@link SpyTranscoder}: Integer, Long and Byte as themselves, as spymemcached; under
 * the {@code whalin} format every type as itself, as Whalin: {@link WhalinTranscoder}),
 * Boolean as Boolean, in the value format of the fleet ({@link Builder#valueFormat(String)},
 * default {@code mcpool}: what mcpool's Python, Perl, C and Rust clients read). A value Java
 * cannot read (a Python pickle, a Perl Storable image, flags that mean nothing in the format,
 * a compressed value that does not inflate, a serialized object with serialization off) is
 * an {@link McpoolException} naming the key, never its bytes.
 *
 * <p>A call is not interruptible: {@link Thread#interrupt()} does not cut it short (as in
 * Whalin's client, unlike spymemcached's futures). The I/O, connect and operation timeouts
 * bound it; it ends with its answer or a {@link TimeoutException}, and the thread's interrupt
 * status is kept for the caller's next blocking call.
 */
public final class Mcpool implements AutoCloseable {
    final NativeClient nc;
    final Transcoder tc;
    /** The client's value format, as the core names it ({@code whalin}, {@code mcpool}, ...). */
    final String valueFormat;
    /** Per server: errors that a lenient caller ({@link MemCachedClient}) turned into
     * null/false/-1, reported as {@code suppressed_errors} by {@link #metrics()}. */
    private volatile ConcurrentHashMap<String, LongAdder> suppressed = new ConcurrentHashMap<>();
    /** The operation listener and its exception count (null: none). */
    private final Native.OperationDispatch operations;
    Mcpool(Config cfg, Transcoder tc) {
        this(cfg, f -> tc);
    }

    /** {@code pick} gives the transcoder for the value format the core built the client
     * with (null: the caller brings one, as {@link MemCachedClient}). */
    Mcpool(Config cfg, java.util.function.Function<String, Transcoder> pick) {
        this.nc = new NativeClient(cfg);
        this.operations = cfg.operations;
        long h = nc.acquire();
        try {
            // the format in force, whichever of a preset, an option or the core's default
            // set it: the core's answer, never a copy of its rules
            this.valueFormat = Native.valueFormat(h);
        } finally {
            nc.release();
        }
        Transcoder tc = pick.apply(valueFormat);
        this.tc = tc == null ? null : tc.forValueFormat(valueFormat);
    }

    /** Exceptions thrown by the {@link OperationListener} (swallowed: the call and the core
     * never see them); 0 without a listener. */
    public long operationListenerErrors() {
        return operations == null ? 0 : operations.errors.get();
    }

    /** The core's options, by name ({@link Builder#option}). */
    public static List<String> optionNames() {
        int n = Native.optionCount();
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) out.add(Native.optionName(i, false));
        return out;
    }

    /** The core's line for an option (type, unit, default, meaning), or null if unknown.
     * The name is read as {@link Builder#option} reads it: {@code -} as {@code _}, ASCII
     * case ignored ({@code "io-timeout"} is {@code io_timeout}). */
    public static String optionDoc(String name) {
        notNull(name, "option name");
        int i = Config.optionIndex(name);
        return i >= 0 ? Native.optionName(i, true) : null;
    }

    /** The mcpool core's version. */
    public static String coreVersion() {
        return Native.version();
    }

    /** Whether the JNI library's core speaks TLS (built with {@code make lib MCPOOL_FEATURES=tls}). */
    public static boolean tlsSupported() {
        return Native.tlsSupported();
    }

    /** The largest TTL memcached honours, 2^31-1 seconds (a unix time in January 2038; the
     * core's {@code MCPOOL_MAX_TTL}): its text and meta protocols read the expiry as a signed
     * 32-bit number. The largest int: every int TTL of this API is within it. */
    public static final int MAX_TTL = 2147483647;

    /** The TTL that stores an item already expired, 30 days and one second (a unix time in
     * 1970 to memcached; the core's {@code MCPOOL_EXPIRED_AT_ONCE}): what a negative TTL is
     * sent as, and what {@link #expiryFromNow(long)} answers for 0 or less. */
    public static final int EXPIRED_AT_ONCE = 2592001;

    /** The longest TTL memcached reads as seconds from now, 30 days (the core's
     * {@code MCPOOL_RELATIVE_MAX}); above it memcached reads a unix time, so a longer
     * duration goes through {@link #expiryFromNow(long)}. */
    public static final int RELATIVE_MAX = 2592000;

    /**
     * A duration (seconds from now: a framework's timeout, an "expires in") as the TTL to pass
     * to {@link #set(String, Object, int)} and the other calls, by the core's one rule
     * ({@code mcpool_expiry_from_now}, as Python's {@code mcpool.expiry_from_now} and Perl's
     * {@code Mcpool::expiry_from_now}): up to {@link #RELATIVE_MAX} (30 days) the seconds as
     * they are; above, the unix time they end at, since memcached reads a TTL above 30 days
     * as a unix time (the seconds themselves, {@code 40 * 86400}, would be a moment in 1970:
     * the item gone at once while {@code set} answers true); 0 or less
     * {@link #EXPIRED_AT_ONCE} (never 0, which is "never expires"). Reads the system clock, as
     * memcached compares with its own; no I/O. A moment after 2038-01-19T03:14:07Z (above
     * {@link #MAX_TTL}) is refused with the core's message, never a shorter TTL (Python and
     * Perl answer a number every call then refuses; an int cannot hold it). A duration that
     * ends after 9223372036854775807 (the latest moment the core names, in the year 292
     * billion) is refused as the core refuses it ({@code mcpool_expiry_moment_from_now_checked},
     * as Python and Perl: "invalid duration: ... is too long: from now it ends after
     * 9223372036854775807"), never as that capped moment.
     *
     * @throws ClientException MCPOOL_INVALID_ARGUMENT for a moment after 2038 or a duration
     *         that ends after 9223372036854775807
     */
    public static int expiryFromNow(long seconds) {
        return Native.expiryFromNow(seconds, 0, ascii("expiryFromNow(" + seconds + ")"));
    }

    /**
     * {@link #expiryFromNow(long)} of a {@link java.time.Duration}, as Python's
     * {@code expiry_from_now} takes a float: a fraction of a second by the core's rule for
     * fractions ({@code mcpool_whole_seconds}): a positive one rounds up (400 ms is 1 s, never
     * 0, "never expires"), but never across the 30-day line (30 days and 500 ms is
     * {@link #RELATIVE_MAX}, not a unix time in 1970); a negative duration expires the item
     * at once. A null duration is a {@link ClientException} (MCPOOL_INVALID_ARGUMENT).
     *
     * @throws ClientException MCPOOL_INVALID_ARGUMENT for a moment after 2038, a duration that
     *         ends after 9223372036854775807, or a null duration
     */
    public static int expiryFromNow(java.time.Duration duration) {
        notNull(duration, "duration");
        return Native.expiryFromNow(duration.getSeconds(), duration.getNano(),
            ascii("expiryFromNow(" + duration + ")"));
    }

    /** A call's name as it is written (digits, a Duration's text), for the core's message. */
    private static byte[] ascii(String call) {
        return call.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    /** A new {@link Builder}: no servers, no preset, every option at the core's default. */
    public static Builder builder() {
        return new Builder();
    }

    /** Configuration; every setter documents the core's default. */
    public static final class Builder {
        final Config cfg = new Config();
        Transcoder tc = new WhalinTranscoder();
        boolean tcSet;

        /** Servers, {@code host:port}, weight 1 each, added after the servers given so far
         * (by these calls or by {@code option("servers", ...)}, which replaces the list up to
         * its place in the call order). Order decides placement. */
        public Builder servers(String... addrs) {
            notNull(addrs, "servers");
            for (String a : addrs) notNull(a, "server address");
            for (String a : addrs) server(a, 1);
            return this;
        }

        /** A server with a placement weight (at least 1; 0 or a negative weight is refused by
         * {@link #build()} with a {@link ConfigurationException} naming the server, as a weight
         * field of 0 in the address is), added after the servers given so far, as
         * {@link #servers}. */
        public Builder server(String addr, int weight) {
            notNull(addr, "server address");
            cfg.addServer(addr, weight);
            return this;
        }

        /**
         * Any option of the core's table by name, in the core's text form: durations
         * {@code "250ms"}, {@code "1.5s"} (a bare number is milliseconds), booleans
         * {@code "true"}/{@code "false"}, sizes and counts as decimal integers, names.
         * {@link #optionNames()} lists them, {@link #optionDoc(String)} describes each. An
         * unknown name or a bad value is a {@link ClientException} (MCPOOL_CONFIG) from
         * {@link #build()}, naming the option, the value and the accepted form. The typed
         * setters below are this call with the option's name.
         *
         * <p>{@code serialized_java} also decides the default transcoder's serialization
         * ({@code option("serialized_java", "true")} stores and reads {@code Serializable}
         * objects); with a {@link #transcoder(Transcoder)} that disagrees, {@link #build()}
         * throws (see there).
         *
         * <p>Options and servers apply in the order given, after the preset
         * ({@code option("preset", ...)} is {@link #preset}), as the C ABI's
         * {@code mcpool_config_set} and {@code mcpool_config_add_server} calls in that order:
         * an option set again takes its new value; {@code option("servers", list)} replaces the
         * servers given before it, and {@link #servers}/{@link #server} after it add to its
         * list. {@link #build()} adds no option over them, so what nothing sets keeps the
         * preset's value or the core's default.
         */
        public Builder option(String name, String value) {
            if (name != null && Config.canonicalName(name).equals("preset")) return preset(value);
            cfg.set(name, value);
            return this;
        }

        /** A legacy client's defaults, placement and value layout (its value format too:
         * {@code preset("spymemcached")} reads and writes spymemcached's types), applied
         * before every other option whatever the call order, so any option or setter
         * overrides it: {@code whalin}, {@code spymemcached}, {@code cache-memcached-fast},
         * ... (the core's presets; none by default; the last one given counts). */
        public Builder preset(String name) {
            notNull(name, "preset");
            Utf8.text(name, "option preset");
            cfg.preset = name;
            return this;
        }

        /** Placement profile, e.g. {@code whalin-native}, {@code spymemcached-ketama}
         * (default {@code cache-memcached}). */
        public Builder distribution(String name) { return option("distribution", name); }

        /** A dead server's keys: {@code fail-fast} (default), {@code rehash} or {@code eject}. */
        public Builder failover(String name) { return option("failover", name); }

        /** {@code text} (default), {@code meta} or {@code binary}. */
        public Builder protocol(String name) { return option("protocol", name); }

        /** The codec of compressed values (the core's {@code compression_codec}):
         * {@code auto} (default: the value format's: zlib under {@code mcpool}, the default
         * format, and under {@code pylibmc}, {@code python-memcached}, {@code pymemcache};
         * gzip under {@code whalin}, {@code spymemcached} and {@code cache-memcached(-fast)}),
         * {@code zlib}, {@code gzip}, or {@code zstd} ({@code mcpool} format only). The value
         * format marks it in the flags: under {@code mcpool} the codec field, bits 20-21
         * ({@code 0x00100000} zlib, {@code 0x00200000} gzip, {@code 0x00300000} zstd); flag
         * {@code 8} (zlib) under the Python formats; flag {@code 2} (gzip) under the Java and
         * Perl ones (docs/value-format.md). A codec the format cannot mark (zlib under
         * {@code whalin}, zstd outside {@code mcpool}) is refused by {@link #build()}
         * (MCPOOL_CONFIG). Named after the core's option, which every surface takes by that name
         * ({@code option("compression_codec", name)} here, the CLI's
         * {@code --compression-codec}). */
        public Builder compressionCodec(String name) { return option("compression_codec", name); }

        /**
         * The same as {@link #compressionCodec(String)}, under its former name: it sets the
         * core's {@code compression_codec}, the codec mcpool writes and marks in the value
         * format's flags.
         *
         * <p>It is <em>not</em> the core's legacy {@code compression_format} (Rust's
         * {@code ClientBuilder::compression_format}, C's {@code mcpool_config_set_compression_format}),
         * which selects another client's whole flag layout for compressed values (gzip in
         * bit 2, zlib in bit 8) and which Java does not offer: a C or Rust program's
         * {@code compression_format("gzip")} ported as {@code compressionFormat("gzip")} writes
         * mcpool's codec field (bits 20-21) instead (tester finding retest44 5).
         *
         * @deprecated use {@link #compressionCodec(String)}, named as the core's option; this
         *     name is kept for existing callers and does exactly the same.
         */
        @Deprecated
        public Builder compressionFormat(String name) { return compressionCodec(name); }

        /** Whether values are compressed at all (the core's {@code compression}; default on,
         * off under the {@code pylibmc}, {@code python-memcached}, {@code pymemcache},
         * {@code cache-memcached(-fast)} and {@code libmemcached} presets): {@code false}
         * never compresses (reads still inflate). */
        public Builder compression(boolean on) { return option("compression", Boolean.toString(on)); }

        /** Values of at least this many bytes are compressed (the core's
         * {@code compression_threshold}, default 30720), each kept compressed only when it
         * shrinks to {@link #compressionRatio}: 0 compresses every value, as the core's 0
         * does on every surface. A negative count is refused by {@link #build()}
         * ({@link ConfigurationException}, MCPOOL_CONFIG, naming the option). It does not turn
         * compression on or off: that is {@link #compression(boolean)}. (Before 2026-12-04 a
         * count of 0 or less here turned compression off, the opposite of the core's 0.) */
        public Builder compressionThreshold(long bytes) {
            return option("compression_threshold", Long.toString(bytes));
        }

        /** Keep a compressed value only if compressed/original is at most this (default 0.8). */
        public Builder compressionRatio(double ratio) { return option("compression_ratio", Double.toString(ratio)); }

        /** URL-encode keys as Whalin did (default: on for whalin-* profiles, else off). */
        public Builder sanitizeKeys(boolean on) { return option("sanitize_keys", Boolean.toString(on)); }

        /** Prepended to every key (as UTF-8; unpaired surrogates are refused). */
        public Builder keyPrefix(String prefix) { return option("key_prefix", prefix); }

        /** Prepended to every key, its bytes as given: a namespace that is not UTF-8 (a
         * Latin-1 one of a Cache::Memcached::Fast or libmemcached fleet), or has a control
         * byte (taken on meta and binary, sent base64 on meta; the text protocol refuses it
         * when the client is built), as the core takes a key's bytes. */
        public Builder keyPrefixBytes(byte[] prefix) {
            cfg.setKeyPrefixBytes(prefix);
            return this;
        }

        /** Connections per server opened when the client is built and kept idle (the core's
         * {@code min_idle}, default 0: each connection is opened by the first call that needs
         * it; the {@code whalin} and {@code spymemcached} presets set 1). Not opened again
         * after {@link Mcpool#disconnectAll()} or a server's return until calls need them. */
        public Builder minIdle(int n) { return option("min_idle", Integer.toString(n)); }

        /** Most connections per server (default 16). */
        public Builder maxConnections(int n) { return option("max_size", Integer.toString(n)); }

        /** A pooled connection idle for longer is closed (the core's {@code idle_timeout},
         * default 300000; 0 keeps idle connections). */
        public Builder idleTimeoutMillis(long ms) { return option("idle_timeout", ms + "ms"); }

        /** A connection older than this is not handed out again and is closed (the core's
         * {@code max_lifetime}, default 0: no limit). */
        public Builder maxLifetimeMillis(long ms) { return option("max_lifetime", ms + "ms"); }

        /** Each connection attempt (the core's {@code connect_timeout}, default 1000). */
        public Builder connectTimeoutMillis(long ms) { return option("connect_timeout", ms + "ms"); }

        /** Each socket read or write (default 1000). */
        public Builder ioTimeoutMillis(long ms) { return option("io_timeout", ms + "ms"); }

        /** Wait for a free pooled connection (default 5000). */
        public Builder poolTimeoutMillis(long ms) { return option("pool_timeout", ms + "ms"); }

        /** A bound on a whole call, retries and failover included (0: none; default 5000). */
        public Builder operationTimeoutMillis(long ms) { return option("operation_timeout", ms + "ms"); }

        /** TCP_NODELAY, Nagle's algorithm off (the core's {@code nodelay}, default on). */
        public Builder noDelay(boolean on) { return option("nodelay", Boolean.toString(on)); }

        /** SO_KEEPALIVE on every TCP connection (the core's {@code tcp_keepalive}, default
         * off): the system probes a connection idle for {@link #tcpKeepidleSeconds} (or its
         * own default, two hours on Linux), which keeps a NAT's or firewall's state of a pooled
         * connection alive and finds one the network silently lost. */
        public Builder tcpKeepalive(boolean on) { return option("tcp_keepalive", Boolean.toString(on)); }

        /** With {@link #tcpKeepalive}, the idle time before the first probe and between
         * probes, in seconds (the core's {@code tcp_keepidle}: TCP_KEEPIDLE and TCP_KEEPINTVL;
         * default 0: the system's). A negative count is refused by {@link #build()}
         * (MCPOOL_CONFIG, naming the option). */
        public Builder tcpKeepidleSeconds(int seconds) { return option("tcp_keepidle", seconds + "s"); }

        /** A version round trip on every checkout of a pooled connection (the core's
         * {@code test_on_check_out}, default off: it costs a round trip, and a broken
         * connection is never given back to the pool anyway). */
        public Builder testOnCheckOut(boolean on) { return option("test_on_check_out", Boolean.toString(on)); }

        /** Consecutive failures after which a server is marked dead (default 2). */
        public Builder failureLimit(int n) { return option("failure_limit", Integer.toString(n)); }

        /** First wait before a dead server is tried again (default 1000; doubles up to the max). */
        public Builder retryTimeoutMillis(long ms) { return option("retry_timeout", ms + "ms"); }

        /** The cap on the doubling wait of {@link #retryTimeoutMillis} (the core's
         * {@code retry_timeout_max}, default 30000). */
        public Builder retryTimeoutMaxMillis(long ms) { return option("retry_timeout_max", ms + "ms"); }

        /** The largest value a store sends, in bytes after compression (the core's
         * {@code max_value_size}, default 1048576, memcached's default item size): a larger
         * one is a {@link ClientException}, nothing sent. */
        public Builder maxValueSize(long bytes) { return option("max_value_size", Long.toString(bytes)); }

        /** The most bytes a compressed value may inflate to (the core's
         * {@code max_decompressed_size}, default 67108864): reading one that inflates beyond it
         * is an {@link McpoolException} (MCPOOL_DECOMPRESS) naming the key, and a store larger
         * than it is sent uncompressed, so the client can read back what it stores. */
        public Builder maxDecompressedSize(long bytes) { return option("max_decompressed_size", Long.toString(bytes)); }

        /** SASL PLAIN credentials (binary protocol). A password that is refused (an unpaired
         * surrogate: {@link ClientException} here; a NUL, a line break, over 4096 bytes:
         * {@link #build()}) is never shown in the exception, by this setter, by
         * {@code option("sasl_password", ...)} or by {@link SockIOPool#setOption}: its
         * length and what is wrong are. */
        public Builder sasl(String username, String password) {
            return option("sasl_username", username).option("sasl_password", password);
        }

        /** TLS on or off ({@link Mcpool#tlsSupported()}: when the core is built with TLS). mcpool does not
         * use the system's trusted certificates: TLS needs {@link #tlsCaFile} too, or
         * {@link #tlsInsecureSkipVerify} (tests only); {@code build()} says so otherwise. */
        public Builder tls(boolean on) { return option("tls", Boolean.toString(on)); }

        /** TLS, trusting the CA certificates in this PEM file. */
        public Builder tlsCaFile(String path) { return option("tls_ca_file", path); }

        /** TLS client authentication: certificate chain and private key, PEM files. */
        public Builder tlsClientCert(String certPath, String keyPath) {
            return option("tls_client_cert", certPath).option("tls_client_key", keyPath);
        }

        /** The name to verify in the servers' certificates, instead of each server's host. */
        public Builder tlsServerName(String name) { return option("tls_server_name", name); }

        /** Accept any certificate (testing only: anyone on the path can read the traffic). */
        public Builder tlsInsecureSkipVerify(boolean on) { return option("tls_insecure_skip_verify", Boolean.toString(on)); }

        /** Called on every server state change (marked dead, answering again): see
         * {@link ServerEventListener} for the threads it runs on. */
        public Builder onServerEvent(ServerEventListener listener) {
            notNull(listener, "server event listener");
            cfg.listener = listener;
            return this;
        }

        /** Called after every exchange with a server with its {@link OperationRecord}
         * (operation, keys, server, protocol, duration, outcome, bytes), and once for the keys
         * of a call refused before any server was asked (a bad key or value: server null): see
         * {@link OperationListener} for the thread it runs on and an OpenTelemetry example. */
        public Builder onOperation(OperationListener listener) {
            notNull(listener, "operation listener");
            cfg.operations = new Native.OperationDispatch(listener);
            return this;
        }

        /** Resolves the servers given by name with {@code resolver} instead of the system's
         * resolver (service discovery; IP literals and unix socket paths never reach it): the
         * C ABI's {@code mcpool_config_set_resolver_owned}. Called on a helper thread of the
         * library, not the caller's, at each connect a call makes, or every
         * {@code resolve_interval} ({@code option("resolve_interval", "30s")}, re-resolving in
         * the background); it must not call the client. Throwing, answering null, no address,
         * more than 64 or an item that is no IP literal fails the call that needed the answer
         * with a {@link ConnectionException} quoting why: see {@link Resolver}. Null removes
         * the one set (the system's resolver then). Every client built from this builder
         * shares the resolver, and holds it (the library reaches it only weakly). */
        public Builder resolver(Resolver resolver) {
            cfg.resolver = resolver;
            return this;
        }

        /** Fail-open (the core's {@code fail_open} option): a timeout or an unreachable
         * server answers as a miss (get: null) or not stored (set: false, delete/touch:
         * false, incr/decr: empty), counted in {@link Mcpool#metrics()}; protocol
         * violations, undecodable values and bad keys still throw. */
        public Builder failOpen(boolean on) { return option("fail_open", Boolean.toString(on)); }

        /** How Java types map to the core's kinds, and whether Java serialization is
         * allowed (default a {@link WhalinTranscoder} without it). A transcoder given here
         * also brings its value format ({@link Transcoder#valueFormat()}: {@code whalin},
         * {@code spymemcached}) unless {@link #valueFormat(String)}, the {@code value_format}
         * option or a {@link #preset} sets one. Serialization is
         * the transcoder's {@link Transcoder#allowSerializable()} unless
         * {@code option("serialized_java", ...)} is set: without a transcoder given, that
         * option turns the default transcoder's serialization on or off; with one that
         * disagrees, {@link #build()} throws a {@link ConfigurationException}
         * (MCPOOL_CONFIG). */
        public Builder transcoder(Transcoder tc) {
            notNull(tc, "transcoder");
            this.tc = tc;
            this.tcSet = true;
            return this;
        }

        /** The value format of the fleet (flags, wire forms, compression codec), by name:
         * {@code mcpool} (default: mcpool's cross-language layout), {@code whalin},
         * {@code spymemcached}, {@code pylibmc}, {@code python-memcached}, {@code pymemcache},
         * {@code cache-memcached-fast}, {@code cache-memcached}, {@code libmemcached} (bytes
         * only). Every program sharing a cache uses the same one (docs/value-format.md); an
         * unknown name fails at {@link #build()} (MCPOOL_CONFIG). The same as
         * {@code option("value_format", name)}, in its place in the order; without either,
         * the preset's format, else a transcoder's, else the core's default. */
        public Builder valueFormat(String name) {
            notNull(name, "valueFormat");
            return option("value_format", name);
        }

        /** Builds the client; {@link ClientException} (MCPOOL_CONFIG) when unusable. With the
         * {@code spymemcached} value format in force (set by any of valueFormat, an option or
         * a preset) and no transcoder set, the transcoder is a
         * {@link SpyTranscoder}, so each Java type is written as spymemcached writes it. An
         * explicit {@code option("serialized_java", ...)} sets that default transcoder's
         * serialization; one that disagrees with a transcoder given is a
         * {@link ConfigurationException} (MCPOOL_CONFIG) naming both. */
        public Mcpool build() {
            Config c = cfg.copy();
            // The binding adds no option of its own over the caller's: the value format is
            // the caller's (valueFormat, option, preset) or, with none of them, the format a
            // transcoder given stands for; else the core's default.
            if (!c.options.containsKey("value_format") && c.preset == null && tcSet && tc.valueFormat() != null) {
                c.set("value_format", tc.valueFormat());
            }
            String explicit = cfg.options.get("serialized_java");
            Boolean on = explicit == null ? null : parseBool(explicit);
            if (explicit == null) {
                if (tcSet && tc.allowSerializable()) c.set("serialized_java", "true"); // the transcoder decides
            } else if (tcSet && on != null && on != tc.allowSerializable()) {
                throw new ConfigurationException(103, "MCPOOL_CONFIG", "option serialized_java=" + explicit
                    + " but the transcoder " + tc.getClass().getName() + (on ? " does not allow" : " allows")
                    + " Java serialization: give a transcoder that " + (on ? "allows" : "refuses")
                    + " it (e.g. new WhalinTranscoder(false, " + on + ", null)) or leave the option out");
            } // a value that is not a boolean is left to the core, which refuses it naming the option
            if (tcSet) return new Mcpool(c, tc);
            // no transcoder given: the format's own (DefaultTranscoder, the one rule the Whalin
            // layer follows too), with serialization as an explicit option says
            return new Mcpool(c, new DefaultTranscoder(false, on != null && on, null));
        }
    }

    /** A boolean in the core's text forms (true/1/yes/on, false/0/no/off, ASCII case and
     * surrounding spaces ignored), null for anything else. */
    static Boolean parseBool(String s) {
        switch (s.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "true": case "1": case "yes": case "on": return Boolean.TRUE;
            case "false": case "0": case "no": case "off": return Boolean.FALSE;
            default: return null;
        }
    }

    // ---------------------------------------------------------------------------------------
    // Internals shared with MemCachedClient (which brings its own transcoder)

    /** A key's bytes: strict UTF-8 ({@link Utf8#key}); null or an unpaired surrogate is a
     * {@link ClientException}. Every key of both APIs goes through here. */
    static byte[] key(String key) {
        return Utf8.key(key);
    }

    /** A null argument is a {@link ClientException} (MCPOOL_INVALID_ARGUMENT) naming it. */
    static void notNull(Object o, String what) {
        if (o == null) throw ClientException.invalidArgument(what + " is null");
    }

    /** value encoded by t for key: a value the Java side refuses (null, a type the transcoder
     * does not encode, text with no UTF-8 form) is MCPOOL_INVALID_ARGUMENT naming the key, as
     * a refused setting is; a transcoder that answers null is refused the same way. */
    static CachedData encoded(Transcoder t, String key, Object value) {
        CachedData d;
        try {
            d = t.encode(value);
        } catch (ClientException e) {
            if (e.status() != 0) throw e;
            throw ClientException.invalidArgument(e.detail() + " (key \"" + key + "\")", e.getCause());
        }
        if (d == null || d.data == null) {
            throw ClientException.invalidArgument("the transcoder " + t.getClass().getName() + " encoded a "
                + (value == null ? "null" : value.getClass().getName()) + " as null (key \"" + key + "\")");
        }
        return d;
    }

    int store(Transcoder t, int op, String key, Object value, int ttl, long cas) {
        return store(t, op, key, value, ttl, cas, Native.COMPRESS_AUTO, 0);
    }

    /** A store with this call's compression decision (Native.COMPRESS_*): the core compares
     * the size with the threshold. */
    int store(Transcoder t, int op, String key, Object value, int ttl, long cas, int compress, long threshold) {
        byte[] k = key(key);
        t = t.forValueFormat(valueFormat);
        CachedData d = encoded(t, key, value);
        if (op == Native.OP_APPEND || op == Native.OP_PREPEND) {
            // The server adds the bytes and keeps the stored flags: only bytes and text stay
            // one value (an integer's, a boolean's or a serialized object's bytes next to
            // another value's are no value: Whalin's 4-byte Integer with "2" after it).
            Kind kind = d.kind != null ? d.kind : d.rawKind; // a raw value a transcoder typed
            if (kind != null && kind != Kind.BYTES && kind != Kind.TEXT) {
                throw ClientException.invalidArgument((op == Native.OP_APPEND ? "append" : "prepend") + " of a "
                    + value.getClass().getName() + " to " + key + ": only byte[] and text can be added to a stored value");
            }
            return storeRaw(op, k, d.data, d.flags, ttl, cas); // the bytes only
        }
        if (d.kind == null) return storeRaw(op, k, d.data, d.flags, ttl, cas);
        long h = nc.acquireCommand();
        try {
            return Native.storeKind(h, op, k, k.length, d.kind.ordinal(), d.data, d.data.length, ttl, cas,
                compress, threshold);
        } finally {
            nc.release();
        }
    }

    /** Stores a counter in the core's one form (decimal text, raw flags 0, whatever the value
     * format). */
    int storeCounter(byte[] k, long value, int ttl) {
        if (value < 0) throw ClientException.invalidArgument("negative counter value " + value
            + " (memcached's counters are unsigned 64-bit: 0 to 2^64-1; a long is read as it is, never as"
            + " the unsigned number with the same bits)");
        long h = nc.acquireCommand();
        try {
            return Native.setCounter(h, k, value, ttl);
        } finally {
            nc.release();
        }
    }

    int storeRaw(int op, byte[] k, byte[] data, int flags, int ttl, long cas) {
        notNull(data, "value");
        long h = nc.acquireCommand();
        try {
            return Native.store(h, op, k, k.length, data, data == null ? 0 : data.length, flags, ttl, cas);
        } finally {
            nc.release();
        }
    }

    /** Raw read: the bytes and flags (meta[0]) and CAS (meta[1]); null on a miss. */
    byte[] getRaw(byte[] k, boolean withCas, long[] meta) {
        long h = nc.acquireCommand();
        try {
            return Native.get(h, k, k.length, withCas, meta);
        } finally {
            nc.release();
        }
    }

    Object get(Transcoder t, String key) {
        long[] meta = new long[3];
        byte[] b = getRaw(key(key), false, meta);
        return b == null ? null : decode(t.forValueFormat(valueFormat), key, b, Kind.of(meta[2]), (int) meta[0]);
    }

    /** t's decode, naming the key in the error for bytes after a serialized object, and the
     * key and flags for a value Java cannot or may not read (a transcoder does not know
     * either): MCPOOL_VALUE_FORMAT ({@link Serialization.Unreadable}). A ClientException
     * another transcoder throws for a serialized kind keeps its status, with the key and
     * flags. */
    static Object decode(Transcoder t, String key, byte[] b, Kind kind, int flags) {
        try {
            return t.decode(b, kind, flags);
        } catch (Serialization.TrailingBytes e) {
            throw e.forKey(key);
        } catch (Serialization.Unreadable e) {
            throw e.forKey(key, flags);
        } catch (ClientException e) {
            if (kind != Kind.JAVA_SERIALIZED && kind != Kind.PYTHON_PICKLE && kind != Kind.PERL_STORABLE) throw e;
            String why = e.getMessage().substring(e.statusName().length() + 2); // after "NAME: "
            throw new ClientException(e.status(), e.statusName(), "the value of " + key + " with flags "
                + Integer.toUnsignedString(flags) + " (0x" + Integer.toHexString(flags) + "): " + why,
                e.getCause() != null ? e.getCause() : e);
        }
    }

    MemcachedItem gets(Transcoder t, String key) {
        long[] meta = new long[3];
        byte[] b = getRaw(key(key), true, meta);
        return b == null ? null
            : new MemcachedItem(decode(t.forValueFormat(valueFormat), key, b, Kind.of(meta[2]), (int) meta[0]), meta[1]);
    }

    /** Counts an error a lenient caller turned into a failure value, on the key's server (its
     * address: the entries of a repeated address are one server, as in the core's metrics). */
    void suppressed(byte[] key) {
        String label;
        long h = nc.acquire();
        try {
            label = Utf8.decode(Native.serverLabel(h, Native.serverFor(h, key)));
        } catch (McpoolException e) {
            return; // a key no command accepts never reached a server
        } finally {
            nc.release();
        }
        suppressed(label);
    }

    /** Counts an error a lenient caller turned into a failure value, on this server (its
     * label as {@link #metrics()} lists it): a whole-server call's failure ({@code flushAll},
     * {@code stats}). */
    void suppressed(String label) {
        suppressed.computeIfAbsent(label, l -> new LongAdder()).increment();
    }

    /** The server's or the network's error (a timeout, a connection failure, an error reply,
     * a reply that broke the protocol): what Whalin's client answered with null/false/-1.
     * Not a value that was read but cannot be delivered ({@link #unreadableValue}): the key
     * exists, and saying null would hide it. */
    static boolean serverSide(McpoolException e) {
        return (e instanceof ConnectionException || e instanceof ServerException) && !unreadableValue(e)
            && e.status() != STATUS_AUTH;
    }

    // The C ABI's statuses for a stored value this reader cannot deliver (include/mcpool.h),
    // and for a refused TLS certificate or SASL login: a misconfiguration no retry fixes,
    // which a null would show as an empty cache (tester finding tlssasl 1).
    private static final int STATUS_DECOMPRESS = 208, STATUS_VALUE_FORMAT = 210, STATUS_AUTH = 209;

    /** A value the server sent that cannot be delivered: flags that mean nothing in the
     * value format or mark a kind this reader may not read (MCPOOL_VALUE_FORMAT), or a
     * compressed value that does not inflate (MCPOOL_DECOMPRESS). The key exists; the
     * exception names the key (and the flags), never the bytes. */
    static boolean unreadableValue(McpoolException e) {
        return e.status() == STATUS_VALUE_FORMAT || e.status() == STATUS_DECOMPRESS;
    }

    /** Multi-get: values in key order (null for misses). */
    Object[] getMultiArray(Transcoder t, String[] keys) {
        return getMultiArray(t, keys, false, false, 0);
    }

    /** lenient: keys whose server failed are misses (counted), as Whalin's getMulti; each
     * such key and its error go to {@code failed} (null: none). */
    Object[] getMultiArray(Transcoder t, String[] keys, boolean lenient,
                           java.util.function.BiConsumer<String, McpoolException> failed) {
        return getMultiArray(t, keys, lenient, false, 0, false, failed);
    }

    /** touch: get-and-touch, each found key's expiry set to ttl (not lenient). */
    Object[] getMultiArray(Transcoder t, String[] keys, boolean lenient, boolean touch, int ttl) {
        return getMultiArray(t, keys, lenient, touch, ttl, false);
    }

    /** withCas: each hit a {@link MemcachedItem} of its value (decoded as without) and its CAS
     * unique, read in the same one JNI call and round trip per server (gets/gats per key). */
    Object[] getMultiArray(Transcoder t, String[] keys, boolean lenient, boolean touch, int ttl, boolean withCas) {
        return getMultiArray(t, keys, lenient, touch, ttl, withCas, null);
    }

    private Object[] getMultiArray(Transcoder t, String[] keys, boolean lenient, boolean touch, int ttl, boolean withCas,
                                   java.util.function.BiConsumer<String, McpoolException> failed) {
        t = t.forValueFormat(valueFormat);
        int n = keys.length;
        Object[] vals = new Object[n];
        if (n == 0) {
            nc.ensureOpen();
            return vals;
        }
        byte[][] ks = new byte[n][];
        long total = 0;
        int[] lens = new int[n];
        for (int i = 0; i < n; i++) {
            ks[i] = key(keys[i]);
            lens[i] = ks[i].length;
            total += lens[i];
        }
        if (total > Integer.MAX_VALUE - 8) {
            throw ClientException.invalidArgument("the keys of a multi-get add up to " + total + " bytes, more than a Java array holds");
        }
        byte[] blob = new byte[(int) total];
        int off = 0;
        for (int i = 0; i < n; i++) {
            System.arraycopy(ks[i], 0, blob, off, lens[i]);
            off += lens[i];
        }
        int[] kinds = new int[n], flags = new int[n];
        long[] cas = new long[n];
        int[] spans = new int[2 * n];
        byte[] packed;
        long h = nc.acquireCommand();
        try {
            packed = touch ? Native.gatMulti(h, ttl, blob, lens, withCas, vals, kinds, flags, cas, spans)
                // (lenient with a receiver for the errors: the native side hands each failed
                // key's exception over, and the key is left out below)
                : Native.getMulti(h, blob, lens, withCas, lenient && failed == null, vals, kinds, flags, cas, spans);
        } finally {
            nc.release();
        }
        Map<String, McpoolException> errors = null;
        boolean unreadableOnly = true;
        McpoolException callerError = null; // the caller's own mistake (a key too long): as a get throws it
        for (int i = 0; i < n; i++) {
            int at = spans[i];
            McpoolException bad = null;
            if (at == Native.LEFT_OUT) {
                suppressed(ks[i]);
            } else if (at == Native.UNREADABLE || at == Native.FAILED) { // its own exception in vals[i]
                bad = vals[i] instanceof McpoolException ? (McpoolException) vals[i]
                    : new McpoolException(kinds[i], Native.statusName(kinds[i]), "multi-get of " + keys[i] + " failed");
                if (at == Native.FAILED && lenient && serverSide(bad)) { // left out, as LEFT_OUT
                    vals[i] = null;
                    suppressed(ks[i]);
                    failed.accept(keys[i], bad);
                    continue;
                }
                if (at == Native.FAILED) {
                    unreadableOnly = false;
                    if (bad instanceof ClientException && callerError == null) callerError = bad;
                    // The lenient (Whalin) API throws a refused TLS certificate or SASL login
                    // as its single-key calls do: never an empty cache (retest22 1).
                    if (lenient && bad.status() == STATUS_AUTH && callerError == null) callerError = bad;
                }
                vals[i] = null;
            } else if (at >= 0 || vals[i] != null) {
                byte[] b = at >= 0 ? Arrays.copyOfRange(packed, at, at + spans[n + i]) : (byte[]) vals[i];
                try {
                    vals[i] = decode(t, keys[i], b, Kind.of(kinds[i]), flags[i]);
                    if (withCas) vals[i] = new MemcachedItem(vals[i], cas[i]);
                } catch (McpoolException e) { // a kind Java cannot or may not read
                    bad = e;
                    vals[i] = null;
                }
            }
            if (bad != null) {
                if (errors == null) errors = new LinkedHashMap<>();
                errors.putIfAbsent(keys[i], bad);
            }
        }
        if (callerError != null) throw callerError;
        if (errors != null) {
            throw unreadableOnly ? new UnreadableValuesException(hits(keys, vals), errors)
                : new PartialResultException(hits(keys, vals), errors);
        }
        return vals;
    }

    /** A counter command. memcached's deltas and counters are unsigned 64-bit: a negative
     * delta or initial value is refused (MCPOOL_INVALID_ARGUMENT) before any I/O, never sent
     * as the unsigned number with the same bits (incr -1 would add 2^64-1: a decrement); a
     * new value above Long.MAX_VALUE has no long form and is MCPOOL_OUT_OF_RANGE, its exact
     * value in the message (the server holds it), never a negative long. */
    int arith(int op, String key, long delta, long initial, int ttl, long[] out) {
        byte[] k = key(key);
        if (delta < 0) throw ClientException.invalidArgument("negative counter delta " + delta + " for " + key
            + " (memcached's deltas are unsigned: incr by -n is decr by n)");
        if (initial < 0) throw ClientException.invalidArgument("negative initial counter value " + initial + " for " + key
            + " (memcached's counters are unsigned 64-bit)");
        int st;
        long h = nc.acquireCommand();
        try {
            st = Native.arith(h, op, k, delta, initial, ttl, out);
        } finally {
            nc.release();
        }
        if (st == Native.OK && out[0] < 0) {
            throw ClientException.outOfRange("the counter " + key + " is now " + Long.toUnsignedString(out[0])
                + ", above Long.MAX_VALUE (memcached's counters are unsigned 64-bit)");
        }
        return st;
    }

    /** Per server that answered: its pairs; with failed, a server that failed maps to null.
     * strict: when every server failed, the first one's error is thrown (as Python's stats and
     * version raise, and the CLI), so an unknown group is an error, not "no servers". */
    Map<String, Map<String, String>> serverResults(String group, int what, boolean failed, boolean strict) {
        return serverResults(group, what, failed, strict, null);
    }

    /** serverResults, each server left out for its failure given to {@code leftOut} (null:
     * none) with its exception, not thrown. */
    Map<String, Map<String, String>> serverResults(String group, int what, boolean failed, boolean strict,
                                                   java.util.function.BiConsumer<String, McpoolException> leftOut) {
        byte[] g = group == null ? null : Utf8.text(group, "statistics group");
        byte[][] flat;
        long h = nc.acquireCommand();
        try {
            flat = Native.stats(h, g, what, strict);
        } finally {
            nc.release();
        }
        McpoolException refused = closedRefusal(flat);
        if (refused != null) throw refused;
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        int i = 0;
        while (i < flat.length) {
            String label = Utf8.decode(flat[i]);
            int status = Integer.parseInt(Utf8.decode(flat[i + 1]));
            byte[] message = flat[i + 2];
            int count = Integer.parseInt(Utf8.decode(flat[i + 3]));
            i += 4;
            Map<String, String> pairs = new LinkedHashMap<>();
            for (int e = 0; e < count; e++, i += 2) pairs.put(Utf8.decode(flat[i]), Utf8.decode(flat[i + 1]));
            if (status == Native.OK) out.put(label, pairs);
            else if (!strict && !failed && status == STATUS_AUTH) {
                // Whalin's stats leave a failed server out; a refused TLS certificate or SASL
                // login is thrown instead, as every MemCachedClient call throws it (retest22 1).
                throw sameClass(statusException(status), Utf8.decode(message));
            }
            else if (failed) out.put(label, null);
            else if (leftOut != null) leftOut.accept(label, sameClass(statusException(status), Utf8.decode(message)));
        }
        return out;
    }

    /** The first server's MCPOOL_CLOSED of a whole-server call whose every server ended so
     * (the client was closed before the call, or while it waited for a pooled connection):
     * the call refused as a whole, thrown as a single-key call throws it, with the core's
     * message ({@code stats: the client is closed: nothing was sent ...}), never a map of
     * failed servers; null otherwise. {@code flat} as {@link Native#stats} answers it. */
    private static McpoolException closedRefusal(byte[][] flat) {
        String first = null;
        for (int i = 0; i < flat.length; ) {
            if (Integer.parseInt(Utf8.decode(flat[i + 1])) != Native.CLOSED) return null;
            if (first == null) first = Utf8.decode(flat[i + 2]);
            i += 4 + 2 * Integer.parseInt(Utf8.decode(flat[i + 3]));
        }
        return first == null ? null : sameClass(statusException(Native.CLOSED), first);
    }

    // ---------------------------------------------------------------------------------------
    // Public API

    /** Stores unconditionally (ttl seconds, 0 = never expires). True when stored.
     *
     * @throws ClientException the caller's input refused: a null or invalid key
     *         (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT), a null value or one the transcoder
     *         cannot or may not encode (MCPOOL_INVALID_ARGUMENT), nothing sent; a value larger
     *         than {@link Builder#maxValueSize} or memcached's item size
     *         (MCPOOL_VALUE_TOO_LARGE); the server's {@code CLIENT_ERROR} reply
     *         (MCPOOL_CLIENT_ERROR); or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT); with
     *         {@link Builder#failOpen} false instead
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH); with
     *         failOpen, but MCPOOL_AUTH, false instead
     * @throws ServerException the server's {@code SERVER_ERROR} reply, a reply that broke the
     *         protocol (MCPOOL_PROTOCOL), or a value the value format has no form for
     *         (MCPOOL_VALUE_FORMAT)
     */
    public boolean set(String key, Object value, int ttl) {
        return store(tc, Native.OP_SET, key, value, ttl, 0) == Native.OK;
    }

    /** {@link #set(String, Object, int)} with a TTL of 0: the item never expires (memcached
     * may still evict it).
     *
     * @throws ClientException the caller's input refused: a null or invalid key
     *         (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT), a null value or one the transcoder
     *         cannot or may not encode (MCPOOL_INVALID_ARGUMENT), nothing sent; a value larger
     *         than {@link Builder#maxValueSize} or memcached's item size
     *         (MCPOOL_VALUE_TOO_LARGE); the server's {@code CLIENT_ERROR} reply
     *         (MCPOOL_CLIENT_ERROR); or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT); with
     *         {@link Builder#failOpen} false instead
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH); with
     *         failOpen, but MCPOOL_AUTH, false instead
     * @throws ServerException the server's {@code SERVER_ERROR} reply, a reply that broke the
     *         protocol (MCPOOL_PROTOCOL), or a value the value format has no form for
     *         (MCPOOL_VALUE_FORMAT)
     */
    public boolean set(String key, Object value) {
        return set(key, value, 0);
    }

    /** Stores only if the key is absent; false when it exists.
     *
     * @throws ClientException the caller's input refused: a null or invalid key
     *         (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT), a null value or one the transcoder
     *         cannot or may not encode (MCPOOL_INVALID_ARGUMENT), nothing sent; a value larger
     *         than {@link Builder#maxValueSize} or memcached's item size
     *         (MCPOOL_VALUE_TOO_LARGE); the server's {@code CLIENT_ERROR} reply
     *         (MCPOOL_CLIENT_ERROR); or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT); with
     *         {@link Builder#failOpen} false instead
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH); with
     *         failOpen, but MCPOOL_AUTH, false instead
     * @throws ServerException the server's {@code SERVER_ERROR} reply, a reply that broke the
     *         protocol (MCPOOL_PROTOCOL), or a value the value format has no form for
     *         (MCPOOL_VALUE_FORMAT)
     */
    public boolean add(String key, Object value, int ttl) {
        return store(tc, Native.OP_ADD, key, value, ttl, 0) == Native.OK;
    }

    /** Stores only if the key exists; false when it is missing.
     *
     * @throws ClientException the caller's input refused: a null or invalid key
     *         (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT), a null value or one the transcoder
     *         cannot or may not encode (MCPOOL_INVALID_ARGUMENT), nothing sent; a value larger
     *         than {@link Builder#maxValueSize} or memcached's item size
     *         (MCPOOL_VALUE_TOO_LARGE); the server's {@code CLIENT_ERROR} reply
     *         (MCPOOL_CLIENT_ERROR); or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT); with
     *         {@link Builder#failOpen} false instead
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH); with
     *         failOpen, but MCPOOL_AUTH, false instead
     * @throws ServerException the server's {@code SERVER_ERROR} reply, a reply that broke the
     *         protocol (MCPOOL_PROTOCOL), or a value the value format has no form for
     *         (MCPOOL_VALUE_FORMAT)
     */
    public boolean replace(String key, Object value, int ttl) {
        return store(tc, Native.OP_REPLACE, key, value, ttl, 0) == Native.OK;
    }

    /** Appends the encoded bytes of value (flags unchanged); false when the key is missing.
     * Only byte[] and text (String, StringBuilder, StringBuffer): any other value is a
     * {@link ClientException} (MCPOOL_INVALID_ARGUMENT), as its bytes after the stored ones
     * would be no value. */
    public boolean append(String key, Object value) {
        return store(tc, Native.OP_APPEND, key, value, 0, 0) == Native.OK;
    }

    /** As {@link #append}, the bytes put before the stored ones. */
    public boolean prepend(String key, Object value) {
        return store(tc, Native.OP_PREPEND, key, value, 0, 0) == Native.OK;
    }

    /** Compare-and-swap with a CAS unique from {@link #gets}; false when it changed or is gone.
     * A {@code casUnique} of 0 is a {@link ClientException} MCPOOL_INVALID_ARGUMENT, nothing
     * sent (no item has CAS 0; the binary protocol would store unconditionally). The unique
     * is memcached's unsigned 64-bit number carried in a {@code long}: one of 2^63 or more
     * reads as negative ({@link Long#toUnsignedString(long)} shows it) and is sent back as
     * the same unsigned number, so a negative {@code casUnique} is a valid token, not an
     * error. A token belongs to the server process that gave it: after a failover, a
     * {@code setServers} that moved the key or a server restart, read it again with
     * {@code gets} first (docs/failover.md). A timeout or a lost connection throws, even with
     * {@code failOpen}: the cas may have been applied (read back before retrying).
     *
     * @throws ClientException the caller's input refused: a null or invalid key
     *         (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT), a null value or one the transcoder
     *         cannot or may not encode, a {@code casUnique} of 0 (MCPOOL_INVALID_ARGUMENT),
     *         nothing sent; a value larger than {@link Builder#maxValueSize} or memcached's
     *         item size (MCPOOL_VALUE_TOO_LARGE); the server's {@code CLIENT_ERROR} reply
     *         (MCPOOL_CLIENT_ERROR); or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT)
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH)
     * @throws ServerException the server's {@code SERVER_ERROR} reply, a reply that broke the
     *         protocol (MCPOOL_PROTOCOL), or a value the value format has no form for
     *         (MCPOOL_VALUE_FORMAT)
     */
    public boolean cas(String key, Object value, int ttl, long casUnique) {
        return store(tc, Native.OP_CAS, key, value, ttl, casUnique) == Native.OK;
    }

    /** As {@link #cas}, telling apart why nothing was stored, as spymemcached's
     * {@code CASResponse} does: {@link CasResult#OK} stored, {@link CasResult#EXISTS} someone
     * changed the item since {@link #gets} (read it again and retry), {@link CasResult#NOT_FOUND}
     * it is gone (add it instead). The same one command as {@link #cas}; errors and a
     * {@code casUnique} of 0 are thrown as there.
     *
     * @throws ClientException the caller's input refused: a null or invalid key
     *         (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT), a null value or one the transcoder
     *         cannot or may not encode, a {@code casUnique} of 0 (MCPOOL_INVALID_ARGUMENT),
     *         nothing sent; a value larger than {@link Builder#maxValueSize} or memcached's
     *         item size (MCPOOL_VALUE_TOO_LARGE); the server's {@code CLIENT_ERROR} reply
     *         (MCPOOL_CLIENT_ERROR); or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT)
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH)
     * @throws ServerException the server's {@code SERVER_ERROR} reply, a reply that broke the
     *         protocol (MCPOOL_PROTOCOL), or a value the value format has no form for
     *         (MCPOOL_VALUE_FORMAT)
     */
    public CasResult casResult(String key, Object value, int ttl, long casUnique) {
        return CasResult.of(store(tc, Native.OP_CAS, key, value, ttl, casUnique));
    }

    /** The value, or null on a miss. It is decoded by the client's transcoder in the value
     * format of the fleet (see the class comment).
     *
     * @throws ClientException a null or invalid key (MCPOOL_INVALID_KEY,
     *         MCPOOL_INVALID_ARGUMENT), nothing sent, or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT); with
     *         {@link Builder#failOpen} null instead
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH); with
     *         failOpen, but MCPOOL_AUTH, null instead
     * @throws ServerException the server's {@code SERVER_ERROR} reply, a reply that broke the
     *         protocol (MCPOOL_PROTOCOL), or a value that was read but cannot be delivered
     *         (the key exists): flags that mean nothing in the value format or a serialized
     *         object while serialization is off (MCPOOL_VALUE_FORMAT), a compressed value that
     *         does not inflate (MCPOOL_DECOMPRESS), naming the key
     */
    public Object get(String key) {
        return get(tc, key);
    }

    /** The value with its CAS unique, or null on a miss.
     *
     * @throws ClientException a null or invalid key (MCPOOL_INVALID_KEY,
     *         MCPOOL_INVALID_ARGUMENT), nothing sent, or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT); with
     *         {@link Builder#failOpen} null instead
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH); with
     *         failOpen, but MCPOOL_AUTH, null instead
     * @throws ServerException the server's {@code SERVER_ERROR} reply, a reply that broke the
     *         protocol (MCPOOL_PROTOCOL), or a value that was read but cannot be delivered
     *         (the key exists): flags that mean nothing in the value format or a serialized
     *         object while serialization is off (MCPOOL_VALUE_FORMAT), a compressed value that
     *         does not inflate (MCPOOL_DECOMPRESS), naming the key
     */
    public MemcachedItem gets(String key) {
        return gets(tc, key);
    }

    /** The hits among keys (one round trip per server), in key order. A key that failed
     * does not cost the others: once every key was tried a {@link PartialResultException}
     * is thrown whose {@link PartialResultException#hits() hits()} are the values read and
     * whose {@link PartialResultException#errors() errors()} map each failed key to its own
     * exception ({@link ConnectionException} for a key of a down server,
     * {@link TimeoutException}, {@link ServerException}, ...), its message the core's for
     * that key; its status is the first failed key's. When the only failures are values that
     * were read but cannot be delivered (see the class comment) it is the subclass
     * {@link UnreadableValuesException}. The caller's own mistake (a key too long: a
     * {@link ClientException}) and a call that fails as a whole (a closed client) throw that
     * error, as before.
     *
     * @throws PartialResultException some keys failed, after every key was tried: its
     *         {@link PartialResultException#hits() hits()} the values read,
     *         {@link PartialResultException#errors() errors()} each failed key's
     *         {@link ConnectionException}, {@link TimeoutException} or {@link ServerException}
     *         (with {@link Builder#failOpen} a timeout or an unreachable server's keys are
     *         misses instead)
     * @throws UnreadableValuesException (a PartialResultException) the only failures are values
     *         that were read but cannot be delivered (MCPOOL_VALUE_FORMAT, MCPOOL_DECOMPRESS)
     * @throws ClientException the caller's own mistake, nothing sent: a null collection or
     *         key, an invalid or too long key (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT);
     *         or a call that fails as a whole: the client is closed (MCPOOL_CLOSED)
     */
    public Map<String, Object> getMulti(Collection<String> keys) {
        notNull(keys, "key collection");
        String[] ks = keys.toArray(new String[0]);
        return hits(ks, getMultiArray(tc, ks));
    }

    /** The hits as a map in key order, sized so that filling it never rehashes. */
    static Map<String, Object> hits(String[] keys, Object[] vals) {
        int n = 0;
        for (Object v : vals) if (v != null) n++;
        Map<String, Object> out = new LinkedHashMap<>((int) (n / 0.75f) + 1);
        for (int i = 0; i < keys.length; i++) if (vals[i] != null) out.put(keys[i], vals[i]);
        return out;
    }

    /** {@link #getMulti(Collection)} of these keys.
     *
     * @throws PartialResultException some keys failed, after every key was tried: its
     *         {@link PartialResultException#hits() hits()} the values read,
     *         {@link PartialResultException#errors() errors()} each failed key's
     *         {@link ConnectionException}, {@link TimeoutException} or {@link ServerException}
     *         (with {@link Builder#failOpen} a timeout or an unreachable server's keys are
     *         misses instead)
     * @throws UnreadableValuesException (a PartialResultException) the only failures are values
     *         that were read but cannot be delivered (MCPOOL_VALUE_FORMAT, MCPOOL_DECOMPRESS)
     * @throws ClientException the caller's own mistake, nothing sent: a null collection or
     *         key, an invalid or too long key (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT);
     *         or a call that fails as a whole: the client is closed (MCPOOL_CLOSED)
     */
    public Map<String, Object> getMulti(String... keys) {
        notNull(keys, "key array");
        return getMulti(Arrays.asList(keys));
    }

    /** The hits among keys with their CAS uniques, as {@link #gets} reads each (the same value
     * decoded the same way, the CAS that {@link #cas} and {@link #casMulti} take), in one round
     * trip per server as {@link #getMulti}: key to {@link MemcachedItem} in key order, misses
     * absent, a key given twice one entry. Failed keys as in {@link #getMulti}: once every key
     * was tried a {@link PartialResultException} (or {@link UnreadableValuesException}) whose
     * {@link PartialResultException#hits() hits()} are the {@link MemcachedItem}s read and
     * whose {@link PartialResultException#errors() errors()} each failed key's own exception;
     * the caller's own mistake (a key too long: a {@link ClientException}) thrown as itself.
     * A read-modify-write of many keys is {@code getsMulti}, then {@code casMulti} of new
     * items with the CAS uniques read: two round trips per server, not one {@code gets} per key. */
    public Map<String, MemcachedItem> getsMulti(Collection<String> keys) {
        notNull(keys, "key collection");
        String[] ks = keys.toArray(new String[0]);
        return items(ks, getMultiArray(tc, ks, false, false, 0, true));
    }

    /** {@link #getsMulti(Collection)} of these keys. */
    public Map<String, MemcachedItem> getsMulti(String... keys) {
        notNull(keys, "key array");
        return getsMulti(Arrays.asList(keys));
    }

    /** The hits of a multi-get with CAS (each a MemcachedItem) as a map in key order. */
    private static Map<String, MemcachedItem> items(String[] keys, Object[] vals) {
        int n = 0;
        for (Object v : vals) if (v != null) n++;
        Map<String, MemcachedItem> out = new LinkedHashMap<>((int) (n / 0.75f) + 1);
        for (int i = 0; i < keys.length; i++) if (vals[i] != null) out.put(keys[i], (MemcachedItem) vals[i]);
        return out;
    }

    /** Get-and-touch: the value, or null on a miss, and the item's expiry set to ttl seconds
     * by the rule of {@link #touch} (the core's: 0 never expires, above 30 days a unix time, a
     * negative ttl expires it at once). */
    public Object gat(String key, int ttl) {
        long[] meta = new long[3];
        byte[] b = gatRaw(key(key), ttl, false, meta);
        return b == null ? null : decode(tc.forValueFormat(valueFormat), key, b, Kind.of(meta[2]), (int) meta[0]);
    }

    /** As {@link #gat}, with the CAS unique (as {@link #gets}): the value and its CAS for
     * {@link #cas}, or null on a miss. */
    public MemcachedItem gats(String key, int ttl) {
        long[] meta = new long[3];
        byte[] b = gatRaw(key(key), ttl, true, meta);
        return b == null ? null
            : new MemcachedItem(decode(tc.forValueFormat(valueFormat), key, b, Kind.of(meta[2]), (int) meta[0]), meta[1]);
    }

    private byte[] gatRaw(byte[] k, int ttl, boolean withCas, long[] meta) {
        long h = nc.acquireCommand();
        try {
            return Native.gat(h, k, k.length, ttl, withCas, meta);
        } finally {
            nc.release();
        }
    }

    /** Get-and-touch of many keys (one round trip per server, as {@link #getMulti}): the hits
     * in key order, each found key's expiry set to ttl (the rule of {@link #touch}). Failed
     * keys as in {@link #getMulti} (a {@link PartialResultException}). */
    public Map<String, Object> gatMulti(int ttl, Collection<String> keys) {
        notNull(keys, "key collection");
        String[] ks = keys.toArray(new String[0]);
        return hits(ks, getMultiArray(tc, ks, false, true, ttl));
    }

    /** {@link #gatMulti(int, Collection)} of these keys. */
    public Map<String, Object> gatMulti(int ttl, String... keys) {
        notNull(keys, "key array");
        return gatMulti(ttl, Arrays.asList(keys));
    }

    /** {@link #gatMulti} with the CAS uniques, as {@link #gats} per key and {@link #getsMulti}
     * for many: key to {@link MemcachedItem} in key order, each found key's expiry set to ttl
     * (the rule of {@link #touch}), misses absent, one round trip per server; failed keys as
     * in {@link #getMulti}. */
    public Map<String, MemcachedItem> gatsMulti(int ttl, Collection<String> keys) {
        notNull(keys, "key collection");
        String[] ks = keys.toArray(new String[0]);
        return items(ks, getMultiArray(tc, ks, false, true, ttl, true));
    }

    /** {@link #gatsMulti(int, Collection)} of these keys. */
    public Map<String, MemcachedItem> gatsMulti(int ttl, String... keys) {
        notNull(keys, "key array");
        return gatsMulti(ttl, Arrays.asList(keys));
    }

    /** Stores raw bytes with the caller's flags: flags the value format can read back (0:
     * its bytes kind; the compression bits are the core's), else MCPOOL_VALUE_FORMAT. Under
     * the default mcpool format application flags are 16 bits: above 0xFFFF only a kind's
     * own flags are taken (never a rewrite of 0x12345 into another kind's). The bytes are
     * the kind's body as {@link #getBytes} delivers it (an integer as decimal text, a
     * boolean as "1"/"0"): what getBytes returned, stored back with its flags, is the same
     * value (except flags 0 under the spymemcached and whalin formats, their bytes kind: a
     * spymemcached String, flags 0, stored back is a byte[] to spymemcached); the core writes
     * the format's wire form (Whalin's and spymemcached's binary integers), or refuses a body
     * those flags cannot hold with MCPOOL_VALUE_FORMAT. */
    public boolean setBytes(String key, byte[] data, int flags, int ttl) {
        return storeRaw(Native.OP_SET, key(key), data, flags, ttl, 0) == Native.OK;
    }

    /**
     * The value's bytes and flags, whatever the flags, or null on a miss; never decoded into
     * a Java object. A value the value format reads comes in its kind's form: inflated, an
     * integer as decimal text, a boolean as "1"/"0", the flags without the compression bits
     * (what {@link #setBytes} takes back). A value it cannot deliver (flags that mean nothing
     * in the format, such as spymemcached's Date, Float and Double or Whalin's Character, a
     * body those flags cannot hold, a serialized object while serialization is off:
     * MCPOOL_VALUE_FORMAT; a compressed body that does not inflate: MCPOOL_DECOMPRESS) comes
     * as memcached holds it: its flags as stored (compression bits included) and its body
     * not inflated, from the same read (the core's {@code get_or_stored}). Such flags are refused by
     * {@link #setBytes} of this client, as for any store; a {@code libmemcached} client
     * stores them back as they are.
     */
    public CachedData getBytes(String key) {
        byte[] k = key(key);
        long[] meta = new long[2];
        long h = nc.acquireCommand();
        byte[] b;
        try {
            b = Native.getOrStored(h, k, k.length, meta);
        } finally {
            nc.release();
        }
        return b == null ? null : new CachedData(b, (int) meta[0], meta[1] != 0);
    }

    /** Keys packed one after another for a batch call; lens[i] each key's length. */
    private static byte[] pack(byte[][] parts, int[] lens, String what) {
        long total = 0;
        for (int i = 0; i < parts.length; i++) {
            lens[i] = parts[i].length;
            total += lens[i];
        }
        if (total > Integer.MAX_VALUE - 8) {
            throw ClientException.invalidArgument("the " + what + " of a batch add up to " + total + " bytes, more than a Java array holds");
        }
        byte[] blob = new byte[(int) total];
        int off = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, blob, off, p.length);
            off += p.length;
        }
        return blob;
    }

    /** Per key: true for OK, false for an answer that says no; once every item was tried,
     * failed keys throw a {@link PartialBatchException} (failedItems). A key given more than
     * once (each occurrence is sent, in order) is true when any of its occurrences was done:
     * deleteMulti([k, k]) deletes k with the first and finds nothing with the second, and k
     * was deleted (docs/errors.md, "A key given more than once"). */
    private static Map<String, Boolean> answers(String op, String[] keys, int[] st, McpoolException[] errs) {
        Map<String, Boolean> out = new LinkedHashMap<>((int) (keys.length / 0.75f) + 1);
        for (int i = 0; i < keys.length; i++) {
            if (st[i] == Native.OK) {
                out.put(keys[i], true);
            } else if (isAnswer(st[i])) {
                out.putIfAbsent(keys[i], false); // never over an earlier occurrence's true
            }
        }
        failedItems(op, keys, st, errs, out);
        return out;
    }

    /** A store's, delete's or touch's answer (stored or not, found or not), not an error. */
    private static boolean isAnswer(int st) {
        return st == Native.OK || st == Native.NOT_FOUND || st == Native.NOT_STORED || st == Native.EXISTS;
    }

    /** After a batch of writes: when an item failed, throws a {@link PartialBatchException}
     * carrying answers (every answered key's) and each failed key's exception: errs[i], the
     * core's for that item (its class by the core's classifier, its message the core's for
     * that key, taken by the native call right after the item's own call: tester finding
     * batches 2), or, where the core gave none, {@link #itemFailed}. */
    private static void failedItems(String op, String[] keys, int[] st, McpoolException[] errs, Map<String, ?> answers) {
        Map<String, McpoolException> errors = null;
        for (int i = 0; i < keys.length; i++) {
            if (isAnswer(st[i])) continue;
            McpoolException e = errs != null ? errs[i] : null;
            if (errors == null) errors = new LinkedHashMap<>();
            errors.putIfAbsent(keys[i], e != null ? e : itemFailed(op, keys[i], st[i]));
        }
        if (errors != null) throw batchFailure(op, answers, errors);
    }

    /** The exception of a write batch some of whose items failed, once every item was tried:
     * the one place (every *Multi write, casMultiResults, incrMulti/decrMulti) where a batch's
     * results become an exception. A {@link PartialBatchException} carrying the answers and
     * each failed key's exception, except for a batch the client refused as a whole because
     * it was closed ({@link #close()} while the batch waited for a pooled connection, or
     * before it asked for one): nothing answered and every item's error MCPOOL_CLOSED. That
     * is the {@link ClientException} MCPOOL_CLOSED itself, as get, set and getMulti throw it
     * (tester finding java2 3: a "0 answered" PartialBatchException, which is no
     * ClientException). */
    static McpoolException batchFailure(String op, Map<String, ?> answers, Map<String, McpoolException> errors) {
        if (answers.isEmpty()) {
            boolean closed = true;
            for (McpoolException e : errors.values()) {
                if (!(e instanceof ClientException) || e.status() != Native.CLOSED) {
                    closed = false;
                    break;
                }
            }
            if (closed) return McpoolException.first(errors);
        }
        return new PartialBatchException(op, answers, errors);
    }

    /** A failed item's exception when the core gave no message for it: the class of its
     * status, a message naming the key and the status. */
    private static McpoolException itemFailed(String op, String key, int status) {
        McpoolException e = statusException(status);
        return sameClass(e, op + " of \"" + key + "\" failed: " + e.statusName());
    }

    /** The exception the core gives an error status (Native.throwStatus's), not thrown. */
    private static McpoolException statusException(int status) {
        try {
            Native.throwStatus(status);
        } catch (McpoolException e) {
            return e;
        }
        return new McpoolException(status, Native.statusName(status), "status " + status);
    }

    /** An exception of e's class and status with another message. */
    private static McpoolException sameClass(McpoolException e, String message) {
        int s = e.status();
        String n = e.statusName();
        if (e instanceof TimeoutException) return new TimeoutException(s, n, message);
        if (e instanceof ConnectionException) return new ConnectionException(s, n, message);
        if (e instanceof ConfigurationException) return new ConfigurationException(s, n, message);
        if (e instanceof ClientException) return new ClientException(s, n, message);
        if (e instanceof ServerException) return new ServerException(s, n, message);
        return new McpoolException(s, n, message);
    }

    /**
     * Stores every entry in one pipelined round trip per server, each with the TTL that
     * {@code ttlOf} gives its key (seconds, 0 = never expires), each value with the flags and
     * bytes {@link #set} stores it with (a String under the {@code spymemcached} value format
     * included); values a transcoder gives flags of its own (Whalin's Integer, spymemcached's
     * Long) share a second round trip. Key to true when stored; the keys that failed (after every item was tried) throw a
     * {@link PartialBatchException} carrying every answered key's answer and each failed
     * key's exception, with the core's message for that key, as for every *Multi write
     * (addMulti ... touchMulti, casMultiResults). {@code ttlOf} runs for every key
     * before anything is sent: an exception it throws (a NullPointerException of its own
     * unboxing included) reaches the caller as itself, and nothing is stored.
     *
     * @throws PartialBatchException some items failed, after every item was tried: its
     *         {@link PartialBatchException#answers() answers()} every answered key's answer,
     *         {@link PartialBatchException#errors() errors()} each failed key's exception
     *         (a {@link ConnectionException} or {@link TimeoutException} of its server, a
     *         {@link ServerException}, a {@link ClientException} for a key or value the core
     *         refused: too long, too large); with {@link Builder#failOpen} a timeout's or an
     *         unreachable server's keys answer false instead
     * @throws ClientException refused as a whole, nothing sent: a null map, key or value, a
     *         key with no UTF-8 form, a value the transcoder cannot or may not encode
     *         (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT); or the client is closed
     *         (MCPOOL_CLOSED: before the batch or while it waited for a pooled connection)
     */
    public Map<String, Boolean> setMulti(Map<String, ?> values, java.util.function.ToIntFunction<String> ttlOf) {
        notNull(values, "value map");
        notNull(ttlOf, "ttl function");
        return storeMulti(Native.OP_SET, values, ttlOf, null);
    }

    /**
     * Stores every entry's bytes, as {@link #setMulti} stores a {@code byte[]}, with {@code ttl}
     * (seconds, 0 = never expires; a
     * negative one stores them already expired, as {@link #setMulti}) without waiting for a
     * reply per item: {@code noreply} on the text protocol, then one round trip per server to
     * learn that every command was read (on the meta and binary protocols every item is
     * answered, as {@link #setMulti}). The fastest bulk load. They are stored under the value
     * format's flags for bytes (0 under {@code mcpool}'s, 2048 under {@code spymemcached}'s,
     * 4096 under {@code whalin}'s) and read back as {@code byte[]}. An item
     * refused before sending (an invalid or too long key, a value too large) fails alone: the
     * others are still sent, then the first failure is thrown as its {@link McpoolException}
     * with the core's message (a server's failure too). On the text protocol
     * memcached reports no refusal of a noreply store (a value too large for memcached's item
     * size): that item is not stored and nothing is thrown; {@link #setMulti} answers each
     * item. An empty map sends nothing.
     */
    public void setMultiNoreply(Map<String, byte[]> values, int ttl) {
        notNull(values, "value map");
        int n = values.size();
        byte[][] ks = new byte[n][], vs = new byte[n][];
        int i = 0;
        for (Map.Entry<String, byte[]> e : values.entrySet()) {
            ks[i] = key(e.getKey());
            if (e.getValue() == null) throw ClientException.invalidArgument("null value for key \"" + e.getKey() + "\"");
            vs[i] = e.getValue();
            i++;
        }
        if (n == 0) {
            nc.ensureOpen();
            return;
        }
        int[] klens = new int[n], vlens = new int[n];
        byte[] kb = pack(ks, klens, "keys"), vb = pack(vs, vlens, "values");
        long h = nc.acquireCommand();
        try {
            Native.setMultiNoreply(h, kb, klens, vb, vlens, ttl);
        } finally {
            nc.release();
        }
    }

    /** A batch of one store command: one pipelined round trip per server (two when values of
     * a kind and raw ones with their own flags mix: Native.storeMulti), every item tried;
     * casOf (OP_CAS only) gives each key's CAS unique and the value to store. */
    private Map<String, Boolean> storeMulti(int op, Map<String, ?> values, java.util.function.ToIntFunction<String> ttlOf,
                                            java.util.function.ToLongFunction<String> casOf) {
        String[] keys = new String[values.size()];
        int[] st = new int[keys.length];
        McpoolException[] errs = storeStatuses(op, values, keys, st, ttlOf, casOf);
        return answers(batchName(op), keys, st, errs);
    }

    /** The method's name, for a PartialBatchException's message. */
    private static String batchName(int op) {
        switch (op) {
            case Native.OP_SET: return "setMulti";
            case Native.OP_ADD: return "addMulti";
            case Native.OP_REPLACE: return "replaceMulti";
            case Native.OP_APPEND: return "appendMulti";
            case Native.OP_PREPEND: return "prependMulti";
            default: return "casMulti";
        }
    }

    /** Sends the batch of {@link #storeMulti}: each item's status to st and its key to keys
     * (both as long as values) in the same order; returns the failed items' exceptions
     * (Native.storeMulti's). */
    private McpoolException[] storeStatuses(int op, Map<String, ?> values, String[] keys, int[] st,
                                            java.util.function.ToIntFunction<String> ttlOf,
                                            java.util.function.ToLongFunction<String> casOf) {
        int n = values.size();
        byte[][] ks = new byte[n][], vs = new byte[n][];
        int[] kinds = new int[n], flags = new int[n], ttls = new int[n];
        long[] cas = casOf == null ? null : new long[n];
        boolean bytesOnly = op == Native.OP_APPEND || op == Native.OP_PREPEND;
        int i = 0;
        for (Map.Entry<String, ?> e : values.entrySet()) {
            keys[i] = e.getKey();
            ks[i] = key(e.getKey());
            CachedData d = encoded(tc, e.getKey(), e.getValue());
            if (bytesOnly) { // as append/prepend: only bytes and text stay one value
                Kind kind = d.kind != null ? d.kind : d.rawKind;
                if (kind != null && kind != Kind.BYTES && kind != Kind.TEXT) {
                    throw ClientException.invalidArgument((op == Native.OP_APPEND ? "append" : "prepend") + " of a "
                        + e.getValue().getClass().getName() + " to " + e.getKey()
                        + ": only byte[] and text can be added to a stored value");
                }
            }
            vs[i] = d.data;
            kinds[i] = d.kind == null || bytesOnly ? -1 : d.kind.ordinal(); // -1: raw, with its own flags
            flags[i] = d.flags;
            ttls[i] = ttlOf.applyAsInt(e.getKey());
            if (cas != null) cas[i] = casOf.applyAsLong(e.getKey());
            i++;
        }
        int[] klens = new int[n], vlens = new int[n];
        byte[] kb = pack(ks, klens, "keys"), vb = pack(vs, vlens, "values");
        if (n == 0) {
            nc.ensureOpen();
            return null;
        }
        long h = nc.acquireCommand();
        try {
            return Native.storeMulti(h, op, kb, klens, vb, vlens, kinds, flags, ttls, cas, st);
        } finally {
            nc.release();
        }
    }

    /** Stores each entry only where its key is absent, one pipelined round trip per server:
     * key to true when stored, false when it exists; failed keys (after every item was
     * tried) throw a {@link PartialBatchException}, as {@link #setMulti}. */
    public Map<String, Boolean> addMulti(Map<String, ?> values, int ttl) {
        notNull(values, "value map");
        return storeMulti(Native.OP_ADD, values, k -> ttl, null);
    }

    /** Stores each entry only where its key exists (false when missing), as {@link #addMulti}. */
    public Map<String, Boolean> replaceMulti(Map<String, ?> values, int ttl) {
        notNull(values, "value map");
        return storeMulti(Native.OP_REPLACE, values, k -> ttl, null);
    }

    /** Appends each entry's encoded bytes (byte[] and text only, as {@link #append}); false
     * where the key is missing. As {@link #addMulti}. */
    public Map<String, Boolean> appendMulti(Map<String, ?> values) {
        notNull(values, "value map");
        return storeMulti(Native.OP_APPEND, values, k -> 0, null);
    }

    /** Prepends each entry's encoded bytes, as {@link #appendMulti}. */
    public Map<String, Boolean> prependMulti(Map<String, ?> values) {
        notNull(values, "value map");
        return storeMulti(Native.OP_PREPEND, values, k -> 0, null);
    }

    /** Compare-and-swap of each entry: key to a {@link MemcachedItem} holding the new value
     * and the CAS unique from {@link #gets}; true when stored, false when the item changed or
     * is gone; a CAS unique of 0 is that key's {@link ClientException} MCPOOL_INVALID_ARGUMENT,
     * unsent. As {@link #addMulti}. */
    public Map<String, Boolean> casMulti(Map<String, MemcachedItem> items, int ttl) {
        Map<String, Object> values = casValues(items);
        return storeMulti(Native.OP_CAS, values, k -> ttl, k -> items.get(k).casUnique);
    }

    /** The new values of casMulti's items, key to value, in the map's order. */
    private static Map<String, Object> casValues(Map<String, MemcachedItem> items) {
        notNull(items, "item map");
        Map<String, Object> values = new LinkedHashMap<>((int) (items.size() / 0.75f) + 1);
        for (Map.Entry<String, MemcachedItem> e : items.entrySet()) {
            notNull(e.getValue(), "item");
            values.put(e.getKey(), e.getValue().value);
        }
        return values;
    }

    /** {@link #casMulti} with each key's answer told apart, as {@link #casResult}: key to
     * {@link CasResult#OK} stored, {@link CasResult#EXISTS} changed since {@link #gets},
     * {@link CasResult#NOT_FOUND} gone. Failed keys (a server down, a CAS unique of 0),
     * after every item was tried, throw a {@link PartialBatchException} whose
     * {@link PartialBatchException#answers() answers()} hold each answered key's CasResult
     * and {@link PartialBatchException#errors() errors()} each failed key's exception, so a
     * caller knows which writes happened. */
    public Map<String, CasResult> casMultiResults(Map<String, MemcachedItem> items, int ttl) {
        Map<String, Object> values = casValues(items);
        String[] keys = new String[values.size()];
        int[] st = new int[keys.length];
        McpoolException[] errs = storeStatuses(Native.OP_CAS, values, keys, st, k -> ttl, k -> items.get(k).casUnique);
        Map<String, CasResult> out = new LinkedHashMap<>((int) (keys.length / 0.75f) + 1);
        for (int i = 0; i < keys.length; i++) {
            if (isAnswer(st[i])) out.put(keys[i], CasResult.of(st[i]));
        }
        failedItems("casMultiResults", keys, st, errs, out);
        return out;
    }

    /** {@link #setMulti(Map, java.util.function.ToIntFunction)} with one TTL for all.
     *
     * @throws PartialBatchException some items failed, after every item was tried: its
     *         {@link PartialBatchException#answers() answers()} every answered key's answer,
     *         {@link PartialBatchException#errors() errors()} each failed key's exception
     *         (a {@link ConnectionException} or {@link TimeoutException} of its server, a
     *         {@link ServerException}, a {@link ClientException} for a key or value the core
     *         refused: too long, too large); with {@link Builder#failOpen} a timeout's or an
     *         unreachable server's keys answer false instead
     * @throws ClientException refused as a whole, nothing sent: a null map, key or value, a
     *         key with no UTF-8 form, a value the transcoder cannot or may not encode
     *         (MCPOOL_INVALID_KEY, MCPOOL_INVALID_ARGUMENT); or the client is closed
     *         (MCPOOL_CLOSED: before the batch or while it waited for a pooled connection)
     */
    public Map<String, Boolean> setMulti(Map<String, ?> values, int ttl) {
        return setMulti(values, k -> ttl);
    }

    /** Deletes the keys in one pipelined round trip per server: key to true when deleted,
     * false when it did not exist; failed keys throw a {@link PartialBatchException}, as
     * {@link #setMulti}. A key listed more than once
     * is deleted by its first occurrence and maps to true (false only when no occurrence
     * deleted it). */
    public Map<String, Boolean> deleteMulti(Collection<String> keys) {
        notNull(keys, "key collection");
        String[] ka = keys.toArray(new String[0]);
        byte[][] ks = new byte[ka.length][];
        for (int i = 0; i < ka.length; i++) ks[i] = key(ka[i]);
        int[] klens = new int[ka.length], st = new int[ka.length];
        byte[] kb = pack(ks, klens, "keys");
        McpoolException[] errs = null;
        if (ka.length > 0) {
            long h = nc.acquireCommand();
            try {
                errs = Native.deleteMulti(h, kb, klens, st);
            } finally {
                nc.release();
            }
        } else {
            nc.ensureOpen();
        }
        return answers("deleteMulti", ka, st, errs);
    }

    /** Sets the expiry (ttl seconds, 0 = never expires) of every key in one pipelined round
     * trip per server: key to true when touched, false when it did not exist; failed keys
     * (after every key was tried) throw a {@link PartialBatchException}, as {@link #setMulti}. */
    public Map<String, Boolean> touchMulti(Collection<String> keys, int ttl) {
        notNull(keys, "key collection");
        String[] ka = keys.toArray(new String[0]);
        int[] ttls = new int[ka.length];
        Arrays.fill(ttls, ttl);
        return touchMulti(ka, ttls);
    }

    /** As {@link #touchMulti(Collection, int)}, each key with its own ttl (as the C ABI's
     * {@code mcpool_client_touch_multi}, Rust's {@code touch_multi} and Perl's
     * {@code touch_multi} take them), in one pipelined round trip per server. A null ttl is a
     * {@link ClientException} MCPOOL_INVALID_ARGUMENT naming the key, nothing sent. */
    public Map<String, Boolean> touchMulti(Map<String, Integer> ttlOf) {
        notNull(ttlOf, "ttl map");
        java.util.List<String> ka = new java.util.ArrayList<>(ttlOf.size());
        java.util.List<Integer> tl = new java.util.ArrayList<>(ttlOf.size());
        for (Map.Entry<String, Integer> e : ttlOf.entrySet()) {
            if (e.getValue() == null) throw ClientException.invalidArgument("null ttl for key \"" + e.getKey() + "\"");
            ka.add(e.getKey());
            tl.add(e.getValue());
        }
        int[] ttls = new int[tl.size()];
        for (int i = 0; i < ttls.length; i++) ttls[i] = tl.get(i);
        return touchMulti(ka.toArray(new String[0]), ttls);
    }

    /** touchMulti: key ka[i] with ttls[i]. */
    private Map<String, Boolean> touchMulti(String[] ka, int[] ttls) {
        byte[][] ks = new byte[ka.length][];
        for (int i = 0; i < ka.length; i++) ks[i] = key(ka[i]);
        int[] klens = new int[ka.length], st = new int[ka.length];
        byte[] kb = pack(ks, klens, "keys");
        McpoolException[] errs = null;
        if (ka.length > 0) {
            long h = nc.acquireCommand();
            try {
                errs = Native.touchMulti(h, kb, klens, ttls, st);
            } finally {
                nc.release();
            }
        } else {
            nc.ensureOpen();
        }
        return answers("touchMulti", ka, st, errs);
    }

    /** Increments every key's counter by delta ({@link #incrMulti(Map)}: a delta per key) in
     * one pipelined round trip per server: key to its new value, empty when the key is
     * missing (a key listed twice is counted twice, its last value kept). A negative delta is a {@link ClientException} MCPOOL_INVALID_ARGUMENT,
     * nothing sent. Keys that fail (a value that is not a number: the server's CLIENT_ERROR, a
     * {@link ClientException}; a new value above {@code Long.MAX_VALUE}: MCPOOL_OUT_OF_RANGE
     * with the exact value; a server down) throw a {@link PartialBatchException} once every
     * key was tried: its {@code answers()} hold the other keys' values (OptionalLong), its
     * {@code errors()} each failed key's exception, its status the first's. */
    public Map<String, OptionalLong> incrMulti(Collection<String> keys, long delta) {
        return arithMulti(true, keys, delta);
    }

    /** As {@link #incrMulti(Collection, long)}, subtracting (memcached stops at 0). */
    public Map<String, OptionalLong> decrMulti(Collection<String> keys, long delta) {
        return arithMulti(false, keys, delta);
    }

    /** As {@link #incrMulti(Collection, long)}, each key by its own delta (as the C ABI's
     * {@code mcpool_client_arith_multi} takes them), in one pipelined round trip per server.
     * A null or negative delta is a {@link ClientException} MCPOOL_INVALID_ARGUMENT naming
     * the key, nothing sent. */
    public Map<String, OptionalLong> incrMulti(Map<String, Long> deltas) {
        return arithMulti(true, deltas);
    }

    /** As {@link #incrMulti(Map)}, subtracting (memcached stops at 0). */
    public Map<String, OptionalLong> decrMulti(Map<String, Long> deltas) {
        return arithMulti(false, deltas);
    }

    private Map<String, OptionalLong> arithMulti(boolean incr, Collection<String> keys, long delta) {
        notNull(keys, "key collection");
        String[] ka = keys.toArray(new String[0]);
        long[] deltas = new long[ka.length];
        Arrays.fill(deltas, delta);
        return arithMulti(incr, ka, deltas);
    }

    private Map<String, OptionalLong> arithMulti(boolean incr, Map<String, Long> deltaOf) {
        notNull(deltaOf, "delta map");
        String[] ka = new String[deltaOf.size()];
        long[] deltas = new long[ka.length];
        int i = 0;
        for (Map.Entry<String, Long> e : deltaOf.entrySet()) {
            if (e.getValue() == null) throw ClientException.invalidArgument("null delta for key \"" + e.getKey() + "\"");
            ka[i] = e.getKey();
            deltas[i++] = e.getValue();
        }
        return arithMulti(incr, ka, deltas);
    }

    /** incrMulti/decrMulti: key ka[i] by deltas[i]. */
    private Map<String, OptionalLong> arithMulti(boolean incr, String[] ka, long[] deltas) {
        byte[][] ks = new byte[ka.length][];
        for (int i = 0; i < ka.length; i++) ks[i] = key(ka[i]);
        for (int i = 0; i < ka.length; i++) {
            if (deltas[i] < 0) throw ClientException.invalidArgument("negative counter delta " + deltas[i] + " for "
                + ka[i] + " (memcached's deltas are unsigned: incr by -n is decr by n)");
        }
        int n = ka.length;
        int[] klens = new int[n], st = new int[n];
        long[] values = new long[n];
        byte[] kb = pack(ks, klens, "keys");
        McpoolException[] errs = null;
        if (n > 0) {
            long h = nc.acquireCommand();
            try {
                errs = Native.arithMulti(h, incr, kb, klens, deltas, values, st);
            } finally {
                nc.release();
            }
        } else {
            nc.ensureOpen();
        }
        Map<String, OptionalLong> out = new LinkedHashMap<>((int) (n / 0.75f) + 1);
        // the keys that failed, or whose new value has no long form: thrown once all are read,
        // with every other key's answer (PartialBatchException), as the other batches do
        Map<String, McpoolException> errors = null;
        String op = incr ? "incrMulti" : "decrMulti";
        for (int i = 0; i < n; i++) {
            McpoolException e = null;
            if (st[i] == Native.OK && values[i] >= 0) {
                out.put(ka[i], OptionalLong.of(values[i]));
            } else if (st[i] == Native.NOT_FOUND) {
                out.putIfAbsent(ka[i], OptionalLong.empty());
            } else if (st[i] == Native.OK) {
                e = ClientException.outOfRange("the counter " + ka[i] + " is now " + Long.toUnsignedString(values[i])
                    + ", above Long.MAX_VALUE (memcached's counters are unsigned 64-bit)");
            } else {
                e = errs != null && errs[i] != null ? errs[i] : itemFailed(op, ka[i], st[i]);
            }
            if (e != null) {
                if (errors == null) errors = new LinkedHashMap<>();
                errors.putIfAbsent(ka[i], e);
            }
        }
        if (errors != null) throw batchFailure(op, out, errors);
        return out;
    }

    /** Deletes the key: true when it existed, false when it did not.
     *
     * @throws ClientException a null or invalid key (MCPOOL_INVALID_KEY,
     *         MCPOOL_INVALID_ARGUMENT), nothing sent, or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT); with
     *         {@link Builder#failOpen} false instead
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH); with
     *         failOpen, but MCPOOL_AUTH, false instead
     * @throws ServerException the server's {@code SERVER_ERROR} reply or a reply that broke the
     *         protocol (MCPOOL_PROTOCOL)
     */
    public boolean delete(String key) {
        byte[] k = key(key);
        long h = nc.acquireCommand();
        try {
            return Native.delete(h, k, k.length) == Native.OK;
        } finally {
            nc.release();
        }
    }

    /** New expiry; false when the key did not exist. */
    public boolean touch(String key, int ttl) {
        byte[] k = key(key);
        long h = nc.acquireCommand();
        try {
            return Native.touch(h, k, ttl) == Native.OK;
        } finally {
            nc.release();
        }
    }

    /**
     * The counter's new value, empty when the key is missing. memcached's counters are
     * unsigned 64-bit (incr wraps at 2^64, decr stops at 0): a negative delta (or initial
     * value, for {@link #incrOrInit}) is a {@link ClientException} MCPOOL_INVALID_ARGUMENT,
     * nothing sent; a new value above {@code Long.MAX_VALUE} is a {@link ClientException}
     * MCPOOL_OUT_OF_RANGE whose message has the exact value (the server holds it). A value
     * that is not a decimal number is the server's CLIENT_ERROR ({@link ClientException}).
     *
     * @throws ClientException a negative delta or a null or invalid key
     *         (MCPOOL_INVALID_ARGUMENT, MCPOOL_INVALID_KEY), nothing sent; a stored value
     *         that is not a decimal number (the server's {@code CLIENT_ERROR}:
     *         MCPOOL_CLIENT_ERROR); a new value above
     *         {@code Long.MAX_VALUE} (MCPOOL_OUT_OF_RANGE, the exact value in the message);
     *         or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT); with
     *         {@link Builder#failOpen} an empty OptionalLong instead
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH); with
     *         failOpen, but MCPOOL_AUTH, an empty OptionalLong instead
     * @throws ServerException the server's {@code SERVER_ERROR} reply or a reply that broke the
     *         protocol (MCPOOL_PROTOCOL)
     */
    public OptionalLong incr(String key, long delta) {
        long[] out = new long[1];
        return arith(Native.OP_INCR, key, delta, 0, 0, out) == Native.OK ? OptionalLong.of(out[0]) : OptionalLong.empty();
    }

    /** As {@link #incr}, subtracting (memcached stops at 0).
     *
     * @throws ClientException a negative delta or a null or invalid key
     *         (MCPOOL_INVALID_ARGUMENT, MCPOOL_INVALID_KEY), nothing sent; a stored value
     *         that is not a decimal number (the server's {@code CLIENT_ERROR}:
     *         MCPOOL_CLIENT_ERROR); a new value above
     *         {@code Long.MAX_VALUE} (MCPOOL_OUT_OF_RANGE, the exact value in the message);
     *         or the client is closed (MCPOOL_CLOSED)
     * @throws TimeoutException (a {@link ConnectionException}) a connect, a read or write, the
     *         wait for a pooled connection or the whole call timed out
     *         (MCPOOL_CONNECT_TIMEOUT, MCPOOL_IO_TIMEOUT, MCPOOL_POOL_TIMEOUT); with
     *         {@link Builder#failOpen} an empty OptionalLong instead
     * @throws ConnectionException the key's server is marked dead (MCPOOL_SERVER_DEAD), the
     *         connection failed (MCPOOL_IO) or TLS or SASL refused it (MCPOOL_AUTH); with
     *         failOpen, but MCPOOL_AUTH, an empty OptionalLong instead
     * @throws ServerException the server's {@code SERVER_ERROR} reply or a reply that broke the
     *         protocol (MCPOOL_PROTOCOL)
     */
    public OptionalLong decr(String key, long delta) {
        long[] out = new long[1];
        return arith(Native.OP_DECR, key, delta, 0, 0, out) == Native.OK ? OptionalLong.of(out[0]) : OptionalLong.empty();
    }

    /** Increments, or creates the counter with initial when missing (with this ttl, by the
     * rule of {@link #set}); the new value (a negative delta or initial, or a result above
     * Long.MAX_VALUE: as {@link #incr}). The counter created is decimal text with flags 0. */
    public long incrOrInit(String key, long delta, long initial, int ttl) {
        long[] out = new long[1];
        arith(Native.OP_INCR_INIT, key, delta, initial, ttl, out);
        return out[0];
    }

    /** As {@link #incrOrInit}, subtracting (memcached stops at 0): the new value, or initial
     * when the key was missing and is created with it. */
    public long decrOrInit(String key, long delta, long initial, int ttl) {
        long[] out = new long[1];
        arith(Native.OP_DECR_INIT, key, delta, initial, ttl, out);
        return out[0];
    }

    /** Stores {@code value} as a counter for {@link #incr}/{@link #decr}: memcached's decimal
     * text with raw flags 0, never compressed, whatever the value format (the core's
     * set_counter; what {@link #incrOrInit} creates and Whalin's storeCounter stores). True when
     * stored.
     *
     * <p>memcached's counters are unsigned 64-bit; a {@code long} here is 0 to
     * {@code Long.MAX_VALUE}, read as it is: a negative one (a counter no incr takes, and
     * never read as the unsigned number with the same bits: -1 is not 2^64-1) is a
     * {@link ClientException} MCPOOL_INVALID_ARGUMENT, nothing sent. For a counter from
     * 2^63 to 2^64-1 use {@link #setCounterUnsigned}. */
    public boolean setCounter(String key, long value, int ttl) {
        return storeCounter(key(key), value, ttl) == Native.OK;
    }

    /** {@link #setCounter} of the unsigned 64-bit counter whose bits {@code value} holds
     * (as {@link Long#toUnsignedString(long)} reads it: -1 is 2^64-1), for a counter from
     * 2^63 to 2^64-1: the same decimal text with raw flags 0 in every value format.
     * ({@code setBytes} with flags 0 is the bytes kind under the spymemcached and whalin
     * formats, which those clients read as a byte[]: tester finding javateam2 1.) */
    public boolean setCounterUnsigned(String key, long value, int ttl) {
        byte[] k = key(key);
        long h = nc.acquireCommand();
        try {
            return Native.setCounter(h, k, value, ttl) == Native.OK;
        } finally {
            nc.release();
        }
    }

    /** Invalidates every item on every server. */
    public void flushAll() {
        flushAll(0);
    }

    /** Invalidates every item on every server after delaySeconds (memcached's
     * {@code flush_all <delay>}; 0 now, and, by the core's rule, a negative delay too: a
     * moment in the past, as Cache::Memcached::Fast and pylibmc send -1). Every server is
     * tried; the first failed server's exception is thrown, the other failed servers'
     * exceptions {@linkplain Throwable#getSuppressed() suppressed} in it;
     * {@link #flushAllEach} says which servers were flushed. */
    public void flushAll(int delaySeconds) {
        McpoolException first = null;
        for (McpoolException e : flushAllEach(delaySeconds).values()) {
            if (e == null) continue;
            if (first == null) first = e;
            else first.addSuppressed(e);
        }
        if (first != null) throw first;
    }

    /** Invalidates every item on every server after delaySeconds (as {@link #flushAll(int)})
     * and answers each server's outcome, every server in configuration order: "host:port" →
     * null when it was flushed, else its exception (not thrown), so a caller can tell the
     * servers that still hold their data (the C library's
     * {@code mcpool_client_flush_all_each}, Perl's {@code flush_all} hash). On a closed
     * client (every server refused with MCPOOL_CLOSED) the first server's
     * {@link ClientException} is thrown, as {@link #flushAll(int)} throws it. */
    public Map<String, McpoolException> flushAllEach(int delaySeconds) {
        Object[] flat;
        long h = nc.acquireCommand();
        try {
            flat = Native.flushAllEach(h, delaySeconds);
        } finally {
            nc.release();
        }
        Map<String, McpoolException> out = new LinkedHashMap<>();
        boolean closed = flat.length > 0;
        for (int i = 0; i + 1 < flat.length; i += 2) {
            McpoolException e = (McpoolException) flat[i + 1];
            closed &= e != null && e.status() == Native.CLOSED;
            out.put(Utf8.decode((byte[]) flat[i]), e);
        }
        // refused as a whole, the client closed: thrown as a single-key call throws it (the
        // core's message, the first server's), as flushAll throws it, never a map of failures
        if (closed) throw (McpoolException) flat[1];
        return out;
    }

    /** Statistics per server ("host:port" → name → value); group null for the general ones,
     * or "items", "slabs", "settings", ... Servers that failed are left out; when every
     * server failed (all down, or a group memcached does not know, such as a typo), the first
     * server's error is thrown (a {@link McpoolException} of its class, as Python's and the
     * CLI's stats raise), never an empty map. Names and values are decoded as UTF-8 (bytes that
     * are not UTF-8 become U+FFFD). */
    public Map<String, Map<String, String>> stats(String group) {
        return serverResults(group, Native.STATS, false, true);
    }

    /** Each answering server's version; when every server failed, the first server's error
     * is thrown, as {@link #stats}. */
    public Map<String, String> versions() {
        Map<String, String> out = new LinkedHashMap<>();
        serverResults(null, Native.VERSIONS, false, true).forEach((k, v) -> out.put(k, v.get("version")));
        return out;
    }

    /** A no-op round trip to every server (meta {@code mn}, binary NOOP, text {@code version}
     * with its answer dropped: the core's noop): "host:port" → true when it answered, false
     * when it failed, every server in configuration order. */
    public Map<String, Boolean> noop() {
        Map<String, Boolean> out = new LinkedHashMap<>();
        serverResults(null, Native.NOOP, true, false).forEach((k, v) -> out.put(k, v != null));
        return out;
    }

    /** Replaces the server list at run time, weight 1 each: see {@link #setServers(String[], int[])}. */
    public void setServers(String... servers) {
        notNull(servers, "servers");
        int[] w = new int[servers.length];
        Arrays.fill(w, 1);
        setServers(servers, w);
    }

    /**
     * Replaces the server list at run time ({@code host:port}, {@code [v6]:port} or a unix
     * socket path, as {@link Builder#server(String, int)} takes them, with placement weights
     * of at least 1): the core's atomic {@code set_servers}. Calls already running finish on
     * the old list, later calls use the new one; servers still present keep their
     * connections, health and metrics, removed ones close theirs once no call uses them. A
     * bad list (empty, a malformed address, a weight below 1, not one weight per server) is a
     * {@link ConfigurationException} ({@code MCPOOL_CONFIG}) naming the entry, and the old list stays. The
     * {@code suppressed_errors} counts of {@link #metrics()} start again for the new list.
     */
    public void setServers(String[] servers, int[] weights) {
        notNull(servers, "servers");
        notNull(weights, "weights");
        if (weights.length != servers.length) {
            throw new ConfigurationException(103, "MCPOOL_CONFIG", weights.length + " weights for " + servers.length
                + " servers (one weight per server)");
        }
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        int[] lens = new int[servers.length];
        for (int i = 0; i < servers.length; i++) {
            notNull(servers[i], "server address");
            byte[] b = Utf8.address(servers[i], "server address");
            lens[i] = b.length;
            all.write(b, 0, b.length);
        }
        long h = nc.acquireCommand();
        try {
            Native.setServers(h, all.toByteArray(), lens, weights.clone());
            this.suppressed = new ConcurrentHashMap<>();
        } finally {
            nc.release();
        }
    }

    /** The servers (the current list, see {@link #setServers(String[], int[])}). */
    public List<String> servers() {
        long h = nc.acquire();
        try {
            int n = Native.serverCount(h);
            String[] s = new String[n];
            for (int i = 0; i < n; i++) s[i] = Utf8.decode(Native.serverLabel(h, i));
            return Arrays.asList(s);
        } finally {
            nc.release();
        }
    }

    /** Which server (its index in {@link #servers()}) key lives on by placement alone; no
     * I/O. Server health is ignored: while that server is marked dead, a failover policy
     * ({@code rehash}, {@code eject}) sends the key's commands to another one. */
    public int serverIndexFor(String key) {
        byte[] k = key(key);
        long h = nc.acquire();
        try {
            return Native.serverFor(h, k);
        } finally {
            nc.release();
        }
    }

    /**
     * A snapshot of every server's metrics, without I/O: server label ({@code host:port}, in
     * configuration order) to metric name to value. The core's counters ({@code operations},
     * {@code hits}, {@code misses}, {@code connects}, {@code connect_errors}, {@code timeouts},
     * {@code io_errors}, {@code server_errors}, {@code protocol_errors}, {@code pool_waits},
     * {@code pool_wait_ns}, {@code pool_timeouts}, {@code ejections}, {@code returns},
     * {@code handed_over}, {@code returns_flushed}, {@code stale_deleted}, {@code away_overflows},
     * {@code fail_open_misses}, {@code fail_open_not_stored}, {@code failovers},
     * {@code cleanups_refused}, and whatever a
     * newer core adds; docs/metrics.md has each one's meaning) count since the client was built;
     * {@code pool_open} and {@code pool_idle} are gauges. An address listed twice (a double
     * share) is one server, its entries' counters and connections summed by the core
     * (docs/metrics.md). The binding adds {@code suppressed_errors}: the server's errors that
     * {@link MemCachedClient} answered with null/false/-1 instead of throwing.
     */
    public Map<String, Map<String, Long>> metrics() {
        Object[] snap = snapshot();
        byte[][] labels = (byte[][]) snap[0];
        long[] values = (long[]) snap[1];
        int count = Native.metricCount();
        String[] names = new String[count];
        for (int m = 0; m < count; m++) {
            String name = Native.metricName(m);
            names[m] = name == null ? "metric_" + m : name;
        }
        Map<String, Map<String, Long>> out = new LinkedHashMap<>();
        for (int i = 0; i < labels.length; i++) {
            String label = Utf8.decode(labels[i]);
            Map<String, Long> one = new LinkedHashMap<>();
            for (int m = 0; m < count && (long) i * count + m < values.length; m++) one.put(names[m], values[i * count + m]);
            LongAdder s = suppressed.get(label);
            one.put("suppressed_errors", s == null ? 0L : s.sum());
            out.put(label, one);
        }
        return out;
    }

    /** Every server's health, without I/O: one per address, in the order each first appears
     * in the list (an address listed twice is one server, its entries' states merged by the
     * core: dead while either is, the most failures, the longest wait; docs/metrics.md). */
    public List<ServerState> serverStates() {
        Object[] snap = snapshot();
        byte[][] labels = (byte[][]) snap[0];
        long[] st = (long[]) snap[2];
        List<ServerState> out = new ArrayList<>(labels.length);
        for (int i = 0; i < labels.length; i++) {
            out.add(new ServerState(Utf8.decode(labels[i]), st[3 * i] != 0, (int) st[3 * i + 1], st[3 * i + 2]));
        }
        return out;
    }

    /** The same snapshot as {@link #metrics()} in the Prometheus text exposition format
     * (version 0.0.4: {@code mcpool_<metric>_total{server="host:port"}} for counters,
     * docs/metrics.md), without I/O: what an exporter's {@code /metrics} page serves. */
    public String metricsPrometheus() {
        return Utf8.decode((byte[]) metricsPart(1));
    }

    /** The core's snapshot of every server's metrics and health (see Native.snapshot). */
    private Object[] snapshot() {
        return (Object[]) metricsPart(0);
    }

    /** Native.snapshot (part 0) or the Prometheus text (part 1) of the live client, or, once
     * it is closed, as they were when it closed (its last calls counted), as every other
     * surface reads a closed client's metrics. */
    private Object metricsPart(int part) {
        Object[] last = nc.finalMetrics();
        if (last != null) return last[part];
        long h;
        try {
            h = nc.acquire();
        } catch (ClientException closed) {
            last = nc.finalMetrics();
            if (last == null) throw closed;
            return last[part];
        }
        try {
            return part == 0 ? Native.snapshot(h) : Native.metricsPrometheus(h);
        } finally {
            nc.release();
        }
    }

    /** The {@code vivifyTtl} of {@link #getLease(String)}: 30 seconds (the C header's
     * MCPOOL_LEASE_DEFAULT_VIVIFY_TTL, the Python and Perl bindings' default). */
    public static final int LEASE_DEFAULT_VIVIFY_TTL = 30;

    /** The {@code staleTtl} of {@link #invalidate(String)}: 30 seconds (the C header's
     * MCPOOL_LEASE_DEFAULT_STALE_TTL, the Python and Perl bindings' default). */
    public static final int LEASE_DEFAULT_STALE_TTL = 30;

    /** {@link #getLease(String, int, int)} with the default placeholder life,
     * {@link #LEASE_DEFAULT_VIVIFY_TTL}, and no early recompute ({@code recacheBelow} 0), as
     * Python's and Perl's {@code get_lease(key)}. */
    public Lease getLease(String key) {
        return getLease(key, LEASE_DEFAULT_VIVIFY_TTL, 0);
    }

    /**
     * A read that hands out the right to recompute a missing or stale value to one caller
     * at a time (meta protocol only: {@link Builder#protocol} {@code "meta"}; otherwise a
     * {@link ClientException} MCPOOL_UNSUPPORTED). On a miss the key is created empty for
     * {@code vivifyTtl} seconds and this caller gets {@link Lease.State#RECOMPUTE}; others get
     * WAIT until it stores the value. {@code recacheBelow} > 0: a hit whose remaining TTL is
     * below that many seconds also hands out RECOMPUTE (once), with the value. The empty
     * placeholder is a miss for this client's plain reads ({@code get}, {@code gets},
     * {@code getMulti}, {@code keyExists}: the core reads memcached's flag on it); {@code add}
     * fails until the winner's set replaces it; text or binary clients read it as empty. A
     * stale value may be empty ({@code ""}, not null). memcached flags a stored item as a
     * placeholder once a lease with {@code recacheBelow} took its token: an empty value
     * stored as bytes (flags 0) is then taken for one (a miss) until it is set again, while
     * an empty String (flags of its own) stays a value (docs/protocols.md, "Leases").
     */
    public Lease getLease(String key, int vivifyTtl, int recacheBelow) {
        byte[] k = key(key);
        long[] meta = new long[4];
        byte[] b;
        long h = nc.acquireCommand();
        try {
            b = Native.getLease(h, k, vivifyTtl, recacheBelow, meta);
        } finally {
            nc.release();
        }
        // null: no value (the core took a placeholder for none); an empty array is a value.
        Object v = b == null ? null : decode(tc, key, b, Kind.of(meta[0]), (int) meta[3]);
        return new Lease((int) meta[2], v, meta[1]);
    }

    /** Marks the key stale for {@code staleTtl} seconds instead of deleting it (meta protocol
     * only): lease readers keep getting the old value while one of them recomputes. False
     * when the key did not exist. Plain reads still return the old value. memcached gives
     * the recompute token to the first read of the stale item, whatever it asks: reads
     * without a CAS ({@code get}, {@code getMulti}, get-and-touch) hand it back (one more
     * round trip), so the next {@link #getLease} still answers {@code RECOMPUTE}; reads that
     * return a CAS ({@code gets}, {@link #metaInfo}) keep it (handing it back would change
     * that CAS), and {@link #getLease} then answers {@code WAIT} until the key is set again
     * or {@code staleTtl} runs out (docs/protocols.md, "Plain reads of an invalidated
     * item"). */
    public boolean invalidate(String key, int staleTtl) {
        return invalidateFor(key, staleTtl);
    }

    /** {@link #invalidate(String, int)} for {@link #LEASE_DEFAULT_STALE_TTL} seconds, as
     * Python's and Perl's {@code invalidate(key)}. */
    public boolean invalidate(String key) {
        return invalidateFor(key, LEASE_DEFAULT_STALE_TTL);
    }

    private boolean invalidateFor(String key, int staleTtl) {
        byte[] k = key(key);
        long h = nc.acquireCommand();
        try {
            return Native.invalidate(h, k, staleTtl) == Native.OK;
        } finally {
            nc.release();
        }
    }

    /**
     * Stores value (encoded as {@link #set} does) with the explicit CAS version {@code version}
     * (meta protocol, memcached 1.6.27 or later: the meta E flag), for writers that keep
     * several pools consistent. True when stored. A {@link ClientException}
     * (MCPOOL_UNSUPPORTED) on the text and binary protocols and from an older server (the
     * message names the version it reports; nothing was stored). A version of 0 is a
     * ClientException (MCPOOL_INVALID_ARGUMENT) before anything is sent: memcached never gives
     * an item CAS 0, as for {@link #cas} (so on every {@code *WithVersion} call).
     */
    public boolean setWithVersion(String key, Object value, int ttl, long version) {
        byte[] k = key(key);
        CachedData d = encoded(tc, key, value);
        long h = nc.acquireCommand();
        try {
            int kind = d.kind == null ? -1 : d.kind.ordinal();
            return Native.setWithVersion(h, k, kind, d.data, d.flags, ttl, version) == Native.OK;
        } finally {
            nc.release();
        }
    }

    /**
     * {@link #delete} with the explicit CAS version {@code version} (meta protocol, memcached
     * 1.6.27 or later: the meta E flag). True when the key existed, false when it did not. A
     * {@link ClientException} (MCPOOL_UNSUPPORTED) on the text and binary protocols and from
     * an older server (the message names the version it reports; nothing was deleted).
     */
    public boolean deleteWithVersion(String key, long version) {
        byte[] k = key(key);
        long h = nc.acquireCommand();
        try {
            return Native.deleteWithVersion(h, k, version) == Native.OK;
        } finally {
            nc.release();
        }
    }

    /**
     * {@link #incr} that gives the counter the explicit CAS version {@code version} (meta
     * protocol, memcached 1.6.27 or later): the new value, empty when the key is missing. A
     * negative delta or a new value above Long.MAX_VALUE as {@link #incr}; MCPOOL_UNSUPPORTED
     * as {@link #deleteWithVersion} (nothing changed).
     */
    public OptionalLong incrWithVersion(String key, long delta, long version) {
        return arithWithVersion(true, key, delta, version);
    }

    /** As {@link #incrWithVersion}, subtracting (memcached stops at 0). */
    public OptionalLong decrWithVersion(String key, long delta, long version) {
        return arithWithVersion(false, key, delta, version);
    }

    private OptionalLong arithWithVersion(boolean incr, String key, long delta, long version) {
        byte[] k = key(key);
        if (delta < 0) throw ClientException.invalidArgument("negative counter delta " + delta + " for " + key
            + " (memcached's deltas are unsigned: incr by -n is decr by n)");
        long[] out = new long[1];
        int st;
        long h = nc.acquireCommand();
        try {
            st = Native.arithWithVersion(h, incr, k, delta, version, out);
        } finally {
            nc.release();
        }
        if (st != Native.OK) return OptionalLong.empty();
        if (out[0] < 0) {
            throw ClientException.outOfRange("the counter " + key + " is now " + Long.toUnsignedString(out[0])
                + ", above Long.MAX_VALUE (memcached's counters are unsigned 64-bit)");
        }
        return OptionalLong.of(out[0]);
    }

    /**
     * The item's metadata without its value (meta protocol only; otherwise a
     * {@link ClientException} MCPOOL_UNSUPPORTED), or null for a miss.
     */
    public ItemInfo metaInfo(String key) {
        byte[] k = key(key);
        long[] out = new long[6];
        long h = nc.acquireCommand();
        try {
            if (Native.metaInfo(h, k, out) != Native.OK) return null;
        } finally {
            nc.release();
        }
        return new ItemInfo(out[0] != 0, out[1], out[2], out[3], out[4], (int) out[5]);
    }

    /**
     * Closes the client's connections and keeps the client usable (the C ABI's
     * {@code mcpool_client_disconnect_all}, Python's and Perl's {@code disconnect_all},
     * Cache::Memcached::Fast's): the idle ones now, those in use when their call gives them
     * back; the next call to a server opens a new one (counted as {@code connects} in
     * {@link #metrics()}). The servers' health (a server marked dead stays so), their metrics
     * and the server list are kept, and the {@link Builder#minIdle} connections are not opened
     * again until calls need them. For dropping connections that may be stale (after a
     * network change, a failover of the memcached hosts behind a name) without building a new
     * client. No I/O; may be called from any thread while others use the client. Unlike
     * {@link #close()} it ends no call and refuses none.
     *
     * @throws ClientException MCPOOL_CLOSED once the client is {@linkplain #close() closed}
     */
    public void disconnectAll() {
        long h = nc.acquire();
        try {
            Native.disconnectAll(h);
        } finally {
            nc.release();
        }
    }

    /** Frees the native client (connections, background threads). Idempotent. */
    @Override
    public void close() {
        nc.close();
    }

    /** Whether {@link #close()} was called (every call then throws MCPOOL_CLOSED). */
    public boolean isClosed() {
        return nc.isClosed();
    }
}
