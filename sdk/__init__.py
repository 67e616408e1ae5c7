"""The Python SDK for bot authors: strategies that decide from a seat's view alone."""

from sdk.bot import Bot, Game, StrategyBot
from sdk.serve import run, serve, start_server

__all__ = ["Bot", "Game", "StrategyBot", "run", "serve", "start_server"]
