#!/usr/bin/python3
"""mcpool bench peer for the Python clients (protocol: ../PROTOCOL.md).

usage: driver.py pylibmc|pymemcache|python-memcached HOST:PORT

Configuration, per each client's documentation and shipped defaults (values are bytes, so no
client pickles them; compression only where the scenario asks for it, through the client's own
documented switch at its default level):
- pylibmc: text protocol, tcp_nodelay; threads share a pylibmc.ClientPool of POOL clients
  (`with pool.reserve(block=True)` waits when all are busy); compression: set(min_compress_len=
  30 KiB) (its default, 0, is off), zlib at its default compress_level (zlib's 6), flag 8.
- pymemcache: Client(no_delay=True, default_noreply=False), its default serde otherwise;
  threads share one PooledClient (max_pool_size=POOL) behind a semaphore of POOL (its pool
  raises instead of waiting); compression: 3.5 ships none, so the serde pymemcache 4 ships
  (CompressedSerde: zlib.compress at its default level, flag 8) written out, from 30 KiB.
- python-memcached: memcache.Client is thread-local, so one connection per thread;
  compression: set(min_compress_len=30 KiB) (its default, 0, is off), its compressor
  zlib.compress at the default level, flag 8.
"""
import sys
import threading
import time
import zlib

THRESHOLD = 30 * 1024
now = time.perf_counter_ns


def value(size, kind="letters"):
    """The value of PROTOCOL.md: `letters` or `digits` ("0 1 2 3 ...", cut at size)."""
    if kind == "letters":
        return bytes(97 + (i * 7 + i // 13) % 26 for i in range(size))
    if kind == "digits":
        return " ".join(map(str, range(size + 1))).encode()[:size]
    raise ValueError("unknown value kind " + kind)


class Rng:
    def __init__(self, seed):
        self.s = (seed * 0x9E3779B97F4A7C15 | 1) & 0xFFFFFFFFFFFFFFFF

    def below(self, n):
        s = self.s
        s ^= s >> 12
        s ^= (s << 25) & 0xFFFFFFFFFFFFFFFF
        s ^= s >> 27
        self.s = s
        return (((s * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF) >> 32) % n


class ZlibSerde:
    """pymemcache 4's CompressedSerde for bytes: as they are, or zlib.compress at its default
    level (flag 8) from 30 KiB when it saves space."""

    def __init__(self, compress):
        self.compress = compress

    def serialize(self, key, value):
        if self.compress and len(value) >= THRESHOLD:
            packed = zlib.compress(value)
            if len(packed) < len(value):
                return packed, 8
        return value, 0

    def deserialize(self, key, value, flags):
        if flags & 8:
            return zlib.decompress(value)
        return value


class Adapter:
    """One client family: single-thread client, shared client for threads, and operations."""

    def __init__(self, kind, server):
        self.kind, self.server = kind, server
        host, port = server.rsplit(":", 1)
        self.hostport = (host, int(port))
        if kind == "pylibmc":
            import pylibmc
            self.mod = pylibmc
            self.version = "pylibmc " + pylibmc.__version__
        elif kind == "pymemcache":
            import pymemcache
            from pymemcache.client.base import Client, PooledClient
            self.Client, self.PooledClient = Client, PooledClient
            self.version = "pymemcache " + pymemcache.__version__
        elif kind == "python-memcached":
            import memcache
            self.mod = memcache
            self.version = "python-memcached " + memcache.__version__
        else:
            raise SystemExit("unknown client " + kind)

    def single(self, compress=False):
        if self.kind == "pylibmc":
            return self.mod.Client([self.server], binary=False, behaviors={"tcp_nodelay": True})
        if self.kind == "pymemcache":
            if not compress:  # its default serde
                return self.Client(self.hostport, no_delay=True, default_noreply=False)
            return self.Client(self.hostport, no_delay=True, default_noreply=False,
                               serde=ZlibSerde(compress))
        return self.mod.Client([self.server])

    def shared(self, pool, compress):
        """(acquire, release) giving a client usable by the calling thread."""
        if self.kind == "pylibmc":
            p = self.mod.ClientPool(self.single(), pool)
            return lambda: p.reserve(block=True)
        if self.kind == "pymemcache":
            serde = {"serde": ZlibSerde(compress)} if compress else {}
            c = self.PooledClient(self.hostport, no_delay=True, default_noreply=False,
                                  max_pool_size=pool, **serde)
            sem = threading.BoundedSemaphore(pool)

            class Guard:
                def __enter__(self):
                    sem.acquire()
                    return c

                def __exit__(self, *a):
                    sem.release()
            return Guard
        c = self.single()  # threading.local: one connection per thread

        class Same:
            def __enter__(self):
                return c

            def __exit__(self, *a):
                pass
        return Same

    def set(self, c, k, v, compress):
        if compress and self.kind != "pymemcache":
            return c.set(k, v, 0, THRESHOLD)
        return c.set(k, v)

    def get_multi(self, c, keys):
        if self.kind == "pymemcache":
            return c.get_many(keys)
        return c.get_multi(keys)


def seq(a, c, op, n, size, prefix, slice_):
    v = value(size)
    errors = 0
    slices = []
    keys = [prefix + str(i) for i in range(n)]
    f = {"set": c.set, "add": c.add, "replace": c.replace}.get(op)
    t0 = mark = now()
    for i, k in enumerate(keys):
        if f is not None:
            ok = f(k, v)
        elif op == "get":
            ok = c.get(k) is not None
        else:
            ok = c.delete(k)
        if not ok:
            errors += 1
        if slice_ and (i + 1) % slice_ == 0:
            t = now()
            slices.append(t - mark)
            mark = t
    ns = now() - t0
    out = "ok ns=%d errors=%d" % (ns, errors)
    if slices:
        out += " slices=" + ",".join(map(str, slices))
    return out


def mix(a, threads, ops, size, keyspace, getpct, mget, pool, compress, prefix, kind):
    v = value(size, kind)
    acquire = a.shared(pool, compress)
    barrier = threading.Barrier(threads + 1)
    results = [None] * threads

    def work(t):
        rng = Rng(t + 1)
        lat = []
        gns = gs = sns = ss = errs = 0
        barrier.wait()
        started = now()
        for _ in range(ops):
            get = rng.below(100) < getpct
            first = rng.below(keyspace)
            t0 = now()
            try:
                with acquire() as c:
                    if get and mget > 1:
                        keys = [prefix + str((first + j) % keyspace) for j in range(mget)]
                        ok = len(a.get_multi(c, keys)) == mget
                    elif get:
                        ok = c.get(prefix + str(first)) is not None
                    else:
                        ok = a.set(c, prefix + str(first), v, compress)
            except Exception:
                ok = False
            d = now() - t0
            lat.append(d)
            if get:
                gns += d
                gs += 1
            else:
                sns += d
                ss += 1
            if not ok:
                errs += 1
        results[t] = (lat, gns, gs, sns, ss, errs, started, now())

    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    barrier.wait()
    for t in ts:
        t.join()
    # From the first worker's start to the last one's end: this thread may get the GIL long
    # after the barrier opens.
    ns = max(r[7] for r in results) - min(r[6] for r in results)
    lat = sorted(x for r in results for x in r[0])
    gns = sum(r[1] for r in results)
    gs = sum(r[2] for r in results)
    sns = sum(r[3] for r in results)
    ss = sum(r[4] for r in results)
    errs = sum(r[5] for r in results)

    def pct(q):
        if not lat:
            return 0.0
        i = max(0, min(len(lat) - 1, int(-(-(q / 100.0 * len(lat) - 1e-9) // 1)) - 1))
        return lat[i] / 1000.0

    out = "ok ns=%d errors=%d lat=%.1f,%.1f,%.1f" % (ns, errs, pct(50), pct(99), pct(99.9))
    if gs:
        out += " get_us=%.2f" % (gns / 1000.0 / gs)
    if ss:
        out += " set_us=%.2f" % (sns / 1000.0 / ss)
    return out


def main():
    kind, server = sys.argv[1], sys.argv[2]
    a = Adapter(kind, server)
    c = a.single()
    print("ready " + a.version, flush=True)
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        try:
            if w[0] == "quit":
                break
            elif w[0] == "seq":
                out = seq(a, c, w[1], int(w[2]), int(w[3]), w[4], int(w[5]))
            elif w[0] == "mget":
                k, calls, prefix = int(w[1]), int(w[2]), w[3]
                keys = [prefix + str(i) for i in range(k)]
                errors = 0
                t0 = now()
                for _ in range(calls):
                    if len(a.get_multi(c, keys)) != k:
                        errors += 1
                out = "ok ns=%d errors=%d" % (now() - t0, errors)
            elif w[0] == "fill":
                ks, size, comp, prefix = int(w[1]), int(w[2]), w[3] == "1", w[4]
                v = value(size, w[5])
                fc = a.single(comp)
                errors = 0
                t0 = now()
                for i in range(ks):
                    if not a.set(fc, prefix + str(i), v, comp):
                        errors += 1
                out = "ok ns=%d errors=%d" % (now() - t0, errors)
            elif w[0] == "mix":
                n = [int(x) for x in w[1:9]]
                out = mix(a, n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7] == 1, w[9], w[10])
            else:
                out = "err unknown command " + w[0]
        except Exception as e:  # report, keep serving
            out = "err %s: %s" % (type(e).__name__, str(e).replace("\n", " "))
        print(out, flush=True)


if __name__ == "__main__":
    main()
