"""Ctrl-C (a signal handler that raises) ends a call at once, as Python's own sockets do;
a handler that returns lets the call go on within its I/O timeout. The servers that never
answer are deliberately silent fake servers: listeners that accept and never reply."""
import platform
import selectors
import signal
import socket
import threading
import time

import pytest

import mcpool
from mcpool.compat import memcache


class Silent(str):
    """The address of a deliberately silent fake server; `received` counts the request
    bytes it has read (and never answered)."""

    received = 0


@pytest.fixture
def silent():
    """A deliberately silent fake server: accepts connections, reads requests, never answers."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    ls.setblocking(False)
    addr = Silent("127.0.0.1:%d" % ls.getsockname()[1])
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ)
    held = []
    stop = threading.Event()

    def serve():
        for _ in range(6000):  # bounded: 10 minutes at most
            if stop.is_set():
                return
            for key, _ in sel.select(0.1):
                if key.fileobj is ls:
                    try:
                        c = ls.accept()[0]
                    except OSError:
                        continue
                    c.setblocking(False)
                    held.append(c)
                    sel.register(c, selectors.EVENT_READ)
                    continue
                try:
                    data = key.fileobj.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(key.fileobj)
                addr.received += len(data)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield addr
    stop.set()
    t.join(5)
    sel.close()
    for c in held:
        c.close()
    ls.close()


def sigint_in(delay):
    """SIGINT to the main thread (where Python runs its handlers) after `delay` seconds."""
    main = threading.main_thread().ident
    t = threading.Timer(delay, lambda: signal.pthread_kill(main, signal.SIGINT))
    t.start()
    return t


def sigint_once_sent(server):
    """SIGINT to the main thread once `server` (a Silent) has read a new request: the call
    is then waiting for its answer, in the system call a signal interrupts (a signal that
    came earlier, while the call still waited for a connection, would be seen only at its
    I/O timeout, as by Python's own sockets), once the main thread waits for a socket."""
    main = threading.main_thread()
    start = server.received
    syscall = "/proc/self/task/%d/syscall" % main.native_id

    def waiting():
        """The main thread waits for a socket (x86-64: read 0, poll 7, recvfrom 45,
        recvmsg 47, ppoll 271; the syscall number /proc gives). Not a futex: a signal that lands while the call waits for
        a pooled connection is seen only at the next interrupted socket wait (README)."""
        try:
            with open(syscall) as f:
                nr = f.read().split()[0]
        except OSError:
            return True  # no /proc: the request's arrival alone
        if platform.machine() != "x86_64":
            return nr not in ("running", "-1")
        return nr in ("0", "7", "45", "47", "271")

    def send():
        for _ in range(5000):  # polled every ms: 5 s at most
            if server.received > start and waiting():
                break
            time.sleep(0.001)
        signal.pthread_kill(main.ident, signal.SIGINT)

    t = threading.Thread(target=send)
    t.start()
    return t


def interrupted(call, server, bound=2.0):
    """Runs call with a SIGINT once `server` (a Silent) got its request; asserts
    KeyboardInterrupt (the handler's exception, not an mcpool error) within `bound`
    seconds."""
    # Python's own Ctrl-C handler, as in a terminal: a process started in the background by
    # a non-interactive shell inherits SIGINT ignored, and Python then leaves it ignored.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = sigint_once_sent(server)
    t = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            call()
    finally:
        timer.join()
        signal.signal(signal.SIGINT, old)
    took = time.monotonic() - t
    assert took < bound, took
    assert not isinstance(info.value.__context__, mcpool.Error), info.value.__context__
    return took


def key_on(client, addr, prefix):
    for i in range(1000):
        k = "%sk%d" % (prefix, i)
        if client.server_for(k) == addr:
            return k
    raise AssertionError("no key for server %s" % addr)


def test_ctrl_c_ends_a_get_against_a_silent_server_at_once(silent, server, prefix):
    c = mcpool.Client([silent, server.addr], io_timeout=5.0, retry_timeout=0)
    mute, real = key_on(c, silent, prefix), key_on(c, server.addr, prefix)
    interrupted(lambda: c.get(mute), silent)
    interrupted(lambda: c.get_multi([mute, real]), silent)
    interrupted(lambda: c.set_multi({mute: b"1", real: b"2"}), silent)
    # The client stays usable: the other server answers, the silent one was not blamed (no
    # ServerDead), and an interrupted connection is never reused.
    assert c.set(real, b"v")
    assert c.get(real) == b"v"
    interrupted(lambda: c.get(mute), silent)


def test_ctrl_c_under_the_pylibmc_preset(silent, prefix):
    c = mcpool.Client([silent], preset="pylibmc")  # io_timeout 5 s, operation_timeout 0
    interrupted(lambda: c.get(prefix + "k"), silent)


def test_ctrl_c_through_compat_memcache(silent, prefix):
    # python-memcached turns errors into None, but a KeyboardInterrupt is not an error: it
    # raises at once, as python-memcached's own sockets do.
    mc = memcache.Client([silent], socket_timeout=5)
    interrupted(lambda: mc.get(prefix + "k"), silent)


def test_a_handler_that_returns_does_not_end_the_call(silent, prefix):
    calls = []
    old = signal.signal(signal.SIGINT, lambda *a: calls.append(a))
    try:
        c = mcpool.Client([silent], io_timeout=1.0, operation_timeout=0)
        timer = sigint_in(0.2)
        t = time.monotonic()
        with pytest.raises(mcpool.TimeoutError):
            c.get(prefix + "k")
        took = time.monotonic() - t
        timer.join()
    finally:
        signal.signal(signal.SIGINT, old)
    assert calls, "the handler ran"
    # the I/O timeout, not cut short, not restarted by the signal
    assert 0.9 <= took < 3.0, took


def test_a_periodic_signal_does_not_stop_the_io_timeout(silent, prefix):
    old = signal.signal(signal.SIGALRM, lambda *a: None)
    signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
    try:
        c = mcpool.Client([silent], io_timeout=0.5, operation_timeout=0)
        t = time.monotonic()
        with pytest.raises(mcpool.TimeoutError):
            c.get(prefix + "k")
        took = time.monotonic() - t
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert took < 1.5, took
