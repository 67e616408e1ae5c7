"""Hostile bot: at StartGame, starts daemons that leave its process group and session.

Each is a grandchild (double fork): one calls ``setsid()``, one ``setpgid(0, 0)``; both ignore
SIGTERM, SIGINT and SIGHUP and sleep forever with the marker in their command line. Stopping
the bot must end them too.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, attempt, helper, main
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, attempt, helper, main

#: argv: marker, how; prints the daemon's pid and exits, leaving the daemon behind
DAEMONIZE = """
import os, signal, sys, time
marker, how = sys.argv[1:3]
if how == "setsid":
    os.setsid()
else:
    os.setpgid(0, 0)
pid = os.fork()
if pid == 0:
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    sleep = "import time; time.sleep(10**9)"
    os.execv(sys.executable, [sys.executable, "-c", sleep, f"{marker}-{how}"])
print(pid, os.getsid(pid), os.getpgid(pid), flush=True)
"""


def daemon(how: str) -> str:
    """Double-fork a sleeper that left the bot's session (``setsid``) or process group."""
    proc = helper(DAEMONIZE, how)
    assert proc.stdout is not None
    out = proc.stdout.readline()  # the daemon keeps the pipe open: read no further
    proc.stdout.close()
    if proc.wait(timeout=10) != 0 or not out.strip():
        raise OSError(f"the daemon did not start (status {proc.returncode})")
    pid, sid, pgid = out.split()
    return f"daemon pid {pid}, session {sid}, group {pgid} (as this bot numbers them)"


class SetsidBot(HostileBot):
    def attack_at_start(self, game: Game) -> None:
        for how in ("setsid", "setpgid"):
            attempt(f"escape by {how}", daemon, how)


if __name__ == "__main__":
    main(SetsidBot())
