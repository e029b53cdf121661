package io.mcpool;

import java.util.List;

/**
 * Answers a server's host name in place of the system's resolver (the core's resolver hook,
 * C {@code mcpool_config_set_resolver_owned}), e.g. with service discovery; given to
 * {@link Mcpool.Builder#resolver(Resolver)}:
 *
 * <pre>{@code
 * Mcpool mc = Mcpool.builder().servers("cache.service.internal:11211")
 *     .resolver((host, port) -> discovery.lookup(host))   // e.g. ["10.0.0.7", "10.0.0.8"]
 *     .build();
 * }</pre>
 *
 * <p>Only servers given by name reach it: IP literals and unix socket paths never do. It is
 * called at each connect a call makes or, with the {@code resolve_interval} option set
 * ({@code option("resolve_interval", "30s")}), in the background once the last answer is
 * older than that (connections to an address no longer listed are then retired).
 *
 * <p>Threads: it runs on a helper thread of the library, never on the thread of the call
 * that needs the answer (that call waits for it at most its connect timeout, bounded by the
 * operation timeout), at most one at a time per server, but possibly at the same time for
 * different servers or clients: make it thread-safe. A resolver that blocks costs the waiting
 * calls a {@link TimeoutException}. It must not call the client (nor any client whose server it
 * resolves): that call would wait for this very answer, and both would fail with a timeout
 * once the connect timeout has passed.
 *
 * <p>Failures: throwing, answering null, an empty list, more than 64 addresses (the C ABI's
 * {@code MCPOOL_RESOLVED_MAX}), or an item that is null or no IP literal is "did not
 * resolve": the call that needed the answer fails with a {@link ConnectionException}
 * (MCPOOL_IO) whose message quotes why ({@code resolving cache.service.internal: the resolver
 * threw java.io.IOException: discovery is down}, {@code ... the resolver answered null},
 * {@code ... the resolver answered no address}, {@code ... the resolver answered "web-1": ...});
 * what it throws goes nowhere else, and never reaches the library.
 *
 * <p>The client holds its resolver, and the library reaches it only through a weak
 * reference, as the listeners: a resolver that refers to its client keeps nothing alive, and
 * a client dropped unclosed is freed by its Cleaner. The native side's share is released once
 * nothing can call the resolver any more (the client freed, every call already started
 * returned).
 */
@FunctionalInterface
public interface Resolver {
    /**
     * The addresses of {@code host} (as written in the server list, without its port), tried
     * in this order: IP literals ({@code "10.0.0.7"}, {@code "::1"}, no brackets), each with
     * {@code port}, the server's. At most 64.
     *
     * @param host the server's host name
     * @param port the server's port, for the addresses answered
     * @return the IP literals to connect to, at least one
     * @throws Exception when the name cannot be resolved: the call that needed it fails with a
     *     {@link ConnectionException} quoting the exception's class and message
     */
    List<String> resolve(String host, int port) throws Exception;
}
