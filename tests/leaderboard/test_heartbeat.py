"""A running tournament's heartbeat (issue 23): the run writes the time into the store, every
few seconds and with each stored game, and removes it as it ends; a reader judges it by its
own clock, so a killed run (its heartbeat left to go stale) is told from a running one. The
clocks here are made by hand: nothing sleeps, and no test depends on how fast it runs."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leaderboard.runner import _Heartbeat
from leaderboard.store import SCHEMA_VERSION, STALE_S, GameResult, Store, StoreError
from leaderboard.worker import Answer
from tests.leaderboard.test_seed_keys import InstantCrew, _run
from tests.leaderboard.test_store import SPEC, make_game, two_bots


class Clock:
    """A clock that moves only when told to."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _heartbeat(store: Store, tid: int) -> float | None:
    return next(t for t in store.tournaments() if t.tournament_id == tid).heartbeat_at


def test_the_heartbeat_is_judged_at_the_readers_time(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path / "l.db") as store:
        store.clock = clock
        t = store.begin_tournament(SPEC)
        tid = t.tournament_id
        assert t.heartbeat_at == 1000.0 and t.running(1000.0)  # begun by a run
        assert t.running(1000.0 + STALE_S) and not t.running(1000.0 + STALE_S + 0.1)
        assert t.running(900.0)  # a reader whose clock is behind the writer's
        a, b = two_bots(store)
        clock.now = 1040.0
        store.record_game(make_game(tid, 0, (a, b)))  # a stored game is a beat
        assert _heartbeat(store, tid) == 1040.0
        clock.now = 1050.0
        store.beat(tid)
        [t] = store.tournaments()
        assert t.heartbeat_at == 1050.0 and t.running(1060.0)
        assert store.unfinished_tournament() == t
        store.end_heartbeat(tid)  # the run ended: stopped at once, not STALE_S later
        [t] = store.tournaments()
        assert t.heartbeat_at is None and not t.running(1050.0)
        store.beat(tid)
        store.finish_tournament(tid)
        [t] = store.tournaments()
        assert t.heartbeat_at == 1050.0 and not t.running(1050.0)  # finished: not running


def test_a_store_of_schema_6_gains_heartbeats_and_its_tournament_reads_stopped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    with Store(path) as store:
        tid = store.begin_tournament(SPEC).tournament_id
        a, b = two_bots(store)
        store.record_game(make_game(tid, 0, (a, b)))
    with sqlite3.connect(path) as db:  # as schema version 6 left it
        db.execute("DROP TABLE heartbeats")
        db.execute("PRAGMA user_version = 6")
    with pytest.raises(StoreError, match="older than this program's"):
        Store(path, readonly=True)  # the page's server does not upgrade; the others do
    with Store(path) as store:
        [t] = store.tournaments()
        assert t.state == "unfinished" and t.heartbeat_at is None and not t.running(0.0)
        assert len(store.games()) == 1
        store.clock = Clock(5.0)
        store.beat(tid)
        assert _heartbeat(store, tid) == 5.0
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert SCHEMA_VERSION == 7


class WatchingCrew(InstantCrew):
    """An :class:`InstantCrew` that moves the store's clock on by 10 s before each game it
    answers and notes the heartbeat the store held as each answer was asked for (the
    previous game stored by then)."""

    def __init__(self, store: Store, clock: Clock, fail: tuple[str, ...] = ()) -> None:
        super().__init__(fail)
        self.store, self.clock = store, clock
        self.seen: list[float | None] = []

    def results(self, expected: int) -> Iterator[Answer]:
        for answer in super().results(expected):
            if isinstance(answer, GameResult):
                [t] = self.store.tournaments()
                self.seen.append(t.heartbeat_at)
                self.clock.now += 10.0
            yield answer


def test_a_run_beats_with_each_game_and_ends_its_heartbeat(tmp_path: Path) -> None:
    clock = Clock()
    with Store(tmp_path / "l.db") as store:
        store.clock = clock
        crew = WatchingCrew(store, clock, fail=("t1-r1-c2-s1",))
        outcome: Any = _run(store, crew, base_seed=5)
        assert not outcome.complete  # one game failed: the tournament stays unfinished
        # begun at 1000; then each stored game beat at the clock's time as it was stored
        assert crew.seen[0] == 1000.0
        assert crew.seen[1:] == [1000.0 + 10 * n for n in range(1, len(crew.seen))]
        [t] = store.tournaments()
        assert t.state == "unfinished" and t.heartbeat_at is None  # the run is over
        assert not t.running(clock.now)

        resumed = WatchingCrew(store, clock)
        clock.now = 2000.0
        assert _run(store, resumed, resume=True).complete
        assert resumed.seen == [2000.0]  # a resumed run beats as it starts
        [t] = store.tournaments()
        assert t.state == "finished" and t.heartbeat_at is None


def test_the_heartbeat_thread_beats_on_its_own_connection(tmp_path: Path) -> None:
    """The thread beats while the run's loop waits on a game; three beats are awaited on an
    event the clock sets, never on a sleep."""
    beats: list[str] = []
    three = threading.Event()

    def clock() -> float:
        beats.append(threading.current_thread().name)
        if beats.count("ttr-heartbeat") == 3:
            three.set()
        return float(len(beats))

    with Store(tmp_path / "l.db") as store:
        tid = store.begin_tournament(SPEC).tournament_id
        store.end_heartbeat(tid)
        store.clock = clock
        heartbeat = _Heartbeat(store, tid, every=0.001).start()
        assert beats == ["MainThread"]  # the first beat is the caller's, at once
        assert three.wait(30), "the heartbeat thread did not beat three times"
        heartbeat.stop()
        assert _heartbeat(store, tid) is None
        assert beats.count("ttr-heartbeat") >= 3
