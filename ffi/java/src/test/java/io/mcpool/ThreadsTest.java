package io.mcpool;

import static org.junit.Assert.*;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/** 64 Java threads share one client; every value read is checked against what was written. */
public class ThreadsTest {
    @Test
    public void sixtyFourThreadsOneClient() throws Exception {
        try (TestServer server = new TestServer();
             Mcpool mc = Mcpool.builder().servers(server.addr()).maxConnections(16).build()) {
            int threads = 64, ops = 1500;
            AtomicInteger checked = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                final int id = t;
                ts[t] = new Thread(() -> {
                    try {
                        for (int i = 0; i < ops; i++) {
                            String k = "t" + id + ":" + (i % 50);
                            String v = "value-" + id + "-" + i + "-" + "x".repeat(i % 300);
                            assertTrue(mc.set(k, v));
                            assertEquals(v, mc.get(k));
                            if (i % 50 == 0) {
                                Object[] vals = mc.getMultiArray(mc.tc, new String[] {k, "t" + id + ":none"});
                                assertEquals(v, vals[0]);
                                assertNull(vals[1]);
                            }
                            checked.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) t.join(120_000);
            if (failure.get() != null) throw new AssertionError(failure.get());
            assertEquals(threads * ops, checked.get());
        }
    }

    @Test
    public void closeWhileOtherThreadsUseIt() throws Exception {
        try (TestServer server = new TestServer()) {
            Mcpool mc = Mcpool.builder().servers(server.addr()).build();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread[] ts = new Thread[8];
            for (int t = 0; t < ts.length; t++) {
                ts[t] = new Thread(() -> {
                    for (int i = 0; i < 100_000; i++) {
                        try {
                            mc.set("c" + (i % 10), "v");
                        } catch (ClientException e) {
                            if (!"MCPOOL_CLOSED".equals(e.statusName())) failure.compareAndSet(null, e);
                            return;
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                            return;
                        }
                    }
                });
                ts[t].start();
            }
            Thread.sleep(200);
            mc.close();
            for (Thread t : ts) t.join(30_000);
            assertNull(failure.get());
            assertTrue(mc.nc.isFreed());
        }
    }
}
