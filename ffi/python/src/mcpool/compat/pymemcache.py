"""The pymemcache 3.5 API over mcpool: change ``import pymemcache`` to
``import mcpool.compat.pymemcache as pymemcache`` and the program runs as before.

    >>> import mcpool.compat.pymemcache as pymemcache
    >>> from mcpool.compat.pymemcache import serde
    >>> mc = pymemcache.HashClient([("10.0.0.1", 11211), ("10.0.0.2", 11211)],
    ...                            serde=serde.pickle_serde)
    >>> mc.set("some_key", {"a": 1.5})
    True

``Client`` (one server), ``PooledClient`` (one server, thread-safe) and ``HashClient``
(several), the exceptions (``MemcacheError`` and its subclasses, pymemcache's hierarchy) and
``serde`` (``pickle_serde``, ``PickleSerde``, ``python_memcache_serializer``,
``python_memcache_deserializer``, ``get_python_memcache_serializer``, the ``FLAG_*``
constants; also importable as ``mcpool.compat.pymemcache.serde``).

What is pymemcache's and stays so:

- Placement: ``HashClient``'s rendezvous hashing of ``"%s-%s" % (node, key)`` (murmur3,
  node ``"host:port"``), the key hashed without ``key_prefix`` (the core's ``pymemcache``
  preset): a ``str`` key is on the server pymemcache puts it on, in a fleet shared with
  processes running the real pymemcache.
- Values. Without a serde (pymemcache's default) a value is stored as bytes under flags 0:
  ``bytes`` as they are, anything else as ``str(value)`` encoded with ``encoding``
  (default ``ascii``; a value it cannot encode raises ``MemcacheIllegalInputError`` "Data
  values must be binary-safe", nothing sent), and every read returns the bytes stored,
  whatever their flags (the core's ``libmemcached`` value format, which hands every value
  over as its bytes). With ``serde=serde.pickle_serde`` (or pymemcache's own
  ``pymemcache.serde.pickle_serde``/``PickleSerde(pickle_version)``, or the legacy
  ``serializer=python_memcache_serializer, deserializer=python_memcache_deserializer``)
  values are in ``pickle_serde``'s layout (the core's ``pymemcache`` value format): bytes
  flag 0, str flag 16 (UTF-8), int flag 2 (decimal), everything else pickled at
  ``pickle_version`` (default ``pickle.HIGHEST_PROTOCOL``) under flag 1, a bool and a
  subclass of bytes/str/int included (its type test is exact); a pickle that does not load
  reads as None, as there. Unpickling runs code chosen by whoever wrote the value: use a
  pickling serde only on a cache that no untrusted party can write.
- Key checks before any I/O, raising ``MemcacheIllegalInputError`` with pymemcache's
  messages: ``key_prefix`` + key over 250 bytes, white space (also leading or trailing),
  a NUL byte, a non-ASCII key without ``allow_unicode_keys=True``.
- Return values: ``set``/``add``/``replace``/``append``/``prepend``/``delete``/``touch``
  True or False, ``set_many`` (= ``set_multi``) the list of the keys not stored,
  ``delete_many`` (= ``delete_multi``) True, ``cas`` True (stored), False (changed since
  ``gets``) or None (no such key), ``incr``/``decr`` the new value or None for a missing
  key, ``get(key, default=None)``, ``gets(key, default=None, cas_default=None)`` as
  ``(value, cas)`` with the CAS as bytes (``b"123"``), as pymemcache reads it,
  ``get_many``/``gets_many`` dicts of the keys found, ``stats()`` a dict with bytes names
  and pymemcache's value conversions, ``version()`` bytes, ``flush_all()`` True (None on a
  ``HashClient``, as there). ``expire``, ``delay`` and an ``incr``/``decr`` value that is
  not an int raise ``MemcacheIllegalInputError``; a negative ``expire`` expires the item at
  once (memcached's reading of it).
- ``ignore_exc``: on ``Client``/``PooledClient`` a failed read answers as a miss
  (``get`` its default, ``gets`` ``(default, cas_default)``, ``get_many`` ``{}``), other
  calls raise; on ``HashClient`` every call answers its default (``get`` the default,
  ``set`` False, ``incr`` False, ``gets`` None, ``set_many`` the keys not stored, never
  raising: see below). Without it errors raise.
- ``HashClient``'s failure rule (the core's ``pymemcache`` preset): a server whose
  connection fails raises that error (an ``OSError``: a refused connect is a
  ``ConnectionRefusedError``, a timeout ``socket.timeout``, as pymemcache's socket raises),
  then for ``retry_timeout`` seconds its keys answer the call's default without trying it
  (``get`` None, ``set`` False, ``set_many`` the keys, ``get_many`` without them), as
  pymemcache's ``_safely_run_func``; at its ``retry_attempts`` + 1-th failed try, one per
  ``retry_timeout``, the server is removed from the hash and its keys are placed on the
  others, as pymemcache removes a node (a call or two sooner: see below). ``retry_attempts``, ``retry_timeout``,
  ``connect_timeout``, ``timeout`` (seconds) go to the core's ``eject_after``,
  ``retry_timeout``/``retry_timeout_max``, ``connect_timeout``, ``io_timeout``.
  ``Client``/``PooledClient`` try their server again at every call, as pymemcache. (With
  ``retry_attempts`` 0 or less pymemcache raises the first failure's error and removes the
  server; here that first call already goes on to the server the hash picks without it.)
- Errors: memcached's ``CLIENT_ERROR`` (``incr`` of a value that is not a number, a delta
  memcached refuses) is ``MemcacheClientError``, ``SERVER_ERROR`` (a value too large for
  the server) ``MemcacheServerError``, a reply that is not memcached's
  ``MemcacheUnknownError``; a connection the server closed where a reply belongs is
  ``MemcacheUnexpectedCloseError``, as pymemcache raises it; any other connection failure
  stays an ``OSError`` (``socket.error``), which is what a pymemcache caller catches.
  ``set_many`` raises a server's failure too, as pymemcache's ``Client``, ``PooledClient``
  and ``HashClient`` do (see below for when): a ``SERVER_ERROR`` reply such as "out of
  memory storing object" or a value too large, a connection closed where a reply belongs, a
  timeout (``socket.timeout``: with the request sent, memcached may have stored the keys),
  a refused connect; it lists the keys memcached answered ``NOT_STORED`` (and a
  ``HashClient`` those of a server in its retry window, as there). A value the serde cannot
  decode (text that is not UTF-8, an integer flag on a body that is not a number) raises a
  ``ValueError`` (``mcpool.ValueFormatError``), as pymemcache's deserializer does.
- ``__getitem__`` (``KeyError`` for a miss or a stored None), ``__setitem__``,
  ``__delitem__``; ``close``/``disconnect_all``/``quit`` close the connections (the next
  call opens new ones); ``HashClient.add_server``/``remove_server``.

What differs:

- ``noreply``: pymemcache's ``default_noreply=True`` makes ``set``/``add``/``replace``/
  ``append``/``prepend``/``delete``/``touch``/``flush_all`` send without reading the reply
  and return True (``set_many`` ``[]``). Here, as in the other drop-ins, every call waits
  for memcached's reply and returns the real outcome, whatever ``noreply`` and
  ``default_noreply`` say: ``add`` of an existing key, ``replace``/``append``/``prepend``/
  ``touch``/``delete`` of a missing one are False here, True there. The data is the same; an
  answer that claims a store that did not happen would be a wrong value.
- ``bytes`` keys on a ``HashClient`` with more than one server raise
  ``NotImplementedError``: pymemcache places ``b"k"`` by the text ``"b'k'"`` (``str()`` of
  the bytes), mcpool by the key itself, so it would read and write another server than
  pymemcache (a silent miss for both). Pass ``str`` keys (the same wire key, placed as
  pymemcache places them). With one server, and on ``Client``/``PooledClient``, bytes keys
  are accepted.
- Keys with a control byte other than white space and NUL (``\\x01``..``\\x1f``,
  ``\\x7f``), which pymemcache sends, raise ``MemcacheIllegalInputError`` (the core's key
  rule for the text protocol). An empty key raises ``MemcacheIllegalInputError`` where
  pymemcache sends it and raises memcached's ``MemcacheUnknownCommandError``.
- Values: without a serde a pickled value (flag 1) that another process stored reads as its
  bytes, as with pymemcache. With ``pickle_serde``, a value under flags that layout does
  not know (a compressed value, mcpool's own layout, flags combined oddly) raises
  ``mcpool.ValueFormatError`` (a ``ValueError``) where pymemcache returns its bytes as
  stored: the core's rule, never bytes of unknown meaning handed over as the value.
- Modules: ``client`` (``client.base``, ``client.hash``, ``client.retrying`` with
  ``RetryingClient``, ``client.rendezvous``),
  ``exceptions`` and ``serde`` hold pymemcache's names, so ``from
  mcpool.compat.pymemcache.client.hash import HashClient`` works; ``pymemcache.pool`` and
  ``fallback`` are not here. ``cache_memlimit`` and ``shutdown`` (commands that change or stop
  the server for every client) raise ``NotImplementedError``.
- ``HashClient`` removes a failing server at its ``retry_attempts`` + 1-th failed try (the
  core's ``eject_after``), which then already goes to the server the hash picks without it;
  pymemcache raises that try's error and the next call's before it removes the node, so its
  keys move one or two calls later there (with calls a moment apart, the same time).
  ``flush_all`` with a server failing raises on the call that tries it, once per
  ``retry_timeout``, and answers None in between, also once the server is removed, as
  pymemcache's does (which raises once or twice more around the removal). A connection the
  server closed where a reply belongs puts the server in ``HashClient``'s retry window too
  (the core's rule): the call raises ``MemcacheUnexpectedCloseError``, then for
  ``retry_timeout`` seconds the server's keys answer the call's default without trying it
  (``set`` False, ``set_many`` the keys); pymemcache's ``HashClient``, for which it is no
  ``socket.error``, raises it at every call.
- Not supported, refused with ``NotImplementedError`` naming the argument: a custom
  ``serde``/``serializer``/``deserializer`` (the value layout is the core's: ``pickle_serde``
  or none), ``flags=`` on a store (other than 0 without a serde), ``socket_module``,
  ``tls_context`` (use ``mcpool.Client``'s ``tls_*`` options),
  ``lock_generator``, a ``hasher`` other than ``RendezvousHash``, a ``retry_timeout`` of 0
  or less (pymemcache then retries a failing server at every call and still removes it after
  ``retry_attempts`` + 1 failures; the core never removes a server that is always due for
  its retry), and a ``dead_timeout`` of 0 or less (pymemcache then puts a removed node
  back at the next call). A ``dead_timeout`` above 0 keeps a removed server out of the hash
  that long, as pymemcache does (the core's ``ejected_rest``).
- ``connect_timeout=None``/``timeout=None`` (pymemcache: wait forever) keep mcpool's own
  timeouts (connect 1 s, each read or write 1 s, the whole call 5 s): an error beats a hang.
  A timeout given lifts the whole-call limit (``operation_timeout`` 0), as pymemcache has
  none. ``no_delay=False`` leaves TCP_NODELAY on (only latency differs). ``max_pool_size``
  (with ``use_pooling`` or ``PooledClient``) is the core's per-server ``max_size``: a call
  beyond it waits for a connection (``pool_timeout``) where pymemcache raises; without it
  the core's 16. ``pool_idle_timeout`` is the core's ``idle_timeout``.
- ``socket_keepalive=KeepaliveOpts(idle, intvl, cnt)`` is the core's ``tcp_keepalive`` with
  ``tcp_keepidle`` ``idle`` seconds, which sends the first probe after ``idle`` seconds
  without traffic, the next ones ``idle`` apart, and gives up after the system's count
  (``net.ipv4.tcp_keepalive_probes``, 9 by default): so ``intvl`` must be ``idle`` and
  ``cnt`` that count, and any other ``KeepaliveOpts`` (its default ``(1, 1, 5)`` too, on a
  system with 9) raises ``NotImplementedError`` naming what mcpool sets; ``idle`` must be
  whole seconds up to 32767 (``ValueError``). On a unix socket it changes nothing
  (pymemcache's ``setsockopt`` fails there at every connect: ``OSError`` "Operation not
  supported").
- ``set_many`` raises a server's failure (above) only once every other server's keys are
  stored (pymemcache raises at the first failing server and sends the later servers' keys
  no more). A ``HashClient`` with ``ignore_exc`` lists every key a server failed (an
  outage, a timeout, an error reply, a closed connection: not known to be stored) where
  pymemcache's answers ``[]`` (its ``_set_many`` drops the error before counting a key
  failed: stores that did not happen reported done). ``get_many`` on a ``HashClient`` whose
  server failed raises that error after reading the other servers (pymemcache raises at the
  first failing server). Once every server of a ``HashClient`` is out, calls answer their
  defaults where pymemcache raises ``MemcacheError("All servers seem to be down right
  now")`` (with no servers at all it raises it, as there).
- ``HashClient`` has pymemcache's methods; ``stats``/``version``/``__getitem__`` are
  ``Client``'s and ``PooledClient``'s, as there. The clients are thread-safe and pooled
  (pymemcache's ``Client`` is neither).
- An ``expire``, ``delay`` or CAS beyond what memcached reads (above 2**31-1, 2**64-1)
  raises ``MemcacheClientError``, nothing stored; a ``set`` or ``set_many`` so refused
  deletes its keys (the core's rule), so no older value is read after it, as with
  pymemcache, whose set memcached stores already expired. ``cas`` with the CAS 0 (no item has it) is
  not sent: it answers None for a missing key, False for an existing one, as memcached
  would.
"""
from __future__ import annotations

import functools as _functools
import inspect as _inspect
import io as _io
import ipaddress as _ipaddress
import logging as _logging
import os as _os
import pickle as _pickle
import socket as _socket
import sys as _sys
import time as _time
import typing as _typing

import mcpool as _mcpool
from mcpool._bigint import to_digits as _to_digits
from mcpool.compat import exptime as _exptime, socket_address as _socket_address
from mcpool.compat import refuse_userinfo as _refuse_userinfo, submodule as _submodule_of

if _typing.TYPE_CHECKING:
    import ssl
    from types import ModuleType
    from typing import (AbstractSet, Any, Callable, Dict, Iterable, List, Mapping, NoReturn,
                        Optional, Sequence, Tuple, Type, TypeVar, Union)

    # a key: str (sent as UTF-8 or ASCII, allow_unicode_keys) or bytes, as pymemcache takes one
    _Key = Union[str, bytes]
    # a server: (host, port), [host, port], "host:port", "[v6]:port", "host" (port 11211), a
    # unix socket's "/path" or "unix:PATH"
    _ServerSpec = Union[str, Tuple[str, Union[int, str]], List[Any]]
    # serde=: pickle_serde, PickleSerde(pickle_version), or pymemcache's own (refused: any
    # other); socket_keepalive=: KeepaliveOpts, this module's or pymemcache's own
    _Serde = Any
    _KeepaliveOpts = Any
    # retry_for= and do_not_retry_for=: a tuple, set or list of exception classes
    _ExceptionClasses = Union[Sequence[Type[Exception]], AbstractSet[Type[Exception]]]
    # the (bytes, flags) a serializer makes: an int's digits as str, as pymemcache's
    _Serialized = Tuple[Union[bytes, str], int]
    _T = TypeVar("_T")
    _U = TypeVar("_U")
    _D = TypeVar("_D")
    # a multi call's keys: its answer is keyed by them as given
    _KT = TypeVar("_KT", bound=Union[str, bytes])

__version__ = "3.5.2"

# --------------------------------------------------------------------------------------------
# Exceptions: pymemcache's classes and hierarchy (pymemcache/exceptions.py).
# --------------------------------------------------------------------------------------------


class MemcacheError(Exception):
    "Base exception class"


class MemcacheClientError(MemcacheError):
    """Raised when memcached fails to parse the arguments to a request, likely due to a
    malformed key and/or value."""


class MemcacheUnknownCommandError(MemcacheClientError):
    """Raised when memcached fails to parse a request."""


class MemcacheIllegalInputError(MemcacheClientError):
    """Raised when a key or value is not legal for Memcache."""


class MemcacheServerError(MemcacheError):
    """Raised when memcached reports a failure while processing a request."""


class MemcacheUnknownError(MemcacheError):
    """Raised when this library receives a response from memcached that it cannot parse."""


class MemcacheUnexpectedCloseError(MemcacheServerError):
    "Raised when the connection with memcached closes unexpectedly."


class _ConnectionRefused(_mcpool.ConnectionError, ConnectionRefusedError):
    """A refused connect: mcpool's ConnectionError and the ConnectionRefusedError
    pymemcache's socket raises (both an OSError, pymemcache's ``socket.error``)."""


# --------------------------------------------------------------------------------------------
# serde: pymemcache.serde's names (the module is also importable as ...pymemcache.serde).
# --------------------------------------------------------------------------------------------

FLAG_BYTES = 0
FLAG_PICKLE = 1 << 0
FLAG_INTEGER = 1 << 1
FLAG_LONG = 1 << 2
FLAG_COMPRESSED = 1 << 3
FLAG_TEXT = 1 << 4
DEFAULT_PICKLE_VERSION = _pickle.HIGHEST_PROTOCOL


def _python_memcache_serializer(key: object, value: Any,
                                pickle_version: Optional[int] = None) -> _Serialized:
    """pymemcache's: (bytes, flags) of value in pickle_serde's layout."""
    value_type = type(value)
    if value_type is bytes:
        return value, 0
    if value_type is str:
        return value.encode("utf8"), FLAG_TEXT
    if value_type is int:
        return "%d" % value, FLAG_INTEGER
    output = _io.BytesIO()
    _pickle.Pickler(output, pickle_version).dump(value)
    return output.getvalue(), FLAG_PICKLE


def get_python_memcache_serializer(pickle_version: Optional[int] = DEFAULT_PICKLE_VERSION
                                   ) -> _functools.partial[_Serialized]:
    """Return a serializer using a specific pickle version"""
    return _functools.partial(_python_memcache_serializer, pickle_version=pickle_version)


python_memcache_serializer = get_python_memcache_serializer()


def python_memcache_deserializer(key: object, value: bytes, flags: int) -> Any:
    """pymemcache's: the value of (bytes, flags) in pickle_serde's layout."""
    if flags == 0:
        return value
    if flags & FLAG_TEXT:
        return value.decode("utf8")
    if flags & FLAG_INTEGER or flags & FLAG_LONG:
        return int(value)
    if flags & FLAG_PICKLE:
        try:
            return _pickle.Unpickler(_io.BytesIO(value)).load()
        except Exception:
            _logging.info("Pickle error", exc_info=True)
            return None
    return value


class PickleSerde:
    """pymemcache's ``PickleSerde(pickle_version)``: given as ``serde=``, values are stored
    in its layout by the core (the ``pymemcache`` value format) at its pickle version."""

    def __init__(self, pickle_version: Optional[int] = DEFAULT_PICKLE_VERSION) -> None:
        self.pickle_version = pickle_version
        self._serialize_func = get_python_memcache_serializer(pickle_version)

    def serialize(self, key: object, value: Any) -> _Serialized:
        return self._serialize_func(key, value)

    def deserialize(self, key: object, value: bytes, flags: int) -> Any:
        return python_memcache_deserializer(key, value, flags)


class LegacyWrappingSerde:
    """pymemcache's wrapper of ``serializer``/``deserializer`` functions (only the
    ``python_memcache_*`` pair is accepted by the clients)."""

    def __init__(self, serializer_func: Optional[Callable[[Any, Any], Any]],
                 deserializer_func: Optional[Callable[[Any, Any, int], Any]]) -> None:
        self.serialize = serializer_func or self._default_serialize
        self.deserialize = deserializer_func or self._default_deserialize

    def _default_serialize(self, key: object, value: Any) -> Tuple[Any, int]:
        return value, 0

    def _default_deserialize(self, key: object, value: Any, flags: int) -> Any:
        return value


pickle_serde = PickleSerde()

serde = _submodule_of(__name__, "serde", "pymemcache.serde's names, over mcpool.", globals(),
                      ["FLAG_BYTES", "FLAG_PICKLE", "FLAG_INTEGER", "FLAG_LONG", "FLAG_COMPRESSED",
                       "FLAG_TEXT", "DEFAULT_PICKLE_VERSION", "get_python_memcache_serializer",
                       "python_memcache_serializer", "python_memcache_deserializer",
                       "PickleSerde", "LegacyWrappingSerde", "pickle_serde"])


def _pickle_version(given: Any, serializer: Any, deserializer: Any) -> Optional[int]:
    """None (no serde: bytes under flags 0) or the pickle version of pickle_serde's layout,
    from the arguments; anything else is refused."""
    if given is not None:
        cls = type(given)
        if isinstance(given, PickleSerde):
            version = given.pickle_version
        elif cls.__name__ == "PickleSerde" and cls.__module__ == "pymemcache.serde":
            version = getattr(given._serialize_func, "keywords", {}).get(
                "pickle_version", DEFAULT_PICKLE_VERSION)
        else:
            raise NotImplementedError(
                "serde=%s: only pickle_serde (or PickleSerde(pickle_version)) is supported by "
                "mcpool, whose core writes that layout; a custom serde is not"
                % cls.__name__)
        return _checked_version(version)
    if serializer is None and deserializer is None:
        return None
    ser = getattr(serializer, "func", None)
    if (getattr(ser, "__name__", None) != "_python_memcache_serializer"
            or getattr(deserializer, "__name__", None) != "python_memcache_deserializer"):
        raise NotImplementedError(
            "serializer=/deserializer=: only the pair python_memcache_serializer, "
            "python_memcache_deserializer is supported by mcpool (the value layout is its "
            "core's); a custom one is not")
    return _checked_version(serializer.keywords.get("pickle_version", DEFAULT_PICKLE_VERSION))


def _checked_version(version: Optional[int]) -> int:
    if version is None:  # pickle.Pickler(f, None): the default protocol
        return _pickle.DEFAULT_PROTOCOL
    return version


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def check_key_helper(key: _Key, allow_unicode_keys: bool, key_prefix: bytes = b"") -> bytes:
    """pymemcache's key check: the key with key_prefix, as bytes, or
    MemcacheIllegalInputError."""
    if allow_unicode_keys:
        if isinstance(key, str):
            key = key.encode("utf8")
    elif isinstance(key, str):
        # pymemcache 3.5 tests six.string_types, only str on Python 3: a bytes key is sent as
        # it is, non-ASCII bytes included (tester finding pymc 3)
        try:
            key = key.encode("ascii")
        except UnicodeEncodeError:
            raise MemcacheIllegalInputError("Non-ASCII key: %r" % key)
    key = key_prefix + key
    parts = key.split()
    if len(key) > 250:
        raise MemcacheIllegalInputError("Key is too long: %r" % key)
    elif len(parts) > 1 or (parts and parts[0] != key):
        raise MemcacheIllegalInputError("Key contains whitespace: %r" % key)
    elif b"\00" in key:
        raise MemcacheIllegalInputError("Key contains null: %r" % key)
    return key


@_typing.overload
def normalize_server_spec(server: None) -> None: ...
@_typing.overload
def normalize_server_spec(server: _ServerSpec) -> Union[str, Tuple[Any, ...]]: ...


def normalize_server_spec(server: Optional[_ServerSpec]
                          ) -> Union[str, Tuple[Any, ...], None]:
    """pymemcache's: (host, port), or a unix socket's path."""
    if isinstance(server, tuple) or server is None:
        return server
    if isinstance(server, list):
        return tuple(server)
    if not isinstance(server, str):
        raise ValueError("Unknown server provided: %r" % server)
    _refuse_userinfo(server)
    if server.startswith("unix:"):
        return server[5:]
    if server.startswith("/"):
        return server
    port: Union[int, str]
    if ":" not in server or server.endswith("]"):
        host, port = server, 11211
    else:
        host, port = server.rsplit(":", 1)
        port = int(port)
    if host.startswith("["):
        host = host.strip("[]")
    return (host, port)


def _address(server: Union[str, Tuple[Any, ...]], relative_socket: bool = False) -> str:
    """mcpool's address of a normalized server spec. A str is a unix socket's path, given
    to the core as unix:PATH so that ":2" in it stays the path (tester finding addresses 1);
    a relative one (``unix:NAME``) is a socket in the working directory for ``Client``
    (``relative_socket``), as pymemcache's Client opens it, and a host name for
    ``HashClient``, as pymemcache's HashClient reads it (finding addresses 2)."""
    if isinstance(server, tuple):
        host, port = server
        if ":" in host and not _ipv6(host):
            # "10.0.0.1:11211:2" and "[::1]:11211:2" are the host "10.0.0.1:11211" or
            # "::1]:11211", port 2, to pymemcache (no weights), whose every call fails
            # resolving it (socket.gaierror); refused, one rule for both (tester finding
            # retest27 8: the IPv6 form was weight 2 under mcpool.django's pymemcache preset)
            raise ValueError(
                "pymemcache reads this server as the host %r and the port %r (it takes no "
                "weight): a host no resolver answers, so every call fails; write host:port, "
                "[v6]:port or (host, port)" % (host, port))
        return "[%s]:%s" % (host, port) if ":" in host else "%s:%s" % (host, port)
    if server.startswith("/"):
        return _socket_address(server)
    if relative_socket:
        # joined, not normalized: the kernel resolves "link/.." through the link
        return _socket_address(_os.path.join(_os.getcwd(), server))
    return server


def _ipv6(host: str) -> bool:
    """Whether host is an IPv6 address (with a zone: ``fe80::1%eth0``)."""
    try:
        _ipaddress.IPv6Address(host)
    except ValueError:
        return False
    return True


def _hashed(server: _T) -> _T:
    """server (normalized), refused when HashClient would name it otherwise than mcpool
    places it: a (host, port) tuple whose port is text other than its number's ("027431"),
    which pymemcache hashes as written where mcpool's rendezvous placement reads the
    number (as pymemcache does for a "host:port" string)."""
    if isinstance(server, tuple) and len(server) == 2 and isinstance(server[1], str):
        port = server[1]
        if not (port.isdigit() and port == str(int(port))):
            raise NotImplementedError(
                "HashClient server %r: pymemcache hashes the port as written (%r), mcpool "
                "by its number; write the port as an int" % (server, port))
    return server


def _given(server: Any, port: Optional[Union[int, str]]) -> Any:
    """add_server's and remove_server's server, normalized: ``(host, port)``, or ``host``
    with ``port`` (then a string, as pymemcache requires)."""
    if port is not None:
        if not isinstance(server, str):
            raise TypeError("Server must be a string when passing port.")
        server = (server, port)
    return normalize_server_spec(server)


def _node(server: object) -> Any:
    """pymemcache HashClient's name of a server (its client key)."""
    if isinstance(server, (list, tuple)) and len(server) == 2:
        return "%s:%s" % tuple(server)
    return server


def _integer(value: object, name: str) -> int:
    """pymemcache's _check_integer, and the int memcached reads: a bool, which pymemcache
    sends as "True", is memcached's CLIENT_ERROR."""
    if not isinstance(value, int):
        raise MemcacheIllegalInputError("%s must be integer, got bad value: %r" % (name, value))
    if isinstance(value, bool):
        raise MemcacheClientError(b"bad command line format")
    return value


def _cas(cas: object) -> int:
    """pymemcache's _check_cas, as an int."""
    if isinstance(cas, (int, str)):
        try:
            cas = str(cas).encode("ascii")
        except UnicodeEncodeError:
            raise MemcacheIllegalInputError("non-ASCII cas value: %r" % cas)
    elif not isinstance(cas, bytes):
        raise MemcacheIllegalInputError(
            "cas must be integer, string, or bytes, got bad value: %r" % cas)
    if not cas.isdigit():
        raise MemcacheIllegalInputError(
            "cas must only contain values in 0-9, got bad value: %r" % cas)
    return int(cas)


def _mapped(e: BaseException) -> BaseException:
    """The exception a pymemcache caller catches for the core's error e."""
    new: BaseException
    name = getattr(e, "status_name", None)
    cls = getattr(e, "status_class", None)
    if isinstance(e, _mcpool.ConnectionError):
        if name == "MCPOOL_IO" and "Connection refused" in str(e):
            new = _ConnectionRefused(str(e))
        elif name == "MCPOOL_IO" and "closed the connection" in str(e):
            # the server closed it (an end of file where a reply belongs): pymemcache's
            # MemcacheUnexpectedCloseError, which its retry pattern catches as a
            # MemcacheError (tester finding connlife 3: it stayed mcpool.ConnectionError)
            new = MemcacheUnexpectedCloseError(str(e))
        else:
            return e  # an OSError (socket.error); a timeout is socket.timeout
    elif isinstance(e, (_mcpool.ValueFormatError, _mcpool.ClientTypeError)):
        return e  # a ValueError / TypeError, as pymemcache's serde and checks raise
    elif name == "MCPOOL_INVALID_KEY":
        new = MemcacheIllegalInputError(str(e))
    elif name == "MCPOOL_VALUE_TOO_LARGE":
        new = MemcacheServerError(str(e))  # memcached: SERVER_ERROR object too large
    elif cls == "CLIENT_ERROR":
        new = MemcacheClientError(str(e))
    elif name == "MCPOOL_PROTOCOL":
        new = MemcacheUnknownError(str(e))
    elif cls == "SERVER_ERROR":
        new = MemcacheServerError(str(e))
    else:
        return e  # configuration, a bug in the core: mcpool's own
    for a in ("status", "status_name", "status_class", "server", "outcome_unknown"):
        try:
            setattr(new, a, getattr(e, a, None))
        except AttributeError:
            pass
    new.__cause__ = e
    return new


def _unknown_group(e: BaseException) -> BaseException:
    """memcached's answer to a stats group it does not have, ``ERROR``: pymemcache raises
    ``MemcacheUnknownCommandError`` for it (tester finding pymc 6); any other error as it is."""
    if ("the server has no such statistics" in str(e)
            and getattr(e, "status_class", None) == "CLIENT_ERROR"):
        new = MemcacheUnknownCommandError(str(e))
        new.__cause__ = e
        return new
    return e


def _not_unpickled(e: BaseException) -> bool:
    """The core's error for a pickle that does not load: pymemcache reads it as None."""
    return (getattr(e, "status_name", None) == "MCPOOL_VALUE_FORMAT"
            and isinstance(e.__cause__, Exception))


def _dead(e: object) -> bool:
    """The core's "server marked dead, not tried": pymemcache's retry window."""
    return getattr(e, "status_name", None) == "MCPOOL_SERVER_DEAD"


def _failures(e: BaseException) -> List[BaseException]:
    """The failures the core's error e carries: each failed key's or server's exception
    (its ``results`` or ``errors``), or e itself."""
    found: List[BaseException] = []
    for attr in ("results", "errors"):
        d = getattr(e, attr, None)
        if isinstance(d, dict):
            found += [r for r in d.values() if isinstance(r, BaseException)]
    return found or [e]


_KEEPALIVE_PROBES = "/proc/sys/net/ipv4/tcp_keepalive_probes"
_MAX_KEEPIDLE = 32767  # the kernel's MAX_TCP_KEEPIDLE


def _keepalive(opts: Optional[_KeepaliveOpts]) -> Dict[str, Any]:
    """The core's options for pymemcache's ``socket_keepalive``, a ``KeepaliveOpts`` (its
    own or this module's): SO_KEEPALIVE, the first probe after ``idle`` seconds without
    traffic (``tcp_keepalive``, ``tcp_keepidle``). The core sends the next probes ``idle``
    apart (TCP_KEEPINTVL) and gives up after the system's count (TCP_KEEPCNT unset:
    net.ipv4.tcp_keepalive_probes), so a ``KeepaliveOpts`` whose ``intvl`` is not its
    ``idle`` or whose ``cnt`` is not that count is refused, naming what mcpool sets: never
    probes other than asked (tester finding retest27 7: every ``socket_keepalive`` was
    refused with a message about TLS)."""
    if opts is None:
        return {}
    cls = type(opts)
    if not (isinstance(opts, KeepaliveOpts) or (cls.__name__ == "KeepaliveOpts"
                                                and cls.__module__ == "pymemcache.client.base")):
        raise ValueError(  # pymemcache's words
            "Unsupported keepalive options. If you see this message it means that you passed "
            "an unsupported object within the param `socket_keepalive`. To fix it please "
            "instantiate and pass to socket_keepalive a KeepaliveOpts object. That's the only "
            "supported type of structure.")
    idle, intvl, cnt = opts.idle, opts.intvl, opts.cnt
    given = "socket_keepalive=KeepaliveOpts(idle=%r, intvl=%r, cnt=%r)" % (idle, intvl, cnt)
    if not (isinstance(idle, int) and 1 <= idle <= _MAX_KEEPIDLE):
        # pymemcache hands idle to setsockopt, which takes an int the kernel bounds
        raise ValueError("%s: idle is whole seconds from 1 to %d (the kernel's TCP_KEEPIDLE)"
                         % (given, _MAX_KEEPIDLE))
    try:
        with open(_KEEPALIVE_PROBES) as f:
            probes = int(f.read())
    except (OSError, ValueError):
        probes = None
    if intvl != idle or cnt != probes:
        count = ("%d here" % probes) if probes is not None else "not readable here"
        fix = ("give intvl=%r and cnt=%d, " % (idle, probes)) if probes is not None else ""
        raise NotImplementedError(
            "%s: mcpool's keepalive (mcpool.Client's tcp_keepalive=True, tcp_keepidle=SECONDS) "
            "sends the first probe after idle seconds without traffic, the next ones idle "
            "apart, and gives up after the system's count of probes "
            "(net.ipv4.tcp_keepalive_probes, %s); it sets no other interval or count: %sor "
            "leave socket_keepalive out" % (given, count, fix))
    return {"tcp_keepalive": True, "tcp_keepidle": int(idle)}


def _seconds(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("%s must be a number of seconds, not %r" % (name, value))
    return value


def _client_options(serde_: Optional[_Serde], serializer: Any, deserializer: Any,
                    connect_timeout: Optional[float], timeout: Optional[float],
                    socket_module: object, socket_keepalive: Optional[_KeepaliveOpts],
                    key_prefix: object, tls_context: object
                    ) -> Tuple[Dict[str, Any], Optional[int], bytes]:
    """What the arguments every pymemcache client takes ask of the core: (mcpool.Client's
    options, the pickle version or None (no serde), ``key_prefix`` as bytes). The
    ``pymemcache`` preset, the value layout, timeouts, keepalive, ``key_prefix``;
    ``socket_module`` and ``tls_context`` are refused. (``no_delay``, ``ignore_exc``,
    ``default_noreply``, ``allow_unicode_keys`` and ``encoding`` set no option of the core.)"""
    for name, given, default in (("socket_module", socket_module, _socket),
                                 ("tls_context", tls_context, None)):
        if given is not default:
            raise NotImplementedError(
                "%s=...: not supported by mcpool's pymemcache drop-in (mcpool has its own "
                "sockets; TLS through mcpool.Client's tls_* options)" % name)
    keepalive = _keepalive(socket_keepalive)
    version = _pickle_version(serde_, serializer, deserializer)
    if isinstance(key_prefix, str):
        key_prefix = key_prefix.encode("ascii")
    if not isinstance(key_prefix, bytes):
        raise TypeError("key_prefix should be bytes.")
    opts: Dict[str, Any] = {"preset": "pymemcache"}
    if version is None:
        # bytes in, bytes out, whatever the flags: pymemcache without a serde
        opts["value_format"] = "libmemcached"
    else:
        opts.update(pickle=True, pickle_protocol=version)
    if connect_timeout is not None:
        opts["connect_timeout"] = _seconds(connect_timeout, "connect_timeout")
    if timeout is not None:
        opts["timeout"] = _seconds(timeout, "timeout")
    if connect_timeout is not None or timeout is not None:
        opts["operation_timeout"] = 0  # pymemcache has no whole-call deadline
    if key_prefix:
        # its bytes as pymemcache sends them, UTF-8 or not (tester finding keys2 2: a
        # Latin-1 prefix was refused)
        opts["key_prefix"] = key_prefix
    opts.update(keepalive)
    return opts, version, key_prefix


_STAT_TYPES: Dict[bytes, Callable[[bytes], Any]] = {
    b"version": bytes,
    b"rusage_user": lambda v: float(v.replace(b":", b".")),
    b"rusage_system": lambda v: float(v.replace(b":", b".")),
    b"hash_is_expanding": lambda v: int(v) != 0,
    b"slab_reassign_running": lambda v: int(v) != 0,
    b"inter": bytes,
    b"growth_factor": float,
    b"stat_key_prefix": bytes,
    b"umask": lambda v: int(v, 8),
    b"detail_enabled": lambda v: int(v) != 0,
    b"cas_enabled": lambda v: int(v) != 0,
    b"auth_enabled_sasl": lambda v: v == b"yes",
    b"maxconns_fast": lambda v: int(v) != 0,
    b"slab_reassign": lambda v: int(v) != 0,
    b"slab_automove": lambda v: int(v) != 0,
}

_MISS = object()


# --------------------------------------------------------------------------------------------
# The clients
# --------------------------------------------------------------------------------------------


class _ItemAccess:
    """pymemcache's item access on its clients: ``mc[k] = v`` (a ``set`` with ``noreply``),
    ``mc[k]`` (``KeyError`` on a miss), ``del mc[k]`` (a ``delete`` with ``noreply``)."""

    if _typing.TYPE_CHECKING:  # the client's own (RetryingClient: its client's, by __getattr__)
        def set(self, key: _Key, value: Any, expire: int = 0, noreply: Optional[bool] = None,
                flags: Optional[int] = None) -> bool: ...

        def get(self, key: _Key, default: Any = None) -> Any: ...

        def delete(self, key: _Key, noreply: Optional[bool] = None) -> bool: ...

    def __setitem__(self, key: _Key, value: Any) -> None:
        self.set(key, value, noreply=True)

    def __getitem__(self, key: _Key) -> Any:
        value = self.get(key)
        if value is None:
            raise KeyError
        return value

    def __delitem__(self, key: _Key) -> None:
        self.delete(key, noreply=True)


class _Base:
    """What Client, PooledClient and HashClient share: arguments, keys, values, calls."""

    _hash = False  # HashClient's failure rule and placement checks
    _relative_socket = False  # a relative socket path (unix:NAME) is a socket: Client's

    def _setup(self, servers: Iterable[Any], serde_: Optional[_Serde],
               serializer: Optional[Callable[..., Any]],
               deserializer: Optional[Callable[..., Any]], connect_timeout: Optional[float],
               timeout: Optional[float], no_delay: bool, ignore_exc: bool,
               socket_module: ModuleType, socket_keepalive: Optional[_KeepaliveOpts],
               key_prefix: Union[bytes, str], default_noreply: bool, allow_unicode_keys: bool,
               encoding: str, tls_context: Optional[ssl.SSLContext],
               extra: Mapping[str, Any]) -> None:
        opts, self._pickle_version, self.key_prefix = _client_options(
            serde_, serializer, deserializer, connect_timeout, timeout, socket_module,
            socket_keepalive, key_prefix, tls_context)
        self.socket_keepalive = socket_keepalive
        self.serde: _Serde = serde_ or LegacyWrappingSerde(serializer, deserializer)
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        self.no_delay = no_delay
        self.ignore_exc = ignore_exc
        self.default_noreply = default_noreply
        self.allow_unicode_keys = allow_unicode_keys
        self.encoding = encoding
        opts.update(extra)
        self._opts = opts
        self._servers: List[Any] = list(servers)  # normalized (normalize_server_spec)
        self._build()

    def _addresses(self) -> List[str]:
        """The core's addresses of the servers (``_address``)."""
        return [_address(s, self._relative_socket) for s in self._servers]

    def _build(self) -> None:
        self._mc: Optional[_mcpool.Client] = (_mcpool.Client(self._addresses(), **self._opts)
                                              if self._servers else None)
        self._raw: Optional[_mcpool.Client] = None  # _raw_cas's, made again for the new servers

    # -- keys and values ---------------------------------------------------------------------

    def check_key(self, key: _Key) -> bytes:
        """Checks key and add key_prefix."""
        return check_key_helper(key, allow_unicode_keys=self.allow_unicode_keys,
                                key_prefix=self.key_prefix)

    def _key(self, key: _KT) -> _KT:
        """key checked as pymemcache checks it; the key to give the core (which adds
        key_prefix itself, after placing the key without it, as pymemcache does)."""
        self.check_key(key)
        if self._hash and isinstance(key, bytes) and len(self._servers) > 1:
            raise NotImplementedError(
                "HashClient: the bytes key %r is placed by pymemcache by the text %r (str() "
                "of the bytes); mcpool places a key by the key itself, so with %d servers it "
                "would read and write another server than pymemcache. Pass it as str (%r): "
                "the same key, placed as pymemcache places it."
                # (str() of the bytes, as pymemcache places it: "%s" % b"k" is "b'k'")
                % (key, "%s" % (key,),  # type: ignore[str-bytes-safe]
                   len(self._servers), key.decode("utf8", "replace")))
        return key

    def _value(self, value: Any, flags: Optional[int]) -> Any:
        """The value to give the core: without a serde, the bytes pymemcache sends (flags 0);
        with pickle_serde, the value itself (the core writes its layout)."""
        if self._pickle_version is None:
            if flags not in (None, 0):
                raise NotImplementedError("flags=%r: mcpool stores bytes under flags 0 "
                                          "without a serde; other flags are not supported"
                                          % (flags,))
            if isinstance(value, bytes):
                return bytes(value)
            try:
                return str(value).encode(self.encoding)
            except UnicodeEncodeError as e:
                raise MemcacheIllegalInputError("Data values must be binary-safe: %s" % e)
        if flags is not None:
            raise NotImplementedError("flags=%r: with a serde the flags are pickle_serde's, "
                                      "written by mcpool's core; other flags are not supported"
                                      % (flags,))
        return value

    @staticmethod
    def _expire(expire: object) -> int:
        return _exptime(_integer(expire, "expire"))

    def _noservers(self, default: _D) -> _D:
        if self.ignore_exc:
            return default
        raise MemcacheError("All servers seem to be down right now")

    def _failed(self, e: BaseException, default: _D, read: bool = False) -> _D:
        """A failed call: its default (HashClient's retry window or ignore_exc, a read's
        ignore_exc on Client), or the exception pymemcache's caller catches."""
        if self._hash and (_dead(e) or self.ignore_exc):
            return default
        if read and self.ignore_exc:
            return default
        raise _mapped(e) from None

    def _call(self, default: _D, fn: Callable[..., _T], *args: Any,
              read: bool = False) -> Union[_T, _D]:
        if self._mc is None:
            return self._noservers(default)
        try:
            return fn(*args)
        except _mcpool.Error as e:
            return self._failed(e, default, read)

    # -- stores ------------------------------------------------------------------------------

    def _store(self, cmd: str, key: _Key, value: Any, expire: object, flags: Optional[int],
               default: bool = False) -> bool:
        key = self._key(key)
        expire = self._expire(expire)
        value = self._value(value, flags)
        fn = getattr(self._mc, cmd, None)
        # (fn is None only without servers, when _call answers without calling it)
        return self._call(default, lambda: bool(fn(key, value, expire)))  # type: ignore[misc]

    def set(self, key: _Key, value: Any, expire: int = 0, noreply: Optional[bool] = None,
            flags: Optional[int] = None) -> bool:
        """Stores value; True (the reply is read whatever ``noreply`` says)."""
        return self._store("set", key, value, expire, flags)

    def add(self, key: _Key, value: Any, expire: int = 0, noreply: Optional[bool] = None,
            flags: Optional[int] = None) -> bool:
        """True if stored, False if the key exists."""
        return self._store("add", key, value, expire, flags)

    def replace(self, key: _Key, value: Any, expire: int = 0, noreply: Optional[bool] = None,
                flags: Optional[int] = None) -> bool:
        """True if stored, False if the key does not exist."""
        return self._store("replace", key, value, expire, flags)

    def _concat(self, cmd: str, key: _Key, value: Any, expire: object,
                flags: Optional[int]) -> bool:
        key = self._key(key)
        self._expire(expire)  # checked as pymemcache does; memcached ignores it here
        value = self._value(value, flags) if self._pickle_version is None else \
            self._appended(value, flags)
        fn = getattr(self._mc, cmd, None)
        # (fn is None only without servers, when _call answers without calling it)
        return self._call(False, lambda: bool(fn(key, value)))  # type: ignore[misc]

    def _appended(self, value: Any, flags: Optional[int]) -> Union[bytes, str]:
        """What pickle_serde appends: the body it would store (memcached keeps the old
        flags): bytes, str as UTF-8, an exact int as its digits; a pickle (anything else)
        would make the value unreadable: TypeError, nothing sent."""
        if flags is not None:
            self._value(value, flags)
        if type(value) is bytes:
            return value
        if type(value) is str:
            return value.encode("utf8")
        if type(value) is int:
            return _to_digits(value)  # (any size: str() refuses more than 4300 digits)
        raise _mcpool.ClientTypeError(
            "append/prepend with pickle_serde take bytes, str or int, not %s: pymemcache would "
            "append its pickle, which makes the value unreadable" % type(value).__name__)

    def append(self, key: _Key, value: Any, expire: int = 0, noreply: Optional[bool] = None,
               flags: Optional[int] = None) -> bool:
        """True if appended, False if the key does not exist."""
        return self._concat("append", key, value, expire, flags)

    def prepend(self, key: _Key, value: Any, expire: int = 0, noreply: Optional[bool] = None,
                flags: Optional[int] = None) -> bool:
        """True if prepended, False if the key does not exist."""
        return self._concat("prepend", key, value, expire, flags)

    def cas(self, key: _Key, value: Any, cas: Union[int, str, bytes], expire: int = 0,
            noreply: bool = False, flags: Optional[int] = None) -> Optional[bool]:
        """True if stored, False if the item changed since ``gets``, None if missing."""
        cas = _cas(cas)
        key = self._key(key)
        expire = self._expire(expire)
        value = self._value(value, flags)
        if cas == 0:
            # no item has CAS 0: memcached answers EXISTS or NOT_FOUND; the core does not
            # send it (the binary protocol would read 0 as "no CAS")
            # (self._mc: not None once _call calls it, in these lambdas and below)
            return self._call(False, lambda: None if self._mc.gets(key)[1] is None  # type: ignore[union-attr]
                              else False)
        if cas > 2**64 - 1:
            raise MemcacheClientError(b"bad command line format")
        return self._call(False, lambda: self._mc.cas(key, value, cas, expire))  # type: ignore[union-attr]

    def set_many(self, values: Mapping[_KT, Any], expire: int = 0,
                 noreply: Optional[bool] = None, flags: Optional[int] = None) -> List[_KT]:
        """Stores every pair; the list of the keys not stored."""
        if not values:
            return []
        expire = self._expire(expire)
        wire: Dict[Any, Any] = {}
        for key, value in values.items():
            wire[self._key(key)] = self._value(value, flags)
        if self._mc is None:
            return self._noservers(list(values))
        errors: Dict[Any, _mcpool.Error] = {}
        try:
            # _failed: the core lists every key not stored and gives each failed key's
            # error in errors (mcpool.Client's set_multi raises for those: tester finding
            # partial 4); a private keyword, not in the stubs
            failed = list(self._mc.set_multi(wire, expire, _failed=errors))  # type: ignore[call-arg]
        except _mcpool.Error as e:
            return self._failed(e, list(values))
        for err in errors.values():
            # a server's failure raises, as pymemcache's Client, PooledClient and HashClient
            # raise it from set_many, once the other servers' keys are stored: an error reply,
            # a connection closed where the reply belongs (tester finding retest26 1), a
            # timeout after the request was sent, whose outcome is unknown, and a refused
            # connect (finding retest27 1: both were listed as not stored). _failed answers
            # instead in HashClient's retry window (MCPOOL_SERVER_DEAD), where pymemcache
            # lists the keys, and with its ignore_exc (pymemcache answers []: module docstring)
            self._failed(err, None)
        # the keys memcached answered NOT_STORED, and those of a server _failed answered for
        return failed

    set_multi = set_many

    # -- reads -------------------------------------------------------------------------------

    def _read(self, key: _Key, default: _D, fn: Callable[[Any], _T],
              unpickled: Callable[[], _U] = lambda: None  # type: ignore[assignment, return-value]
              ) -> Union[_T, _D, _U]:
        if self._mc is None:
            return self._noservers(default)
        try:
            return fn(key)
        except _mcpool.Error as e:
            if _not_unpickled(e):  # pymemcache's deserializer: None
                return unpickled()
            return self._failed(e, default, read=True)

    def _raw_cas(self, key: _Key) -> Optional[bytes]:
        """The CAS of key, read without decoding its value: a pickle that does not load
        reads as None with its CAS, as pymemcache's ``gets`` returns ``(None, cas)`` (tester
        finding pymc 1: the CAS was lost, and the ``cas`` that pymemcache's caller makes next
        raised). Through a second client of the same servers and placement that hands values
        over as their bytes, made at the first need; None when the key is gone by then."""
        if getattr(self, "_raw", None) is None:
            opts = {k: v for k, v in self._opts.items() if k not in ("pickle", "pickle_protocol")}
            opts["value_format"] = "libmemcached"
            self._raw = _mcpool.Client(self._addresses(), **opts)
        try:
            cas = self._raw.gets(key)[1]  # type: ignore[union-attr]  # (made above)
        except _mcpool.Error:
            return None
        return None if cas is None else str(cas).encode("ascii")

    def get(self, key: _Key, default: Any = None) -> Any:
        """The value, or ``default`` for a miss."""
        key = self._key(key)
        return self._read(key, default, lambda k: self._mc.get(k, default))  # type: ignore[union-attr]

    def gets(self, key: _Key, default: Any = None, cas_default: Any = None) -> Tuple[Any, Any]:
        """``(value, cas)`` (the CAS as bytes), or ``(default, cas_default)`` for a miss."""
        key = self._key(key)
        defaults = (default, cas_default)

        def gets(k: _Key) -> Tuple[Any, Any]:
            value, cas = self._mc.gets(k)  # type: ignore[union-attr]
            if cas is None:
                return defaults
            return value, str(cas).encode("ascii")
        return self._read(key, self._gets_failed(defaults), gets,
                          lambda: (None, self._raw_cas(key)))

    def _gets_failed(self, defaults: Tuple[Any, Any]) -> Tuple[Any, Any]:
        return defaults

    def _many(self, keys: Iterable[Any], gets: bool) -> Dict[Any, Any]:
        keys = [self._key(k) for k in keys]
        if not keys:
            return {}
        found = self._many_found(keys, gets)
        if any(isinstance(k, str) for k in keys) and any(isinstance(k, bytes) for k in keys):
            # a key given as str and as bytes ("a" and b"a") is answered under the spelling
            # given last, as pymemcache's dict of wire key to key keeps it (the core answers
            # under the first; tester finding batches 5)
            def wire(k: _Key) -> bytes:
                return k.encode("utf-8", "surrogatepass") if isinstance(k, str) else k
            last = {wire(k): k for k in keys}
            found = {last.get(wire(k), k): v for k, v in found.items()}
        return found

    def _many_found(self, keys: List[Any], gets: bool) -> Dict[Any, Any]:
        if self._mc is None:
            return self._noservers({})
        try:
            if gets:
                found = {k: (v, str(c).encode("ascii"))
                         for k, (v, c) in self._mc.gets_multi(keys).items()}
            else:
                found = self._mc.get_multi(keys)
            return found
        except _mcpool.Error as e:
            hits, errors = getattr(e, "hits", None), getattr(e, "errors", None)
            if hits is None:  # ask each key alone
                hits, errors = {}, {}
                for k in keys:
                    try:
                        if gets:
                            v, c = self._mc.gets(k)
                            if c is not None:
                                hits[k] = (v, str(c).encode("ascii"))
                        else:
                            v = self._mc.get(k, _MISS)
                            if v is not _MISS:
                                hits[k] = v
                    except _mcpool.Error as ke:
                        errors[k] = ke
        first = None
        # (errors: the core's error carries hits and errors, or neither)
        for k, kerr in errors.items():  # type: ignore[union-attr]
            if _not_unpickled(kerr):
                hits[k] = (None, self._raw_cas(k)) if gets else None
            elif first is None:
                first = kerr
        if first is not None:
            if self.ignore_exc and not self._hash:
                return {}
            if not (self._hash and (self.ignore_exc or all(
                    _dead(ke) for ke in errors.values()  # type: ignore[union-attr]
                    if not _not_unpickled(ke)))):
                raise _mapped(first) from None
        return hits

    def get_many(self, keys: Iterable[_KT]) -> Dict[_KT, Any]:
        """A dict of the keys found and their values."""
        return self._many(keys, False)

    get_multi = get_many

    def gets_many(self, keys: Iterable[_KT]) -> Dict[_KT, Tuple[Any, Any]]:
        """A dict of the keys found and their ``(value, cas)``."""
        return self._many(keys, True)

    # -- deletes, counters, touch ------------------------------------------------------------

    def delete(self, key: _Key, noreply: Optional[bool] = None) -> bool:
        """True if deleted, False if the key was not found."""
        key = self._key(key)
        return self._call(False, lambda: bool(self._mc.delete(key)))  # type: ignore[union-attr]

    def delete_many(self, keys: Iterable[_Key], noreply: Optional[bool] = None) -> bool:
        """Deletes every key; True."""
        keys = [self._key(k) for k in keys]
        if not keys:
            return True
        if self._mc is None:
            return self._noservers(True)
        try:
            self._mc.delete_multi(keys)
        except _mcpool.Error as e:
            for err in _failures(e):
                if not (self._hash and (_dead(err) or self.ignore_exc)):
                    raise _mapped(err) from None
        return True

    delete_multi = delete_many

    def _arith(self, cmd: str, key: _Key, value: object) -> Optional[int]:
        key = self._key(key)
        value = _integer(value, "value")
        if value < 0 or value > 2**64 - 1:
            raise MemcacheClientError(b"invalid numeric delta argument")
        fn = getattr(self._mc, cmd, None)
        # (fn is None only without servers, when _call answers without calling it)
        return self._call(False, lambda: fn(key, value))  # type: ignore[misc]

    def incr(self, key: _Key, value: int, noreply: Optional[bool] = False) -> Optional[int]:
        """The new value, or None if the key was not found."""
        return self._arith("incr", key, value)

    def decr(self, key: _Key, value: int, noreply: Optional[bool] = False) -> Optional[int]:
        """The new value, or None if the key was not found."""
        return self._arith("decr", key, value)

    def touch(self, key: _Key, expire: int = 0, noreply: Optional[bool] = None) -> bool:
        """True if the expiry was updated, False if the key was not found."""
        key = self._key(key)
        expire = self._expire(expire)
        return self._call(False, lambda: bool(self._mc.touch(key, expire)))  # type: ignore[union-attr]

    # -- server-wide -------------------------------------------------------------------------

    def flush_all(self, delay: int = 0, noreply: Optional[bool] = None) -> bool:
        """Invalidates every item; True."""
        delay = _integer(delay, "delay")
        return self._call(False, lambda: bool(self._mc.flush_all(delay)))  # type: ignore[union-attr]

    def close(self) -> None:
        """Closes the connections; the next call opens new ones."""
        if self._mc is not None:
            self._mc.disconnect_all()
        if getattr(self, "_raw", None) is not None:
            self._raw.disconnect_all()  # type: ignore[union-attr]

    def cache_memlimit(self, memlimit: int) -> NoReturn:
        """Not supported: memcached's ``cache_memlimit`` changes the server's memory for
        every client; mcpool sends no such command."""
        raise NotImplementedError("cache_memlimit: mcpool sends no command that changes the "
                                  "server's settings")

    def shutdown(self, graceful: bool = False) -> NoReturn:
        """Not supported: memcached's ``shutdown`` stops the server for every client;
        mcpool sends no such command."""
        raise NotImplementedError("shutdown: mcpool sends no command that stops the server")

    disconnect_all = close

    def quit(self) -> None:
        """Closes the connections (memcached's quit); the client stays usable."""
        self.close()


class Client(_Base, _ItemAccess):
    """pymemcache's ``Client(server, serde=None, ..., key_prefix=b'', default_noreply=True,
    allow_unicode_keys=False, encoding='ascii')``: one server, ``(host, port)``,
    ``"host:port"`` or a unix socket's path."""

    _relative_socket = True  # "unix:NAME": the socket NAME in the working directory

    def __init__(self, server: _ServerSpec, serde: Optional[_Serde] = None,
                 serializer: Optional[Callable[..., Any]] = None,
                 deserializer: Optional[Callable[..., Any]] = None,
                 connect_timeout: Optional[float] = None, timeout: Optional[float] = None,
                 no_delay: bool = False, ignore_exc: bool = False,
                 socket_module: ModuleType = _socket,
                 socket_keepalive: Optional[_KeepaliveOpts] = None,
                 key_prefix: Union[bytes, str] = b"", default_noreply: bool = True,
                 allow_unicode_keys: bool = False, encoding: str = "ascii",
                 tls_context: Optional[ssl.SSLContext] = None,
                 _extra: Optional[Mapping[str, Any]] = None) -> None:
        self.server = normalize_server_spec(server)
        extra: Dict[str, Any] = {"failure_limit": 4294967295}  # pymemcache connects again at every call
        extra.update(_extra or {})
        self._setup([self.server], serde, serializer, deserializer, connect_timeout, timeout,
                    no_delay, ignore_exc, socket_module, socket_keepalive, key_prefix,
                    default_noreply, allow_unicode_keys, encoding, tls_context, extra)

    def stats(self, *args: Any) -> Dict[bytes, Any]:
        """The server's statistics: ``{b"name": value}``, converted as pymemcache does."""
        group = " ".join(a.decode() if isinstance(a, bytes) else str(a) for a in args) or None
        try:
            per = self._mc.stats(group)  # type: ignore[union-attr]  # (one server: not None)
        except _mcpool.Error as e:
            return self._failed(_unknown_group(e), {}, read=True)
        result: Dict[bytes, Any] = {}
        for v in per.values():
            if isinstance(v, BaseException):
                return self._failed(_unknown_group(v), {}, read=True)
            for name, text in v.items():
                name, text = name.encode(), text.encode()
                try:
                    result[name] = _STAT_TYPES.get(name, int)(text)
                except Exception:
                    result[name] = text
        return result

    def version(self) -> bytes:
        """The server's version, as bytes."""
        try:
            per = self._mc.version()  # type: ignore[union-attr]  # (one server: not None)
        except _mcpool.Error as e:
            raise _mapped(e) from None
        v = next(iter(per.values()))
        if isinstance(v, BaseException):
            raise _mapped(v) from None
        return v.encode()


class PooledClient(Client):
    """pymemcache's ``PooledClient``: a thread-safe ``Client`` (every mcpool client is
    pooled); ``max_pool_size`` is the core's ``max_size``, ``pool_idle_timeout`` its
    ``idle_timeout``."""

    def __init__(self, server: _ServerSpec, serde: Optional[_Serde] = None,
                 serializer: Optional[Callable[..., Any]] = None,
                 deserializer: Optional[Callable[..., Any]] = None,
                 connect_timeout: Optional[float] = None, timeout: Optional[float] = None,
                 no_delay: bool = False, ignore_exc: bool = False,
                 socket_module: ModuleType = _socket,
                 socket_keepalive: Optional[_KeepaliveOpts] = None,
                 key_prefix: Union[bytes, str] = b"", max_pool_size: Optional[int] = None,
                 pool_idle_timeout: float = 0,
                 lock_generator: Optional[Callable[[], Any]] = None,
                 default_noreply: bool = True, allow_unicode_keys: bool = False,
                 encoding: str = "ascii", tls_context: Optional[ssl.SSLContext] = None) -> None:
        self.max_pool_size = max_pool_size
        self.pool_idle_timeout = pool_idle_timeout
        super().__init__(server, serde, serializer, deserializer, connect_timeout, timeout,
                         no_delay, ignore_exc, socket_module, socket_keepalive, key_prefix,
                         default_noreply, allow_unicode_keys, encoding, tls_context,
                         _extra=_pool_options(max_pool_size, pool_idle_timeout,
                                              lock_generator))

    def _gets_failed(self, defaults: Tuple[Any, Any]) -> Tuple[None, None]:
        return (None, None)  # PooledClient.gets with ignore_exc


def _pool_options(max_pool_size: Optional[int], pool_idle_timeout: object,
                  lock_generator: object) -> Dict[str, Any]:
    if lock_generator is not None:
        raise NotImplementedError("lock_generator=...: mcpool's pool has its own locking; "
                                  "not supported")
    opts: Dict[str, Any] = {"idle_timeout": _seconds(pool_idle_timeout, "pool_idle_timeout")}
    if max_pool_size is not None:
        opts["max_size"] = max_pool_size
    return opts


class RendezvousHash:
    """pymemcache's default ``hasher`` (its rendezvous hashing is the core's: only this one
    is accepted by ``HashClient``)."""


class HashClient(_Base):
    """pymemcache's ``HashClient(servers, hasher=RendezvousHash, serde=None, ...,
    retry_attempts=2, retry_timeout=1, dead_timeout=60, use_pooling=False,
    ignore_exc=False, allow_unicode_keys=False, default_noreply=True, encoding='ascii')``."""

    _hash = True

    def __init__(self, servers: Iterable[_ServerSpec], hasher: Any = RendezvousHash,
                 serde: Optional[_Serde] = None,
                 serializer: Optional[Callable[..., Any]] = None,
                 deserializer: Optional[Callable[..., Any]] = None,
                 connect_timeout: Optional[float] = None, timeout: Optional[float] = None,
                 no_delay: bool = False, socket_module: ModuleType = _socket,
                 socket_keepalive: Optional[_KeepaliveOpts] = None,
                 key_prefix: Union[bytes, str] = b"", max_pool_size: Optional[int] = None,
                 pool_idle_timeout: float = 0,
                 lock_generator: Optional[Callable[[], Any]] = None,
                 retry_attempts: int = 2, retry_timeout: float = 1, dead_timeout: float = 60,
                 use_pooling: bool = False, ignore_exc: bool = False,
                 allow_unicode_keys: bool = False, default_noreply: bool = True,
                 encoding: str = "ascii", tls_context: Optional[ssl.SSLContext] = None) -> None:
        extra = _hash_options(hasher, retry_attempts, retry_timeout, dead_timeout,
                              use_pooling, max_pool_size, pool_idle_timeout, lock_generator)
        self.retry_attempts = retry_attempts
        self.retry_timeout = retry_timeout
        self.dead_timeout = dead_timeout
        self.use_pooling = use_pooling
        self._setup([_hashed(normalize_server_spec(s)) for s in servers], serde, serializer,
                    deserializer, connect_timeout, timeout, no_delay, ignore_exc,
                    socket_module, socket_keepalive, key_prefix, default_noreply,
                    allow_unicode_keys, encoding, tls_context, extra)

    @property
    def clients(self) -> Dict[Any, Any]:
        """pymemcache's map of the servers' names (``"host:port"``)."""
        return {_node(s): s for s in self._servers}

    def add_server(self, server: _ServerSpec, port: Optional[Union[int, str]] = None) -> None:
        """Adds a server (``(host, port)``, or ``host`` with ``port``)."""
        if port is None and isinstance(server, str) and server.startswith("unix:"):
            # pymemcache's add_server hashes "unix:/path" as written where its constructor
            # hashes "/path"; mcpool places a socket by its path: refused rather than put
            # keys where pymemcache would not (tester finding retest13 3)
            raise ValueError(
                "add_server(%r): pymemcache's HashClient places a socket added as 'unix:PATH' "
                "by that text, and one given to its constructor by PATH; mcpool places it by "
                "PATH: give add_server the path alone (%r), as the constructor takes it"
                % (server, server[5:]))
        server = _hashed(_given(server, port))
        if _node(server) in self.clients:
            return
        self._servers.append(server)
        self._reset()

    def remove_server(self, server: _ServerSpec,
                      port: Optional[Union[int, str]] = None) -> None:
        """Removes a server from the hash (its keys go to the others)."""
        node = _node(_given(server, port))
        if node not in self.clients:
            raise ValueError("No such node %s to remove" % node)
        self._servers = [s for s in self._servers if _node(s) != node]
        self._reset()

    def _reset(self) -> None:
        if self._mc is None or not self._servers:
            self._build()
        else:
            self._mc.set_servers(self._addresses())
            if self._raw is not None:
                self._raw.set_servers(self._addresses())

    # (Optional: where Client's gets answers its defaults pair, HashClient's answers None)
    def gets(self, key: _Key, *args: Any,  # type: ignore[override]
             **kwargs: Any) -> Optional[Tuple[Any, Any]]:
        """``(value, cas)``; None while the key's server is failing (pymemcache's default)."""
        return super().gets(key, *args, **kwargs)

    def _gets_failed(self, defaults: Tuple[Any, Any]) -> None:  # type: ignore[override]
        return None  # HashClient.gets' default_val

    def get_many(self, keys: Iterable[_KT], gets: bool = False, *args: Any,
                 **kwargs: Any) -> Dict[_KT, Any]:
        """A dict of the keys found (without the keys of a server that is failing)."""
        return self._many(keys, gets)

    get_multi = get_many

    def gets_many(self, keys: Iterable[_KT], *args: Any,
                  **kwargs: Any) -> Dict[_KT, Tuple[Any, Any]]:
        return self._many(keys, True)

    gets_multi = gets_many

    # (None: where Client's flush_all answers True, HashClient's answers None, as pymemcache's)
    def flush_all(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Invalidates every item of every server (None, as pymemcache's HashClient)."""
        super().flush_all(*args, **kwargs)

    def close(self) -> None:
        super().close()

    disconnect_all = close

    def quit(self) -> None:
        super().close()


def _hash_options(hasher: object, retry_attempts: object, retry_timeout: object,
                  dead_timeout: object, use_pooling: object, max_pool_size: Optional[int],
                  pool_idle_timeout: object, lock_generator: object) -> Dict[str, Any]:
    """HashClient's placement, failure and pool arguments as mcpool.Client's options (its
    failure rule: the core's ``eject_after`` and ``retry_timeout``); what mcpool cannot
    honour is refused."""
    if hasher is not RendezvousHash and not (
            getattr(hasher, "__name__", None) == "RendezvousHash"
            and getattr(hasher, "__module__", None) == "pymemcache.client.rendezvous"):
        raise NotImplementedError("hasher=%r: mcpool places keys by pymemcache's "
                                  "RendezvousHash only" % (hasher,))
    dead = _seconds(dead_timeout, "dead_timeout")
    if not dead > 0:
        # pymemcache puts such a node back at the next call; the core rests an ejected
        # server at least retry_timeout
        raise NotImplementedError(
            "dead_timeout=%r: mcpool keeps a removed server out of the hash for a "
            "dead_timeout above 0 only" % (dead_timeout,))
    if isinstance(retry_attempts, bool) or not isinstance(retry_attempts, int):
        raise TypeError("retry_attempts must be an int, not %r" % (retry_attempts,))
    retry = _seconds(retry_timeout, "retry_timeout")
    if not retry > 0:
        # pymemcache retries such a server at every call and removes it after
        # retry_attempts + 1 failures; the core never ejects a server always due for
        # its retry
        raise NotImplementedError(
            "retry_timeout=%r: mcpool removes a failing server from the hash only with a "
            "retry_timeout above 0" % (retry_timeout,))
    extra: Dict[str, Any] = {
        # removed from the hash at the call after retry_attempts + 1 failed tries, one
        # per retry_timeout (pymemcache's _safely_run_func / _mark_failed_server)
        "eject_after": max(retry_attempts, 0) + 1,
        "retry_timeout": retry, "retry_timeout_max": retry,
        # removed, out of the hash for dead_timeout seconds (the core's ejected_rest: tester
        # finding frameworks2 1)
        "ejected_rest": dead,
    }
    extra.update(_pooling(use_pooling, max_pool_size, pool_idle_timeout, lock_generator))
    return extra


def _pooling(use_pooling: object, max_pool_size: Optional[int], pool_idle_timeout: object,
             lock_generator: object) -> Dict[str, Any]:
    """HashClient's pool arguments as mcpool.Client's options: with ``use_pooling``
    ``PooledClient``'s (``max_size``, ``idle_timeout``); without it none, as pymemcache then
    uses none of them (a ``Client`` per server; mcpool pools either way)."""
    if not use_pooling:
        return {}
    return _pool_options(max_pool_size, pool_idle_timeout, lock_generator)


def _hash_client_options(args: Mapping[str, Any]) -> Dict[str, Any]:
    """mcpool.Client's options for pymemcache ``HashClient``'s keyword arguments ``args`` (a
    dict; those left out at pymemcache's defaults), as ``HashClient`` reads them (the
    ``pymemcache`` preset with them): mcpool.django reads ``PyMemcacheCache``'s OPTIONS with
    it. Raises as ``HashClient`` does for an argument mcpool cannot honour, ``TypeError`` for
    a name ``HashClient`` does not take. ``ignore_exc``, ``allow_unicode_keys``,
    ``default_noreply``, ``encoding`` and ``no_delay`` set no option of the core (the
    caller's, or without effect here: the module's docstring)."""
    bound = _inspect.signature(HashClient.__init__).bind(None, (), **args)
    bound.apply_defaults()
    a = bound.arguments
    opts = _client_options(a["serde"], a["serializer"], a["deserializer"],
                           a["connect_timeout"], a["timeout"], a["socket_module"],
                           a["socket_keepalive"], a["key_prefix"], a["tls_context"])[0]
    opts.update(_hash_options(a["hasher"], a["retry_attempts"], a["retry_timeout"],
                              a["dead_timeout"], a["use_pooling"], a["max_pool_size"],
                              a["pool_idle_timeout"], a["lock_generator"]))
    return opts


# HashClient's keyword arguments (pymemcache 3.5's), which Django's PyMemcacheCache passes its
# OPTIONS as.
_HASH_ARGS = tuple(_inspect.signature(HashClient.__init__).parameters)[2:]


class KeepaliveOpts:
    """pymemcache's ``KeepaliveOpts(idle=1, intvl=1, cnt=5)`` (seconds, seconds, probes; each
    at least 1). Given as ``socket_keepalive`` it is the core's ``tcp_keepalive`` and
    ``tcp_keepidle=idle`` when ``intvl`` is ``idle`` and ``cnt`` the system's count of
    probes (net.ipv4.tcp_keepalive_probes), and refused otherwise (``_keepalive``)."""

    __slots__ = ("idle", "intvl", "cnt")

    def __init__(self, idle: int = 1, intvl: int = 1, cnt: int = 5) -> None:
        for name, value in (("idle", idle), ("intvl", intvl), ("cnt", cnt)):
            if value < 1:
                raise ValueError("The %s parameter must be greater or equal to 1." % name)
        self.idle, self.intvl, self.cnt = idle, intvl, cnt


class RetryingClient(_ItemAccess):
    """pymemcache 3.5's ``RetryingClient``: wraps a ``Client``, ``PooledClient`` or
    ``HashClient`` and calls each of its methods up to ``attempts`` times while it raises
    (sleeping ``retry_delay`` seconds between tries), only for the exception classes in
    ``retry_for`` (all when None) and never for those in ``do_not_retry_for``; the last
    try's exception is raised. As with pymemcache, a retried ``incr``, ``append`` or ``cas``
    whose first try reached the server before failing may be applied twice: list only
    errors where nothing was applied in ``retry_for`` for those (tester finding pyteam 2)."""

    def __init__(self, client: Any, attempts: int = 2, retry_delay: float = 0,
                 retry_for: Optional[_ExceptionClasses] = None,
                 do_not_retry_for: Optional[_ExceptionClasses] = None) -> None:
        if attempts < 1:
            raise ValueError("`attempts` argument must be at least 1. "
                             "Otherwise no attempts are made.")
        self._client = client
        self._attempts = attempts
        self._retry_delay = retry_delay
        self._retry_for = self._exception_classes("retry_for", retry_for)
        self._do_not_retry_for = self._exception_classes("do_not_retry_for", do_not_retry_for)
        both = [c for c in self._retry_for if c in self._do_not_retry_for]
        if both:
            raise ValueError("Exception class \"%r\" was present in both `retry_for` and "
                             "`do_not_retry_for`. Any exception class is only allowed in a "
                             "single argument." % both[0])
        self._client_dir = dir(client)

    @staticmethod
    def _exception_classes(name: str, given: object) -> Tuple[Type[Exception], ...]:
        if given is None:
            return ()
        if not isinstance(given, (tuple, set, list)):
            raise ValueError("%s must be either a tuple, a set or a list." % name)
        classes = tuple(given)
        if not all(isinstance(c, type) and issubclass(c, Exception) for c in classes):
            raise ValueError("%s is only allowed to contain elements that are subclasses of "
                             "Exception." % name)
        return classes

    def _retry(self, name: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        for attempt in range(self._attempts):
            try:
                return method(*args, **kwargs)
            except Exception as e:
                if (attempt + 1 >= self._attempts
                        or (self._retry_for and not isinstance(e, self._retry_for))
                        or (self._do_not_retry_for and isinstance(e, self._do_not_retry_for))
                        or name not in self._client_dir):
                    raise
                _time.sleep(self._retry_delay)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._client, name)
        return lambda *args, **kwargs: self._retry(name, method, *args, **kwargs)

    def __dir__(self) -> List[str]:
        return self._client_dir


_EXCEPTIONS = ["MemcacheError", "MemcacheClientError", "MemcacheUnknownCommandError",
               "MemcacheIllegalInputError", "MemcacheServerError", "MemcacheUnknownError",
               "MemcacheUnexpectedCloseError"]


def _submodule(name: str, doc: str, names: Iterable[str]) -> ModuleType:
    return _submodule_of(__name__, name, doc, globals(), names)


exceptions = _submodule("exceptions", "pymemcache.exceptions' names.", _EXCEPTIONS)
client = _submodule("client", "pymemcache.client's names.",
                    ["Client", "PooledClient", "HashClient", "RetryingClient"])
# (attributes set on a module object: a type checker does not model them)
client.base = _submodule("client.base", "pymemcache.client.base's names.",  # type: ignore[attr-defined]
                         ["Client", "PooledClient", "KeepaliveOpts", "check_key_helper",
                          "normalize_server_spec"] + _EXCEPTIONS)
client.hash = _submodule("client.hash", "pymemcache.client.hash's names.",  # type: ignore[attr-defined]
                         ["HashClient"])
client.retrying = _submodule("client.retrying", "pymemcache.client.retrying's names.",  # type: ignore[attr-defined]
                             ["RetryingClient"])
client.rendezvous = _submodule("client.rendezvous", "pymemcache.client.rendezvous' names.",  # type: ignore[attr-defined]
                               ["RendezvousHash"])

__all__ = ["Client", "PooledClient", "HashClient", "RetryingClient", "KeepaliveOpts", "serde",
           "client", "exceptions", "RendezvousHash"] + _EXCEPTIONS
