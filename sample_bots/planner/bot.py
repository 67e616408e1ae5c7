"""The planner sample bot: :class:`sdk.strategies.PlannerStrategy` in the board games and
:class:`sdk.strategies.card.CardPlannerStrategy` in the card game, behind the wire.

Run it with ``python bot.py [--address HOST:PORT]`` (or TTR_BOT_ADDRESS=HOST:PORT).
"""

from __future__ import annotations

from sdk import StrategyBot, run
from sdk.strategies import CardPlannerStrategy, PlannerStrategy

#: the bot (a module value, so tests can serve it in-process)
BOT = StrategyBot(PlannerStrategy, CardPlannerStrategy)

if __name__ == "__main__":
    run(BOT)
