"""`outcome_unknown`: the core's word (mcpool_last_error_outcome_unknown,
mcpool_last_item_outcome_unknown) on whether a failed request was sent and may have been
applied, on every exception raised from a core error; False on the binding's own."""
import socket

import pytest

import mcpool
from conftest import BrokenServer


@pytest.fixture
def silent():
    """A server that takes every request and never answers."""
    s = BrokenServer()
    yield s
    s.close()


def client(addr):
    return mcpool.Client([addr], io_timeout="200ms", connect_timeout="1s", retry_timeout=0,
                         failure_limit=1000)


def test_write_timed_out_is_unknown(silent):
    with pytest.raises(mcpool.TimeoutError) as e:
        client(silent.addr).set("k", b"v")
    assert e.value.outcome_unknown is True
    assert "whether it was applied is unknown" in str(e.value)
    assert e.value.server == silent.addr


def test_read_timed_out_is_not_unknown(silent):
    with pytest.raises(mcpool.TimeoutError) as e:
        client(silent.addr).get("k")
    assert e.value.outcome_unknown is False


def test_refused_connect_is_not_unknown():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        addr = "127.0.0.1:%d" % s.getsockname()[1]
    with pytest.raises(mcpool.ConnectionError) as e:
        client(addr).set("k", b"v")
    assert e.value.outcome_unknown is False


def test_batch_item_timed_out_is_unknown(silent):
    with pytest.raises(mcpool.TimeoutError) as e:
        client(silent.addr).set_multi({"a": b"1", "b": b"2"})
    assert e.value.outcome_unknown is True
    assert all(r.outcome_unknown is True for r in e.value.results.values())


def test_delete_multi_item_timed_out_is_unknown(silent):
    with pytest.raises(mcpool.TimeoutError) as e:
        client(silent.addr).delete_multi(["a", "b"])
    assert e.value.outcome_unknown is True


def test_incr_multi_item_timed_out_is_unknown(silent):
    with pytest.raises(mcpool.TimeoutError) as e:
        client(silent.addr).incr_multi(["a", "b"])
    assert e.value.outcome_unknown is True
    assert all(r.outcome_unknown is True for r in e.value.results)


def test_get_multi_item_timed_out_is_not_unknown(silent):
    with pytest.raises(mcpool.TimeoutError) as e:
        client(silent.addr).get_multi(["a", "b"])
    assert e.value.outcome_unknown is False
    assert all(x.outcome_unknown is False for x in e.value.errors.values())


def test_binding_own_errors_are_not_unknown(mc):
    with pytest.raises(mcpool.ClientTypeError) as e:
        mc.set(1, b"v")
    assert e.value.outcome_unknown is False
    with pytest.raises(mcpool.ClientError) as e:
        mc.incr("k", -1)
    assert e.value.outcome_unknown is False
    assert mcpool.Error("mine").outcome_unknown is False
    with pytest.raises(mcpool.ClientError) as e:  # the core's, nothing sent
        mc.set("has space", b"v")
    assert e.value.outcome_unknown is False


def test_pylibmc_drop_in_carries_it(silent):
    import mcpool.compat.pylibmc as pylibmc
    c = pylibmc.Client([silent.addr], behaviors={"_poll_timeout": 200})
    with pytest.raises(pylibmc.Error) as e:
        c.set("k", b"v")
    assert e.value.outcome_unknown is True
    assert pylibmc.Error("mine").outcome_unknown is False
