"""Configuration of the drop-ins means what it means in the peer library, checked against the
real peer (python-memcached 1.59, pylibmc 1.6.3 over libmemcached 1.1.4) on real memcached."""
import os
import socket
import threading
import time

import pytest

import mcpool.compat.memcache as drop_memcache
import mcpool.compat.pylibmc as drop_pylibmc
from conftest import Server, require

memcache = require("memcache", "python3-memcache")
pylibmc = require("pylibmc", "python3-pylibmc")


@pytest.fixture(scope="module")
def big_server():
    s = Server("-I", "4m")
    yield s
    s.stop()


# ---- python-memcached: server_max_value_length ------------------------------------------------


@pytest.mark.parametrize("mod", [memcache, drop_memcache], ids=["python-memcached", "drop-in"])
def test_server_max_value_length_0_is_no_limit(big_server, prefix, mod):
    """python-memcached reads 0 as "no limit of its own": a 1.5 MB value is stored on a
    memcached that takes it (the drop-in kept a 1 MiB limit and returned 0, value lost)."""
    v = os.urandom(1500000)
    c = mod.Client([big_server.addr], server_max_value_length=0)
    k = prefix + "big"
    assert c.set(k, v)
    assert c.get(k) == v


@pytest.mark.parametrize("mod", [memcache, drop_memcache], ids=["python-memcached", "drop-in"])
def test_server_max_value_length_given_is_the_limit(big_server, prefix, mod):
    c = mod.Client([big_server.addr], server_max_value_length=1000)
    k = prefix + "limited"
    assert not c.set(k, os.urandom(1001))
    assert c.get(k) is None
    assert c.set(k, b"x" * 1000)
