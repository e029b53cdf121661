"""A client whose hook refers back to it is collected by the GC (tester finding soak 1).

The common pattern, ``self.mc = mcpool.Client([...], on_operation=self.hook)``, makes a
reference cycle through the C client's hook (owner -> client -> hook -> owner). The C type
takes part in the cyclic GC, so gc.collect() frees such a client: its weakref is cleared and
its sockets closed. Before, every one stayed for the life of the process with its connection.
"""
import gc
import os
import threading
import weakref

import mcpool

DEAD = "127.0.0.1:1"  # nothing listens: a call there fails, and on_event reports it


def fds():
    return len(os.listdir("/proc/self/fd"))


class OpOwner:
    """Holds its client; the client's on_operation is a bound method of the owner."""

    def __init__(self, addr):
        self.ops = 0
        self.mc = mcpool.Client([addr], on_operation=self.hook)

    def hook(self, record):
        self.ops += 1


class EventOwner:
    """Holds its client; the client's on_event is a bound method of the owner."""

    def __init__(self, addr):
        self.events = []
        self.mc = mcpool.Client([addr], on_event=self.hook, min_idle=0, failure_limit=1,
                                retry_timeout=0.01, retry_timeout_max=0.01)

    def hook(self, kind, server, failures, retry_in):
        self.events.append(kind)


def collected(refs):
    """How many of the weakly referenced clients are gone after a full collection."""
    gc.collect()
    gc.collect()
    return sum(1 for r in refs if r() is None)


def test_on_operation_bound_method_of_owner(server, prefix):
    refs = []
    for i in range(20):
        o = OpOwner(server.addr)
        assert o.mc.set(prefix + "k", b"v")
        assert o.mc.get(prefix + "k") == b"v"
        assert o.ops >= 2  # the hook fires while the client lives
        refs.append(weakref.ref(o.mc))
        del o
    assert collected(refs) == len(refs)


def test_on_event_bound_method_of_owner():
    refs = []
    for i in range(20):
        o = EventOwner(DEAD)
        try:
            o.mc.get("k")
        except mcpool.ConnectionError:
            pass
        assert "server_down" in o.events  # the hook fires while the client lives
        refs.append(weakref.ref(o.mc))
        del o
    assert collected(refs) == len(refs)


def op_lambda_client(addr, prefix):
    """A client whose on_operation is a lambda closing over the client (the cell outlives
    this call): a weakref to it."""
    seen = []
    mc = mcpool.Client([addr], on_operation=lambda r: seen.append(mc.servers))
    assert mc.set(prefix + "k", b"v")
    assert seen and seen[0] == [addr]  # the hook fires while the client lives
    return weakref.ref(mc)


def event_lambda_client():
    """As op_lambda_client, with on_event."""
    events = []
    mc = mcpool.Client([DEAD], min_idle=0, failure_limit=1,
                       on_event=lambda *a: events.append((a[0], mc.servers)))
    try:
        mc.get("k")
    except mcpool.ConnectionError:
        pass
    assert ("server_down", [DEAD]) in events
    return weakref.ref(mc)


def test_lambdas_closing_over_the_client(server, prefix):
    refs = []
    for i in range(10):
        refs.append(op_lambda_client(server.addr, prefix))
        refs.append(event_lambda_client())
    assert collected(refs) == len(refs)


def test_sockets_of_collected_clients_are_closed(server, prefix):
    """Not only unreachable: freed, each closing its connection to memcached."""
    gc.collect()
    before = fds()
    owners = [OpOwner(server.addr) for _ in range(20)]
    for o in owners:
        assert o.mc.set(prefix + "k", b"v")
    assert fds() >= before + 20  # one connection each
    del owners, o
    gc.collect()
    assert fds() <= before + 2, (before, fds())


def test_collection_while_hooks_fire_on_other_threads(server, prefix):
    """Cycles collected while other threads' clients keep calling their hooks (the GC may
    run on any of them, between two calls of a hook of a client it clears)."""
    stop = threading.Event()
    errors = []

    def work():
        try:
            while not stop.is_set():
                o = OpOwner(server.addr)
                o.mc.set(prefix + "w", b"v")
                o.mc.get(prefix + "w")
                e = EventOwner(DEAD)
                try:
                    e.mc.get("k")
                except mcpool.ConnectionError:
                    pass
                del o, e
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        refs = []
        for i in range(100):
            o = OpOwner(server.addr)
            o.mc.get(prefix + "m")
            refs.append(weakref.ref(o.mc))
            del o
            if i % 10 == 0:
                gc.collect()
    finally:
        stop.set()
        for t in threads:
            t.join(60)
    assert not errors, errors
    assert collected(refs) == len(refs)
