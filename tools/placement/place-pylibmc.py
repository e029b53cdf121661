#!/usr/bin/python3
"""Places keys with the real pylibmc (libmemcached underneath) and prints
KEY<TAB>HOST:PORT per key, in input order. Servers must be running, empty memcached
instances: keys are stored through the library, then each server is probed.

--behaviors takes pylibmc behaviors as JSON, e.g. '{"ketama": true}'. With --weights,
servers are given to pylibmc as "host:port:weight"."""
import json

import mcprobe
import pylibmc

p = mcprobe.parser(__doc__)
p.add_argument("--behaviors", default="{}")
args = p.parse_args()
servers, weights = mcprobe.servers_weights(args)
keys = mcprobe.read_keys(args.keys)
for s in servers:
    mcprobe.flush(s)
# Weights as pylibmc takes them, "host:port:weight" (only when given, so the older cases
# run exactly as before).
# A unix socket is its path (pylibmc takes no weight with it).
spec = [s if mcprobe.is_unix(s) else
        "%s:%d" % mcprobe.host_port(s) + (":%d" % w if args.weights else "")
        for s, w in zip(servers, weights)]
mc = pylibmc.Client(spec, binary=False, behaviors=json.loads(args.behaviors))
for k in keys:
    if not mc.set(k, b"1"):
        raise SystemExit("set failed for %r" % k)
mcprobe.emit(keys, mcprobe.locate_by_probe(servers, keys))
