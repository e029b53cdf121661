"""Drop-ins answering a server's refusals as the clients they stand in for, side by side with
those clients: flush_all refused by a memcached started with -F (pylibmc's SomeErrors), a
store refused with SERVER_ERROR (python-memcached's False) and a connection the server closes
where a reply belongs (pymemcache's MemcacheUnexpectedCloseError). The fake servers here are
deliberately broken servers, named as such."""
import socket
import threading

import pytest

from conftest import Server, require

import mcpool.compat.memcache as compat_memcache
import mcpool.compat.pylibmc as compat_pylibmc
import mcpool.compat.pymemcache as compat_pymemcache


class FakeServer:
    """A deliberately broken server: for each connection, reads one request line (and a
    store's data line) and answers `reply` (b"" closes the connection without a reply)."""

    def __init__(self, reply):
        self.reply = reply
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        for _ in range(64):  # bounded: the tests make a few connections
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                buf = b""
                try:
                    while b"\r\n" not in buf:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        buf += chunk
                    first = buf.split(b"\r\n", 1)[0]
                    if first.split(b" ")[0] in (b"set", b"add", b"replace"):
                        while buf.count(b"\r\n") < 2:
                            chunk = conn.recv(4096)
                            if not chunk:
                                break
                            buf += chunk
                    if self.reply:
                        conn.sendall(self.reply)
                        conn.recv(4096)  # until the client closes or sends again
                except OSError:
                    pass

    def close(self):
        self.sock.close()


def test_pylibmc_flush_all_refused_by_a_server_raises_some_errors():
    """pylibmc raises SomeErrors for any server whose flush failed, an error reply
    ("flush_all not allowed" from memcached -F) included; the drop-in raised ClientError,
    over binary ConnectionError (tester finding servererrors 3). The other server is
    flushed."""
    real = require("pylibmc", "python3-pylibmc")
    refusing, live = Server("-F"), Server()
    try:
        for mod in (real, compat_pylibmc):
            for binary in (False, True):
                if mod is real and binary:
                    continue  # pylibmc over binary answers True for the refusal
                mc = mod.Client([refusing.addr, live.addr], binary=binary)
                keys = {"fk%d" % i: i for i in range(20)}
                mc.set_multi(keys)
                with pytest.raises(mod.SomeErrors):
                    mc.flush_all()
                # the live server flushed, the refusing server's keys kept
                assert compat_pylibmc.Client([live.addr]).get_multi(list(keys)) == {}, \
                    (mod, binary)
                assert compat_pylibmc.Client([refusing.addr]).get_multi(list(keys)), \
                    (mod, binary)
    finally:
        refusing.stop()
        live.stop()


def test_client_flush_all_names_each_servers_outcome():
    """mcpool.Client.flush_all raises the first refusing server's error with `results`,
    every server's outcome in order (True flushed, or its exception), and flushes the others
    (tester finding retest26 6: only the first refusing server was named)."""
    import mcpool
    refusing = [Server("-F"), Server("-F")]
    live = Server()
    try:
        servers = [refusing[0].addr, live.addr, refusing[1].addr]
        for protocol in ("text", "meta", "binary"):
            mc = mcpool.Client(servers, protocol=protocol)
            mcpool.Client([live.addr]).set("fk", "v")
            with pytest.raises(mcpool.ClientError) as e:
                mc.flush_all()
            assert refusing[0].addr in str(e.value), (protocol, str(e.value))
            results = e.value.results
            assert list(results) == servers, (protocol, results)
            assert results[live.addr] is True, (protocol, results)
            assert e.value.server == refusing[0].addr, (protocol, e.value.server)
            for r in refusing:
                assert isinstance(results[r.addr], mcpool.ClientError), (protocol, results)
                assert "not allowed" in str(results[r.addr]), (protocol, results)
                assert results[r.addr].server == r.addr, (protocol, results)
            assert mcpool.Client([live.addr]).get("fk") is None, protocol
            assert mcpool.Client([live.addr]).flush_all() is True
    finally:
        for s in refusing + [live]:
            s.stop()


def test_memcache_store_refused_with_server_error_is_false():
    """python-memcached answers False for a store memcached refuses with any error line
    (out of memory, -M), not only "too large": the drop-in answered 0 (tester finding
    servererrors 5)."""
    real = require("memcache", "python3-memcache")
    fake = FakeServer(b"SERVER_ERROR out of memory storing object\r\n")
    try:
        assert real.Client([fake.addr]).set("k", "v") is False
        assert compat_memcache.Client([fake.addr]).set("k", "v") is False
    finally:
        fake.close()


def test_pymemcache_a_connection_closed_before_the_reply_is_unexpected_close():
    """pymemcache raises MemcacheUnexpectedCloseError (a MemcacheError, which its retry
    pattern catches) when the server closes the connection where a reply belongs; the
    drop-in raised mcpool.ConnectionError (tester finding connlife 3)."""
    real = require("pymemcache", "python3-pymemcache")
    from pymemcache.client.base import Client as RealClient
    from pymemcache.exceptions import MemcacheUnexpectedCloseError as RealClose
    fake = FakeServer(b"")
    host, port = fake.addr.rsplit(":", 1)
    try:
        with pytest.raises(RealClose):
            RealClient((host, int(port))).incr("ctr", 1)
        for cls in (compat_pymemcache.Client, compat_pymemcache.PooledClient):
            with pytest.raises(compat_pymemcache.MemcacheUnexpectedCloseError) as e:
                cls((host, int(port))).incr("ctr", 1)
            assert isinstance(e.value, compat_pymemcache.MemcacheError)
            assert "closed the connection" in str(e.value)
    finally:
        fake.close()
    assert real is not None


def test_a_large_store_to_a_full_server_says_the_connection_limit():
    """A store larger than the socket's buffers, on a connection memcached refused at its
    limit (-c) and closed, says the limit as a small one does: the write failed with "Broken
    pipe" while the refusal waited unread (tester finding connlife 7). A client per store, as
    the tester's: its connection is opened at the first call."""
    import socket as _socket
    import mcpool
    full = Server("-c", "16", "-t", "1")
    held = []
    try:
        host, port = full.addr.rsplit(":", 1)
        for _ in range(64):  # until memcached refuses one
            s = _socket.create_connection((host, int(port)), timeout=5)
            s.sendall(b"version\r\n")
            if not s.recv(100).startswith(b"VERSION"):
                s.close()
                break
            held.append(s)
        for protocol in ("text", "meta", "binary"):
            for size in (10, 100000, 900000, 900000, 900000):
                c = mcpool.Client([full.addr], protocol=protocol, compression=False)
                with pytest.raises(mcpool.ConnectionError) as e:
                    c.set("k", b"x" * size)
                assert "connection limit" in str(e.value), (protocol, size, str(e.value))
    finally:
        for s in held:
            s.close()
        full.stop()
