"""Ladder quality on real games (issue 22's proof): a real ladder of the three sample bots,
three authors each (nine versions), two players, unsandboxed. bench/ladder.py plays the same
kind of ladder bigger (four players, sandboxed, a few hundred games) and prints the figures;
here only what held in every run is asserted, and nothing about time.

Measured before choosing the size (bench/README.md, "The ladder"): after 60 games the full
order (every planner version above every greedy one above every random one) was wrong in one
run of six, a lucky random version above a greedy one; the classes' mean mu and planner above
random were right in every run, and matchmaking's mean |mu diff| was 0.5 to 0.65 of random
pairing's in every run. So: 70 games, those two asserted, and the full order only reported.
"""

from __future__ import annotations

import random
from pathlib import Path

from bench.ladder import play_ladder, quality
from referee.hosting.sandbox import SandboxConfig

GAMES = 70  #: after every version is active (some 15 per version): 12 to 27 s here


def test_the_ladder_orders_the_sample_bots_and_pairs_close_ratings(tmp_path: Path) -> None:
    run = play_ladder(
        tmp_path,
        games=GAMES,
        copies=3,
        players=2,
        workers=2,
        sandbox=SandboxConfig(enabled=False),
        rng=random.Random(22),
    )
    q = quality(run, random.Random(1))
    means = q.mean_mu
    assert means["planner"] > means["greedy"] > means["random"], q.mu
    assert min(q.mu["planner"]) > max(q.mu["random"]), q.mu
    assert q.mean_mu_diff < q.random_mu_diff, (q.mean_mu_diff, q.random_mu_diff)
    assert q.games_min > 0
