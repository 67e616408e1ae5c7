"""A TTR Arena bot in Python: answers every decision with a uniformly random legal action.

The SDK (``sdk/``) does the gRPC side: it listens where the referee says (TTR_BOT_ADDRESS),
answers health checks, decodes every request into the engine's own types and calls the hooks
below; one process may play several games at once, so what belongs to one game lives in
``self.game`` (its ``state`` slot is free for you). Everything printed to stderr ends up in
the game's log file.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Sequence
from typing import Any

from sdk import Bot, Game, run


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class RandomBot(Bot):
    def on_start(self, game: Game) -> None:
        # game.ruleset holds the map and tickets (a board game) or the card game's setup.
        # Seeded from bot_seed (the referee derives it from the game's seed and this seat), so
        # `ttr play --seed N` replays the same game.
        game.state = random.Random(game.bot_seed)
        log(
            f"game {game.game_id}: start, {game.family} game {game.variant}, "
            f"seat {game.seat} of {game.num_seats}, {game.move_limit_ms} ms a move "
            f"+ {game.bank_ms} ms bank"
        )

    def choose(self, view: Any, legal: Sequence[Any]) -> int:
        game = self.game
        if game.rejection is not None:
            rule, message = game.rejection
            log(f"game {game.game_id}: previous answer rejected: {rule}: {message}")
        rng: random.Random = game.state
        choice = rng.randrange(len(legal))
        log(
            f"game {game.game_id}: {len(game.new_events)} new event(s), {len(legal)} legal "
            f"action(s), chose #{choice}: {legal[choice]}"
        )
        return choice  # an index into `legal`, or one of its actions

    def on_end(self, outcome: Any) -> None:
        game = self.game
        scores = ", ".join(f"seat {s.seat}: {s.total} (rank {s.rank})" for s in outcome.seats)
        log(f"game {game.game_id}: end after {game.decisions} decision(s); {scores}")


if __name__ == "__main__":
    run(RandomBot())
