"""What every hostile test bot shares: its targets, its marker, the ``ATTACK`` report lines and
a base bot that plays legal random moves around its attack.

In the sandbox a bot sees only its own folder, so the conformance test copies this file into
each bot's folder beside ``bot.py`` (together with ``targets.json``, what to attack); a bot
run straight from this repository finds it one folder up.

Every process of a hostile bot carries the test's marker in its command line (the bot
re-executes itself with it, and forks inherit it), so the test can find anything of it left
running by scanning /proc.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(sys.argv[0]).resolve().parent


def targets() -> dict[str, Any]:
    """``targets.json`` from the bot's folder, read afresh: the test may add to it (e.g. the
    addresses of bots started after this one) before the game starts."""
    try:
        data: dict[str, Any] = json.loads((HERE / "targets.json").read_text())
    except (OSError, ValueError):
        return {}
    return data


MARKER: str = str(targets().get("marker", "ttr-hostile"))

# Re-execute once with the marker as an argument, so that it shows in /proc/PID/cmdline of
# this process and of every fork of it; before the SDK's imports, which would be paid twice.
if MARKER not in sys.argv:
    os.execv(sys.executable, [sys.executable, sys.argv[0], MARKER])

from referee.games.board import Action, SeatView  # noqa: E402
from sdk import Bot, run  # noqa: E402
from sdk.bot import Game  # noqa: E402
from sdk.strategies import RandomStrategy  # noqa: E402


def report(what: str, outcome: str) -> None:
    """One line per attempt; the test reads them from the bot's log."""
    line = " ".join(f"ATTACK {what}: {outcome}".split())
    print(line[:600], file=sys.stderr, flush=True)


def attempt(what: str, action: Callable[..., object], *args: object) -> bool:
    """Run one attack, ``action(*args)``; report ``SUCCEEDED <detail>`` or the exception that
    stopped it."""
    try:
        detail = action(*args)
    except Exception as e:
        report(what, f"{type(e).__name__}: {e}")
        return False
    report(what, "SUCCEEDED" + ("" if detail is None else f" {detail}"))
    return True


def helper(code: str, *args: str) -> subprocess.Popen[str]:
    """Run ``code`` in a new Python process (``sys.argv[1]`` is the marker, then ``args``),
    its stdout a pipe. Forks are made there: a fork of this gRPC process may die at once in
    gRPC's fork handler, which would blunt the attack."""
    return subprocess.Popen(
        [sys.executable, "-c", code, MARKER, *args], stdout=subprocess.PIPE, text=True
    )


def visible_processes() -> dict[int, str]:
    """Every process this bot can see in /proc, with its command line."""
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                raw = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            found[int(entry)] = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    return found


class HostileBot(Bot):
    """Plays legal random moves; subclasses attack in the hooks, once per game."""

    def on_start(self, game: Game) -> None:
        strategy = RandomStrategy()
        strategy.new_game(game.ruleset, game.seat, zlib.crc32(game.game_id.encode()))
        game.state = strategy
        self.attack_at_start(game)

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        game = self.game
        if game.decisions == 1:
            self.attack_at_first_act(game)
        strategy: RandomStrategy = game.state
        return strategy.choose(view, legal, game.ruleset)

    def attack_at_start(self, game: Game) -> None:
        """StartGame: the attacks that need no decision."""

    def attack_at_first_act(self, game: Game) -> None:
        """The first decision: the attacks the referee waits on (they use its clock)."""


def main(bot: Bot) -> None:
    """Serve ``bot`` at the launcher's address (the marker argument is not the SDK's)."""
    run(bot, argv=[])
