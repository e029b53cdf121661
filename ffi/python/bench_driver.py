#!/usr/bin/python3
"""mcpool bench peer for the Python binding (protocol: bench/peers/PROTOCOL.md).

usage: bench_driver.py SITE_DIR HOST:PORT   (SITE_DIR holds the built mcpool package)

Reuses bench/peers/python/driver.py (the pylibmc/pymemcache/python-memcached driver) with an
mcpool adapter, so every client runs the very same loops. Configuration: one mcpool.Client
shared by every thread with pool_size=POOL connections (it waits for a free one); text
protocol, TCP_NODELAY (defaults); compression: min_compress_len=30 KiB (zlib, flag 8).
"""
import os
import sys

sys.path.insert(0, os.path.abspath(sys.argv[1]))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench", "peers", "python"))

import driver  # noqa: E402
import mcpool  # noqa: E402


class McpoolAdapter(driver.Adapter):
    def __init__(self, kind, server):
        self.kind, self.server = "mcpool", server
        self.version = "mcpool-python %s (libmcpool %s)" % (mcpool.__version__,
                                                           mcpool.library_version())

    def single(self, compress=False):
        return mcpool.Client([self.server], min_compress_len=driver.THRESHOLD if compress else 0)

    def shared(self, pool, compress):
        c = mcpool.Client([self.server], pool_size=pool,
                          min_compress_len=driver.THRESHOLD if compress else 0)

        class Same:
            def __enter__(self):
                return c

            def __exit__(self, *a):
                pass
        return Same

    def set(self, c, k, v, compress):
        return c.set(k, v)

    def get_multi(self, c, keys):
        return c.get_multi(keys)


if __name__ == "__main__":
    driver.Adapter = McpoolAdapter
    sys.argv = [sys.argv[0], "mcpool", sys.argv[2]]
    driver.main()
