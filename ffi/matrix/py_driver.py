"""Value-matrix driver for Python clients (run by ffi/matrix/run.py).

    py_driver.py CLIENT MODE FORMAT SERVER FIXDIR < plan

CLIENT: mcpool (mcpool.Client with value_format=FORMAT), pylibmc, python-memcached,
pymemcache (the real peers, as their users configure them: compression on, their
serializers). MODE: write or read. Each plan line is "KEY KIND"; each output line
"KEY OK", "KEY ERR <message>", "KEY DIFF <what came back>" or "KEY MISS".
A KIND ending in "b" is the fixture as bytes (for bytes-only formats).
"""
import os
import sys

THRESHOLD = 1024  # compression from 1 KiB, in every writer of the matrix


def native(kind, fixdir):
    raw = kind.endswith("b") and kind != "empty"
    base = kind[:-1] if raw else kind
    with open(os.path.join(fixdir, base + ".bin"), "rb") as f:
        data = f.read()
    if raw or base in ("ascii", "bin1m", "empty"):
        return data
    if base == "int":
        return int(data)
    return data.decode("utf-8")  # utf8, text100k


def client(name, fmt, server):
    if name == "mcpool":
        import mcpool
        return mcpool.Client([server], value_format=fmt, min_compress_len=THRESHOLD,
                             min_idle=0)
    if name == "pylibmc":
        import pylibmc
        return pylibmc.Client([server])
    if name == "python-memcached":
        import memcache
        return memcache.Client([server], server_max_value_length=2 * 1024 * 1024)
    if name == "pymemcache":
        from pymemcache.client.base import Client
        from pymemcache import serde
        host, port = server.rsplit(":", 1)
        return Client((host, int(port)), serde=serde.pickle_serde)
    raise SystemExit("unknown client " + name)


def store(name, c, key, value):
    if name in ("pylibmc", "python-memcached"):
        return c.set(key, value, min_compress_len=THRESHOLD)
    return c.set(key, value)


def describe(v):
    if isinstance(v, (bytes, str)):
        return "%s of %d: %r" % (type(v).__name__, len(v), v[:24])
    return "%s %r" % (type(v).__name__, v)


def main():
    name, mode, fmt, server, fixdir = sys.argv[1:6]
    c = client(name, fmt, server)
    out = []
    for line in sys.stdin:
        if not line.strip():
            continue
        key, kind = line.split()
        want = native(kind, fixdir)
        try:
            if mode == "write":
                r = store(name, c, key, want)
                out.append("%s %s" % (key, "OK" if r is not False and r != 0 else "ERR not stored"))
                continue
            got = c.get(key)
        except Exception as e:  # noqa: BLE001 - every error is a cell's result
            out.append("%s ERR %s: %s" % (key, type(e).__name__, str(e).replace("\n", " ")[:300]))
            continue
        if got is None:
            out.append("%s MISS" % key)
        elif type(got) is type(want) and got == want:
            out.append("%s OK" % key)
        else:
            out.append("%s DIFF %s" % (key, describe(got)))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
