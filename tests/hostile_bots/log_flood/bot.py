"""Hostile bot: at its first decision, writes ``flood_mb`` MB (default 250) to stdout and
stderr, 1 MB at a time and alternately, before it answers.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, main, report, targets
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, main, report, targets

LINE = b"FLOOD " + b"x" * 1017 + b"\n"  # 1 KB


class LogFloodBot(HostileBot):
    def attack_at_first_act(self, game: Game) -> None:
        megabytes = int(targets().get("flood_mb", 250))
        report(f"write {megabytes} MB to stdout and stderr", "starting")
        chunk = LINE * 1024
        for i in range(megabytes):
            view = memoryview(chunk)
            while view:
                view = view[os.write(1 + i % 2, view) :]
        report(f"write {megabytes} MB to stdout and stderr", "SUCCEEDED")


if __name__ == "__main__":
    main(LogFloodBot())
