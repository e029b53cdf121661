"""disconnect_all() closes the client's connections (the core's mcpool_client_disconnect_all),
on mcpool.Client and the compat clients, as the peers do: python-memcached and pylibmc,
side by side, against one private memcached whose `stats` curr_connections counts them."""
import time

import pytest

from conftest import Server, require


@pytest.fixture
def own_server():
    s = Server()
    yield s
    s.stop()


def connections(server):
    """The server's open client connections, less the one asking (stats curr_connections)."""
    for line in server.raw(b"stats\r\n").split(b"\r\n"):
        if line.startswith(b"STAT curr_connections "):
            return int(line.split()[2]) - 1
    raise AssertionError("no curr_connections in stats")


def settles_at(server, want, timeout=5.0):
    """The count once memcached has seen the closes (it reads each EOF on a worker thread):
    polled, bounded."""
    deadline = time.monotonic() + timeout
    n = connections(server)
    while n != want and time.monotonic() < deadline:
        time.sleep(0.02)
        n = connections(server)
    return n


def _mcpool(addr):
    import mcpool
    return mcpool.Client([addr])


def _mcpool_min_idle(addr):
    import mcpool
    return mcpool.Client([addr], min_idle=2, pool_size=4)


def _compat_memcache(addr):
    from mcpool.compat import memcache
    return memcache.Client([addr])


def _compat_pylibmc(addr):
    from mcpool.compat import pylibmc
    return pylibmc.Client([addr])


def _peer_memcache(addr):
    return require("memcache", "python3-memcache").Client([addr])


def _peer_pylibmc(addr):
    return require("pylibmc", "python3-pylibmc").Client([addr])


@pytest.mark.parametrize("make", [_mcpool, _mcpool_min_idle, _compat_memcache, _compat_pylibmc,
                                  _peer_memcache, _peer_pylibmc])
def test_disconnect_all_closes_the_connections(own_server, make):
    base = connections(own_server)
    c = make(own_server.addr)
    assert c.set("k", "v")
    assert c.get("k") == "v"
    assert connections(own_server) >= base + 1  # the one the calls used (answered: accepted)
    c.disconnect_all()
    assert settles_at(own_server, base) == base, make.__name__
    # the next call opens a connection again
    assert c.get("k") == "v"
    assert connections(own_server) >= base + 1


def test_disconnect_all_keeps_the_servers_health():
    """A server marked dead stays marked (the core keeps health across disconnect_all)."""
    import mcpool
    from conftest import _free_port
    c = mcpool.Client(["127.0.0.1:%d" % _free_port()], failure_limit=1, retry_timeout=30,
                      connect_timeout=0.5, min_idle=0)
    with pytest.raises(mcpool.Error):
        c.get("k")
    c.disconnect_all()
    assert not next(iter(c.server_states().values()))["alive"]
