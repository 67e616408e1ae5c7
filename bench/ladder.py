"""The competition ladder: its quality and its throughput, a real ladder of the sample bots
next to ``ttr tournament run`` of the same bots on the same machine.

    python bench/ladder.py [--games N] [--copies C] [--players P] [--workers W]
                           [--no-sandbox | --reuse-bots] [--seed S] [--no-tournament] [--json]

1. Ladder: a real :class:`leaderboard.ladder.service.Ladder` (its thread, W worker processes,
   real games over gRPC, every game stored and recorded; bots sandboxed as a server runs them
   unless ``--no-sandbox``) with one pool of P players. The sample bots random, greedy and
   planner are each entered by C authors (``random-1``, ``greedy-1``, ..., each uploading the
   same folder: content is per author, so these are separate versions). They are built and
   validated as uploads are, then play until N games have been recorded after the last of
   them became active. Printed:

   - order: whether every planner version stands above every greedy one above every random
     one by mu (and how many pairs of versions are the wrong way round), with each class's
     mean mu;
   - mean |mu diff|: the mean absolute mu difference between the seats of a game (over all
     pairs of seats) at the moment matchmaking picked it, averaged over the ladder's games;
     against a uniformly random legal game (bench/matchmaking.py's ``random_pairing``) drawn
     at each of the same moments from the same ratings;
   - spread: games per version, max / min and standard deviation / mean;
   - throughput: games per minute from the moment every version is active to the N-th game.

   The moments come from :class:`RecordingLadder`, the service unchanged but for what it
   records on the side (each game's candidates as matchmaking saw them, when each version
   became active, when each game was recorded).
2. Tournament: ``leaderboard.runner.run`` (``ttr tournament run``) of the same bots (the
   3 x C folders under names of their own), same players, workers and sandbox setting,
   through bench/tournament.py's ``timed_tournament``: games per minute from its first game
   to its N-th (enough round robins to have N games, cut short there).

The ratio ladder / tournament is issue 22's throughput goal (at least 0.9). Decisions per
game are printed for both: matchmaking pairs like with like, which can make the ladder's
games longer or shorter than the round robin's.

tests/leaderboard/test_ladder_quality.py plays a smaller ladder with :func:`play_ladder` and
asserts on :func:`quality`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: bench/ is on the path, the repository not

from bench.matchmaking import _mean_pair_diff, random_pairing  # noqa: E402
from bench.tournament import renamed_copy, timed_tournament  # noqa: E402
from leaderboard import schedule as schedule_mod  # noqa: E402
from leaderboard.ladder.season import Pool, Season  # noqa: E402
from leaderboard.ladder.service import Ladder  # noqa: E402
from leaderboard.ladder.store import LadderStore, VersionRow  # noqa: E402
from leaderboard.matchmaking import Candidate  # noqa: E402
from leaderboard.store import GameResult  # noqa: E402
from leaderboard.worker import Play  # noqa: E402
from referee.hosting.sandbox import SandboxConfig  # noqa: E402
from referee.hosting.upload import pack  # noqa: E402

SAMPLES = ROOT / "sample_bots"
CLASSES = ("random", "greedy", "planner")  #: the sample strategies, weakest first
VARIANT = "usa@1"
DEADLINE_S = 3600.0  #: a ladder that has not played its games by then is stuck


@dataclass(frozen=True, slots=True)
class Pick:
    """A game as matchmaking picked it: its seats and every candidate's rating just then."""

    seats: tuple[int, ...]
    candidates: tuple[Candidate, ...]


class RecordingLadder(Ladder):
    """The ladder service unchanged, recording on the side what the bench reports: the
    candidates of each game picked, when each version became active, when each game was
    recorded (all on the ladder thread; read them once it is stopped, or as counts)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.picks: dict[str, Pick] = {}
        self.activated: list[float] = []  #: perf_counter() of each activation
        self.recorded: list[float] = []  #: perf_counter() of each game recorded

    def _next_game(self, store: LadderStore) -> Play | None:
        task = super()._next_game(store)
        if task is not None:
            key = (task.variant, len(task.seats))
            active = store.version_rows(states=frozenset({"active"}))
            self.picks[task.key] = Pick(
                tuple(e.bot_id for e in task.seats),
                tuple(self._candidate(key, row) for row in active),
            )
        return task

    def _activate(self, store: LadderStore, row: VersionRow) -> None:
        super()._activate(store, row)
        self.activated.append(time.perf_counter())

    def _record(self, store: LadderStore, played: GameResult) -> None:
        before = self.games_played
        super()._record(store, played)
        if self.games_played > before:
            self.recorded.append(time.perf_counter())


@dataclass
class LadderRun:
    """What :func:`play_ladder` saw."""

    players: int
    classes: dict[int, str]  #: each version's (bot id's) class
    mu: dict[int, float]  #: final mu by version
    games: list[GameResult]  #: every stored game, in the order rated
    picks: dict[str, Pick]  #: by game id
    timed_games: int  #: games recorded after every version was active
    seconds: float  #: from every version active to the last of those


def play_ladder(
    folder: Path,
    *,
    games: int,
    copies: int = 1,
    players: int = 2,
    workers: int = 2,
    sandbox: SandboxConfig | None = None,
    rng: random.Random | None = None,
    log: Callable[[str], None] | None = None,
) -> LadderRun:
    """A real ladder in ``folder/data`` of ``copies`` authors of each sample bot in one pool
    of ``players``, played until ``games`` games are recorded after the last version became
    active (the games before count for the quality, not for the time)."""
    season = Season(name="bench", pools=(Pool(VARIANT, players),), workers=workers)
    lines: list[str] = []
    ladder = RecordingLadder(
        season,
        folder / "data",
        sandbox=sandbox,
        log=log or lines.append,
        rng=rng,
    )
    ladder.open()
    try:
        store = ladder.store()
        entered = []
        for copy, cls in itertools.product(range(1, copies + 1), CLASSES):  # ids interleaved
            author = ladder.authenticate(store.add_author(f"{cls}-{copy}"))
            assert author is not None
            entered.append((author, cls))
        ladder.start()
        packed = {cls: pack(SAMPLES / cls) for cls in CLASSES}
        classes = {ladder.submit(a, packed[cls]).version.bot_id: cls for a, cls in entered}
        deadline = time.monotonic() + DEADLINE_S
        checked = 0.0
        while True:
            if ladder.error is not None:
                raise RuntimeError(f"the ladder stopped: {ladder.error!r}\n" + "\n".join(lines))
            if len(ladder.activated) == len(classes):
                start = ladder.activated[-1]
                timed = [t for t in ladder.recorded if t > start]
                if len(timed) >= games:
                    break
            if time.monotonic() > checked + 1.0:
                checked = time.monotonic()
                bad = [r for r in store.version_rows() if r.state in ("failed", "disabled")]
                if bad:
                    why = "; ".join(f"{r.author} v{r.number}: {r.reason}" for r in bad)
                    raise RuntimeError(f"a version is out: {why}\n" + "\n".join(lines))
            if time.monotonic() > deadline:
                raise RuntimeError(f"{games} games not played in {DEADLINE_S:.0f} s")
            time.sleep(0.05)
    finally:
        ladder.stop()
    key = (VARIANT, players)
    return LadderRun(
        players=players,
        classes=classes,
        mu={bot_id: ladder.rating(key, bot_id).mu for bot_id in classes},
        games=sorted(
            store.games(tournament_id=ladder.tournament_id), key=lambda g: g.schedule_index
        ),
        picks=dict(ladder.picks),
        timed_games=games,
        seconds=timed[games - 1] - start,
    )


@dataclass
class Quality:
    games: int
    versions: int
    order_correct: bool  #: every planner above every greedy above every random, by mu
    misordered: int  #: pairs of versions of different classes the wrong way round
    mean_mu: dict[str, float]  #: by class
    mu: dict[str, list[float]]  #: by class, sorted
    mean_mu_diff: float  #: the ladder's games, at the moment each was picked
    random_mu_diff: float  #: a random legal game at each of the same moments
    games_max: int
    games_min: int
    games_cv: float  #: standard deviation / mean of games per version
    spread: float = field(init=False)

    def __post_init__(self) -> None:
        self.spread = self.games_max / self.games_min if self.games_min else math.inf


def quality(run: LadderRun, rng: random.Random | None = None) -> Quality:
    """The ladder's quality figures (the module doc); ``rng`` draws the random games."""
    rng = rng or random.Random(0)
    rank = {cls: i for i, cls in enumerate(CLASSES)}
    by_mu = sorted(run.classes, key=lambda b: -run.mu[b])
    strength = [rank[run.classes[b]] for b in by_mu]
    misordered = sum(a < b for a, b in itertools.combinations(strength, 2))
    ladder_diff, random_diff = [], []
    for game in run.games:
        pick = run.picks.get(game.game_id)
        if pick is None:
            continue  # picked before a restart: never, in a bench
        mus = {c.version: c.mu for c in pick.candidates}
        other = random_pairing(pick.candidates, run.players, rng)
        assert other is not None
        ladder_diff.append(_mean_pair_diff([mus[b] for b in pick.seats]))
        random_diff.append(_mean_pair_diff([mus[b] for b in other]))
    counts = dict.fromkeys(run.classes, 0)
    for game in run.games:
        for seat in game.seats:
            counts[seat.bot_id] += 1
    mu = {cls: sorted(run.mu[b] for b, c in run.classes.items() if c == cls) for cls in CLASSES}
    return Quality(
        games=len(run.games),
        versions=len(run.classes),
        order_correct=misordered == 0,
        misordered=misordered,
        mean_mu={cls: statistics.fmean(m) for cls, m in mu.items()},
        mu=mu,
        mean_mu_diff=statistics.fmean(ladder_diff),
        random_mu_diff=statistics.fmean(random_diff),
        games_max=max(counts.values()),
        games_min=min(counts.values()),
        games_cv=statistics.pstdev(counts.values()) / statistics.fmean(counts.values()),
    )


def tournament_games(
    folder: Path, *, games: int, copies: int, players: int, workers: int, sandbox: SandboxConfig
) -> tuple[list[GameResult], float]:
    """The same bots in ``ttr tournament run``: its first ``games`` games and their seconds."""
    dirs = [
        renamed_copy(SAMPLES / cls, folder / f"{cls}-{copy}", f"{cls}-{copy}")
        for copy, cls in itertools.product(range(1, copies + 1), CLASSES)
    ]
    per_round = len(schedule_mod.build(len(dirs), players, 1, 0, 0, key=None))
    played, seconds = timed_tournament(
        folder,
        dirs,
        players=players,
        rounds=math.ceil(games / per_round),
        workers=workers,
        sandbox=sandbox,
        stop_after=games,
    )
    by_end = sorted(played, key=lambda g: g.finished_at)
    return by_end[:games], seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=200, help="games timed (default 200)")
    parser.add_argument("--copies", type=int, default=3, help="authors per bot (default 3)")
    parser.add_argument("--players", type=int, default=4, help="per game (default 4)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--no-sandbox", action="store_true", help="run the bots unsandboxed")
    parser.add_argument(
        "--reuse-bots",
        action="store_true",
        help="sandboxed, one process per bot for every rotation of a deal (the tournament's "
        "flag; the ladder never repeats a deal)",
    )
    parser.add_argument("--seed", type=int, help="the ladder's matchmaking rng (default: random)")
    parser.add_argument(
        "--no-tournament", action="store_true", help="the ladder alone (no throughput ratio)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.games < 1 or args.copies < 1 or args.workers < 1:
        parser.error("--games, --copies and --workers must be at least 1")
    if not 2 <= args.players <= 3 * args.copies:
        parser.error(f"--players must be 2 to {3 * args.copies} (the authors) with these copies")
    # as a server runs them: sandboxed, no bot process plays a deal twice (a tournament's
    # rotations repeat each deal: a process per rotation; the ladder's deals are all new)
    sandbox = SandboxConfig(enabled=not args.no_sandbox, fresh_per_deal=not args.reuse_bots)
    rng = None if args.seed is None else random.Random(args.seed)
    figures: dict[str, object] = {
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "players": args.players,
        "workers": args.workers,
        "copies": args.copies,
        "sandbox": sandbox.enabled,
        "fresh_per_deal": sandbox.enabled and sandbox.fresh_per_deal,
    }
    tournament: list[GameResult] = []
    tournament_s = 0.0
    with tempfile.TemporaryDirectory(prefix="ttr-bench-ladder-") as tmp:
        if not args.no_tournament:
            (Path(tmp) / "tournament").mkdir()
            tournament, tournament_s = tournament_games(
                Path(tmp) / "tournament",
                games=args.games,
                copies=args.copies,
                players=args.players,
                workers=args.workers,
                sandbox=sandbox,
            )
        run = play_ladder(
            Path(tmp) / "ladder",
            games=args.games,
            copies=args.copies,
            players=args.players,
            workers=args.workers,
            sandbox=sandbox,
            rng=rng,
        )
    q = quality(run)
    ladder_gpm = run.timed_games / run.seconds * 60
    timed = run.games[-run.timed_games :]
    figures["quality"] = asdict(q)
    figures["ladder"] = {
        "games": run.timed_games,
        "seconds": run.seconds,
        "games_per_min": ladder_gpm,
        "decisions_per_game": statistics.fmean(g.decisions for g in timed),
    }
    if tournament:
        tournament_gpm = len(tournament) / tournament_s * 60
        figures["tournament"] = {
            "games": len(tournament),
            "seconds": tournament_s,
            "games_per_min": tournament_gpm,
            "decisions_per_game": statistics.fmean(g.decisions for g in tournament),
        }
        figures["ratio"] = ladder_gpm / tournament_gpm
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    if not sandbox.enabled:
        mode = "NO sandbox"
    elif sandbox.fresh_per_deal:
        mode = "sandboxed, a bot process per rotation of a deal"
    else:
        mode = "sandboxed, bots reused across deals"
    print(
        f"python {figures['python']}, {os.cpu_count()} cores; {q.versions} versions "
        f"({args.copies} authors each of {', '.join(CLASSES)}), {args.players} players, "
        f"{args.workers} workers, {mode}"
    )
    means = ", ".join(f"{cls} {m:.1f}" for cls, m in q.mean_mu.items())
    print(
        f"quality after {q.games} games: order {'correct' if q.order_correct else 'WRONG'} "
        f"({q.misordered} pairs misordered); mean mu {means}"
    )
    print(
        f"  mean |mu diff| in the ladder's games {q.mean_mu_diff:.2f}, a random legal game "
        f"at the same moments {q.random_mu_diff:.2f}; games per version {q.games_min}.."
        f"{q.games_max} (max/min {q.spread:.2f}, std/mean {q.games_cv:.3f})"
    )
    for cls, mus in q.mu.items():
        print(f"  {cls:>8} mu: {', '.join(f'{m:.1f}' for m in mus)}")
    ladder_line = figures["ladder"]
    assert isinstance(ladder_line, dict)
    print(
        f"ladder:     {run.timed_games} games in {run.seconds:6.1f} s, {ladder_gpm:6.1f} games/min "
        f"({ladder_line['decisions_per_game']:.0f} decisions/game)"
    )
    if tournament:
        print(
            f"tournament: {len(tournament)} games in {tournament_s:6.1f} s, "
            f"{tournament_gpm:6.1f} games/min "
            f"({statistics.fmean(g.decisions for g in tournament):.0f} decisions/game)"
        )
        print(f"ladder / tournament: {figures['ratio']:.2f} (goal: at least 0.90)")


if __name__ == "__main__":
    main()
