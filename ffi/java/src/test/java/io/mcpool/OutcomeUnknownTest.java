package io.mcpool;

import static org.junit.Assert.*;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.Test;

/**
 * McpoolException.outcomeUnknown(): the core's answer (mcpool_last_error_outcome_unknown,
 * mcpool_last_item_outcome_unknown) for a write that was sent and whose outcome is unknown.
 * The servers are deliberately broken fakes (not memcached): one accepts and reads every
 * request and never answers, one closes each connection once a request arrived.
 */
public class OutcomeUnknownTest {
    /** A fake server on a loopback port: each accepted connection is read by its own thread,
     * which, when {@code hangUp}, closes it once the first bytes arrived, else reads forever. */
    private static ServerSocket fake(boolean hangUp) throws Exception {
        ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    Socket s = ss.accept();
                    Thread reader = new Thread(() -> {
                        byte[] buf = new byte[4096];
                        try (Socket c = s; InputStream in = c.getInputStream()) {
                            while (in.read(buf) >= 0 && !hangUp) { /* never answers */ }
                        } catch (Exception gone) {
                            // the client closed it
                        }
                    });
                    reader.setDaemon(true);
                    reader.start();
                }
            } catch (Exception closed) {
                // the listener closed at the end of the test
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
        return ss;
    }

    private static Mcpool client(int port) {
        return Mcpool.builder().servers("127.0.0.1:" + port).minIdle(0).ioTimeoutMillis(300)
            .connectTimeoutMillis(1000).option("failure_limit", "1000").build();
    }

    @Test
    public void aTimedOutWriteIsOfUnknownOutcome() throws Exception {
        try (ServerSocket silent = fake(false); Mcpool mc = client(silent.getLocalPort())) {
            try {
                mc.set("ou:set", "v", 0);
                fail("a set to a silent server succeeded");
            } catch (TimeoutException e) {
                assertTrue(e.getMessage(), e.outcomeUnknown());
                assertTrue(e.getMessage(), e.getMessage().contains("whether it was applied is unknown"));
            }
        }
    }

    @Test
    public void aTimedOutReadIsNot() throws Exception {
        try (ServerSocket silent = fake(false); Mcpool mc = client(silent.getLocalPort())) {
            try {
                mc.get("ou:get");
                fail("a get from a silent server succeeded");
            } catch (TimeoutException e) {
                assertFalse(e.getMessage(), e.outcomeUnknown());
            }
        }
    }

    @Test
    public void aWriteCutOffAfterSendingIsOfUnknownOutcome() throws Exception {
        try (ServerSocket hangsUp = fake(true); Mcpool mc = client(hangsUp.getLocalPort())) {
            try {
                mc.incr("ou:incr", 1);
                fail("an incr on a connection closed by the server succeeded");
            } catch (ConnectionException e) {
                assertTrue(e.getMessage(), e.outcomeUnknown());
            }
        }
    }

    @Test
    public void aRefusedConnectIsNot() throws Exception {
        try (Mcpool mc = client(FailureSemanticsTest.closedPort())) {
            try {
                mc.set("ou:refused", "v", 0);
                fail("a set to a closed port succeeded");
            } catch (ConnectionException e) {
                assertFalse(e.getMessage(), e.outcomeUnknown());
            }
        }
    }

    /** Each failed item of a batch write carries its own answer (the core's per item): a key
     * refused before sending is not, the timed-out ones are; the batch's exception is true
     * when any item's is, though its status is the first failed key's. */
    @Test
    public void aBatchWritesItemsAreOfUnknownOutcome() throws Exception {
        try (ServerSocket silent = fake(false); Mcpool mc = client(silent.getLocalPort())) {
            Map<String, Object> items = new LinkedHashMap<>();
            items.put("a b", "0"); // an invalid key: refused, nothing sent
            items.put("ou:b1", "1");
            items.put("ou:b2", "2");
            try {
                mc.setMulti(items, 0);
                fail("a batch set to a silent server succeeded");
            } catch (PartialBatchException e) {
                assertEquals(items.keySet(), e.errors().keySet());
                McpoolException refused = e.errors().get("a b");
                assertEquals("MCPOOL_INVALID_KEY", refused.statusName());
                assertFalse(refused.getMessage(), refused.outcomeUnknown());
                for (String k : new String[] {"ou:b1", "ou:b2"}) {
                    McpoolException item = e.errors().get(k);
                    assertTrue(item.getMessage(), item instanceof TimeoutException && item.outcomeUnknown());
                }
                assertEquals("MCPOOL_INVALID_KEY", e.statusName());
                assertTrue(e.getMessage(), e.outcomeUnknown());
            }
        }
    }

    /** The Java side's own exceptions, and those built by the public constructors, are not. */
    @Test
    public void theJavaSidesOwnExceptionsAreNot() throws Exception {
        try (ServerSocket silent = fake(false); Mcpool mc = client(silent.getLocalPort())) {
            try {
                mc.set(null, "v", 0);
                fail("a null key was accepted");
            } catch (ClientException e) {
                assertFalse(e.outcomeUnknown());
            }
        }
        assertFalse(new TimeoutException(3, "MCPOOL_IO_TIMEOUT", "made by hand").outcomeUnknown());
    }
}
