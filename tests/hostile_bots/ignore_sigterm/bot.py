"""Hostile bot: ignores SIGTERM, SIGINT and SIGHUP (the SDK's handlers are swapped for
SIG_IGN as it installs them) and so does a child it starts at StartGame, so stopping it
politely does nothing; the launcher must still end both.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, attempt, helper, main
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, attempt, helper, main

IGNORED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_install = signal.signal


def deaf(signum: int, handler: Any) -> Any:
    """``signal.signal`` as the SDK will call it: every stop signal ends up ignored."""
    return _install(signum, signal.SIG_IGN if signum in IGNORED else handler)


def deaf_child() -> str:
    """A child that ignores them too (it inherits SIG_IGN through exec)."""
    child = helper("import time; time.sleep(10**9)")
    return f"child {child.pid} ignores them too"


class IgnoreSigtermBot(HostileBot):
    def attack_at_start(self, game: Game) -> None:
        attempt("ignore SIGTERM, SIGINT, SIGHUP", deaf_child)


if __name__ == "__main__":
    for s in IGNORED:
        signal.signal(s, signal.SIG_IGN)
    signal.signal = deaf  # type: ignore[assignment]
    main(IgnoreSigtermBot())
