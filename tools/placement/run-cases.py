#!/usr/bin/python3
"""Runs every placement case through the real client libraries and writes the results.

    run-cases.py --keys KEYFILE --out CASEFILE [--only LIB,...] [--unix-only]

For each case (profile × library × server list × weights), the library's driver script in
this folder places every key of KEYFILE; the result is written to CASEFILE as a block

    case PROFILE
    library LABEL
    servers HOST:PORT[:NAME]|/SOCKET/PATH ...
    weights W ...            (only when not all 1)
    ketama-points N          (cmf-ketama only)
    dead I                   (server I is down: the library's own rehash placed its keys)
    sanitize on|off          (whalin-* only)
    expect <one character per key: the server index in 0-9a-z>
    end

memcached instances are started on 127.77.N.I (loopback only) and on unix sockets in
/tmp/mcpool-placement for the drivers that store keys and probe servers, and stopped at the
end. A library that is not installed is reported
loudly (a line starting with MISSING) and its cases skipped; the exit status is then 3.
"""
import argparse
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"
SPY_JAR = "/usr/share/java/spymemcached.jar"
INDEX = "0123456789abcdefghijklmnopqrstuvwxyz"


SOCKET_DIR = "/tmp/mcpool-placement"


def server_set(n, named=False, dead=None, unix=None):
    """n servers on 127.77.n.(i+1); even positions on port 11211, odd ones on 11300+i.
    Server `dead` gets port 11999, where nothing listens. unix="mixed": the even positions
    are unix sockets SOCKET_DIR/uN-I.sock instead; unix="all": every server is one;
    unix="zeros": TCP servers whose ports are written with a leading zero (011211)."""
    out = []
    for i in range(n):
        if unix == "all" or (unix == "mixed" and i % 2 == 0):
            out.append("%s/u%d-%d.sock" % (SOCKET_DIR, n, i + 1))
            continue
        port = 11999 if i == dead else (11211 if i % 2 == 0 else 11300 + i)
        s = "127.77.%d.%d:%s%d" % (n, i + 1, "0" if unix == "zeros" else "", port)
        if named:
            s += ":" + ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                        "iota", "kappa"][i]
        out.append(s)
    return out


WEIGHTS = {3: [1, 2, 3], 5: [3, 1, 1, 2, 5], 10: [1, 2, 3, 4, 5, 1, 2, 3, 4, 10]}


def cases():
    """(profile, library id, driver args, n, weights, named, extra fields)."""
    c = []

    def add(profile, lib, args, ns, weighted=(), named=False, extra=None, unix=None):
        for n in ns:
            c.append((profile, lib, args, n, None, named, extra or {}, unix))
        for n in weighted:
            c.append((profile, lib, args, n, WEIGHTS[n], named, extra or {}, unix))

    all_n = (1, 2, 3, 5, 10)
    add("cache-memcached", "perl-cm", [], all_n, (3, 5, 10))
    add("cache-memcached", "perl-cmf", ["--ketama-points", "0"], (2, 3, 5, 10), (3, 5, 10))
    add("cache-memcached", "libmemcached", ["modula-crc"], (2, 3, 5, 10))
    add("cache-memcached", "pylibmc", ["--behaviors", '{"hash": "crc"}'], (3, 5))
    add("cache-memcached", "spymemcached", ["--locator", "arraymod-crc"], (2, 3, 5, 10))
    add("cache-memcached", "whalin", ["--alg", "new-compat", "--no-sanitize"], (3, 10), (5,),
        extra={"sanitize": "off"})
    add("python-memcached", "python-memcached", [], all_n, (3, 5, 10))
    add("cmf-ketama", "perl-cmf", ["--ketama-points", "150"], all_n, (3, 5, 10),
        extra={"ketama-points": "150"})
    add("cmf-ketama", "perl-cmf", ["--ketama-points", "40"], (5,), (10,),
        extra={"ketama-points": "40"})
    add("libmemcached-modula", "libmemcached", ["modula"], all_n)
    add("libmemcached-modula", "pylibmc", ["--behaviors", "{}"], (3, 5))
    add("libmemcached-ketama", "libmemcached", ["ketama"], all_n)
    add("libmemcached-ketama", "pylibmc", ["--behaviors", '{"ketama": true}'], (3, 5))
    add("libmemcached-ketama-weighted", "libmemcached", ["ketama-weighted"], all_n + (25,),
        (3, 5, 10))
    add("libmemcached-ketama-weighted", "pylibmc", ["--behaviors", '{"ketama_weighted": true}'],
        (3, 5))
    add("libmemcached-ketama-weighted", "twemproxy", [], (2, 3, 5, 10), (5,))
    add("libmemcached-ketama-weighted", "spymemcached", ["--format", "LIBMEMCACHED"], (3, 5))
    add("libmemcached-ketama-spy", "libmemcached", ["ketama-spy"], all_n)
    add("spymemcached-ketama", "spymemcached", [], all_n, (3, 5, 10))
    add("twemproxy-ketama", "twemproxy", [], (2, 3, 5, 10), (5, 10), named=True)
    add("twemproxy-ketama", "twemproxy", [], (3,))
    for alg in ("consistent", "native", "old-compat", "new-compat"):
        add("whalin-" + alg, "whalin", ["--alg", alg], all_n, (3, 5, 10),
            extra={"sanitize": "on"})
        add("whalin-" + alg, "whalin", ["--alg", alg, "--no-sanitize"], (5,), (3,),
            extra={"sanitize": "off"})
    add("pymemcache-rendezvous", "pymemcache", [], all_n)
    settings(add, all_n)
    # Legacy rehash: one server is not running; the library picks another by its own formula.
    for n, dead in ((3, 0), (5, 2), (10, 7)):
        add("cache-memcached", "perl-cm", ["--dead", str(dead)], (n,), (n,),
            extra={"dead": str(dead)})
        add("python-memcached", "python-memcached", ["--dead", str(dead)], (n,), (n,),
            extra={"dead": str(dead)})
    unix_sockets(add)
    leading_zeros(add)
    return c


def leading_zeros(add):
    """Ports written with a leading zero (127.77.3.2:011301): Cache::Memcached::Fast,
    twemproxy (unnamed servers) and Whalin's consistent hashing name a server by its text as
    written, the others by the port's number. Kept last, as the unix-socket cases."""
    z = "zeros"
    add("cmf-ketama", "perl-cmf", ["--ketama-points", "150"], (3, 5), (5,),
        extra={"ketama-points": "150"}, unix=z)
    add("cache-memcached", "perl-cmf", ["--ketama-points", "0"], (3,), unix=z)
    add("cache-memcached", "perl-cm", [], (3,), unix=z)
    add("twemproxy-ketama", "twemproxy", [], (3, 5), unix=z)
    add("twemproxy-ketama", "twemproxy", [], (3,), named=True, unix=z)
    add("twemproxy:hash=md5,distribution=ketama", "twemproxy",
        ["--hash", "md5", "--distribution", "ketama"], (3,), (5,), unix=z)
    add("twemproxy:hash=fnv1a_64,distribution=modula", "twemproxy",
        ["--hash", "fnv1a_64", "--distribution", "modula"], (3,), unix=z)
    add("libmemcached-ketama", "pylibmc", ["--behaviors", '{"ketama": true}'], (3,), unix=z)
    add("python-memcached", "python-memcached", [], (3,), unix=z)
    add("pymemcache-rendezvous", "pymemcache", [], (3,), unix=z)
    add("whalin-consistent", "whalin", ["--alg", "consistent"], (3,), (5,),
        extra={"sanitize": "on"}, unix=z)
    add("whalin-native", "whalin", ["--alg", "native"], (3,), extra={"sanitize": "on"}, unix=z)


def unix_sockets(add):
    """Unix-socket servers (mixed with TCP ones where the library allows): the name each
    library gives a socket on its continuum. Kept last, so that the cases before them stay
    as they were."""
    m = "mixed"
    add("libmemcached-ketama", "libmemcached", ["ketama"], (2, 3, 5), unix=m)
    add("libmemcached-ketama-weighted", "libmemcached", ["ketama-weighted"], (3, 5), (3, 5),
        unix=m)
    add("libmemcached-ketama-spy", "libmemcached", ["ketama-spy"], (3, 5), unix=m)
    add("libmemcached-modula", "libmemcached", ["modula"], (3,), unix=m)
    # pylibmc cannot mix transports in one client.
    add("libmemcached-ketama", "pylibmc", ["--behaviors", '{"ketama": true}'], (2, 3),
        unix="all")
    add("pylibmc:ketama=1", "pylibmc", ["--behaviors", '{"ketama": true}'], (2, 3), unix="all")
    add("cmf-ketama", "perl-cmf", ["--ketama-points", "150"], (3, 5), (5,),
        extra={"ketama-points": "150"}, unix=m)
    add("cache-memcached", "perl-cm", [], (3,), (5,), unix=m)
    add("twemproxy:hash=fnv1a_64,distribution=ketama", "twemproxy",
        ["--hash", "fnv1a_64", "--distribution", "ketama"], (3, 5), (5,), unix=m)
    add("twemproxy:hash=fnv1a_64,distribution=modula", "twemproxy",
        ["--hash", "fnv1a_64", "--distribution", "modula"], (3, 5), unix=m)
    add("twemproxy-ketama", "twemproxy", [], (3,), unix=m)
    add("pymemcache-rendezvous", "pymemcache", [], (3,), unix=m)


def settings(add, all_n):
    """Client settings in the client's own words (the case name is the setting mcpool parses;
    it must parse to the same placement). Settings whose client ignores weights get one
    weighted case (5w) to prove it; the others 3w and 10w."""
    # libmemcached: memcached_behavior_set calls in this order, after the servers are added.
    for h in ("md5", "crc", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32", "murmur", "jenkins"):
        b = "hash=%s,distribution=modula" % h
        add("libmemcached:" + b, "libmemcached", ["set:" + b], all_n, (5,))
    for b, weighted in (("hash=md5,ketama=1", (5,)), ("ketama=1,hash=md5", (5,)),
                        ("distribution=consistent", (5,)),
                        ("ketama_weighted=1,distribution=consistent_ketama_spy", (3, 10)),
                        ("hash=fnv1a_32,distribution=consistent_weighted", (3, 10))):
        add("libmemcached:" + b, "libmemcached", ["set:" + b], all_n, weighted)
    # libmemcached configuration strings (memcached("...")): each word a behavior set in
    # order, the servers added where {S} stands; the words before it are the BEFORE group of
    # a libmemcached:BEFORE;AFTER setting (the words the option libmemcached_config writes).
    for b, words, weighted in (
            ("distribution=consistent;", "--DISTRIBUTION=consistent {S}", (3, 5, 10)),
            (";distribution=consistent", "{S} --DISTRIBUTION=consistent", (3, 5, 10)),
            ("distribution=consistent;hash=md5", "--DISTRIBUTION=consistent {S} --HASH=MD5",
             (3, 10)),
            ("hash=md5,distribution=consistent;",
             "--HASH=MD5 --DISTRIBUTION=consistent {S}", (3, 10)),
            ("hash=crc;", "--HASH=CRC {S}", (5,)),
            ("sort_hosts=1,distribution=consistent;", "--SORT-HOSTS --DISTRIBUTION=consistent {S}",
             (5,)),
            ("hash=fnv1a_32;distribution=modula", "--HASH=FNV1A_32 {S} --DISTRIBUTION=modula",
             (5,))):
        add("libmemcached:" + b, "libmemcached", ["config:" + words], all_n, weighted)
    # pylibmc: behaviors dict, applied before the servers are added.
    for b, js in (("distribution=consistent", '{"distribution": "consistent"}'),
                  ("ketama=1,hash=md5", '{"ketama": true, "hash": "md5"}'),
                  ("hash=md5", '{"hash": "md5"}'),
                  ("ketama_weighted=1", '{"ketama_weighted": true}')):
        add("pylibmc:" + b, "pylibmc", ["--behaviors", js], all_n, (3, 10))
    # twemproxy: every hash with ketama (servers with names, and without) and modula.
    for h in ("fnv1a_64", "fnv1_64", "fnv1a_32", "fnv1_32", "crc32", "crc32a", "md5",
              "one_at_a_time", "hsieh", "murmur", "jenkins"):
        for d in ("ketama", "modula"):
            name = "twemproxy:hash=%s,distribution=%s" % (h, d)
            dargs = ["--hash", h, "--distribution", d]
            add(name, "twemproxy", dargs, all_n, (10,), named=True)
            if d == "ketama":
                add(name, "twemproxy", dargs, (3,), (5,))
    # spymemcached: ConnectionFactoryBuilder locator x DefaultHashAlgorithm (no weights).
    for loc, lw in (("ARRAY_MOD", "array_mod"), ("CONSISTENT", "consistent")):
        for h in ("NATIVE", "CRC", "FNV1_64", "FNV1A_64", "FNV1_32", "FNV1A_32", "KETAMA"):
            add("spymemcached:locator=%s,hash=%s" % (lw, h.lower()), "spy-settings",
                [loc, h + "_HASH"], all_n, (5,))


def have(cmd):
    return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
        lines = (r.stdout.strip() or r.stderr.strip()).splitlines()
        return lines[0] if lines else "?"
    except OSError:
        return "?"


class Libs:
    """Which libraries are here, how to run each, and their labels."""

    def __init__(self, build):
        self.build = build
        self.missing = {}
        self.label = {}
        if not have(["perl", "-MCache::Memcached", "-e1"]):
            self.missing["perl-cm"] = "Perl Cache::Memcached (Debian: libcache-memcached-perl)"
        else:
            self.label["perl-cm"] = "Perl Cache::Memcached " + version(
                ["perl", "-MCache::Memcached", "-e", "print $Cache::Memcached::VERSION"])
        if not have(["perl", "-MCache::Memcached::Fast", "-e1"]):
            self.missing["perl-cmf"] = (
                "Perl Cache::Memcached::Fast (Debian: libcache-memcached-fast-perl)")
        else:
            self.label["perl-cmf"] = "Perl Cache::Memcached::Fast " + version(
                ["perl", "-MCache::Memcached::Fast", "-e",
                 "print $Cache::Memcached::Fast::VERSION"])
        for lib, mod, pkg in (("python-memcached", "memcache", "python3-memcache"),
                              ("pylibmc", "pylibmc", "python3-pylibmc"),
                              ("pymemcache", "pymemcache", "python3-pymemcache")):
            if not have([PY, "-c", "import " + mod]):
                self.missing[lib] = "%s (Debian: %s)" % (lib, pkg)
            else:
                self.label[lib] = "%s %s" % (lib, version(
                    [PY, "-c", "import %s; print(%s.__version__)" % (mod, mod)]))
        exe = os.path.join(build, "place-libmemcached")
        if subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "place-libmemcached.c"),
                           "-lmemcached"], stderr=subprocess.DEVNULL).returncode != 0:
            self.missing["libmemcached"] = "libmemcached (Debian: libmemcached-dev, and cc)"
        else:
            self.label["libmemcached"] = "libmemcached " + version(
                ["sh", "-c", "grep -h LIBMEMCACHED_VERSION_STRING "
                 "/usr/include/libmemcached-1.0/configure.h | cut -d'\"' -f2"])
        cls = os.path.join(build, "java")
        os.makedirs(cls, exist_ok=True)
        if not have(["javac", "-d", cls, os.path.join(HERE, "PlaceWhalin.java")]):
            self.missing["whalin"] = "a JDK for the Whalin reproduction (Debian: default-jdk)"
        else:
            self.label["whalin"] = (
                "Whalin SockIOPool hashing reproduced in Java (String.hashCode, CRC32, MD5)")
        if not os.path.exists(SPY_JAR) or not have(
                ["javac", "-d", cls, "-cp", SPY_JAR, os.path.join(HERE, "PlaceSpymemcached.java")]):
            self.missing["spymemcached"] = "spymemcached (Debian: libspymemcached-java, a JDK)"
        else:
            self.label["spymemcached"] = "spymemcached " + version(
                ["dpkg-query", "-W", "-f", "${Version}", "libspymemcached-java"])
        if "spymemcached" in self.missing or not have(
                ["javac", "-d", cls, "-cp", SPY_JAR, os.path.join(HERE, "PlaceSpySettings.java")]):
            self.missing["spy-settings"] = "spymemcached (Debian: libspymemcached-java, a JDK)"
        else:
            self.label["spy-settings"] = self.label["spymemcached"]
        if shutil.which("nutcracker") is None:
            self.missing["twemproxy"] = "twemproxy (Debian: nutcracker)"
        else:
            self.label["twemproxy"] = version(["nutcracker", "--version"])
        self.memcached = shutil.which("memcached")

    def command(self, lib, args, servers, weights):
        s = ",".join(servers)
        w = ",".join(map(str, weights)) if weights else None
        wa = ["--weights", w] if w else []
        java = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp",
                os.path.join(self.build, "java") + ":" + SPY_JAR]
        if lib in ("perl-cm", "perl-cmf"):
            return ["perl", os.path.join(HERE, "place-cache-memcached.pl"), "--servers", s] + \
                wa + (["--fast"] if lib == "perl-cmf" else []) + args
        if lib in ("python-memcached", "pylibmc", "pymemcache", "twemproxy"):
            return [PY, os.path.join(HERE, "place-%s.py" % lib), "--servers", s] + wa + args
        if lib == "libmemcached":
            return [os.path.join(self.build, "place-libmemcached"), args[0], s, w or "-"]
        if lib == "spymemcached":
            return java + ["PlaceSpymemcached", "--servers", s] + wa + args
        if lib == "whalin":
            return java + ["PlaceWhalin", "--servers", s] + wa + args
        raise ValueError(lib)


NEEDS_SERVERS = {"perl-cm", "perl-cmf", "python-memcached", "pylibmc", "pymemcache",
                 "twemproxy", "spymemcached", "spy-settings"}


def connect(addr, timeout):
    """A connection to HOST:PORT or to the unix socket at /PATH."""
    if addr.startswith("/"):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(timeout)
        try:
            s.connect(addr)
        except OSError:
            s.close()
            raise
        return s
    host, port = addr.split(":")[:2]
    return socket.create_connection((host, int(port)), timeout=timeout)


def started(addr):
    """The address a memcached is started on: a port written with a leading zero is the
    same server as the port without it."""
    if addr.startswith("/"):
        return addr
    host, port = addr.split(":")[:2]
    return "%s:%d" % (host, int(port))


def start_memcached(addrs):
    procs = []
    if any(a.startswith("/") for a in addrs):
        os.makedirs(SOCKET_DIR, exist_ok=True)
    for a in addrs:
        if a.startswith("/"):
            if os.path.exists(a):
                os.unlink(a)  # left by an earlier run (runs hold the lock, one at a time)
            where = ["-s", a]
        else:
            host, port = a.split(":")[:2]
            where = ["-l", host, "-p", port, "-U", "0"]
        procs.append(subprocess.Popen(
            ["memcached", "-u", "root"] + where + ["-m", "16", "-t", "1", "-c", "64"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    deadline = time.time() + 10
    for a in addrs:
        while True:
            try:
                connect(a, 1).close()
                break
            except OSError:
                if time.time() > deadline:
                    stop(procs)
                    sys.exit("memcached did not start on %s (address in use?)" % a)
                time.sleep(0.05)
    return procs


def stop(procs):
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--keys", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", help="comma-separated library ids")
    ap.add_argument("--unix-only", action="store_true",
                    help="only the cases with unix-socket servers")
    ap.add_argument("--out-settings",
                    help="write the client-setting cases (CLIENT:...) here instead of --out")
    args = ap.parse_args()
    keys = [k for k in open(args.keys, "rb").read().split(b"\n") if k]
    only = set(args.only.split(",")) if args.only else None
    todo = [c for c in cases() if (only is None or c[1] in only) and (c[7] or not args.unix_only)]
    # One run at a time on this machine: runs share the 127.77.N.I addresses.
    lock = open(os.path.join(tempfile.gettempdir(), "mcpool-placement-cases.lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    build = tempfile.mkdtemp(prefix="mcpool-placement-")
    procs = []
    try:
        libs = Libs(build)
        for lib, why in sorted(libs.missing.items()):
            if any(c[1] == lib for c in todo):
                print("MISSING %s: cases for it are skipped. Install %s" % (lib, why),
                      file=sys.stderr, flush=True)
        if libs.memcached is None and any(c[1] in NEEDS_SERVERS for c in todo):
            print("MISSING memcached (Debian: memcached): cases that store keys are skipped",
                  file=sys.stderr, flush=True)
            libs.missing.update({lib: "memcached" for lib in NEEDS_SERVERS})
        todo = [c for c in todo if c[1] not in libs.missing]
        addrs = sorted({started(a) for c in todo if c[1] in NEEDS_SERVERS for a in
                        (":".join(s.split(":")[:2]) for s in server_set(c[3], unix=c[7]))})
        procs = start_memcached(addrs)
        # spymemcached settings: every case in one JVM (a JVM per case would take a minute).
        batched = {}
        spy = [c for c in todo if c[1] == "spy-settings"]
        if spy:
            t0 = time.time()
            java = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp",
                    os.path.join(build, "java") + ":" + SPY_JAR, "PlaceSpySettings", args.keys]
            jobs = ["%s/%s/%s" % (c[2][0], c[2][1], ",".join(server_set(c[3]))) for c in spy]
            r = subprocess.run(java + jobs, capture_output=True)
            if r.returncode != 0:
                sys.exit("PlaceSpySettings failed:\n" + r.stderr.decode(errors="replace"))
            lines = r.stdout.split(b"\n")[:-1]
            if len(lines) != len(keys) * len(spy):
                sys.exit("PlaceSpySettings printed %d lines for %d jobs" % (len(lines), len(spy)))
            for i, c in enumerate(spy):
                batched[id(c)] = lines[i * len(keys):(i + 1) * len(keys)]
            print("spymemcached settings: %d cases in one JVM, %.2fs" % (len(spy), time.time() - t0),
                  file=sys.stderr, flush=True)
        out = []
        out_settings = []
        for case in todo:
            profile, lib, dargs, n, weights, named, extra, unix = case
            dead = int(extra["dead"]) if "dead" in extra else None
            servers = server_set(n, named, dead, unix)
            t0 = time.time()
            if id(case) in batched:
                cmd = ["PlaceSpySettings"] + dargs
                lines = batched[id(case)]
            else:
                cmd = libs.command(lib, dargs, servers, weights)
                r = subprocess.run(cmd, input=b"\n".join(keys) + b"\n", capture_output=True)
                if r.returncode != 0:
                    sys.exit("driver failed: %s\n%s" % (" ".join(cmd),
                                                         r.stderr.decode(errors="replace")))
                lines = r.stdout.split(b"\n")[:-1]
            index = {started(":".join(s.split(":")[:2])): i for i, s in enumerate(servers)}
            if len(lines) != len(keys):
                sys.exit("driver printed %d lines for %d keys: %s" % (len(lines), len(keys), " ".join(cmd)))
            expect = []
            for k, line in zip(keys, lines):
                got_key, _, where = line.rpartition(b"\t")
                if got_key != k:
                    sys.exit("driver output out of order at %r: %s" % (k, " ".join(cmd)))
                expect.append(INDEX[index[started(where.decode())]])
            block = ["case " + profile, "library " + libs.label[lib], "servers " + " ".join(servers)]
            if weights:
                block.append("weights " + " ".join(map(str, weights)))
            for f in ("ketama-points", "sanitize", "dead"):
                if f in extra:
                    block.append("%s %s" % (f, extra[f]))
            block += ["expect " + "".join(expect), "end", ""]
            setting = ":" in profile and not profile.startswith("cmf-ketama:")
            (out_settings if setting and args.out_settings else out).append("\n".join(block))
            print("%-30s %-18s n=%-2d %s %.2fs" % (profile, lib, n, "weighted" if weights else "",
                                                   time.time() - t0), file=sys.stderr, flush=True)
        for path, blocks in ((args.out, out), (args.out_settings, out_settings)):
            if not path:
                continue
            with open(path, "w") as f:
                f.write("# Placement fixtures: generated by tools/placement/generate-fixtures.sh "
                        "from the real client libraries. Do not edit.\n")
                f.write("# keys: tests/fixtures/placement/keys.txt (one per line); expect: one "
                        "server index (0-9a-z) per key, in key order.\n\n")
                f.write("".join(blocks))
        return 3 if libs.missing else 0
    finally:
        stop(procs)
        shutil.rmtree(build, ignore_errors=True)
        shutil.rmtree(SOCKET_DIR, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
