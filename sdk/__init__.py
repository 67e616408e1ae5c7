"""The Python SDK for bot authors: strategies that decide from a seat's view alone.

What a bot compares and names comes from here (docs/bot-api.md), so that no bot spells a phase
or a card by hand: ``view.phase is Phase.TURN``, ``card_name(view.face_up[0])``.
"""

from referee.games.common.cards import (
    CARD_NAMES,
    COLOURS,
    GRAY,
    LOCOMOTIVE,
    NUM_CARD_KINDS,
    card_name,
)
from referee.games.common.codec import ViewPhase as Phase
from referee.games.common.phase import EMPTY
from sdk.bot import Bot, Game, StrategyBot
from sdk.serve import run, serve, start_server

__all__ = [
    "CARD_NAMES",
    "COLOURS",
    "EMPTY",
    "GRAY",
    "LOCOMOTIVE",
    "NUM_CARD_KINDS",
    "Bot",
    "Game",
    "Phase",
    "StrategyBot",
    "card_name",
    "run",
    "serve",
    "start_server",
]
