"""mypy --strict over the package and over a program that uses it (tester finding packaging 8:
the package ships py.typed, so mypy reads every module of it as typed, but only
mcpool.Client had types: a user's --strict check of code calling the drop-ins, the Django
backend or mcpool.otel reported "Call to untyped function ... in typed context").

mypy comes from requirements-test.txt (target/python-testdeps, put on PYTHONPATH by
`make test-python`); without it these tests skip. They check the package that `import mcpool`
finds (target/python-site under `make test-python`), as an installed package, the way a
user's mypy sees it; opentelemetry-api (requirements-test.txt too) is needed for mcpool.otel.
"""
import os
import subprocess
import sys
import textwrap

import pytest

try:
    import mypy  # noqa: F401
except ImportError:
    pytest.skip("mypy is not installed: it is in ffi/python/requirements-test.txt "
                "(make python-testdeps installs it into target/python-testdeps)",
                allow_module_level=True)

import mcpool

# A program as the drop-ins' users write it, against each compat client, the Django backend
# class and mcpool.otel. It is only type-checked, never run. A line ending in a
# "type: ignore[code]" is a misuse mypy must report with that code: --strict reports an ignore
# that silences nothing, so such a line fails the check when the types turn into Any.
PROGRAM = '''
from typing import Any, Dict, List, Optional, Tuple

import mcpool
import mcpool.compat.memcache as memcache
import mcpool.compat.pylibmc as pylibmc
import mcpool.compat.pymemcache as pymemcache
import mcpool.otel
from mcpool.django import McpoolCache


def use_pylibmc() -> None:
    mc = pylibmc.Client(["127.0.0.1"], binary=True,
                        behaviors={"tcp_nodelay": True, "ketama": True})
    stored: bool = mc.set("key", {"a": 1.5}, time=10)
    value: Any = mc.get("key")
    found: Dict[str, Any] = mc.get_multi(["a", "b"], key_prefix="p:")
    not_stored: List[str] = mc.set_multi({"a": 1, "b": 2})
    counter: int = mc.incr("counter", 2)
    mc.incr_multi(["c1", "c2"], delta=3)
    mc["key"] = "v"
    present: bool = "key" in mc
    del mc["key"]
    mc.behaviors = {"cas": True}
    mc.behaviors["tcp_nodelay"] = True
    _, cas = mc.gets("key")
    if cas is not None:
        mc.cas("key", "new", cas)
    stats: List[Tuple[bytes, Dict[str, bytes]]] = mc.get_stats()
    with pylibmc.ClientPool(mc, 2).reserve() as pooled:
        pooled.append("key", 12)
    with pylibmc.ThreadMappedPool(mc).reserve() as mine:
        mine.delete("key")
    try:
        mc.touch("key", 10)
    except pylibmc.NotFound as e:
        status: Optional[str] = e.status_name
    index: int = mc.hash("key") + pylibmc.hash_md5 + pylibmc.distribution_consistent_ketama
    spec: Tuple[int, str, int, int] = pylibmc.translate_server_spec("h:1")
    mc.set(1, "v")  # type: ignore[arg-type]
    print(stored, value, found, not_stored, counter, present, stats, status, index, spec)


def use_pymemcache() -> None:
    mc = pymemcache.HashClient([("127.0.0.1", 11211), "127.0.0.1:11212"],
                               serde=pymemcache.PickleSerde(), connect_timeout=1,
                               timeout=0.5, retry_attempts=2)
    stored: bool = mc.set("key", {"a": 1.5}, expire=60)
    value: Any = mc.get("key", default=None)
    found: Dict[str, Any] = mc.get_many(["a", "b"])
    not_stored: List[str] = mc.set_many({"a": 1, "b": 2})
    pair: Optional[Tuple[Any, Any]] = mc.gets("key")
    mc.add_server("127.0.0.1", 11213)
    mc.gets("key")[0]  # type: ignore[index]
    single = pymemcache.Client(("localhost", 11211), key_prefix=b"p:")
    _, cas = single.gets("key")
    swapped: Optional[bool] = single.cas("key", "v", cas)
    counter: Optional[int] = single.incr("n", 1)
    version: bytes = single.version()
    single["key"] = "v"
    pool = pymemcache.PooledClient("localhost:11211", max_pool_size=4)
    retrying = pymemcache.RetryingClient(pool, attempts=3, retry_delay=0.01,
                                         retry_for=[pymemcache.MemcacheUnexpectedCloseError])
    retried: Any = retrying.get("key")
    try:
        single.set("bad key", "v")
    except pymemcache.MemcacheIllegalInputError:
        pass
    print(stored, value, found, not_stored, pair, swapped, counter, version, retried)


def use_memcache() -> None:
    mc = memcache.Client(["127.0.0.1:11211", ("127.0.0.1:11212", 2)], cache_cas=True)
    mc.set("key", "value", time=10)
    value: Any = mc.gets("key")
    mc.cas("key", "other")
    found: Dict[Any, Any] = mc.get_multi(["a", "b", 3], key_prefix="p:")
    not_stored: List[Any] = mc.set_multi({"a": 1, "b": 2})
    deleted: int = mc.delete("a")
    counter: Optional[int] = mc.incr("n")
    mc.incr("n").bit_length()  # type: ignore[union-attr]
    dead = [s for s in mc.servers if s.deaduntil]
    try:
        mc.set("bad key", 1)
    except memcache.Client.MemcachedKeyCharacterError:
        pass
    print(value, found, not_stored, deleted, counter, dead)


def use_django() -> None:
    cache = McpoolCache("127.0.0.1:11211;127.0.0.1:11212",
                        {"OPTIONS": {"preset": "pylibmc"}, "TIMEOUT": 300})
    cache.set("key", {"a": 1}, timeout=60)
    value: Any = cache.get("key", default=0)
    added: bool = cache.add("other", 1)
    found: Dict[Any, Any] = cache.get_many(["key", "other"])
    not_stored: List[Any] = cache.set_many({"a": 1}, timeout=None)
    counter: int = cache.incr("n", 2)
    cache.incr("n", "2")  # type: ignore[arg-type]
    cache.delete_many(["a"])
    cache.clear()
    print(value, added, found, not_stored, counter)


def use_otel() -> None:
    client = mcpool.Client(["127.0.0.1:11211"], on_operation=mcpool.otel.span_hook())
    mcpool.otel.span_hook(tracer="mcpool")  # type: ignore[arg-type]
    print(client, mcpool.otel.attributes)
    moved: List[Optional[int]] = client.incr_multi({"a": 1, b"b": 2}, key_prefix="p:")
    moved = client.decr_multi(["a", "b"], 3)
    touched: Dict[str, bool] = client.touch_multi({"a": 10, "b": 2.5})
    touched = client.touch_multi(["a"], 10, key_prefix="p:")
    print(touched)
    print(moved)
'''


@pytest.fixture(scope="module")
def run_mypy(tmp_path_factory):
    """mypy --strict (no configuration file but an empty one of its own; its cache in a
    temporary directory, shared by these tests) with the package and mypy on its path as
    this process finds them: (exit code, output)."""
    tmp = tmp_path_factory.mktemp("mypy")
    config = tmp / "mypy.ini"
    config.write_text("[mypy]\n")
    dirs = [os.path.dirname(os.path.dirname(os.path.abspath(m.__file__))) for m in (mcpool, mypy)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(dirs + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])

    def run(*args):
        p = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--config-file",
                            str(config), "--cache-dir", str(tmp / "cache"), *args],
                           cwd=str(tmp), env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
        return p.returncode, p.stdout
    run.dir = tmp
    return run


def test_the_package_type_checks_under_strict(run_mypy):
    code, out = run_mypy("-p", "mcpool")
    assert code == 0 and "Success: no issues found" in out, out


def test_a_program_using_the_drop_ins_type_checks_under_strict(run_mypy):
    program = run_mypy.dir / "uses_mcpool.py"
    program.write_text(textwrap.dedent(PROGRAM))
    code, out = run_mypy(str(program))
    assert code == 0 and "Success: no issues found in 1 source file" in out, out
