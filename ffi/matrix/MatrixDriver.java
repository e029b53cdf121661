import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Value-matrix driver for Java clients (run by ffi/matrix/run.py): one JVM per column.
 *
 *   java MatrixDriver CLIENT MODE FORMAT SERVER FIXDIR < plan
 *
 * CLIENT: mcpool (io.mcpool.Mcpool with valueFormat(FORMAT)) or spymemcached (the real peer,
 * its default SerializingTranscoder). Plan lines "KEY KIND"; output lines "KEY OK",
 * "KEY ERR message", "KEY DIFF what" or "KEY MISS".
 */
public final class MatrixDriver {
    interface Store {
        boolean set(String key, Object v) throws Exception;
        Object get(String key) throws Exception;
    }

    static Object nativeValue(String kind, String fixdir) throws Exception {
        boolean raw = kind.endsWith("b") && !kind.equals("empty");
        String base = raw ? kind.substring(0, kind.length() - 1) : kind;
        byte[] data = Files.readAllBytes(Paths.get(fixdir, base + ".bin"));
        if (raw || base.equals("ascii") || base.equals("bin1m") || base.equals("empty")) return data;
        String s = new String(data, StandardCharsets.UTF_8);
        if (base.equals("int")) return Long.valueOf(s.trim());
        return s;
    }

    static Store client(String name, String fmt, String server) throws Exception {
        if (name.equals("mcpool")) {
            io.mcpool.Mcpool mc = io.mcpool.Mcpool.builder().servers(server).valueFormat(fmt)
                .compression(true).compressionThreshold(1024).minIdle(0).maxValueSize(2 * 1024 * 1024).build();
            return new Store() {
                public boolean set(String k, Object v) { return mc.set(k, v, 0); }
                public Object get(String k) { return mc.get(k); }
            };
        }
        if (name.equals("spymemcached")) {
            net.spy.memcached.MemcachedClient mc = new net.spy.memcached.MemcachedClient(
                new net.spy.memcached.ConnectionFactoryBuilder()
                    .setTranscoder(new net.spy.memcached.transcoders.SerializingTranscoder(2 * 1024 * 1024))
                    .build(),
                net.spy.memcached.AddrUtil.getAddresses(server));
            return new Store() {
                public boolean set(String k, Object v) throws Exception { return mc.set(k, 0, v).get(); }
                public Object get(String k) { return mc.get(k); }
            };
        }
        throw new IllegalArgumentException("unknown client " + name);
    }

    static String describe(Object v) {
        if (v instanceof byte[]) return "byte[" + ((byte[]) v).length + "]";
        if (v instanceof String) return "String of " + ((String) v).length();
        return v.getClass().getSimpleName() + " " + v;
    }

    public static void main(String[] a) throws Exception {
        String name = a[0], mode = a[1], fmt = a[2], server = a[3], fixdir = a[4];
        Store c = client(name, fmt, server);
        List<String> out = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.trim().isEmpty()) continue;
            String[] p = line.trim().split("\\s+");
            String key = p[0], kind = p[1];
            Object want = nativeValue(kind, fixdir);
            try {
                if (mode.equals("write")) {
                    out.add(key + (c.set(key, want) ? " OK" : " ERR not stored"));
                    continue;
                }
                Object got = c.get(key);
                if (got == null) out.add(key + " MISS");
                else if (got.getClass() == want.getClass()
                    && (want instanceof byte[] ? Arrays.equals((byte[]) got, (byte[]) want) : got.equals(want))) {
                    out.add(key + " OK");
                } else out.add(key + " DIFF " + describe(got));
            } catch (Exception e) {
                out.add(key + " ERR " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            }
        }
        for (String s : out) System.out.println(s);
        System.out.flush();
        System.exit(0); // spymemcached's I/O thread is not a daemon
    }
}
