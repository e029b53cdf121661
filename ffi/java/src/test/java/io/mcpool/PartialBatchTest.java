package io.mcpool;

import static org.junit.Assert.*;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/** The *Multi writes with one of two servers stopped: every answered key's answer and each
 * failed key's exception come with the exception (PartialBatchException). casMultiResults
 * threw the first ConnectionException and lost every answer, so a caller could not tell
 * which CAS writes happened (tester finding retest9 1). */
public class PartialBatchTest {
    /** Keys placed on server 0 (live) and 1 (stopped), at least four of each. */
    private static void place(Mcpool mc, String prefix, List<String> onLive, List<String> onDead) {
        for (int i = 0; i < 80 && (onLive.size() < 4 || onDead.size() < 4); i++) {
            String k = prefix + i;
            (mc.serverIndexFor(k) == 0 ? onLive : onDead).add(k);
        }
        assertTrue(onLive.size() >= 4 && onDead.size() >= 4);
    }

    private static void assertDeadKeysFailed(PartialBatchException e, List<String> onDead, String op) {
        assertEquals(onDead, new ArrayList<>(e.errors().keySet()));
        for (String k : onDead) {
            McpoolException each = e.errors().get(k);
            assertTrue(k + ": " + each, each instanceof ConnectionException);
            assertTrue(each.getMessage(), each.getMessage().contains(k));
        }
        assertSame(e.errors().get(onDead.get(0)), e.getCause());
        assertEquals(e.errors().get(onDead.get(0)).status(), e.status());
        assertTrue(e.getMessage(), e.getMessage().contains(op) && e.getMessage().contains(onDead.get(0)));
        for (String k : onDead) assertFalse(e.answers().containsKey(k));
    }

    @Test
    public void casMultiResultsCarriesEachKeysAnswerWithAServerStopped() throws Exception {
        try (TestServer live = new TestServer(); TestServer stopped = new TestServer()) {
            try (Mcpool mc = Mcpool.builder().servers(live.addr(), stopped.addr()).connectTimeoutMillis(500).minIdle(0).build()) {
                List<String> onLive = new ArrayList<>(), onDead = new ArrayList<>();
                place(mc, "pbt-cas:", onLive, onDead);
                Map<String, MemcachedItem> items = new LinkedHashMap<>();
                for (String k : onDead) assertTrue(mc.set(k, "old", 0));
                for (String k : onDead) items.put(k, new MemcachedItem("new", mc.gets(k).casUnique));
                for (String k : onLive) {
                    assertTrue(mc.set(k, "old", 0));
                    items.put(k, new MemcachedItem("new", mc.gets(k).casUnique));
                }
                String changed = onLive.get(0), gone = onLive.get(1);
                assertTrue(mc.set(changed, "someone else's", 0));
                assertTrue(mc.delete(gone));
                stopped.close();
                try {
                    mc.casMultiResults(items, 0);
                    fail("a stopped server's keys failed");
                } catch (PartialBatchException e) {
                    assertDeadKeysFailed(e, onDead, "casMultiResults");
                    assertEquals(new ArrayList<>(onLive), new ArrayList<>(e.answers().keySet()));
                    assertEquals(CasResult.EXISTS, e.answers().get(changed));
                    assertEquals(CasResult.NOT_FOUND, e.answers().get(gone));
                    for (String k : onLive.subList(2, onLive.size())) assertEquals(CasResult.OK, e.answers().get(k));
                }
                for (String k : onLive.subList(2, onLive.size())) assertEquals("new", mc.get(k));
                // casMulti: the same, each answer a Boolean
                Map<String, MemcachedItem> again = new LinkedHashMap<>();
                for (String k : onDead) again.put(k, new MemcachedItem("x", 1));
                String k0 = onLive.get(2);
                again.put(k0, new MemcachedItem("newer", mc.gets(k0).casUnique));
                again.put(changed, new MemcachedItem("x", 1));
                try {
                    mc.casMulti(again, 0);
                    fail();
                } catch (PartialBatchException e) {
                    assertDeadKeysFailed(e, onDead, "casMulti");
                    assertEquals(Boolean.TRUE, e.answers().get(k0));
                    assertEquals(Boolean.FALSE, e.answers().get(changed));
                    assertEquals(2, e.answers().size());
                }
                assertEquals("newer", mc.get(k0));
            }
        }
    }

    @Test
    public void everyMultiWriteCarriesTheLiveServersAnswers() throws Exception {
        try (TestServer live = new TestServer(); TestServer stopped = new TestServer()) {
            try (Mcpool mc = Mcpool.builder().servers(live.addr(), stopped.addr()).connectTimeoutMillis(500).minIdle(0).build()) {
                List<String> onLive = new ArrayList<>(), onDead = new ArrayList<>();
                place(mc, "pbt-w:", onLive, onDead);
                stopped.close();
                List<String> all = new ArrayList<>(onDead);
                all.addAll(onLive);
                String present = onLive.get(0);
                Map<String, Object> vals = new LinkedHashMap<>();
                for (String k : all) vals.put(k, "v");
                String[] ops = {"setMulti", "addMulti", "replaceMulti", "appendMulti", "prependMulti", "touchMulti", "deleteMulti"};
                for (String op : ops) {
                    for (String k : onLive) mc.delete(k);
                    assertTrue(mc.set(present, "v", 0));
                    try {
                        switch (op) {
                            case "setMulti": mc.setMulti(vals, 0); break;
                            case "addMulti": mc.addMulti(vals, 0); break;
                            case "replaceMulti": mc.replaceMulti(vals, 0); break;
                            case "appendMulti": mc.appendMulti(vals); break;
                            case "prependMulti": mc.prependMulti(vals); break;
                            case "touchMulti": mc.touchMulti(all, 100); break;
                            default: mc.deleteMulti(all);
                        }
                        fail(op);
                    } catch (PartialBatchException e) {
                        assertDeadKeysFailed(e, onDead, op);
                        assertEquals(op, new ArrayList<>(onLive), new ArrayList<>(e.answers().keySet()));
                        for (String k : onLive) {
                            boolean expect = op.equals("setMulti") || op.equals("addMulti") ? !op.equals("addMulti") || !k.equals(present)
                                : k.equals(present);
                            assertEquals(op + " " + k, expect, e.answers().get(k));
                        }
                    }
                }
            }
        }
    }
}
