"""The planner sample bot: :class:`sdk.strategies.PlannerStrategy` behind the wire.

Run it with ``python bot.py [--address HOST:PORT]`` (or TTR_BOT_ADDRESS=HOST:PORT).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from referee.rules import Action, SeatView
from sdk import Bot, run
from sdk.bot import Game
from sdk.strategies import PlannerStrategy


class PlannerBot(Bot):
    """One strategy per game (games may run at once), seeded from the game id."""

    def on_start(self, game: Game) -> None:
        strategy = PlannerStrategy()
        strategy.new_game(game.ruleset, game.seat, zlib.crc32(game.game_id.encode()))
        game.state = strategy

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        strategy: PlannerStrategy = self.game.state
        return strategy.choose(view, legal, self.game.ruleset)


if __name__ == "__main__":
    run(PlannerBot())
