"""Ctrl-C (a signal handler that raises) ends a call at once, as Python's own sockets do;
a handler that returns lets the call go on within its I/O timeout. The servers that never
answer are deliberately silent fake servers: listeners that accept and never reply."""
import signal
import socket
import threading
import time

import pytest

import mcpool
from mcpool.compat import memcache


@pytest.fixture
def silent():
    """A deliberately silent fake server: accepts connections, never answers."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(64)
    held = []
    stop = threading.Event()

    def accept():
        ls.settimeout(0.1)
        for _ in range(6000):  # bounded: 10 minutes at most
            if stop.is_set():
                return
            try:
                held.append(ls.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield "127.0.0.1:%d" % ls.getsockname()[1]
    stop.set()
    t.join(5)
    for c in held:
        c.close()
    ls.close()


def sigint_in(delay):
    """SIGINT to the main thread (where Python runs its handlers) after `delay` seconds."""
    main = threading.main_thread().ident
    t = threading.Timer(delay, lambda: signal.pthread_kill(main, signal.SIGINT))
    t.start()
    return t


def interrupted(call, bound=2.0):
    """Runs call with a SIGINT 0.2 s in; asserts KeyboardInterrupt (the handler's exception,
    not an mcpool error) within `bound` seconds."""
    timer = sigint_in(0.2)
    t = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            call()
    finally:
        timer.join()
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
    interrupted(lambda: c.get(mute))
    interrupted(lambda: c.get_multi([mute, real]))
    interrupted(lambda: c.set_multi({mute: b"1", real: b"2"}))
    # The client stays usable: the other server answers, the silent one was not blamed (no
    # ServerDead), and an interrupted connection is never reused.
    assert c.set(real, b"v")
    assert c.get(real) == b"v"
    interrupted(lambda: c.get(mute))


def test_ctrl_c_under_the_pylibmc_preset(silent, prefix):
    c = mcpool.Client([silent], preset="pylibmc")  # io_timeout 5 s, operation_timeout 0
    interrupted(lambda: c.get(prefix + "k"))


def test_ctrl_c_through_compat_memcache(silent, prefix):
    # python-memcached turns errors into None, but a KeyboardInterrupt is not an error: it
    # raises at once, as python-memcached's own sockets do.
    mc = memcache.Client([silent], socket_timeout=5)
    interrupted(lambda: mc.get(prefix + "k"))


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
