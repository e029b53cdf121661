"""gets_multi and gats_multi with one of two servers stopped: as get_multi and gat_multi, the
first failed key's exception carries `hits` (the healthy server's (value, cas_unique) pairs)
and `errors` (each failed key's own exception). They raised a bare exception, the hits lost
(tester finding retest9 2)."""

import pytest

import mcpool
from conftest import Server


@pytest.fixture
def one_stopped(prefix):
    """A client of two servers, the second stopped after the first's keys were stored:
    (client, keys on the live server, keys on the stopped one)."""
    live, stopped = Server(), Server()
    try:
        c = mcpool.Client([live.addr, stopped.addr], retry_timeout=0)  # fail-fast: no rehash
        keys = [prefix + "k%02d" % i for i in range(30)]
        up = [k for k in keys if c.server_for(k) == live.addr]
        dead = [k for k in keys if c.server_for(k) == stopped.addr]
        assert up and len(dead) >= 2
        assert c.set_multi({k: k.upper() for k in keys}) == []
        stopped.stop()
        yield c, keys, up, dead
    finally:
        live.stop()
        stopped.stop()


@pytest.mark.parametrize("call", ["gets_multi", "gats_multi"])
def test_a_stopped_server_costs_gets_multi_none_of_the_live_servers_hits(one_stopped, call):
    c, keys, up, dead = one_stopped
    args = (keys + [up[0].encode()],) + ((100,) if call == "gats_multi" else ())
    with pytest.raises(mcpool.ConnectionError) as e:
        getattr(c, call)(*args)
    exc = e.value
    assert dead[0] in str(exc) and exc.status_name in ("MCPOOL_IO", "MCPOOL_SERVER_DEAD")
    assert set(exc.hits) == set(up)  # b"k" and "k": one entry, as get_multi's
    for k, (value, cas) in exc.hits.items():
        assert value == k.upper() and isinstance(cas, int) and cas > 0, (k, value, cas)
    assert set(exc.errors) == set(dead)
    for k, err in exc.errors.items():
        assert isinstance(err, mcpool.ConnectionError) and k in str(err), (k, err)
    # the CAS uniques in hits are the items' own: a cas with one of them is stored
    k = up[0]
    assert c.cas(k, "new", exc.hits[k][1]) is True
    # get_multi / gat_multi say the same of the same keys
    plain = getattr(c, call.replace("gets", "get").replace("gats", "gat"))
    with pytest.raises(mcpool.ConnectionError) as g:
        plain(*args)
    assert set(g.value.hits) == set(exc.hits) and set(g.value.errors) == set(exc.errors)


@pytest.mark.parametrize("call", ["gets_multi", "gats_multi"])
def test_gets_multi_of_the_live_servers_keys_answers_as_before(one_stopped, call):
    c, keys, up, dead = one_stopped
    args = (up,) + ((100,) if call == "gats_multi" else ())
    r = getattr(c, call)(*args)
    assert set(r) == set(up) and all(v == k.upper() and cas > 0 for k, (v, cas) in r.items())
