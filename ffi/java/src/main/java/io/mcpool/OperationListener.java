package io.mcpool;

/**
 * Receives one {@link OperationRecord} per exchange with a server (docs/tracing.md: a
 * multi-key call gives one record per server it talked to). Called on the thread that made
 * the call, after the exchange, inside that call: keep it short, non-blocking and
 * thread-safe (several threads may call it at once). It must not close the client. An
 * exception it throws is swallowed and counted ({@link Mcpool#operationListenerErrors()}),
 * never seen by the caller or the core.
 *
 * <p>OpenTelemetry, without a dependency of mcpool on it: a listener of a few lines makes
 * one span per record:
 *
 * <pre>{@code
 * Tracer tracer = GlobalOpenTelemetry.getTracer("mcpool");
 * Mcpool mc = Mcpool.builder().servers("127.0.0.1:11211").onOperation(r -> {
 *     long end = System.currentTimeMillis() * 1_000_000L; // or a clock of your own
 *     Span span = tracer.spanBuilder("memcached " + r.op())
 *         .setSpanKind(SpanKind.CLIENT)
 *         .setStartTimestamp(end - r.durationNanos(), TimeUnit.NANOSECONDS)
 *         .setAttribute("db.system", "memcached")
 *         .setAttribute("db.operation", r.op())
 *         .setAttribute("net.peer.name", r.host())
 *         .setAttribute("net.peer.port", r.port())
 *         .setAttribute("mcpool.outcome", r.outcome())
 *         .startSpan();
 *     if (r.outcome().equals("error")) span.setStatus(StatusCode.ERROR, r.error());
 *     span.end(end, TimeUnit.NANOSECONDS);
 * }).build();
 * }</pre>
 */
@FunctionalInterface
public interface OperationListener {
    /** Called once per exchange with a server, as described above. */
    void onOperation(OperationRecord record);
}
