package io.mcpool;

import static org.junit.Assert.*;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Assume;
import org.junit.Test;

/**
 * Issue 20 item 5: the jar's /native/&lt;os&gt;-&lt;arch&gt;/ directory names from os.name / os.arch.
 * Loading from the jar itself (no java.library.path, no mcpool.jni.library) is checked by
 * jar-check/check.sh, which runs the versioned jar alone as a user would.
 */
public class NativeLoadTest {
    @Test
    public void jarPlatformNamesFromOsNameAndArch() {
        assertEquals("x86_64", Native.archName("amd64"));
        assertEquals("x86_64", Native.archName("x86_64"));
        assertEquals("aarch64", Native.archName("aarch64"));
        assertEquals("aarch64", Native.archName("arm64"));
        assertEquals("ppc64le", Native.archName("ppc64le"));
        assertEquals("linux", Native.osName("Linux"));
        assertEquals("macos", Native.osName("Mac OS X"));
        assertEquals("windows", Native.osName("Windows 11"));
        String p = Native.platform();
        assertTrue(p, p.matches("[a-z0-9]+-[a-z0-9_]+"));
        if ("Linux".equals(System.getProperty("os.name")) && "amd64".equals(System.getProperty("os.arch"))) {
            assertEquals("linux-x86_64", p);
        }
    }

    @Test
    public void libraryPropertyIsTheOneDocumented() {
        assertEquals("mcpool.jni.library", Native.LIBRARY_PROPERTY);
        assertEquals("libmcpool_jni.so".equals(System.mapLibraryName("mcpool_jni")),
            System.getProperty("os.name").startsWith("Linux"));
    }
    /** A pid no process has (one that ran and ended). */
    static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        long pid = p.pid();
        Assume.assumeFalse("pid " + pid + " was reused at once", ProcessHandle.of(pid).isPresent());
        return pid;
    }

    static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    @Test
    public void sweepRemovesOnlyDeadJvmsCopies() throws Exception {
        // pkg F5: a JVM killed without a normal exit left mcpool-jni-NNN/libmcpool_jni.so
        // (2.3 MB) in java.io.tmpdir for good. The sweep at load removes those of dead pids.
        Path tmp = Files.createTempDirectory("mcpool-sweep-test");
        Process alive = new ProcessBuilder("sleep", "60").start();
        try {
            long dead = deadPid();
            String lib = System.mapLibraryName(Native.LIBRARY_NAME);
            Path stale = Files.createDirectory(tmp.resolve("mcpool-jni-" + dead + "-11"));
            Files.write(stale.resolve(lib), new byte[1000]);
            Path running = Files.createDirectory(tmp.resolve("mcpool-jni-" + alive.pid() + "-22"));
            Files.write(running.resolve(lib), new byte[10]);
            Path extra = Files.createDirectory(tmp.resolve("mcpool-jni-" + dead + "-33"));
            Files.write(extra.resolve(lib), new byte[10]);
            Files.write(extra.resolve("someone-elses"), new byte[10]);
            Path other = Files.createDirectory(tmp.resolve("mcpool-jni-notapid"));
            Path target = Files.createDirectory(tmp.resolve("target"));
            Files.write(target.resolve(lib), new byte[10]);
            Path link = Files.createSymbolicLink(tmp.resolve("mcpool-jni-" + dead + "-44"), target);
            int removed = Native.sweepStale(tmp, Files.getOwner(tmp, LinkOption.NOFOLLOW_LINKS));
            assertEquals(1, removed);
            assertFalse(Files.exists(stale));
            assertTrue(Files.exists(running.resolve(lib))); // its JVM may be using it
            assertTrue(Files.exists(extra.resolve("someone-elses"))); // only our file is removed
            assertTrue(Files.isDirectory(other));
            assertTrue(Files.isSymbolicLink(link));
            assertTrue(Files.exists(target.resolve(lib))); // never followed
        } finally {
            alive.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            try (Stream<Path> w = Files.walk(tmp)) {
                w.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** Loads the library (from the versioned jar) and waits for stdin to close. */
    public static class Holder {
        public static void main(String[] args) throws Exception {
            System.out.println("loaded " + Mcpool.coreVersion());
            System.out.flush();
            while (System.in.read() >= 0) { /* until the parent closes stdin or kills us */ }
        }
    }

    @Test
    public void aKilledJvmLeavesNoCopyAndAStaleOneIsSwept() throws Exception {
        String jar = System.getProperty("mcpool.test.jar");
        Assume.assumeTrue("mcpool.test.jar (the versioned jar) not set", jar != null && new File(jar).isFile());
        Assume.assumeTrue("POSIX only", Files.getFileStore(new File(jar).toPath()).supportsFileAttributeView("posix"));
        Path tmp = Files.createTempDirectory("mcpool-kill-test");
        try {
            long dead = deadPid();
            Path stale = Files.createDirectory(tmp.resolve("mcpool-jni-" + dead + "-5"));
            Files.write(stale.resolve(System.mapLibraryName(Native.LIBRARY_NAME)), new byte[1000]);
            String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            String cp = jar + File.pathSeparator + Holder.class.getProtectionDomain().getCodeSource().getLocation().getPath();
            List<String> cmd = new ArrayList<>(List.of(java, "-Djava.io.tmpdir=" + tmp, "-cp", cp, Holder.class.getName()));
            Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                String line = out.readLine();
                assertNotNull("the child JVM said nothing", line);
                assertTrue(line, line.startsWith("loaded "));
                // loaded from its own copy, which is already gone, and the dead JVM's too
                assertEquals(new ArrayList<String>(), names(tmp));
            } finally {
                child.destroyForcibly(); // SIGKILL: no shutdown hooks, no deleteOnExit
                assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            }
            assertEquals(new ArrayList<String>(), names(tmp));
        } finally {
            try (Stream<Path> w = Files.walk(tmp)) {
                w.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
