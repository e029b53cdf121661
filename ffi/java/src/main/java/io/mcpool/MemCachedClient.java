package io.mcpool;

import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Whalin's {@code MemCachedClient} API over a {@link SockIOPool}: the same method names and,
 * through the pool's {@code whalin} value format ({@link SockIOPool#setValueFormat}), the same
 * value layout, so code and cached data move over unchanged (the Java types as
 * {@link WhalinTranscoder} says: each type written with Whalin's marker for it and read back
 * as that type, Integer as Integer, Long as Long, StringBuilder as StringBuilder, ...).
 * Under the pool's {@code spymemcached} format the types are spymemcached's
 * ({@link SpyTranscoder}, as {@link Mcpool} picks it for that format).
 * Cheap to create; thread-safe; any number may share a pool.
 *
 * <p>Differences from Whalin, on purpose:
 * <ul>
 * <li>As in Whalin, a failure of the server or the network (a down server, a refused
 *     connection, a timeout, an error reply: {@link ConnectionException},
 *     {@link TimeoutException}, {@link ServerException}) is answered, not thrown: null from the
 *     reads, false from the stores, {@code delete}, {@code keyExists} and {@code flushAll}, -1
 *     from the counters; {@code getMulti} leaves the keys of a failed server out. So is a
 *     value too large to store (the {@link ClientException} MCPOOL_VALUE_TOO_LARGE: larger
 *     than the pool's {@code max_value_size}, refused before sending, or refused by memcached,
 *     {@code SERVER_ERROR object too large for cache}): the store answers false, as Whalin's
 *     did (a {@code set} refused so deletes the key, by the core's rule: no older value is
 *     left to read). Each such error is counted as {@code suppressed_errors} on the key's
 *     server in {@link #metrics()} ({@code flushAll}'s and the statistics calls' on the
 *     server that failed) and given to the {@link ErrorHandler} ({@link #setErrorHandler})
 *     with the key. {@link Mcpool} is the strict API: it throws
 *     them. A refused TLS certificate or SASL login (MCPOOL_AUTH) is thrown here too
 *     ({@link ConnectionException}): a misconfiguration that no retry fixes, which null/false
 *     would show as an empty cache.</li>
 * <li>The caller's own mistakes are thrown ({@link ClientException}) where Whalin logged them
 *     and returned null/false: a null or invalid key, a null key array or argument (never a
 *     NullPointerException), a key or String value with an unpaired surrogate (it has no UTF-8
 *     form; Whalin sent {@code ?} in its place, so {@code "a\ud800"} and {@code "a?"} were one
 *     key), a value that cannot be encoded, a {@code cas} whose CAS unique is 0 (see
 *     {@link #cas(String, Object, long)}), a pool that is not initialized. A value too large
 *     is not one of them (false, above).</li>
 * <li>Java serialization is off until {@link #setSerializationEnabled(boolean)}: storing an
 *     object of another type is a {@link ClientException}; reading a value flagged serialized
 *     (8) is the {@link ServerException} MCPOOL_VALUE_FORMAT naming the key and its flags
 *     that {@link Mcpool} gives for it (from {@code getMulti} in an
 *     {@link UnreadableValuesException}), never a null. A value is never deserialized unless
 *     its flags say so.</li>
 * <li>A value whose flags mean nothing in the value format, or of a kind Java cannot read,
 *     is a {@link ServerException} MCPOOL_VALUE_FORMAT naming the key and the flags, never
 *     its bytes ({@link #getBytes}, not in Whalin, hands out its bytes as stored;
 *     {@link #getCounter} answers -1 for it, no counter).</li>
 * <li>Strings are UTF-8 only: {@link #setDefaultEncoding} refuses any other encoding, and a
 *     String value whose bytes are not UTF-8 reads as an {@link McpoolException}
 *     (MCPOOL_VALUE_FORMAT) naming the key, where Whalin decoded it with its default
 *     encoding.</li>
 * <li>A counter above {@code Long.MAX_VALUE} (memcached's go to 2^64-1) is a
 *     {@link ClientException} MCPOOL_OUT_OF_RANGE with its exact value from the counters and
 *     {@link #getCounter} (Whalin threw NumberFormatException from incr and returned -1 from
 *     getCounter, the same as for a missing key).</li>
 * <li>An empty value ({@code ""}, {@code new byte[0]}) reads back as that empty value, and a
 *     value with flags 0 (a counter from {@link #storeCounter} or {@link #addOrIncr}, or
 *     another client's bytes) as its bytes; Whalin's {@code get} answered null for both
 *     (while its {@code keyExists} said true). A key that exists is never a null that looks
 *     like a miss. So is a value Whalin 1.x wrote (flags 0, a type byte before the body: the
 *     String "hello" is {@code {6, 'h', 'e', 'l', 'l', 'o'}}): it is not decoded, since flags 0
 *     are bytes and its type byte cannot be told from a byte array's first byte (README.md,
 *     "Leaving Whalin's client").</li>
 * <li>The {@link ErrorHandler} is told of every error answered with null/false/-1, error
 *     replies included (Whalin's only logged those), and never of a thrown one; what it
 *     throws is caught and counted ({@link #errorHandlerErrors()}). Whalin's log lines have
 *     no counterpart: the pool's {@link SockIOPool#setOperationListener} sees every exchange
 *     with a server, {@link SockIOPool#setServerEventListener} each server marked dead or
 *     answering again.</li>
 * <li>The {@code hashCode} overloads are absent: placement is always by key. So is
 *     {@code statsCacheDump}: memcached's {@code stats cachedump} answers with ITEM lines,
 *     not statistics, and is a debugging command (capped, deprecated for
 *     {@code lru_crawler metadump}); the statistics calls take no such group.</li>
 * </ul>
 * Expiry {@link Date}s are sent as Whalin sent them: {@code getTime() / 1000} seconds (so
 * {@code new Date(60_000)} means one minute from now, a real date an absolute time), except
 * that one under a second ({@code new Date(500)}) is one second, not Whalin's 0 (never
 * expires), and by the core's rule for a store's time: a Date before the epoch stores the
 * item already expired, as memcached reads a negative expiry (Whalin sent it so, and memcached
 * dropped the item); one after 2038-01-19T03:14:07Z (more than {@link Mcpool#MAX_TTL}
 * seconds, which memcached would read as a negative expiry) is not sent: the store answers
 * false, as Whalin answered a store that did not happen (the core's refusal,
 * MCPOOL_INVALID_ARGUMENT, counted and given to the {@link ErrorHandler} as the errors
 * above), and a {@code set} deletes the key, as the core does for a set it refuses so
 * (Whalin's set was stored already expired: no older value is left to read); {@code add},
 * {@code replace} and {@code cas} leave it.
 */
public class MemCachedClient {
    /** Whalin's default compression threshold: values longer than this are gzipped. */
    public static final long DEFAULT_COMPRESS_THRESHOLD = 30720;

    private final SockIOPool pool;
    private volatile boolean sanitizeKeys = true;
    private volatile boolean primitiveAsString = false;
    private volatile boolean compressEnable = true;
    private volatile long compressThreshold = DEFAULT_COMPRESS_THRESHOLD;
    private volatile boolean serializationEnabled = false;
    private volatile ClassLoader classLoader;
    private volatile Transcoder transcoder; // null: the pool's format's default, with the settings above
    private volatile Transcoder effective = new DefaultTranscoder(false, false, null);
    private volatile Mcpool client;
    private volatile ErrorHandler errorHandler;
    private final AtomicLong errorHandlerErrors = new AtomicLong();

    /** A client of the pool called "default". */
    public MemCachedClient() {
        this("default");
    }

    /** A client of the pool of this name ({@link SockIOPool#getInstance(String)}), which must
     * be initialized before the first call. */
    public MemCachedClient(String poolName) {
        this.pool = SockIOPool.getInstance(poolName);
    }

    /** A client of the pool called "default" whose deserialized objects' classes are resolved
     * through this loader ({@link #setClassLoader}). */
    public MemCachedClient(ClassLoader classLoader) {
        this();
        setClassLoader(classLoader);
    }

    /** A client of the pool called "default" with this class loader (as
     * {@link #MemCachedClient(ClassLoader)}; null: none) and {@link ErrorHandler} (null: none),
     * as Whalin's. */
    public MemCachedClient(ClassLoader classLoader, ErrorHandler errorHandler) {
        this(classLoader, errorHandler, "default");
    }

    /** A client of the pool of this name with this class loader and {@link ErrorHandler}
     * (each null: none), as Whalin's. */
    public MemCachedClient(ClassLoader classLoader, ErrorHandler errorHandler, String poolName) {
        this(poolName);
        setClassLoader(classLoader);
        this.errorHandler = errorHandler;
    }

    // ------------------------------------------------------------------------------ settings

    /** URL-encode keys (Whalin's default: true). */
    public void setSanitizeKeys(boolean on) { sanitizeKeys = on; client = null; }
    /** The setting of {@link #setSanitizeKeys} (default true). */
    public boolean getSanitizeKeys() { return sanitizeKeys; }

    /** Whalin's {@code setPrimitiveAsString} (default false): store natively handled values
     * other than byte[] (String, StringBuilder, StringBuffer, Boolean, Character, Date and
     * any Number: the integer types, Float, Double) as their {@code toString()}
     * text, under the pool's {@code whalin} format with MARKER_STRING (flags 32), and read
     * every value of a kind that is neither serialized nor byte[] as a String (an integer as
     * its decimal text, a Boolean another client wrote as "1"/"0"). A byte[] is stored and
     * read back as its bytes (MARKER_BYTEARR, 4096). Flags of no kind are still a
     * {@link ServerException} MCPOOL_VALUE_FORMAT naming the key and flags, among them
     * Whalin's Double, Float, Character and Date markers (512, 128, 16, 1024), whose binary
     * bodies Whalin's primitiveAsString read as text (garbage).
     *
     * <p>Whalin differs, and its own clients do not agree: 2.0 stored the text with flags 0,
     * which its clients without primitiveAsString read as null and 2.6's try to deserialize;
     * 2.6 stored it under each type's marker, which its clients without primitiveAsString
     * decode as that type's binary form (the text "123" under MARKER_INTEGER is no Integer 123);
     * both stored a byte[] as the text of {@code byte[].toString()} and read one back as a
     * String decoded from its bytes. MARKER_STRING is the flags every Whalin client reads as
     * that String; memcached's incr/decr work on the text whatever its flags. */
    public void setPrimitiveAsString(boolean on) { primitiveAsString = on; refreshTranscoder(); }
    /** The setting of {@link #setPrimitiveAsString} (default false). */
    public boolean getPrimitiveAsString() { return primitiveAsString; }

    /** Gzip values longer than the threshold, flag 2 (default true). */
    public void setCompressEnable(boolean on) { compressEnable = on; }
    /** The setting of {@link #setCompressEnable} (default true). */
    public boolean getCompressEnable() { return compressEnable; }

    /** Default 30720 bytes: values longer than this are compressed (the core compares, with
     * the {@code whalin} preset's {@code compression_compare=above}). */
    public void setCompressThreshold(long bytes) { compressThreshold = bytes; }
    /** The threshold of {@link #setCompressThreshold}, in bytes (default 30720). */
    public long getCompressThreshold() { return compressThreshold; }

    /** Not in Whalin (which always serialized): allow storing and reading serialized Java
     * objects (flag 8). Off by default: storing one is a {@link ClientException}, reading one
     * a {@link ServerException} MCPOOL_VALUE_FORMAT naming the key; only values flagged
     * serialized are deserialized. */
    public void setSerializationEnabled(boolean on) { serializationEnabled = on; refreshTranscoder(); }

    /** The class loader that resolves the classes of deserialized objects, tried before
     * {@code ObjectInputStream}'s own resolution (null: that resolution alone), as Whalin's. */
    public void setClassLoader(ClassLoader loader) { classLoader = loader; refreshTranscoder(); }

    /** The {@link ErrorHandler} told of each error this client answers with null, false or -1
     * (null, the default: none), as Whalin's. */
    public void setErrorHandler(ErrorHandler handler) { errorHandler = handler; }

    /** How many times the {@link ErrorHandler} threw (caught: the call answered as without
     * it); 0 without one. */
    public long errorHandlerErrors() { return errorHandlerErrors.get(); }

    /** Not in Whalin: another mapping of Java types to kinds; null returns to the default,
     * the one {@link Mcpool.Builder#build()} picks for the pool's value format
     * ({@link SockIOPool#setValueFormat}): a {@link WhalinTranscoder} with this client's
     * settings, or under {@code spymemcached} (without primitiveAsString) a
     * {@link SpyTranscoder}, so each Java type is written as spymemcached writes it. */
    public void setTranscoder(Transcoder tc) { transcoder = tc; refreshTranscoder(); }

    /** Whalin's charset of String values (its default, UTF-8, is the only one taken: any of
     * its names, {@code "UTF-8"}, {@code "utf8"}). mcpool's core writes and reads text as
     * UTF-8 in every value format, so another encoding, or a name Java does not know, is a
     * {@link ConfigurationException} (MCPOOL_UNSUPPORTED) here: a String that a Whalin client
     * wrote in another encoding and that is not valid UTF-8 reads as an error naming the key
     * (MCPOOL_VALUE_FORMAT, the value is kept), never as different text; its bytes are
     * {@link #getBytes} (which hands out a value the format cannot read as stored), for
     * {@code new String(data, charset)}. (Before
     * 2026-12-04 every name was accepted and ignored.) */
    public void setDefaultEncoding(String encoding) {
        Mcpool.notNull(encoding, "encoding");
        boolean utf8;
        try {
            utf8 = java.nio.charset.Charset.forName(encoding).equals(StandardCharsets.UTF_8);
        } catch (IllegalArgumentException unknownOrIllegalName) {
            utf8 = false;
        }
        if (!utf8) {
            throw new ConfigurationException(105, "MCPOOL_UNSUPPORTED", "setDefaultEncoding(\"" + encoding
                + "\"): mcpool writes and reads String values as UTF-8 only (Whalin's default encoding)");
        }
    }

    private void refreshTranscoder() {
        Transcoder t = transcoder;
        // Without one given, the transcoder Mcpool.Builder picks for the pool's value format
        // (resolved per call by the pool's client: DefaultTranscoder), so both APIs write a
        // type alike under one format (tester finding java2 2)
        effective = t != null ? t : new DefaultTranscoder(primitiveAsString, serializationEnabled, classLoader);
    }

    private Mcpool mc() {
        Mcpool c = client;
        if (c == null || c.isClosed()) {
            if (!pool.isInitialized()) {
                throw new ConfigurationException(103, "MCPOOL_CONFIG", "pool " + pool.getName() + " is not initialized");
            }
            c = pool.client(sanitizeKeys);
            client = c;
        }
        return c;
    }

    /**
     * Whalin's answer to a failure of the server or the network: the failure value (null,
     * false, -1), as {@link #answer}. The caller's own errors (a null or invalid key, a value
     * the transcoder refuses) are still thrown, and so is a value that exists but cannot be
     * read (never a null that looks like a miss).
     */
    private <T> T suppress(Mcpool c, int on, String key, McpoolException e, T failed) {
        if (!Mcpool.serverSide(e)) throw e;
        return answer(c, on, key, e, failed);
    }

    /** The failure value for e: counted as {@code suppressed_errors} on the key's server in
     * {@link #metrics()}, given to the ErrorHandler's method {@code on} (ON_GET, ON_SET,
     * ON_DELETE) with the key. */
    private <T> T answer(Mcpool c, int on, String key, McpoolException e, T failed) {
        c.suppressed(Mcpool.key(key));
        handle(h -> {
            if (on == ON_GET) h.handleErrorOnGet(this, e, key);
            else if (on == ON_SET) h.handleErrorOnSet(this, e, key);
            else h.handleErrorOnDelete(this, e, key);
        });
        return failed;
    }

    private static final int ON_GET = 0, ON_SET = 1, ON_DELETE = 2;

    /** A server's failure of a whole-server call ({@code flushAll}, the statistics), answered
     * false or left out: counted as {@code suppressed_errors} on that server (its label, as
     * {@link #metrics()} lists it), given to the ErrorHandler by {@code call}. */
    private void serverFailed(Mcpool c, String server, java.util.function.Consumer<ErrorHandler> call) {
        c.suppressed(server);
        handle(call);
    }

    /** Calls the ErrorHandler, if any; what it throws is counted, never seen by the call. */
    private void handle(java.util.function.Consumer<ErrorHandler> call) {
        ErrorHandler h = errorHandler;
        if (h == null) return;
        try {
            call.accept(h);
        } catch (Throwable t) {
            errorHandlerErrors.incrementAndGet();
        }
    }

    /** A store's failure: Whalin's false for a failure of the server or the network, and for
     * a value too large (the pool's max_value_size, or memcached's SERVER_ERROR object too
     * large: both MCPOOL_VALUE_TOO_LARGE), where Whalin logged the reply; else thrown. */
    private boolean storeFailed(Mcpool c, String key, McpoolException e) {
        if (e.status() == STATUS_VALUE_TOO_LARGE) return answer(c, ON_SET, key, e, false);
        return suppress(c, ON_SET, key, e, false);
    }

    /** MCPOOL_VALUE_TOO_LARGE (include/mcpool.h). */
    private static final int STATUS_VALUE_TOO_LARGE = 102;

    /** The pool's metrics snapshot ({@link Mcpool#metrics()}), with the server errors this
     * API answered with null/false/-1 as {@code suppressed_errors}. */
    public Map<String, Map<String, Long>> metrics() { return mc().metrics(); }

    /** Every server's health, without I/O ({@link Mcpool#serverStates()}). */
    public java.util.List<ServerState> serverStates() { return mc().serverStates(); }

    /** An expiry's seconds as Whalin sent them ({@code getTime() / 1000}, but 1 for a positive
     * Date under a second; 0 for null), and for a Date before the epoch a negative number
     * (the whole seconds below it: -1 for {@code new Date(-1)}, where {@code / 1000} would
     * make 0, never expiring). The core decides what a store does with it
     * ({@code Native.storeExpiry}): negative is stored already expired, above
     * {@link Mcpool#MAX_TTL} (after 2038-01-19T03:14:07Z) refused. */
    static long ttl(Date expiry) {
        if (expiry == null) return 0;
        long ms = expiry.getTime();
        if (ms < 0) return Math.floorDiv(ms, 1000);
        // Under a second is one second, as the core's rule for fractions has it on every
        // surface: Whalin's 0 would be "never expires" (tester finding expiry 7).
        return ms > 0 && ms < 1000 ? 1 : ms / 1000;
    }

    // ------------------------------------------------------------------------------ stores

    /** Stores unconditionally; true when stored. */
    public boolean set(String key, Object value) { return set(key, value, null); }
    /** {@link #set(String, Object)} with an expiry, sent as Whalin sent it (see the class
     * comment: {@code getTime() / 1000} seconds, so a Date within 30 days of the epoch is that
     * long from now and a real date an absolute time; null: never expires). */
    public boolean set(String key, Object value, Date expiry) {
        return store(Native.OP_SET, key, value, expiry, 0);
    }

    /** Stores only if the key is absent; false when it exists. */
    public boolean add(String key, Object value) { return add(key, value, null); }
    /** {@link #add(String, Object)} expiring at {@code expiry}, as {@link #set(String, Object, Date)}. */
    public boolean add(String key, Object value, Date expiry) {
        return store(Native.OP_ADD, key, value, expiry, 0);
    }

    /** Stores only if the key exists; false when it is missing. */
    public boolean replace(String key, Object value) { return replace(key, value, null); }
    /** {@link #replace(String, Object)} expiring at {@code expiry}, as {@link #set(String, Object, Date)}. */
    public boolean replace(String key, Object value, Date expiry) {
        return store(Native.OP_REPLACE, key, value, expiry, 0);
    }

    /** Appends the value's encoded bytes (the stored flags stay); false when missing. Only
     * byte[] and text: an integer, Boolean or serialized object is a {@link ClientException}
     * (MCPOOL_INVALID_ARGUMENT), where Whalin wrote its bytes after the stored ones (a
     * 4-byte Integer followed by another: a value no reader understands). */
    public boolean append(String key, Object value) {
        return store(Native.OP_APPEND, key, value, null, 0);
    }

    /** As {@link #append}, the bytes put before the stored ones. */
    public boolean prepend(String key, Object value) {
        return store(Native.OP_PREPEND, key, value, null, 0);
    }

    /** Stores only if the CAS unique (from {@link #gets}) still matches. A {@code casUnique}
     * of 0 (what {@link #gets} reads from a memcached run with {@code -C}, CAS off) is a
     * caller's error, thrown as {@link ClientException} MCPOOL_INVALID_ARGUMENT with nothing
     * sent, never answered: Whalin's text client answered false (memcached's ERROR, a second
     * ERROR left for the connection's next call), on which a retry loop never ends, and its
     * binary client stored unconditionally and answered true. As Whalin's, every other
     * failure answers {@code false}, including a timeout after the request was sent, which
     * may still have stored the value: {@code false} does not tell "changed since gets" from
     * "unknown" (tester finding retest34 3). A retry loop that must not apply its update
     * twice uses {@link Mcpool#casResult} of an {@link Mcpool} client of the same servers,
     * which throws for a timeout and names each answer. */
    public boolean cas(String key, Object value, long casUnique) { return cas(key, value, null, casUnique); }
    /** {@link #cas(String, Object, long)} expiring at {@code expiry}, as {@link #set(String, Object, Date)}. */
    public boolean cas(String key, Object value, Date expiry, long casUnique) {
        return store(Native.OP_CAS, key, value, expiry, casUnique);
    }

    /** A store expiring at {@code expiry} (null: never). The Date's seconds ({@code ttl(Date)})
     * go through the core's rule for a store's time first ({@code Native.storeExpiry}): before
     * the epoch the item is stored already expired, as memcached reads a negative expiry
     * (Whalin sent it and memcached dropped the item); after 2038-01-19T03:14:07Z nothing is
     * sent and the store answers false, Whalin's answer to a store that did not happen, a
     * set's key deleted as the core deletes it for a set refused so (Whalin's set stored the
     * item already expired: no older value left to read); add, replace and cas leave it. */
    private boolean store(int op, String key, Object value, Date expiry, long cas) {
        Mcpool c = mc();
        int ttl = 0;
        if (expiry != null) {
            byte[] k = Mcpool.key(key); // a null key, or one with no UTF-8 form, is still thrown
            long h = c.nc.acquireCommand();
            try {
                ttl = Native.storeExpiry(h, op, k, k.length, ttl(expiry));
            } catch (McpoolException e) {
                // the core's refusal of the time (its message names it; a set's key deleted)
                if (e.status() == STATUS_INVALID_ARGUMENT) return answer(c, ON_SET, key, e, false);
                return suppress(c, ON_SET, key, e, false);
            } finally {
                c.nc.release();
            }
        }
        try {
            // This client's compression settings, decided per call by the core (one native
            // client per pool whatever the settings).
            return (compressEnable
                ? c.store(effective, op, key, value, ttl, cas, Native.COMPRESS_THRESHOLD, Math.max(0, compressThreshold))
                : c.store(effective, op, key, value, ttl, cas, Native.COMPRESS_NEVER, 0)) == Native.OK;
        } catch (McpoolException e) {
            return storeFailed(c, key, e);
        }
    }

    /** MCPOOL_INVALID_ARGUMENT (include/mcpool.h): the core's refusal of a store's time. */
    private static final int STATUS_INVALID_ARGUMENT = 100;

    // ------------------------------------------------------------------------------ reads

    /** The value, or null on a miss. */
    public Object get(String key) {
        Mcpool c = mc();
        try {
            return c.get(effective, key);
        } catch (McpoolException e) {
            return suppress(c, ON_GET, key, e, null);
        }
    }

    /** The value and its CAS unique, or null on a miss. */
    public MemcachedItem gets(String key) {
        Mcpool c = mc();
        try {
            return c.gets(effective, key);
        } catch (McpoolException e) {
            return suppress(c, ON_GET, key, e, null);
        }
    }

    /** Hits only, keyed by the caller's keys (one round trip per server). A value that
     * exists but cannot be read does not cost the others: an {@link UnreadableValuesException}
     * carrying the other hits ({@code hits()}) and each unreadable key's error
     * ({@code errors()}) is thrown once every key was read. */
    public Map<String, Object> getMulti(String[] keys) {
        return Mcpool.hits(keys, getMultiArray(keys));
    }

    /** Values in key order, null for misses. */
    public Object[] getMultiArray(String[] keys) {
        if (keys == null) throw ClientException.invalidArgument("null key array");
        Mcpool c = mc();
        try {
            return c.getMultiArray(effective, keys, true, errorHandler == null ? null
                : (key, e) -> handle(h -> h.handleErrorOnGet(this, e, key)));
        } catch (McpoolException e) {
            if (!Mcpool.serverSide(e)) throw e;
            for (String k : keys) c.suppressed(Mcpool.key(k)); // each key's answer a miss, as below
            handle(h -> h.handleErrorOnGet(this, e, keys));
            return new Object[keys.length]; // the whole call failed: every key a miss
        }
    }

    /** True when the key exists (its value is not decoded: a value no read can deliver,
     * e.g. with flags that mean nothing in the value format, exists too). */
    public boolean keyExists(String key) {
        Mcpool c = mc();
        try {
            return c.getRaw(Mcpool.key(key), false, null) != null;
        } catch (McpoolException e) {
            if (Mcpool.unreadableValue(e)) return true; // read, but not deliverable: it exists
            return suppress(c, ON_GET, key, e, false);
        }
    }

    /** Not in Whalin: the value's bytes and flags, whatever the flags, or null on a miss;
     * never decoded into a Java object ({@link Mcpool#getBytes}'s contract). A value the
     * value format reads comes in its kind's form (inflated, an integer as decimal text, a
     * boolean as "1"/"0", the flags without the compression bits); one it cannot deliver,
     * which {@link #get} throws for (flags that mean nothing in the format, such as Whalin's
     * Character, Float, Double and Date markers, 16, 128, 512, 1024; a body those flags
     * cannot hold; a compressed body that does not inflate), comes as memcached holds it,
     * {@link CachedData#asStored} true: its flags as stored, compression bits included, and
     * its body not inflated. A serialized object (flags 8), which {@link #get} throws for
     * while serialization is off ({@link #setSerializationEnabled}), is a kind of the format:
     * its serialized bytes (inflated) and flags 8, asStored false. A failure of the
     * server or the network is null, as for {@link #get}, counted and given to the
     * {@link ErrorHandler}'s {@code handleErrorOnGet} with the key. */
    public CachedData getBytes(String key) {
        Mcpool c = mc();
        try {
            return c.getBytes(key);
        } catch (McpoolException e) {
            return suppress(c, ON_GET, key, e, null);
        }
    }

    // ------------------------------------------------------------------------------ delete

    /** False when the key did not exist. */
    public boolean delete(String key) {
        Mcpool c = mc();
        byte[] k = Mcpool.key(key);
        long h = c.nc.acquireCommand();
        try {
            return Native.delete(h, k, k.length) == Native.OK;
        } catch (McpoolException e) {
            return suppress(c, ON_DELETE, key, e, false);
        } finally {
            c.nc.release();
        }
    }

    /** The expiry is ignored (memcached 1.4+ removed delayed deletes). */
    public boolean delete(String key, Date expiry) { return delete(key); }

    // ------------------------------------------------------------------------------ counters

    /**
     * The new value, or -1 when the key is missing, as Whalin. Also -1, as Whalin answered
     * the server's error reply, for a value that is not an unsigned decimal number (text, a
     * counter stored as "-5") and for a negative delta (Whalin sent it and memcached refused
     * it; here nothing is sent, and the counter is never changed the other way), each
     * counted and given to the {@link ErrorHandler} as a failure of the server is. A new value
     * above {@code Long.MAX_VALUE} is a {@link ClientException} MCPOOL_OUT_OF_RANGE with the
     * exact value in its message (Whalin threw NumberFormatException), never a negative.
     */
    public long incr(String key) { return incr(key, 1); }
    /** Adds inc: the new value, or -1 as {@link #incr(String)}. */
    public long incr(String key, long inc) { return arith(Native.OP_INCR, key, inc); }
    /** Subtracts 1 (memcached stops at 0): the new value, or -1 as {@link #incr(String)}. */
    public long decr(String key) { return decr(key, 1); }
    /** Subtracts inc (memcached stops at 0): the new value, or -1 as {@link #incr(String)}. */
    public long decr(String key, long inc) { return arith(Native.OP_DECR, key, inc); }

    private long arith(int op, String key, long delta) {
        long[] out = new long[1];
        return arith(op, key, delta, 0, out) ? out[0] : -1;
    }

    /** True when the counter was found (or made); false when missing, not a number, its
     * server failed, or delta/initial is negative (Whalin's -1 for each). */
    private boolean arith(int op, String key, long delta, long initial, long[] out) {
        Mcpool c = mc();
        Mcpool.key(key); // a null key, or one with no UTF-8 form, is still thrown
        try {
            return c.arith(op, key, delta, initial, 0, out) == Native.OK;
        } catch (McpoolException e) {
            // a negative delta or initial value, refused before sending (memcached refused it
            // when Whalin sent it), or the server's CLIENT_ERROR (not a number): Whalin's -1
            boolean refused = delta < 0 || initial < 0 || e.status() == STATUS_CLIENT_ERROR;
            return refused ? answer(c, ON_GET, key, e, false) : suppress(c, ON_GET, key, e, false);
        }
    }

    /** MCPOOL_CLIENT_ERROR (include/mcpool.h): the server's CLIENT_ERROR reply. */
    private static final int STATUS_CLIENT_ERROR = 206;

    /** Increments, or creates the counter with inc when missing (as Whalin); the new value,
     * or -1 as {@link #incr}. */
    public long addOrIncr(String key) { return addOrIncr(key, 0); }
    /** Adds inc, or creates the counter with inc when missing (as Whalin); the new value, or
     * -1 as {@link #incr(String)}. */
    public long addOrIncr(String key, long inc) {
        long[] out = new long[1];
        return arith(Native.OP_INCR_INIT, key, inc, inc, out) ? out[0] : -1;
    }

    /** Decrements, or creates the counter with inc when missing (as Whalin); the new value. */
    public long addOrDecr(String key) { return addOrDecr(key, 0); }
    /** Subtracts inc, or creates the counter with inc when missing (as Whalin); the new value,
     * or -1 as {@link #incr(String)}. */
    public long addOrDecr(String key, long inc) {
        long[] out = new long[1];
        return arith(Native.OP_DECR_INIT, key, inc, inc, out) ? out[0] : -1;
    }

    /** Stores a counter as decimal text with flags 0, for incr/decr, in every value format
     * (the core's counter form; it used to go through the format's bytes flags, Whalin's
     * 4096). memcached's counters are unsigned 64-bit: a negative one is the caller's mistake,
     * a {@link ClientException} MCPOOL_INVALID_ARGUMENT as for a bad key, nothing stored
     * (Whalin stored its text, a counter no incr takes: incr then answered -1). */
    public boolean storeCounter(String key, long counter) {
        byte[] k = Mcpool.key(key);
        Mcpool c = mc();
        try {
            return c.storeCounter(k, counter, 0) == Native.OK;
        } catch (McpoolException e) {
            return storeFailed(c, key, e);
        }
    }

    /** {@link #storeCounter(String, long)} of a Long (null: a {@link ClientException}). */
    public boolean storeCounter(String key, Long counter) {
        Mcpool.notNull(counter, "counter");
        return storeCounter(key, counter.longValue());
    }

    /** The counter's value, or -1 when missing or not a counter (as Whalin). A counter is
     * memcached's unsigned decimal text, what {@link #incr} takes, whatever its flags; not one:
     * other text (a {@code "-5"}, a decimal beyond 2^64-1), a number stored in binary (an
     * Integer, Long, Short or Boolean under Whalin's markers, which {@link #incr} refuses
     * too), a value whose flags mean nothing in the value format or that does not inflate
     * (which {@link #get} throws: read, not decoded, here). Each is counted and given to the
     * {@link ErrorHandler}'s {@code handleErrorOnGet} with the key, as {@link #incr}'s
     * answer for a value that is not a number is, with the {@link ClientException}
     * MCPOOL_CLIENT_ERROR that {@link Mcpool#incr} throws for it (its message names the key
     * and why, never the bytes; the cause, for a value {@link #get} throws for, that
     * exception), as are a failure of the server or the network. A miss is no error, as for
     * {@link #incr} (Whalin's getCounter told its handler of a miss too: a
     * NumberFormatException from {@code parseLong(null)}). A counter above
     * {@code Long.MAX_VALUE} (memcached's are unsigned 64-bit, up to 2^64-1) is a
     * {@link ClientException} MCPOOL_OUT_OF_RANGE with the exact value in its message, as
     * {@link #incr} answers for it, never a negative and never -1 (Whalin returns -1 there,
     * the same as for a missing key). */
    public long getCounter(String key) {
        Mcpool c = mc();
        byte[] b;
        long[] meta = new long[4];
        try {
            b = c.getRaw(Mcpool.key(key), false, meta);
        } catch (McpoolException e) {
            // read, but no value of the format (flags that mean nothing in it, a body that
            // does not inflate): no counter either (Whalin's getCounter: a ClassCastException
            // or null, its handler told)
            if (Mcpool.unreadableValue(e)) return notACounter(c, key, "its value cannot be read (" + e.getMessage() + ")", e);
            return suppress(c, ON_GET, key, e, -1L);
        }
        if (b == null) return -1; // a miss
        // A binary Integer, Long, Short or Boolean (Whalin's markers) arrives as its decimal
        // text, but memcached holds 4 or 8 bytes that incr refuses and Whalin's getCounter
        // could not parse: no counter (the core says which bodies are verbatim).
        if (meta[3] != 1) {
            return notACounter(c, key, "its value is a number stored in binary (flags "
                + Integer.toUnsignedString((int) meta[0]) + "), which incr refuses", null);
        }
        long u;
        try {
            // (incr leaves spaces after a number that got shorter: "9 " after decr of "10")
            u = Long.parseUnsignedLong(new String(b, StandardCharsets.US_ASCII).trim());
        } catch (NumberFormatException notACounter) {
            return notACounter(c, key, b.length == 0 ? "its value is empty"
                : "its value (" + b.length + " bytes) is not an unsigned decimal number of at most 2^64-1", null);
        }
        if (u < 0) {
            throw ClientException.outOfRange("the counter " + key + " is " + Long.toUnsignedString(u)
                + ", above Long.MAX_VALUE (memcached's counters are unsigned 64-bit)");
        }
        return u;
    }

    /** getCounter's -1 for a value that is no counter: the MCPOOL_CLIENT_ERROR that
     * {@link Mcpool#incr} throws for it, counted and given to the ErrorHandler as incr's. */
    private long notACounter(Mcpool c, String key, String why, McpoolException cause) {
        ClientException e = new ClientException(STATUS_CLIENT_ERROR, "MCPOOL_CLIENT_ERROR",
            "getCounter of \"" + key + "\": not a counter (memcached's unsigned decimal text, what incr takes): " + why,
            cause);
        return answer(c, ON_GET, key, e, -1L);
    }

    // ------------------------------------------------------------------------------ servers

    /** Invalidates every item on every server; true when all of them answered, false when
     * one failed (down, a timeout, an error reply such as memcached -F's
     * {@code CLIENT_ERROR flush_all not allowed}): every other server is still flushed. */
    public boolean flushAll() {
        Mcpool c = mc();
        boolean all = true;
        for (Map.Entry<String, McpoolException> each : c.flushAllEach(0).entrySet()) { // every server tried
            McpoolException e = each.getValue();
            if (e == null) continue;
            if (!flushFailed(e)) throw e;
            serverFailed(c, each.getKey(), h -> h.handleErrorOnFlush(this, e));
            all = false;
        }
        return all;
    }

    /** Invalidates every item on the given servers only ({@code host:port} as the pool lists
     * them; null: every server, as {@link #flushAll()}); true when each of them answered,
     * false when one failed or is not in the pool (the others are still flushed), as Whalin.
     * An error that is not the server's (a refused SASL login, ...) is thrown, but only once
     * every other listed server was flushed. */
    public boolean flushAll(String[] servers) {
        if (servers == null) return flushAll();
        Mcpool c = mc();
        java.util.List<String> list = c.servers();
        boolean all = true;
        McpoolException thrown = null;
        for (String s : servers) {
            int index = s == null ? -1 : list.indexOf(s);
            if (index < 0) {
                all = false;
                handle(h -> h.handleErrorOnFlush(this, ClientException.invalidArgument("flushAll: " + s
                    + " is not a server of pool " + pool.getName())));
                continue;
            }
            long h = c.nc.acquire();
            try {
                all &= Native.flushServer(h, index, 0) == Native.OK;
            } catch (McpoolException e) {
                all = false;
                if (flushFailed(e)) serverFailed(c, s, eh -> eh.handleErrorOnFlush(this, e));
                else if (thrown == null) thrown = e;
            } finally {
                c.nc.release();
            }
        }
        if (thrown != null) throw thrown;
        return all;
    }

    /** A server's failure to flush, Whalin's false: what {@link Mcpool#serverSide} says, and
     * the server's error reply of any kind. A {@code CLIENT_ERROR} to a flush is a refusal of
     * the command (memcached -F: {@code CLIENT_ERROR flush_all not allowed}; the binary
     * protocol's status 0x20), never the caller's mistake: flush_all takes no key or value. */
    private static boolean flushFailed(McpoolException e) {
        return Mcpool.serverSide(e) || e.status() == STATUS_CLIENT_ERROR;
    }

    /** General statistics per server ("host:port" → name → value). */
    public Map<String, Map<String, String>> stats() { return stats(null); }
    /** General statistics of these servers ({@code host:port} as the pool lists them; null:
     * every server); a server that failed is left out, as Whalin's. */
    public Map<String, Map<String, String>> stats(String[] servers) { return statsGroup(null, servers); }
    /** {@code stats items} per server (item counts and ages per slab class). */
    public Map<String, Map<String, String>> statsItems() { return statsItems(null); }
    /** {@code stats items} of these servers, as {@link #stats(String[])}. */
    public Map<String, Map<String, String>> statsItems(String[] servers) { return statsGroup("items", servers); }
    /** {@code stats slabs} per server (memory per slab class). */
    public Map<String, Map<String, String>> statsSlabs() { return statsSlabs(null); }
    /** {@code stats slabs} of these servers, as {@link #stats(String[])}. */
    public Map<String, Map<String, String>> statsSlabs(String[] servers) { return statsGroup("slabs", servers); }

    private Map<String, Map<String, String>> statsGroup(String group, String[] servers) {
        Set<String> want = servers == null ? null : new HashSet<>(java.util.Arrays.asList(servers));
        Mcpool c = mc();
        // a server left out for its failure is counted and goes to the ErrorHandler, if it
        // was asked for
        Map<String, Map<String, String>> all = c.serverResults(group, Native.STATS, false, false, (server, e) -> {
            if (want == null || want.contains(server)) serverFailed(c, server, h -> h.handleErrorOnStats(this, e));
        });
        if (want != null) all.keySet().retainAll(want);
        return all;
    }
}
