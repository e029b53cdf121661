"""Drop-in replacements for other Python memcached clients, on top of ``mcpool.Client``.

- ``mcpool.compat.pylibmc``: the pylibmc 1.6 API (``import mcpool.compat.pylibmc as pylibmc``).
- ``mcpool.compat.memcache``: the python-memcached 1.5x API
  (``import mcpool.compat.memcache as memcache``).

Both store values in their client's own layout (flags, pickling, compression), so a program
can switch one process at a time while sharing the cache with processes still running the
original library. Both pickle by default, as those libraries do: unpickling runs code chosen
by whoever wrote the value, so use them only on a cache that no untrusted party can write.
"""
