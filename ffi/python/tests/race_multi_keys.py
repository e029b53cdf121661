"""Issue 15 item 3, run in a child process by test_hardening.py (a crash fails the test there).

    python3 race_multi_keys.py HOST:PORT MODE PREFIX       MODE: get_multi | delete_multi | set_multi

Another thread clears the list passed to a multi-key call while the call runs (its GIL is
released), then fills the freed memory with bytes objects of other keys of the same length
("victims"). The call must use the keys it was given, all of them and only them: a binding
that kept borrowed pointers into the list crashes, or deletes/stores/reads the victims.
Exit status 0: every check passed; 1: a check failed (printed); a signal: the crash.
"""
import faulthandler
import sys
import threading
import time

import mcpool

faulthandler.enable()

ADDR, MODE, PREFIX = sys.argv[1:4]
N = {"get_multi": 3000, "delete_multi": 1500, "set_multi": 1500}[MODE]
ROUNDS = {"get_multi": 60, "delete_multi": 6, "set_multi": 6}[MODE]
DEADLINE = time.monotonic() + 60

mc = mcpool.Client([ADDR], pool_size=4, timeout=5)
check = mcpool.Client([ADDR], pool_size=2, timeout=5)  # the test's own view of the server


def name(tag, rnd, i):
    # same length for every tag, so a victim's bytes object fits in a freed key's memory
    return "%s%s%03d_%06d" % (PREFIX, tag, rnd, i)


def fresh(tag, rnd, as_bytes=True):
    """New key objects, referenced only by the list returned."""
    if as_bytes:
        return [name(tag, rnd, i).encode() for i in range(N)]
    return [name(tag, rnd, i) for i in range(N)]


def wait_until(cond, what):
    """Polls cond() (a server-side condition) until true; False when out of time."""
    end = min(time.monotonic() + 10, DEADLINE)
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.0005)
    print("timed out waiting for", what)
    return False


class Mutator(threading.Thread):
    """On each go: optionally waits for a server-side sign that the call is under way, then
    clears the shared list and allocates victims' keys (kept, so the memory stays theirs)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.go = threading.Event()
        self.done = threading.Event()
        self.job = None
        self.junk = []
        self.during = 0  # rounds in which the clear happened while the call was known to run

    def run(self):
        while True:
            if not self.go.wait(DEADLINE - time.monotonic()):
                return
            self.go.clear()
            job, self.job = self.job, None
            if job is None:
                return
            lst, started, rnd = job
            if started is not None and wait_until(started, "the call to start"):
                self.during += 1
            del lst[:]
            del job, lst
            self.junk = [name("v", rnd, i).encode() for i in range(N)]
            self.junk += [(name("v", rnd, i).encode(), b"victim-overwritten") for i in range(N)]
            self.done.set()

    def arm(self, lst, rnd, started=None):
        self.done.clear()
        self.job = (lst, started, rnd)
        self.go.set()

    def finish(self):
        if not self.done.wait(max(0.0, DEADLINE - time.monotonic())):
            fail("the mutator did not finish")


def fail(msg):
    print("FAIL:", msg)
    sys.stdout.flush()
    sys.exit(1)


m = Mutator()
m.start()
full = 0  # get_multi rounds that asked for every key (the clear came after the copy)

for rnd in range(ROUNDS):
    if time.monotonic() > DEADLINE:
        fail("out of time in round %d" % rnd)
    # get_multi writes nothing: its rounds share round 0's keys, stored once
    r0 = 0 if MODE == "get_multi" else rnd
    given = [name("g", r0, i) for i in range(N)]
    victims = [name("v", r0, i) for i in range(N)]
    if rnd == r0:
        check.set_multi({k: b"victim" for k in victims})

    if MODE == "get_multi":
        if rnd == 0:
            check.set_multi({k: k for k in given})
        as_bytes = rnd % 2 == 0
        lst = fresh("g", r0, as_bytes)
        m.arm(lst, r0)
        got = mc.get_multi(lst)
        m.finish()
        want = {(k.encode() if as_bytes else k): k for k in given}
        # the clear may come before the call copied the list (then nothing was asked for)
        if got != want and got != {}:
            fail("get_multi round %d: %d entries, %d expected; wrong: %r" % (
                rnd, len(got), N, [k for k in got if want.get(k) != got[k]][:5]))
        full += got == want

    elif MODE == "delete_multi":
        check.set_multi({k: b"given" for k in given})
        lst = fresh("g", rnd)
        first = given[0]
        m.arm(lst, rnd, started=lambda: check.get(first) is None)
        r = mc.delete_multi(lst)
        m.finish()
        left = check.get_multi(given)
        gone = N - len(check.get_multi(victims))
        if r is not True or left or gone:
            fail("delete_multi round %d: returned %r, %d of the %d keys given not deleted, "
                 "%d keys not given deleted" % (rnd, r, len(left), N, gone))

    else:  # set_multi of a mapping whose items() is a list another thread clears
        class Pairs:
            def __init__(self, pairs):
                self.pairs = pairs

            def items(self):
                return self.pairs

        pairs = [(k.encode(), ("value of " + k).encode()) for k in given]
        lst = pairs
        del pairs
        first = given[0]
        m.arm(lst, rnd, started=lambda: check.get(first) is not None)
        failed = mc.set_multi(Pairs(lst))
        m.finish()
        got = check.get_multi(given)
        right = sum(got.get(k) == ("value of " + k).encode() for k in given)
        if failed != [] or right != N or len(got) != N:
            fail("set_multi round %d: not stored %r; %d of %d stored, %d with their value" % (
                rnd, failed[:5], len(got), N, right))

    v = check.get_multi(victims)
    if v != {k: b"victim" for k in victims}:
        fail("%s round %d touched keys it was not given: %r" % (
            MODE, rnd, [k for k in victims if v.get(k) != b"victim"][:5]))
    if MODE != "get_multi" or rnd == ROUNDS - 1:
        check.delete_multi(given + victims)

m.job = None
m.go.set()
if MODE != "get_multi" and m.during == 0:
    fail("the list was never cleared while the call was running")
if MODE == "get_multi" and full == 0:
    fail("the list was cleared before get_multi copied it in every round")
print("ok: %d rounds, %d cleared during the call, %d full get_multi" % (ROUNDS, m.during, full))
