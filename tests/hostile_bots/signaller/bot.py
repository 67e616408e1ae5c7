"""Hostile bot: at StartGame, sends SIGKILL to the referee and the other bots (``pids``: their
pids as the host numbers them), to every process it can see, and to all with ``kill(-1)``.

NEVER RUN IT UNSANDBOXED: outside a PID namespace of its own this would kill the referee, the
other bots and whatever else its user runs. As a guard, it sends nothing while its PID
namespace is the referee's (``host_pidns``, or unknown) and reports ``NOT SENT`` instead.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import (
        HostileBot,
        attempt,
        main,
        report,
        targets,
        visible_processes,
    )
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, attempt, main, report, targets, visible_processes


def send(pid: int) -> str:
    os.kill(pid, signal.SIGKILL)
    return "sent SIGKILL"


class SignallerBot(HostileBot):
    def attack_at_start(self, game: Game) -> None:
        t = targets()
        own_ns = os.readlink("/proc/self/ns/pid")
        named = [int(p) for p in t.get("pids", [])]
        seen = [p for p in visible_processes() if p != os.getpid()]
        if t.get("host_pidns") in (None, own_ns):
            for pid in [*named, *seen, -1]:
                report(f"kill {pid}", "NOT SENT: this bot shares the referee's PID namespace")
            return
        report("visible processes", str(visible_processes()))
        for pid in named:
            attempt(f"kill named pid {pid}", send, pid)
        for pid in seen:
            attempt(f"kill visible pid {pid}", send, pid)
        attempt("kill -1", send, -1)
        report("visible processes afterwards", str(visible_processes()))


if __name__ == "__main__":
    main(SignallerBot())
