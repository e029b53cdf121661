package io.mcpool;

import static org.junit.Assert.*;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.Test;

/** A SASL password that is refused is never shown: not in the message, nor in any cause's,
 * nor in the printed stack trace, on every path a password takes (Builder.sasl, option by
 * name in any spelling, SockIOPool.setOption, which MemCachedClient's pools use); tester
 * finding secure2 3. No server: each is refused before any connection. */
public class SecretsTest {
    static final String ADDR = "127.0.0.1:1";
    /** The readable part of every password here. */
    static final String STEM = "SeCrEt";
    /** Passwords with no UTF-8 form (refused by the binding) and ones the core refuses (a NUL,
     * a line break, over 4096 bytes). */
    static final String[] UNENCODABLE = {STEM + "\uD800x", "\uDC00" + STEM, STEM + "\uD800"};
    static final String[] CORE_REFUSED = {STEM + "\0x", STEM + "\n", STEM + new String(new char[5000]).replace('\0', 'x')};

    /** Runs a step that must be refused and checks the exception hides the password. */
    static McpoolException refused(String pw, Runnable step) {
        try {
            step.run();
        } catch (McpoolException e) {
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            assertFalse(trace.toString(), trace.toString().contains(STEM));
            for (Throwable t = e; t != null; t = t.getCause()) {
                String m = String.valueOf(t.getMessage()) + " " + t;
                assertFalse(m, m.contains(STEM));
                assertFalse(m, m.contains(pw));
            }
            assertTrue(e.getMessage(), e.getMessage().contains("sasl_password") || e.getMessage().contains("SASL-Password"));
            return e;
        }
        fail("a password was taken: " + pw.length() + " chars");
        return null;
    }

    static Mcpool.Builder builder() {
        return Mcpool.builder().servers(ADDR).protocol("binary").minIdle(0);
    }

    @Test
    public void anUnencodablePasswordIsRefusedByLengthAndIndexOnly() {
        for (String pw : UNENCODABLE) {
            McpoolException e = refused(pw, () -> builder().sasl("alice", pw));
            assertEquals("MCPOOL_INVALID_ARGUMENT", e.statusName());
            assertTrue(e.getMessage(), e.getMessage().contains(pw.length() + " chars"));
            assertTrue(e.getMessage(), e.getMessage().contains("at index " + Utf8.unpairedSurrogate(pw)));
            assertNull(e.getCause());
            refused(pw, () -> builder().option("sasl_username", "alice").option("sasl_password", pw));
            refused(pw, () -> builder().option("sasl_username", "alice").option("SASL-Password", pw));
        }
    }

    @Test
    public void aPasswordTheCoreRefusesIsNotShown() {
        for (String pw : CORE_REFUSED) {
            refused(pw, () -> builder().sasl("alice", pw).build().close());
            refused(pw, () -> builder().option("sasl_username", "alice").option("sasl-password", pw).build().close());
        }
    }

    @Test
    public void sockIOPoolHidesARefusedPassword() {
        int n = 0;
        for (String pw : concat(UNENCODABLE, CORE_REFUSED)) {
            SockIOPool p = SockIOPool.getInstance("secrets-test-" + n++);
            p.setServers(new String[] {ADDR});
            p.setInitConn(0);
            p.setMinConn(0);
            p.setOption("protocol", "binary");
            p.setOption("sasl_username", "alice");
            p.setOption("sasl_password", pw);
            refused(pw, p::initialize);
            assertFalse(p.isInitialized());
        }
    }

    /** Other options' text is still quoted: only the secret is hidden. */
    @Test
    public void otherOptionsStillShowTheirValue() {
        try {
            builder().keyPrefix("pre\uD800");
            fail("an unencodable key prefix was taken");
        } catch (ClientException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("pre\\uD800"));
        }
    }

    static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
