"""The wire benchmark still runs at its smallest, and the tournament benchmark still rebuilds
a recorded game's calls: both reach into the referee (a sizing seat, the request builder, the
bare exchange's steps), so a change there can break them without failing anything else (the
channel change of issue 25's third pass did). Only that they run and report what they say is
checked; their figures are for bench/README.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _bench(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, *args, "--no-sandbox", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def test_the_wire_bench_plays_its_games_and_the_bare_exchange() -> None:
    figures = _bench("bench/wire.py", "--games", "1", "--repeat", "1")
    assert figures["games"] == 1 and figures["sandbox"] is False
    referee, bare = figures["referee"], figures["bare"]
    assert referee["decisions_per_game"] > 0 and referee["faults"] == 0
    assert bare["messages_per_s"] > 0


def test_the_tournament_bench_rebuilds_a_recorded_games_calls() -> None:
    """``bench/tournament.py`` rebuilds each stored game's calls from its record (the engine
    replayed, each request rebuilt for its size) for the bare exchange; a whole night of it
    takes 8 s, so a local game's record stands in for one here."""
    from bench import tournament, wire
    from sdk.local import RandomBot, play_game

    record = play_game("usa", [RandomBot() for _ in range(4)], seed=3).data
    engine_s, calls = tournament._replay(record)
    decisions = len(record["actions"])
    assert engine_s > 0 and len(calls) == decisions + 2 * 4
    assert [c.method for c in calls[:4] + calls[-4:]] == ["StartGame"] * 4 + ["EndGame"] * 4
    assert all(c.request_bytes > 0 for c in calls)
    steps = wire.steps(calls)  # every seat's StartGame at once, each Act alone, EndGame at once
    assert len(steps) == decisions + 2 and len(steps[0]) == len(steps[-1]) == 4
