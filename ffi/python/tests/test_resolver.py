"""resolver=: the core's resolver hook (Rust ClientBuilder::resolver, C
mcpool_config_set_resolver) from Python (tester finding topology2 2: refused as an unknown
option): resolver(host, port) returns the IP literals of a server's name, for service
discovery; raising, answering nothing or something that is no IP literal is "did not
resolve" (the call fails with a connection error; what it raised is reported)."""
import gc
import sys
import weakref

import pytest

import mcpool


def test_a_resolver_places_a_name_on_its_addresses(server, prefix):
    port = int(server.addr.rsplit(":", 1)[1])
    asked = []

    def resolve(host, p):
        asked.append((host, p))
        return ["127.0.0.1"]

    c = mcpool.Client(["cache.service.invalid:%d" % port], resolver=resolve, min_idle=0)
    assert c.set(prefix + "k", "v")
    assert c.get(prefix + "k") == "v"
    assert ("cache.service.invalid", port) in asked
    # the same server seen through a plain client: the value is there
    assert mcpool.Client([server.addr]).get(prefix + "k") == "v"


def _failed_get(server, prefix, resolver, error, says=None):
    """A get through a client whose one server's name `resolver` answers, which must raise
    `error` (its message containing `says`); what went to sys.unraisablehook meanwhile."""
    port = int(server.addr.rsplit(":", 1)[1])
    reported = []
    old, sys.unraisablehook = sys.unraisablehook, reported.append
    try:
        c = mcpool.Client(["nowhere.invalid:%d" % port], resolver=resolver, min_idle=0,
                          connect_timeout=2)
        with pytest.raises(error) as raised:
            c.get(prefix + "k")
        if says is not None:
            assert says in str(raised.value), raised.value
            assert "resolver callback returned" not in str(raised.value)
    finally:
        sys.unraisablehook = old
    return reported


# Each failure says what the resolver did (tester finding retest31 5: every one said
# "resolver callback returned 1").
@pytest.mark.parametrize("answer,says", [
    (lambda host, port: [], "the resolver answered no address"),
    (lambda host, port: ["not-an-ip"], "the resolver answered 'not-an-ip'"),
    (lambda host, port: [b"127.0.0.1"], "the resolver answered a value of type bytes among its addresses"),
    (lambda host, port: 42, "the resolver answered a value of type int, not a list of IP literals"),
    (lambda host, port: "127.0.0.1", "the resolver answered a value of type str, not a list of IP literals"),
])
def test_a_resolver_that_gives_no_address_fails_the_call(server, prefix, answer, says):
    reported = _failed_get(server, prefix, answer, mcpool.Error, says)
    # it raised nothing: nothing goes to sys.unraisablehook (tester finding retest32 2)
    assert reported == [], reported


def test_a_resolver_that_raises_is_reported_and_fails_the_call(server, prefix):
    def resolve(host, p):
        raise RuntimeError("discovery is down")

    reported = _failed_get(server, prefix, resolve, mcpool.ConnectionError,
                           "the resolver raised RuntimeError: discovery is down")
    assert any(isinstance(r.exc_value, RuntimeError) for r in reported), reported


def test_a_resolver_must_be_callable(server):
    with pytest.raises(mcpool.ClientTypeError, match="resolver must be callable"):
        mcpool.Client([server.addr], resolver="127.0.0.1")


def test_a_client_its_resolver_refers_to_is_freed(server, prefix):
    port = int(server.addr.rsplit(":", 1)[1])
    holder = {}

    def resolve(host, p):
        holder.get("client")  # a cycle: the resolver refers to its client
        return ["127.0.0.1"]

    c = mcpool.Client(["cycle.invalid:%d" % port], resolver=resolve, min_idle=0)
    holder["client"] = c
    assert c.set(prefix + "cyc", "v")
    ref = weakref.ref(c)
    # client -> resolver -> its closure's dict -> client: only the GC frees it
    del c, resolve, holder
    for _ in range(3):
        gc.collect()
    assert ref() is None


def test_a_client_with_a_resolver_leaves_no_memory_behind(server):
    """The resolver's cell (its userdata in the core) is freed by its last owner, the client
    or the core once nothing can call the resolver any more (mcpool_config_set_resolver_owned);
    it was kept for good, 16 bytes per client (tester finding leaks 1). tracemalloc sees the
    Python side; the cell itself is C heap memory (calloc), which valgrind's runs of the C
    ABI's owned resolver cover (ffi/c test_resolver_owned)."""
    import tracemalloc

    port = int(server.addr.rsplit(":", 1)[1])

    def make():
        c = mcpool.Client(["leak.invalid:%d" % port], resolver=lambda h, p: ["127.0.0.1"],
                          min_idle=0)
        c.close()

    make()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(500):
            make()
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # (attributed to the mcpool package's line that calls into C; 500 leaked cells: 8000)
    grown = sum(s.size_diff for s in after.compare_to(before, "filename")
                if not s.traceback[0].filename.endswith("tracemalloc.py"))
    assert grown < 4000, "%d bytes kept by 500 clients with a resolver" % grown
