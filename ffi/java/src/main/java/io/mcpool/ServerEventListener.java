package io.mcpool;

/**
 * Receives {@link ServerEvent}s. Called on the thread whose call changed the server's state
 * (inside that call), possibly on several threads at once: keep it short, non-blocking and
 * thread-safe. It must not close the client. An exception it throws is ignored.
 */
@FunctionalInterface
public interface ServerEventListener {
    /** Called once per state change of a server, as described above. */
    void onEvent(ServerEvent event);
}
