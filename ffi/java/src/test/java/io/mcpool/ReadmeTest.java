package io.mcpool;

import static org.junit.Assert.*;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Every {@code ```java} block of ffi/java/README.md, verbatim, compiled against the binding's
 * classes and run against private memcached servers, so the README cannot show code that
 * does not compile or throws (its Whalin example cast an Integer to Long: a
 * ClassCastException under the whalin format). A block is a list of statements: it becomes
 * the body of a {@code main} with {@code io.mcpool.*} and {@code java.util.*} imported. The
 * only change made to it: each distinct {@code a.b.c.d:port} address is replaced by one of
 * the test's loopback servers, in order of first appearance. The README's shell blocks are
 * jar-check's (make test runs it): the jar alone on a class path, as a user runs it.
 */
public class ReadmeTest {
    static TestServer[] servers;

    @BeforeClass
    public static void start() throws Exception {
        servers = new TestServer[] {new TestServer(), new TestServer()};
    }

    @AfterClass
    public static void stop() throws Exception {
        for (TestServer s : servers) s.close();
    }

    /** A {@code ```java} block and the README line it starts on. */
    static final class Block {
        final int line;
        final String code;

        Block(int line, String code) {
            this.line = line;
            this.code = code;
        }
    }

    static List<Block> javaBlocks(Path readme) throws IOException {
        List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
        List<Block> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).trim().equals("```java")) continue;
            int start = i + 1;
            StringBuilder b = new StringBuilder();
            int j = start;
            for (; j < lines.size() && !lines.get(j).trim().equals("```"); j++) b.append(lines.get(j)).append('\n');
            assertTrue(readme + ":" + (start) + ": a ```java block with no closing ```", j < lines.size());
            out.add(new Block(start + 1, b.toString()));
            i = j;
        }
        return out;
    }

    private static final Pattern ADDR = Pattern.compile("\\b\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}:\\d+\\b");

    /** The block with each distinct address replaced by a test server's (first seen, first server). */
    static String withTestServers(String code) {
        Map<String, String> map = new LinkedHashMap<>();
        Matcher m = ADDR.matcher(code);
        StringBuffer out = new StringBuffer();
        while (m.find()) {
            String a = m.group();
            if (!map.containsKey(a)) {
                assertTrue("the README block names more servers than the test starts: " + map.keySet() + " and " + a,
                    map.size() < servers.length);
                map.put(a, servers[map.size()].addr());
            }
            m.appendReplacement(out, Matcher.quoteReplacement(map.get(a)));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The test servers' commands so far (memcached's cmd_get + cmd_set, summed). */
    static long traffic() {
        Mcpool.Builder b = Mcpool.builder().minIdle(0);
        for (TestServer s : servers) b.servers(s.addr());
        long n = 0;
        try (Mcpool mc = b.build()) {
            for (Map<String, String> st : mc.stats(null).values()) {
                n += Long.parseLong(st.get("cmd_get")) + Long.parseLong(st.get("cmd_set"));
            }
        }
        return n;
    }

    @Test
    public void everyJavaBlockOfTheReadmeCompilesAndRuns() throws Exception {
        Path readme = Paths.get(System.getProperty("mcpool.readme", "README.md")).toAbsolutePath();
        assertTrue(readme + " not found (the tests run in ffi/java)", Files.isRegularFile(readme));
        List<Block> blocks = javaBlocks(readme);
        assertTrue(readme + ": fewer ```java blocks than the two it has had (" + blocks.size() + ")", blocks.size() >= 2);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull("no system Java compiler (a JDK is needed to run the tests)", javac);
        // The binding's classes, wherever this run loads them from (build/mcpool.jar, Maven's classes).
        String classes = new File(Mcpool.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        Path dir = Files.createTempDirectory("mcpool-readme");
        try {
            for (int n = 0; n < blocks.size(); n++) {
                Block b = blocks.get(n);
                String where = readme.getFileName() + ":" + b.line;
                String name = "ReadmeBlock" + n;
                String src = "import io.mcpool.*;\nimport java.util.*;\npublic class " + name + " {\n"
                    + "public static void main(String[] args) throws Exception {\n" + withTestServers(b.code) + "}\n}\n";
                Path file = dir.resolve(name + ".java");
                Files.write(file, src.getBytes(StandardCharsets.UTF_8));
                DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
                try (StandardJavaFileManager fm = javac.getStandardFileManager(diags, null, StandardCharsets.UTF_8)) {
                    List<String> opts = List.of("-classpath", classes, "-d", dir.toString(), "-nowarn");
                    boolean ok = javac.getTask(null, fm, diags, opts, null, fm.getJavaFileObjects(file.toFile())).call();
                    if (!ok) {
                        StringBuilder msg = new StringBuilder(where + ": the block does not compile:");
                        for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics()) {
                            // lines 1-4 of the file are the wrapper: line 5 is the block's first
                            msg.append("\n  block line ").append(d.getLineNumber() - 4).append(": ").append(d.getMessage(null));
                        }
                        fail(msg.toString());
                    }
                }
                long before = traffic();
                try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, ReadmeTest.class.getClassLoader())) {
                    Method main = loader.loadClass(name).getMethod("main", String[].class);
                    try {
                        main.invoke(null, (Object) new String[0]);
                    } catch (InvocationTargetException e) {
                        AssertionError err = new AssertionError(where + ": the block throws " + e.getCause());
                        err.initCause(e.getCause());
                        throw err;
                    } finally {
                        SockIOPool.getInstance("default").shutDown(); // the Whalin block's pool
                    }
                }
                // it reached the servers (a block whose servers were never asked runs without
                // an exception: the Whalin API answers null and false)
                assertTrue(where + ": the block sent no command to memcached", traffic() > before);
            }
        } finally {
            try (Stream<Path> all = Files.walk(dir)) {
                all.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    /** The Whalin block reads back what it stored, as the types it stored them: under the
     * pool's whalin format an Integer stays an Integer (Whalin's marker 4), a Long a Long;
     * under another format both are the core's integer kind, read back as Long. */
    @Test
    public void theWhalinBlocksTypesAreTheFormatsTypes() {
        SockIOPool pool = SockIOPool.getInstance("readme-types");
        pool.setServers(new String[] {servers[0].addr()});
        pool.initialize();
        try {
            MemCachedClient mc = new MemCachedClient("readme-types");
            assertTrue(mc.set("readme:int", 42));
            assertEquals(Integer.valueOf(42), mc.get("readme:int"));
            assertTrue(mc.set("readme:long", 42L));
            assertEquals(Long.valueOf(42), mc.get("readme:long"));
        } finally {
            pool.shutDown();
        }
        // the README's "Differences": under another format integers read back as Long
        SockIOPool other = SockIOPool.getInstance("readme-types-mcpool");
        other.setServers(new String[] {servers[0].addr()});
        other.setValueFormat("mcpool");
        other.initialize();
        try {
            MemCachedClient mc = new MemCachedClient("readme-types-mcpool");
            assertTrue(mc.set("readme:int2", 42));
            assertEquals(Long.valueOf(42), mc.get("readme:int2"));
        } finally {
            other.shutDown();
        }
    }
}
