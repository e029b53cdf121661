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

    TestServer() throws Exception {
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

    @Override
    public void close() throws InterruptedException {
        proc.destroy();
        if (!proc.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) proc.destroyForcibly().waitFor();
    }
}
