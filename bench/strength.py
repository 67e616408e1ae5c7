"""Strength of the sample strategies: win rates of one seat against three others.

    python bench/strength.py [--games N] [--seed S] [--matchup NAME ...] [--players P]

The hero's seat rotates (game ``i`` seats it at ``i % players``), so no matchup is won or
lost on the first-player advantage. A win is rank 1, ties included (RULINGS 8). The issue's
targets are planner > 90% against random and > 60% against greedy in 4-player games; the
95% Wilson interval says whether a run of N games shows that.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from referee.rules import Ruleset, load_ruleset
from sdk.strategies import (
    GreedyStrategy,
    PlannerStrategy,
    RandomStrategy,
    Strategy,
    play_match,
)

FACTORIES: dict[str, Callable[[int], Strategy]] = {
    "random": RandomStrategy,
    "greedy": GreedyStrategy,
    "planner": PlannerStrategy,
}

#: (hero, opponent) -> the issue's target win rate for the hero (None: reported only)
MATCHUPS: dict[str, tuple[str, str, float | None]] = {
    "planner-random": ("planner", "random", 0.90),
    "planner-greedy": ("planner", "greedy", 0.60),
    "greedy-random": ("greedy", "random", None),
}


@dataclass(frozen=True, slots=True)
class Result:
    hero: str
    opponent: str
    players: int
    games: int
    wins: int
    hero_mean: float
    best_opponent_mean: float
    seconds: float

    @property
    def rate(self) -> float:
        return self.wins / self.games if self.games else 0.0


def wilson(wins: int, games: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval: honest near 0 and 1, where the normal one is not."""
    if games == 0:
        return 0.0, 1.0
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def run_matchup(
    ruleset: Ruleset, hero: str, opponent: str, players: int, games: int, seed: int
) -> Result:
    """``games`` games with seeds ``seed, seed+1, ...``; strategies are seeded per seat so
    two runs with the same arguments give the same numbers."""
    wins = 0
    hero_scores: list[int] = []
    best_opponent: list[int] = []
    start = time.perf_counter()
    for i in range(games):
        game_seed = seed + i
        hero_seat = i % players
        strategies = [
            FACTORIES[hero if s == hero_seat else opponent](1000 * game_seed + s)
            for s in range(players)
        ]
        result = play_match(ruleset, strategies, game_seed)
        mine = result.seats[hero_seat]
        wins += mine.rank == 1
        hero_scores.append(mine.total)
        best_opponent.append(max(s.total for s in result.seats if s.seat != hero_seat))
    return Result(
        hero,
        opponent,
        players,
        games,
        wins,
        statistics.fmean(hero_scores) if hero_scores else 0.0,
        statistics.fmean(best_opponent) if best_opponent else 0.0,
        time.perf_counter() - start,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=200, help="games per matchup (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="first game seed (default 1)")
    parser.add_argument("--players", type=int, default=4, help="seats per game (default 4)")
    parser.add_argument("--variant", default="usa")
    parser.add_argument(
        "--matchup",
        action="append",
        choices=sorted(MATCHUPS),
        help="run only these (repeatable; default all)",
    )
    args = parser.parse_args()
    ruleset = load_ruleset(args.variant)
    print(
        f"{args.variant}, {args.players} players, {args.games} games per matchup, "
        f"seeds {args.seed}..{args.seed + args.games - 1}, hero seat rotating"
    )
    for name in args.matchup or list(MATCHUPS):
        hero, opponent, target = MATCHUPS[name]
        r = run_matchup(ruleset, hero, opponent, args.players, args.games, args.seed)
        lo, hi = wilson(r.wins, r.games)
        verdict = ""
        if target is not None:
            if lo > target:
                verdict = f"  target > {target:.0%}: met"
            elif hi < target:
                verdict = f"  target > {target:.0%}: missed"
            else:
                verdict = f"  target > {target:.0%}: inconclusive"
        print(
            f"{hero:>8} vs {args.players - 1} x {opponent:<7} {r.wins:4d}/{r.games:<4d} "
            f"= {r.rate:6.1%}  95% CI [{lo:6.1%}, {hi:6.1%}]  "
            f"mean score {r.hero_mean:6.1f} vs best other {r.best_opponent_mean:6.1f}  "
            f"({r.seconds:.1f}s){verdict}"
        )


if __name__ == "__main__":
    main()
