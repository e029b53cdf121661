"""mcpool.compat.pylibmc's behaviors side by side with the real pylibmc: where each key
lands after any sequence of behavior changes (constructor, ``mc.behaviors = {...}``,
``mc.behaviors[k] = v``, ``set_behaviors``, ``behaviors.update``), and what
``get_behaviors()`` reads back. pylibmc applies the constructor's behaviors before it adds
the servers and later ones to the client that has them, which libmemcached places
differently (docs/placement.md, "pylibmc applies its behaviors ...")."""
import random

import pytest

from conftest import require

real_pylibmc = require("pylibmc", "python3-pylibmc")
import mcpool.compat.pylibmc as compat_pylibmc  # noqa: E402

# what get_behaviors() reads from a connected socket (SO_SNDBUF/SO_RCVBUF of the first
# server): the kernel's, not a setting
_SOCKET_SIZES = {"_socket_send_size", "_socket_recv_size"}

_HASHES = ["default", "md5", "crc", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "murmur",
           "jenkins"]
_DISTRIBUTIONS = ["modula", "consistent", "consistent ketama", "consistent ketama spy",
                  "consistent weighted"]
_WEIGHTS = [(1, 1, 1), (1, 2, 1), (3, 1, 1), (1, 1, 2), (2, 2, 2)]


def _random_behaviors(rng):
    """One to three placement behaviors (and sometimes auto_eject/remove_failed/ketama_hash),
    with random values; _sort_hosts reorders libmemcached's servers (host, then port)."""
    b = {}
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(["hash", "ketama", "ketama_weighted", "distribution", "hash",
                           "distribution", "auto_eject", "remove_failed", "ketama_hash",
                           "_sort_hosts", "tcp_nodelay"])
        if name == "hash":
            b[name] = rng.choice(_HASHES)
        elif name == "distribution":
            b[name] = rng.choice(_DISTRIBUTIONS)
        elif name == "ketama_hash":
            b[name] = rng.choice([0, 1, 2])
        else:
            b[name] = rng.choice([True, False, 1, 0, 3])
    return b


def _apply(mc, how, b):
    if how == "assign":
        mc.behaviors = b
    elif how == "item":
        for k, v in b.items():
            mc.behaviors[k] = v
    elif how == "update":
        mc.behaviors.update(b)
    else:
        mc.set_behaviors(b)


def _readback(mc):
    return {k: v for k, v in dict(mc.behaviors).items() if k not in _SOCKET_SIZES}


def _holders(servers, keys):
    """{key: the address of the server that holds it} (each server asked directly)."""
    out = {}
    for s in servers:
        for k in compat_pylibmc.Client([s.addr]).get_multi(keys):
            assert k not in out, "key %s on two servers" % k
            out[k] = s.addr
    return out


def _sequences(seed, n):
    rng = random.Random(seed)
    for i in range(n):
        weights = rng.choice(_WEIGHTS)
        order = rng.sample(range(3), 3)
        ctor = _random_behaviors(rng) if rng.random() < 0.7 else None
        steps = [(rng.choice(["assign", "item", "set_behaviors", "update"]),
                  _random_behaviors(rng)) for _ in range(rng.randint(0, 3))]
        yield i, weights, order, ctor, steps


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_behavior_sequences_place_every_key_as_pylibmc(servers, prefix, seed):
    """Seeded random sequences of behavior changes on three servers, weighted or not: the
    drop-in reads back what pylibmc reads back, and holds every key on the server pylibmc
    wrote it to (0 of 40 keys differ in each sequence)."""
    bad = []
    for i, weights, order, ctor, steps in _sequences(seed, 25):
        listed = [servers[j] for j in order]  # _sort_hosts sorts them back
        specs = ["%s:%d" % (s.addr, w) for s, w in zip(listed, weights)]
        real = real_pylibmc.Client(specs, behaviors=dict(ctor) if ctor else None)
        ours = compat_pylibmc.Client(specs, behaviors=dict(ctor) if ctor else None)
        for how, b in steps:
            _apply(real, how, dict(b))
            _apply(ours, how, dict(b))
        what = "%s, behaviors=%r, then %r" % (specs, ctor, steps)
        if _readback(real) != _readback(ours):
            r, o = _readback(real), _readback(ours)
            bad.append("%s: read back %r" % (what, {k: (r[k], o.get(k)) for k in r
                                                    if r[k] != o.get(k)}))
            continue
        keys = ["%s%d_%d" % (prefix, i, j) for j in range(40)]
        for k in keys:
            assert real.set(k, "v")
        held = _holders(servers, keys)
        moved = [k for k in keys if held.get(k) != ours._mc.server_for(k)]
        if moved:
            bad.append("%s: %d of 40 keys on another server" % (what, len(moved)))
        # the drop-in reads what pylibmc wrote
        assert len(ours.get_multi(keys)) == len(keys) - len(moved)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("weights", [(1, 2, 1), (1, 1, 1)])
@pytest.mark.parametrize("how", ["assign", "item", "set_behaviors", "update"])
@pytest.mark.parametrize("steps", [
    [{"ketama": True}],
    [{"distribution": "consistent"}],
    [{"ketama": True}, {"hash": "md5"}],
    [{"hash": "md5"}, {"ketama": True}],
    [{"ketama_weighted": True}, {"distribution": "consistent ketama spy"}],
], ids=["ketama", "consistent", "ketama_then_md5", "md5_then_ketama", "weighted_then_spy"])
def test_behaviors_set_after_the_servers_place_as_pylibmc(servers, prefix, weights, how, steps):
    """The tester's cases: behaviors set on a client that has its servers (weights 1,2,1
    then ketama moved 35-43 of 60 keys; ketama then hash=md5 as two steps 33-45)."""
    specs = ["%s:%d" % (s.addr, w) for s, w in zip(servers, weights)]
    real, ours = real_pylibmc.Client(specs), compat_pylibmc.Client(specs)
    for b in steps:
        _apply(real, how, dict(b))
        _apply(ours, how, dict(b))
    assert _readback(ours) == _readback(real)
    keys = [prefix + "k%d" % j for j in range(60)]
    for k in keys:
        assert real.set(k, "v")
    held = _holders(servers, keys)
    assert [k for k in keys if held.get(k) != ours._mc.server_for(k)] == []


def _values(name):
    if name == "hash":
        return list(_HASHES)
    if name == "distribution":
        return list(_DISTRIBUTIONS)
    return [0, 1, 3, True]


# pylibmc accepts them; the drop-in refuses them with an error rather than place keys or
# keep a setting it cannot honour (see the module's doc)
_REFUSED = {("num_replicas", 1), ("num_replicas", 3), ("num_replicas", True),
            ("_poll_timeout", 0), ("pickle_protocol", 3), ("pickle_protocol", True),
            ("connect_timeout", 0)}


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_get_behaviors_reads_back_what_pylibmc_reads_back(servers, weighted):
    """Every behavior pylibmc lists, alone, in the constructor and set afterwards: the
    drop-in reads back the same dict (the tester's cases among them: ketama_weighted with
    hash crc reads hash md5; auto_eject reads remove_failed 1; distribution "consistent
    weighted" reads ketama_weighted 1)."""
    specs = ["%s:%d" % (s.addr, 2 if weighted and i == 1 else 1) for i, s in enumerate(servers)]
    assert set(compat_pylibmc.all_behaviors) == set(real_pylibmc.all_behaviors)
    bad = []
    for name in real_pylibmc.all_behaviors:
        if name in _SOCKET_SIZES:
            continue
        for v in _values(name):
            if (name, v) in _REFUSED or (name == "pickle_protocol" and v not in (0, 1)):
                continue
            for after in (False, True):
                clients = []
                for mod in (real_pylibmc, compat_pylibmc):
                    try:
                        c = mod.Client(specs, behaviors=None if after else {name: v})
                        if after:
                            c.behaviors = {name: v}
                        clients.append(_readback(c))
                    except Exception as e:  # noqa: BLE001 - compared by kind below
                        clients.append(type(e).__name__)
                r, o = clients
                if isinstance(r, dict) and isinstance(o, dict):
                    diff = {k: (r[k], o.get(k)) for k in r if r[k] != o.get(k)}
                    if diff:
                        bad.append("%s=%r%s: %r" % (name, v, " (after)" if after else "", diff))
                elif (r == "Error") != (o == "Error"):
                    bad.append("%s=%r: pylibmc %s, drop-in %s" % (name, v, r, o))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("when", ["constructor", "after"])
def test_sort_hosts_orders_the_servers_as_pylibmc(servers, prefix, when):
    """_sort_hosts: libmemcached sorts its server list by host, then port; under modula that
    moves most keys (40 of 60 with three servers listed in descending port order). It was
    reported and ignored."""
    listed = sorted(servers, key=lambda s: -s.port)
    addrs = [s.addr for s in listed]
    b = {"_sort_hosts": 1}
    real = real_pylibmc.Client(addrs, behaviors=b if when == "constructor" else None)
    ours = compat_pylibmc.Client(addrs, behaviors=b if when == "constructor" else None)
    if when == "after":
        real.behaviors["_sort_hosts"] = 1
        ours.behaviors["_sort_hosts"] = 1
        # off again: the list stays sorted (libmemcached sorted it in place)
        real.behaviors["_sort_hosts"] = 0
        ours.behaviors["_sort_hosts"] = 0
    assert _readback(ours) == _readback(real)
    keys = [prefix + "k%d" % j for j in range(60)]
    for k in keys:
        assert real.set(k, "v")
    held = _holders(servers, keys)
    assert [k for k in keys if held.get(k) != ours._mc.server_for(k)] == []


def test_hash_and_distribution_tables_are_pylibmcs():
    """pylibmc.hashers/distributions are libmemcached's numbers (the drop-in's table
    numbered "consistent ketama spy" 3, pylibmc's "random")."""
    assert compat_pylibmc.hashers == real_pylibmc.hashers
    assert compat_pylibmc.distributions == real_pylibmc.distributions


def test_refused_behaviors_are_the_documented_ones(server):
    """The behaviors the drop-in refuses where pylibmc accepts them raise a pylibmc.Error
    naming why (never a silently different placement or value)."""
    for name, v in [("num_replicas", 1), ("_poll_timeout", 0), ("distribution", "random")]:
        real_pylibmc.Client([server.addr], behaviors={name: v})
        with pytest.raises(compat_pylibmc.Error):
            compat_pylibmc.Client([server.addr], behaviors={name: v})


_CHECKED = [{"connect_timeout": "abc"}, {"retry_timeout": "abc"}, {"_poll_timeout": "x"},
            {"dead_timeout": "x"}, {"connect_timeout": 1.5}, {"connect_timeout": None},
            {"tcp_nodelay": 2.0}, {"receive_timeout": "x"}, {"pickle_protocol": "x"},
            {"ketama": "yes"}, {"ketama": None}, {"ketama_hash": 3.0}, {"hash": None},
            {"hash": "nope"}, {"hash": 3.5}, {"distribution": "nope"}, {"bogus": 1},
            {"retry_timeout": -5}, {"connect_timeout": -1}, {"_poll_timeout": -1},
            {"dead_timeout": -3}, {"connect_timeout": True}, {"retry_timeout": 0}]


@pytest.mark.parametrize("behaviors", _CHECKED, ids=repr)
@pytest.mark.parametrize("how", ["constructor", "set_behaviors"])
def test_behavior_values_are_checked_as_pylibmc_checks_them(server, behaviors, how):
    """A behavior of the wrong type raises pylibmc's TypeError naming it ("behavior ketama
    must be int, not str"), an unknown hash or distribution word its KeyError, and the
    negative times pylibmc takes are taken. Before: "abc" for a timeout gave an internal
    TypeError ("unsupported operand type(s) for /") naming no behavior, ketama "yes" was
    accepted, retry_timeout -5 / connect_timeout -1 were refused."""
    got = []
    for mod in (real_pylibmc, compat_pylibmc):
        try:
            if how == "constructor":
                mod.Client([server.addr], behaviors=behaviors)
            else:
                mod.Client([server.addr]).set_behaviors(behaviors)
            got.append("ok")
        except Exception as e:  # noqa: BLE001 - the class and text are the result
            got.append((type(e).__name__, str(e)))
    assert got[0] == got[1]


def test_negative_times_pylibmc_takes_leave_a_working_client(server):
    """retry_timeout -5 (libmemcached: the next retry is already due), connect_timeout -1
    (the preset's wait, never one without end) and dead_timeout -3: a client that works."""
    c = compat_pylibmc.Client([server.addr], behaviors={"retry_timeout": -5,
                                                        "connect_timeout": -1,
                                                        "dead_timeout": -3})
    assert c.set("neg_times", "v") and c.get("neg_times") == "v"


class _Index:
    def __index__(self):
        return 5


def _arg_cases(addr):
    S = [addr]
    return [
        ("hash 5", lambda m, c: m.Client(S, behaviors={"hash": 5})),
        ("distribution 1", lambda m, c: m.Client(S, behaviors={"distribution": 1})),
        ("behaviors as pairs", lambda m, c: m.Client(S, behaviors=[("ketama", 1)])),
        ("behaviors as names", lambda m, c: m.Client(S, behaviors=["ketama"])),
        ("behaviors []", lambda m, c: m.Client(S, behaviors=[])),
        ("binary 'x'", lambda m, c: m.Client(S, binary="x")),
        ("binary None", lambda m, c: m.Client(S, binary=None)),
        ("binary 1.0", lambda m, c: m.Client(S, binary=1.0)),
        ("binary 1", lambda m, c: m.Client(S, binary=1)),
        ("servers as a str", lambda m, c: m.Client(addr)),
        ("set min_compress_len None", lambda m, c: c.set("k", "v", min_compress_len=None)),
        ("set compress_level None", lambda m, c: c.set("k", "v", compress_level=None)),
        ("set_multi min_compress_len 1.5",
         lambda m, c: c.set_multi({"k": "v"}, min_compress_len=1.5)),
        ("set_behaviors None", lambda m, c: c.set_behaviors(None)),
        ("get_multi key_prefix None", lambda m, c: c.get_multi(["k"], key_prefix=None)),
        ("set_multi key_prefix None", lambda m, c: c.set_multi({"k": 1}, key_prefix=None)),
        ("add_multi key_prefix None", lambda m, c: c.add_multi({"k": 1}, key_prefix=None)),
        ("delete_multi key_prefix None", lambda m, c: c.delete_multi(["k"], key_prefix=None)),
        ("incr_multi key_prefix None", lambda m, c: c.incr_multi(["k"], key_prefix=None)),
        ("touch with an __index__", lambda m, c: c.touch("k", _Index())),
        ("set with an __index__", lambda m, c: c.set("k", "v", _Index())),
        ("connect_timeout 2**31 read back",
         lambda m, c: m.Client(S, behaviors={"connect_timeout": 2 ** 31})
         .behaviors["connect_timeout"]),
        ("retry_timeout 2**32+5 read back",
         lambda m, c: m.Client(S, behaviors={"retry_timeout": 2 ** 32 + 5})
         .behaviors["retry_timeout"]),
    ]


def test_arguments_pylibmc_refuses_are_refused_with_its_class(server):
    """Tester finding (misuse F6): the drop-in took several arguments pylibmc refuses (a
    numbered hash or distribution, behaviors that are no dict, binary='x', a None
    min_compress_len or key_prefix, an __index__ object as touch's time, a str as the
    server list) and refused set_behaviors(None), which pylibmc takes; a 32-bit timeout
    behavior read back unwrapped. Side by side: the same outcome (value, or exception
    class) for each."""
    got = {}
    for mod in (real_pylibmc, compat_pylibmc):
        c = mod.Client([server.addr])
        row = []
        for name, case in _arg_cases(server.addr):
            try:
                r = case(mod, c)
                row.append((name, "ok", r if isinstance(r, (int, bool, type(None), list, dict))
                            else "client"))
            except Exception as e:  # noqa: BLE001 - the class is the observable result
                row.append((name, "raised", type(e).__name__))
        got[mod] = row
    compat = dict((n, r) for n, *r in got[compat_pylibmc])
    for name, *theirs in got[real_pylibmc]:
        if name == "servers as a str":  # pylibmc's ValueError is int('') of the ":" alone
            assert theirs[:2] == ["raised", "ValueError"] == compat[name][:2]
            continue
        assert compat[name] == theirs, (name, compat[name], theirs)
