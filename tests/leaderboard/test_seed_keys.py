"""A tournament's game seeds are keyed with the store's secret (issue 21, item 7).

The same store and base seed deal the same games (a resumed run, a rerun); another store
deals others from the same ``--seed``; a store from before keys gets one, and its unfinished
tournament resumes with the deals it began with. These tests drive the real runner and store
with a crew that plays nothing (it answers each task at once and records the seeds it was
given), so the schedule's seeds are all they look at; tests/cli/test_seed_keys.py plays real
games against a bot that searches for the seed.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from leaderboard.runner import Crew, keyed_deals, run
from leaderboard.schedule import public_game_seed
from leaderboard.store import GameResult, SeatResult, Store, StoreError
from leaderboard.worker import Answer, Failed, Play, Settings, Task, Validate, Validation
from referee.games.registry import load
from referee.hosting.sandbox import NO_SANDBOX
from tests.leaderboard.test_tournament import GREEDY, PLANNER, RANDOM

BOTS = [RANDOM, GREEDY, PLANNER]


class InstantCrew:
    """Answers every validation ``ok`` and every game with a made-up result at once, keeping
    the seed of each game it was asked to play; the games in ``fail`` answer Failed, as a
    game whose worker died twice does (``--resume`` plays them again)."""

    def __init__(self, fail: Sequence[str] = ()) -> None:
        self.fail = set(fail)
        self.tasks: list[Task] = []
        self.variant = ""

    def __call__(self, count: int, settings: Settings) -> Crew:
        self.variant = load(settings.variant).ident
        return self

    def submit(self, tasks: Sequence[Task]) -> None:
        self.tasks += tasks

    def withdraw(self, which: Callable[[Task], bool]) -> list[Task]:
        taken = [t for t in self.tasks if which(t)]
        self.tasks = [t for t in self.tasks if not which(t)]
        return taken

    def results(self, expected: int) -> Iterator[Answer]:
        for task in self.tasks[-expected:]:
            if isinstance(task, Validate):
                yield Validation(task.entrant, True, "")
            elif task.key in self.fail:
                yield Failed(task.key, "its worker died twice")
            else:
                g = task.game
                seats = tuple(
                    SeatResult(s, e.bot_id, 10 * s, s + 1, 0, 0, 0, 0)
                    for s, e in enumerate(task.seats)
                )
                yield GameResult(
                    g.game_id, task.tournament_id, g.index, g.round, self.variant,
                    len(seats), g.seed, "last_round", 1, None, 0.0, 1.0, seats, (),
                )  # fmt: skip

    def close(self) -> None:
        pass

    def seeds(self) -> dict[str, int]:
        """Each game asked for, by slot: its seed."""
        return {t.key: t.game.seed for t in self.tasks if isinstance(t, Play)}


def _run(store: Store, crew: InstantCrew, **settings: Any) -> Any:
    return run(
        store,
        bot_dirs=[] if settings.get("resume") else BOTS,
        players=2,
        variant="newyork",
        sandbox=NO_SANDBOX,
        crews=crew,
        **settings,
    )


def _stored(db: Path) -> dict[str, int]:
    with Store(db) as store:
        return {g.game_id: g.seed for g in store.games()}


def test_two_stores_deal_other_games_from_the_same_seed(tmp_path: Path) -> None:
    crews = [InstantCrew(), InstantCrew()]
    for name, crew in zip(("a", "b"), crews, strict=True):
        with Store(tmp_path / f"{name}.db") as store:
            assert _run(store, crew, rounds=2, base_seed=42).complete
    a, b = (crew.seeds() for crew in crews)
    assert a.keys() == b.keys() and len(a) == 2 * 3 * 2  # the same slots ...
    assert not set(a.values()) & set(b.values())  # ... and not one deal in common
    # Neither is the public formula's: knowing 42 tells nothing.
    public = {public_game_seed(42, r, c) for r in (1, 2) for c in range(3)}
    assert not (set(a.values()) | set(b.values())) & public
    assert _stored(tmp_path / "a.db") == a  # what the games were dealt is what is stored


def test_the_same_store_and_seed_deal_the_same_games_again(tmp_path: Path) -> None:
    with Store(tmp_path / "league.db") as store:
        first, second = InstantCrew(), InstantCrew()
        _run(store, first, base_seed=42)
        _run(store, second, base_seed=42)  # a second tournament: ids t2-..., same deals
    again = {key.replace("t2-", "t1-"): seed for key, seed in second.seeds().items()}
    assert again == first.seeds()


def test_a_resumed_tournament_deals_what_it_would_have_dealt(tmp_path: Path) -> None:
    db, twin = tmp_path / "league.db", tmp_path / "twin.db"
    with Store(db) as store:
        store.seed_key()
    shutil.copyfile(db, twin)  # the same key: the same deals, were nothing to stop
    with Store(twin) as store:
        whole = InstantCrew()
        _run(store, whole, rounds=2, base_seed=7)

    stopped = ["t1-r1-c0-s1", "t1-r1-c2-s0", "t1-r2-c1-s1"]  # rotations whose twin was played
    with Store(db) as store:
        broken = InstantCrew(fail=stopped)
        outcome = _run(store, broken, rounds=2, base_seed=7)
        assert not outcome.complete and len(outcome.failed) == 3
    with Store(db) as store:
        resumed = InstantCrew()
        assert _run(store, resumed, resume=True).complete
    assert sorted(resumed.seeds()) == stopped
    assert broken.seeds() == whole.seeds() and _stored(db) == _stored(twin) == whole.seeds()
    # Duplicate play held: each combination's rotations, played apart, got one deal.
    for key in stopped:
        assert resumed.seeds()[key] == whole.seeds()[key[:-1] + ("0" if key[-1] == "1" else "1")]


def test_a_store_from_before_keys_resumes_its_tournament_as_it_began(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Store(db) as store:
        outcome = _run(store, InstantCrew(fail=["t1-r1-c1-s0", "t1-r1-c1-s1"]), base_seed=5)
        assert not outcome.complete
    # As a schema-3 store left it: no key table, the tournament without "seeds", and its games
    # dealt by the public formula.
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE seed_key")
        [(config,)] = conn.execute("SELECT config FROM tournaments").fetchall()
        conn.execute(
            "UPDATE tournaments SET config = ?",
            (json.dumps({k: v for k, v in json.loads(config).items() if k != "seeds"}),),
        )
        for game_id, combination in conn.execute(
            "SELECT game_id, CAST(substr(game_id, 8, 1) AS INTEGER) FROM games"
        ).fetchall():
            conn.execute(
                "UPDATE games SET seed = ? WHERE game_id = ?",
                (public_game_seed(5, 1, combination), game_id),
            )
        conn.execute("PRAGMA user_version = 3")

    with Store(db) as store:  # upgraded in place; the key is made only when needed
        [old] = store.tournaments()
        assert not keyed_deals(old)
        resumed = InstantCrew()
        assert _run(store, resumed, resume=True).complete
        assert resumed.seeds() == {
            "t1-r1-c1-s0": public_game_seed(5, 1, 1),
            "t1-r1-c1-s1": public_game_seed(5, 1, 1),
        }
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM seed_key").fetchone() == (0,)
        # A new tournament in the old store is keyed: it gets the store's first key.
        new = InstantCrew()
        _run(store, new, base_seed=5)
        assert keyed_deals(store.tournaments()[1])
        assert not set(new.seeds().values()) & {public_game_seed(5, 1, c) for c in range(3)}
        key = store.seed_key()
    with Store(db) as store:
        assert store.seed_key() == key  # made once, kept


def test_the_key_is_made_once_and_a_read_only_store_makes_none(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    Store(db).close()
    with Store(db, readonly=True) as store, pytest.raises(StoreError, match="no seed key"):
        store.seed_key()
    with Store(db) as first, Store(db) as second:
        key = first.seed_key()
        assert len(key) == 32 and second.seed_key() == key
    with Store(db, readonly=True) as store:
        assert store.seed_key() == key
    with sqlite3.connect(db) as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO seed_key VALUES (2, ?, 0)", (bytes(32),))
