package io.mcpool;

import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The modern entry point: one thread-safe client over the mcpool core, closed with
 * {@link #close()} (or try-with-resources). Share one instance between all threads.
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
 * <p>Values: byte[] reads back as byte[], String as String, Long/Integer/Short/Byte as Long,
 * Boolean as Boolean, in the value format of the fleet ({@link Builder#valueFormat(String)},
 * default {@code mcpool}: what mcpool's Python, Perl, C and Rust clients read). A value Java
 * cannot read (a Python pickle, a Perl Storable image, flags that mean nothing in the format,
 * a compressed value that does not inflate, a serialized object with serialization off) is
 * an {@link McpoolException} naming the key, never its bytes.
 */
public final class Mcpool implements AutoCloseable {
    final NativeClient nc;
    final Transcoder tc;

    Mcpool(Config cfg, Transcoder tc) {
        this.nc = new NativeClient(cfg);
        this.tc = tc;
    }

    /** The mcpool core's version. */
    public static String coreVersion() {
        return Native.version();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Configuration; every setter documents the core's default. */
    public static final class Builder {
        final Config cfg = new Config();
        Transcoder tc = new WhalinTranscoder();
        boolean tcSet;
        String valueFormat;

        /** Servers, {@code host:port}, weight 1 each. Order decides placement. */
        public Builder servers(String... addrs) {
            notNull(addrs, "servers");
            for (String a : addrs) server(a, 1);
            return this;
        }

        /** A server with a placement weight (at least 1; a negative weight is refused by
         * {@link #build()} with a {@link ClientException}). */
        public Builder server(String addr, int weight) {
            notNull(addr, "server address");
            cfg.servers.add(addr);
            cfg.weights.add(weight);
            return this;
        }

        /** Placement profile, e.g. {@code whalin-native}, {@code spymemcached-ketama}
         * (default {@code cache-memcached}). */
        public Builder distribution(String name) {
            notNull(name, "distribution");
            cfg.names.put(Native.NAME_DISTRIBUTION, name);
            return this;
        }

        /** {@code fail-fast} (default), {@code rehash} or {@code eject}. */
        public Builder failover(String name) {
            notNull(name, "failover");
            cfg.names.put(Native.NAME_FAILOVER, name);
            return this;
        }

        /** {@code text} (default), {@code meta} or {@code binary}. */
        public Builder protocol(String name) {
            notNull(name, "protocol");
            cfg.names.put(Native.NAME_PROTOCOL, name);
            return this;
        }

        /** {@code gzip} (default, flag 2: Whalin, spymemcached) or {@code zlib} (flag 8). */
        public Builder compressionFormat(String name) {
            notNull(name, "compressionFormat");
            cfg.names.put(Native.NAME_COMPRESSION_FORMAT, name);
            return this;
        }

        /** Compress values of at least this many bytes (default 30720); 0 or less: never. */
        public Builder compressionThreshold(long bytes) {
            if (bytes <= 0) {
                cfg.numbers.put(Native.OPT_COMPRESSION, 0L);
            } else {
                cfg.numbers.put(Native.OPT_COMPRESSION, 1L);
                cfg.numbers.put(Native.OPT_COMPRESSION_THRESHOLD, bytes);
            }
            return this;
        }

        /** Keep a compressed value only if compressed/original is at most this (default 0.8). */
        public Builder compressionRatio(double ratio) {
            cfg.ratio = ratio;
            return this;
        }

        /** URL-encode keys as Whalin did (default: on for whalin-* profiles, else off). */
        public Builder sanitizeKeys(boolean on) {
            cfg.numbers.put(Native.OPT_SANITIZE_KEYS, on ? 1L : 0L);
            return this;
        }

        /** Prepended to every key (as UTF-8; unpaired surrogates are refused). */
        public Builder keyPrefix(String prefix) {
            cfg.keyPrefix = Utf8.text(prefix, "key prefix");
            return this;
        }

        /** Connections per server opened at start and kept (default 1). */
        public Builder minIdle(int n) {
            cfg.numbers.put(Native.OPT_MIN_IDLE, (long) n);
            return this;
        }

        /** Most connections per server (default 16). */
        public Builder maxConnections(int n) {
            cfg.numbers.put(Native.OPT_MAX_SIZE, (long) n);
            return this;
        }

        public Builder idleTimeoutMillis(long ms) {
            cfg.numbers.put(Native.OPT_IDLE_TIMEOUT_MS, ms);
            return this;
        }

        public Builder connectTimeoutMillis(long ms) {
            cfg.numbers.put(Native.OPT_CONNECT_TIMEOUT_MS, ms);
            return this;
        }

        /** Each socket read or write (default 1000). */
        public Builder ioTimeoutMillis(long ms) {
            cfg.numbers.put(Native.OPT_IO_TIMEOUT_MS, ms);
            return this;
        }

        /** Wait for a free pooled connection (default 5000). */
        public Builder poolTimeoutMillis(long ms) {
            cfg.numbers.put(Native.OPT_POOL_TIMEOUT_MS, ms);
            return this;
        }

        public Builder noDelay(boolean on) {
            cfg.numbers.put(Native.OPT_NODELAY, on ? 1L : 0L);
            return this;
        }

        public Builder testOnCheckOut(boolean on) {
            cfg.numbers.put(Native.OPT_TEST_ON_CHECK_OUT, on ? 1L : 0L);
            return this;
        }

        public Builder retryTimeoutMillis(long ms) {
            cfg.numbers.put(Native.OPT_RETRY_TIMEOUT_MS, ms);
            return this;
        }

        public Builder maxValueSize(long bytes) {
            cfg.numbers.put(Native.OPT_MAX_VALUE_SIZE, bytes);
            return this;
        }

        /** How Java types map to the core's kinds, and whether Java serialization is
         * allowed (default a {@link WhalinTranscoder} without it). A transcoder given here
         * also brings its value format ({@link Transcoder#valueFormat()}: {@code whalin},
         * {@code spymemcached}) unless {@link #valueFormat(String)} is set. */
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
         * unknown name fails at {@link #build()} (MCPOOL_CONFIG). */
        public Builder valueFormat(String name) {
            notNull(name, "valueFormat");
            this.valueFormat = name;
            return this;
        }

        /** Builds the client; {@link ClientException} (MCPOOL_CONFIG) when unusable. */
        public Mcpool build() {
            Config c = cfg.copy();
            String f = valueFormat != null ? valueFormat
                : tcSet && tc.valueFormat() != null ? tc.valueFormat() : "mcpool";
            c.names.put(Native.NAME_VALUE_FORMAT, f);
            c.numbers.put(Native.OPT_JAVA_SERIALIZATION, tc.allowSerializable() ? 1L : 0L);
            return new Mcpool(c, tc);
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

    int store(Transcoder t, int op, String key, Object value, int ttl, long cas) {
        byte[] k = key(key);
        CachedData d = t.encode(value);
        if (d == null || d.data == null) {
            throw new ClientException("the transcoder " + t.getClass().getName() + " encoded a "
                + (value == null ? "null" : value.getClass().getName()) + " as null", null);
        }
        if (d.kind == null || op == Native.OP_APPEND || op == Native.OP_PREPEND) {
            return storeRaw(op, k, d.data, d.flags, ttl, cas); // append/prepend: the bytes only
        }
        long h = nc.acquire();
        try {
            return Native.storeKind(h, op, k, k.length, d.kind.ordinal(), d.data, d.data.length, ttl, cas);
        } finally {
            nc.release();
        }
    }

    int storeRaw(int op, byte[] k, byte[] data, int flags, int ttl, long cas) {
        notNull(data, "value");
        long h = nc.acquire();
        try {
            return Native.store(h, op, k, k.length, data, data == null ? 0 : data.length, flags, ttl, cas);
        } finally {
            nc.release();
        }
    }

    /** Raw read: the bytes and flags (meta[0]) and CAS (meta[1]); null on a miss. */
    byte[] getRaw(byte[] k, boolean withCas, long[] meta) {
        long h = nc.acquire();
        try {
            return Native.get(h, k, k.length, withCas, meta);
        } finally {
            nc.release();
        }
    }

    Object get(Transcoder t, String key) {
        long[] meta = new long[3];
        byte[] b = getRaw(key(key), false, meta);
        return b == null ? null : t.decode(b, Kind.of(meta[2]));
    }

    MemcachedItem gets(Transcoder t, String key) {
        long[] meta = new long[3];
        byte[] b = getRaw(key(key), true, meta);
        return b == null ? null : new MemcachedItem(t.decode(b, Kind.of(meta[2])), meta[1]);
    }

    /** Multi-get: values in key order (null for misses). */
    Object[] getMultiArray(Transcoder t, String[] keys) {
        int n = keys.length;
        Object[] vals = new Object[n];
        if (n == 0) return vals;
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
        int[] kinds = new int[n];
        long[] cas = new long[n];
        int[] spans = new int[2 * n];
        byte[] packed;
        long h = nc.acquire();
        try {
            packed = Native.getMulti(h, blob, lens, false, vals, kinds, cas, spans);
        } finally {
            nc.release();
        }
        for (int i = 0; i < n; i++) {
            int at = spans[i];
            if (at >= 0) {
                vals[i] = t.decode(Arrays.copyOfRange(packed, at, at + spans[n + i]), Kind.of(kinds[i]));
            } else if (vals[i] != null) {
                vals[i] = t.decode((byte[]) vals[i], Kind.of(kinds[i]));
            }
        }
        return vals;
    }

    int arith(int op, String key, long delta, long initial, int ttl, long[] out) {
        byte[] k = key(key);
        long h = nc.acquire();
        try {
            return Native.arith(h, op, k, delta, initial, ttl, out);
        } finally {
            nc.release();
        }
    }

    Map<String, Map<String, String>> serverResults(String group, boolean version) {
        byte[] g = group == null ? null : Utf8.text(group, "statistics group");
        byte[][] flat;
        long h = nc.acquire();
        try {
            flat = Native.stats(h, g, version);
        } finally {
            nc.release();
        }
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        int i = 0;
        while (i < flat.length) {
            String label = Utf8.decode(flat[i]), status = Utf8.decode(flat[i + 1]);
            int count = Integer.parseInt(Utf8.decode(flat[i + 3]));
            i += 4;
            Map<String, String> pairs = new LinkedHashMap<>();
            for (int e = 0; e < count; e++, i += 2) pairs.put(Utf8.decode(flat[i]), Utf8.decode(flat[i + 1]));
            if ("MCPOOL_OK".equals(status)) out.put(label, pairs);
        }
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // Public API

    /** Stores unconditionally (ttl seconds, 0 = never expires). True when stored. */
    public boolean set(String key, Object value, int ttl) {
        return store(tc, Native.OP_SET, key, value, ttl, 0) == Native.OK;
    }

    public boolean set(String key, Object value) {
        return set(key, value, 0);
    }

    /** Stores only if the key is absent; false when it exists. */
    public boolean add(String key, Object value, int ttl) {
        return store(tc, Native.OP_ADD, key, value, ttl, 0) == Native.OK;
    }

    /** Stores only if the key exists; false when it is missing. */
    public boolean replace(String key, Object value, int ttl) {
        return store(tc, Native.OP_REPLACE, key, value, ttl, 0) == Native.OK;
    }

    /** Appends the encoded bytes of value (flags unchanged); false when the key is missing. */
    public boolean append(String key, Object value) {
        return store(tc, Native.OP_APPEND, key, value, 0, 0) == Native.OK;
    }

    public boolean prepend(String key, Object value) {
        return store(tc, Native.OP_PREPEND, key, value, 0, 0) == Native.OK;
    }

    /** Compare-and-swap with a CAS unique from {@link #gets}; false when it changed or is gone. */
    public boolean cas(String key, Object value, int ttl, long casUnique) {
        return store(tc, Native.OP_CAS, key, value, ttl, casUnique) == Native.OK;
    }

    /** The value, or null on a miss. */
    public Object get(String key) {
        return get(tc, key);
    }

    /** The value with its CAS unique, or null on a miss. */
    public MemcachedItem gets(String key) {
        return gets(tc, key);
    }

    /** The hits among keys (one round trip per server), in key order. */
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

    public Map<String, Object> getMulti(String... keys) {
        notNull(keys, "key array");
        return getMulti(Arrays.asList(keys));
    }

    /** Stores raw bytes with the caller's flags: flags the value format can read back (0:
     * its bytes kind; the compression bits are the core's), else MCPOOL_VALUE_FORMAT. */
    public boolean setBytes(String key, byte[] data, int flags, int ttl) {
        return storeRaw(Native.OP_SET, key(key), data, flags, ttl, 0) == Native.OK;
    }

    /** Raw bytes and flags, or null on a miss. */
    public CachedData getBytes(String key) {
        long[] meta = new long[2];
        byte[] b = getRaw(key(key), false, meta);
        return b == null ? null : new CachedData(b, (int) meta[0]);
    }

    /** False when the key did not exist. */
    public boolean delete(String key) {
        byte[] k = key(key);
        long h = nc.acquire();
        try {
            return Native.delete(h, k, k.length) == Native.OK;
        } finally {
            nc.release();
        }
    }

    /** New expiry; false when the key did not exist. */
    public boolean touch(String key, int ttl) {
        byte[] k = key(key);
        long h = nc.acquire();
        try {
            return Native.touch(h, k, ttl) == Native.OK;
        } finally {
            nc.release();
        }
    }

    /** The counter's new value (unsigned 64-bit, wrapping), empty when the key is missing. */
    public OptionalLong incr(String key, long delta) {
        long[] out = new long[1];
        return arith(Native.OP_INCR, key, delta, 0, 0, out) == Native.OK ? OptionalLong.of(out[0]) : OptionalLong.empty();
    }

    public OptionalLong decr(String key, long delta) {
        long[] out = new long[1];
        return arith(Native.OP_DECR, key, delta, 0, 0, out) == Native.OK ? OptionalLong.of(out[0]) : OptionalLong.empty();
    }

    /** Increments, or creates the counter with initial when missing; the new value. */
    public long incrOrInit(String key, long delta, long initial, int ttl) {
        long[] out = new long[1];
        arith(Native.OP_INCR_INIT, key, delta, initial, ttl, out);
        return out[0];
    }

    public long decrOrInit(String key, long delta, long initial, int ttl) {
        long[] out = new long[1];
        arith(Native.OP_DECR_INIT, key, delta, initial, ttl, out);
        return out[0];
    }

    /** Invalidates every item on every server. */
    public void flushAll() {
        long h = nc.acquire();
        try {
            Native.flushAll(h, 0);
        } finally {
            nc.release();
        }
    }

    /** Statistics per server ("host:port" → name → value); group null for the general ones,
     * or "items", "slabs", "settings", ... Servers that failed are left out. Names and values
     * are decoded as UTF-8 (bytes that are not UTF-8 become U+FFFD). */
    public Map<String, Map<String, String>> stats(String group) {
        return serverResults(group, false);
    }

    /** Each answering server's version. */
    public Map<String, String> versions() {
        Map<String, String> out = new LinkedHashMap<>();
        serverResults(null, true).forEach((k, v) -> out.put(k, v.get("version")));
        return out;
    }

    /** The servers, as configured. */
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

    /** Which server (its index in {@link #servers()}) key lives on; no I/O. */
    public int serverIndexFor(String key) {
        byte[] k = key(key);
        long h = nc.acquire();
        try {
            return Native.serverFor(h, k);
        } finally {
            nc.release();
        }
    }

    /** Frees the native client (connections, background threads). Idempotent. */
    @Override
    public void close() {
        nc.close();
    }

    public boolean isClosed() {
        return nc.isClosed();
    }
}
