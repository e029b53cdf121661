package io.mcpool;

import static org.junit.Assert.*;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/** Options by name through the core's table (mcpool_config_set), and the exception classes
 * from the core's status classifier (mcpool_status_class). */
public class OptionsTest extends ServerTestBase {

    /** Whether the core speaks TLS, asked without trying an option (tester finding secure 3). */
    @Test
    public void tlsSupportedSaysWhetherATlsOptionIsTaken() {
        Mcpool.Builder b = Mcpool.builder().servers("127.0.0.1:1").tlsInsecureSkipVerify(true);
        if (Mcpool.tlsSupported()) {
            b.build().close();
        } else {
            try {
                b.build().close();
                fail("a TLS option taken by a core without TLS");
            } catch (McpoolException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("unsupported: TLS"));
            }
        }
    }

    @Test
    public void theCoreTableIsListed() {
        List<String> names = Mcpool.optionNames();
        for (String n : new String[] {"operation_timeout", "protocol", "failover", "tls_ca_file", "sasl_username", "preset"}) {
            assertTrue(n + " in " + names, names.contains(n));
            assertNotNull(n, Mcpool.optionDoc(n));
        }
        assertNull(Mcpool.optionDoc("no_such_option"));
        // Spelled as option() accepts it: '-' for '_', any ASCII case.
        assertNotNull(Mcpool.optionDoc("io_timeout"));
        assertEquals(Mcpool.optionDoc("io_timeout"), Mcpool.optionDoc("io-timeout"));
        assertEquals(Mcpool.optionDoc("io_timeout"), Mcpool.optionDoc("IO-Timeout"));
    }

    /** The Builder's servers and options apply in call order, as the C ABI's calls do
     * (mcpool_config_set "servers" replaces the list so far, mcpool_config_add_server
     * appends): servers()/server() after option("servers", ...) were dropped (the list was
     * added first and the option, applied after it, replaced it). No I/O: labels only. */
    @Test
    public void serversAndTheServersOptionApplyInCallOrder() {
        String s1 = "127.0.0.1:1", s2 = "127.0.0.1:2", s3 = "127.0.0.1:3", s4 = "127.0.0.1:4";
        java.util.function.Function<Mcpool.Builder, List<String>> labels = b -> {
            try (Mcpool mc = b.minIdle(0).build()) {
                return mc.servers();
            }
        };
        assertEquals(List.of(s2, s1), labels.apply(Mcpool.builder().option("servers", s2).servers(s1)));
        assertEquals(List.of(s2, s3), labels.apply(Mcpool.builder().option("servers", s2).server(s3, 5)));
        assertEquals(List.of(s2), labels.apply(Mcpool.builder().servers(s1).option("servers", s2)));
        assertEquals(List.of(s2), labels.apply(Mcpool.builder().server(s3, 5).option("servers", s2)));
        assertEquals(List.of(s2, s4, s3), labels.apply(Mcpool.builder().servers(s1).option("servers", s2 + "," + s4)
            .ioTimeoutMillis(500).server(s3, 2)));
        assertEquals(List.of(s4, s1), labels.apply(Mcpool.builder().option("servers", s2).servers(s3)
            .option("SERVERS", s4).servers(s1)));
        // what build() reads back from the options (value_format) is unaffected by servers between
        try (Mcpool mc = Mcpool.builder().option("servers", s2).valueFormat("whalin").servers(s1).minIdle(0).build()) {
            assertEquals(List.of(s2, s1), mc.servers());
            assertEquals("whalin", mc.valueFormat);
        }
    }

    @Test
    public void aKeyPrefixTheTextProtocolCannotSendIsRefusedAtBuild() {
        // It used to build, then every key failed (MCPOOL_INVALID_KEY "w p:k+k").
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).keyPrefix("w p:").build()) {
            fail("built with a key prefix the text protocol cannot send");
        } catch (ConfigurationException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("key_prefix \"w p:\""));
            assertTrue(e.getMessage(), e.getMessage().contains("text protocol"));
        }
        SockIOPool pool = SockIOPool.getInstance("spaced-prefix");
        pool.setServers(new String[] {server.addr()});
        pool.setOption("key_prefix", "w p:");
        try {
            pool.initialize();
            fail("initialized with a key prefix the text protocol cannot send");
        } catch (ConfigurationException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("key_prefix"));
        }
        assertFalse(pool.isInitialized());
        // binary and meta send any byte in a key: it builds and works
        for (String proto : new String[] {"binary", "meta"}) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(proto).keyPrefix("w p:").build()) {
                assertTrue(proto, mc.set("k", "v"));
                assertEquals(proto, "v", mc.get("k"));
            }
        }
    }

    /** A key prefix given as bytes is sent as those bytes (a Latin-1 namespace, which no
     * String can spell): the item is under "caf\xe9:k", as memcached shows it (tester finding
     * keys2 2: only UTF-8 text could be given); a control byte works on meta and binary and
     * is refused on text when the client is built. */
    @Test
    public void aKeyPrefixOfBytesIsSentAsGiven() throws Exception {
        byte[] latin1 = {'c', 'a', 'f', (byte) 0xe9, ':'};
        for (String proto : new String[] {"text", "meta", "binary"}) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(proto).keyPrefixBytes(latin1).build()) {
                String v = "bp-" + proto;
                assertTrue(proto, mc.set("k", v));
                assertEquals(proto, v, mc.get("k"));
                // the raw item, read over a socket of our own
                String[] hp = server.addr().split(":");
                try (java.net.Socket sock = new java.net.Socket(hp[0], Integer.parseInt(hp[1]))) {
                    java.io.OutputStream out = sock.getOutputStream();
                    out.write(new byte[] {'g', 'e', 't', ' ', 'c', 'a', 'f', (byte) 0xe9, ':', 'k', '\r', '\n'});
                    out.flush();
                    java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(
                        sock.getInputStream(), java.nio.charset.StandardCharsets.ISO_8859_1));
                    assertTrue(proto, in.readLine().startsWith("VALUE caf\u00e9:k "));
                    assertEquals(proto, v, in.readLine());
                }
            }
        }
        byte[] control = {'a', 1, ':'};
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).keyPrefixBytes(control).build()) {
            fail("built with a key prefix the text protocol cannot send");
        } catch (ConfigurationException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("text protocol"));
        }
        for (String proto : new String[] {"binary", "meta"}) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).protocol(proto).keyPrefixBytes(control).build()) {
                assertTrue(proto, mc.set("k", "c"));
                assertEquals(proto, "c", mc.get("k"));
            }
        }
    }

    @Test
    public void twoSpellingsAreOneOption() {
        // The last setting wins whatever the spelling (they were two entries, and the one
        // set first under another spelling was applied last).
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).option("protocol", "binary")
                 .option("Protocol", "meta").option("protocol", "text").build()) {
            assertTrue(mc.set("opt:spell", "v", 0));
            try {
                mc.getLease("opt:spell", 1, 0); // meta only
                fail("the protocol set last (text) was not the one applied");
            } catch (ClientException e) {
                assertEquals("MCPOOL_UNSUPPORTED", e.statusName());
            }
        }
    }

    @Test
    public void everyOptionByName() {
        for (String proto : new String[] {"text", "meta", "binary"}) {
            try (Mcpool mc = Mcpool.builder().servers(server.addr()).option("protocol", proto)
                     .option("operation_timeout", "2s").operationTimeoutMillis(1500).failover("rehash")
                     .failureLimit(3).retryTimeoutMaxMillis(10_000).build()) {
                assertTrue(mc.set("opt:" + proto, proto, 0));
                assertEquals(proto, mc.get("opt:" + proto));
            }
        }
        try (Mcpool mc = Mcpool.builder().preset("whalin").servers(server.addr()).build()) {
            assertTrue(mc.set("opt:preset", "w", 0));
            assertEquals("w", mc.get("opt:preset"));
        }
    }

    @Test
    public void unknownNamesAndBadValuesNameTheOption() {
        try {
            Mcpool.builder().servers(server.addr()).option("io_timout", "1s").build().close();
            fail();
        } catch (ConfigurationException e) { // the core's CONFIGURATION class, a ClientException
            assertEquals("MCPOOL_CONFIG", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains("io_timout") && e.getMessage().contains("io_timeout"));
        }
        try {
            Mcpool.builder().servers(server.addr()).option("operation_timeout", "soon").build().close();
            fail();
        } catch (ClientException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("operation_timeout") && e.getMessage().contains("soon"));
        }
        try {
            Mcpool.builder().servers(server.addr()).preset("memcachedb").build().close();
            fail();
        } catch (ClientException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("memcachedb"));
        }
    }

    @Test
    public void sockIOPoolTakesCoreOptions() {
        SockIOPool p = SockIOPool.getInstance("options-pool");
        p.setServers(new String[] {server.addr()});
        p.setOption("operation_timeout", "2s");
        p.setOption("protocol", "meta");
        p.initialize();
        try {
            MemCachedClient mc = new MemCachedClient("options-pool");
            assertTrue(mc.set("opt:pool", "v"));
            assertEquals("v", mc.get("opt:pool"));
        } finally {
            p.shutDown();
        }
        SockIOPool bad = SockIOPool.getInstance("options-pool-bad");
        bad.setServers(new String[] {server.addr()});
        bad.setOption("protocol", "smoke");
        try {
            bad.initialize();
            fail();
        } catch (ClientException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("protocol"));
        }
    }

    @Test
    public void setMultiAndDeleteMultiAreBatches() throws Exception {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).build()) {
            Map<String, Object> values = new java.util.LinkedHashMap<>();
            values.put("batch:text", "t");
            values.put("batch:int", 42L);
            values.put("batch:bytes", new byte[] {1, 2, 3});
            values.put("batch:short", "expires");
            Map<String, Boolean> r = mc.setMulti(values, k -> k.equals("batch:short") ? 1 : 0);
            assertEquals(4, r.size());
            for (boolean b : r.values()) assertTrue(b);
            assertEquals("t", mc.get("batch:text"));
            assertEquals(42L, mc.get("batch:int"));
            assertArrayEquals(new byte[] {1, 2, 3}, (byte[]) mc.get("batch:bytes"));
            Object gone = "expires";
            for (int i = 0; i < 80 && gone != null; i++) { // up to 4 s: its own TTL of 1 s
                Thread.sleep(50);
                gone = mc.get("batch:short");
            }
            assertNull("the item with TTL 1 expired", gone);
            assertEquals("t", mc.get("batch:text"));
            Map<String, Boolean> d = mc.deleteMulti(java.util.Arrays.asList("batch:text", "batch:missing", "batch:int"));
            assertEquals(Boolean.TRUE, d.get("batch:text"));
            assertEquals(Boolean.FALSE, d.get("batch:missing"));
            assertEquals(Boolean.TRUE, d.get("batch:int"));
            assertNull(mc.get("batch:text"));
            try {
                mc.setMulti(java.util.Collections.singletonMap("bad key", "v"), 0);
                fail();
            } catch (PartialBatchException e) { // that key's own ClientException, in errors()
                assertEquals("MCPOOL_INVALID_KEY", e.statusName());
                assertTrue(e.errors().get("bad key") instanceof ClientException);
                assertTrue(e.answers().isEmpty());
            }
        }
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            port = s.getLocalPort();
        }
        try (Mcpool dead = Mcpool.builder().servers("127.0.0.1:" + port).connectTimeoutMillis(500).minIdle(0).build()) {
            try {
                dead.setMulti(java.util.Collections.singletonMap("k", "v"), 0);
                fail();
            } catch (PartialBatchException e) { // strict: every failed key's error, once all were tried
                assertTrue(e.getCause() instanceof ConnectionException);
                assertTrue(e.errors().get("k") instanceof ConnectionException);
            }
            try {
                dead.deleteMulti(java.util.Collections.singletonList("k"));
                fail();
            } catch (PartialBatchException e) {
                assertTrue(e.errors().get("k") instanceof ConnectionException);
            }
        }
    }

    /** A key listed twice is one entry of the result map, true when either occurrence did
     * it: deleteMulti([k, k]) deletes k with the first (the second finds nothing), so k maps
     * to true; it mapped to false (the second occurrence's NOT_FOUND overwrote it). */
    @Test
    public void aKeyListedTwiceIsOneAnswer() {
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).build()) {
            assertTrue(mc.set("dup:d1", "v", 0));
            Map<String, Boolean> d = mc.deleteMulti(java.util.Arrays.asList("dup:d1", "dup:d1", "dup:none", "dup:none"));
            assertEquals(2, d.size());
            assertEquals(Boolean.TRUE, d.get("dup:d1"));
            assertEquals(Boolean.FALSE, d.get("dup:none"));
            assertNull(mc.get("dup:d1"));
            d = mc.deleteMulti(java.util.Arrays.asList("dup:d1", "dup:d1"));
            assertEquals(java.util.Collections.singletonMap("dup:d1", false), d);
            // getMulti: a key asked twice is one entry with its value, a miss none.
            assertTrue(mc.set("dup:g", "v", 0));
            assertEquals(java.util.Collections.singletonMap("dup:g", "v"), mc.getMulti("dup:g", "dup:none", "dup:g", "dup:none"));
        }
    }

    /** A deliberately broken fake server: answers every request line with a line no
     * memcached sends. */
    static final class GarbageServer implements AutoCloseable {
        final ServerSocket ss;
        final Thread t;

        GarbageServer() throws Exception {
            ss = new ServerSocket(0, 8, InetAddress.getByName("127.0.0.1"));
            t = new Thread(() -> {
                for (int n = 0; n < 16 && !ss.isClosed(); n++) {
                    try (Socket s = ss.accept()) {
                        s.setSoTimeout(5000);
                        InputStream in = s.getInputStream();
                        OutputStream out = s.getOutputStream();
                        byte[] buf = new byte[4096];
                        while (in.read(buf) > 0) out.write("WHAT IS THIS\r\n".getBytes(StandardCharsets.US_ASCII));
                    } catch (Exception e) {
                        // closed: the test is over
                    }
                }
            });
            t.setDaemon(true);
            t.start();
        }

        String addr() { return "127.0.0.1:" + ss.getLocalPort(); }

        @Override
        public void close() throws Exception { ss.close(); }
    }

    @Test
    public void exceptionClassesFollowTheCoreClassifier() throws Exception {
        try (GarbageServer g = new GarbageServer();
             Mcpool mc = Mcpool.builder().servers(g.addr()).ioTimeoutMillis(2000).minIdle(0).build()) {
            try {
                mc.get("k");
                fail("a reply that breaks the protocol is an error");
            } catch (ServerException e) {
                assertEquals("MCPOOL_PROTOCOL", e.statusName()); // PROTOCOL: a server-side class
            }
        }
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).build()) {
            try {
                mc.get("bad key");
                fail();
            } catch (ClientException e) {
                assertEquals("MCPOOL_INVALID_KEY", e.statusName());
            }
            try {
                mc.getLease("k", 1, 0);
                fail();
            } catch (ConfigurationException e) {
                assertEquals("MCPOOL_UNSUPPORTED", e.statusName()); // configuration class
            }
        }
        // MemCachedClient answers the server-side class (Whalin's null), and counts it.
        try (GarbageServer g = new GarbageServer()) {
            SockIOPool p = SockIOPool.getInstance("options-garbage");
            p.setServers(new String[] {g.addr()});
            p.setInitConn(0);
            p.setMinConn(0);
            p.initialize();
            try {
                MemCachedClient mc = new MemCachedClient("options-garbage");
                assertNull(mc.get("k"));
                assertEquals(1L, (long) mc.metrics().get(g.addr()).get("suppressed_errors"));
            } finally {
                p.shutDown();
            }
        }
    }
    /** compressionThreshold(n) is the core's compression_threshold: 0 compresses every value
     * (as Python's compression_threshold=0 and the CLI's --compression-threshold 0), and a
     * negative count is refused naming the option, as on every other surface. Before, Java's
     * 0 (or -1) meant "never compress": the same number, the opposite meaning. Turning
     * compression off is compression(false). */
    @Test
    public void compressionThresholdIsTheCoresNumber() throws Exception {
        String text = "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab"; // 56 bytes, compressible
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).compressionThreshold(0).build()) {
            mc.set("opt:thr0", text);
            TestServer.RawItem raw = server.raw("opt:thr0");
            assertEquals("zlib codec field", 0x00100000, raw.flags & 0x00300000);
            assertTrue("compressed: " + raw.data.length + " bytes", raw.data.length < text.length());
            assertEquals(text, mc.get("opt:thr0"));
        }
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).compression(false).compressionThreshold(0).build()) {
            mc.set("opt:off", text);
            TestServer.RawItem raw = server.raw("opt:off");
            assertEquals(0, raw.flags & 0x00300000);
            assertEquals(text.length(), raw.data.length);
        }
        try {
            Mcpool.builder().servers(server.addr()).compressionThreshold(-1).build().close();
            fail("compressionThreshold(-1) was accepted");
        } catch (ConfigurationException e) {
            assertEquals("MCPOOL_CONFIG", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains("compression_threshold"));
        }
    }
    /** compressionCodec's Javadoc against the stored flags: auto is the value format's codec
     * (zlib under the default mcpool format, gzip flag 2 under whalin), a codec set by name is
     * marked in mcpool's codec field, and a codec the format cannot mark is refused. (The
     * Javadoc said gzip, flag 2, was the default everywhere.) */
    @Test
    public void compressionCodecDefaultsAndFlagsAreTheJavadocs() throws Exception {
        StringBuilder b = new StringBuilder();
        while (b.length() < 40000) b.append("compressible text ");
        String text = b.toString();
        try (Mcpool mc = Mcpool.builder().servers(server.addr()).build();
             Mcpool gz = Mcpool.builder().servers(server.addr()).compressionCodec("gzip").build();
             Mcpool wh = Mcpool.builder().servers(server.addr()).valueFormat("whalin").build()) {
            mc.set("opt:codec:auto", text);
            gz.set("opt:codec:gzip", text);
            wh.set("opt:codec:whalin", text);
            TestServer.RawItem auto = server.raw("opt:codec:auto"), gzip = server.raw("opt:codec:gzip"),
                whalin = server.raw("opt:codec:whalin");
            assertEquals(0x00100000, auto.flags & 0x00300000);
            assertEquals(0x78, auto.data[0] & 0xff); // a zlib stream
            assertEquals(0x00200000, gzip.flags & 0x00300000);
            assertEquals(0x1f, gzip.data[0] & 0xff); // a gzip stream
            assertEquals(32 | 2, whalin.flags); // MARKER_STRING, compressed (gzip)
            assertEquals(0x1f, whalin.data[0] & 0xff);
        }
        try {
            Mcpool.builder().servers(server.addr()).valueFormat("whalin").compressionCodec("zlib").build().close();
            fail("zlib under whalin was accepted");
        } catch (ConfigurationException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("compression_codec"));
        }
    }

    /** Tester finding retest44 5: compressionCodec is named as the core's compression_codec;
     * the deprecated compressionFormat, kept for its callers, does exactly the same (the
     * codec field, bits 20-21, under the mcpool format), not the core's legacy
     * compression_format layout (gzip marked by flag bit 2). */
    @Test
    @SuppressWarnings("deprecation")
    public void compressionFormatIsCompressionCodec() throws Exception {
        StringBuilder b = new StringBuilder();
        while (b.length() < 40000) b.append("compressible text ");
        try (Mcpool codec = Mcpool.builder().servers(server.addr()).compressionCodec("gzip").build();
             Mcpool old = Mcpool.builder().servers(server.addr()).compressionFormat("gzip").build()) {
            codec.set("opt:cf:codec", b.toString());
            old.set("opt:cf:old", b.toString());
            TestServer.RawItem c = server.raw("opt:cf:codec"), o = server.raw("opt:cf:old");
            assertEquals(0x00200000, c.flags & 0x00300000);
            assertEquals(c.flags, o.flags);
            assertEquals(0x1f, o.data[0] & 0xff);
            assertEquals(b.toString(), old.get("opt:cf:codec"));
        }
        try {
            Mcpool.builder().servers(server.addr()).valueFormat("whalin").compressionFormat("zlib").build().close();
            fail("zlib under whalin was accepted");
        } catch (ConfigurationException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("compression_codec"));
        }
        java.lang.reflect.Method m = Mcpool.Builder.class.getMethod("compressionFormat", String.class);
        assertTrue(m.isAnnotationPresent(Deprecated.class));
    }

    /** The client side's established TCP connections to port in /proc/net/tcp and tcp6: each
     * one's timer ({@code tr}: 2 is the keepalive timer) and when it is due (clock ticks). */
    static List<long[]> clientSocketsTo(int port) throws Exception {
        List<long[]> found = new java.util.ArrayList<>();
        String want = String.format(":%04X", port);
        for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
            java.nio.file.Path p = java.nio.file.Paths.get(table);
            if (!java.nio.file.Files.exists(p)) continue;
            List<String> lines = java.nio.file.Files.readAllLines(p);
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                // sl local rem st queues tr:when ...: established (01), to the port
                if (f.length < 6 || !f[3].equals("01") || !f[2].endsWith(want)) continue;
                String[] timer = f[5].split(":");
                found.add(new long[] {Long.parseLong(timer[0], 16), Long.parseLong(timer[1], 16)});
            }
        }
        return found;
    }

    /** tcpKeepalive and tcpKeepidleSeconds are the core's tcp_keepalive and tcp_keepidle
     * (retest27 7: the Builder had nothing typed for keepalive): the kernel's keepalive timer
     * runs on the pooled connection, due within the idle time given (7 s, not the system's two
     * hours); without them no keepalive timer runs; a negative idle time is the core's
     * refusal, naming the option. */
    @Test
    public void tcpKeepaliveArmsTheKernelsKeepaliveTimer() throws Exception {
        try (TestServer own = new TestServer()) {
            try (Mcpool plain = Mcpool.builder().servers(own.addr()).build()) {
                plain.set("opt:ka", "v");
                List<long[]> sockets = clientSocketsTo(own.port);
                assertFalse("the pooled connection is listed", sockets.isEmpty());
                for (long[] s : sockets) assertNotEquals("a keepalive timer without tcpKeepalive", 2, s[0]);
            }
            try (Mcpool ka = Mcpool.builder().servers(own.addr()).tcpKeepalive(true).tcpKeepidleSeconds(7).build()) {
                ka.set("opt:ka", "v");
                List<long[]> sockets = clientSocketsTo(own.port);
                assertFalse("the pooled connection is listed", sockets.isEmpty());
                for (long[] s : sockets) {
                    assertEquals("the keepalive timer runs", 2, s[0]);
                    assertTrue("due within the 7 s idle time: " + s[1], s[1] <= 7 * 1000); // at most 1000 ticks a second
                }
            }
        }
        try {
            Mcpool.builder().servers(server.addr()).tcpKeepalive(true).tcpKeepidleSeconds(-1).build().close();
            fail("a negative tcp_keepidle was taken");
        } catch (ConfigurationException e) {
            assertEquals("MCPOOL_CONFIG", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains("tcp_keepidle"));
        }
    }
}
