"""Client.close() (the core's mcpool_client_close): calls of other threads waiting for a pooled
connection end at once with ClientError (MCPOOL_CLOSED), no connection is opened after it,
and every later call is refused before anything is sent (tester finding java 1, the same
core on every surface)."""
import socket
import threading
import time

import pytest

import mcpool


def test_close_refuses_later_calls_and_sends_nothing(server):
    c = mcpool.Client([server.addr], key_prefix="pyclose:")
    c.set("k", b"v")
    c.close()
    c.close()  # idempotent
    with pytest.raises(mcpool.ClientError) as e:
        c.get("k")
    assert e.value.status_name == "MCPOOL_CLOSED"
    assert "closed" in str(e.value)
    with pytest.raises(mcpool.ClientError):
        c.set("k", b"w")
    with pytest.raises(mcpool.ClientError):
        c.set_servers([server.addr])
    other = mcpool.Client([server.addr], key_prefix="pyclose:")
    assert other.get("k") == b"v", "the refused set sent nothing"


def test_close_ends_the_calls_waiting_for_a_connection():
    # A deliberately silent fake server (not memcached): accepts, never answers.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted = []

    def accept():
        for _ in range(16):
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    addr = "127.0.0.1:%d" % listener.getsockname()[1]
    c = mcpool.Client([addr], max_size=1, min_idle=0, io_timeout="4s", pool_timeout="30s",
                      failure_limit=1000)
    outcomes = {}

    def call(name):
        try:
            c.get(name)
            outcomes[name] = ("answer", time.monotonic())
        except mcpool.Error as e:
            outcomes[name] = (e, time.monotonic())

    holder = threading.Thread(target=call, args=("held",))
    holder.start()
    deadline = time.monotonic() + 10
    while not accepted and time.monotonic() < deadline:
        time.sleep(0.005)
    assert len(accepted) == 1
    waiters = [threading.Thread(target=call, args=("w%d" % i,)) for i in range(3)]
    for w in waiters:
        w.start()
    # Not a synchronisation: a waiter not yet in line is refused with the same error.
    time.sleep(0.3)
    closed_at = time.monotonic()
    c.close()
    for w in waiters:
        w.join(20)
    for i in range(3):
        err, at = outcomes["w%d" % i]
        assert isinstance(err, mcpool.ClientError), err
        assert err.status_name == "MCPOOL_CLOSED", err
        assert at - closed_at < 3, "a waiter ended %.1f s after close" % (at - closed_at)
    holder.join(20)
    assert len(accepted) == 1, "a connection was opened after close"
    for s in accepted:
        s.close()
    listener.close()
