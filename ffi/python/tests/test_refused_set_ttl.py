"""A store's time above 2**31-1 is refused; a *set* so refused also deletes the key (tester
finding ttl 1). The clients mcpool replaces (pylibmc, pymemcache, python-memcached) send
such a set and memcached stores it already expired, so no older value is left to read;
mcpool's binding checked the caller's time before the call and left the old value. Every
store path now has its time checked by the core, last (a single store by the store itself,
a batch's through mcpool_client_store_expiry_checked_multi with the store's op and the
batch's keys): a set's key is deleted (a batch's keys in one batch, each message naming the
others': retest40 2), add/replace/cas leave it as it was; nan and the infinities too (retest38 4);
a store refused for its own argument (a version or CAS unique of 0) keeps it (retest38 3)."""
import pytest

from conftest import require

import mcpool
import mcpool.compat.memcache as compat_memcache
import mcpool.compat.pylibmc as compat_pylibmc
import mcpool.compat.pymemcache as compat_pymemcache

# 2**31: passed to the core as it is; 2**32+5: beyond 32 bits, named as written
BIG = [2**31, 2**32 + 5]
DELETED = "nothing was stored and the key was deleted"


def refused(call, big, exc=mcpool.ClientError):
    """call() raises exc naming the number as written; returns the exception."""
    with pytest.raises(exc) as e:
        call()
    assert "invalid ttl: %d is above 2147483647" % big in str(e.value), e.value
    return e.value


def keeping_stores(mc, k, token, t):
    """{name: a call that stores k with the time t}, for each store that leaves the key as
    it was when refused (add, replace, cas and their batches)."""
    return {
        "add": lambda: mc.add(k, "new", t),
        "replace": lambda: mc.replace(k, "new", t),
        "cas": lambda: mc.cas(k, "new", token, t),
        "add_multi": lambda: mc.add_multi({k: "new"}, t),
        "replace_multi": lambda: mc.replace_multi({k: "new"}, t),
        "cas_multi": lambda: mc.cas_multi({k: ("new", token)}, t),
    }


def single_sets(mc, k, t):
    """{name: a call that sets k with the time t}, for each single set path."""
    return {
        "set": lambda: mc.set(k, "new", t),
        "set expire=": lambda: mc.set(k, "new", expire=t),
        "typed set": lambda: mc.set(k, 42, t),
        "set_bytes": lambda: mc.set_bytes(k, b"new", 0, t),
        "set_counter": lambda: mc.set_counter(k, 7, t),
    }


@pytest.mark.parametrize("big", BIG)
@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_a_refused_set_leaves_no_older_value(server, prefix, protocol, big):
    mc = mcpool.Client([server.addr], protocol=protocol)
    k = prefix + "k"
    sets = single_sets(mc, k, big)
    for name, call in sets.items():
        assert mc.set(k, "old")
        e = refused(call, big)
        assert DELETED in str(e), (name, e)
        assert e.status_name == "MCPOOL_INVALID_ARGUMENT" and e.server is None, name
        assert mc.get(k) is None, name


@pytest.mark.parametrize("big", BIG)
def test_a_refused_batch_set_deletes_each_key(server, prefix, big):
    """The batch's one time is refused for each key: every key deleted, every item failing
    as for 2**31 (the first key's exception, with `key` and `results`)."""
    mc = mcpool.Client([server.addr])
    keys = [prefix + "a", prefix + "b", prefix + "c"]
    mc.set_multi({k: "old" for k in keys})
    e = refused(lambda: mc.set_multi({k: "new" for k in keys}, big), big)
    assert e.key == keys[0] and sorted(e.results) == keys
    assert all(isinstance(r, mcpool.ClientError) and DELETED in str(r)
               for r in e.results.values()), e.results
    assert mc.get_multi(keys) == {}
    mc.set_multi({k: "old" for k in keys})
    refused(lambda: mc.set_multi_noreply({k: "new" for k in keys}, big), big)
    assert mc.get_multi(keys) == {}


@pytest.mark.parametrize("big", BIG)
def test_the_deleted_key_is_the_one_the_set_would_store(server, prefix, big):
    """The client's key_prefix (the core's) and a batch's per-call key_prefix (the
    binding's) are applied as the store applies them: the prefixed key is deleted."""
    raw = mcpool.Client([server.addr])
    mc = mcpool.Client([server.addr], key_prefix=prefix + "p:")
    raw.set_multi({prefix + "p:k": "old", prefix + "p:q:k": "old", prefix + "k": "old"})
    refused(lambda: mc.set("k", "new", big), big)
    assert raw.get(prefix + "p:k") is None
    refused(lambda: mc.set_multi({"k": "new"}, big, key_prefix="q:"), big)
    assert raw.get(prefix + "p:q:k") is None
    assert raw.get(prefix + "k") == "old"  # no other key touched


def test_set_with_version_refused_deletes_the_key(server, prefix):
    mc = mcpool.Client([server.addr], protocol="meta")
    k = prefix + "k"
    for big in BIG:
        mc.set(k, "old")
        e = refused(lambda: mc.set_with_version(k, "new", 5, big), big)
        assert DELETED in str(e)
        assert mc.get(k) is None


@pytest.mark.parametrize("big", BIG)
def test_add_replace_cas_refused_leave_the_old_value(server, prefix, big):
    mc = mcpool.Client([server.addr])
    k = prefix + "k"
    mc.set(k, "old")
    token = mc.gets(k)[1]
    for name, call in keeping_stores(mc, k, token, big).items():
        e = refused(call, big)
        assert "deleted" not in str(e), (name, e)
        assert mc.get(k) == "old", name
    assert mc.cas(k, "new", token) is True  # the item was never changed


def test_a_time_written_as_a_float_is_named_so(server, prefix):
    mc = mcpool.Client([server.addr])
    k = prefix + "k"
    mc.set(k, "old")
    with pytest.raises(mcpool.ClientError, match=r'set "%s": invalid ttl: 2147483648\.5 is above'
                       % k) as e:
        mc.set(k, "new", 2147483648.5)
    assert DELETED in str(e.value)
    assert mc.get(k) is None


def test_a_time_the_store_takes_stores(server, prefix):
    mc = mcpool.Client([server.addr])
    k = prefix + "k"
    for t in (0, 1, mcpool.MAX_TTL, 0.4, None):
        assert mc.set(k, "v", t) is True and mc.get(k) == "v", t
        assert mc.set_multi({k: "w"}, t) == [] and mc.get(k) == "w", t
    assert mc.set(k, "v", -1) is True and mc.get(k) is None  # stored already expired


@pytest.mark.parametrize("big", BIG)
def test_compat_pylibmc_set_refused_leaves_no_older_value(server, prefix, big):
    mc = compat_pylibmc.Client([server.addr])
    k = prefix + "k"
    for call in (lambda: mc.set(k, "new", time=big), lambda: mc.set_multi({k: "new"}, time=big)):
        mc.set(k, "old")
        refused(call, big, compat_pylibmc.ClientError)
        assert mc.get(k) is None
    mc.set(k, "old")
    refused(lambda: mc.add(k, "new", time=big), big, compat_pylibmc.ClientError)
    refused(lambda: mc.replace(k, "new", time=big), big, compat_pylibmc.ClientError)
    assert mc.get(k) == "old"


@pytest.mark.parametrize("big", BIG)
def test_compat_pymemcache_set_refused_leaves_no_older_value(server, prefix, big):
    for mc in (compat_pymemcache.Client(server.addr),
               compat_pymemcache.HashClient([server.addr])):
        k = prefix + "k"
        for call in (lambda: mc.set(k, b"new", expire=big),
                     lambda: mc.set_many({k: b"new"}, expire=big)):
            mc.set(k, b"old")
            refused(call, big, compat_pymemcache.MemcacheClientError)
            assert mc.get(k) is None
        mc.set(k, b"old")
        refused(lambda: mc.add(k, b"new", expire=big), big,
                compat_pymemcache.MemcacheClientError)
        refused(lambda: mc.replace(k, b"new", expire=big), big,
                compat_pymemcache.MemcacheClientError)
        assert mc.get(k) == b"old"


@pytest.mark.parametrize("big", BIG)
def test_compat_memcache_answers_0_and_leaves_no_value(server, prefix, big):
    """python-memcached's drop-in already answered 0 (set_multi: the keys) and left no
    value; so it stays. add leaves the old value, as memcached's add of an existing key."""
    mc = compat_memcache.Client([server.addr])
    k = prefix + "k"
    mc.set(k, "old")
    assert mc.set(k, "new", time=big) == 0
    assert mc.get(k) is None
    mc.set(k, "old")
    assert mc.set_multi({k: "new"}, time=big) == [k]
    assert mc.get(k) is None
    mc.set(k, "old")
    assert mc.add(k, "new", time=big) == 0
    assert mc.get(k) == "old"


@pytest.mark.parametrize("kind", ["mcpool.Client", "compat.pylibmc", "compat.memcache"])
def test_cachelib_set_with_a_timeout_past_2038_leaves_no_older_value(server, prefix, kind):
    """cachelib's MemcachedCache sends time() + timeout: a timeout past 2038 ends in the
    client's set, refused; the old value is gone either way (mcpool.Client and the pylibmc
    drop-in raise, the python-memcached drop-in answers 0)."""
    cachelib = require("cachelib", "python3-cachelib")
    client = {"mcpool.Client": lambda: mcpool.Client([server.addr]),
              "compat.pylibmc": lambda: compat_pylibmc.Client([server.addr]),
              "compat.memcache": lambda: compat_memcache.Client([server.addr])}[kind]()
    c = cachelib.MemcachedCache(servers=client, key_prefix=prefix)
    assert c.set("k", "old")
    if kind == "compat.memcache":
        assert not c.set("k", "new", timeout=2**32)
    else:
        with pytest.raises((mcpool.ClientError, compat_pylibmc.ClientError), match=DELETED):
            c.set("k", "new", timeout=2**32)
    assert c.get("k") is None


NOT_FINITE = [float("inf"), float("-inf"), float("nan")]


def not_finite(call, t, exc=mcpool.ClientError):
    """call() raises exc naming the time as given, "is not a finite number of seconds"."""
    with pytest.raises(exc) as e:
        call()
    assert "invalid ttl: %r is not a finite number of seconds" % t in str(e.value), e.value
    return e.value


@pytest.mark.parametrize("t", NOT_FINITE, ids=repr)
@pytest.mark.parametrize("protocol", ["text", "meta"])
def test_a_time_that_is_no_finite_number_is_refused_as_2_31_is(server, prefix, protocol, t):
    """(tester findings retest37 4, retest38 4) nan, inf and -inf were refused with "expiry
    time must be a finite number of seconds, not inf", no call, key or argument, and a set
    left the old value: now the core's refusal, as for 2**31 (and Perl's for Inf), naming
    the call, the key and the time as given: every set path deletes the key, add, replace,
    cas and their batches keep it."""
    mc = mcpool.Client([server.addr], protocol=protocol)
    k, k2 = prefix + "k", prefix + "k2"
    sets = single_sets(mc, k, t)
    for name, call in sets.items():
        assert mc.set(k, "old")
        e = not_finite(call, t)
        call_name = name if name in ("set_bytes", "set_counter") else "set"
        assert str(e).startswith('%s "%s": invalid ttl: %r is not a finite number of seconds; '
                                 % (call_name, k, t)), (name, e)
        assert DELETED in str(e), (name, e)
        assert e.status_name == "MCPOOL_INVALID_ARGUMENT" and e.server is None, name
        assert mc.get(k) is None, name
    if protocol == "meta":
        assert mc.set(k, "old")
        assert DELETED in str(not_finite(lambda: mc.set_with_version(k, "new", 5, t), t))
        assert mc.get(k) is None
    for name, call in {"set_multi": lambda: mc.set_multi({k: "new", k2: "new"}, t),
                       "set_multi_noreply": lambda: mc.set_multi_noreply({k: "n", k2: "n"}, t)
                       }.items():
        assert mc.set_multi({k: "old", k2: "old"}) == []
        e = not_finite(call, t)
        assert str(e).startswith('%s "%s": invalid ttl: ' % (name, k)) and DELETED in str(e)
        assert mc.get_multi([k, k2]) == {}, name
        if name == "set_multi":
            assert e.key == k and sorted(e.results) == [k, k2]
    assert mc.set(k, "old")
    token = mc.gets(k)[1]
    for name, call in keeping_stores(mc, k, token, t).items():
        e = not_finite(call, t)
        assert str(e) == '%s "%s": invalid ttl: %r is not a finite number of seconds' % (
            name, k, t), e
        assert mc.get(k) == "old", name
    assert mc.cas(k, "new", token) is True  # the item was never changed


@pytest.mark.parametrize("t", NOT_FINITE, ids=repr)
def test_a_time_that_is_no_finite_number_names_its_call_and_argument(server, prefix, t):
    """touch, gat, counters, leases and flush_all name their own argument, never "expiry
    time" (a lease's vivify_ttl, recache_below, stale_ttl; flush_all's delay)."""
    mc = mcpool.Client([server.addr], protocol="meta")
    k = prefix + "k"
    assert mc.set(k, "old")
    reason = "%r is not a finite number of seconds" % t
    for call, want in [
        (lambda: mc.touch(k, t), 'touch "%s": invalid ttl: %s' % (k, reason)),
        (lambda: mc.gat(k, t), 'gat "%s": invalid ttl: %s' % (k, reason)),
        (lambda: mc.incr_or_init(k + "n", 1, 0, t), 'incr_or_init "%sn": invalid ttl: %s'
         % (k, reason)),
        (lambda: mc.touch_multi([k], t), "touch_multi: invalid ttl: %s" % reason),
        (lambda: mc.get_lease(k, vivify_ttl=t), 'get_lease "%s": invalid vivify_ttl: %s'
         % (k, reason)),
        (lambda: mc.get_lease(k, recache_below=t), 'get_lease "%s": invalid recache_below: %s'
         % (k, reason)),
        (lambda: mc.invalidate(k, stale_ttl=t), 'invalidate "%s": invalid stale_ttl: %s'
         % (k, reason)),
        (lambda: mc.flush_all(t), "flush_all: invalid delay: %s" % reason),
    ]:
        with pytest.raises(mcpool.ClientError) as e:
            call()
        assert str(e.value) == want
        assert e.value.status_name == "MCPOOL_INVALID_ARGUMENT" and e.value.server is None
    assert mc.get(k) == "old"  # nothing flushed, touched or invalidated
    with pytest.raises(mcpool.ClientError, match="finite number"):
        mcpool.expiry_from_now(t)  # its own refusal


def test_cachelib_over_the_client_deletes_for_an_infinite_timeout(server, prefix):
    cachelib = require("cachelib", "python3-cachelib")
    c = cachelib.MemcachedCache(servers=mcpool.Client([server.addr]), key_prefix=prefix)
    assert c.set("k", "old")
    with pytest.raises(mcpool.ClientError, match="inf is not a finite number of seconds; "
                       + DELETED):
        c.set("k", "new", timeout=float("inf"))
    assert c.get("k") is None


@pytest.mark.parametrize("big", BIG + [float("inf")])
def test_a_stores_own_arguments_are_checked_before_its_time(server, prefix, big):
    """(tester finding retest38 3) A store's time is its last check, in the core's order:
    set_with_version with version 0 and a refused time refuses the version and keeps the old
    value, as C and Perl do (Python deleted the key for the time); so do set_bytes with flags
    the value format refuses, cas with a CAS unique of 0 and set_with_version on a protocol
    other than meta, each refused for its own argument."""
    meta = mcpool.Client([server.addr], protocol="meta")
    text = mcpool.Client([server.addr], protocol="text")
    k = prefix + "k"
    for call, exc, want in [
        (lambda: meta.set_with_version(k, "new", 0, big), mcpool.ClientError,
         'set_with_version "%s": invalid version: 0 is no CAS version' % k),
        (lambda: meta.set_bytes(k, b"new", 2**20, big), mcpool.ValueFormatError,
         "flags 1048576"),
        (lambda: meta.cas(k, "new", 0, big), mcpool.ClientError,
         'cas "%s": invalid cas: 0 is no CAS unique' % k),
        (lambda: text.set_with_version(k, "new", 5, big), mcpool.ConfigurationError,
         "needs the meta protocol"),
    ]:
        assert meta.set(k, "old")
        with pytest.raises(exc) as e:
            call()
        assert want in str(e.value) and "invalid ttl" not in str(e.value), e.value
        assert meta.get(k) == "old", e.value
    # with every argument right, the time is refused and the set deletes the key
    assert meta.set(k, "old")
    with pytest.raises(mcpool.ClientError, match=DELETED):
        meta.set_with_version(k, "new", 5, big)
    assert meta.get(k) is None


def others_deleted(n):
    """The words a refused set's message ends with when n other keys of its batch were
    refused for the ttl and deleted too (the core's, as C and the CLI say it)."""
    if n == 1:
        return DELETED + (", as memcached deletes it when it refuses a set, and so was the "
                          "other key of this batch refused for its ttl")
    return DELETED + (", as memcached deletes it when it refuses a set, and so were the %d "
                      "other keys of this batch refused for their ttl" % n)


def named_as_given(t):
    return ("invalid ttl: %r is not a finite number of seconds" % t if isinstance(t, float)
            else "invalid ttl: %d is above 2147483647" % t)


@pytest.mark.parametrize("t", [2**31, 2**70, float("inf")], ids=repr)
@pytest.mark.parametrize("call", ["set_multi", "set_multi_noreply"])
def test_a_refused_batch_set_names_the_other_keys_deleted(server, prefix, call, t):
    """(tester finding retest40 2) A batch set refused for its one time deletes every key,
    but each key's message ended "...the key was deleted, as memcached deletes it when it
    refuses a set", with no word of the batch's other keys (the binding checked the time key
    by key): the batch's keys now go to the core's batch check, every key deleted in one
    batch and each message naming the others' deletion, as C and the CLI say it; the time
    named as the caller wrote it. A key the core cannot send ("a b") has its own error and a
    key the binding refused (a lone surrogate) its own, neither counted among the others."""
    mc = mcpool.Client([server.addr])
    for keys in ([prefix + "k", prefix + "k2"], [prefix + "a", prefix + "b", prefix + "c"]):
        want = others_deleted(len(keys) - 1)
        items = {k: "new" for k in keys}
        if len(keys) == 3:  # and two keys refused alone, neither sent nor counted
            items = {keys[0]: "new", "a b": "new", keys[1]: "new", "\ud800": "new",
                     keys[2]: "new"}
        assert mc.set_multi({k: "old" for k in keys}) == []
        with pytest.raises(mcpool.ClientError) as e:
            getattr(mc, call)(items, t)
        msg = str(e.value)
        assert msg.startswith('%s "%s": %s' % (call, keys[0], named_as_given(t))), msg
        assert msg.endswith(want), msg
        if call == "set_multi":
            assert e.value.key == keys[0]
            for k in keys:
                r = str(e.value.results[k])
                assert r.startswith('set_multi "%s": %s' % (k, named_as_given(t))), r
                assert r.endswith(want), r
            if len(keys) == 3:
                assert "invalid key" in str(e.value.results["a b"])
                assert "deleted" not in str(e.value.results["a b"])
                assert "lone surrogate" in str(e.value.results["\ud800"])
        assert mc.get_multi(keys) == {}, call


@pytest.mark.parametrize("t", [2**31, 2**70, float("inf")], ids=repr)
def test_a_refused_batch_add_replace_cas_keep_their_keys(server, prefix, t):
    """The batch check with the store's own op: add_multi, replace_multi and cas_multi
    refused for their time keep every key, and no message speaks of a deletion."""
    mc = mcpool.Client([server.addr])
    keys = [prefix + "a", prefix + "b"]
    assert mc.set_multi({k: "old" for k in keys}) == []
    tokens = {k: mc.gets(k)[1] for k in keys}
    for name, call in [("add_multi", lambda: mc.add_multi({k: "new" for k in keys}, t)),
                       ("replace_multi", lambda: mc.replace_multi({k: "new" for k in keys}, t)),
                       ("cas_multi", lambda: mc.cas_multi({k: ("new", tokens[k]) for k in keys},
                                                          t))]:
        with pytest.raises(mcpool.ClientError) as e:
            call()
        assert e.value.key == keys[0] and sorted(e.value.results) == keys, name
        for k in keys:
            r = str(e.value.results[k])
            assert r.startswith('%s "%s": %s' % (name, k, named_as_given(t))), r
            assert "deleted" not in r, r
        assert mc.get_multi(keys) == {k: "old" for k in keys}, name
    assert all(mc.cas(k, "new", tokens[k]) for k in keys)  # the items were never changed
