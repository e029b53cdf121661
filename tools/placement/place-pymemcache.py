#!/usr/bin/python3
"""Places keys with the real pymemcache HashClient (rendezvous hashing) and prints
KEY<TAB>HOST:PORT per key, in input order. Keys are passed as `str` (decoded UTF-8, with
allow_unicode_keys), as Python 3 programs pass them. Servers must be running, empty
memcached instances: keys are stored through the library, then each server is probed."""

import mcprobe
from pymemcache.client.hash import HashClient

p = mcprobe.parser(__doc__)
args = p.parse_args()
servers, _ = mcprobe.servers_weights(args)
keys = mcprobe.read_keys(args.keys)
for s in servers:
    mcprobe.flush(s)
mc = HashClient([s if mcprobe.is_unix(s) else mcprobe.host_port(s) for s in servers], allow_unicode_keys=True,
                use_pooling=False)
for k in keys:
    if not mc.set(k.decode("utf-8"), b"1"):
        raise SystemExit("set failed for %r" % k)
mcprobe.emit(keys, mcprobe.locate_by_probe(servers, keys))
