"""Fixtures: private memcached servers on free loopback ports, stopped at the end."""
import itertools
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

def require(module, debian_package):
    """Imports a module the tests need, or fails (never skips) naming the install line."""
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError as e:
        pytest.fail("%s is needed by these tests (%s): apt-get install %s "
                    "(listed in ffi/python/packages.txt; scripts/install-deps.sh installs it)"
                    % (module, e, debian_package), pytrace=False)


MEMCACHED = os.environ.get("MEMCACHED", shutil.which("memcached") or "/usr/bin/memcached")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_unix_memcached(path, threads=2, megabytes=64):
    """A memcached listening only on the unix socket `path`, once it accepts; its process."""
    args = [MEMCACHED, "-s", path, "-t", str(threads), "-m", str(megabytes)]
    if os.geteuid() == 0:
        args += ["-u", "root"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(path)
            return proc
        except OSError:
            assert time.monotonic() < deadline and proc.poll() is None, "memcached -s " + path
            time.sleep(0.02)


def unix_socket_command(path, line):
    """The reply of the memcached on unix socket `path` to one command line (up to its END
    or OK)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(path)
        s.sendall(line)
        buf = b""
        while not buf.endswith((b"END\r\n", b"OK\r\n")):
            chunk = s.recv(65536)
            assert chunk, "closed"
            buf += chunk
        return buf


def unix_memcacheds(d, names):
    """A generator for a fixture: a memcached on each socket `d/name`, yielding (d, names),
    stopped after."""
    procs = [start_unix_memcached(os.path.join(d, n)) for n in names]
    try:
        yield d, names
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)


def socket_holders(d, names, key):
    """The names of the sockets under `d` whose memcached holds `key` (bytes)."""
    return [n for n in names
            if b"VALUE" in unix_socket_command(os.path.join(d, n), b"get " + key + b"\r\n")]


class Server:
    """One memcached process on 127.0.0.1:<free port>."""

    def __init__(self, *extra):
        for _attempt in range(5):
            self.port = _free_port()
            args = [MEMCACHED, "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-t", "2",
                    "-m", "64", *extra]
            if os.geteuid() == 0:
                args += ["-u", "root"]
            self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    if self._answering_pid() == self.proc.pid:
                        return
                    break  # another process's server holds the port: ours failed to bind
                except OSError:
                    time.sleep(0.02)
            self.stop()
        raise RuntimeError("could not start memcached")

    def _answering_pid(self):
        """The pid that memcached on our port reports (stats): ours, or another process's
        that took the port between _free_port() and our bind (seen on a busy machine; the
        test then ran against a server it could not stop)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
            s.sendall(b"stats\r\n")
            buf = b""
            deadline = time.monotonic() + 2
            while not buf.endswith(b"END\r\n") and time.monotonic() < deadline:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        for line in buf.split(b"\r\n"):
            if line.startswith(b"STAT pid "):
                return int(line.split()[2])
        return None

    @property
    def addr(self):
        return "127.0.0.1:%d" % self.port

    def raw(self, line, until=b"END\r\n"):
        """Sends one text-protocol command and returns the reply (for flag checks)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(line)
            buf = b""
            deadline = time.monotonic() + 2
            while not buf.endswith(until) and time.monotonic() < deadline:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
            return buf

    def raw_get(self, key):
        """(flags, bytes) as stored, or None."""
        r = self.raw(b"get " + key.encode() + b"\r\n")
        if r.startswith(b"END"):
            return None
        head, rest = r.split(b"\r\n", 1)
        _, _, flags, n = head.split()
        return int(flags), rest[: int(n)]

    def ttl(self, key):
        """The remaining TTL memcached reports for key (-1: never expires), None on a miss."""
        r = self.raw(b"mg " + key.encode() + b" t\r\n", until=b"\r\n")
        if r.startswith(b"EN"):
            return None
        assert r.startswith(b"HD"), r
        return int(r.split()[1][1:])

    def raw_set(self, key, flags, data):
        r = self.raw(b"set %s %d 0 %d\r\n%s\r\n" % (key.encode(), flags, len(data), data),
                     until=b"\r\n")
        assert r == b"STORED\r\n", r

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def server():
    s = Server()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def servers():
    """Three servers, for placement tests."""
    ss = [Server() for _ in range(3)]
    yield ss
    for s in ss:
        s.stop()


class BrokenServer:
    """A deliberately broken fake memcached: accepts connections and answers every request it
    reads with one fixed reply (an error line, or garbage), or, with ``reply=None``, never
    answers (SilentServer); ``requests`` counts the reads that brought bytes. Stopped by
    close()."""

    def __init__(self, reply=None):
        self.reply = reply
        self.requests = 0
        self.lsn = socket.socket()
        self.lsn.bind(("127.0.0.1", 0))
        self.lsn.listen(64)
        self.addr = "127.0.0.1:%d" % self.lsn.getsockname()[1]
        self.conns = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.lsn.accept()
            except OSError:
                return
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            while c.recv(65536):
                self.requests += 1
                if self.reply is not None:
                    c.sendall(self.reply)
        except OSError:
            pass

    def close(self):
        try:
            self.lsn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.lsn.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass


class FakeServerErrorServer(BrokenServer):
    """A fake memcached on loopback (a thread, no memcached) that answers every data command
    with "SERVER_ERROR out of memory storing object" (text, meta; binary: status 0x82), each
    command its own reply, and version / mn / NOOP as memcached does: a server that is up
    and refuses every read and write (tester finding partial, server D). ``addr``; close()
    at the end."""

    MSG = b"SERVER_ERROR out of memory storing object\r\n"

    def __init__(self):
        super().__init__(self.MSG)

    def _serve(self, c):
        import struct
        buf = b""

        def need(n):
            nonlocal buf
            while len(buf) < n:
                d = c.recv(65536)
                if not d:
                    raise EOFError
                buf += d
        try:
            while True:
                need(1)
                if buf[0] == 0x80:  # binary
                    need(24)
                    op, bodylen, opaque = buf[1], struct.unpack(">I", buf[8:12])[0], buf[12:16]
                    need(24 + bodylen)
                    buf = buf[24 + bodylen:]
                    body, status = ((b"", 0) if op == 0x0a else (b"1.6.18", 0) if op == 0x0b
                                    else (b"Out of memory", 0x82))
                    c.sendall(struct.pack(">BBHBBHI", 0x81, op, 0, 0, 0, status, len(body))
                              + opaque + b"\0" * 8 + body)
                    continue
                while b"\r\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        raise EOFError
                    buf += d
                line, buf = buf.split(b"\r\n", 1)
                w = line.split()
                if not w:
                    c.sendall(b"ERROR\r\n")
                    continue
                if w[0] in (b"set", b"add", b"replace", b"append", b"prepend", b"cas"):
                    need(int(w[4]) + 2)
                    buf = buf[int(w[4]) + 2:]
                elif w[0] == b"ms":
                    need(int(w[2]) + 2)
                    buf = buf[int(w[2]) + 2:]
                if w[0] == b"version":
                    c.sendall(b"VERSION 1.6.18\r\n")
                elif w[0] == b"mn":
                    c.sendall(b"MN\r\n")
                elif w[0] == b"quit":
                    return
                elif b"noreply" not in w:  # (a meta quiet command still gets its error)
                    c.sendall(self.MSG)
        except (EOFError, OSError):
            pass
        finally:
            c.close()


@pytest.fixture
def server_error_server():
    """A FakeServerErrorServer for the test."""
    s = FakeServerErrorServer()
    yield s
    s.close()


_counter = itertools.count()


@pytest.fixture
def prefix(request):
    """A key prefix unique to the test, so tests never see each other's keys."""
    return "t%d_%s_" % (next(_counter), request.node.name[:40].replace("[", "_").replace("]", "_"))


@pytest.fixture
def mc(server):
    import mcpool
    return mcpool.Client([server.addr])


@pytest.fixture
def blackholed():
    """A blackholed fake server: listen(0) with its queue filled, so that the kernel drops
    every further SYN and connects to it hang (a host powered off or firewalled). Yields its
    address; the sockets are closed at the end of the test."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    held = [listener]
    try:
        for _ in range(16):
            s = socket.socket()
            s.settimeout(0.2)
            try:
                s.connect(listener.getsockname())
            except socket.timeout:
                s.close()
                yield "127.0.0.1:%d" % listener.getsockname()[1]
                return
            held.append(s)
        raise RuntimeError("the blackholed port's listen queue never filled")
    finally:
        for s in held:
            s.close()
