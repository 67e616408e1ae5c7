"""The Python SDK for bot authors: strategies that decide from a seat's view alone."""

from sdk.bot import Bot, Game
from sdk.serve import run, serve, start_server

__all__ = ["Bot", "Game", "run", "serve", "start_server"]
