package io.mcpool;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JNI entry points (src/main/c/mcpool_jni.c), one per C ABI call or small group of calls.
 * Handles are raw pointers as longs; only {@link NativeClient} and {@link Config} hold them.
 * Error statuses are thrown by the C side as {@link McpoolException}s; answers (0..99) are
 * returned as ints.
 *
 * <p>The library is loaded, in this order: from the system property {@code mcpool.jni.library}
 * (a path) when set; else from the jar, {@code /native/<os>-<arch>/libmcpool_jni.so} (e.g.
 * {@code linux-x86_64}), copied to a private temporary file first; else by name
 * ({@code libmcpool_jni.so} on {@code java.library.path}).
 */
final class Native {
    private Native() {}

    static final int OK = 0, NOT_FOUND = 1, NOT_STORED = 2, EXISTS = 3;
    /** MCPOOL_CLOSED: the status of a call on a closed client, native or refused here. */
    static final int CLOSED = 108;

    static final int OP_SET = 0, OP_ADD = 1, OP_REPLACE = 2, OP_APPEND = 3, OP_PREPEND = 4, OP_CAS = 5;
    static final int OP_INCR = 0, OP_DECR = 1, OP_INCR_INIT = 2, OP_DECR_INIT = 3;


    /** The system property naming the JNI library's path (overrides the copy in the jar). */
    static final String LIBRARY_PROPERTY = "mcpool.jni.library";
    static final String LIBRARY_NAME = "mcpool_jni";
    /** The extracted copies' directories: {@code mcpool-jni-<pid>-<random>} (the JVM's pid);
     * before the static block that loads (it sweeps). */
    static final Pattern EXTRACTED = Pattern.compile("mcpool-jni-([0-9]+)-[0-9]+");

    static {
        load();
    }

    private static void load() {
        String path = System.getProperty(LIBRARY_PROPERTY);
        if (path != null && !path.isEmpty()) {
            File f = new File(path);
            if (!f.isFile()) {
                throw new UnsatisfiedLinkError("mcpool: " + LIBRARY_PROPERTY + "=" + path
                    + (f.isDirectory() ? ": a directory, not a file" : ": no such file")
                    + " (the property names the JNI library " + System.mapLibraryName(LIBRARY_NAME)
                    + " itself; leave it unset to use the copy in the mcpool jar)");
            }
            try {
                System.load(path);
            } catch (UnsatisfiedLinkError e) {
                throw chained("mcpool: cannot load " + LIBRARY_PROPERTY + "=" + path + ": " + e.getMessage(), e);
            }
            // Any shared library loads: the C library (libmcpool.so) is the likely mix-up,
            // which would fail only at the first call, naming a JNI function.
            try {
                version();
            } catch (UnsatisfiedLinkError e) {
                throw chained("mcpool: " + LIBRARY_PROPERTY + "=" + path + " loaded, but it is not mcpool's JNI library "
                    + System.mapLibraryName(LIBRARY_NAME) + " (it lacks its functions; the C library libmcpool.so is "
                    + "not it); leave the property unset to use the copy in the mcpool jar", e);
            }
            return;
        }
        String platform = platform();
        String resource = "/native/" + platform + "/" + System.mapLibraryName(LIBRARY_NAME);
        URL url = Native.class.getResource(resource);
        if (url != null) {
            Path file;
            try {
                file = extract(url);
            } catch (IOException e) {
                UnsatisfiedLinkError u = new UnsatisfiedLinkError("mcpool: cannot copy " + resource
                    + " out of the jar to a temporary file (java.io.tmpdir=" + System.getProperty("java.io.tmpdir")
                    + "): " + e + "; set " + LIBRARY_PROPERTY + " to the library's path instead");
                u.initCause(e);
                throw u;
            }
            try {
                System.load(file.toString());
            } catch (UnsatisfiedLinkError e) {
                throw chained("mcpool: cannot load " + resource + " from the jar (copied to " + file + ") on "
                    + platform + ": " + e.getMessage(), e);
            } finally {
                unlinkIfPosix(file);
            }
            return;
        }
        try {
            System.loadLibrary(LIBRARY_NAME);
        } catch (UnsatisfiedLinkError e) {
            throw chained("mcpool: no JNI library for " + platform + ": the jar has no " + resource
                + ", " + System.mapLibraryName(LIBRARY_NAME) + " is not on java.library.path ("
                + System.getProperty("java.library.path") + "), and " + LIBRARY_PROPERTY
                + " (the library's path) is not set", e);
        }
    }

    private static UnsatisfiedLinkError chained(String message, Throwable cause) {
        UnsatisfiedLinkError u = new UnsatisfiedLinkError(message);
        u.initCause(cause);
        return u;
    }

    /** {@code <os>-<arch>} as the jar's /native/ directories name them: linux-x86_64, linux-aarch64, ... */
    static String platform() {
        return osName(System.getProperty("os.name", "")) + "-" + archName(System.getProperty("os.arch", ""));
    }

    static String osName(String os) {
        String o = os.toLowerCase(Locale.ROOT);
        if (o.startsWith("linux")) return "linux";
        if (o.startsWith("mac") || o.startsWith("darwin")) return "macos";
        if (o.startsWith("windows")) return "windows";
        if (o.contains("freebsd")) return "freebsd";
        return o.replaceAll("[^a-z0-9]+", "");
    }

    static String archName(String arch) {
        String a = arch.toLowerCase(Locale.ROOT);
        switch (a) {
            case "amd64": case "x86_64": case "x86-64": case "x64": return "x86_64";
            case "aarch64": case "arm64": return "aarch64";
            case "x86": case "i386": case "i486": case "i586": case "i686": return "x86";
            default: return a.replaceAll("[^a-z0-9_]+", "");
        }
    }

    private static boolean posix() {
        return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    }

    /** Copies the library to a file in a fresh directory only this user can read (both deleted
     * right after the load where the system allows it, else at exit), after removing the
     * copies that JVMs which died without a normal exit left. */
    private static Path extract(URL url) throws IOException {
        Path dir;
        Path file;
        boolean posix = posix();
        String prefix = "mcpool-jni-" + ProcessHandle.current().pid() + "-";
        if (posix) {
            dir = Files.createTempDirectory(prefix,
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } else {
            dir = Files.createTempDirectory(prefix);
        }
        dir.toFile().deleteOnExit(); // registered first: deleted after the file
        sweepStale(dir.getParent(), Files.getOwner(dir, LinkOption.NOFOLLOW_LINKS));
        file = dir.resolve(System.mapLibraryName(LIBRARY_NAME));
        file.toFile().deleteOnExit();
        try (InputStream in = url.openStream()) {
            Files.copy(in, file); // fails if it exists: the directory is new and ours
        }
        if (posix) Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r-x------"));
        return file;
    }

    /** On a POSIX system a loaded library stays mapped when its file is removed: removing the
     * copy and its directory right after the load leaves nothing behind however the JVM ends
     * (a SIGKILL, the OOM killer, a crash). Elsewhere (Windows) deleteOnExit and the sweep of
     * the next load remove it. */
    private static void unlinkIfPosix(Path file) {
        if (!posix()) return;
        try {
            Files.deleteIfExists(file);
            Files.deleteIfExists(file.getParent());
        } catch (IOException | SecurityException e) {
            // left for deleteOnExit
        }
    }

    /**
     * Removes, in tmpdir, the extracted copies of JVMs that are gone: only directories named
     * {@code mcpool-jni-<pid>-<random>} (this binding's pattern), owned by {@code me}, not
     * symbolic links, whose pid is not a live process; only the library file in each, then the
     * directory if that left it empty. Anything else stays; every error is ignored (a sweep
     * never stops a load). Returns how many directories it removed.
     */
    static int sweepStale(Path tmpdir, UserPrincipal me) {
        int removed = 0;
        long self = ProcessHandle.current().pid();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(tmpdir, "mcpool-jni-*")) {
            for (Path d : entries) {
                Matcher m = EXTRACTED.matcher(d.getFileName().toString());
                if (!m.matches()) continue;
                long pid;
                try {
                    pid = Long.parseLong(m.group(1));
                } catch (NumberFormatException tooLong) {
                    continue;
                }
                if (pid == self || ProcessHandle.of(pid).isPresent()) continue; // its owner may be running
                try {
                    if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) continue;
                    if (!me.equals(Files.getOwner(d, LinkOption.NOFOLLOW_LINKS))) continue;
                    Files.deleteIfExists(d.resolve(System.mapLibraryName(LIBRARY_NAME)));
                    Files.delete(d); // fails unless that emptied it: nothing else is touched
                    removed++;
                } catch (IOException | SecurityException e) {
                    // not ours to remove, or gone already
                }
            }
        } catch (IOException | SecurityException | java.nio.file.DirectoryIteratorException e) {
            // no sweep
        }
        return removed;
    }

    /** Called by the C side to decode mcpool's UTF-8 error messages. */
    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    // Text crosses JNI as UTF-8 byte[] (Utf8.text / Utf8.decode), never as a jstring: JNI's
    // string functions speak modified UTF-8 (NUL as C0 80, characters outside the BMP as two
    // three-byte surrogates), which is not the UTF-8 the core reads and writes.

    static native String version();
    static native boolean tlsSupported();
    static native String statusName(int status);
    /** The core's TTL for a duration ({@code mcpool_expiry_from_now}): seconds plus nanos
     * (0..999999999, a Duration's; 0: whole seconds) from now; a moment the calls refuse
     * (after 2038) is thrown as the core's MCPOOL_INVALID_ARGUMENT, {@code call} (ASCII)
     * naming the Java call. */
    static native int expiryFromNow(long seconds, int nanos, byte[] call);

    static native long configNew();
    static native void configFree(long cfg);
    static native void configAddServer(long cfg, byte[] addr, int weight);
    /** One option of the core's table by name (UTF-8 name and value text). */
    static native void configSet(long cfg, byte[] name, byte[] value);
    static native int optionCount();
    /** Option number i's name, or (doc) its line: type, unit, default, meaning; null past the end. */
    static native String optionName(int i, boolean doc);
    /** The number of the option {@code name} (UTF-8, as written) names by the core's one rule
     * for option names (space around it trimmed, case ignored, - as _), or -1 for none. */
    static native int optionFind(byte[] name);
    /** Whether option number i holds a secret (the SASL password), the core's rule. */
    static native boolean optionIsSecret(int i);
    /** A server address (UTF-8) as the core's errors show it (mcpool_address_shown: a
     * {@code user:password@} before the host hidden, bytes not UTF-8 escaped), as UTF-8:
     * only through {@link Utf8#address}. */
    static native byte[] addressShown(byte[] addr);

    static native long clientNew(long cfg);
    static native void clientFree(long client);
    /** mcpool_client_close: calls waiting for a connection and later ones end with
     * MCPOOL_CLOSED; the handle stays valid until {@link #clientFree}. */
    static native void clientClose(long client);
    /** mcpool_client_disconnect_all: the client's connections closed (idle ones now, those in
     * use when their call ends), its servers' health, metrics and list kept. */
    static native void disconnectAll(long client);
    static native int serverCount(long client);
    /** The client's value format, as the core names it (whichever option or preset set it). */
    static native String valueFormat(long client);
    static native void setServers(long client, byte[] addrs, int[] lens, int[] weights);
    static native byte[] serverLabel(long client, int index);
    static native int serverFor(long client, byte[] key);

    // The hot calls take the arrays' lengths from Java (one JNI call fewer per array).
    static native int store(long client, int op, byte[] key, int keyLen, byte[] value, int valueLen,
                            int flags, int ttl, long cas);
    /** A store's 64-bit time checked by the core as the store (op OP_SET ... OP_CAS) of the
     * key would take it ({@code mcpool_client_store_expiry_checked}): the TTL to pass to it (a
     * negative time MCPOOL_EXPIRED_AT_ONCE); above MCPOOL_MAX_TTL the core's
     * MCPOOL_INVALID_ARGUMENT is thrown naming the number as given, and for OP_SET the key is
     * deleted first, as a set so refused deletes it. */
    static native int storeExpiry(long client, int op, byte[] key, int keyLen, long seconds);
    /** A value of a kind (Kind.ordinal()); op OP_SET, OP_ADD, OP_REPLACE or OP_CAS; compress
     * COMPRESS_AUTO (the client's rule), COMPRESS_NEVER, or COMPRESS_THRESHOLD (on, with
     * {@code threshold} in place of the client's, compared as the core's preset says). */
    static native int storeKind(long client, int op, byte[] key, int keyLen, int kind, byte[] value,
        int valueLen, int ttl, long cas, int compress, long threshold);
    static final int COMPRESS_NEVER = 0, COMPRESS_AUTO = 1, COMPRESS_THRESHOLD = 3;
    /** The value, or null on a miss (never an exception); meta[0] = flags, meta[1] = CAS,
     * meta[2] (when meta has 3 slots) the value's kind (Kind.ordinal()). */
    static native byte[] get(long client, byte[] key, int keyLen, boolean withCas, long[] meta);
    /** The value (null on a miss), delivered as get delivers it or, when the value format
     * cannot deliver it, as memcached holds it (mcpool_client_get_or_stored_into): meta (2
     * slots or more) as for get, meta[0] = flags (as stored, compression bits included, for
     * such a value), meta[1] = 1 for such a value, else 0. */
    static native byte[] getOrStored(long client, byte[] key, int keyLen, long[] meta);
    /** Get-and-touch (gats with withCas): the value, or null on a miss; its expiry set to
     * ttl (touch's rule); meta as for {@link #get}. */
    static native byte[] gat(long client, byte[] key, int keyLen, int ttl, boolean withCas, long[] meta);
    static native int delete(long client, byte[] key, int keyLen);
    /** A delete with an explicit CAS version (meta E). */
    static native int deleteWithVersion(long client, byte[] key, long version);
    /** incr (or decr) with an explicit CAS version (meta E); delta not negative; out[0] = the
     * new value (unsigned 64-bit bits) on OK. */
    static native int arithWithVersion(long client, boolean incr, byte[] key, long delta, long version, long[] out);
    static native int touch(long client, byte[] key, int ttl);
    /** A counter: decimal text with raw flags 0. */
    static native int setCounter(long client, byte[] key, long value, int ttl);
    static native int arith(long client, int op, byte[] key, long delta, long initial, int ttl, long[] out);
    /** Flushes every server: for each, in configuration order, its label (UTF-8 byte[]) then
     * null when it was flushed or its exception (not thrown): 2 entries per server. */
    static native Object[] flushAllEach(long client, int delaySeconds);
    /** Flushes server {@code index} of the list (serverLabel's numbering). */
    static native int flushServer(long client, int index, int delaySeconds);
    /** A batch store (op OP_SET ... OP_CAS): keys and values packed (lengths in klens,
     * vlens), each item's kind (Kind.ordinal(), or -1: raw bytes with flags[i]), TTL and (cas
     * null: all 0) CAS unique; the typed items in one pipelined call (encoded as storeKind
     * encodes one), the raw ones in another; every item's status written to out.
     * Returns each failed item's exception, its message the core's for that item (null when
     * none failed; a null slot: an item that did not fail, or whose message was empty). */
    static native McpoolException[] storeMulti(long client, int op, byte[] keys, int[] klens, byte[] vals,
                                               int[] vlens, int[] kinds, int[] flags, int[] ttls, long[] cas, int[] out);
    /** Sets the packed keys to the packed values (flags 0, all with ttl) with noreply and one
     * barrier round trip per server; the first failed item's status is thrown once every
     * other item was sent (returns MCPOOL_OK otherwise). */
    static native int setMultiNoreply(long client, byte[] keys, int[] klens, byte[] vals, int[] vlens, int ttl);
    /** One pipelined delete per server; every key's status written to out, each failed
     * key's exception returned as {@link #storeMulti}. */
    static native McpoolException[] deleteMulti(long client, byte[] keys, int[] klens, int[] out);
    /** One pipelined touch per server (key i gets ttls[i]); every key's status written to
     * out, each failed key's exception returned as {@link #storeMulti}. */
    static native McpoolException[] touchMulti(long client, byte[] keys, int[] klens, int[] ttls, int[] out);
    /** One pipelined incr (or decr) per server by deltas[i] (not negative); every key's status
     * to out, the new value (unsigned 64-bit bits) to values[i] where OK, each failed key's
     * exception returned as {@link #storeMulti}. */
    static native McpoolException[] arithMulti(long client, boolean incr, byte[] keys, int[] klens,
                                               long[] deltas, long[] values, int[] out);
    /** Throws the exception of an error status (nothing for an answer). */
    static native void throwStatus(int status);
    /**
     * Multi-get of the keys packed in {@code keys} (lengths in {@code lens}). A hit of more than
     * 4096 bytes lands in vals[i] as its own byte[]; the smaller ones come back in the returned
     * packed array (null when there are none) at offset spans[i], length spans[n + i]
     * (spans[i] = -1: not there). kinds[i] (Kind.ordinal()), flags[i] (as delivered), cas[i]
     * for every hit.
     */
    static native byte[] getMulti(long client, byte[] keys, int[] lens, boolean withCas, boolean lenient,
                                  Object[] vals, int[] kinds, int[] flags, long[] cas, int[] spans);
    /** getMulti (not lenient) that also sets each found key's expiry to ttl (get-and-touch). */
    static native byte[] gatMulti(long client, int ttl, byte[] keys, int[] lens, boolean withCas,
                                  Object[] vals, int[] kinds, int[] flags, long[] cas, int[] spans);
    /** spans[i] of a key a lenient getMulti left out because its server failed. */
    static final int LEFT_OUT = -3;
    /** spans[i] of a key whose value was read but cannot be delivered (MCPOOL_VALUE_FORMAT,
     * MCPOOL_DECOMPRESS): its status in kinds[i]; vals[i] holds its exception (the core's
     * message for that key). */
    static final int UNREADABLE = -4;
    /** spans[i] of a key that failed otherwise (its server down, a timeout, an error reply):
     * its status in kinds[i]; vals[i] holds its exception (the core's message for that key).
     * Only a call that failed as a whole throws. */
    static final int FAILED = -5;

    static native int metricCount();
    /** A metric's name, null past the end. */
    static native String metricName(int metric);
    /** Every server's metrics and health, one entry per address (the core merges a repeated
     * address): {byte[][] labels, long[] values (servers x metricCount(), server-major),
     * long[] states (servers x 3: alive 0/1, consecutive failures, ms until retried)}. */
    static native Object[] snapshot(long client);
    static native byte[] metricsPrometheus(long client);
    /** The item's bytes or null; meta[0] = its kind (Kind.ordinal()), meta[1] = CAS, meta[2] =
     * lease answer (0 hit, 1 recompute, 2 wait), meta[3] (when meta has 4 slots) its flags. */
    static native byte[] getLease(long client, byte[] key, int vivifyTtl, int recacheBelow, long[] meta);
    static native int invalidate(long client, byte[] key, int staleTtl);
    /** A set with an explicit CAS version (meta E): the value of a kind (Kind.ordinal()), or
     * kind -1 for raw bytes with {@code flags}. */
    static native int setWithVersion(long client, byte[] key, int kind, byte[] value, int flags,
                                     int ttl, long version);
    /** An item's metadata: OK with out = {hit_before, last_access_s, ttl_s (-1: none), cas,
     * size, flags}, or NOT_FOUND. */
    static native int metaInfo(long client, byte[] key, long[] out);
    /** Sets the configuration's event callback to the listener; returns the weak global
     * reference the callback reaches it by, to release ({@link #releaseRef}) once every client
     * built from it is freed. The native side does not keep the listener alive: the caller
     * must ({@link NativeClient}); a callback after it was collected is skipped. */
    static native long configSetEventListener(long cfg, Object listener);
    /** Deletes a weak global reference of {@link #configSetEventListener} or
     * {@link #configSetOperationListener} (0: nothing). */
    static native void releaseRef(long ref);
    /** Sets the configuration's per-operation callback to the dispatcher; returns the weak
     * global reference to release ({@link #releaseRef}) once every client built from it is
     * freed; the caller keeps the dispatcher alive, as for {@link #configSetEventListener}. */
    static native long configSetOperationListener(long cfg, Object dispatcher);

    /** Makes resolver (a {@link Resolver}) the configuration's resolver
     * ({@code mcpool_config_set_resolver_owned}): the native side reaches it through a weak
     * global reference in a block the library frees, with the reference, once nothing can
     * call the resolver any more (the configuration and every client built from it freed,
     * every callback already started returned). The caller keeps the resolver itself
     * reachable for as long as its clients (NativeClient), as for the listeners. */
    static native void configSetResolver(long cfg, Object resolver);
    /** Adds one address to the answer {@code out} of the running resolver callback
     * ({@code mcpool_resolved_add}); throws the core's refusal (not an IP literal: MCPOOL_INVALID_ARGUMENT,
     * beyond 64 addresses: MCPOOL_CONFIG). {@code out} is valid only during that callback. */
    static native void resolvedAdd(long out, byte[] ip, int port);
    /** Says why the running resolver callback found no address ({@code mcpool_resolved_set_reason},
     * UTF-8, at most {@link #REASON_MAX} bytes); a reason the core refuses is left out. */
    static native void resolvedSetReason(long out, byte[] reason);
    /** Resolver blocks the native side holds (made by {@link #configSetResolver}, not yet freed
     * by the library): for tests. */
    static native long resolverBlocks();

    /** The C ABI's MCPOOL_RESOLVED_MAX: most addresses one answer may hold. */
    static final int RESOLVED_MAX = 64;
    /** The longest reason {@code mcpool_resolved_set_reason} takes, in bytes. */
    static final int REASON_MAX = 1024;

    /** Called by the C side's resolver callback, on the library's helper thread (attached to
     * the JVM for the call): asks the resolver, adds each address it answers to {@code out}
     * and returns 0; or says why not ({@link #resolvedSetReason}) and returns 1. Nothing it
     * or the resolver throws escapes (the C side clears anything left pending as well). */
    static int dispatchResolve(Object resolver, byte[] host, int port, long out) {
        String reason;
        try {
            reason = resolve((Resolver) resolver, Utf8.decode(host), port, out);
        } catch (Throwable t) {
            reason = "the resolver's answer could not be read: " + describe(t);
        }
        if (reason == null) return 0;
        try {
            resolvedSetReason(out, reasonBytes(reason));
        } catch (Throwable t) {
            // no reason then: the core says "resolver callback returned 1"
        }
        return 1;
    }

    /** Asks the resolver and adds its addresses to {@code out}: null when it answered at least
     * one address, every one added; else why the name did not resolve. */
    private static String resolve(Resolver resolver, String host, int port, long out) {
        List<String> answer;
        try {
            answer = resolver.resolve(host, port);
        } catch (Throwable t) {
            return "the resolver threw " + describe(t);
        }
        if (answer == null) return "the resolver answered null";
        int n = answer.size();
        if (n == 0) return "the resolver answered no address";
        if (n > RESOLVED_MAX) {
            return "the resolver answered " + n + " addresses, more than the " + RESOLVED_MAX
                + " an answer may hold (MCPOOL_RESOLVED_MAX)";
        }
        int i = 0;
        for (Object item : (List<?>) answer) { // a raw List may hold anything
            if (!(item instanceof String)) {
                return "the resolver answered " + (item == null ? "null" : "a " + item.getClass().getName())
                    + " among its addresses (item " + i + "), not an IP literal as a String";
            }
            String ip = (String) item;
            try {
                // lenient: an unpaired surrogate becomes '?', which no IP literal holds either
                resolvedAdd(out, ip.getBytes(StandardCharsets.UTF_8), port);
            } catch (McpoolException e) {
                return "the resolver answered " + quoted(ip) + ": " + e.detail();
            }
            i++;
        }
        return i == 0 ? "the resolver answered no address" : null;
    }

    /** A throwable as a reason: its class and, when it has one, its message. */
    private static String describe(Throwable t) {
        String msg;
        try {
            msg = t.getMessage();
        } catch (Throwable e) {
            msg = null;
        }
        return t.getClass().getName() + (msg == null ? "" : ": " + msg);
    }

    /** An answered item in double quotes, its first 100 chars (the reason is bounded). */
    private static String quoted(String s) {
        return "\"" + (s.length() <= 100 ? s : s.substring(0, 100) + "...") + "\"";
    }

    /** A reason's UTF-8 bytes, cut to {@link #REASON_MAX} at a character boundary (the core
     * refuses a longer one, or one that is not UTF-8). */
    static byte[] reasonBytes(String reason) {
        byte[] b = reason.getBytes(StandardCharsets.UTF_8);
        if (b.length <= REASON_MAX) return b;
        int n = REASON_MAX - 3;
        while (n > 0 && (b[n] & 0xC0) == 0x80) n--; // b[n] starts the first character left out
        byte[] cut = java.util.Arrays.copyOf(b, n + 3);
        cut[n] = cut[n + 1] = cut[n + 2] = '.';
        return cut;
    }

    /** An {@link OperationListener} and the count of the exceptions it threw. */
    static final class OperationDispatch {
        final OperationListener listener;
        final java.util.concurrent.atomic.AtomicLong errors = new java.util.concurrent.atomic.AtomicLong();

        OperationDispatch(OperationListener listener) {
            this.listener = listener;
        }
    }

    /** Called by the C side's operation callback, on the thread that made the call. A listener
     * that throws is counted and ignored (nothing may unwind into the core). */
    static void dispatchOperation(Object dispatch, byte[] op, int keys, int hits, byte[] server, byte[] protocol,
                                  long nanos, int outcome, int errorClass, byte[] error, long sent, long received,
                                  long endedAgo) {
        OperationDispatch d = (OperationDispatch) dispatch;
        try {
            d.listener.onOperation(new OperationRecord(Utf8.decode(op), keys, hits, Utf8.decode(server),
                Utf8.decode(protocol), nanos, outcome, errorClass, Utf8.decode(error), sent, received, endedAgo));
        } catch (Throwable t) {
            d.errors.incrementAndGet();
        }
    }

    /** Called by the C side's event callback, on whichever thread the core runs it. A listener
     * that throws is ignored (nothing may unwind into the core). */
    static void dispatchEvent(Object listener, int kind, byte[] server, int failures, long retryInMillis) {
        try {
            ((ServerEventListener) listener).onEvent(new ServerEvent(kind, Utf8.decode(server), failures, retryInMillis));
        } catch (Throwable t) {
            // a listener's exception has nowhere to go: the core must not see it
        }
    }
    /** Per server: label, status (decimal, 0: answered), error message, pair count
     * (decimal), then the pairs; every entry UTF-8. what: STATS (group null: the general
     * statistics), VERSIONS, or NOOP (a no-op round trip, no pairs). strict: when every
     * server failed, throws the first one's error instead. */
    static native byte[][] stats(long client, byte[] group, int what, boolean strict);
    static final int STATS = 0, VERSIONS = 1, NOOP = 2;
}
