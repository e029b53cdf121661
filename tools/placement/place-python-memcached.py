#!/usr/bin/python3
"""Places keys with the real python-memcached (`memcache` module) and prints
KEY<TAB>HOST:PORT per key, in input order. Servers must be running, empty memcached
instances: keys are stored through the library, then each server is probed."""
import mcprobe
import memcache

p = mcprobe.parser(__doc__)
args = p.parse_args()
servers, weights = mcprobe.servers_weights(args)
keys = mcprobe.read_keys(args.keys)
for s in mcprobe.live(servers, args):
    mcprobe.flush(s)
mc = memcache.Client([("%s:%d" % mcprobe.host_port(s), w) for s, w in zip(servers, weights)])
for k in keys:
    if not mc.set(k, b"1"):
        raise SystemExit("set failed for %r" % k)
mcprobe.emit(keys, mcprobe.locate_by_probe(mcprobe.live(servers, args), keys))
