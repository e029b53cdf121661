"""32 threads on one client, every read checked; the client after os.fork()."""
import os
import threading
import time

import mcpool

THREADS = 32
OPS = 300


def test_32_threads_one_client(server, prefix):
    mc = mcpool.Client([server.addr], pool_size=8)
    errors = []
    start = threading.Barrier(THREADS)
    deadline = time.monotonic() + 60

    def work(t):
        try:
            start.wait()
            for i in range(OPS):
                if time.monotonic() > deadline:
                    errors.append("thread %d: out of time" % t)
                    return
                k = "%s%d_%d" % (prefix, t, i % 20)
                v = "thread %d op %d" % (t, i)
                assert mc.set(k, v)
                got = mc.get(k)
                if got != v:
                    errors.append((k, v, got))
                if i % 25 == 0:
                    ks = ["%s%d_%d" % (prefix, t, j) for j in range(min(i + 1, 20))]
                    m = mc.get_multi(ks)
                    if set(m) != set(ks) or any(not m[x].startswith("thread %d " % t) for x in ks):
                        errors.append(("multi", t, i))
                if i % 50 == 0:
                    n = mc.incr(prefix + "counter") if mc.add(prefix + "counter", 0) is False else mc.incr(prefix + "counter")
                    if not isinstance(n, int):
                        errors.append(("incr", n))
        except Exception as e:  # collected, reported below
            errors.append(repr(e))

    ts = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(90)
    assert not any(t.is_alive() for t in ts)
    assert errors == []
    assert mc.get(prefix + "counter") == THREADS * (OPS // 50)


def test_gil_released_during_io(server, prefix):
    """Another thread runs Python code while one thread waits on the network."""
    import socket
    with socket.socket() as lsn:  # a server that never answers: get blocks for `timeout`
        lsn.bind(("127.0.0.1", 0))
        lsn.listen(4)
        slow = mcpool.Client(["127.0.0.1:%d" % lsn.getsockname()[1]], timeout=1.0, min_idle=0)
        ticks = [0]
        stop = threading.Event()

        def spin():
            while not stop.is_set():
                ticks[0] += 1

        def blocked_get():
            try:
                slow.get("k")
            except mcpool.TimeoutError:
                pass

        t = threading.Thread(target=blocked_get)
        s = threading.Thread(target=spin)
        try:
            t.start()
            time.sleep(0.1)
            before = ticks[0]
            s.start()
            time.sleep(0.3)
            assert t.is_alive()
            assert ticks[0] - before > 1000
        finally:
            stop.set()
            t.join(5)
            s.join(5)


def test_fork(server, prefix):
    mc = mcpool.Client([server.addr])
    mc.set(prefix + "parent", "before fork")
    assert mc.get(prefix + "parent") == "before fork"
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: use the same client, report through the pipe
        code = 1
        try:
            os.close(r)
            ok = mc.get(prefix + "parent") == "before fork"
            for i in range(50):
                ok = ok and mc.set(prefix + "child%d" % i, i) and mc.get(prefix + "child%d" % i) == i
            ok = ok and mc.get_multi([prefix + "child%d" % i for i in range(50)]) == \
                {prefix + "child%d" % i: i for i in range(50)}
            os.write(w, b"ok" if ok else b"bad")
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    # the parent keeps working while the child runs
    for i in range(50):
        assert mc.set(prefix + "p%d" % i, "p%d" % i) and mc.get(prefix + "p%d" % i) == "p%d" % i
    _, status = os.waitpid(pid, 0)
    msg = os.read(r, 16)
    os.close(r)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert msg == b"ok"
    assert mc.get(prefix + "child49") == 49
    assert mc.get_multi([prefix + "p0", prefix + "parent"]) == {prefix + "p0": "p0",
                                                                prefix + "parent": "before fork"}


def test_fork_right_after_a_client_was_dropped(server, prefix):
    # A preforking server fills the cache at start-up with a client of its own, drops it and
    # forks its workers at once: each worker's first client must work. (The dropped client's
    # background thread once went on waiting, parked, for a job that no longer mattered; a
    # child forked in that window could spin in its first client.)
    for rnd in range(50):
        filler = mcpool.Client([server.addr])
        assert filler.set(prefix + "drop%d" % rnd, "r%d" % rnd)
        del filler
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                c = mcpool.Client([server.addr])
                ok = c.get(prefix + "drop%d" % rnd) == "r%d" % rnd and c.set(prefix + "kid", rnd)
                del c
                code = 0 if ok else 2
            finally:
                os._exit(code)
        deadline = time.monotonic() + 30
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                raise AssertionError("round %d: the child did not finish in 30 s" % rnd)
            time.sleep(0.005)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "round %d: %d" % (rnd, status)


def _threads():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return -1


def test_a_fresh_client_opens_nothing_until_its_first_call():
    """As pylibmc, python-memcached and pymemcache: a gunicorn worker's client costs no
    connection and no thread before it is used."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.setblocking(False)
    addr = "127.0.0.1:%d" % listener.getsockname()[1]
    before = _threads()
    mc = mcpool.Client([addr])
    try:
        end = time.monotonic() + 0.3  # watch for a while (bounded)
        while time.monotonic() < end:
            try:
                listener.accept()
                raise AssertionError("a fresh client connected before its first call")
            except BlockingIOError:
                pass
            assert _threads() == before, "a fresh client started a thread"
            time.sleep(0.02)
    finally:
        del mc
        listener.close()


def test_a_blackholed_server_holds_up_no_other_servers_calls(server, prefix, blackholed):
    """Tester finding (s4c 04): while a connect to a server whose connects hang was under way
    anywhere in the process (min_idle on another client, a call to it), calls to every other
    server failed with PoolTimeout after pool_timeout, and os.fork() waited 2 s."""
    dead = blackholed
    other = mcpool.Client([dead], min_idle=2, connect_timeout=10)
    both = mcpool.Client([dead, server.addr], preset="whalin", pool_timeout=2,
                         key_prefix=prefix)
    dead_key = next(k for k in ("d%d" % i for i in range(200))
                    if both.server_for(k) == dead)
    live_keys = [k for k in ("k%d" % i for i in range(200))
                 if both.server_for(k) == server.addr][:3]
    caller = threading.Thread(target=lambda: _ignore(lambda: both.get(dead_key)))
    caller.start()
    healthy = mcpool.Client([server.addr], pool_timeout=2, key_prefix=prefix)
    for c in (healthy, both):
        for k in live_keys:
            t = time.monotonic()
            assert c.set(k, "v") is True
            assert time.monotonic() - t < 0.7, (k, time.monotonic() - t)
    t = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    took = time.monotonic() - t
    os.waitpid(pid, 0)
    assert took < 1, "fork took %.2f s" % took
    caller.join(10)
    assert not caller.is_alive()
    del other


def _ignore(f):
    try:
        f()
    except mcpool.Error:
        pass
