#!/usr/bin/python3
"""Places keys with the real pylibmc (libmemcached underneath) and prints
KEY<TAB>HOST:PORT per key, in input order. Servers must be running, empty memcached
instances: keys are stored through the library, then each server is probed.

--behaviors takes pylibmc behaviors as JSON, e.g. '{"ketama": true}'."""
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
spec = ["%s:%d" % mcprobe.host_port(s) for s in servers]
mc = pylibmc.Client(spec, binary=False, behaviors=json.loads(args.behaviors))
for k in keys:
    if not mc.set(k, b"1"):
        raise SystemExit("set failed for %r" % k)
mcprobe.emit(keys, mcprobe.locate_by_probe(servers, keys))
