"""mcpool: a pooled, thread-safe memcached client (a C extension over libmcpool).

    >>> import mcpool
    >>> mc = mcpool.Client(["127.0.0.1:11211"], distribution="libmemcached-ketama")
    >>> mc.set("greeting", "hello")
    True
    >>> mc.get("greeting")
    'hello'

One client is shared by every thread (each server has a pool of connections); the GIL is
released during network I/O. Values are stored in a value format of the core
(``value_format=``): ``"mcpool"`` (the default), the layout mcpool's Rust, C, Perl and Java
clients read too, or a legacy client's (``"pylibmc"``, ``"python-memcached"``,
``"pymemcache"``, ...) to share values with it (docs/value-format.md).
"""
import math as _math
import operator as _operator

from ._mcpool import (  # noqa: F401
    ClientError,
    ClientTypeError,
    ConnectionError,
    Error,
    ServerError,
    TimeoutError,
    _Client,
    library_version,
)

__all__ = [
    "Client",
    "Error",
    "ClientError",
    "ClientTypeError",
    "ConnectionError",
    "TimeoutError",
    "ServerError",
    "library_version",
]
__version__ = "0.1.0"


_MS_MAX = 2 ** 64 - 1  # the C ABI's milliseconds are a uint64_t


def _ms(name, seconds, zero=None):
    """Seconds (int or float) to whole milliseconds for the C ABI, refusing what it cannot
    hold: inf and nan (there is no "no timeout" value; ``zero`` says what 0 means for the
    options where it means none), negative and too large values. None: the default."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise ClientTypeError("%s is a number of seconds, not %r" % (name, seconds))
    seconds = float(seconds) if isinstance(seconds, float) else int(seconds)
    hint = " (0 means %s)" % zero if zero else ""
    if isinstance(seconds, float) and not _math.isfinite(seconds):
        raise ClientError("%s must be a finite number of seconds, got %r%s"
                          % (name, seconds, hint))
    if seconds < 0:
        raise ClientError("%s must be >= 0 seconds, got %r%s" % (name, seconds, hint))
    # the first test keeps seconds * 1000 finite for a float
    if seconds > _MS_MAX // 1000 or int(round(seconds * 1000)) > _MS_MAX:
        raise ClientError("%s must be at most %d seconds, got %r" % (name, _MS_MAX // 1000,
                                                                      seconds))
    ms = int(round(seconds * 1000))
    if ms == 0 and (seconds != 0 or not zero):
        raise ClientError("%s must be >= 0.001 seconds, got %r%s" % (name, seconds, hint))
    return ms


def _int(name, value, lo, hi, hi_text):
    """An integer option in lo..hi (None: the default); bool is not an int here."""
    if value is None:
        return None
    try:
        if isinstance(value, bool):
            raise TypeError
        value = _operator.index(value)
    except TypeError:
        raise ClientTypeError("%s must be an int, not %s" % (name, type(value).__name__)) \
            from None
    if not lo <= value <= hi:
        raise ClientError("%s must be an int in %d..%s, got %d" % (name, lo, hi_text, value))
    return value


def _pickle_protocol(value):
    if value is None:
        return None
    import pickle
    return _int("pickle_protocol", value, -1, pickle.HIGHEST_PROTOCOL,
                "%d (-1: the highest)" % pickle.HIGHEST_PROTOCOL)


def _server(spec, weight):
    """One server as (address, weight)."""
    if isinstance(spec, (tuple, list)):
        if len(spec) != 2:
            raise ClientTypeError("a server is 'host:port', ('host', port) or ('host:port', weight)")
        a, b = spec
        if not isinstance(a, str) or isinstance(b, bool) or not isinstance(b, int):
            raise ClientTypeError("a server is 'host:port', ('host', port) or ('host:port', weight)")
        if a.startswith(("/", "[")) or a.count(":") == 1:
            return (a, b)  # ("host:port", weight), as python-memcached
        host = "[%s]" % a if ":" in a and not a.startswith("[") else a
        return ("%s:%d" % (host, b), weight)  # (host, port), as pymemcache
    if isinstance(spec, bytes):
        spec = spec.decode()
    if not isinstance(spec, str):
        raise ClientTypeError("a server address must be a str, not %s" % type(spec).__name__)
    return (spec, weight)


class Client(_Client):
    """A memcached client over a pool of connections per server; share one between threads.

    ``servers``: a list of ``"host:port"`` (or ``"host"``, port 11211; ``"[v6]:port"``;
    ``"/unix/socket"``), ``("host", port)`` tuples (pymemcache) or ``("host:port", weight)``
    tuples (python-memcached); a single string is one server. Order matters: it decides
    placement.

    Options (None keeps the core's default):

    - ``distribution``: the placement profile, named after the client it agrees with key for
      key: ``"cache-memcached"`` (default), ``"python-memcached"``, ``"libmemcached-ketama"``
      (pylibmc with ``behaviors={"ketama": True}``), ``"libmemcached-ketama-weighted"``,
      ``"whalin-consistent"``, ``"spymemcached-ketama"``, ``"twemproxy-ketama"``, ...
    - ``weights``: a list of weights, one per server (default 1 each).
    - ``failover``: ``"fail-fast"`` (default), ``"rehash"`` or ``"eject"``.
    - ``protocol``: ``"text"`` (default), ``"meta"`` or ``"binary"``; ``binary=True`` as pylibmc.
    - ``key_prefix`` (alias ``prefix``): a namespace prepended to every key on the wire.
    - ``value_format``: how values are laid out in memcached (flags, integer and text forms,
      compression): ``"mcpool"`` (default; the cross-language layout every mcpool binding
      reads), or a legacy client's to share a cache with it: ``"pylibmc"``,
      ``"python-memcached"``, ``"pymemcache"``, ``"cache-memcached-fast"``,
      ``"cache-memcached"``, ``"whalin"``, ``"spymemcached"``, ``"libmemcached"`` (bytes
      only). Every program sharing a fleet uses the same one. ``bytes`` read back as
      ``bytes``, ``str`` as ``str``, ``int`` (signed 64-bit) as ``int``, ``bool`` as
      ``bool``; a value of a kind Python cannot read (a Perl or Java object, a pickle with
      ``pickle`` off, flags that mean nothing in the format, a compressed value that does not
      inflate) raises ``ServerError`` naming the key, never returns bytes.
    - ``min_compress_len``: compress values of at least this many bytes (with the format's
      codec); 0 (default) never compresses. Compressed values are always inflated on read.
      ``compression_ratio``: keep the compressed form only when it is at most this fraction
      of the original (core default 0.8).
    - ``pickle``: store other objects with pickle and unpickle pickled values on read.
      Off by default: unpickling what another process wrote executes its code. With it off,
      storing such an object raises ``ClientTypeError`` and reading a pickled value raises
      ``ServerError``. ``pickle_protocol``: default ``pickle.DEFAULT_PROTOCOL``.
    - ``pool_size``: most connections per server (default 16); ``min_idle`` (default 1).
    - ``connect_timeout``, ``timeout`` (each socket read/write), ``pool_timeout`` (waiting for a
      free connection), ``idle_timeout``, ``max_lifetime``, ``retry_timeout``,
      ``retry_timeout_max``: seconds (floats allowed), finite (``inf`` and ``nan`` raise
      ``ClientError``: there is no "no timeout"; 0 means none for ``idle_timeout`` and
      ``max_lifetime``).
    - ``failure_limit``: consecutive failures that mark a server dead (default 2).
    - ``nodelay`` (default True), ``test_on_check_out`` (default False),
      ``sanitize_keys``, ``max_value_size`` (default 1 MiB, at most 1 GiB: memcached's
      largest item), ``max_decompressed_size``,
      ``username``/``password`` (SASL PLAIN, binary protocol).

    A bad option raises at construction, naming it: ``ClientTypeError`` for a wrong type
    (``bool`` is not an int here), ``ClientError`` out of range (README.md lists the ranges).

    Errors: ``ClientError`` (also ``ValueError``) for bad input, ``ClientTypeError`` (also
    ``TypeError``) for a key or value of a wrong type, ``ConnectionError``, ``TimeoutError``
    (a ``ConnectionError``), ``ServerError``; all are ``mcpool.Error``. Misses are not errors.
    """

    def __init__(self, servers, *, distribution=None, weights=None, failover=None,
                 protocol=None, binary=False, key_prefix=None, prefix=None,
                 min_compress_len=0, compression_ratio=None, pickle=False,
                 pickle_protocol=None, pool_size=None, min_idle=None, connect_timeout=None,
                 timeout=None, pool_timeout=None, idle_timeout=None, max_lifetime=None,
                 retry_timeout=None, retry_timeout_max=None, failure_limit=None,
                 nodelay=None, test_on_check_out=None, sanitize_keys=None,
                 max_value_size=None, max_decompressed_size=None, username=None,
                 password=None, value_format="mcpool"):
        if isinstance(servers, (str, bytes)):
            servers = [servers]
        try:
            servers = list(servers)
        except TypeError:
            raise ClientTypeError("servers must be a list of addresses") from None
        if weights is not None:
            weights = list(weights)
            if len(weights) != len(servers):
                raise ClientError("weights must have one entry per server")
        norm = [_server(s, weights[i] if weights is not None else 1)
                for i, s in enumerate(servers)]
        norm = [(a, _int("a server weight", w, 1, 2 ** 32 - 1, "2**32-1")) for a, w in norm]
        if binary and protocol not in (None, "binary"):
            raise ClientError("binary=True conflicts with protocol=%r" % protocol)
        if key_prefix is not None and prefix is not None:
            raise ClientError("give key_prefix or prefix, not both")
        super().__init__(
            norm,
            distribution=distribution,
            failover=failover,
            protocol="binary" if binary else protocol,
            key_prefix=key_prefix if key_prefix is not None else prefix,
            min_idle=min_idle,
            max_size=_int("pool_size", pool_size, 1, 2 ** 32 - 1, "2**32-1"),
            idle_timeout_ms=_ms("idle_timeout", idle_timeout, zero="never closed for idling"),
            max_lifetime_ms=_ms("max_lifetime", max_lifetime, zero="no limit"),
            connect_timeout_ms=_ms("connect_timeout", connect_timeout),
            io_timeout_ms=_ms("timeout", timeout),
            pool_timeout_ms=_ms("pool_timeout", pool_timeout),
            nodelay=nodelay,
            test_on_check_out=test_on_check_out,
            failure_limit=failure_limit,
            retry_timeout_ms=_ms("retry_timeout", retry_timeout, zero="retry at once"),
            retry_timeout_max_ms=_ms("retry_timeout_max", retry_timeout_max,
                                     zero="retry at once"),
            min_compress_len=min_compress_len,
            compression_ratio=compression_ratio,
            max_decompressed_size=max_decompressed_size,
            sanitize_keys=sanitize_keys,
            max_value_size=max_value_size,
            username=username,
            password=password,
            pickle=bool(pickle),
            pickle_protocol=_pickle_protocol(pickle_protocol),
            value_format=value_format,
        )

    def stats(self, group=None):
        """Statistics of every server: ``{"host:port": {name: value}}`` (values are str).

        ``group``: ``None`` for the general ones, or ``"items"``, ``"slabs"``,
        ``"settings"``, ... A server that failed maps to its exception (an ``mcpool.Error``);
        when every server failed, the first error is raised.
        """
        return self._per_server(self._stats(group))

    def get_stats(self, stat_args=None):
        """As pylibmc and python-memcached: ``[("host:port", {name: value}), ...]`` of the
        servers that answered."""
        return [(k, v) for k, v in self._stats(stat_args).items() if isinstance(v, dict)]

    def version(self):
        """Each server's version: ``{"host:port": "1.6.21"}`` (a failed server maps to its
        exception; when every server failed, the first error is raised)."""
        return {k: v.get("version") if isinstance(v, dict) else v
                for k, v in self._per_server(self._version()).items()}

    @staticmethod
    def _per_server(d):
        if d and all(isinstance(v, BaseException) for v in d.values()):
            raise next(iter(d.values()))
        return d

    def disconnect_all(self):
        """Accepted for python-memcached compatibility; connections are the pool's."""

    def __repr__(self):
        return "<mcpool.Client %s>" % ", ".join(self.servers)
