"""Interpreter exit while daemon threads are inside mcpool calls.

The core calls the binding back (value allocation, on_operation, on_event) from inside its
own call. Once the interpreter finalizes, CPython ends a daemon thread that takes the GIL with
pthread_exit; that forced unwind through the core's Rust frames aborted the process
("FATAL: exception not rethrown", exit 134). The extension's atexit handler closes a gate the
callbacks pass before taking the GIL. Each pattern runs in a child process several times: the
abort was frequent, never certain.
"""
import os
import subprocess
import sys

import pytest

import mcpool

RUNS = 6

HITS = r'''
import sys, threading, time
import mcpool
mc = mcpool.Client([sys.argv[1]])
p = sys.argv[2]
mc.set_multi({p + "a": "1", p + "b": b"2", p + "c": 3})
def busy():
    while True:
        try:
            mc.get(p + "a")
            mc.get_multi([p + "a", p + "b", p + "c"])
        except mcpool.Error:
            pass
for _ in range(3):
    threading.Thread(target=busy, daemon=True).start()
time.sleep(0.2)
print("done", flush=True)
'''

HOOK = r'''
import sys, threading, time
import mcpool
mc = mcpool.Client([sys.argv[1]], on_operation=lambda rec: None)
p = sys.argv[2]
def busy():
    while True:
        mc.get(p + "missing")
for _ in range(3):
    threading.Thread(target=busy, daemon=True).start()
time.sleep(0.2)
print("done", flush=True)
'''

# An atexit handler registered before mcpool's own runs after it, on the exiting thread:
# its reads still work.
LATE_ATEXIT = r'''
import atexit, sys
def late():
    print("late:", mc.get(sys.argv[2] + "k"), mc.get_multi([sys.argv[2] + "k"]), flush=True)
atexit.register(late)
import mcpool
mc = mcpool.Client([sys.argv[1]])
mc.set(sys.argv[2] + "k", "v")
'''


def _run(code, server, prefix):
    env = dict(os.environ)
    site = os.path.dirname(os.path.dirname(os.path.abspath(mcpool.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (site, env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-c", code, server.addr, prefix], env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("code", [HITS, HOOK], ids=["reads_that_hit", "on_operation_hook"])
def test_exit_with_daemon_threads_in_mcpool_calls_is_clean(server, prefix, code):
    for i in range(RUNS):
        p = _run(code, server, prefix)
        assert p.returncode == 0 and p.stdout == "done\n", \
            "run %d: exit status %d (134: the abort)\n%s" % (i, p.returncode, p.stderr[-2000:])
        assert "FATAL" not in p.stderr, p.stderr[-2000:]


def test_reads_in_a_later_atexit_handler_still_work(server, prefix):
    p = _run(LATE_ATEXIT, server, prefix)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout == "late: v {'%sk': 'v'}\n" % prefix, (p.stdout, p.stderr[-2000:])
