#!/usr/bin/python3
"""Places keys with the real twemproxy (nutcracker) and prints KEY<TAB>HOST:PORT per key,
in input order. Servers must be running, empty memcached instances. The script starts
nutcracker on a free loopback port in front of them (`distribution: ketama`, `hash: md5`
by default), stores every key through it, stops it, then probes each server.

Servers are HOST:PORT, HOST:PORT:NAME (the name goes into nutcracker's config) or a unix
socket path."""
import os
import socket
import subprocess
import sys
import tempfile
import time

import mcprobe


def free_port(host):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


p = mcprobe.parser(__doc__)
p.add_argument("--hash", default="md5")
p.add_argument("--distribution", default="ketama")
p.add_argument("--nutcracker", default="nutcracker")
args = p.parse_args()
servers, weights = mcprobe.servers_weights(args)
keys = mcprobe.read_keys(args.keys)
for s in servers:
    mcprobe.flush(s)

lines = []
for s, w in zip(servers, weights):
    if mcprobe.is_unix(s):
        lines.append("   - %s:%d" % (s, w))  # "/path/unix_socket:weight"
        continue
    parts = s.split(":")
    name = (" " + parts[2]) if len(parts) > 2 else ""
    lines.append("   - %s:%s:%d%s" % (parts[0], parts[1], w, name))
CONF = """pool:
  listen: %s:%d
  hash: %s
  distribution: %s
  auto_eject_hosts: false
  preconnect: false
  timeout: 5000
  servers:
%s
"""


def start(d):
    """nutcracker on two free ports, and a connection to it; None when it could not bind
    (a port taken between free_port and its bind: the caller tries new ports)."""
    listen = ("127.0.0.1", free_port("127.0.0.1"))
    stats = free_port("127.0.0.1")
    path = os.path.join(d, "nutcracker.yml")
    with open(path, "w") as f:
        f.write(CONF % (listen[0], listen[1], args.hash, args.distribution, "\n".join(lines)))
    log = os.path.join(d, "log")
    proc = subprocess.Popen([args.nutcracker, "-c", path, "-s", str(stats), "-a", "127.0.0.1",
                             "-o", log, "-v", "1"])
    for _ in range(100):  # up to ~5 s for nutcracker to listen
        try:
            sock = socket.create_connection(listen, timeout=10)
        except OSError:
            if proc.poll() is not None:
                text = open(log).read()
                if "Address already in use" in text:
                    return None
                sys.exit("nutcracker exited: " + text)
            time.sleep(0.05)
            continue
        if proc.poll() is not None:  # connected to another listener on that port
            sock.close()
            return None
        return proc, sock
    proc.terminate()
    proc.wait(timeout=10)
    sys.exit("nutcracker did not start listening")


with tempfile.TemporaryDirectory() as d:
    started = None
    for _ in range(5):
        started = start(d)
        if started:
            break
    if started is None:
        sys.exit("nutcracker could not bind a free port in 5 tries")
    proc, sock = started
    try:
        f = sock.makefile("rb")
        for i in range(0, len(keys), 200):  # pipelined in batches
            batch = keys[i:i + 200]
            sock.sendall(b"".join(b"set " + k + b" 0 0 1\r\n1\r\n" for k in batch))
            for k in batch:
                r = f.readline()
                if r != b"STORED\r\n":
                    sys.exit("set %r through nutcracker: %r" % (k, r))
        sock.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
mcprobe.emit(keys, mcprobe.locate_by_probe(servers, keys))
