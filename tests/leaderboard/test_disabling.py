"""A bot that behaves only in its first game (issue 21, item 8), in real tournaments.

tests/hostile_bots/first_game_only plays its first game properly, so it passes validation,
then exits with status 1 in every later game of the same process (a restarted process again
behaves once: about every second game of it faults). The tournament's fault rule
(leaderboard/faults.py; defaults: faulty in 5 of its last 50 games) must disable it with the
reason shown in the progress, the summary, ``ttr leaderboard show``, ``ttr tournament list``
and the league page's data; its games not yet begun are skipped, whole, stored as skipped and
counted nowhere as played; the honest bots are never disabled and play all their games
together; a run killed after the verdict resumes with the bot still disabled and its skipped
games unplayed. Sandboxed where this machine has the sandbox, as league nights run.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from leaderboard.faults import FaultRule
from leaderboard.progress import TournamentDisplay
from leaderboard.runner import Events, run
from leaderboard.schedule import build, games_in
from leaderboard.store import GameResult, SeatResult, Store
from leaderboard.worker import Entrant
from referee.hosting.sandbox import SandboxConfig, unavailable_reason
from tests.leaderboard.test_tournament import (
    GREEDY,
    RANDOM,
    ROOT,
    TTR,
    _assert_all_exit,
    _descendants,
)
from ttr_arena.cli import main as cli_main
from ttr_arena.pages.league.data import league_json

HOSTILE = ROOT / "tests" / "hostile_bots"
NAME = "hostile-first-game-only"
#: the reason a default rule gives it: after its fifth faulty game, its crash quoted
REASON = re.compile(
    r"disabled after game (t1-r\d+-c\d+-s\d+): faulted in 5 of its last (\d+) games "
    r"\(last: .*exited with status 1"
)


def first_game_only(tmp_path: Path) -> str:
    """The hostile bot as a folder of its own (a sandboxed bot sees only its folder, so
    _common.py goes beside it, as the sandbox conformance test does)."""
    folder = tmp_path / "first_game_only"
    shutil.copytree(
        HOSTILE / "first_game_only", folder, ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(HOSTILE / "_common.py", folder)
    return str(folder)


def sandbox_args() -> list[str]:
    """The sandbox where this machine has one (what league nights run), else none."""
    return [] if unavailable_reason() is None else ["--no-sandbox"]


def quick(db: Path) -> list[str]:
    """A small night: New York (the shortest game), two seats, two workers."""
    return [
        "tournament", "run", "--db", str(db), "--variant", "newyork", "--players", "2",
        "--workers", "2", "--move-ms", "1000", "--bank-ms", "10000", *sandbox_args(),
    ]  # fmt: skip


def test_a_bot_that_behaves_only_in_its_first_game_is_disabled_and_its_games_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = first_game_only(tmp_path)
    db = tmp_path / "league.db"
    assert cli_main([*quick(db), "--rounds", "5", "--json", hostile, RANDOM, GREEDY]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    total = games_in(3, 2, 5)
    assert summary["complete"] and summary["games"] == total
    assert summary["left_out"] == []  # it passed validation: its first game was clean
    [disabled] = summary["disabled"]
    assert (disabled["bot"], disabled["version"]) == (NAME, "1.0.0")
    match = REASON.match(disabled["reason"])
    assert match, disabled["reason"]
    assert summary["skipped"] > 0 and summary["played"] + summary["skipped"] == total
    assert f"  DISABLED  {NAME} 1.0.0: {disabled['reason']}" in err  # in the progress

    with Store(db) as store:
        bots = {b.name: b.bot_id for b in store.bots().values()}
        hostile_id = bots[NAME]
        [d] = store.disabled()
        assert (d.bot_id, d.game_id, d.reason) == (hostile_id, match[1], disabled["reason"])
        games = {g.game_id: g for g in store.games()}
        skipped = store.skipped_game_ids(1)
        assert len(games) == summary["played"] and len(skipped) == summary["skipped"]
        # every scheduled game is either played or skipped, never both
        order = sorted(bots, key=lambda name: name)  # the schedule's order: by name
        schedule = build(3, 2, 5, summary["base_seed"], 1, key=store.seed_key())
        assert not skipped & games.keys()
        assert skipped | games.keys() == {g.game_id for g in schedule}
        for g in schedule:
            names = {order[i] for i in g.seats}
            if NAME not in names:  # the honest bots play every game of theirs
                assert g.game_id in games
        # a skipped game is a whole game of the disabled bot, every rotation of its deal
        assert all(NAME in {order[i] for i in g.seats} for g in schedule if g.game_id in skipped)
        # its games after the verdict: only those already handed to a worker (one each)
        its_games = sorted(
            (g for g in games.values() if hostile_id in {s.bot_id for s in g.seats}),
            key=lambda g: g.finished_at,
        )
        verdict = games[d.game_id]
        assert len([g for g in its_games if g.finished_at > verdict.finished_at]) <= 2
        faulty = [g for g in its_games if _seat_of(g, hostile_id).faults]
        assert len(faulty) >= 5 and int(match[2]) <= len(its_games)

    shown = subprocess.run(
        [*TTR, "leaderboard", "show", "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    row = next(ln for ln in shown.splitlines() if NAME in ln and ln[:1].isdigit())
    assert f"{NAME} 1.0.0 [disabled]" in row
    assert f"{NAME} 1.0.0 in tournament #1: {disabled['reason']}" in shown.splitlines()
    for honest in ("random 1.0.0", "greedy 1.0.0"):
        assert f"{honest} [disabled]" not in shown

    listed = subprocess.run(
        [*TTR, "tournament", "list", "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    [t] = json.loads(listed)
    assert (t["state"], t["games_stored"], t["games_skipped"], t["games_scheduled"]) == (
        "finished",
        summary["played"],
        summary["skipped"],
        total,
    )

    with Store(db, readonly=True) as store:
        page = league_json(store)
    [shown_disabled] = page["disabled"]
    assert (shown_disabled["bot"], shown_disabled["reason"]) == (NAME, disabled["reason"])
    rows = {r["bot"]: r for r in page["pools"][0]["standings"]}
    assert [e["reason"] for e in rows[NAME]["disabled"]] == [disabled["reason"]]
    assert rows["random"]["disabled"] == [] and rows["greedy"]["disabled"] == []
    assert page["tournaments"][0]["games_skipped"] == summary["skipped"]


def _seat_of(game: GameResult, bot_id: int) -> SeatResult:
    return next(s for s in game.seats if s.bot_id == bot_id)


def _hostile_games(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT s.game_id FROM seats s JOIN bots b USING (bot_id) WHERE b.name = ?", (NAME,)
        ).fetchall()
    return {r[0] for r in rows}


def _disabled_rows(db: Path) -> list[tuple[int, str, str]]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT bot_id, game_id, reason FROM disabled").fetchall()
    except sqlite3.OperationalError:
        return []  # the store is being created


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
def test_a_run_killed_after_the_verdict_resumes_with_the_bot_still_disabled(
    tmp_path: Path,
) -> None:
    hostile = first_game_only(tmp_path)
    db = tmp_path / "league.db"
    rounds = 8
    proc = subprocess.Popen(
        [*TTR, *quick(db), "--rounds", str(rounds), hostile, RANDOM, GREEDY],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    family: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while not _disabled_rows(db) and proc.poll() is None and time.monotonic() < deadline:
            family |= _descendants(proc.pid)
            time.sleep(0.05)
        family |= _descendants(proc.pid)
        assert proc.poll() is None, "the run ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _assert_all_exit(family)
    [verdict] = _disabled_rows(db)
    with Store(db) as store:
        skipped_before = store.skipped_game_ids(1)
    played_before = _hostile_games(db)

    resumed = subprocess.run(
        [*TTR, *quick(db)[:4], *sandbox_args(), "--resume", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    total = games_in(3, 2, rounds)
    assert summary["complete"] and summary["games"] == total
    assert [d["reason"] for d in summary["disabled"]] == [verdict[2]]
    assert _disabled_rows(db) == [verdict]  # not re-enabled, not judged again
    assert _hostile_games(db) == played_before  # none of its games played after the kill
    with Store(db) as store:
        skipped = store.skipped_game_ids(1)
        stored = store.finished_game_ids(1)
    assert skipped_before <= skipped and not skipped & stored  # skipped stays skipped
    assert len(stored) + len(skipped) == total
    assert summary["stored_before"] + summary["played"] + summary["skipped"] == total
    assert summary["skipped"] == len(skipped)


class _Stop(Exception):
    """Ends a run from its events, as a kill would, after some games."""


def _fake_faults(db: Path, bot_id: int) -> None:
    """Give ``bot_id`` a crash in every stored game, as if it had one."""
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE seats SET faults = 1 WHERE bot_id = ?", (bot_id,))
        conn.execute(
            "INSERT INTO faults (game_id, n, seat, decision, turn, kind, rule, message)"
            " SELECT game_id, 1000, seat, 0, 0, 'crash', '', 'simulated' FROM seats"
            " WHERE bot_id = ?",
            (bot_id,),
        )


@pytest.mark.parametrize("rule", [FaultRule(), None], ids=["rule", "no-rule"])
def test_a_verdict_the_killed_run_had_no_time_to_store_is_given_on_resume(
    tmp_path: Path, rule: FaultRule | None
) -> None:
    # Killed between storing a game and storing the verdict it brings: the resumed run counts
    # the stored games again (in the order they finished) and gives the verdict itself. With
    # no rule (--no-disable), nothing is ever disabled and every game is played.
    options = {
        "variant": "newyork",
        "players": 2,
        "workers": 1,
        "move_ms": 1000,
        "bank_ms": 10000,
        "records": None,
        "sandbox": SandboxConfig(enabled=False),  # the trusted sample bots
    }
    played: list[GameResult] = []

    def stop_after_six(game: GameResult, top: object) -> None:
        played.append(game)
        if len(played) == 6:
            raise _Stop

    with Store(tmp_path / "l.db") as store:
        with pytest.raises(_Stop):
            run(
                store,
                bot_dirs=[RANDOM, GREEDY],
                rounds=6,
                events=Events(played=stop_after_six),
                faults=rule,
                **options,  # type: ignore[arg-type]
            )
        random_id = next(b.bot_id for b in store.bots().values() if b.name == "random")
        _fake_faults(tmp_path / "l.db", random_id)
        told: list[tuple[str, str, int]] = []
        outcome = run(
            store,
            bot_dirs=[],
            resume=True,
            events=Events(disabled=lambda e, why, n: told.append((e.name, why, n))),
            **options,  # type: ignore[arg-type]
        )
        assert outcome.complete and outcome.total == 12 and outcome.stored_before == 6
        if rule is None:
            assert (outcome.played, outcome.skipped, outcome.disabled, told) == (6, 0, [], [])
            assert store.disabled() == []
            return
        fifth = sorted(store.games(), key=lambda g: g.finished_at)[4].game_id
        reason = (
            f"disabled after game {fifth}: faulted in 5 of its last 5 games "
            "(last: crashed: simulated)"
        )
        assert told == [("random", reason, 0)]
        assert [(e.name, why) for e, why in outcome.disabled] == [("random", reason)]
        # every game left has random in it (two bots): all skipped, none played
        assert (outcome.played, outcome.skipped) == (0, 6)
        assert len(store.skipped_game_ids(1)) == 6 and len(store.games()) == 6
        [d] = store.disabled()
        assert (d.bot_id, d.game_id) == (random_id, fifth)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--no-disable", "--fault-min", "3"], "leave out --fault-min"),
        (["--fault-rate", "0"], "must be above 0 and at most 1"),
        (["--fault-rate", "1.5"], "must be above 0 and at most 1"),
        (["--fault-window", "0"], "--fault-window"),
        (["--resume", "--fault-window", "10"], "keeps the settings"),
        (["--resume", "--no-disable"], "keeps the settings"),
    ],
)
def test_fault_options_that_make_no_sense_get_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    db = tmp_path / "l.db"
    db.touch()  # --resume checks the options before it looks for a tournament
    with pytest.raises(SystemExit) as e:
        cli_main(["tournament", "run", "--db", str(db), *extra, RANDOM, GREEDY])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.strip().count("\n") <= 1, err


def test_the_progress_display_counts_skipped_games_as_done() -> None:
    import io

    out = io.StringIO()
    bad = Entrant(2, "/bots/bad", "bad", "0.1", "h2")
    game = GameResult("g", 1, 0, 1, "usa@1", 2, 7, "last_round", 90, None, 0.0, 1.0, (), ())
    with TournamentDisplay(out, live=False) as display:
        events = display.events()
        events.playing(10, 0)
        for _ in range(3):
            events.played(game, [])
        events.disabled(bad, "disabled after game g: faulted in 5 of its last 5 games", 7)
    lines = out.getvalue().splitlines()
    assert (
        "  DISABLED  bad 0.1: disabled after game g: faulted in 5 of its last 5 games; "
        "7 of its games not yet begun skipped"
    ) in lines
    assert lines[-1].startswith("  10/10 games (100%)")
