"""Helpers shared by the Python placement drivers: argument parsing, plain-socket
flush/probe of memcached servers, output. Standard library only (run with /usr/bin/python3)."""
import argparse
import socket
import sys


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--servers", required=True,
                   help="HOST:PORT[:NAME] or /SOCKET/PATH,... (running, empty memcached)")
    p.add_argument("--weights", help="W,W,... (default: all 1)")
    p.add_argument("--keys", default="-", help="key file, one key per line (default: stdin)")
    p.add_argument("--dead", type=int, default=-1,
                   help="index of a server that is not running (not flushed, not probed)")
    return p


def live(servers, args):
    """The servers other than --dead."""
    return [s for i, s in enumerate(servers) if i != args.dead]


def servers_weights(args):
    servers = args.servers.split(",")
    weights = [int(w) for w in args.weights.split(",")] if args.weights else [1] * len(servers)
    if len(weights) != len(servers):
        sys.exit("weights do not match servers")
    return servers, weights


def host_port(server):
    """'h:p[:name]' -> ('h', p)."""
    h, p = server.split(":")[:2]
    return h, int(p)


def is_unix(server):
    """Whether `server` is a unix socket path."""
    return server.startswith("/")


def label(server):
    """How a driver reports a server: 'host:port', or the socket path."""
    return server if is_unix(server) else "%s:%d" % host_port(server)


def read_keys(path):
    f = sys.stdin.buffer if path == "-" else open(path, "rb")
    return [line.rstrip(b"\n") for line in f if line.rstrip(b"\n")]


def _conn(server):
    if is_unix(server):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(server)
        return s
    return socket.create_connection(host_port(server), timeout=10)


def flush(server):
    with _conn(server) as s:
        s.sendall(b"flush_all\r\n")
        if s.recv(16) != b"OK\r\n":
            sys.exit("flush_all failed on " + server)


def probe(server, keys):
    """The subset of `keys` (bytes) that `server` holds, via batched `get`."""
    found = []
    with _conn(server) as s:
        f = s.makefile("rb")
        for i in range(0, len(keys), 100):
            s.sendall(b"get " + b" ".join(keys[i:i + 100]) + b"\r\n")
            while True:
                line = f.readline()
                if line == b"END\r\n":
                    break
                parts = line.split(b" ")
                if parts[0] != b"VALUE":
                    sys.exit("unexpected reply from %s: %r" % (server, line))
                found.append(parts[1])
                f.read(int(parts[3]) + 2)
    return found


def locate_by_probe(servers, keys):
    """{key: 'host:port'} for every key, each found on exactly one server."""
    where = {}
    for srv in servers:
        for k in probe(srv, keys):
            if k in where:
                sys.exit("key on two servers: %r" % k)
            where[k] = label(srv)
    missing = [k for k in keys if k not in where]
    if missing:
        sys.exit("%d keys on no server, e.g. %r" % (len(missing), missing[0]))
    return where


def emit(keys, where):
    out = sys.stdout.buffer
    for k in keys:
        out.write(k + b"\t" + where[k].encode() + b"\n")
