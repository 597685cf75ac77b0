"""Run sushy-tools' Redfish emulator the way Podium's tests need it.

    .venv-peers/bin/python tests/peers/sushy_emulator.py \
        [--power-delay SECONDS] [--parent-pid PID] \
        --config emu.py -i 127.0.0.1 -p PORT [--ssl-certificate C --ssl-key K] ...

Every argument this wrapper does not know is passed on to sushy-emulator
(`sushy_tools.emulator.main.main()`), so its whole CLI works: --config,
-i/--interface, -p/--port, --ssl-certificate, --ssl-key, --feature-set, --fake,
--debug.

Differences from plain `sushy-emulator` (checked against sushy-tools 2.2.0):

* All state lives in memory. `memoize.PersistentDict` (sqlite under
  SUSHY_EMULATOR_STATE_DIR) is replaced by `MemoryDict` before main() runs, so
  a restart starts from the config again and nothing leaks between tests.
  MemoryDict stores pickled copies, as PersistentDict does: a plain `dict` is
  not enough, because the drivers rely on getting copies (the virtual media
  driver stores the same template dict for every system, so with a plain dict
  inserting media into one system's Cd would insert it into all of them), and
  volumes.py calls make_permanent() without checking that it exists.
* Power changes land at once. The fake driver computes
  `apply_time = int(time.time()) + random.randint(1, 11)` and applies the
  pending state on the next read once time.time() >= apply_time. We replace
  the `random` module seen by fakedriver with one whose randint() returns 0,
  or, with --power-delay SECONDS, exactly that delay (the fraction of the
  second that int() drops is added back, so the delay is not off by up to 1 s).
* It exits when its parent process dies (a killed test leaves no orphan): a
  daemon thread polls os.getppid() and calls os._exit() when the parent is
  gone.
"""

import argparse
import os
import pickle
import random as _real_random
import sys
import threading
import time
from collections.abc import MutableMapping


class MemoryDict(MutableMapping):
    """In-memory stand-in for sushy_tools.emulator.memoize.PersistentDict.

    Keeps PersistentDict's copy semantics (values are pickled on write and
    unpickled on read) but never touches the disk.
    """

    def __init__(self):
        self._data = {}
        self._lock = threading.Lock()

    def make_permanent(self, dbpath, dbfile):
        # PersistentDict opens sqlite here; state stays in memory instead.
        pass

    def __getitem__(self, key):
        with self._lock:
            blob = self._data[key]
        return pickle.loads(blob)

    def __setitem__(self, key, value):
        blob = pickle.dumps(value)
        with self._lock:
            self._data[key] = blob

    def __delitem__(self, key):
        with self._lock:
            del self._data[key]

    def __iter__(self):
        with self._lock:
            keys = list(self._data)
        return iter(keys)

    def __len__(self):
        with self._lock:
            return len(self._data)


class FixedDelayRandom:
    """Stands in for the `random` module inside fakedriver."""

    def __init__(self, delay):
        self._delay = delay

    def randint(self, a, b):
        # Only use: apply_time = int(time.time()) + random.randint(1, 11).
        if self._delay <= 0:
            return 0
        now = time.time()
        return self._delay + (now - int(now))

    def __getattr__(self, name):
        return getattr(_real_random, name)


def exit_with_parent(parent_pid):
    def watch():
        while True:
            if os.getppid() != parent_pid:
                os._exit(0)
            time.sleep(0.2)

    if os.getppid() != parent_pid:
        os._exit(0)
    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def main():
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description="sushy-emulator with in-memory state and no random "
        "power-change delay; other arguments go to sushy-emulator")
    parser.add_argument(
        "--power-delay", type=float, default=0.0, metavar="SECONDS",
        help="fixed delay before a power change shows (default 0: at once)")
    parser.add_argument(
        "--parent-pid", type=int, default=None, metavar="PID",
        help="exit when this process is no longer our parent "
        "(default: the parent at start)")
    ours, rest = parser.parse_known_args()
    if rest and rest[0] == "--":
        rest = rest[1:]

    exit_with_parent(ours.parent_pid if ours.parent_pid is not None
                     else os.getppid())

    # Imported only now: importing sushy_tools.emulator.main creates the Flask
    # app, which is harmless, but the drivers are built lazily on first use,
    # after the patches below.
    from sushy_tools.emulator import main as emulator_main
    from sushy_tools.emulator import memoize
    from sushy_tools.emulator.resources.systems import fakedriver

    memoize.PersistentDict = MemoryDict
    fakedriver.random = FixedDelayRandom(ours.power_delay)

    sys.argv = [sys.argv[0]] + rest
    return emulator_main.main()


if __name__ == "__main__":
    sys.exit(main())
