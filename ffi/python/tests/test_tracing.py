"""fail_open and on_operation (docs/tracing.md), and the OpenTelemetry adapter mcpool.otel."""
import threading

import pytest

import mcpool
from conftest import Server

# Nothing listens on port 1: connections are refused.
DOWN = "127.0.0.1:1"
OTEL_INSTALL = ("pip install 'opentelemetry-api>=1.20' (the extra mcpool[otel]; `make "
                "test-python` installs it into target/python-testdeps from "
                "ffi/python/requirements-test.txt)")


def _otel():
    try:
        from opentelemetry import trace
        return trace
    except ImportError as e:
        pytest.fail("opentelemetry-api is needed by these tests (%s): %s" % (e, OTEL_INSTALL),
                    pytrace=False)


def test_fail_open_turns_an_outage_into_misses(prefix):
    recs = []
    mc = mcpool.Client([DOWN], min_idle=0, fail_open=True, on_operation=recs.append,
                       retry_timeout=30)
    k = prefix + "k"
    assert mc.get(k) is None
    assert mc.get(k, "default") == "default"
    assert mc.set(k, b"v") is False
    assert mc.add(k, b"v") is False
    assert mc.delete(k) is False
    assert mc.touch(k, 10) is False
    assert mc.incr(k) is None
    assert mc.get_multi([k, k + "2"]) == {}
    m = mc.metrics()[DOWN]
    assert m["fail_open_misses"] == 4, m
    assert m["fail_open_not_stored"] == 5, m
    assert recs and all(r.outcome == "failed_open" for r in recs), recs
    assert all(r.error_class in ("CONNECTION", "TIMEOUT") and r.server == DOWN for r in recs)
    assert {r.op for r in recs} >= {"get", "set", "add", "delete", "touch", "incr", "get_multi"}


def test_without_fail_open_the_outage_raises(prefix):
    mc = mcpool.Client([DOWN], min_idle=0)
    with pytest.raises(mcpool.ConnectionError):
        mc.get(prefix + "k")


def test_fail_open_under_a_killed_server(prefix):
    s = Server()
    mc = mcpool.Client([s.addr], fail_open=True, io_timeout=0.3, connect_timeout=0.3)
    assert mc.set(prefix + "k", b"v") is True
    s.stop()
    for _ in range(3):
        assert mc.get(prefix + "k") is None
        assert mc.set(prefix + "k", b"w") is False
    m = mc.metrics()[s.addr]
    assert m["fail_open_misses"] == 3 and m["fail_open_not_stored"] == 3, m


def test_fail_open_keeps_client_errors(server, prefix):
    mc = mcpool.Client([server.addr], fail_open=True, max_value_size=10)
    with pytest.raises(mcpool.ClientError):
        mc.get("bad key")
    with pytest.raises(mcpool.ClientError):
        mc.set(prefix + "big", b"x" * 11)
    mc.set(prefix + "n", b"abc")
    with pytest.raises(mcpool.ClientError):
        mc.incr(prefix + "n")


def test_fail_open_set_counter_answers_not_stored(prefix):
    """set_counter to an unreachable server under fail_open is False (not stored), as set is:
    it raised a bare mcpool.Error with an empty message (the core's MCPOOL_NOT_STORED
    unmapped). A failed call before it must not lend it its message either."""
    strict = mcpool.Client([DOWN], min_idle=0)
    with pytest.raises(mcpool.ConnectionError):
        strict.set_counter(prefix + "k", 5)  # leaves a last error behind on this thread
    mc = mcpool.Client([DOWN], min_idle=0, fail_open=True)
    assert mc.set_counter(prefix + "k", 5) is False
    assert mc.set_counter(prefix + "k", 2**64 - 1, 60) is False
    assert mc.metrics()[DOWN]["fail_open_not_stored"] == 2


def test_on_operation_records_the_fields(server, prefix):
    recs = []
    mc = mcpool.Client([server.addr], on_operation=recs.append)
    k = prefix + "k"
    assert mc.set(k, b"hello")
    assert mc.get(k) == b"hello"
    assert mc.get(k + "missing") is None
    assert mc.get_multi([k, k + "missing"]) == {k: b"hello"}
    assert len(recs) == 4, recs
    s, hit, miss, multi = recs
    assert isinstance(s, mcpool.OpRecord)
    assert (s.op, s.keys, s.hits, s.outcome, s.server, s.protocol) == (
        "set", 1, 1, "stored", server.addr, "text")
    assert s.bytes_sent > len(k) and s.bytes_received >= len(b"STORED\r\n")
    assert 0 < s.duration < 5 and s.error is None and s.error_class is None
    assert (hit.op, hit.outcome, hit.hits) == ("get", "hit", 1)
    assert hit.bytes_received > 5
    assert (miss.op, miss.outcome, miss.hits) == ("get", "miss", 0)
    assert (multi.op, multi.keys, multi.hits, multi.outcome) == ("get_multi", 2, 1, "hit")


def test_on_operation_reports_errors_and_refused_keys(server, prefix):
    recs = []
    mc = mcpool.Client([server.addr], on_operation=recs.append)
    with pytest.raises(mcpool.ClientError):
        mc.get("bad key")
    (r,) = recs
    assert (r.op, r.outcome, r.error_class, r.server) == ("get", "error", "CLIENT_ERROR", None)
    assert "bad key" in r.error


def test_on_operation_exception_is_reported_not_raised(server, prefix, monkeypatch):
    import sys
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    def boom(r):
        raise RuntimeError("hook failed")
    mc = mcpool.Client([server.addr], on_operation=boom)
    assert mc.set(prefix + "k", b"v") is True
    assert [str(r.exc_value) for r in reported] == ["hook failed"]
    with pytest.raises(mcpool.ClientTypeError):
        mcpool.Client([server.addr], on_operation=42)


def test_on_operation_from_many_threads(server, prefix):
    recs = []
    lock = threading.Lock()

    def hook(r):
        with lock:
            recs.append(r)
    mc = mcpool.Client([server.addr], on_operation=hook)

    def work(i):
        for j in range(20):
            mc.set("%s%d-%d" % (prefix, i, j), b"v")
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(recs) == 80 and all(r.outcome == "stored" for r in recs)


class _Recorder:
    """A small recording TracerProvider over opentelemetry-api's abstract classes."""

    def __init__(self, trace):
        class Span(trace.NonRecordingSpan):
            def __init__(span, name, attributes, start_time, kind, context):
                super().__init__(trace.INVALID_SPAN_CONTEXT)
                span.name, span.attributes, span.start_time = name, dict(attributes), start_time
                span.kind, span.parent, span.status, span.events = kind, context, None, []
                span.end_time = None

            def set_status(span, status, description=None):
                span.status = status

            def add_event(span, name, attributes=None, timestamp=None):
                span.events.append((name, dict(attributes or {})))

            def end(span, end_time=None):
                span.end_time = end_time

        outer = self
        self.spans = []

        class Tracer(trace.Tracer):
            def start_span(self, name, context=None, kind=trace.SpanKind.INTERNAL,
                           attributes=None, links=None, start_time=None,
                           record_exception=True, set_status_on_exception=True):
                s = Span(name, attributes or {}, start_time, kind, context)
                outer.spans.append(s)
                return s

            def start_as_current_span(self, *a, **kw):  # pragma: no cover - unused
                raise NotImplementedError

        class Provider(trace.TracerProvider):
            def get_tracer(self, *a, **kw):
                return Tracer()

        self.provider = Provider()


def test_otel_adapter_makes_one_span_per_operation(server, prefix):
    trace = _otel()
    import mcpool.otel
    rec = _Recorder(trace)
    mc = mcpool.Client([server.addr], on_operation=mcpool.otel.span_hook(
        tracer_provider=rec.provider))
    k = prefix + "k"
    mc.set(k, b"v")
    mc.get(k)
    mc.get(k + "missing")
    assert [s.name for s in rec.spans] == ["memcached set", "memcached get", "memcached get"]
    host, port = server.addr.rsplit(":", 1)
    for s in rec.spans:
        a = s.attributes
        assert a["db.system"] == "memcached"
        assert a["net.peer.name"] == host and a["net.peer.port"] == int(port)
        assert a["mcpool.protocol"] == "text"
        assert s.kind == trace.SpanKind.CLIENT
        assert s.start_time <= s.end_time
        assert s.status is None
    assert [s.attributes["db.operation"] for s in rec.spans] == ["set", "get", "get"]
    assert [s.attributes["mcpool.outcome"] for s in rec.spans] == ["stored", "hit", "miss"]


def test_otel_adapter_marks_errors_and_failed_open(prefix):
    trace = _otel()
    import mcpool.otel
    rec = _Recorder(trace)
    hook = mcpool.otel.span_hook(tracer_provider=rec.provider)
    mc = mcpool.Client([DOWN], min_idle=0, on_operation=hook)
    with pytest.raises(mcpool.ConnectionError):
        mc.get(prefix + "k")
    (s,) = rec.spans
    assert s.status.status_code == trace.StatusCode.ERROR
    assert s.attributes["mcpool.error_class"] == "CONNECTION"
    rec.spans.clear()
    mc = mcpool.Client([DOWN], min_idle=0, on_operation=hook, fail_open=True)
    assert mc.get(prefix + "k") is None
    (s,) = rec.spans
    assert s.status is None and s.attributes["mcpool.outcome"] == "failed_open"
    assert s.events and s.events[0][0] == "mcpool.failed_open"


def test_otel_adapter_uses_the_global_provider_by_default(server, prefix):
    trace = _otel()
    import mcpool.otel
    hook = mcpool.otel.span_hook()  # the API's no-op provider when none is set
    mc = mcpool.Client([server.addr], on_operation=hook)
    assert mc.set(prefix + "k", b"v") is True


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_fail_open_stores_answer_not_stored_but_cas_raises(prefix, protocol):
    """A store to an unreachable server under fail_open is "not stored" (False): add,
    replace, append and prepend; never a bare mcpool.Error. A cas raises its error (tester
    finding cas2 2: False read as "changed since gets", and a retry loop applied its update
    twice after a lost reply)."""
    mc = mcpool.Client([DOWN], min_idle=0, fail_open=True, protocol=protocol)
    k = prefix + "k"
    with pytest.raises(mcpool.ConnectionError):
        mc.cas(k, b"v", 5)
    with pytest.raises(mcpool.ConnectionError):
        mc.cas_multi({k: (b"v", 5)})
    assert mc.append(k, b"v") is False and mc.prepend(k, b"v") is False
    assert mc.replace(k, b"v") is False
    assert mc.add_multi({k: b"v"}) == [k] and mc.incr_multi([k]) == [None]
    assert mc.delete_multi([k]) is False and mc.decr(k) is None
    if protocol == "meta":
        assert mc.set_with_version(k, b"v", 5) is False
        assert mc.invalidate(k) is False and mc.meta_info(k) is None
        assert mc.get_lease(k) == ("recompute", None, None)
    assert mc.metrics()[DOWN]["fail_open_not_stored"] >= 1


def test_values_that_do_not_decode_are_errors_in_records_spans_and_metrics(prefix):
    # Tester finding obs #11/#12: a get_multi that raised MCPOOL_DECOMPRESS for every key was
    # recorded as outcome "hit" (hits 2, no error), so its span had no ERROR status, and the
    # metrics counted hits and no protocol_errors. Now the record, the span and the counters
    # say what the caller got.
    trace = _otel()
    import mcpool.otel
    s = Server()  # a server of its own: its metrics count only this test's calls
    try:
        # pylibmc's flag 8 is "zlib-compressed"; these bytes are not zlib.
        s.raw_set(prefix + "dz", 8, b"this is not zlib")
        s.raw_set(prefix + "dz2", 8, b"nor is this")
        s.raw_set(prefix + "ok", 0, b"fine")
        rec = _Recorder(trace)
        recs = []
        hook = mcpool.otel.span_hook(tracer_provider=rec.provider)

        def both(r):
            recs.append(r)
            hook(r)
        mc = mcpool.Client([s.addr], value_format="pylibmc", on_operation=both)
        with pytest.raises(mcpool.Error) as e:
            mc.get(prefix + "dz")
        assert e.value.status_name == "MCPOOL_DECOMPRESS"
        with pytest.raises(mcpool.Error) as e:
            mc.get_multi([prefix + "dz", prefix + "dz2"])
        assert e.value.status_name == "MCPOOL_DECOMPRESS"
        assert mc.get(prefix + "ok") == b"fine"
        assert [(r.op, r.keys, r.hits, r.outcome) for r in recs] == [
            ("get", 1, 0, "error"), ("get_multi", 2, 0, "error"), ("get", 1, 1, "hit")]
        assert recs[1].error_class == "SERVER_ERROR" and "dz" in recs[1].error
        span = rec.spans[1]
        assert span.name == "memcached get_multi"
        assert span.status.status_code == trace.StatusCode.ERROR
        assert span.attributes["mcpool.outcome"] == "error"
        assert span.attributes["mcpool.error_class"] == "SERVER_ERROR"
        m = mc.metrics()[s.addr]
        assert (m["hits"], m["misses"], m["protocol_errors"]) == (1, 0, 3), m
    finally:
        s.stop()


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_gat_is_traced_as_gat(server, prefix, protocol):
    # Tester finding obs #21: gat was read with CAS uniques and so recorded as op "gats".
    recs = []
    mc = mcpool.Client([server.addr], protocol=protocol, on_operation=recs.append)
    k = prefix + "k"
    assert mc.set(k, b"v") is True
    recs.clear()
    assert mc.gat(k, 10) == b"v"
    assert mc.gats(k, 10)[0] == b"v"
    assert mc.gat(k + "missing", 10) is None
    assert [(r.op, r.outcome) for r in recs] == [("gat", "hit"), ("gats", "hit"),
                                                 ("gat", "miss")]


def test_otel_without_opentelemetry_gives_an_install_line_that_works(monkeypatch):
    # mcpool is not on PyPI: "pip install 'mcpool[otel]'" would fetch another project (or
    # fail); the advice is one that works (tester-obs #19).
    import importlib
    import sys
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "mcpool.otel", raising=False)
    with pytest.raises(ImportError) as info:
        importlib.import_module("mcpool.otel")
    msg = str(info.value)
    assert "pip install opentelemetry-api" in msg, msg
    assert "'./ffi/python[otel]'" in msg, msg
    assert "mcpool[otel]" not in msg.replace("./ffi/python[otel]", ""), msg


def test_otel_spans_of_a_call_over_several_servers_end_when_their_exchange_ended(server, prefix):
    """Tester finding observe 2: the records of a call over several servers reach the hook once
    the slowest has answered; each span ended at the hook's call, so a fast server's span sat
    at the end of the call. It now ends when its exchange ended (``ended_ago``)."""
    import socket
    import time
    trace = _otel()
    import mcpool.otel
    # A deliberately broken fake server (not memcached): answers every get after 300 ms.
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    slow = "127.0.0.1:%d" % ls.getsockname()[1]

    def serve():
        for _ in range(4):
            try:
                c, _ = ls.accept()
            except OSError:
                return
            with c:
                buf = b""
                while b"\r\n" not in buf:
                    got = c.recv(65536)
                    if not got:
                        break
                    buf += got
                time.sleep(0.3)
                c.sendall(b"END\r\n")
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    rec = _Recorder(trace)
    seen = []

    def hook(r):
        seen.append(r)
        span(r)
    span = mcpool.otel.span_hook(tracer_provider=rec.provider)
    mc = mcpool.Client([server.addr, slow], min_idle=0, on_operation=hook,
                       io_timeout=2.0)
    keys = [prefix + "k%d" % i for i in range(40)]
    began = time.time_ns()
    assert mc.get_multi(keys) == {}
    ls.close()
    assert len(rec.spans) == 2, [s.attributes for s in rec.spans]
    by = {s.attributes["net.peer.port"]: s for s in rec.spans}
    fast = by[int(server.addr.rsplit(":", 1)[1])]
    late = by[int(slow.rsplit(":", 1)[1])]
    # The fast server's exchange ended long before the slow one's, and its span says so.
    assert fast.end_time - began < 200e6, (fast.end_time - began) / 1e6
    assert late.end_time - began >= 290e6, (late.end_time - began) / 1e6
    assert abs(fast.start_time - began) < 100e6 and abs(late.start_time - began) < 100e6
    assert max(r.ended_ago for r in seen) >= 0.2
