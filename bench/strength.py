"""Strength of the sample strategies: win rates of one seat against the others, per variant.

    python bench/strength.py [--variant NAME ... | --variant all] [--players P ...]
                             [--games N] [--seed S] [--matchup NAME ...] [--jobs J] [--markdown]

The hero's seat rotates (game ``i`` seats it at ``i % players``), so no matchup is won or
lost on the first-player advantage; the other seats are all the opponent strategy. A win is
rank 1, ties included (RULINGS 8). The issue's targets are planner > 90% against random and
> 60% against greedy in 4-player games of every board variant (and 2-player New York); the
95% Wilson interval says whether a run of N games shows that: "met" only when the whole
interval clears the target.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from referee.games.registry import family_of
from referee.games.registry import load as load_ruleset
from referee.games.registry import variants as available_variants
from sdk.strategies import (
    CardGreedyStrategy,
    CardPlannerStrategy,
    CardRandomStrategy,
    GreedyStrategy,
    PlannerStrategy,
    RandomStrategy,
    play_card_match,
    play_match,
)

#: per rules family: the strategies by name, and how a game of them is played in-process
FACTORIES: dict[str, dict[str, Callable[[int], Any]]] = {
    "board": {"random": RandomStrategy, "greedy": GreedyStrategy, "planner": PlannerStrategy},
    "card": {
        "random": CardRandomStrategy,
        "greedy": CardGreedyStrategy,
        "planner": CardPlannerStrategy,
    },
}
PLAY: dict[str, Callable[[Any, Sequence[Any], int], Any]] = {
    "board": play_match,
    "card": play_card_match,
}

#: (hero, opponent) -> the issue's target win rate for the hero (None: reported only)
MATCHUPS: dict[str, tuple[str, str, float | None]] = {
    "planner-random": ("planner", "random", 0.90),
    "planner-greedy": ("planner", "greedy", 0.60),
    "greedy-random": ("greedy", "random", None),
}

#: Player counts the issue sets targets for: 4 everywhere, and New York's 2-player game too
#: (its 2-player rules differ: one track of a double, 001:147-153). Data, not a branch.
TARGET_PLAYERS: dict[str, tuple[int, ...]] = {"newyork": (4, 2), "cardgame": (4, 3, 2)}
DEFAULT_PLAYERS = (4,)


@dataclass(frozen=True, slots=True)
class Result:
    variant: str
    hero: str
    opponent: str
    players: int
    games: int
    wins: int
    hero_mean: float
    best_opponent_mean: float
    seconds: float  #: summed over the games (CPU-ish time, whatever the number of jobs)

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


def verdict(wins: int, games: int, target: float | None) -> str:
    """``met`` only when the whole interval is above the target, ``missed`` when it is all
    below: a rate that merely crosses the line on N games proves nothing either way."""
    if target is None:
        return ""
    lo, hi = wilson(wins, games)
    if lo > target:
        return "met"
    if hi < target:
        return "missed"
    return "inconclusive"


def play_one(
    variant: str, hero: str, opponent: str, players: int, game_seed: int, hero_seat: int
) -> tuple[bool, int, int, float]:
    """One game: (hero won, hero's score, best other score, seconds). Module-level so a
    process pool can run it."""
    ruleset = load_ruleset(variant)
    family = family_of(ruleset).name
    strategies = [
        FACTORIES[family][hero if s == hero_seat else opponent](1000 * game_seed + s)
        for s in range(players)
    ]
    start = time.perf_counter()
    result = PLAY[family](ruleset, strategies, game_seed)
    seconds = time.perf_counter() - start
    mine = result.seats[hero_seat]
    best_other = max(s.total for s in result.seats if s.seat != hero_seat)
    return mine.rank == 1, mine.total, best_other, seconds


def _play_batch(
    jobs: Sequence[tuple[str, str, str, int, int, int]],
) -> list[tuple[bool, int, int, float]]:
    return [play_one(*job) for job in jobs]


def run_matchup(
    variant: str,
    hero: str,
    opponent: str,
    players: int,
    games: int,
    seed: int,
    pool: ProcessPoolExecutor | None = None,
    workers: int = 1,
) -> Result:
    """``games`` games with seeds ``seed, seed+1, ...``; strategies are seeded per seat so
    two runs with the same arguments give the same numbers, in one process or several."""
    jobs = [(variant, hero, opponent, players, seed + i, i % players) for i in range(games)]
    if pool is None:
        played = _play_batch(jobs)
    else:
        size = max(1, math.ceil(len(jobs) / (8 * max(1, workers))))
        batches = [jobs[i : i + size] for i in range(0, len(jobs), size)]
        played = [g for batch in pool.map(_play_batch, batches) for g in batch]
    return Result(
        variant,
        hero,
        opponent,
        players,
        games,
        sum(won for won, _, _, _ in played),
        statistics.fmean(score for _, score, _, _ in played) if played else 0.0,
        statistics.fmean(other for _, _, other, _ in played) if played else 0.0,
        sum(seconds for _, _, _, seconds in played),
    )


def cells(variants: Iterable[str], players: Sequence[int] | None) -> list[tuple[str, int]]:
    """(variant, player count) pairs to measure, dropping counts a variant does not allow."""
    out = []
    for name in variants:
        ruleset = load_ruleset(name)
        for p in players or TARGET_PLAYERS.get(name, DEFAULT_PLAYERS):
            if ruleset.min_players <= p <= ruleset.max_players:
                out.append((name, p))
    return out


def describe(result: Result, target: float | None) -> str:
    lo, hi = wilson(result.wins, result.games)
    goal = f"  > {target:.0%}: {verdict(result.wins, result.games, target)}" if target else ""
    return (
        f"  {result.hero:>8} vs {result.players - 1} x {result.opponent:<7} "
        f"{result.wins:4d}/{result.games:<4d} = {result.rate:6.1%}  "
        f"95% CI [{lo:6.1%}, {hi:6.1%}]  "
        f"mean score {result.hero_mean:6.1f} vs best other {result.best_opponent_mean:6.1f}  "
        f"({1000 * result.seconds / max(1, result.games):.0f} ms/game){goal}"
    )


def markdown(results: Sequence[tuple[Result, float | None]]) -> str:
    lines = [
        "| variant | players | matchup | games | hero wins | 95% interval | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for r, target in results:
        lo, hi = wilson(r.wins, r.games)
        goal = f"> {target:.0%}: {verdict(r.wins, r.games, target)}" if target else "-"
        lines.append(
            f"| {r.variant} | {r.players} | {r.hero} vs {r.players - 1} {r.opponent} | "
            f"{r.games} | {r.rate:.1%} | {lo:.1%}-{hi:.1%} | {goal} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=200, help="games per matchup (default 200)")
    parser.add_argument("--seed", type=int, default=1, help="first game seed (default 1)")
    parser.add_argument(
        "--variant",
        action="append",
        help="variant, cardgame included (repeatable, or 'all'; default usa)",
    )
    parser.add_argument(
        "--players",
        type=int,
        action="append",
        help="seats per game (repeatable; default the issue's: 4, and 2 too for newyork)",
    )
    parser.add_argument(
        "--matchup",
        action="append",
        choices=sorted(MATCHUPS),
        help="run only these (repeatable; default all)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--markdown", action="store_true", help="also print a markdown table")
    args = parser.parse_args()

    known = available_variants()
    wanted: list[str] = []
    for name in args.variant or ["usa"]:
        for v in known if name == "all" else [name]:
            if v not in known:
                parser.error(f"unknown variant {v!r}; available: {', '.join(known)}, all")
            if v not in wanted:
                wanted.append(v)

    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    results: list[tuple[Result, float | None]] = []
    start = time.perf_counter()
    try:
        for variant, players in cells(wanted, args.players):
            print(
                f"{variant}, {players} players, {args.games} games per matchup, "
                f"seeds {args.seed}..{args.seed + args.games - 1}, hero seat rotating",
                flush=True,
            )
            for name in args.matchup or list(MATCHUPS):
                hero, opponent, target = MATCHUPS[name]
                r = run_matchup(
                    variant, hero, opponent, players, args.games, args.seed, pool, args.jobs
                )
                results.append((r, target))
                print(describe(r, target), flush=True)
    finally:
        if pool is not None:
            pool.shutdown()
    verdicts = [verdict(r.wins, r.games, t) for r, t in results if t is not None]
    print(
        f"\ntargets: {verdicts.count('met')} met, {verdicts.count('inconclusive')} "
        f"inconclusive, {verdicts.count('missed')} missed of {len(verdicts)} "
        f"({time.perf_counter() - start:.0f}s wall, {args.jobs} job(s))"
    )
    if args.markdown:
        print()
        print(markdown(results))


if __name__ == "__main__":
    main()
