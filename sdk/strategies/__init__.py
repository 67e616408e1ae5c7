"""The sample bots' brains, apart from the SDK's core: strategy objects that decide from a
seat's view alone, for the board games (``board``) and the card game (``card``), each with an
in-process match runner. ``sdk.StrategyBot(board, card)`` serves one of each over gRPC, as the
sample bots do::

    from sdk import StrategyBot, run
    from sdk.strategies import CardPlannerStrategy, PlannerStrategy

    run(StrategyBot(PlannerStrategy, CardPlannerStrategy))

What they share with a bot's own code is the SDK's (``sdk.Bot``, ``sdk.Game``); the helpers
each strategy is built from (plans, needs, stack accounts) stay in their module.
"""

from sdk.strategies.board import (
    GreedyStrategy,
    PlannerStrategy,
    RandomStrategy,
    Strategy,
    play_match,
)
from sdk.strategies.card import (
    CardGreedyStrategy,
    CardPlannerStrategy,
    CardRandomStrategy,
    CardStrategy,
    play_card_match,
)

__all__ = [
    "CardGreedyStrategy",
    "CardPlannerStrategy",
    "CardRandomStrategy",
    "CardStrategy",
    "GreedyStrategy",
    "PlannerStrategy",
    "RandomStrategy",
    "Strategy",
    "play_card_match",
    "play_match",
]
