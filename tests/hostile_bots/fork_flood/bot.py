"""Hostile bot: at its first decision, starts ``threads`` threads, then ``processes``
processes (defaults 400 each), and reports how many it got of each.

The threads wait until all are started (or no more can be), then end. The processes are forks
of a helper process that sleep for ever with it (the marker in their command line); ``keep``
of them (default: all) stay alive while it plays on, so with all kept it can hardly answer.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, helper, main, report, targets
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, helper, main, report, targets


def flood_threads(n: int) -> None:
    release = threading.Event()
    threads: list[threading.Thread] = []
    try:
        for _ in range(n):
            thread = threading.Thread(target=release.wait, daemon=True)
            thread.start()
            threads.append(thread)
    except RuntimeError as e:
        report(f"start {n} threads", f"stopped at {len(threads)}: {e}")
    else:
        report(f"start {n} threads", f"SUCCEEDED {len(threads)}")
    release.set()
    for thread in threads:
        thread.join()


#: argv: marker, n, keep; forks up to n sleepers, ends all but ``keep`` of them, prints how
#: far it got, then sleeps with the ones kept
FLOOD = """
import os, signal, sys, time
n, keep = int(sys.argv[2]), int(sys.argv[3])
children, error = [], ""
try:
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            while True:
                time.sleep(3600)
        children.append(pid)
except OSError as e:
    error = str(e)
for pid in children[keep:]:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
print(len(children), error, flush=True)
while True:
    time.sleep(3600)
"""


def flood_processes(n: int, keep: int) -> None:
    try:
        proc = helper(FLOOD, str(n), str(keep))
    except OSError as e:
        report(f"start {n} processes", f"stopped at 0: {e}")
        return
    assert proc.stdout is not None
    started, _, error = proc.stdout.readline().strip().partition(" ")
    if error or not started:
        report(f"start {n} processes", f"stopped at {started or 0}: {error or 'no answer'}")
    else:
        report(f"start {n} processes", f"SUCCEEDED {started}")


class ForkFloodBot(HostileBot):
    def attack_at_first_act(self, game: Game) -> None:
        t = targets()
        flood_threads(int(t.get("threads", 400)))
        n = int(t.get("processes", 400))
        flood_processes(n, int(t.get("keep", n)))


if __name__ == "__main__":
    main(ForkFloodBot())
