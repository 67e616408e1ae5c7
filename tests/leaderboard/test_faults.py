"""The fault rule (leaderboard/faults.py) on its own, and the store's record of disabled bots
and skipped games. The rule disables a bot once the games among its last WINDOW in which it
faulted reach max(MINIMUM, ceil(RATE x games counted)); the defaults must never disable an
honest bot that times out once under load."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from leaderboard.faults import FaultRule, FaultWatch, GameFaults, Verdict
from leaderboard.store import SCHEMA_VERSION, Store, TournamentSpec
from tests.leaderboard.test_store import make_game


def history(pattern: str) -> list[GameFaults]:
    """Games from a string: ``x`` a game with a fault, ``.`` a clean one; ids g1, g2, ..."""
    return [
        GameFaults(f"g{i}", 1 if c == "x" else 0, "crashed: boom" if c == "x" else "")
        for i, c in enumerate(pattern, start=1)
    ]


def first_verdict(rule: FaultRule, pattern: str) -> Verdict | None:
    """The verdict a watch gives as the games come one by one (the first, if any)."""
    watch: FaultWatch[str] = FaultWatch(rule)
    verdicts = watch.add_all(("bot", g) for g in history(pattern))
    assert len(verdicts) <= 1  # given once
    return verdicts[0][1] if verdicts else None


def test_the_defaults_are_five_faulty_games_among_the_last_fifty() -> None:
    rule = FaultRule()
    assert (rule.window, rule.rate, rule.minimum) == (50, 0.10, 5)
    assert [rule.threshold(n) for n in (1, 5, 12, 49, 50)] == [5, 5, 5, 5, 5]
    assert rule.verdict(history("xxxx")) is None  # 4 faulty games: not yet
    assert rule.verdict(history("xxxxx")) == Verdict("g5", 5, 5, "crashed: boom")


def test_an_honest_bot_that_times_out_now_and_then_is_never_disabled() -> None:
    # One timeout under load in every thirteenth game, for 650 games: never 5 in any 50.
    assert first_verdict(FaultRule(), ("." * 12 + "x") * 50) is None
    assert first_verdict(FaultRule(), "x" + "." * 600) is None
    assert first_verdict(FaultRule(), "x" * 4 + "." * 46 + "x" * 4) is None  # out of the window


def test_a_bot_that_behaves_only_in_its_first_game_is_disabled_at_its_fifth_fault() -> None:
    verdict = first_verdict(FaultRule(), ".x" * 20)  # restarted after each crash: every 2nd
    assert verdict == Verdict("g10", 5, 10, "crashed: boom")
    assert verdict.reason == (
        "disabled after game g10: faulted in 5 of its last 10 games (last: crashed: boom)"
    )
    assert first_verdict(FaultRule(), "." + "x" * 20) == Verdict("g6", 5, 6, "crashed: boom")


def test_the_rate_counts_once_the_window_holds_more_than_the_minimum_needs() -> None:
    rule = FaultRule(window=100, rate=0.10, minimum=5)
    assert [rule.threshold(n) for n in (10, 50, 51, 100)] == [5, 5, 6, 10]
    # a fault in one game of 11: under 10% of the games counted at every step
    assert first_verdict(rule, ("." * 10 + "x") * 9) is None
    # one in 10 reaches it: 5 of 50 (reaching the threshold is enough)
    assert first_verdict(rule, ("." * 9 + "x") * 10) == Verdict("g50", 5, 50, "crashed: boom")


def test_the_rate_is_read_as_the_decimal_written() -> None:
    # 0.1 * 30 is 3.0000000000000004 in floating point; 10% of 30 games is 3, not 4
    assert FaultRule(rate=0.1, minimum=1).threshold(30) == 3
    assert FaultRule(rate=0.3, minimum=1).threshold(10) == 3
    assert FaultRule(rate=1.0, minimum=1).threshold(7) == 7  # every game counted must fault


def test_old_faults_leave_the_window() -> None:
    rule = FaultRule(window=10, rate=0.1, minimum=3)
    assert first_verdict(rule, "xx" + "." * 8 + "x") is None  # g1 has left: 2 of the last 10
    assert first_verdict(rule, "xx" + "." * 7 + "x") == Verdict("g10", 3, 10, "crashed: boom")


def test_a_watch_judges_each_bot_apart_and_gives_a_verdict_once() -> None:
    watch: FaultWatch[int] = FaultWatch(FaultRule(minimum=2))
    faulty = GameFaults("g", 1, "timed out: no accepted answer in 1000 ms")
    assert watch.add(1, faulty) is None
    assert watch.add(2, faulty) is None
    assert watch.add(2, GameFaults("g2")) is None
    verdict = watch.add(1, GameFaults("g3", 2, "answer rejected (claim.taken): taken"))
    assert verdict is not None and verdict.game_id == "g3"
    assert verdict.last == "answer rejected (claim.taken): taken"  # the most recent fault
    assert watch.disabled == {1}
    assert watch.add(1, faulty) is None  # disabled: no second verdict
    assert watch.add(2, faulty) is not None


def test_a_watch_starts_from_the_bots_already_disabled() -> None:
    watch: FaultWatch[int] = FaultWatch(FaultRule(minimum=1), disabled={7})
    assert watch.add(7, GameFaults("g", 1)) is None
    assert watch.add(8, GameFaults("g", 1)) is not None


@pytest.mark.parametrize(
    ("window", "rate", "minimum", "message"),
    [
        (0, 0.1, 5, "window"),
        (50, 0.0, 5, "rate"),
        (50, 1.5, 5, "rate"),
        (50, float("nan"), 5, "rate"),
        (50, 0.1, 0, "fewest"),
    ],
)
def test_a_rule_that_makes_no_sense_is_refused(
    window: int, rate: float, minimum: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        FaultRule(window, rate, minimum)


def test_a_rule_is_kept_as_json_and_read_back() -> None:
    rule = FaultRule(20, 0.25, 3)
    assert FaultRule.from_json(rule.to_json()) == rule
    assert "max(3, 25% of the games counted) of its last 20 games" in rule.describe()


# the store -------------------------------------------------------------------------------------


def test_the_store_keeps_the_first_reason_and_never_skips_a_stored_game(tmp_path: Path) -> None:
    with Store(tmp_path / "l.db") as store:
        t = store.begin_tournament(TournamentSpec("t", "usa@1", 2, 1, 1, {}))
        a = store.add_bot("a", "1", "", "ha")
        b = store.add_bot("b", "1", "", "hb")
        played = make_game(t.tournament_id, 0, (a, b))
        store.record_game(played)
        assert store.disable(t.tournament_id, a, played.game_id, "disabled after game: first")
        assert not store.disable(t.tournament_id, a, played.game_id, "second")
        [d] = store.disabled(t.tournament_id)
        assert (d.bot_id, d.game_id, d.reason) == (a, played.game_id, "disabled after game: first")
        assert store.disabled(t.tournament_id + 1) == []
        games = [(played.game_id, 0), ("t1-x1", 1), ("t1-x2", 2)]
        assert store.skip(t.tournament_id, games, a, "a is disabled") == 2  # not the stored one
        assert store.skip(t.tournament_id, games, a, "again") == 0
        assert store.skipped_game_ids(t.tournament_id) == {"t1-x1", "t1-x2"}
        assert store.skip_counts() == {t.tournament_id: 2}
        assert store.finished_game_ids(t.tournament_id) == {played.game_id}  # none "played"
        assert len(store.games()) == 1


def test_a_store_from_before_gains_the_tables_and_keeps_its_games(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Store(path) as store:
        t = store.begin_tournament(TournamentSpec("t", "usa@1", 2, 1, 1, {}))
        a = store.add_bot("a", "1", "", "ha")
        b = store.add_bot("b", "1", "", "hb")
        store.record_game(make_game(t.tournament_id, 0, (a, b)))
    with sqlite3.connect(path) as db:  # as schema version 4 left it
        db.execute("DROP TABLE disabled")
        db.execute("DROP TABLE skipped")
        db.execute("PRAGMA user_version = 4")
    with Store(path) as store:
        assert store.disabled() == [] and store.skip_counts() == {}
        assert len(store.games()) == 1
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
