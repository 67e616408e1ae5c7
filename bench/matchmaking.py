"""Ladder quality of the matchmaking (leaderboard/matchmaking.py), on simulated bots.

    python bench/matchmaking.py [--games N] [--players P] [--copies C] [--seed S]
                                [--resubmit-at G] [--recent R] [--json]

Bots of three hidden true strengths (the sample strategies: random < greedy < planner), each
strategy entered by several authors (copies), play a ladder of N games in one pool. A game's
result is drawn from the strengths as TrueSkill models it (each seat performs its strength
plus normal noise of the environment's beta; higher performance ranks first), and the ratings
follow with the project's own TrueSkill update (``leaderboard.ratings.rate_game`` in
``environment()``). Two ladders are played from the same seed: one paired by ``draw_match``,
one by uniformly random legal games. Printed for each:

- order: whether every planner version ends above every greedy one above every random one, by
  mu (the classes' true order);
- mean |mu diff|: the mean absolute mu difference between the seats of a game, over all pairs
  of seats, at the moment the game was picked, averaged over the games; and, for the
  matchmaking ladder, the same for a random legal game drawn at the same moments from the
  same ratings (the fairest comparison: same ratings, only the pairing differs);
- mean |true diff|: the same with the hidden strengths, which no rating noise blurs;
- spread: games per version, max / min and the standard deviation over the mean;
- class gap: mean planner mu - mean random mu, against the true 2 beta: pairing close
  ratings plays few games across the classes, which leaves the scale stretched;
- with ``--resubmit-at G``: before game G a random-strength author retires its version and
  submits one of planner strength (rated by ``initial_rating``): its games of the rest, and
  how many games it took to stand above every greedy version for good. ``--recent R``
  counts the candidates' games over the pool's last R games (module doc of
  leaderboard/matchmaking.py, rule 2: what a long-running ladder should do).

The test (tests/leaderboard/test_matchmaking.py) runs :func:`simulate` for a few hundred
games and asserts on the same figures.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: bench/ is on the path, the repository not

from leaderboard.matchmaking import (  # noqa: E402
    Candidate,
    MatchSettings,
    NoMatch,
    draw_match,
    initial_rating,
)
from leaderboard.ratings import BETA, Rating, environment, rate_game  # noqa: E402
from leaderboard.store import GameResult, SeatResult  # noqa: E402

#: the hidden strengths: the sample strategies' order, one beta apart, so that the stronger
#: of two neighbouring classes wins ~76% of their head-to-head games (ratings.BETA's meaning)
STRENGTHS: dict[str, float] = {"random": 25.0 - BETA, "greedy": 25.0, "planner": 25.0 + BETA}

Pairing = Callable[[Sequence[Candidate], int, random.Random], tuple[int, ...] | None]


@dataclass(frozen=True, slots=True)
class Bot:
    version: int
    author: str
    strategy: str
    strength: float


@dataclass(slots=True)
class Report:
    pairing: str
    games: int
    players: int
    versions: int
    order_correct: bool
    #: pairs of versions of different strengths whose mu order is the wrong way round
    misordered: int
    mean_mu_diff: float  #: within the ladder's own games, at the moment each was picked
    mean_true_diff: float  #: the same with the hidden strengths
    #: a uniformly random legal game drawn at each of the same moments: the counterfactual
    random_mu_diff: float
    random_true_diff: float
    #: mean planner mu - mean random mu, against the true gap (2 beta): how much the pairing
    #: stretches or squeezes the rating scale
    class_gap: float
    games_max: int
    games_min: int
    games_cv: float  #: standard deviation / mean of games per version
    seconds: float
    final_mu: dict[str, list[float]] = field(default_factory=dict)  #: by strategy, sorted
    #: with ``resubmit_at``: the new version's games, of the ``games - resubmit_at`` left
    resubmit_at: int | None = None
    newcomer_games: int | None = None
    #: its games so far after each game since it entered (``newcomer_games`` is the last)
    newcomer_timeline: list[int] = field(default_factory=list)
    #: ... and the games after its entry until its mu stood above every greedy version's
    newcomer_climbed: int | None = None

    @property
    def spread(self) -> float:
        return self.games_max / self.games_min if self.games_min else float("inf")


def make_bots(copies: int) -> list[Bot]:
    """``copies`` versions of each strategy, each under its own author (ids interleaved, so
    that no tie-break by version id favours a class)."""
    bots = []
    for i, (copy, name) in enumerate(itertools.product(range(copies), STRENGTHS)):
        bots.append(Bot(i + 1, f"{name}-author{copy}", name, STRENGTHS[name]))
    return bots


def random_pairing(
    candidates: Sequence[Candidate], players: int, rng: random.Random
) -> tuple[int, ...] | None:
    """A uniformly random legal game: ``players`` authors at random, one of each one's
    playable versions at random. The baseline the matchmaking is measured against."""
    by_author: dict[str, list[int]] = {}
    for c in sorted(candidates, key=lambda c: c.version):
        if c.playable:
            by_author.setdefault(c.author, []).append(c.version)
    if len(by_author) < players:
        return None
    authors = rng.sample(sorted(by_author), players)
    return tuple(rng.choice(by_author[a]) for a in authors)


def matchmaking_pairing(settings: MatchSettings) -> Pairing:
    def pair(
        candidates: Sequence[Candidate], players: int, rng: random.Random
    ) -> tuple[int, ...] | None:
        match = draw_match(candidates, players, rng, settings)
        if isinstance(match, NoMatch):
            raise AssertionError(match.reason)  # every simulated pool has enough authors
        return match.seats

    return pair


def _mean_pair_diff(values: Sequence[float]) -> float:
    pairs = list(itertools.combinations(values, 2))
    return sum(abs(a - b) for a, b in pairs) / len(pairs)


def _game(index: int, versions: Sequence[int], ranks: Sequence[int]) -> GameResult:
    """A stored game as ratings.rate_game reads it: only the seats' bots and ranks matter."""
    return GameResult(
        game_id=f"sim-{index}",
        tournament_id=0,
        schedule_index=index,
        round=index,
        variant="usa@1",
        num_seats=len(versions),
        seed=index,
        end_reason="last_round",
        decisions=0,
        record_path=None,
        started_at=0.0,
        finished_at=0.0,
        seats=tuple(
            SeatResult(
                seat=seat,
                bot_id=version,
                score=0,
                rank=rank,
                tickets_completed=0,
                tickets_failed=0,
                faults=0,
                defaults=0,
            )
            for seat, (version, rank) in enumerate(zip(versions, ranks, strict=True))
        ),
        faults=(),
    )


def simulate(
    games: int,
    players: int = 4,
    copies: int = 4,
    seed: int = 1,
    settings: MatchSettings | None = None,
    pairing: str = "matchmaking",
    resubmit_at: int | None = None,
    recent: int | None = None,
) -> Report:
    """One simulated ladder of ``games`` games (see the module doc); ``pairing`` is
    "matchmaking" (``draw_match`` with ``settings``) or "random" (:func:`random_pairing`).

    ``resubmit_at``: before that game, the first random-strength author retires its version
    and submits a new one of planner strength, rated by ``initial_rating`` (its old mu, sigma
    reset): the report then says how many of the remaining games it played and after how many
    it stood above every greedy version for good. The fairness spread counts only the
    versions that played from the first game to the last.

    ``recent``: the candidates' ``games`` count only the pool's last ``recent`` games (what a
    long-running ladder should pass, so that a late version is not pulled to catch up the
    whole history); None: all games. The spread is always over all games.

    Three independent streams from ``seed``: the pairing's, the results', and the
    counterfactual random games', so that measuring the counterfactual changes nothing else.
    """
    settings = settings or MatchSettings()
    pair: Pairing = matchmaking_pairing(settings) if pairing == "matchmaking" else random_pairing
    pair_rng, result_rng, other_rng = (random.Random(f"{seed}-{s}") for s in "pro")
    bots = make_bots(copies)
    by_version = {b.version: b for b in bots}
    env = environment()
    ratings = {b.version: Rating(*initial_rating([], settings)) for b in bots}
    played = dict.fromkeys(by_version, 0)
    history: collections.deque[tuple[int, ...]] = collections.deque(maxlen=recent)
    retired: set[int] = set()
    newcomer: Bot | None = None
    climbed: int | None = None
    timeline: list[int] = []
    mu_diffs: list[float] = []
    true_diffs: list[float] = []
    random_mu: list[float] = []
    random_true: list[float] = []
    started = time.perf_counter()
    for index in range(games):
        if index == resubmit_at:
            old = next(b for b in bots if b.strategy == "random")
            previous = Candidate(
                old.version, old.author, ratings[old.version].mu, ratings[old.version].sigma, 0
            )
            newcomer = Bot(max(by_version) + 1, old.author, "planner", STRENGTHS["planner"])
            bots.append(newcomer)
            by_version[newcomer.version] = newcomer
            ratings[newcomer.version] = Rating(*initial_rating([previous], settings))
            played[newcomer.version] = 0
            retired.add(old.version)
        counted = played if recent is None else collections.Counter(itertools.chain(*history))
        candidates = [
            Candidate(v, by_version[v].author, r.mu, r.sigma, counted.get(v, 0), v not in retired)
            for v, r in ratings.items()
        ]
        seats = pair(candidates, players, pair_rng)
        other = random_pairing(candidates, players, other_rng)
        assert seats is not None and other is not None
        for chosen, mu_out, true_out in (
            (seats, mu_diffs, true_diffs),
            (other, random_mu, random_true),
        ):
            mu_out.append(_mean_pair_diff([ratings[v].mu for v in chosen]))
            true_out.append(_mean_pair_diff([by_version[v].strength for v in chosen]))
        performance = [result_rng.gauss(by_version[v].strength, BETA) for v in seats]
        order = sorted(range(players), key=lambda s: -performance[s])
        ranks = [0] * players
        for place, s in enumerate(order, start=1):
            ranks[s] = place
        ratings = rate_game(ratings, _game(index, seats, ranks), env)
        history.append(seats)
        for v in seats:
            played[v] += 1
        if newcomer is not None:
            timeline.append(played[newcomer.version])
            greedy = (ratings[b.version].mu for b in bots if b.strategy == "greedy")
            if ratings[newcomer.version].mu <= max(greedy):
                climbed = None
            elif climbed is None:
                climbed = index + 1 - (resubmit_at or 0)
    seconds = time.perf_counter() - started

    rated = [b for b in bots if b.version not in retired]
    by_mu = sorted(rated, key=lambda b: -ratings[b.version].mu)
    strength_order = [b.strength for b in by_mu]
    counts = [played[b.version] for b in rated if b is not newcomer]
    final_mu = {
        name: sorted(round(ratings[b.version].mu, 2) for b in rated if b.strategy == name)
        for name in STRENGTHS
    }
    return Report(
        pairing=pairing,
        games=games,
        players=players,
        versions=len(rated),
        order_correct=strength_order == sorted(strength_order, reverse=True),
        misordered=sum(a < b for a, b in itertools.combinations(strength_order, 2)),
        mean_mu_diff=statistics.fmean(mu_diffs),
        mean_true_diff=statistics.fmean(true_diffs),
        random_mu_diff=statistics.fmean(random_mu),
        random_true_diff=statistics.fmean(random_true),
        class_gap=statistics.fmean(final_mu["planner"]) - statistics.fmean(final_mu["random"]),
        games_max=max(counts),
        games_min=min(counts),
        games_cv=statistics.pstdev(counts) / statistics.fmean(counts),
        seconds=seconds,
        final_mu=final_mu,
        resubmit_at=resubmit_at,
        newcomer_games=played[newcomer.version] if newcomer else None,
        newcomer_timeline=timeline,
        newcomer_climbed=climbed,
    )


def _print(report: Report) -> None:
    print(
        f"{report.pairing:>11}: order {'correct' if report.order_correct else 'WRONG'} "
        f"({report.misordered} pairs misordered); "
        f"mean |mu diff| {report.mean_mu_diff:.2f} (a random game at the same moments: "
        f"{report.random_mu_diff:.2f}); mean |true diff| {report.mean_true_diff:.2f} "
        f"(random: {report.random_true_diff:.2f}); games per version {report.games_min}.."
        f"{report.games_max} (max/min {report.spread:.2f}, cv {report.games_cv:.3f}); "
        f"class gap {report.class_gap:.1f} (true {2 * BETA:.1f}); {report.seconds:.1f} s"
    )
    if report.newcomer_games is not None:
        left = report.games - (report.resubmit_at or 0)
        climbed = report.newcomer_climbed
        print(
            f"{'':>13}resubmitted version: {report.newcomer_games} of the last {left} games; "
            + (f"above every greedy for good after {climbed}" if climbed else "never above")
        )
    for name, mus in report.final_mu.items():
        print(f"{'':>13}{name:>8} mu: {', '.join(f'{m:.1f}' for m in mus)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--copies", type=int, default=4, help="authors per strategy")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--resubmit-at", type=int, help="a better version enters before game G")
    parser.add_argument("--recent", type=int, help="count games over the pool's last R games")
    parser.add_argument("--json", action="store_true", help="the reports as JSON")
    args = parser.parse_args(argv)
    reports = [
        simulate(
            args.games,
            args.players,
            args.copies,
            args.seed,
            pairing=pairing,
            resubmit_at=args.resubmit_at,
            recent=args.recent,
        )
        for pairing in ("matchmaking", "random")
    ]
    if args.json:
        print(json.dumps([asdict(r) | {"spread": r.spread} for r in reports], indent=2))
        return 0
    print(
        f"{args.games} games of {args.players} players, {reports[0].versions} versions "
        f"({args.copies} authors each of {', '.join(STRENGTHS)}), seed {args.seed}"
    )
    for report in reports:
        _print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
