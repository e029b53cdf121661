"""A negative per-call min_compress_len, side by side with the peers (compat F11): pylibmc
compresses only when ``min_compress > 0``, so it stores the value raw; the pylibmc drop-in
raised ClientError ("min_compress_len must be between 0 and 2**63-1") and stored nothing.
(The python-memcached drop-in's side: test_compat_memcache.py.)"""
import pytest

from conftest import require

real_pylibmc = require("pylibmc", "python3-pylibmc")
import mcpool.compat.pylibmc as compat_pylibmc  # noqa: E402


@pytest.mark.parametrize("mcl", [-1, -1000])
def test_pylibmc_negative_min_compress_len_stores_raw_as_pylibmc(server, prefix, mcl):
    values = {"long": "y" * 500, "bytes": b"z" * 300, "short": "ab"}
    got = {}
    for mod in (real_pylibmc, compat_pylibmc):
        p = prefix + ("r_" if mod is real_pylibmc else "c_")
        mc = mod.Client([server.addr])
        res = []
        for name, v in values.items():
            res.append(mc.set(p + name, v, min_compress_len=mcl))
            res.append(mc.add(p + "a" + name, v, min_compress_len=mcl))
            res.append(mc.replace(p + name, v, min_compress_len=mcl))
            res.append(mc.set_multi({p + "m" + name: v}, min_compress_len=mcl))
        raw = {k + n: server.raw_get(p + k + n) for n in values for k in ("", "a", "m")}
        got[mod] = (res, raw)
    assert got[compat_pylibmc] == got[real_pylibmc]
    assert got[real_pylibmc][1]["long"] == (16, b"y" * 500)  # its str flag, not compressed
