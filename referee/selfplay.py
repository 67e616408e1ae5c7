"""In-process games between uniformly random players: the quick check for users and map
designers, and the engines' speed benchmark (``ttr selfplay``), for either rules family."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.games.play import play
from referee.games.registry import AnyRuleset, family_of


@dataclass(frozen=True, slots=True)
class GameResult:
    seed: int
    final: Any  #: the final state (the family's own type)
    outcome: Any  #: the family's outcome: ``seats[i].total`` and ``.rank`` in both
    decisions: int


def play_random_game(ruleset: AnyRuleset, players: int, seed: int) -> GameResult:
    """One game where every decision is uniform over the legal actions.

    The players' choices come from their own RNG (derived from the seed), never from the
    game's, so the deal does not depend on how the players behave.
    """
    randrange = random.Random(f"random-player/{seed}").randrange

    def uniform(_: object, legal: Sequence[Any]) -> Any:
        return legal[randrange(len(legal))]

    played = play(family_of(ruleset), ruleset, [uniform] * players, seed, views=False)
    return GameResult(seed, played.final, played.outcome, played.decisions)


@dataclass(frozen=True, slots=True)
class SelfplayStats:
    variant: str
    players: int
    games: int
    seconds: float
    games_per_s: float
    turns_per_game: float
    decisions_per_game: float
    mean_score: float
    stdev_score: float
    min_score: int
    max_score: int
    mean_winning_score: float
    end_reasons: dict[str, int]


def run_selfplay(
    ruleset: AnyRuleset,
    players: int,
    games: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> tuple[SelfplayStats, list[GameResult]]:
    """Play ``games`` random games with seeds ``seed, seed+1, ...`` on this core."""
    results: list[GameResult] = []
    start = time.perf_counter()
    for i in range(games):
        results.append(play_random_game(ruleset, players, seed + i))
        if progress is not None:
            progress(i + 1)
    seconds = time.perf_counter() - start
    scores = [s.total for r in results for s in r.outcome.seats]
    winning = [max(s.total for s in r.outcome.seats) for r in results]
    reasons: dict[str, int] = {}
    for r in results:
        reasons[r.final.end_reason] = reasons.get(r.final.end_reason, 0) + 1
    stats = SelfplayStats(
        variant=ruleset.ident,
        players=players,
        games=games,
        seconds=round(seconds, 4),
        games_per_s=round(games / seconds, 2) if seconds > 0 else float("inf"),
        turns_per_game=round(statistics.fmean(r.final.turn for r in results), 2),
        decisions_per_game=round(statistics.fmean(r.decisions for r in results), 2),
        mean_score=round(statistics.fmean(scores), 2),
        stdev_score=round(statistics.pstdev(scores), 2),
        min_score=min(scores),
        max_score=max(scores),
        mean_winning_score=round(statistics.fmean(winning), 2),
        end_reasons=reasons,
    )
    return stats, results
