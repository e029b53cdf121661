package io.mcpool;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/** A private memcached on a free 127.0.0.1 port, killed by close() (and at JVM exit). */
final class TestServer implements AutoCloseable {
    final int port;
    private final Process proc;

    /** extraArgs: more memcached arguments (e.g. {@code -F}, flush_all disabled). */
    TestServer(String... extraArgs) throws Exception {
        Process p = null;
        int chosen = -1;
        for (int attempt = 0; attempt < 20 && p == null; attempt++) {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
                port = s.getLocalPort();
            }
            List<String> cmd = new ArrayList<>(List.of("memcached", "-l", "127.0.0.1", "-p", String.valueOf(port),
                "-U", "0", "-m", "64", "-c", "1024", "-t", "2"));
            if ("root".equals(System.getProperty("user.name"))) cmd.addAll(List.of("-u", "root"));
            cmd.addAll(List.of(extraArgs));
            Process q = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(new File("/dev/null"))).start();
            if (waitUp(q, port)) {
                p = q;
                chosen = port;
            } else {
                q.destroyForcibly().waitFor();
            }
        }
        if (p == null) throw new IOException("could not start memcached");
        proc = p;
        port = chosen;
        Process mine = p;
        Runtime.getRuntime().addShutdownHook(new Thread(mine::destroyForcibly));
    }

    private static boolean waitUp(Process q, int port) throws InterruptedException {
        for (int i = 0; i < 50; i++) { // up to 5 s
            if (!q.isAlive()) return false;
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return true;
            } catch (IOException e) {
                Thread.sleep(100);
            }
        }
        return false;
    }

    String addr() {
        return "127.0.0.1:" + port;
    }

    /** An item as memcached holds it (a text-protocol get on its own socket): its flags and
     * bytes, or null on a miss. For checking the raw flags a client stored. */
    RawItem raw(String key) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            s.setSoTimeout(2000);
            s.getOutputStream().write(("get " + key + "\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(s.getInputStream()));
            String head = line(in);
            if (head.equals("END")) return null;
            String[] f = head.split(" "); // VALUE key flags bytes
            if (f.length != 4 || !f[0].equals("VALUE")) throw new IOException("unexpected reply: " + head);
            byte[] data = new byte[Integer.parseInt(f[3])];
            in.readFully(data);
            return new RawItem(Integer.parseUnsignedInt(f[2]), data);
        }
    }

    private static String line(java.io.DataInputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) throw new IOException("connection closed");
            if (c != '\r') b.append((char) c);
        }
        return b.toString();
    }

    static final class RawItem {
        final int flags;
        final byte[] data;

        RawItem(int flags, byte[] data) {
            this.flags = flags;
            this.data = data;
        }
    }

    /** Sends the server process a signal: "STOP" freezes it (it accepts and never answers),
     * "CONT" continues it. */
    void signal(String sig) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(proc.pid())).start();
        assertTrueOrThrow(k.waitFor(5, java.util.concurrent.TimeUnit.SECONDS) && k.exitValue() == 0, "kill -" + sig);
    }

    private static void assertTrueOrThrow(boolean ok, String what) throws IOException {
        if (!ok) throw new IOException(what + " failed");
    }

    @Override
    public void close() throws InterruptedException {
        proc.destroy();
        if (!proc.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) proc.destroyForcibly().waitFor();
    }
}
