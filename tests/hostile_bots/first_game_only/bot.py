"""Hostile bot: behaves only in its first game. It plays legal random moves in the first game
a process of it is asked to play, then exits with status 1 at its first decision of every
later game.

What it attacks. Validation is one game, the first a bot plays: this bot passes it and then
crashes in the games of the tournament. Nothing on the wire tells a validation game from a
scheduled one, and sandboxed it keeps nothing across processes (a fresh /tmp each start), so
it counts the games of its process. The referee restarts a crashed bot for its next game,
and each fresh process again behaves in its first game: about every second game of it
faults. What stops it: the tournament's fault rule (leaderboard/faults.py) disables it once
enough of its recent games faulted, and its games not yet begun are skipped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, main, report
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, main, report


class FirstGameOnlyBot(HostileBot):
    games = 0  #: games this process was asked to play (StartGame calls)

    def attack_at_start(self, game: Game) -> None:
        self.games += 1

    def attack_at_first_act(self, game: Game) -> None:
        if self.games > 1:
            report(f"crash in game {self.games} of this process", "exiting with status 1")
            os._exit(1)


if __name__ == "__main__":
    main(FirstGameOnlyBot())
