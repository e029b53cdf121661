#!/usr/bin/python3
"""The value matrices of issue 18 against one real memcached (make test-matrix).

1. Cross-language: writers {Rust, C, Python, Perl, Java} x readers {the same five} x kinds
   {ASCII bytes, UTF-8 text, integer, 100 KB compressible text, 1 MB incompressible bytes,
   empty}, all in the `mcpool` value format: every cell must be OK.
2. Legacy presets against their real peers, both directions (pylibmc, python-memcached,
   pymemcache, Cache::Memcached::Fast, Cache::Memcached, spymemcached, memccp/memccat of
   libmemcached-tools): every cell OK, or the documented outcome in EXPECTED (a clear error,
   or the peer's own type where it has no counterpart).
3. Wrong-layout reads (compressed under another preset, serialized with deserialization
   off, a corrupt stream, flags that mean nothing): an error in every binding, never bytes.

Each driver runs once per column (one process, one JVM, for all its cells). Paths come from
the environment set by ffi/matrix/test.mk; a missing peer fails with its install line.
"""
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGET = os.environ.get("MCPOOL_TARGET", os.path.join(ROOT, "target"))
KINDS = ["ascii", "utf8", "int", "text100k", "bin1m", "empty"]
BYTES_KINDS = ["ascii", "utf8b", "intb", "text100kb", "bin1m", "empty"]


def fixtures(d):
    rnd = random.Random(18)
    text = "".join("line %05d: the quick brown fox jumps over the lazy dog\n" % i
                   for i in range(2000))[:102400]
    files = {
        "ascii": b"The quick brown fox jumps over the lazy dog 0123456789",
        "utf8": "na\u00efve caf\u00e9 \u2014 Gr\u00fc\u00dfe, \u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac, "
                "\u65e5\u672c\u8a9e, \U0001f389".encode(),
        "int": b"-1234567890123",
        "text100k": text.encode(),
        "bin1m": bytes(rnd.getrandbits(8) for _ in range(1000000)),
        "empty": b"",
    }
    for k, v in files.items():
        with open(os.path.join(d, k + ".bin"), "wb") as f:
            f.write(v)


class Memcached:
    def __init__(self):
        for _ in range(20):
            port = random.randint(20000, 60000)
            args = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "256",
                    "-I", "2m", "-t", "2"]
            if os.getuid() == 0:
                args += ["-u", "root"]
            self.proc = subprocess.Popen(args)
            for _ in range(50):
                if self.proc.poll() is not None:
                    break
                try:
                    socket.create_connection(("127.0.0.1", port), 0.2).close()
                    self.addr = "127.0.0.1:%d" % port
                    return
                except OSError:
                    time.sleep(0.1)
            self.stop()
        raise SystemExit("test-matrix: could not start memcached")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def raw_get(self, key):
        """(flags, length) as stored, or None."""
        host, port = self.addr.split(":")
        with socket.create_connection((host, int(port)), 5) as s:
            s.sendall(b"get %s\r\n" % key.encode())
            buf = b""
            while not buf.endswith(b"END\r\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
        if not buf.startswith(b"VALUE"):
            return None
        _, _, flags, n = buf.split(b"\r\n", 1)[0].split()
        return int(flags), int(n)

    def raw_set(self, key, flags, data):
        host, port = self.addr.split(":")
        with socket.create_connection((host, int(port)), 5) as s:
            s.sendall(b"set %s %d 0 %d\r\n%s\r\n" % (key.encode(), flags, len(data), data))
            assert s.recv(100).startswith(b"STORED"), key


def need(ok, what, install):
    if not ok:
        raise SystemExit("test-matrix: %s is missing: %s" % (what, install))


class Drivers:
    def __init__(self, server, fixdir):
        self.server, self.fixdir = server, fixdir
        py_site = os.path.join(TARGET, "python-site")
        perl = os.path.join(ROOT, "ffi", "perl", "blib")
        java = os.path.join(ROOT, "ffi", "java", "build")
        self.env = dict(os.environ, PYTHONPATH=py_site)
        self.cmd = {
            "rust": [os.path.join(TARGET, "release", "examples", "value_matrix")],
            "c": [os.path.join(TARGET, "matrix", "c_driver")],
            "python": ["/usr/bin/python3", os.path.join(HERE, "py_driver.py"), "mcpool"],
            "perl": ["perl", "-I" + os.path.join(perl, "lib"), "-I" + os.path.join(perl, "arch"),
                     os.path.join(HERE, "pl_driver.pl"), "mcpool"],
            "java": ["java", "-Dmcpool.jni.library=" + os.path.join(java, "libmcpool_jni.so"),
                     "-cp", ":".join([os.path.join(java, "mcpool.jar"),
                                      os.path.join(TARGET, "matrix", "java"),
                                      "/usr/share/java/spymemcached.jar"]),
                     "MatrixDriver", "mcpool"],
            "pylibmc": ["/usr/bin/python3", os.path.join(HERE, "py_driver.py"), "pylibmc"],
            "python-memcached": ["/usr/bin/python3", os.path.join(HERE, "py_driver.py"),
                                 "python-memcached"],
            "pymemcache": ["/usr/bin/python3", os.path.join(HERE, "py_driver.py"), "pymemcache"],
            "cache-memcached-fast": ["perl", os.path.join(HERE, "pl_driver.pl"),
                                     "cache-memcached-fast"],
            "cache-memcached": ["perl", os.path.join(HERE, "pl_driver.pl"), "cache-memcached"],
        }
        self.cmd["spymemcached"] = self.cmd["java"][:-1] + ["spymemcached"]
        for lang in ("rust", "c"):
            need(os.path.exists(self.cmd[lang][0]), "the %s driver %s" % (lang, self.cmd[lang][0]),
                 "make test-matrix builds it")
        need(os.path.exists("/usr/share/java/spymemcached.jar"), "spymemcached",
             "apt-get install libspymemcached-java")
        for exe, pkg in (("memccp", "libmemcached-tools"), ("memccat", "libmemcached-tools")):
            need(subprocess.run(["which", exe], capture_output=True).returncode == 0, exe,
                 "apt-get install " + pkg)

    def run(self, who, mode, fmt, plan, env=None):
        """{key: result} for every (key, kind) of plan, in one process."""
        if who == "libmemcached-tools":
            return self.memc(mode, plan)
        args = self.cmd[who] + [mode, fmt, self.server, self.fixdir]
        stdin = "".join("%s %s\n" % kv for kv in plan)
        p = subprocess.run(args, input=stdin.encode(), capture_output=True, timeout=120,
                           env=dict(self.env, **(env or {})))
        out = {}
        for line in p.stdout.decode("utf-8", "replace").splitlines():
            k, _, r = line.partition(" ")
            out[k] = r
        for k, _ in plan:
            if k not in out:
                out[k] = "ERR driver %s exited %d: %s" % (who, p.returncode,
                                                          p.stderr.decode()[-400:].strip())
        return out

    def memc(self, mode, plan):
        """memccp / memccat: bytes only; the key is the file's name."""
        out = {}
        with tempfile.TemporaryDirectory() as d:
            for key, kind in plan:
                base = kind[:-1] if kind.endswith("b") and kind != "empty" else kind
                want = open(os.path.join(self.fixdir, base + ".bin"), "rb").read()
                if mode == "write":
                    path = os.path.join(d, key)
                    with open(path, "wb") as f:
                        f.write(want)
                    p = subprocess.run(["memccp", "--servers=" + self.server, path],
                                       capture_output=True)
                    out[key] = "OK" if p.returncode == 0 else "ERR " + p.stderr.decode()[-200:]
                else:
                    p = subprocess.run(["memccat", "--servers=" + self.server, key],
                                       capture_output=True)
                    if p.returncode != 0:
                        out[key] = "ERR " + p.stderr.decode()[-200:].strip()
                    else:
                        got = p.stdout[:-1] if p.stdout.endswith(b"\n") else p.stdout  # its newline
                        out[key] = "OK" if got == want else "DIFF %d bytes" % len(got)
        return out


# The legacy matrix: (preset, the mcpool binding that uses it, the real peer, kinds).
LEGACY = [
    ("pylibmc", "python", "pylibmc", KINDS),
    ("python-memcached", "python", "python-memcached", KINDS),
    ("pymemcache", "python", "pymemcache", KINDS),
    ("cache-memcached-fast", "perl", "cache-memcached-fast", KINDS),
    ("cache-memcached", "perl", "cache-memcached", KINDS),
    ("spymemcached", "java", "spymemcached", KINDS),
    ("libmemcached", "c", "libmemcached-tools", BYTES_KINDS),
]

# Legacy cells whose outcome is not OK, each with why (docs/value-format.md, "Mixed fleets").
# (preset, writer, reader, kind) -> (result prefix, reason)
EXPECTED = {
    ("pymemcache", "python", "pymemcache", "text100k"): (
        "ERR UnicodeDecodeError",
        "pymemcache 3.5 has no compression (CompressedSerde came in 4.0): it cannot read the "
        "zlib value the pymemcache preset wrote with min_compress_len; the error is its own"),
    ("cache-memcached", "perl", "cache-memcached", "utf8"): (
        "DIFF bytes",
        "Cache::Memcached has no text kind (no utf8 option): it returns the UTF-8 bytes"),
    ("cache-memcached", "cache-memcached", "perl", "utf8"): (
        "DIFF bytes",
        "Cache::Memcached stores a character string as its UTF-8 bytes with flags 0: bytes"),
}


def main():
    t0 = time.time()
    server = Memcached()
    failures, counts = [], {}
    try:
        with tempfile.TemporaryDirectory() as fixdir:
            fixtures(fixdir)
            d = Drivers(server.addr, fixdir)
            run_id = "%08x" % random.getrandbits(32)

            def record(matrix, cell, result, want="OK"):
                ok = result.startswith(want)
                counts.setdefault(matrix, [0, 0])[0 if ok else 1] += 1
                if not ok:
                    failures.append("%s %s: %s (want %s)" % (matrix, cell, result, want))

            # 1. cross-language, format mcpool
            langs = ["rust", "c", "python", "perl", "java"]
            keys = {w: [("%s:x:%s:%s" % (run_id, w, k), k) for k in KINDS] for w in langs}
            for w in langs:
                for key, r in d.run(w, "write", "mcpool", keys[w]).items():
                    record("cross-language", "write %s %s" % (w, key), r)
            # every writer compressed the 100 KB text and kept the 1 MB random bytes as they are
            for w in langs:
                for key, kind in keys[w]:
                    if kind in ("text100k", "bin1m"):
                        st = server.raw_get(key)
                        ok = st is not None and ((st[1] < 20000) if kind == "text100k"
                                                 else st[1] == 1000000)
                        record("cross-language", "stored size of %s by %s" % (kind, w),
                               "OK" if ok else "DIFF stored as %r" % (st,))
            allkeys = [kv for w in langs for kv in keys[w]]
            for r_lang in langs:
                got = d.run(r_lang, "read", "mcpool", allkeys)
                for w in langs:
                    for key, kind in keys[w]:
                        record("cross-language", "%s -> %s %s" % (w, r_lang, kind), got[key])

            # 2. legacy presets against their peers, both directions
            for preset, ours, peer, kinds in LEGACY:
                for writer, reader in ((ours, peer), (peer, ours)):
                    plan = [("%s:l:%s:%s:%s" % (run_id, preset, writer, k), k) for k in kinds]
                    wrote = d.run(writer, "write", preset, plan)
                    got = d.run(reader, "read", preset, plan)
                    for key, kind in plan:
                        cell = (preset, writer, reader, kind)
                        want, why = EXPECTED.get(cell, ("OK", ""))
                        res = wrote[key] if not wrote[key].startswith("OK") else got[key]
                        if wrote[key].startswith("OK") or want != "OK":
                            record("legacy", "%s: %s -> %s %s%s" % (preset, writer, reader, kind,
                                                                    " (%s)" % why if why else ""),
                                   res, want)
                        else:
                            record("legacy", "%s: %s -> %s %s" % (preset, writer, reader, kind),
                                   "write " + wrote[key])

            # 3. wrong-layout reads: errors in every binding
            gz = zlib.compressobj(6, zlib.DEFLATED, 31)
            gzipped = gz.compress(b"x" * 5000) + gz.flush()
            wrong = [
                # (format read with, flags, body, what)
                ("cache-memcached-fast", 8, zlib.compress(b"y" * 5000), "pylibmc-zlib-under-cmf"),
                ("pylibmc", 2, gzipped, "cmf-gzip-under-pylibmc"),
                ("pylibmc", 8, b"not a zlib stream", "corrupt-zlib"),
                ("cache-memcached-fast", 2, b"not a gzip stream", "corrupt-gzip"),
                ("pylibmc", 1, b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00}\x94.", "pickle-off"),
                ("cache-memcached-fast", 1, b"\x05\x0b\x03\x00\x00\x00\x00", "storable-off"),
                ("whalin", 8, b"\xac\xed\x00\x05t\x00\x01x", "java-serialized-off"),
                ("whalin", 1024, b"\x00" * 8, "whalin-date-no-kind"),
                ("spymemcached", 0x400, b"\x01", "spymemcached-date-no-kind"),
                # the mcpool layout: mark 1<<24 | codec<<20 | kind<<16 (docs/value-format.md)
                ("mcpool", 0x1100000, b"not a zlib stream", "mcpool-corrupt-zlib"),
                ("mcpool", 0x1300000, b"not a zstd frame", "mcpool-corrupt-zstd"),
                ("mcpool", 0x1040000, b"\x80\x04K\x01.", "mcpool-pickle-off"),
                ("mcpool", 0x1050000, b"\x05\x0b\x03\x00\x00\x00\x00", "mcpool-storable-off"),
                ("mcpool", 0x1060000, b"\xac\xed\x00\x05t\x00\x01x", "mcpool-java-off"),
                ("mcpool", 0x1070000, b"x", "mcpool-no-such-kind"),
                ("mcpool", 0x1020000, b"12x", "mcpool-int-not-a-number"),
                ("mcpool", 16, b"text", "pylibmc-text-under-mcpool"),
                ("mcpool", 8, zlib.compress(b"z" * 3000), "pylibmc-zlib-under-mcpool"),
            ]
            for fmt, flags, body, what in wrong:
                key = "%s:w:%s" % (run_id, what)
                server.raw_set(key, flags, body)
                for lang in langs:
                    r = d.run(lang, "read", fmt, [(key, "ascii")], env={"MATRIX_SERIALIZE": "0"})
                    record("wrong-layout", "%s read by %s under %s" % (what, lang, fmt), r[key],
                           "ERR")
    finally:
        server.stop()
    for f in failures:
        print("FAIL " + f)
    total = sum(a + b for a, b in counts.values())
    print("test-matrix: " + "; ".join("%s %d/%d" % (m, a, a + b) for m, (a, b) in counts.items())
          + " cells as expected (%d in all, %.1f s)" % (total, time.time() - t0))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
