package io.mcpool;

/**
 * Whalin's {@code ErrorHandler} ({@code com.danga.MemCached} in 2.x, {@code com.whalin.MemCached}
 * in 3.0.0; the same methods): told of every error a {@link MemCachedClient} answers with null, false or -1
 * instead of throwing, with the key(s), so a service can log or alert on them. Set with
 * {@link MemCachedClient#setErrorHandler} or a constructor that takes one.
 *
 * <p>{@code error} is the {@link McpoolException} the call would have thrown in {@link Mcpool}
 * (a {@link ConnectionException}, {@link TimeoutException} or {@link ServerException} for a
 * down server, a timeout or an error reply; a {@link ClientException} MCPOOL_VALUE_TOO_LARGE
 * for a value too large, MCPOOL_INVALID_ARGUMENT for an expiry after 2038 or a negative
 * counter delta, MCPOOL_CLIENT_ERROR for a counter that is not a number), each also counted as
 * {@code suppressed_errors} in {@link MemCachedClient#metrics()}: on the key's server, and a
 * server's failure of {@code flushAll} or of a statistics call on that server (a server
 * {@code flushAll(String[])} names that is not in the pool has no row there: told, not
 * counted). What the client throws (the
 * caller's own mistakes, a refused login, a value that cannot be read) never reaches it.
 * Whalin called it only for exceptions; its error replies (a {@code SERVER_ERROR} line) were
 * logged, and are handed over here too.
 *
 * <p>It runs on the calling thread, after the failure and before the call returns its answer;
 * it may use the client. Whatever it throws is caught and counted
 * ({@link MemCachedClient#errorHandlerErrors()}): the call still answers null/false/-1.
 */
public interface ErrorHandler {
    /** Not called by mcpool (nor by Whalin 2.x): a pool that cannot start is a
     * {@link ConfigurationException} from {@link SockIOPool#initialize()}, a call on a pool
     * that is not initialized one from that call. */
    void handleErrorOnInit(MemCachedClient client, Throwable error);

    /** A read failed for this key: {@code get}, {@code gets}, {@code keyExists}, a key of
     * {@code getMulti}/{@code getMultiArray} whose server failed (once per key, with its own
     * error), and the counters ({@code incr}, {@code decr}, {@code addOrIncr},
     * {@code addOrDecr}, {@code getCounter}, each also for a value that is not a number), as
     * Whalin reported them; and {@code getBytes} (not in Whalin). */
    void handleErrorOnGet(MemCachedClient client, Throwable error, String cacheKey);

    /** A {@code getMulti} or {@code getMultiArray} failed as a whole (every key answered as a
     * miss): the keys as given. */
    void handleErrorOnGet(MemCachedClient client, Throwable error, String[] cacheKeys);

    /** A store failed for this key: {@code set}, {@code add}, {@code replace}, {@code cas},
     * {@code append}, {@code prepend}, {@code storeCounter}. */
    void handleErrorOnSet(MemCachedClient client, Throwable error, String cacheKey);

    /** A {@code delete} of this key failed. */
    void handleErrorOnDelete(MemCachedClient client, Throwable error, String cacheKey);

    /** A server failed to flush ({@code flushAll}): once per such server, with its error (a
     * server {@code flushAll(String[])} names that is not in the pool: a
     * {@link ClientException} MCPOOL_INVALID_ARGUMENT naming it). */
    void handleErrorOnFlush(MemCachedClient client, Throwable error);

    /** A server failed to answer {@code stats}, {@code statsItems} or {@code statsSlabs}
     * (left out of the answer): once per such server, with its error. */
    void handleErrorOnStats(MemCachedClient client, Throwable error);
}
