"""The SQLite results store: every field round-trips, a game is stored whole or not at all and
never twice, a foreign or newer file is refused before it is touched, and games come back in
schedule order whatever order the workers finished them in."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from leaderboard.store import (
    SCHEMA_VERSION,
    FaultRow,
    GameResult,
    SeatResult,
    Store,
    StoreError,
    TournamentSpec,
)

SPEC = TournamentSpec(
    name="league night 1",
    variant="usa@1",
    players=2,
    rounds=3,
    base_seed=1234,
    config={"move_ms": 1000, "bank_ms": 60000, "bots": ["a", "b"], "nested": {"x": [1, 2]}},
)


def make_game(
    tournament_id: int,
    index: int,
    bots: tuple[int, ...],
    ranks: tuple[int, ...] | None = None,
    faults: tuple[FaultRow, ...] = (),
    variant: str = "usa@1",
) -> GameResult:
    ranks = ranks or tuple(range(1, len(bots) + 1))
    return GameResult(
        game_id=f"t{tournament_id}-g{index}",
        tournament_id=tournament_id,
        schedule_index=index,
        round=index // 2,
        variant=variant,
        num_seats=len(bots),
        seed=1000 + index,
        end_reason="last_round",
        decisions=150 + index,
        record_path=f"records/t{tournament_id}/g{index}.json" if index % 2 else None,
        started_at=1700000000.25 + index,
        finished_at=1700000100.5 + index,
        seats=tuple(
            SeatResult(
                seat=seat,
                bot_id=bot_id,
                score=100 - 10 * rank,
                rank=rank,
                tickets_completed=3 + seat,
                tickets_failed=seat,
                faults=sum(1 for f in faults if f.seat == seat),
                defaults=seat * 2,
            )
            for seat, (bot_id, rank) in enumerate(zip(bots, ranks, strict=True))
        ),
        faults=faults,
    )


FAULTS = (
    FaultRow(seat=1, decision=7, turn=3, kind="rejected", rule="claim.taken", message="taken"),
    FaultRow(seat=0, decision=-1, turn=0, kind="start_game", rule="DEADLINE_EXCEEDED", message=""),
    FaultRow(seat=1, decision=9, turn=4, kind="timeout", rule="", message="2.1 s"),
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "league.sqlite") as s:
        yield s


def two_bots(store: Store) -> tuple[int, int]:
    return (
        store.add_bot("greedy", "1.0", "Ann", "sha256:aa"),
        store.add_bot("random", "0.3", "Bo", "sha256:bb"),
    )


def test_every_field_round_trips_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    with Store(path) as store:
        store.clock = lambda: 1000.0  # each stored game beats: the heartbeat stays as begun
        t = store.begin_tournament(SPEC)
        a, b = two_bots(store)
        store.enter(t.tournament_id, a, "bots/greedy", accepted=True)
        store.enter(t.tournament_id, b, "bots/random", accepted=False, reason="timed out")
        games = [make_game(t.tournament_id, 0, (a, b)), make_game(t.tournament_id, 1, (b, a))]
        games.append(make_game(t.tournament_id, 2, (a, b), ranks=(1, 1), faults=FAULTS))
        for game in games:
            assert store.record_game(game)
        assert store.games() == games
        bots_before = store.bots()
    with Store(path) as store:
        assert store.tournaments() == [t]
        assert store.tournaments()[0].spec == SPEC
        assert store.bots() == bots_before
        assert bots_before[a].name == "greedy" and bots_before[a].author == "Ann"
        assert bots_before[b].content_hash == "sha256:bb"
        entries = store.entries(t.tournament_id)
        assert [(bot.name, path, ok, why) for bot, path, ok, why in entries] == [
            ("greedy", "bots/greedy", True, ""),
            ("random", "bots/random", False, "timed out"),
        ]
        assert store.games() == games
        assert store.games()[2].faults == FAULTS  # order kept, not sorted by seat
        assert store.finished_game_ids(t.tournament_id) == {"t1-g0", "t1-g1", "t1-g2"}
        assert store.pools() == [("usa@1", 2)]


def test_recording_a_game_twice_is_a_no_op(store: Store) -> None:
    t = store.begin_tournament(SPEC)
    a, b = two_bots(store)
    game = make_game(t.tournament_id, 0, (a, b), faults=FAULTS)
    assert store.record_game(game) is True
    assert store.record_game(game) is False
    assert store.games() == [game]
    assert (_count(store, "games"), _count(store, "seats"), _count(store, "faults")) == (1, 2, 3)


def test_a_second_game_id_for_a_taken_schedule_slot_is_refused(store: Store) -> None:
    """Two ids for one slot (say, game ids derived differently after an upgrade) would count
    that slot twice."""
    t = store.begin_tournament(SPEC)
    a, b = two_bots(store)
    store.record_game(make_game(t.tournament_id, 0, (a, b)))
    clash = make_game(t.tournament_id, 0, (b, a))
    with pytest.raises(StoreError, match="slot 0"):
        store.record_game(dataclasses.replace(clash, game_id="other-id"))
    assert len(store.games()) == 1


def _count(store: Store, table: str) -> int:
    db = sqlite3.connect(store.path)
    try:
        return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        db.close()


def test_a_fault_insert_failing_in_sqlite_leaves_no_partial_game(store: Store) -> None:
    """The games and seats rows are already written when the fault insert fails."""
    t = store.begin_tournament(SPEC)
    a, b = two_bots(store)
    game = make_game(t.tournament_id, 0, (a, b), faults=FAULTS)
    db = sqlite3.connect(store.path)
    db.execute(
        "CREATE TRIGGER boom BEFORE INSERT ON faults BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
    )
    db.commit()
    with pytest.raises(StoreError, match="disk on fire"):
        store.record_game(game)
    assert store.games() == []
    assert (_count(store, "games"), _count(store, "seats"), _count(store, "faults")) == (0, 0, 0)
    db.execute("DROP TRIGGER boom")
    db.commit()
    db.close()
    assert store.record_game(game) is True  # the slot is free and the store still usable
    assert store.games() == [game]


def test_any_exception_half_way_rolls_back(store: Store) -> None:
    """Not only SQLite's own errors: here the driver refuses to bind a fault's message."""
    t = store.begin_tournament(SPEC)
    a, b = two_bots(store)
    bad = FaultRow(1, 7, 3, "rejected", "claim.taken", cast(str, object()))
    game = make_game(t.tournament_id, 0, (a, b), faults=(FAULTS[0], bad))
    with pytest.raises(sqlite3.ProgrammingError):
        store.record_game(game)
    assert (_count(store, "games"), _count(store, "seats"), _count(store, "faults")) == (0, 0, 0)
    assert store.finished_game_ids(t.tournament_id) == set()


def test_an_unknown_bot_rolls_the_whole_game_back(store: Store) -> None:
    t = store.begin_tournament(SPEC)
    a, _ = two_bots(store)
    with pytest.raises(StoreError, match="FOREIGN KEY"):
        store.record_game(make_game(t.tournament_id, 0, (a, 999)))
    assert store.games() == []


def test_seats_must_match_num_seats(store: Store) -> None:
    t = store.begin_tournament(SPEC)
    a, b = two_bots(store)
    game = make_game(t.tournament_id, 0, (a, b))
    with pytest.raises(ValueError, match="num_seats"):
        store.record_game(dataclasses.replace(game, num_seats=3))


def test_games_come_back_in_schedule_order_not_insertion_order(store: Store) -> None:
    first = store.begin_tournament(SPEC)
    second = store.begin_tournament(SPEC)
    a, b = two_bots(store)
    games = [make_game(t.tournament_id, i, (a, b)) for t in (first, second) for i in range(12)]
    # Workers finish in any order; also interleave the two tournaments.
    for index in (7, 0, 23, 11, 3, 12, 5, 19, 1, 22, 9, 2, 14, 4, 21, 6, 8, 13, 10, 15, 20, 16):
        store.record_game(games[index])
    store.record_game(games[18])
    store.record_game(games[17])
    assert store.games() == games


def test_games_filter_by_variant_and_seat_count(store: Store) -> None:
    t = store.begin_tournament(SPEC)
    a, b = two_bots(store)
    c = store.add_bot("third", "2", "Cy", "sha256:cc")
    g0 = make_game(t.tournament_id, 0, (a, b))
    g1 = make_game(t.tournament_id, 1, (a, b, c))
    g2 = make_game(t.tournament_id, 2, (b, a), variant="europe@1")
    for game in (g2, g1, g0):
        store.record_game(game)
    assert store.games(variant="usa@1") == [g0, g1]
    assert store.games(players=2) == [g0, g2]
    assert store.games(variant="usa@1", players=3) == [g1]
    assert store.games(variant="usa") == []  # the store matches idents exactly
    assert store.pools() == [("europe@1", 2), ("usa@1", 2), ("usa@1", 3)]


def test_unfinished_tournament_is_the_latest_not_finished(store: Store) -> None:
    assert store.unfinished_tournament() is None
    first = store.begin_tournament(SPEC)
    second = store.begin_tournament(TournamentSpec("night 2", "usa@1", 3, 1, 7, {}))
    assert store.unfinished_tournament() == second
    store.finish_tournament(second.tournament_id)
    assert store.unfinished_tournament() == first
    store.finish_tournament(first.tournament_id)
    assert store.unfinished_tournament() is None
    finished = store.tournaments()
    assert [t.tournament_id for t in finished] == [first.tournament_id, second.tournament_id]
    assert all(t.finished_at is not None and t.finished_at >= t.created_at for t in finished)
    store.finish_tournament(first.tournament_id)  # again: the first time is kept
    assert store.tournaments() == finished
    with pytest.raises(StoreError, match="no tournament 99"):
        store.finish_tournament(99)


def test_add_bot_is_get_or_create(store: Store) -> None:
    a = store.add_bot("greedy", "1.0", "Ann", "sha256:aa")
    assert store.add_bot("greedy", "1.0", "someone else", "sha256:aa") == a
    changed = store.add_bot("greedy", "1.0", "Ann", "sha256:a2")  # same version, new files
    assert changed != a
    assert sorted(store.bots()) == [a, changed]
    assert store.bots()[a].author == "Ann"


def test_enter_updates_an_existing_entry(store: Store) -> None:
    t = store.begin_tournament(SPEC)
    a, _ = two_bots(store)
    store.enter(t.tournament_id, a, "old/path", accepted=False, reason="crashed")
    store.enter(t.tournament_id, a, "new/path", accepted=True)
    [(bot, path, accepted, reason)] = store.entries(t.tournament_id)
    assert (bot.bot_id, path, accepted, reason) == (a, "new/path", True, "")


def test_the_file_is_in_wal_mode_with_a_schema_version(store: Store) -> None:
    db = sqlite3.connect(store.path)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    db.close()


def test_another_programs_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError) as error:
        Store(path)
    message = str(error.value)
    assert str(path) in message
    assert "not a TTR Arena results store" in message and "customers" in message
    assert "\n" not in message
    assert path.read_bytes() == before


def test_a_garbage_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(StoreError) as error:
        Store(path)
    message = str(error.value)
    assert message.startswith(f"{path}: not a readable SQLite database")
    assert "\n" not in message


def test_a_newer_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1} is newer"):
        Store(path)


def test_an_empty_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    path.touch()
    with Store(path) as store:
        assert store.tournaments() == []
        assert store.pools() == []


def test_opening_without_create_refuses_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "typo.sqlite"
    with pytest.raises(StoreError, match="no such results store"):
        Store(path, create=False)
    assert not path.exists()
    Store(path).close()
    Store(path, create=False).close()
