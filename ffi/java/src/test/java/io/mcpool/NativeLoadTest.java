package io.mcpool;

import static org.junit.Assert.*;

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
}
