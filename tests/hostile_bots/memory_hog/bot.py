"""Hostile bot: at its first decision, allocates ``memory_mb`` MB (default 5000) and touches
every page, reporting its progress. A MemoryError is not caught: the SDK turns it into an
error status, which is the bot's own fault. If the kernel kills it instead, the last
progress line shows how far it got.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, main, report, targets
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, main, report, targets

CHUNK_MB = 32


class MemoryHogBot(HostileBot):
    def attack_at_first_act(self, game: Game) -> None:
        want = int(targets().get("memory_mb", 5000))
        hoard: list[bytes] = []
        what = f"allocate {want} MB"
        try:
            while len(hoard) * CHUNK_MB < want:
                hoard.append(b"\x5a" * (CHUNK_MB << 20))  # written, so resident
                if len(hoard) % 4 == 0:
                    report(what, f"reached {len(hoard) * CHUNK_MB} MB")
        except MemoryError:
            reached = len(hoard) * CHUNK_MB
            hoard.clear()
            report(what, f"MemoryError at {reached} MB")
            raise
        report(what, f"SUCCEEDED {len(hoard) * CHUNK_MB} MB")
        hoard.clear()


if __name__ == "__main__":
    main(MemoryHogBot())
