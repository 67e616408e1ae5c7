"""The random sample bot: :class:`sdk.strategies.RandomStrategy` in the board games and
:class:`sdk.strategies.card.CardRandomStrategy` in the card game, behind the wire.

Run it with ``python bot.py [--address HOST:PORT]`` (or TTR_BOT_ADDRESS=HOST:PORT).
"""

from __future__ import annotations

from sdk import StrategyBot, run
from sdk.strategies import CardRandomStrategy, RandomStrategy

#: the bot (a module value, so tests can serve it in-process)
BOT = StrategyBot(RandomStrategy, CardRandomStrategy)

if __name__ == "__main__":
    run(BOT)
