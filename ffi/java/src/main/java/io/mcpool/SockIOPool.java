package io.mcpool;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Whalin's {@code SockIOPool} vocabulary over the mcpool core: configure a named pool with
 * the familiar setters, {@link #initialize()} it, use it through {@link MemCachedClient}s,
 * {@link #shutDown()} it.
 *
 * <pre>{@code
 * SockIOPool pool = SockIOPool.getInstance("default");
 * pool.setServers(new String[] {"10.0.0.1:11211", "10.0.0.2:11211"});
 * pool.setHashingAlg(SockIOPool.CONSISTENT_HASH);
 * pool.initialize();
 * MemCachedClient mc = new MemCachedClient("default");
 * }</pre>
 *
 * <table>
 * <caption>how the settings map onto the core</caption>
 * <tr><th>setter</th><th>core setting</th><th>default here (Whalin's)</th></tr>
 * <tr><td>setServers / setWeights</td><td>servers in order, placement weights (at least 1; a null
 *     weight is 1; {@link #initialize()} refuses a weight below 1)</td><td>weight 1</td></tr>
 * <tr><td>setInitConn / setMinConn</td><td>{@code min_idle}, connections per server kept open: the larger
 *     of the two (0 to maxConn; a negative count, or one above maxConn, is refused)</td><td>1 / 1</td></tr>
 * <tr><td>setMaxConn</td><td>{@code max_size}, most connections per server (1 to 65536; 0 or a negative
 *     count is refused)</td><td>10</td></tr>
 * <tr><td>setMaxIdle (ms)</td><td>{@code idle_timeout}: a connection idle longer is closed (1 ms or more;
 *     Whalin's 0, "close every idle connection above minConn at each maintenance pass", has no
 *     counterpart and is refused, as is a negative time; {@code setOption("idle_timeout", "0")} keeps
 *     idle connections)</td><td>300000</td></tr>
 * <tr><td>setMaxBusyTime (ms)</td><td>caps {@code io_timeout}: a stuck call ends, its socket is dropped
 *     (1 ms or more; 0, Whalin's "close every busy socket at each maintenance pass", and a negative
 *     time are refused)</td><td>30000</td></tr>
 * <tr><td>setSocketTO (ms)</td><td>{@code io_timeout} of each read and write, at most maxBusyTime; 0 is
 *     Whalin's "no read timeout", where its maintenance thread still closes a socket busy for longer
 *     than maxBusyTime: {@code io_timeout} = maxBusyTime; a negative time is refused</td><td>30000</td></tr>
 * <tr><td>setSocketConnectTO (ms)</td><td>{@code connect_timeout} (1 ms or more; Whalin's 0, a connect
 *     bounded only by the system's TCP timeout, has no counterpart and is refused, as is a negative
 *     time)</td><td>3000</td></tr>
 * <tr><td>setNagle</td><td>TCP_NODELAY = !nagle</td><td>false</td></tr>
 * <tr><td>setAliveCheck</td><td>a version round trip on each checkout</td><td>false</td></tr>
 * <tr><td>setFailover</td><td>{@code rehash} (true) or {@code fail-fast} (false) for a dead server's keys
 *     (with OLD_COMPAT_HASH and a bucket count that is a multiple of 3 or 11, Whalin's rehash
 *     keeps a short key on its dead server: see docs/failover.md)</td><td>true</td></tr>
 * <tr><td>setFailback</td><td>false: a dead server is not retried for a day</td><td>true</td></tr>
 * <tr><td>setHashingAlg</td><td>NATIVE_HASH {@code whalin-native}, OLD_COMPAT_HASH {@code whalin-old-compat},
 *     NEW_COMPAT_HASH {@code whalin-new-compat}, CONSISTENT_HASH {@code whalin-consistent} (any
 *     other number is refused)</td><td>NATIVE_HASH</td></tr>
 * </table>
 * setMaintSleep is accepted and ignored (the core's pool reaps idle connections itself).
 * A setter keeps any value; every refusal of one is a {@link ConfigurationException}
 * (MCPOOL_CONFIG) from {@link #initialize()} naming the setter and the value, or the core's
 * option (setProtocol, setValueFormat and setOption are checked by the core), and the pool
 * stays uninitialized: a value is never clamped or dropped in silence. Null arguments are
 * the one exception, refused at the call as everywhere in the binding: a null to
 * setValueFormat or setOption is a {@link ClientException} (MCPOOL_INVALID_ARGUMENT) naming
 * it; a null to setServers, setWeights or setProtocol means "not given" (initialize() refuses
 * a pool without servers; every weight 1; the core's protocol).
 *
 * <p>The settings are read at {@link #initialize()} and stay those of the running pool until
 * {@link #shutDown()}. As in Whalin, whose initialize() builds the pool's placement (its
 * buckets) from the servers and weights given before, the setters are for before
 * initialize(); here a setter called on an initialized pool is refused at the
 * call with a {@link ConfigurationException} (MCPOOL_CONFIG) "SockIOPool <i>name</i> is
 * initialized: its settings apply at initialize(); shutDown() it first", and changes
 * nothing, so each getter reports the setting in force. To change a setting, shutDown(), set
 * it, initialize() again: the pool's {@link MemCachedClient}s then use the new settings.
 * initialize() on an initialized pool does nothing (Whalin's logs an error and returns).
 *
 * <p>Compression is a {@link MemCachedClient} setting in Whalin's API: each store carries its
 * client's decision (on with its threshold, or off) to the core, which compares the size
 * (the {@code whalin} preset: longer than the threshold), so every MemCachedClient of a
 * pool shares one native client and its connections. Key sanitizing is a client-wide rule
 * in the core: the pool builds a second native client only if some MemCachedClient turns
 * {@code setSanitizeKeys(false)} (Whalin's default is true); all are freed by
 * {@link #shutDown()}.
 */
public class SockIOPool {
    /** Whalin's default placement: the key's {@code String.hashCode()} modulo the buckets
     * (the core's {@code whalin-native}). */
    public static final int NATIVE_HASH = 0;
    /** Whalin's original compatible hash, modulo the buckets ({@code whalin-old-compat}). */
    public static final int OLD_COMPAT_HASH = 1;
    /** Whalin's CRC32-based hash, modulo the buckets ({@code whalin-new-compat}). */
    public static final int NEW_COMPAT_HASH = 2;
    /** Whalin's consistent hashing, MD5 points on a ring ({@code whalin-consistent}). */
    public static final int CONSISTENT_HASH = 3;

    private static final Map<String, SockIOPool> POOLS = new HashMap<>();

    private final String name;
    private String[] servers;
    private Integer[] weights;
    private int initConn = 1, minConn = 1, maxConn = 10;
    private long maxIdle = 1000L * 60 * 5, maxBusyTime = 1000L * 30, maintSleep = 1000L * 30;
    private int socketTO = 1000 * 30, socketConnectTO = 1000 * 3;
    private boolean nagle = false, failover = true, failback = true, aliveCheck = false;
    private int hashingAlg = NATIVE_HASH;
    private String protocol;
    private final Map<String, String> options = new java.util.LinkedHashMap<>();
    private String valueFormat = "whalin";
    private ServerEventListener serverEventListener;
    private Native.OperationDispatch operations;

    private final Map<Boolean, Mcpool> clients = new HashMap<>();
    private volatile boolean initialized;

    /** A pool of this name, not registered: {@link #getInstance(String)} makes and keeps them. */
    protected SockIOPool(String name) {
        this.name = name;
    }

    /** The pool called "default". */
    public static SockIOPool getInstance() {
        return getInstance("default");
    }

    /** The pool of this name, created (unconfigured) on first use. */
    public static SockIOPool getInstance(String poolName) {
        Mcpool.notNull(poolName, "pool name");
        synchronized (POOLS) {
            return POOLS.computeIfAbsent(poolName, SockIOPool::new);
        }
    }

    /** The pool's name, as given to {@link #getInstance(String)}. */
    public String getName() { return name; }
    /** The servers, {@code host:port} (or {@code [v6]:port}, a unix socket path), in placement
     * order (copied). */
    public synchronized void setServers(String[] servers) { settable(); this.servers = servers == null ? null : servers.clone(); }
    /** The servers given to {@link #setServers} (a copy), or null. */
    public synchronized String[] getServers() { return servers == null ? null : servers.clone(); }
    /** A placement weight per server, in the order of {@link #setServers} (a null weight is 1;
     * copied). */
    public synchronized void setWeights(Integer[] weights) { settable(); this.weights = weights == null ? null : weights.clone(); }
    /** The weights given to {@link #setWeights} (a copy), or null. */
    public synchronized Integer[] getWeights() { return weights == null ? null : weights.clone(); }
    /** Connections opened per server at {@link #initialize()} (the core's {@code min_idle}: the
     * larger of this and {@link #setMinConn}). */
    public synchronized void setInitConn(int initConn) { settable(); this.initConn = initConn; }
    /** The count given to {@link #setInitConn} (default 1). */
    public synchronized int getInitConn() { return initConn; }
    /** Connections per server kept open (the core's {@code min_idle}: the larger of this and
     * {@link #setInitConn}). */
    public synchronized void setMinConn(int minConn) { settable(); this.minConn = minConn; }
    /** The count given to {@link #setMinConn} (default 1). */
    public synchronized int getMinConn() { return minConn; }
    /** Most connections per server (the core's {@code max_size}). */
    public synchronized void setMaxConn(int maxConn) { settable(); this.maxConn = maxConn; }
    /** The count given to {@link #setMaxConn} (default 10). */
    public synchronized int getMaxConn() { return maxConn; }
    /** Milliseconds after which an idle connection is closed (the core's {@code idle_timeout}). */
    public synchronized void setMaxIdle(long maxIdle) { settable(); this.maxIdle = maxIdle; }
    /** The time given to {@link #setMaxIdle}, in milliseconds (default 300000). */
    public synchronized long getMaxIdle() { return maxIdle; }
    /** Milliseconds a read or write may take at most: caps {@link #setSocketTO}. */
    public synchronized void setMaxBusyTime(long maxBusyTime) { settable(); this.maxBusyTime = maxBusyTime; }
    /** The time given to {@link #setMaxBusyTime}, in milliseconds (default 30000). */
    public synchronized long getMaxBusyTime() { return maxBusyTime; }
    /** Accepted and ignored: the core's pool closes idle connections itself. */
    public synchronized void setMaintSleep(long maintSleep) { settable(); this.maintSleep = maintSleep; }
    /** The time given to {@link #setMaintSleep}, in milliseconds (default 30000; unused). */
    public synchronized long getMaintSleep() { return maintSleep; }
    /** Milliseconds each read and write may take (the core's {@code io_timeout}, at most
     * {@link #setMaxBusyTime}; 0: maxBusyTime). */
    public synchronized void setSocketTO(int socketTO) { settable(); this.socketTO = socketTO; }
    /** The time given to {@link #setSocketTO}, in milliseconds (default 30000). */
    public synchronized int getSocketTO() { return socketTO; }
    /** Milliseconds a connect may take (the core's {@code connect_timeout}). */
    public synchronized void setSocketConnectTO(int socketConnectTO) { settable(); this.socketConnectTO = socketConnectTO; }
    /** The time given to {@link #setSocketConnectTO}, in milliseconds (default 3000). */
    public synchronized int getSocketConnectTO() { return socketConnectTO; }
    /** Nagle's algorithm on (true) or off (the core's {@code nodelay}, inverted). */
    public synchronized void setNagle(boolean nagle) { settable(); this.nagle = nagle; }
    /** The setting of {@link #setNagle} (default false). */
    public synchronized boolean getNagle() { return nagle; }
    /** A dead server's keys go to another server ({@code rehash}, true) or fail
     * ({@code fail-fast}, false). */
    public synchronized void setFailover(boolean failover) { settable(); this.failover = failover; }
    /** The setting of {@link #setFailover} (default true). */
    public synchronized boolean getFailover() { return failover; }
    /** Whether a dead server is tried again (false: not for a day). */
    public synchronized void setFailback(boolean failback) { settable(); this.failback = failback; }
    /** The setting of {@link #setFailback} (default true). */
    public synchronized boolean getFailback() { return failback; }
    /** A version round trip on each checkout of a connection (the core's
     * {@code test_on_check_out}). */
    public synchronized void setAliveCheck(boolean aliveCheck) { settable(); this.aliveCheck = aliveCheck; }
    /** The setting of {@link #setAliveCheck} (default false). */
    public synchronized boolean getAliveCheck() { return aliveCheck; }

    /** NATIVE_HASH, OLD_COMPAT_HASH, NEW_COMPAT_HASH or CONSISTENT_HASH; any other number is
     * kept and refused by {@link #initialize()} (a {@link ConfigurationException} naming
     * {@code setHashingAlg} and the number), as every other value the core has no form for. */
    public synchronized void setHashingAlg(int alg) {
        settable();
        this.hashingAlg = alg;
    }

    /** The algorithm given to {@link #setHashingAlg} (default NATIVE_HASH). */
    public synchronized int getHashingAlg() { return hashingAlg; }

    /** Not in Whalin: the core's wire protocol, {@code text} (default), {@code meta} or {@code binary}. */
    public synchronized void setProtocol(String protocol) { settable(); this.protocol = protocol; }
    /** Not in Whalin: the value format of the fleet (default {@code whalin}, Whalin's own
     * layout; {@code mcpool} to share values with mcpool's other languages; see
     * {@link Mcpool.Builder#valueFormat(String)}). Set before {@link #initialize()}. A
     * {@link MemCachedClient} without {@link MemCachedClient#setTranscoder} uses the
     * transcoder {@link Mcpool.Builder#build()} picks for the format: under
     * {@code spymemcached} a {@link SpyTranscoder} (an Integer written as spymemcached's
     * Integer, flags 512, and read back as one), unless its primitiveAsString is on. */
    public synchronized void setValueFormat(String name) {
        Mcpool.notNull(name, "valueFormat");
        settable();
        this.valueFormat = name;
    }
    /** The value format given to {@link #setValueFormat} (default {@code whalin}). */
    public synchronized String getValueFormat() { return valueFormat; }

    /** Not in Whalin: any option of the core's table by name, in its text form (see
     * {@link Mcpool.Builder#option}), e.g. {@code setOption("operation_timeout", "2s")},
     * {@code setOption("tls_ca_file", path)}, {@code setOption("sasl_username", user)};
     * applied after the Whalin settings above, when the pool is initialized. A
     * {@code libmemcached_config} (other than an empty one) is refused by initialize(): the
     * pool's placement and settings are its setters'; a string goes to {@link Mcpool.Builder}. */
    public synchronized void setOption(String name, String value) {
        Mcpool.notNull(name, "option name");
        Mcpool.notNull(value, "option " + name);
        settable();
        options.put(name, value);
    }

    /** Not in Whalin: {@link Mcpool.Builder#onServerEvent} for this pool (null, the default:
     * none), called when a server is marked dead or answers again. A pool with a
     * {@link MemCachedClient} that turned {@code setSanitizeKeys(false)} holds two native
     * clients (see the class comment), and each reports its own view of the servers. */
    public synchronized void setServerEventListener(ServerEventListener listener) {
        settable();
        this.serverEventListener = listener;
    }

    /** Not in Whalin: {@link Mcpool.Builder#onOperation} for this pool (null, the default:
     * none), called after every exchange with a server with its {@link OperationRecord}, on
     * the calling thread; what it throws is counted ({@link #operationListenerErrors()}). */
    public synchronized void setOperationListener(OperationListener listener) {
        settable();
        this.operations = listener == null ? null : new Native.OperationDispatch(listener);
    }

    /** How many times the {@link #setOperationListener} listener threw (caught); 0 without
     * one. */
    public synchronized long operationListenerErrors() {
        return operations == null ? 0 : operations.errors.get();
    }

    /** The core's distribution of a Whalin hashing algorithm, or null for a number that is
     * none of the four. */
    static String distributionName(int alg) {
        switch (alg) {
            case NATIVE_HASH: return "whalin-native";
            case OLD_COMPAT_HASH: return "whalin-old-compat";
            case NEW_COMPAT_HASH: return "whalin-new-compat";
            case CONSISTENT_HASH: return "whalin-consistent";
            default: return null;
        }
    }

    /** A setter's check: the settings of an initialized pool are those in force (read at
     * {@link #initialize()}); a change is refused until {@link #shutDown()}. Called holding
     * the pool's lock, as initialize() and shutDown() take it. */
    private void settable() {
        if (initialized) {
            throw new ConfigurationException(103, "MCPOOL_CONFIG", "SockIOPool " + name
                + " is initialized: its settings apply at initialize(); shutDown() it first");
        }
    }

    /** Builds the pool's native client from the settings given so far (it opens initConn
     * connections per server in the background); they are the pool's until {@link #shutDown()}.
     * Does nothing on an initialized pool. Throws {@link ConfigurationException} for an unusable
     * configuration: no servers, a null server, a count of weights that differs from the
     * servers', a weight below 1 (a negative one would otherwise become 2^32 - 1 in the core),
     * a hashing algorithm that is none of the four, and each value the table above refuses
     * (maxConn below 1, initConn or minConn above maxConn, maxIdle or maxBusyTime below 1,
     * socketConnectTO below 1, a negative socketTO), or the core refuses (a protocol, value
     * format or option it does not know, a bad address); the pool then stays uninitialized. */
    public synchronized void initialize() {
        if (initialized) return;
        if (servers == null || servers.length == 0) {
            throw new ConfigurationException(103, "MCPOOL_CONFIG", "pool " + name + ": no servers");
        }
        if (weights != null && weights.length != servers.length) {
            throw new ConfigurationException(103, "MCPOOL_CONFIG", "pool " + name + ": " + weights.length
                + " weights for " + servers.length + " servers");
        }
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] == null) {
                throw new ConfigurationException(103, "MCPOOL_CONFIG", "pool " + name + ": server " + i + " is null");
            }
            if (weights != null && weights[i] != null && weights[i] < 1) {
                throw new ConfigurationException(103, "MCPOOL_CONFIG", "pool " + name + ": server "
                    + Utf8.address(servers[i]) + " has weight " + weights[i] + " (weights start at 1)");
            }
        }
        build(true);
        initialized = true;
    }

    /** Whether {@link #initialize()} succeeded and {@link #shutDown()} has not been called since. */
    public boolean isInitialized() {
        return initialized;
    }

    /** Closes every native client of this pool; the pool may be configured and initialized
     * again (a {@link MemCachedClient} of it then uses the new native client). */
    public synchronized void shutDown() {
        initialized = false;
        for (Mcpool c : clients.values()) c.close();
        clients.clear();
    }

    /** The core's options for this pool: the {@code whalin} preset, then each setter's value
     * translated into the core's option (names and units only), then {@link #setOption}'s. */
    Config config(boolean sanitize) {
        Config c = new Config();
        for (int i = 0; i < servers.length; i++) {
            c.addServer(servers[i], weights == null || weights[i] == null ? 1 : weights[i]);
        }
        c.preset = "whalin";
        String distribution = distributionName(hashingAlg);
        if (distribution == null) {
            throw refused("setHashingAlg(" + hashingAlg + ")", "unknown hashing algorithm (NATIVE_HASH 0, "
                + "OLD_COMPAT_HASH 1, NEW_COMPAT_HASH 2 or CONSISTENT_HASH 3)");
        }
        c.set("distribution", distribution);
        c.set("failover", failover ? "rehash" : "fail-fast");
        // Whalin's value layout unless set (setValueFormat); the core delivers serialized
        // objects and the MemCachedClient's transcoder decides (setSerializationEnabled).
        c.set("value_format", valueFormat);
        c.set("serialized_java", "true");
        if (protocol != null) c.set("protocol", protocol);
        // Counts as given: the core refuses a max_size outside 1..65536 and a min_idle below 0
        // or above max_size, naming the option (no clamping here).
        c.set("max_size", Integer.toString(maxConn));
        if (initConn < 0) throw refused("setInitConn(" + initConn + ")", "a negative count");
        if (minConn < 0) throw refused("setMinConn(" + minConn + ")", "a negative count");
        c.set("min_idle", Integer.toString(Math.max(initConn, minConn)));
        if (maxIdle <= 0) {
            throw refused("setMaxIdle(" + maxIdle + ")", "Whalin's 0 closes every idle connection above minConn at "
                + "each maintenance pass, which the core cannot do (it closes connections idle longer than a time): "
                + "give a time in ms, or setOption(\"idle_timeout\", \"0\") to keep idle connections");
        }
        c.set("idle_timeout", maxIdle + "ms");
        if (maxBusyTime <= 0) {
            throw refused("setMaxBusyTime(" + maxBusyTime + ")", "Whalin's 0 closes every busy connection at each "
                + "maintenance pass, which the core cannot do: give a time in ms (it caps each read and write)");
        }
        if (socketTO < 0) throw refused("setSocketTO(" + socketTO + ")", "a negative timeout (Whalin's socket refuses it)");
        // socketTO 0 is Whalin's "no read timeout": its maintenance thread still closes a
        // socket busy for longer than maxBusyTime, so maxBusyTime bounds each read and write.
        long io = socketTO == 0 ? maxBusyTime : Math.min(socketTO, maxBusyTime);
        c.set("io_timeout", io + "ms");
        if (socketConnectTO <= 0) {
            throw refused("setSocketConnectTO(" + socketConnectTO + ")", socketConnectTO == 0
                ? "Whalin's 0 waits for the system's TCP connect timeout, which the core has no form for: give a time in ms"
                : "a negative timeout (Whalin's socket refuses it)");
        }
        c.set("connect_timeout", socketConnectTO + "ms");
        c.set("nodelay", Boolean.toString(!nagle));
        c.set("test_on_check_out", Boolean.toString(aliveCheck));
        if (!failback) {
            c.set("retry_timeout", "86400s");
            c.set("retry_timeout_max", "86400s");
        }
        c.set("sanitize_keys", Boolean.toString(sanitize));
        c.listener = serverEventListener;
        c.operations = operations;
        for (Map.Entry<String, String> e : options.entrySet()) {
            // (a name as the core reads it, by the core's rule: tester findings retest39 6,
            // retest40 5; a blank string is none)
            String v = e.getValue().trim();
            if (Config.canonicalName(e.getKey()).equals("libmemcached_config") && !v.isEmpty()) {
                // the core would name a preset "whalin" the caller never wrote (retest38 note)
                throw refused("setOption(\"" + e.getKey() + "\", ...)", "a SockIOPool is Whalin's pool: its "
                    + "placement and settings are its setters' (the whalin preset), which a libmemcached_config "
                    + "would replace; give the string to Mcpool.builder().option(\"libmemcached_config\", ...) "
                    + "instead");
            }
            c.set(e.getKey(), e.getValue());
        }
        return c;
    }

    private ConfigurationException refused(String setter, String why) {
        return new ConfigurationException(103, "MCPOOL_CONFIG", "pool " + name + ": " + setter + ": " + why);
    }

    /** The native client with this key-sanitizing rule, built on first use (compression is
     * decided per call: see the class comment). */
    synchronized Mcpool client(boolean sanitize) {
        // initialized, not servers != null: after shutDown() a MemCachedClient's call (one that
        // saw the pool initialized just before) must not build a native client again
        if (!initialized) {
            throw new ConfigurationException(103, "MCPOOL_CONFIG", "pool " + name + " is not initialized");
        }
        return build(sanitize);
    }

    /** The native client with this key-sanitizing rule, built from the settings if there is
     * none yet (by {@link #initialize()}, or later for the other rule: the settings cannot
     * change in between, see the class comment). */
    private Mcpool build(boolean sanitize) {
        Mcpool c = clients.get(sanitize);
        if (c == null) {
            c = new Mcpool(config(sanitize), (Transcoder) null);
            clients.put(sanitize, c);
        }
        return c;
    }

    /** How many native clients this pool holds (for the tests: 1 unless some MemCachedClient
     * turned key sanitizing off). */
    synchronized int nativeClients() {
        return clients.size();
    }

    /** The pool's name and servers, each address as the core's errors show it (a
     * {@code user:password@} hidden: {@link Utf8#address(String)}). */
    @Override
    public String toString() {
        if (servers == null) return "SockIOPool(" + name + ", null)";
        String[] shown = new String[servers.length];
        for (int i = 0; i < servers.length; i++) shown[i] = Utf8.address(servers[i]);
        return "SockIOPool(" + name + ", " + Arrays.toString(shown) + ")";
    }
}
