"""OpenTelemetry spans for mcpool operations (needs ``opentelemetry-api``: ``pip install
opentelemetry-api``, or mcpool's optional extra ``otel``, installed as ``pip install
'./ffi/python[otel]'``; mcpool is not on PyPI).

    >>> import mcpool, mcpool.otel
    >>> mc = mcpool.Client(["127.0.0.1:11211"], on_operation=mcpool.otel.span_hook())

Each record the core reports (one per exchange with a server: a ``get_multi`` over three
servers is three spans, docs/tracing.md) becomes one finished CLIENT span named
``memcached <op>``, started at the call's start and ended at the exchange's end, as a child
of the span current on the calling thread (the hook runs there, after the exchange). Its
attributes (OpenTelemetry's database and network conventions, plus ``mcpool.*``):

- ``db.system`` = ``"memcached"``, ``db.operation`` = ``"get"``, ``"set"``, ...;
- ``net.peer.name``, ``net.peer.port`` (and ``server.address``, ``server.port``); a unix
  socket's path as ``net.peer.name``; none for keys refused before placement;
- ``net.transport`` = ``"ip_tcp"`` or ``"unix"``; ``mcpool.protocol`` (text, meta, binary);
- ``mcpool.keys``, ``mcpool.hits``, ``mcpool.outcome``, ``mcpool.bytes_sent``,
  ``mcpool.bytes_received``; ``mcpool.error_class`` when it failed.

An error (``outcome == "error"``) sets the span's status to ERROR with the message; a
``failed_open`` exchange (``fail_open=True``) keeps an unset status (the call succeeded)
and carries ``mcpool.error_class`` and an ``mcpool.failed_open`` event with the message.
"""
from __future__ import annotations

import time as _time
import typing as _typing

try:
    from opentelemetry import trace as _trace
except ImportError as _e:  # pragma: no cover - exercised only without the extra
    # mcpool is not on PyPI: "pip install 'mcpool[otel]'" would fetch another project
    raise ImportError("mcpool.otel needs opentelemetry-api: pip install opentelemetry-api "
                      "(or install mcpool with its otel extra: pip install "
                      "'./ffi/python[otel]' in mcpool's source tree, or the wheel's file "
                      "name followed by [otel])") from _e

if _typing.TYPE_CHECKING:
    from typing import Callable, Dict, Optional, Union

    from mcpool import OpRecord

__all__ = ["span_hook", "attributes"]


def attributes(record: OpRecord) -> Dict[str, Union[str, int]]:
    """The span attributes of one ``mcpool.OpRecord``."""
    attrs: Dict[str, Union[str, int]] = {
        "db.system": "memcached",
        "db.operation": record.op,
        "mcpool.protocol": record.protocol,
        "mcpool.keys": record.keys,
        "mcpool.hits": record.hits,
        "mcpool.outcome": record.outcome,
        "mcpool.bytes_sent": record.bytes_sent,
        "mcpool.bytes_received": record.bytes_received,
    }
    server = record.server
    if server:
        host, sep, port = server.rpartition(":")
        if sep and port.isdigit() and not server.startswith("/"):
            host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
            attrs.update({"net.peer.name": host, "net.peer.port": int(port),
                          "server.address": host, "server.port": int(port),
                          "net.transport": "ip_tcp"})
        else:
            attrs.update({"net.peer.name": server, "net.transport": "unix"})
    if record.error_class:
        attrs["mcpool.error_class"] = record.error_class
    return attrs


def span_hook(tracer: Optional[_trace.Tracer] = None,
              tracer_provider: Optional[_trace.TracerProvider] = None
              ) -> Callable[[OpRecord], None]:
    """An ``on_operation`` callable that records each operation as a span of ``tracer``
    (default: ``tracer_provider``'s, or the global provider's, tracer named ``mcpool``)."""
    if tracer is None:
        tracer = _trace.get_tracer("mcpool", tracer_provider=tracer_provider)
    client = _trace.SpanKind.CLIENT
    error = _trace.StatusCode.ERROR
    status = _trace.Status

    def hook(record: OpRecord) -> None:
        # The exchange ended `ended_ago` before this call (a call over several servers
        # hands every record over once the slowest has answered), and began with the call.
        end = _time.time_ns() - int(record.ended_ago * 1e9)
        start = end - int(record.duration * 1e9)
        span = tracer.start_span("memcached " + record.op, kind=client,
                                 attributes=attributes(record), start_time=start)
        if record.outcome == "error":
            span.set_status(status(error, record.error or record.error_class))
        elif record.outcome == "failed_open":
            span.add_event("mcpool.failed_open", {"message": record.error or ""})
        span.end(end_time=end)
    return hook
