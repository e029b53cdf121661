package io.mcpool;

import static org.junit.Assert.*;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Test;

/**
 * What the Javadoc and the READMEs say against what the binding does (tester findings java2
 * 5, 6 and 7): the defaults the Builder's count setters state are the core's, the main calls
 * name the exceptions they throw, and the feature tables list the calls that exist. Reads
 * the sources (the tests run in ffi/java).
 */
public class JavadocTest {
    private static String source(String cls) throws IOException {
        return new String(Files.readAllBytes(Paths.get("src/main/java/io/mcpool/" + cls + ".java")),
            StandardCharsets.UTF_8);
    }

    /** The Javadoc comment right before each declaration {@code public <type> name(}. */
    private static List<String> docsOf(String src, String name) {
        Matcher m = Pattern.compile("/\\*\\*((?:(?!\\*/).)*)\\*/\\s*(?:@\\w+\\s+)*public [\\w<>\\[\\], ?]+ "
            + Pattern.quote(name) + "\\(", Pattern.DOTALL).matcher(src);
        List<String> out = new ArrayList<>();
        while (m.find()) out.add(m.group(1));
        return out;
    }

    /** Tester finding java2 5: minIdle said "default 1" where the core's default is 0. Every
     * Builder setter that is one integer option of the core states the core's default. */
    @Test
    public void theCountSettersStateTheCoresDefaults() throws IOException {
        String src = source("Mcpool");
        Matcher m = Pattern.compile("/\\*\\*((?:(?!\\*/).)*)\\*/\\s*public Builder (\\w+)\\(int \\w+\\) \\{\\s*return option\\(\"(\\w+)\"",
            Pattern.DOTALL).matcher(src);
        Pattern stated = Pattern.compile("default (\\d+)");
        Set<String> checked = new TreeSet<>();
        while (m.find()) {
            String setter = m.group(2), option = m.group(3);
            String core = Mcpool.optionDoc(option);
            assertNotNull(option, core);
            Matcher c = stated.matcher(core);
            if (!core.startsWith("integer") || !c.find()) continue;
            Matcher d = stated.matcher(m.group(1));
            assertTrue(setter + "'s Javadoc states no default: " + m.group(1), d.find());
            assertEquals(setter + " (" + option + "): " + core, c.group(1), d.group(1));
            checked.add(setter);
        }
        assertTrue(checked.toString(), checked.containsAll(Arrays.asList("minIdle", "maxConnections", "failureLimit")));
    }

    /** Tester finding java2 7: no {@code @throws} tag anywhere. The main calls name the
     * exception classes they throw, each a class of this package that extends
     * McpoolException. */
    @Test
    public void theMainCallsNameTheExceptionsTheyThrow() throws Exception {
        String src = source("Mcpool");
        Set<String> single = new LinkedHashSet<>(Arrays.asList("ClientException", "TimeoutException",
            "ConnectionException", "ServerException"));
        String[][] expected = {
            {"get"}, {"gets"}, {"set"}, {"add"}, {"replace"}, {"cas"}, {"casResult"}, {"delete"}, {"incr"}, {"decr"},
            {"getMulti", "PartialResultException", "UnreadableValuesException", "ClientException"},
            {"setMulti", "PartialBatchException", "ClientException"},
            {"disconnectAll", "ClientException"},
        };
        Pattern tag = Pattern.compile("@throws\\s+(\\w+)");
        for (String[] e : expected) {
            String name = e[0];
            Set<String> want = e.length == 1 ? single : new LinkedHashSet<>(Arrays.asList(e).subList(1, e.length));
            List<String> docs = docsOf(src, name);
            int publics = 0;
            for (Method m : Mcpool.class.getDeclaredMethods()) {
                if (m.getName().equals(name) && java.lang.reflect.Modifier.isPublic(m.getModifiers())) publics++;
            }
            assertEquals(name + ": a Javadoc per public overload", publics, docs.size());
            for (String doc : docs) {
                Set<String> named = new LinkedHashSet<>();
                Matcher t = tag.matcher(doc);
                while (t.find()) named.add(t.group(1));
                assertTrue(name + " names " + named + ", not all of " + want, named.containsAll(want));
                for (String cls : named) {
                    Class<?> c = Class.forName("io.mcpool." + cls);
                    assertTrue(cls, McpoolException.class.isAssignableFrom(c));
                }
            }
        }
    }

    /** Tester finding java2 6: disconnectAll is documented with the other calls beyond
     * Whalin's API; finding 7: the root README's feature table lists every get-and-touch
     * call of Mcpool (gatsMulti was missing). */
    @Test
    public void theReadmesListTheCalls() throws IOException {
        String javaReadme = new String(Files.readAllBytes(Paths.get("README.md")), StandardCharsets.UTF_8);
        assertTrue(javaReadme.contains("| `disconnectAll()` |"));
        String root = new String(Files.readAllBytes(Paths.get("../../README.md")), StandardCharsets.UTF_8);
        String row = null;
        for (String line : root.split("\n")) if (line.startsWith("| get-and-touch |")) row = line;
        assertNotNull("the root README's get-and-touch row", row);
        String javaCell = row.split("\\|")[6]; // | feature | Rust | C | Python | Perl | Java | CLI |
        Set<String> gat = new TreeSet<>();
        for (Method m : Mcpool.class.getMethods()) if (m.getName().startsWith("gat")) gat.add(m.getName());
        assertEquals(new TreeSet<>(Arrays.asList("gat", "gats", "gatMulti", "gatsMulti")), gat);
        for (String name : gat) assertTrue(javaCell + " lacks " + name, javaCell.contains("`" + name + "`"));
    }

    /** Tester finding mutations 3: docs/errors.md gave Whalin's MemCachedClient stores
     * {@code false} for a cas whose CAS unique is 0, where MemCachedClient.cas throws
     * ClientException, as its Javadoc says. The two say the same now. */
    @Test
    public void casOfZeroIsDocumentedAsThrownByMemCachedClient() throws IOException {
        String errors = new String(Files.readAllBytes(Paths.get("../../docs/errors.md")), StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("Java (`ClientException`[^\\n]*(?:\\n[^\\n-][^\\n]*)*?), Rust").matcher(
            errors.substring(errors.indexOf("CAS unique is 0")));
        assertTrue("errors.md: the Java answer to a cas of 0", m.find());
        String java = m.group(1).replaceAll("\\s+", " ");
        assertTrue(java, java.contains("`MemCachedClient.cas` too"));
        assertFalse(java, java.contains("stores: false"));
        String doc = docsOf(source("MemCachedClient"), "cas").get(0).replaceAll("\\s*\\n\\s*\\*\\s*", " ");
        assertTrue(doc, doc.contains("{@code casUnique} of 0 ")
            && doc.contains("is a caller's error, thrown as {@link ClientException} MCPOOL_INVALID_ARGUMENT"));
    }
}
