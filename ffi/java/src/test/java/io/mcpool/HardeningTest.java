package io.mcpool;

import static org.junit.Assert.*;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Regression tests for the Java parts of issue 15 ("hardening"), named by item: 4 (a negative
 * SockIOPool weight), 6 (keys with unpaired surrogates aliased other keys), 11 (null arguments
 * were NullPointerExceptions; text with characters outside the BMP or NUL crossed JNI as
 * modified UTF-8). Against a real memcached (TestServer), read back raw where the bytes matter.
 */
public class HardeningTest {
    static TestServer server;
    static Mcpool mc;
    static SockIOPool pool;
    static MemCachedClient whalin;

    @BeforeClass
    public static void start() throws Exception {
        server = new TestServer();
        mc = Mcpool.builder().servers(server.addr()).build();
        pool = SockIOPool.getInstance("hardening");
        pool.setServers(new String[] {server.addr()});
        pool.initialize();
        whalin = new MemCachedClient("hardening");
    }

    @AfterClass
    public static void stop() throws Exception {
        mc.close();
        pool.shutDown();
        server.close();
    }

    interface Call {
        void run() throws Exception;
    }

    /** Runs call and asserts it threw a ClientException (not an NPE or anything else). */
    static ClientException refused(String what, Call call) {
        try {
            call.run();
        } catch (ClientException e) {
            return e;
        } catch (Throwable t) {
            throw new AssertionError(what + ": expected a ClientException, got " + t, t);
        }
        throw new AssertionError(what + ": expected a ClientException, nothing was thrown");
    }

    /** The value of key as memcached holds it (a plain text-protocol get on its own socket),
     * or null on a miss. */
    static byte[] rawGet(byte[] key) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", server.port), 2000);
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            ByteArrayOutputStream req = new ByteArrayOutputStream();
            req.write("get ".getBytes(StandardCharsets.US_ASCII));
            req.write(key);
            req.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            out.write(req.toByteArray());
            out.flush();
            InputStream in = s.getInputStream();
            String header = line(in);
            if (header.equals("END")) return null;
            String[] parts = header.split(" ");
            assertEquals("VALUE", parts[0]);
            int len = Integer.parseInt(parts[3]);
            byte[] data = in.readNBytes(len);
            assertEquals(len, data.length);
            assertEquals("", line(in));
            assertEquals("END", line(in));
            return data;
        }
    }

    /** The value of a key of any bytes as memcached holds it: a meta get with the key in
     * base64 ({@code mg <base64> b v}), or null on a miss. */
    static byte[] rawMetaGet(byte[] key) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", server.port), 2000);
            s.setSoTimeout(5000);
            String req = "mg " + java.util.Base64.getEncoder().encodeToString(key) + " b v\r\n";
            s.getOutputStream().write(req.getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            String header = line(in);
            if (header.equals("EN")) return null;
            String[] parts = header.split(" ");
            assertEquals(header, "VA", parts[0]);
            int len = Integer.parseInt(parts[1]);
            byte[] data = in.readNBytes(len);
            assertEquals(len, data.length);
            assertEquals("", line(in));
            return data;
        }
    }

    /** One \r\n-terminated line, decoded as ISO-8859-1 (so every byte is one char). */
    static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int i = 0; i < 10_000; i++) {
            int c = in.read();
            if (c < 0) throw new IOException("connection closed mid-line");
            if (c == '\n') break;
            if (c != '\r') b.write(c);
        }
        return b.toString(StandardCharsets.ISO_8859_1);
    }

    // -------------------------------------------------------------------------------- item 6

    static String escaped(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) b.append(c < 128 ? String.valueOf(c) : String.format("\\u%04X", (int) c));
        return b.toString();
    }

    static final String[] UNPAIRED = {"user:\ud800", "user:\udc00", "user:\udc00\ud800", "\ud83d", "a\ud800b"};

    @Test
    public void item6UnpairedSurrogateKeyIsRefusedAndDoesNotAliasQuestionMark() {
        assertTrue(mc.set("user:?", "question mark"));
        ClientException e = refused("set", () -> mc.set("user:\ud800", "other"));
        assertEquals("MCPOOL_INVALID_KEY", e.statusName());
        assertTrue(e.getMessage(), e.getMessage().contains("unpaired surrogate \\uD800 at index 5"));
        assertTrue(e.getMessage(), e.getMessage().contains("user:\\uD800"));
        refused("get", () -> mc.get("user:\ud800"));
        refused("delete", () -> mc.delete("user:\ud800"));
        assertEquals("question mark", mc.get("user:?"));
        // Whalin's API (keys URL-encoded by the core: "?" would have become "%3F" for both)
        assertTrue(whalin.set("user:?", "whalin question mark"));
        assertEquals("MCPOOL_INVALID_KEY", refused("whalin set", () -> whalin.set("user:\ud800", "x")).statusName());
        refused("whalin delete", () -> whalin.delete("user:\ud800"));
        assertEquals("whalin question mark", whalin.get("user:?"));
    }

    @Test
    public void item6EveryKeyTakingMethodRefusesUnpairedSurrogates() {
        for (String k : UNPAIRED) {
            List<Call> calls = new ArrayList<>(Arrays.asList(
                () -> mc.set(k, "v"), () -> mc.set(k, "v", 10), () -> mc.add(k, "v", 0), () -> mc.replace(k, "v", 0),
                () -> mc.append(k, "v"), () -> mc.prepend(k, "v"), () -> mc.cas(k, "v", 0, 1), () -> mc.get(k),
                () -> mc.gets(k), () -> mc.getMulti("ok", k), () -> mc.getMulti(Arrays.asList(k)),
                () -> mc.setBytes(k, new byte[1], 0, 0), () -> mc.getBytes(k), () -> mc.delete(k),
                () -> mc.touch(k, 1), () -> mc.incr(k, 1), () -> mc.decr(k, 1), () -> mc.incrOrInit(k, 1, 1, 0),
                () -> mc.decrOrInit(k, 1, 1, 0), () -> mc.serverIndexFor(k),
                () -> whalin.set(k, "v"), () -> whalin.add(k, "v"), () -> whalin.replace(k, "v"),
                () -> whalin.append(k, "v"), () -> whalin.prepend(k, "v"), () -> whalin.cas(k, "v", 1),
                () -> whalin.get(k), () -> whalin.gets(k), () -> whalin.getMulti(new String[] {"ok", k}),
                () -> whalin.getMultiArray(new String[] {k}), () -> whalin.keyExists(k), () -> whalin.delete(k),
                () -> whalin.incr(k), () -> whalin.decr(k), () -> whalin.addOrIncr(k), () -> whalin.addOrDecr(k),
                () -> whalin.storeCounter(k, 5), () -> whalin.getCounter(k), () -> whalin.getBytes(k)));
            for (int i = 0; i < calls.size(); i++) {
                ClientException e = refused(escaped(k) + " call " + i, calls.get(i));
                assertEquals(escaped(k) + " call " + i, "MCPOOL_INVALID_KEY", e.statusName());
            }
        }
    }

    @Test
    public void item6PairedSurrogatesAreOrdinaryKeysStoredAsUtf8() throws Exception {
        String k = "user:\ud83d\ude00"; // U+1F600, a valid surrogate pair
        assertTrue(mc.set(k, "smile"));
        assertEquals("smile", mc.get(k));
        byte[] utf8 = {'u', 's', 'e', 'r', ':', (byte) 0xF0, (byte) 0x9F, (byte) 0x98, (byte) 0x80};
        assertArrayEquals(utf8, k.getBytes(StandardCharsets.UTF_8));
        assertArrayEquals("smile".getBytes(StandardCharsets.UTF_8), rawGet(utf8));
    }

    @Test
    public void item6KeyPrefixWithUnpairedSurrogateIsRefused() {
        ClientException e = refused("keyPrefix", () -> Mcpool.builder().keyPrefix("app\udfff:"));
        assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
        assertTrue(e.getMessage(), e.getMessage().contains("key_prefix"));
        try (Mcpool p = Mcpool.builder().servers(server.addr()).keyPrefix("app\ud83d\ude00:").build()) {
            assertTrue(p.set("k", "prefixed"));
            assertEquals("prefixed", mc.get("app\ud83d\ude00:k"));
        }
    }

    @Test
    public void item6StringValuesWithUnpairedSurrogatesAreRefusedNotStoredWithQuestionMarks() {
        String bad = "caf\u00e9 \ud800 end";
        assertTrue(mc.set("v6:whalin", "before"));
        ClientException e = refused("Whalin String", () -> mc.set("v6:whalin", bad));
        assertTrue(e.getMessage(), e.getMessage().contains("unpaired surrogate \\uD800 at index 5"));
        refused("Whalin StringBuilder", () -> mc.set("v6:whalin", new StringBuilder(bad)));
        refused("Whalin StringBuffer", () -> mc.set("v6:whalin", new StringBuffer(bad)));
        assertEquals("before", mc.get("v6:whalin"));
        refused("WhalinTranscoder", () -> new WhalinTranscoder().encode(bad));
        refused("Whalin primitiveAsString", () -> new WhalinTranscoder(true, false, null).encode(bad));
        refused("Whalin primitiveAsString Character", () -> new WhalinTranscoder(true, false, null).encode('\udc00'));
        refused("SpyTranscoder", () -> new SpyTranscoder().encode(bad));
        refused("MemCachedClient", () -> whalin.set("v6:mcc", bad));
        try (Mcpool spy = Mcpool.builder().servers(server.addr()).transcoder(new SpyTranscoder()).build()) {
            refused("Mcpool with SpyTranscoder", () -> spy.set("v6:whalin", bad));
        }
        assertEquals("before", mc.get("v6:whalin"));
    }

    // ------------------------------------------------------------------------------- item 11

    @Test
    public void item11NullArgumentsAreClientExceptionsNotNullPointerExceptions() {
        refused("getMulti((Collection) null)", () -> mc.getMulti((Collection<String>) null));
        refused("getMulti((String[]) null)", () -> mc.getMulti((String[]) null));
        refused("getMulti(null element)", () -> mc.getMulti(Arrays.asList("a", null)));
        refused("getMulti(null vararg)", () -> mc.getMulti("a", null));
        refused("setBytes null data", () -> mc.setBytes("n:k", null, 0, 0));
        refused("set null key", () -> mc.set(null, "v"));
        refused("set null value", () -> mc.set("n:k", null));
        refused("get null key", () -> mc.get(null));
        refused("incr null key", () -> mc.incr(null, 1));
        refused("serverIndexFor null", () -> mc.serverIndexFor(null));
        Mcpool.Builder b = Mcpool.builder();
        refused("servers(null)", () -> b.servers((String[]) null));
        refused("servers(null element)", () -> b.servers("127.0.0.1:1", null));
        refused("server(null, 1)", () -> b.server(null, 1));
        refused("distribution(null)", () -> b.distribution(null));
        refused("failover(null)", () -> b.failover(null));
        refused("protocol(null)", () -> b.protocol(null));
        refused("compressionCodec(null)", () -> b.compressionCodec(null));
        refused("keyPrefix(null)", () -> b.keyPrefix(null));
        refused("transcoder(null)", () -> b.transcoder(null));
        refused("WhalinTranscoder.decode(null)", () -> new WhalinTranscoder().decode(null, Kind.TEXT));
        refused("SpyTranscoder.decode(null)", () -> new SpyTranscoder().decode(null, Kind.BYTES));
        refused("a transcoder that encodes as null", () -> {
            try (Mcpool p = Mcpool.builder().servers(server.addr()).transcoder(new Transcoder() {
                public CachedData encode(Object v) { return null; }
                public Object decode(byte[] d, Kind k) { return d; }
            }).build()) {
                p.set("n:k", "v");
            }
        });

        // Whalin's API
        refused("MemCachedClient.getMulti(null)", () -> whalin.getMulti(null));
        refused("MemCachedClient.getMultiArray(null)", () -> whalin.getMultiArray(null));
        refused("MemCachedClient.getMulti(null element)", () -> whalin.getMulti(new String[] {"a", null}));
        refused("storeCounter(k, (Long) null)", () -> whalin.storeCounter("n:counter", (Long) null));
        refused("storeCounter(null, 1L)", () -> whalin.storeCounter(null, Long.valueOf(1)));
        refused("storeCounter(null, 1)", () -> whalin.storeCounter(null, 1));
        refused("set null key", () -> whalin.set(null, "v"));
        refused("set null value", () -> whalin.set("n:k", null));
        refused("getCounter null", () -> whalin.getCounter(null));
        refused("new MemCachedClient((String) null)", () -> new MemCachedClient((String) null));
        refused("SockIOPool.getInstance(null)", () -> SockIOPool.getInstance(null));
        SockIOPool p = SockIOPool.getInstance("hardening-null-server");
        p.setServers(new String[] {server.addr(), null});
        ClientException e = refused("initialize with a null server", p::initialize);
        assertTrue(e.getMessage(), e.getMessage().contains("server 1 is null"));
        assertFalse(p.isInitialized());
    }

    static final String NON_BMP_AND_NUL = "a\u0000b \ud83d\ude00 caf\u00e9 \ud834\udd1e";
    /** Its UTF-8, spelled out (not from getBytes, which the binding itself used to rely on). */
    static final byte[] NON_BMP_AND_NUL_UTF8 = {'a', 0, 'b', ' ', (byte) 0xF0, (byte) 0x9F, (byte) 0x98, (byte) 0x80,
        ' ', 'c', 'a', 'f', (byte) 0xC3, (byte) 0xA9, ' ', (byte) 0xF0, (byte) 0x9D, (byte) 0x84, (byte) 0x9E};

    @Test
    public void item11NonBmpAndNulStringsAreStoredAsRealUtf8AndReadBackExactly() throws Exception {
        for (String protocol : new String[] {"text", "meta", "binary"}) {
            for (Transcoder t : new Transcoder[] {new WhalinTranscoder(), new SpyTranscoder()}) {
                try (Mcpool c = Mcpool.builder().servers(server.addr()).protocol(protocol).transcoder(t).build()) {
                    String k = "u11:" + protocol + ":" + t.getClass().getSimpleName() + ":\ud83d\ude00";
                    assertTrue(c.set(k, NON_BMP_AND_NUL));
                    assertEquals(protocol, NON_BMP_AND_NUL, c.get(k));
                    assertArrayEquals(protocol, NON_BMP_AND_NUL_UTF8, c.getBytes(k).data);
                    assertArrayEquals(protocol, NON_BMP_AND_NUL_UTF8, rawGet(k.getBytes(StandardCharsets.UTF_8)));
                    assertEquals(protocol, NON_BMP_AND_NUL, c.getMulti(k).get(k));
                }
            }
        }
        assertTrue(whalin.set("u11:whalin", new StringBuilder(NON_BMP_AND_NUL)));
        assertEquals(NON_BMP_AND_NUL, whalin.get("u11:whalin").toString());
        assertArrayEquals(NON_BMP_AND_NUL_UTF8, rawGet("u11%3Awhalin".getBytes(StandardCharsets.US_ASCII))); // URL-encoded, as Whalin
        assertNull(rawGet("u11:whalin".getBytes(StandardCharsets.US_ASCII)));
    }

    /** Keys with NUL and a character outside the BMP (meta and binary allow any bytes): the
     * key memcached holds is exactly the key's UTF-8, whichever protocol wrote it. */
    @Test
    public void item11NulAndNonBmpKeysAreTheirRealUtf8Bytes() throws Exception {
        String k = "u11:nul\u0000key \ud83d\ude00";
        byte[] utf8 = {'u', '1', '1', ':', 'n', 'u', 'l', 0, 'k', 'e', 'y', ' ', (byte) 0xF0, (byte) 0x9F, (byte) 0x98, (byte) 0x80};
        try (Mcpool meta = Mcpool.builder().servers(server.addr()).protocol("meta").build();
             Mcpool binary = Mcpool.builder().servers(server.addr()).protocol("binary").build()) {
            assertTrue(meta.set(k, "written by meta"));
            assertArrayEquals("written by meta".getBytes(StandardCharsets.US_ASCII), rawMetaGet(utf8));
            assertEquals("written by meta", binary.get(k));
            assertTrue(binary.set(k, "written by binary"));
            assertArrayEquals("written by binary".getBytes(StandardCharsets.US_ASCII), rawMetaGet(utf8));
            assertEquals("written by binary", meta.getMulti(k).get(k));
        }
        // The text protocol cannot carry it: refused by the core, never mangled.
        assertEquals("MCPOOL_INVALID_KEY", refused("text", () -> mc.set(k, "x")).statusName());
    }

    @Test
    public void item11NonBmpConfigurationTextReachesTheCoreAsUtf8() {
        // Before: the name crossed JNI as modified UTF-8 (CESU-8), which the core refused as
        // "not UTF-8" instead of naming it.
        ClientException e = refused("distribution", () ->
            Mcpool.builder().servers(server.addr()).distribution("no-such-\ud83d\ude00").build());
        assertEquals("MCPOOL_CONFIG", e.statusName());
        assertTrue(e.getMessage(), e.getMessage().contains("no-such-\ud83d\ude00"));
        assertFalse(e.getMessage(), e.getMessage().contains("not UTF-8"));
        // NUL was C0 80 (not UTF-8 either); now it is a NUL, which no option name contains.
        e = refused("distribution with NUL", () ->
            Mcpool.builder().servers(server.addr()).distribution("whalin-native\u0000").build());
        assertFalse(e.getMessage(), e.getMessage().contains("not UTF-8"));
        e = refused("server address with unpaired surrogate", () -> Mcpool.builder().servers("127.0.0.1:1\ud800").build());
        assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
        assertTrue(e.getMessage(), e.getMessage().contains("server address"));
        refused("stats group with unpaired surrogate", () -> mc.stats("items\ud800"));
    }

    /** A memcached listening on a unix socket at a path with a character outside the BMP:
     * the path must reach connect(2) as its UTF-8 bytes and come back from servers() exactly. */
    @Test
    public void item11NonBmpUnixSocketPathIsConnectedToAndReadBackExactly() throws Exception {
        Path dir = Files.createTempDirectory("mcpool-jni");
        String sub = "\ud83d\ude00\u00e9"; // U+1F600 U+00E9
        String path = dir + "/" + sub + "/mc.sock";
        // The shell makes the directory and starts memcached, so no Java file or process API
        // has to encode the path (they use the platform's encoding, which may not be UTF-8).
        Path script = dir.resolve("start.sh");
        String sh = "set -e\nmkdir -p '" + dir + "/" + sub + "'\n"
            + "memcached -s '" + path + "' -U 0 -m 16 -t 1" + ("root".equals(System.getProperty("user.name")) ? " -u root" : "")
            + " >/dev/null 2>&1 &\necho $!\n"
            + "i=0; while [ ! -S '" + path + "' ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done\n"
            + "if [ -S '" + path + "' ]; then echo ready; else echo not-ready; fi\n";
        Files.write(script, sh.getBytes(StandardCharsets.UTF_8));
        Process p = new ProcessBuilder("sh", script.toString()).redirectErrorStream(true).start();
        String pid = line(p.getInputStream());
        ProcessHandle memcached = ProcessHandle.of(Long.parseLong(pid.trim())).orElseThrow();
        try {
            assertEquals("ready", line(p.getInputStream()));
            assertTrue(p.waitFor(10, TimeUnit.SECONDS));
            try (Mcpool c = Mcpool.builder().servers(path).minIdle(0).build()) {
                assertEquals(Arrays.asList(path), c.servers());
                assertTrue(c.set("unix:k", "over the socket"));
                assertEquals("over the socket", c.get("unix:k"));
                assertTrue(c.stats(null).containsKey(path));
            }
        } finally {
            memcached.destroy();
            memcached.onExit().get(5, TimeUnit.SECONDS);
            new ProcessBuilder("rm", "-rf", dir.toString()).start().waitFor(10, TimeUnit.SECONDS);
        }
        assertFalse(new File(dir.toString()).exists());
    }

    // -------------------------------------------------------------------------------- item 4

    @Test
    public void item4NegativeSockIOPoolWeightIsRefusedAtInitialize() {
        for (int w : new int[] {-1, Integer.MIN_VALUE, 0}) {
            SockIOPool p = SockIOPool.getInstance("hardening-weight" + w);
            p.setServers(new String[] {server.addr()});
            p.setWeights(new Integer[] {w});
            for (int alg : new int[] {SockIOPool.NATIVE_HASH, SockIOPool.CONSISTENT_HASH}) {
                p.setHashingAlg(alg);
                ClientException e = refused("weight " + w, p::initialize);
                assertTrue(e.toString(), e instanceof ConfigurationException); // as a weight field of 0
                assertEquals("MCPOOL_CONFIG", e.statusName());
                assertTrue(e.getMessage(), e.getMessage().contains("weight " + w));
                assertFalse(p.isInitialized());
                refused("client of an uninitialized pool", () -> new MemCachedClient("hardening-weight" + w).get("k"));
            }
        }
    }

    @Test
    public void item4NegativeBuilderWeightAndNumbersAreRefusedAtBuild() {
        // A weight below 1, beside the address or in it, is the core's configuration error
        // naming the server (it was a ClientException MCPOOL_INVALID_ARGUMENT beside it, a
        // ConfigurationException in it).
        for (Call c : new Call[] {
                () -> Mcpool.builder().server(server.addr(), -1).build(),
                () -> Mcpool.builder().server(server.addr(), Integer.MIN_VALUE).build(),
                () -> Mcpool.builder().server(server.addr(), 0).build(),
                () -> Mcpool.builder().server(server.addr() + ":0", 1).build()}) {
            ClientException e = refused("server weight below 1", c);
            assertTrue(e.toString(), e instanceof ConfigurationException);
            assertEquals("MCPOOL_CONFIG", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains(server.addr())
                && e.getMessage().contains("weight must be at least 1"));
        }
        ClientException e;
        // The core's option table refuses them, naming its option and the value.
        e = refused("maxValueSize -1", () -> Mcpool.builder().servers(server.addr()).maxValueSize(-1).build());
        assertEquals("MCPOOL_CONFIG", e.statusName());
        assertTrue(e.getMessage(), e.getMessage().contains("max_value_size") && e.getMessage().contains("\"-1\""));
        e = refused("ioTimeoutMillis -5", () -> Mcpool.builder().servers(server.addr()).ioTimeoutMillis(-5).build());
        assertTrue(e.getMessage(), e.getMessage().contains("io_timeout") && e.getMessage().contains("-5ms"));
    }
}
