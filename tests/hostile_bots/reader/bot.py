"""Hostile bot: reads what is not its own at StartGame.

Targets: ``read`` -- files to read (another bot's folder, a record, the results store); ``list``
-- folders to list; ``referee_pid`` -- the referee's pid as the host numbers it. Besides those
it reads its parent's and every visible process's command line (looking for ``--seed``), the
environment of the referee and of itself, and /etc/shadow. What it reads it prints, so a
secret that leaks shows up in its log.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, attempt, main, targets, visible_processes
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, attempt, main, targets, visible_processes


def read(path: str) -> str:
    data = Path(path).read_bytes()
    return f"{len(data)} bytes: {data[:200]!r}"


def listdir(path: str) -> str:
    return str(sorted(os.listdir(path))[:40])


def find_seed() -> str:
    """The issue's attack: the referee's ``--seed`` read from /proc/PID/cmdline."""
    hits = [f"{pid}: {cmd}" for pid, cmd in visible_processes().items() if "--seed" in cmd]
    if not hits:
        raise LookupError("no visible process has --seed in its command line")
    return "; ".join(hits)


def own_environment() -> str:
    return " ".join(f"{k}={v[:80]}" for k, v in sorted(os.environ.items()))


class ReaderBot(HostileBot):
    def attack_at_start(self, game: Game) -> None:
        t = targets()
        for path in t.get("read", []):
            attempt(f"read {path}", read, path)
        for path in t.get("list", []):
            attempt(f"list {path}", listdir, path)
        pids = {os.getppid(), 1}
        if "referee_pid" in t:
            pids.add(int(t["referee_pid"]))
        for pid in sorted(pids):
            for what in ("cmdline", "environ"):
                attempt(f"read /proc/{pid}/{what}", read, f"/proc/{pid}/{what}")
            attempt(f"list /proc/{pid}/root", listdir, f"/proc/{pid}/root")
        attempt("find --seed in /proc/*/cmdline", find_seed)
        attempt("read /etc/shadow", read, "/etc/shadow")
        attempt("own environment", own_environment)
        attempt("count visible processes", lambda: len(visible_processes()))


if __name__ == "__main__":
    main(ReaderBot())
