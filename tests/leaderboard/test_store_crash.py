"""The results store against SIGKILL at many random moments of real tournaments.

``ttr tournament run`` (a subprocess, with its worker processes and sandboxed bots) is killed
with SIGKILL after a random delay, then resumed, over and over: 5 kills in the default suite,
30 more in a soak that ``TTR_SOAK=1`` runs (tests/soak.py; ``TTR_CRASH_KILLS=500`` makes the
soak longer, ``TTR_CRASH_SEED`` draws other moments). One whole run is timed first, on this
machine; two delays in three are drawn from zero to its length, counted from the start, and
one in three from zero to its stretch of games, counted from the run's first stored game. So
the kills land everywhere: while the store is created, while bots are entered, in validation,
between and during game commits, before a tournament is marked finished. Once a tournament is
finished the next run begins a new one in the same store, so every kill counts, whatever the
machine's speed. Each run takes one worker or two at random.

After every kill: nothing stored before it is lost or changed, the file passes
``PRAGMA integrity_check``, what the killed run printed names no seed of an unfinished
tournament, and every worker and bot it left behind exits (the test adopts the orphans, as a
child subreaper, so none can hide under init). At the end every tournament is finished, every
scheduled game is stored exactly once with the seed its slot derives from the stored base
seed, and the ratings are those recomputed from the stored games.

30 kills took about 50 s on an idle 2-core machine, most of it bots starting in their
sandboxes; the default suite's 8 take about a quarter of that, their moments drawn the same way.
The test prints the phase each kill landed in (``-s``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from leaderboard.ratings import rate_games, standings
from leaderboard.schedule import build, games_in
from leaderboard.store import GameResult, SeatResult, Store
from referee.hosting.sandbox import unavailable_reason
from tests.leaderboard.test_tournament import (
    GREEDY,
    RANDOM,
    ROOT,
    TTR,
    _alive,
    _descendants,
    _stored,
    sdk_bot,
)

KILLS = 5  #: in the default suite
SOAK_KILLS = int(os.environ.get("TTR_CRASH_KILLS", "30"))  #: in the soak (TTR_SOAK=1)
MOMENTS_SEED = int(os.environ.get("TTR_CRASH_SEED", "9"))
ROUNDS = 3  #: 2 bots, 2 players: 6 games a tournament
EXIT_GRACE_S = 20.0  #: how long an orphaned worker or bot may take to notice and exit
PR_SET_CHILD_SUBREAPER = 36  #: linux/prctl.h


def _sandbox_args() -> list[str]:
    """The sandbox where this machine has one (what league nights run), else none."""
    return [] if unavailable_reason() is None else ["--no-sandbox"]


@contextmanager
def _adopting_orphans() -> Iterator[None]:
    """Make this process the reaper of its orphaned descendants (Linux), so that a worker or
    bot whose parent was killed stays findable below us instead of moving under init."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        pytest.skip(f"prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}")
    try:
        yield
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


class _Leftovers:
    """Processes a killed run left behind, each with the time it was first seen."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}
        #: what was already below us (earlier tests' multiprocessing helpers): not a run's
        self.before = _descendants(os.getpid())

    def check(self) -> None:
        """Call with no run going: everything new below us is left over from a killed run.
        Fails if one has outlived its grace; reaps those that exited (our children now)."""
        now = time.monotonic()
        below = _descendants(os.getpid()) - self.before
        for pid in self.before:
            below -= _descendants(pid)
        for pid in below:
            if _alive(pid):
                self.seen.setdefault(pid, now)
            else:
                self._reap(pid)
        for pid in [p for p in self.seen if p not in below or not _alive(p)]:
            self._reap(pid)
            del self.seen[pid]
        late = {p: _cmdline(p) for p, t in self.seen.items() if now - t > EXIT_GRACE_S}
        assert not late, f"left running {EXIT_GRACE_S:.0f} s after their run was killed: {late}"

    def wait_all(self) -> None:
        deadline = time.monotonic() + EXIT_GRACE_S
        while self.seen and time.monotonic() < deadline:
            time.sleep(0.1)
            self.check()
        self.check()
        assert not self.seen, {p: _cmdline(p) for p in self.seen}

    @staticmethod
    def _reap(pid: int) -> None:
        with contextlib.suppress(ChildProcessError):  # not ours: its parent reaps it
            os.waitpid(pid, os.WNOHANG)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return "?"


def _query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows of ``sql``, or none when the store is not there yet (killed while creating it)."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute(sql).fetchall()
    except sqlite3.OperationalError as e:
        assert "no such table" in str(e)
        return []


def _store_key(db: Path) -> bytes | None:
    """The store's seed key, or None before the run has made it."""
    rows = _query(db, "SELECT key FROM seed_key")
    return bytes(rows[0][0]) if rows else None


def _secret_seeds(db: Path) -> set[int]:
    """Every seed of an unfinished tournament: its base seed and each of its games'."""
    secret: set[int] = set()
    key = _store_key(db)
    for tid, base, rounds in _query(
        db, "SELECT tournament_id, base_seed, rounds FROM tournaments WHERE finished_at IS NULL"
    ):
        secret.add(base)
        if key is not None:  # no key yet: no game seed derived yet either
            secret |= {g.seed for g in build(2, 2, rounds, base, tid, key=key)}
    return secret


def _phase(db: Path) -> str:
    """Where the latest tournament stands in the store."""
    latest = _query(
        db, "SELECT tournament_id, finished_at FROM tournaments ORDER BY tournament_id DESC"
    )
    if not latest or latest[0][1] is not None:
        return "between tournaments"
    tid = latest[0][0]
    [(entered,)] = _query(db, f"SELECT COUNT(*) FROM entries WHERE tournament_id = {tid}")
    [(stored,)] = _query(db, f"SELECT COUNT(*) FROM games WHERE tournament_id = {tid}")
    if entered < 2:
        return "in validation"
    if stored < games_in(2, 2, ROUNDS):
        return "in play"
    return "after the last game"


def _games(db: Path) -> int:
    return int(_query(db, "SELECT COUNT(*) FROM games")[0][0]) if _has_games_table(db) else 0


def _has_games_table(db: Path) -> bool:
    return bool(_query(db, "SELECT 1 FROM sqlite_master WHERE name = 'games'"))


@dataclass
class _Ran:
    killed: bool
    status: int
    printed: str
    seconds: float  #: from its start to its end
    first_game_s: float | None  #: from its start to its first stored game (when watched)


def _run(
    argv: list[str], out: Path, kill_after: float | None = None, db: Path | None = None
) -> _Ran:
    """Run ``ttr`` and SIGKILL it ``kill_after`` seconds after it starts, if it is still
    running; with ``db``, the delay counts from its first stored game instead (a kill in the
    thick of the commits)."""
    games_before = 0 if db is None else _games(db)
    with open(out, "w+b") as sink:
        start = time.monotonic()
        proc = subprocess.Popen(
            [*TTR, *argv], cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        first_game: float | None = None
        clock_from = start if db is None else None
        killed = False
        try:
            while proc.poll() is None:
                now = time.monotonic()
                if first_game is None and db is not None and _games(db) > games_before:
                    first_game = clock_from = now
                due = None if kill_after is None or clock_from is None else clock_from + kill_after
                if due is not None and now >= due:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                    killed = True
                    break
                time.sleep(0.005 if clock_from is not None else 0.02)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        sink.seek(0)
        printed = sink.read().decode("utf-8", "replace")
    first_game_s = None if first_game is None else first_game - start
    return _Ran(killed, proc.returncode, printed, time.monotonic() - start, first_game_s)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc, prctl")
@pytest.mark.parametrize(
    ("kills", "moments"),
    [
        pytest.param(KILLS, MOMENTS_SEED, id="kills"),
        # other moments than the default's: the soak adds kills rather than repeating them
        pytest.param(SOAK_KILLS, MOMENTS_SEED + 1, id="soak", marks=pytest.mark.soak),
    ],
)
def test_the_store_survives_kill_9_at_random_moments(
    tmp_path: Path, kills: int, moments: int
) -> None:
    db = tmp_path / "league.db"
    settings = [
        "--variant", "newyork", "--players", "2", "--rounds", str(ROUNDS),
        "--move-ms", "1000", "--bank-ms", "10000", *_sandbox_args(), RANDOM, GREEDY,
    ]  # fmt: skip

    def command(store: Path, resume: bool, workers: int) -> list[str]:
        begin = ["tournament", "run", "--db", str(store), "--workers", str(workers)]
        return [*begin, "--resume", *_sandbox_args()] if resume else [*begin, *settings]

    # One whole run, timed: the spans the kill moments are drawn from, on this machine.
    other = tmp_path / "calibration.db"
    calibration = _run(command(other, False, 2), tmp_path / "calibration.out", None, other)
    assert not calibration.killed and calibration.status == 0, calibration.printed
    assert calibration.first_game_s is not None
    whole = calibration.seconds
    play = whole - calibration.first_game_s
    rng = random.Random(moments)
    leftovers = _Leftovers()
    kills_done = runs = 0
    phases: dict[str, int] = {}  #: how far the store had got when each kill came
    before: list[tuple[str, int, str]] = []
    with _adopting_orphans():
        while kills_done < kills:
            unfinished = bool(_query(db, "SELECT 1 FROM tournaments WHERE finished_at IS NULL"))
            # Two kills in three at any moment of a run, one in its stretch of game commits;
            # one worker or two (a resumed run need not have those its tournament began with).
            in_play = rng.random() < 1 / 3
            ran = _run(
                command(db, unfinished, rng.choice((1, 2))),
                tmp_path / f"run{runs}.out",
                rng.uniform(0, play if in_play else whole),
                db if in_play else None,
            )
            runs += 1
            if not ran.killed:
                assert ran.status == 0, ran.printed
                base = _query(
                    db, "SELECT base_seed FROM tournaments ORDER BY tournament_id DESC LIMIT 1"
                )
                assert f"base seed {base[0][0]}" in ran.printed  # shown once it is finished
                continue
            kills_done += 1
            phase = _phase(db)
            phases[phase] = phases.get(phase, 0) + 1
            leftovers.check()
            after = _stored(db) if _has_games_table(db) else []
            assert set(before) <= set(after), "a stored game was lost or changed by a kill"
            before = after
            assert _query(db, "PRAGMA integrity_check") in ([], [("ok",)])
            leaked = [s for s in _secret_seeds(db) if str(s) in ran.printed]
            assert not leaked, f"a killed run printed a secret seed: {ran.printed}"
        if _query(db, "SELECT 1 FROM tournaments WHERE finished_at IS NULL"):
            ran = _run(command(db, True, 2), tmp_path / "last.out")
            assert not ran.killed and ran.status == 0, ran.printed
        leftovers.wait_all()

    _check_the_store(db)
    tournaments = len(_query(db, "SELECT 1 FROM tournaments"))
    print(f"\n{kills_done} kills in {runs} runs ", end="")
    print(f"({whole:.1f} s each, {play:.1f} s of games), ", end="")
    print(f"{tournaments} tournaments; kills ", end="")
    print(", ".join(f"{n} {phase}" for phase, n in sorted(phases.items())))


def _check_the_store(db: Path) -> None:
    """Every tournament finished, each scheduled game stored once with its slot's seed, the
    file sound, and the ratings those the stored games give."""
    assert _query(db, "PRAGMA integrity_check") == [("ok",)]
    assert _query(db, "PRAGMA foreign_key_check") == []
    assert not _query(db, "SELECT 1 FROM tournaments WHERE finished_at IS NULL")
    total = games_in(2, 2, ROUNDS)
    for tid, base in _query(db, "SELECT tournament_id, base_seed FROM tournaments"):
        accepted = f"SELECT COUNT(*) FROM entries WHERE tournament_id = {tid} AND accepted = 1"
        assert _query(db, accepted) == [(2,)]
        # the seeds of the store's key: resumed after each kill, every run dealt the same
        key = _store_key(db)
        assert key is not None
        expected = {(g.game_id, g.index, g.seed) for g in build(2, 2, ROUNDS, base, tid, key=key)}
        stored = _query(
            db, f"SELECT game_id, schedule_index, seed FROM games WHERE tournament_id = {tid}"
        )
        assert len(stored) == total and set(stored) == expected  # none lost, none doubled
    seats = _query(db, "SELECT game_id, COUNT(*) FROM seats GROUP BY game_id HAVING COUNT(*) != 2")
    assert seats == []

    # Ratings: recomputed from the games as read straight from SQL, in schedule order.
    by_game: dict[str, list[SeatResult]] = {}
    for game_id, seat, bot_id, rank in _query(db, "SELECT game_id, seat, bot_id, rank FROM seats"):
        by_game.setdefault(game_id, []).append(SeatResult(seat, bot_id, 0, rank, 0, 0, 0, 0))
    games = [
        GameResult(g, 0, 0, 0, "", 2, 0, "", 0, None, 0.0, 0.0, tuple(by_game[g]), ())
        for (g,) in _query(db, "SELECT game_id FROM games ORDER BY tournament_id, schedule_index")
    ]
    expected_ratings = rate_games(games)
    with Store(db, create=False) as store:
        [variant] = {v for v, _ in store.pools()}
        table = standings(store, variant, 2)
    assert {s.bot.bot_id: s.rating for s in table} == expected_ratings
    played = dict(_query(db, "SELECT bot_id, COUNT(*) FROM seats GROUP BY bot_id"))
    assert {s.bot.bot_id: s.games for s in table} == played


SLOW_AFTER_ITS_FIRST_GAME = """
started = 0

def on_start(self, game):
    type(self).started += 1

def choose(self, view, legal):
    # Quick in its process's first game (its validation, with one worker), then slow: a game
    # lasts long enough to kill the run in the middle of it.
    if type(self).started > 1:
        import time
        time.sleep(0.4)
    return 0
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc, prctl")
def test_an_orphaned_worker_stops_mid_game_and_writes_no_record(tmp_path: Path) -> None:
    # A worker that played on after its parent was killed would write the record of a game
    # the store never got, over the record of the same slot that the resumed run plays again
    # (bots see random ids, so it is another game), and take CPU from that run's bots.
    slow = sdk_bot(tmp_path / "slow", "slow", SLOW_AFTER_ITS_FIRST_GAME)
    db = tmp_path / "league.db"
    records = tmp_path / "records"
    argv = [
        *TTR, "tournament", "run", "--db", str(db), "--records", str(records),
        "--variant", "newyork", "--players", "2", "--workers", "1", *_sandbox_args(),
        slow, RANDOM,
    ]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    family: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while _query(db, "SELECT COUNT(*) FROM entries") != [(2,)]:
            assert time.monotonic() < deadline and proc.poll() is None
            family |= _descendants(proc.pid)
            time.sleep(0.05)
        time.sleep(1.0)  # into the first game, which lasts several seconds
        family |= _descendants(proc.pid)
        assert proc.poll() is None and not _games(db)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    killed = time.monotonic()
    while any(_alive(p) for p in family) and time.monotonic() - killed < EXIT_GRACE_S:
        time.sleep(0.05)
    stopped_in = time.monotonic() - killed
    assert not [p for p in family if _alive(p)]
    assert list(records.glob("*.json")) == [], "an orphan finished its game"
    assert stopped_in < 4.0, f"the orphans took {stopped_in:.1f} s to stop"
