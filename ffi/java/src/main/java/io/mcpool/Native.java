package io.mcpool;

import java.nio.charset.StandardCharsets;

/**
 * The JNI entry points (src/main/c/mcpool_jni.c), one per C ABI call or small group of calls.
 * Handles are raw pointers as longs; only {@link NativeClient} and {@link Config} hold them.
 * Error statuses are thrown by the C side as {@link McpoolException}s; answers (0..99) are
 * returned as ints.
 *
 * <p>The library is loaded from the system property {@code mcpool.jni.library} (a path) when
 * set, else by name ({@code libmcpool_jni.so} on {@code java.library.path}).
 */
final class Native {
    private Native() {}

    static final int OK = 0, NOT_FOUND = 1, NOT_STORED = 2, EXISTS = 3;

    static final int OP_SET = 0, OP_ADD = 1, OP_REPLACE = 2, OP_APPEND = 3, OP_PREPEND = 4, OP_CAS = 5;
    static final int OP_INCR = 0, OP_DECR = 1, OP_INCR_INIT = 2, OP_DECR_INIT = 3;

    static final int NAME_DISTRIBUTION = 0, NAME_FAILOVER = 1, NAME_COMPRESSION_FORMAT = 2, NAME_PROTOCOL = 3;
    static final int OPT_MIN_IDLE = 0, OPT_MAX_SIZE = 1, OPT_IDLE_TIMEOUT_MS = 2, OPT_MAX_LIFETIME_MS = 3,
        OPT_CONNECT_TIMEOUT_MS = 4, OPT_IO_TIMEOUT_MS = 5, OPT_POOL_TIMEOUT_MS = 6, OPT_NODELAY = 7,
        OPT_TEST_ON_CHECK_OUT = 8, OPT_FAILURE_LIMIT = 9, OPT_RETRY_TIMEOUT_MS = 10,
        OPT_RETRY_TIMEOUT_MAX_MS = 11, OPT_COMPRESSION = 12, OPT_COMPRESSION_THRESHOLD = 13,
        OPT_SANITIZE_KEYS = 14, OPT_MAX_VALUE_SIZE = 15, OPT_MAX_DECOMPRESSED_SIZE = 16;

    static {
        String path = System.getProperty("mcpool.jni.library");
        if (path != null && !path.isEmpty()) {
            System.load(path);
        } else {
            System.loadLibrary("mcpool_jni");
        }
    }

    /** Called by the C side to decode mcpool's UTF-8 error messages. */
    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    // Text crosses JNI as UTF-8 byte[] (Utf8.text / Utf8.decode), never as a jstring: JNI's
    // string functions speak modified UTF-8 (NUL as C0 80, characters outside the BMP as two
    // three-byte surrogates), which is not the UTF-8 the core reads and writes.

    static native String version();
    static native String statusName(int status);

    static native long configNew();
    static native void configFree(long cfg);
    static native void configAddServer(long cfg, byte[] addr, int weight);
    static native void configSetName(long cfg, int which, byte[] value);
    static native void configSetNumber(long cfg, int which, long value);
    static native void configSetRatio(long cfg, double ratio);
    static native void configSetKeyPrefix(long cfg, byte[] prefix);

    static native long clientNew(long cfg);
    static native void clientFree(long client);
    static native int serverCount(long client);
    static native byte[] serverLabel(long client, int index);
    static native int serverFor(long client, byte[] key);

    // The hot calls take the arrays' lengths from Java (one JNI call fewer per array).
    static native int store(long client, int op, byte[] key, int keyLen, byte[] value, int valueLen,
                            int flags, int ttl, long cas);
    /** The value, or null on a miss (never an exception); meta[0] = flags, meta[1] = CAS. */
    static native byte[] get(long client, byte[] key, int keyLen, boolean withCas, long[] meta);
    static native int delete(long client, byte[] key, int keyLen);
    static native int touch(long client, byte[] key, int ttl);
    static native int arith(long client, int op, byte[] key, long delta, long initial, int ttl, long[] out);
    static native int flushAll(long client, int delaySeconds);
    /**
     * Multi-get of the keys packed in {@code keys} (lengths in {@code lens}). A hit of more than
     * 4096 bytes lands in vals[i] as its own byte[]; the smaller ones come back in the returned
     * packed array (null when there are none) at offset spans[i], length spans[n + i]
     * (spans[i] = -1: not there). flags[i], cas[i] for every hit.
     */
    static native byte[] getMulti(long client, byte[] keys, int[] lens, boolean withCas, Object[] vals,
                                  int[] flags, long[] cas, int[] spans);
    /** Per server: label, status name, error message, pair count (decimal), then the pairs;
     * every entry UTF-8. group null: the general statistics. */
    static native byte[][] stats(long client, byte[] group, boolean version);
}
