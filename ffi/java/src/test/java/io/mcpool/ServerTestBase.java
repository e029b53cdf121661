package io.mcpool;

import org.junit.AfterClass;
import org.junit.BeforeClass;

/** A test class's private memcached ({@link TestServer}): started before its tests, stopped
 * after them. For the test classes that need nothing else set up once. */
abstract class ServerTestBase {
    static TestServer server;

    @BeforeClass
    public static void startServer() throws Exception {
        server = new TestServer();
    }

    @AfterClass
    public static void stopServer() throws Exception {
        server.close();
    }
}
