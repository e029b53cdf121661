package io.mcpool;

import org.junit.AfterClass;
import org.junit.BeforeClass;

/** A test class's two private memcached servers (a and b), started once for the class. */
public abstract class TwoServers {
    static TestServer a, b;

    @BeforeClass
    public static void startTwoServers() throws Exception {
        a = new TestServer();
        b = new TestServer();
    }

    @AfterClass
    public static void stopTwoServers() throws Exception {
        a.close();
        b.close();
    }
}
