"""The greedy sample bot: :class:`sdk.strategies.GreedyStrategy` in the board games and
:class:`sdk.strategies.card.CardGreedyStrategy` in the card game, behind the wire.

Run it with ``python bot.py [--address HOST:PORT]`` (or TTR_BOT_ADDRESS=HOST:PORT).
"""

from __future__ import annotations

from sdk import StrategyBot, run
from sdk.strategies import CardGreedyStrategy, GreedyStrategy

#: the bot (a module value, so tests can serve it in-process)
BOT = StrategyBot(GreedyStrategy, CardGreedyStrategy)

if __name__ == "__main__":
    run(BOT)
