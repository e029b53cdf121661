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


# x86-64 system call numbers, as /proc/<pid>/task/<tid>/syscall gives them.
SOCKET_WAITS = ("0", "7", "45", "47", "271")  # read, poll, recvfrom, recvmsg, ppoll
CONNECT_WAITS = ("7", "271")  # poll, ppoll
FUTEX_WAITS = ("202",)  # futex: a parked thread (in line for a pooled connection)


def main_thread_in(syscalls):
    """A function: true when the main thread is blocked in one of `syscalls` (x86-64
    numbers; on another machine, in any system call; without /proc, always)."""
    syscall = "/proc/self/task/%d/syscall" % threading.main_thread().native_id

    def waiting():
        try:
            with open(syscall) as f:
                nr = f.read().split()[0]
        except OSError:
            return True
        if platform.machine() != "x86_64":
            return nr not in ("running", "-1")
        return nr in syscalls

    return waiting


def sigint_when(ready, settled=1):
    """SIGINT to the main thread once `ready()` has held `settled` times in a row (polled
    every ms, 5 s at most)."""
    main = threading.main_thread()

    def send():
        held = 0
        for _ in range(5000):
            held = held + 1 if ready() else 0
            if held >= settled:
                break
            time.sleep(0.001)
        signal.pthread_kill(main.ident, signal.SIGINT)

    t = threading.Thread(target=send)
    t.start()
    return t


def sigint_once_sent(server):
    """SIGINT to the main thread once `server` (a Silent) has read a new request: the call
    is then waiting for its answer, in the system call a signal interrupts, once the main
    thread waits for a socket."""
    start = server.received
    in_socket_wait = main_thread_in(SOCKET_WAITS)
    return sigint_when(lambda: server.received > start and in_socket_wait())


def interrupted(call, server, bound=2.0, sender=None):
    """Runs call with a SIGINT once `server` (a Silent) got its request (or when `sender`,
    a function that starts the thread sending it, says); asserts KeyboardInterrupt (the
    handler's exception, not an mcpool error) within `bound` seconds."""
    # Python's own Ctrl-C handler, as in a terminal: a process started in the background by
    # a non-interactive shell inherits SIGINT ignored, and Python then leaves it ignored.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = sender() if sender else sigint_once_sent(server)
    t = time.monotonic()
    try:
        outcome = outcome_of(call)
    finally:
        timer.join()
        signal.signal(signal.SIGINT, old)
    took = time.monotonic() - t
    assert isinstance(outcome, KeyboardInterrupt), (outcome, took)
    assert took < bound, took
    assert not isinstance(outcome.__context__, mcpool.Error), outcome.__context__
    return took


def outcome_of(call):
    """What call raised (or returned); a KeyboardInterrupt that comes only after another
    exception (the handler ran late) is caught too, chained on it, not left to stop the
    test session."""
    try:
        try:
            return call()
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: B902
            for _ in range(1000):  # a handler still pending runs here
                pass
            return e
    except KeyboardInterrupt as e:
        return e


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


def test_ctrl_c_while_waiting_for_a_busy_pooled_connection(silent, prefix):
    # The one connection is held by a call the silent server never answers; Ctrl-C while
    # the main thread waits in line for it (a parked thread: no system call a signal ends)
    # is seen within the wait's 50 ms polls, not after the holder's I/O timeout and then
    # the waiter's own, as a TimeoutError (tester-conc F1).
    c = mcpool.Client([silent], io_timeout=4.0, pool_size=1, pool_timeout=10.0,
                      operation_timeout=0)
    holder = threading.Thread(target=lambda: pytest.raises(mcpool.TimeoutError, c.get,
                                                           prefix + "held"))
    holder.start()
    try:
        for _ in range(5000):  # the holder's request has arrived: it holds the connection
            if silent.received > 0:
                break
            time.sleep(0.001)
        waits = c.metrics()[silent]["pool_waits"]
        # The main thread parked for a while (not a moment's wait for the GIL): in line.
        took = interrupted(lambda: c.get(prefix + "k"), silent,
                           sender=lambda: sigint_when(main_thread_in(FUTEX_WAITS), 20))
        assert took < 2.0, took
        # The call did wait in line (the signal did not land before it began).
        assert c.metrics()[silent]["pool_waits"] == waits + 1, c.metrics()[silent]
    finally:
        holder.join(10)
    assert not holder.is_alive()


def connecting_sender():
    """SIGINT once the main thread has waited a while in poll(2) (the connect's wait)."""
    return sigint_when(main_thread_in(CONNECT_WAITS), settled=20)


@pytest.mark.parametrize("opts", [
    dict(connect_timeout=5.0),
    dict(connect_timeout=8.0, io_timeout=1.0, operation_timeout=5.0),
    dict(preset="pylibmc"),
], ids=["connect_timeout", "operation_timeout", "pylibmc_preset"])
def test_ctrl_c_during_a_connect_that_hangs(blackholed, prefix, opts):
    # A connect a server never answers (a dropped SYN) is a socket wait too: Ctrl-C ends it
    # at once, as python-memcached's and pymemcache's (tester-conc F2), not at the connect
    # or operation timeout. Twice: the connect the pool started for the slot, then the
    # caller's own for the empty slot.
    c = mcpool.Client([blackholed], retry_timeout=0, **opts)
    for _ in range(2):
        interrupted(lambda: c.get(prefix + "k"), None, sender=connecting_sender)


def test_ctrl_c_during_a_connect_that_hangs_through_compat_memcache(blackholed, prefix):
    mc = memcache.Client([blackholed], socket_timeout=6)
    interrupted(lambda: mc.get(prefix + "k"), None, sender=connecting_sender)


@pytest.mark.parametrize("peer", ["memcache", "pymemcache"])
def test_peers_end_a_hanging_connect_at_ctrl_c_as_mcpool_does(blackholed, prefix, peer):
    # The behaviour the test above holds mcpool to, shown on the real peers side by side.
    if peer == "memcache":
        import memcache as real
        client = real.Client([blackholed], socket_timeout=6)
    else:
        from pymemcache.client.base import Client as PyMemcacheClient
        host, port = blackholed.rsplit(":", 1)
        client = PyMemcacheClient((host, int(port)), connect_timeout=6, timeout=6)
    interrupted(lambda: client.get(prefix + "k"), None, sender=connecting_sender)
    mine = mcpool.Client([blackholed], connect_timeout=6.0, retry_timeout=0)
    interrupted(lambda: mine.get(prefix + "k"), None, sender=connecting_sender)


def test_a_connect_ended_by_operation_timeout_says_so(blackholed, prefix):
    # The deadline that ended the connect is the one the message names (tester-conc F2).
    c = mcpool.Client([blackholed], connect_timeout=8.0, operation_timeout=0.3,
                      retry_timeout=0)
    with pytest.raises(mcpool.TimeoutError) as info:
        c.get(prefix + "k")
    assert "operation_timeout ended the connect" in str(info.value), info.value
    c = mcpool.Client([blackholed], connect_timeout=0.3, operation_timeout=8.0,
                      retry_timeout=0)
    with pytest.raises(mcpool.TimeoutError) as info:
        c.get(prefix + "k")
    assert "connect timeout to %s" % blackholed in str(info.value), info.value


def _ctrl_c(*_args):
    """A hook during which Ctrl-C lands: SIGINT to this process, whose handler raises
    KeyboardInterrupt inside the hook (as with a hook that was sleeping or writing a log)."""
    signal.raise_signal(signal.SIGINT)
    raise AssertionError("SIGINT's handler did not raise")


def _raises(exc):
    def hook(*_args):
        raise exc
    return hook


@pytest.mark.parametrize("hook, exc", [(_ctrl_c, KeyboardInterrupt),
                                       (_raises(KeyboardInterrupt), KeyboardInterrupt),
                                       (_raises(SystemExit(3)), SystemExit)])
def test_ctrl_c_inside_an_on_operation_hook_raises_from_the_call(server, prefix, monkeypatch,
                                                                 hook, exc):
    """KeyboardInterrupt (or SystemExit) in a hook is not an error of the hook: it raises from
    the call the hook ran inside, as Ctrl-C does during the call's socket wait (it was sent to
    sys.unraisablehook and the call returned normally). The call's own work is done."""
    import sys
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    plain = mcpool.Client([server.addr])
    c = mcpool.Client([server.addr], on_operation=hook)
    with pytest.raises(exc):
        c.set(prefix + "k", b"v")
    assert plain.get(prefix + "k") == b"v"
    with pytest.raises(exc):
        c.get(prefix + "k")
    with pytest.raises(exc):  # a multi-key call: one record per server, one raise
        c.get_multi([prefix + "k", prefix + "j"])
    assert reported == []
    # nothing is left over: a call without a hook is unaffected
    assert plain.get(prefix + "k") == b"v"


def test_ctrl_c_inside_an_on_event_hook_raises_from_the_call(prefix, monkeypatch):
    import sys
    from conftest import _free_port
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    c = mcpool.Client(["127.0.0.1:%d" % _free_port()], on_event=_ctrl_c, failure_limit=1,
                      connect_timeout=1.0, retry_timeout=30)
    with pytest.raises(KeyboardInterrupt) as ei:
        c.get(prefix + "k")
    # the call's own error (the refused connect) is kept as the interrupt's context
    assert isinstance(ei.value.__context__, mcpool.Error)
    assert reported == []


def test_an_ordinary_exception_in_a_hook_is_still_only_reported(server, prefix, monkeypatch):
    import sys
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    c = mcpool.Client([server.addr], on_operation=_raises(ValueError("x")))
    assert c.set(prefix + "k", b"v") is True
    assert [type(r.exc_value) for r in reported] == [ValueError]


def _signals_while_threads_share(server, prefix, seconds=3):
    """Signals every 2 ms to the main thread, whose handler raises around its own calls,
    while six other threads share the client (a pool of 2 connections, so calls wait in line
    and serve each other's reads and sets). Returns what the main thread saw and what the
    workers' gets and sets raised, each as {class name (status): count}."""

    class Alarm(Exception):
        pass

    armed = [False]  # raise only around the main thread's calls (inside their try)

    def on_alarm(signum, frame):
        if armed[0]:
            raise Alarm()

    c = mcpool.Client([server.addr], pool_size=2, io_timeout="2s")
    stop = threading.Event()
    main_seen, worker_gets, worker_sets = {}, {}, {}
    lock = threading.Lock()

    def note(seen, e):
        name = type(e).__name__
        if getattr(e, "status_name", None) is not None:
            name += " (%s)" % e.status_name
        with lock:
            seen[name] = seen.get(name, 0) + 1

    def worker(n):
        i = 0
        while not stop.is_set():
            k = "%ssys%d_%d" % (prefix, n, i % 50)
            try:
                c.set(k, b"v%d" % i)
            except Exception as e:  # noqa: BLE001 (any class is what the test counts)
                note(worker_sets, e)
            try:
                c.get(k)
            except Exception as e:  # noqa: BLE001
                note(worker_gets, e)
            i += 1

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(6)]
    for t in threads:
        t.start()
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
    deadline = time.monotonic() + seconds
    i = 0
    try:
        while time.monotonic() < deadline:
            try:
                armed[0] = True
                c.set(prefix + "sysmain", b"m%d" % i)
                c.get(prefix + "sysmain")
                armed[0] = False
            except Alarm:
                armed[0] = False
                note(main_seen, Alarm())
            except Exception as e:  # noqa: BLE001
                armed[0] = False
                note(main_seen, e)
            i += 1
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, old)
        stop.set()
        for t in threads:
            t.join(10)
    return main_seen, worker_gets, worker_sets


def test_a_handler_exception_during_a_call_that_succeeds_is_raised_not_a_system_error(server, prefix):
    """The interrupt check can say stop while the core still finishes the call. The
    binding returned the call's result with the handler's exception pending, which CPython
    turns into SystemError ("returned a result with an exception set"), at that call or at a
    later one such as time.time() (tester finding lifecycle 2: in every 8 s run). Now the
    handler's exception is raised, and nothing else."""
    main_seen, worker_gets, worker_sets = _signals_while_threads_share(server, prefix)
    seen = [main_seen, worker_gets, worker_sets]
    assert not any("SystemError" in n for d in seen for n in d), seen
    assert main_seen.get("Alarm", 0) > 0, "the handler's exception was raised: %r" % seen


def test_an_interrupted_call_never_ends_the_calls_it_serves_for_other_threads(server, prefix):
    """A call that holds a connection serves other threads' waiting gets and sets on it
    (docs/handover.md). When a signal interrupted it there, those calls ended with the
    interrupt too (ClientError, status 107), though nothing interrupted them (tester finding
    lifecycle 3). Now their gets go back in line and never fail; a set already written gets
    a ConnectionError (stored or not is unknown), never the interrupt."""
    main_seen, worker_gets, worker_sets = _signals_while_threads_share(server, prefix, 4)
    assert main_seen.get("Alarm", 0) > 0, main_seen
    assert worker_gets == {}, "other threads' gets never fail: %r" % worker_gets
    assert all(n.startswith("ConnectionError") for n in worker_sets), worker_sets
