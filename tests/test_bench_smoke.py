"""The wire and tournament benchmarks still run, at their smallest: they drive the referee
through its internals (a sizing seat, the bare exchange's steps), so a change there can break
them without failing anything else (the channel change of issue 25's third pass did). Only
that they run and report what they say is checked; their figures are for bench/README.md."""

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


def test_the_tournament_bench_plays_a_round_and_replays_it_bare() -> None:
    figures = _bench("bench/tournament.py", "--rounds", "1", "--workers", "1")
    assert figures["games"] == 4  # one round robin of four bots: four rotations
    assert figures["bare_calls"] > 4 * 4 * 2  # Start+End, and Acts
    assert figures["ratio_to_ideal"] > 0 and figures["tournament_cpu_s"] > 0
