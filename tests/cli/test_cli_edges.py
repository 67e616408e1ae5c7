"""The organiser's rough edges of ``ttr``: abandoning a run that cannot be resumed, the
tournament's name in every output, one tournament's leaderboard and its export formats, refused
commands that leave nothing behind, output paths and clocks checked before any bot starts,
unknown variants, ``| head`` and every ``--help``.

Stores are built through the store's own API where no game needs playing; one tiny real
tournament (two bots, two games) covers what only a run shows.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.store import _MIGRATIONS, SCHEMA_VERSION, SeatResult, Store, TournamentSpec
from tests.helpers import stored_game
from ttr_arena.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
RANDOM = str(ROOT / "sample_bots" / "random")
GREEDY = str(ROOT / "sample_bots" / "greedy")
TTR = [sys.executable, "-m", "ttr_arena.cli"]


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``ttr argv`` in-process, expecting a user error: exit 2 and one ``ttr: error:``
    line (after --no-sandbox's warning, if given); returns that line."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("WARNING: --no-sandbox")]
    assert len(lines) == 1 and lines[0].startswith("ttr: error: "), err
    return lines[0]


def ok(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, str]:
    assert main(list(argv)) == 0
    out, err = capsys.readouterr()
    return out, err


def marker_bot(folder: Path) -> tuple[str, Path]:
    """A bot folder whose process, if ever started, leaves a file behind: proof that a
    command was refused before any bot started."""
    marker = folder.parent / f"{folder.name}-started"
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(
        f'name = "{folder.name}"\nversion = "1"\n'
        f'command = ["{{python}}", "-c", "open({str(marker)!r}, \\"w\\")"]\n'
    )
    return str(folder), marker


def add_game(store: Store, tournament_id: int, index: int, ranks: dict[int, int]) -> None:
    """A finished 2-player usa@1 game of ``tournament_id``: bot_id -> rank."""
    seats = tuple(
        SeatResult(seat, bot, 100 - 10 * rank, rank, 0, 0, 0, 0)
        for seat, (bot, rank) in enumerate(ranks.items())
    )
    game = dataclasses.replace(
        stored_game(index, seats), game_id=f"t{tournament_id}-g{index}", tournament_id=tournament_id
    )
    assert store.record_game(game)


def two_tournaments(db: Path) -> tuple[int, int]:
    """Tournament 1 "autumn" (finished): alpha beats beta 3 times. Tournament 2 "winter"
    (finished): beta beats alpha twice, gamma unseen. Returns (alpha, beta)."""
    with Store(db) as store:
        alpha = store.add_bot("alpha", "1", "Ann", "h1")
        beta = store.add_bot("beta|pipe", "2", "Bo", "h2")
        autumn = store.begin_tournament(TournamentSpec("autumn", "usa@1", 2, 1, 0, {"bots": []}))
        for i in range(3):
            add_game(store, autumn.tournament_id, i, {alpha: 1, beta: 2})
        store.finish_tournament(autumn.tournament_id)
        winter = store.begin_tournament(TournamentSpec("winter", "usa@1", 2, 1, 0, {"bots": []}))
        for i in range(2):
            add_game(store, winter.tournament_id, i, {beta: 1, alpha: 2})
        store.finish_tournament(winter.tournament_id)
    return alpha, beta


def test_a_leaderboard_filter_that_matches_no_pool_names_the_pools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--players 6`` on a store of 2-player games was "no games recorded", exit 0: it reads
    as an empty store. Now it is an error naming the pools there are; a filter that matches
    shows its table, and a store without any game keeps its plain message."""
    db = tmp_path / "league.db"
    two_tournaments(db)
    show = ("leaderboard", "show", "--db", str(db))
    line = refused(capsys, *show, "--players", "6")
    assert line == "ttr: error: no 6-player games in this store; its pools: usa@1 2p"
    line = refused(capsys, *show, "--variant", "usa", "--players", "3")
    assert line == "ttr: error: no usa 3-player games in this store; its pools: usa@1 2p"
    line = refused(capsys, *show, "--tournament", "autumn", "--players", "4")
    assert "in this tournament; its pools: usa@1 2p" in line
    out, _ = ok(capsys, *show, "--variant", "usa", "--players", "2")
    assert "alpha" in out and "no games recorded" not in out
    empty = tmp_path / "empty.db"
    Store(empty).close()
    out, _ = ok(capsys, "leaderboard", "show", "--db", str(empty), "--players", "6")
    assert out.startswith("no games recorded")


# abandon and list ------------------------------------------------------------------------------


def test_abandon_frees_the_store_keeps_its_games_and_every_output_names_the_tournament(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "league.db"
    with Store(db) as store:  # a run killed after one game, whose bots are gone for good
        a = store.add_bot("gone-a", "1", "", "ha")
        b = store.add_bot("gone-b", "1", "", "hb")
        broken = store.begin_tournament(
            TournamentSpec("broken night", "usa@1", 2, 1, 0, {"bots": []})
        )
        add_game(store, broken.tournament_id, 0, {a: 1, b: 2})
    run = ["tournament", "run", "--db", str(db), "--players", "2", "--workers", "2"]
    refusal = refused(capsys, *run, RANDOM, GREEDY)
    assert "holds an unfinished tournament" in refusal
    assert f"`ttr tournament abandon --db {db}`" in refusal
    out, _ = ok(capsys, "tournament", "list", "--db", str(db))
    assert out.splitlines()[2].split()[:4] == ["1", "broken", "night", "unfinished"]

    out, _ = ok(capsys, "tournament", "abandon", "--db", str(db), "--name", "broken night")
    assert out.startswith('tournament #1 "broken night" abandoned: its 1 stored game(s) stay')
    assert "no unfinished tournament" in refused(
        capsys, "tournament", "run", "--db", str(db), "--resume"
    )
    [row] = json.loads(ok(capsys, "tournament", "list", "--db", str(db), "--json")[0])
    assert (row["state"], row["games_stored"], row["abandoned_at"] is not None) == (
        "abandoned",
        1,
        True,
    )

    # A new run is no longer blocked, and names itself in every output.
    out, err = ok(capsys, *run, "--name", "spring night", RANDOM, GREEDY)
    assert (
        err.splitlines()[0] == 'running tournament #2 "spring night": usa@1, 2 players, 1 round(s)'
    )
    assert out.splitlines()[0].startswith('tournament #2 "spring night": leaderboard')
    assert 'tournament #2 "spring night": 2/2 games stored in' in out
    # The abandoned tournament's game still counts in the pool: 1 + 2 games.
    assert "usa@1, 2 players — 3 games" in out
    out, _ = ok(capsys, *run, "--name", "summer", "--json", RANDOM, GREEDY)
    summary = json.loads(out)
    assert (summary["tournament"], summary["name"], summary["complete"]) == (3, "summer", True)

    # One tournament's table: its games alone, named.
    out, _ = ok(capsys, "leaderboard", "show", "--db", str(db), "--tournament", "spring night")
    assert out.splitlines()[0] == 'tournament #2 "spring night": its games alone'
    assert "usa@1, 2 players — 2 games" in out and "gone-a" not in out
    listed = json.loads(ok(capsys, "tournament", "list", "--db", str(db), "--json")[0])
    assert [(t["name"], t["state"], t["games_stored"], t["games_scheduled"]) for t in listed] == [
        ("broken night", "abandoned", 1, None),
        ("spring night", "finished", 2, 2),
        ("summer", "finished", 2, 2),
    ]


def test_abandon_by_number_refuses_finished_ones_and_repeats_harmlessly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "league.db"
    two_tournaments(db)
    with Store(db) as store:
        store.begin_tournament(TournamentSpec("winter", "usa@1", 2, 1, 0, {"bots": []}))
    abandon = ["tournament", "abandon", "--db", str(db)]
    assert "is finished" in refused(capsys, *abandon, "--id", "1")
    assert "2 tournaments are named 'winter' (#2, #3)" in refused(
        capsys, *abandon, "--name", "winter"
    )
    assert "no tournament 'spring'" in refused(capsys, *abandon, "--name", "spring")
    assert "no tournament '#9'" in refused(capsys, *abandon, "--id", "9")
    assert "not allowed with" in refused(capsys, *abandon, "--id", "3", "--name", "winter")
    assert ok(capsys, *abandon, "--id", "3")[0].startswith('tournament #3 "winter" abandoned')
    assert ok(capsys, *abandon, "--id", "3")[0] == 'tournament #3 "winter" was already abandoned\n'
    assert "no unfinished tournament to abandon" in refused(capsys, *abandon)
    missing = tmp_path / "missing.db"
    assert "no such results store" in refused(capsys, "tournament", "list", "--db", str(missing))
    assert "no such results store" in refused(capsys, *abandon[:2], "--db", str(missing))
    assert not missing.exists()


def test_a_store_of_the_first_schema_is_upgraded_and_stays_readable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "old.db"
    two_tournaments(db)
    with Store(db) as store:
        store.begin_tournament(TournamentSpec("killed", "usa@1", 2, 1, 0, {"bots": []}))
    # Back to schema 1 as it was: each migration step undone, newest first.
    conn = sqlite3.connect(db)
    for step in sorted(_MIGRATIONS, reverse=True):
        for statement in _MIGRATIONS[step]:
            added = re.fullmatch(r"ALTER TABLE (\w+) ADD COLUMN (\w+) .*", statement)
            created = re.fullmatch(
                r"\s*CREATE (TABLE|INDEX) (?:IF NOT EXISTS )?(\w+) .*", statement, re.DOTALL
            )
            if added:
                conn.execute(f"ALTER TABLE {added[1]} DROP COLUMN {added[2]}")
            else:
                assert created, f"teach this test to undo {statement!r}"
                conn.execute(f"DROP {created[1]} {created[2]}")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    before = ok(capsys, "leaderboard", "show", "--db", str(db), "--json")[0]
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    conn.close()
    with Store(db) as store:
        assert [t.state for t in store.tournaments()] == ["finished", "finished", "unfinished"]
        assert len(store.games()) == 5
    assert json.loads(before)["pools"][0]["games"] == 5
    ok(capsys, "tournament", "abandon", "--db", str(db))
    with Store(db) as store:
        assert store.unfinished_tournament() is None


# leaderboard show --tournament, --format ----------------------------------------------------


def test_leaderboard_of_one_tournament_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "league.db"
    alpha, beta = two_tournaments(db)
    show = ["leaderboard", "show", "--db", str(db)]

    def table(*extra: str) -> list[dict[str, str]]:
        return list(csv.DictReader(io.StringIO(ok(capsys, *show, "--format", "csv", *extra)[0])))

    everything = table()
    assert sorted((r["bot"], r["games"]) for r in everything) == [
        ("alpha", "5"),
        ("beta|pipe", "5"),
    ]
    winter = table("--tournament", "winter")
    assert [(r["bot"], r["rank"], r["games"], r["wins"]) for r in winter] == [
        ("beta|pipe", "1", "2", "2"),
        ("alpha", "2", "2", "0"),
    ]
    assert table("--tournament", "1")[0]["bot"] == "alpha"  # by number: autumn
    assert table("--tournament", "#2") == winter
    assert float(winter[0]["mu"]) > 25 > float(winter[1]["mu"])  # fresh ratings, unrounded

    as_json = json.loads(ok(capsys, *show, "--tournament", "winter", "--json")[0])
    assert as_json == json.loads(ok(capsys, *show, "--tournament", "winter", "--format", "json")[0])
    assert as_json["tournament"] == {"id": 2, "name": "winter"}
    [pool] = as_json["pools"]
    assert pool["games"] == 2 and [s["bot_id"] for s in pool["standings"]] == [beta, alpha]

    markdown = ok(capsys, *show, "--tournament", "winter", "--format", "markdown")[0]
    lines = markdown.splitlines()
    assert lines[0] == '## tournament #2 "winter": its games alone'
    assert "### usa@1, 2 players — 2 games" in lines
    rows = [ln for ln in lines if ln.startswith("| 1 ") or ln.startswith("| 2 ")]
    assert rows[0].startswith("| 1 | beta\\|pipe 2 |") and rows[1].startswith("| 2 | alpha 1 |")
    assert all(ln.count("|") - ln.count("\\|") == 11 for ln in lines if ln.startswith("|"))

    text = ok(capsys, *show, "--format", "text")[0]
    assert text == ok(capsys, *show)[0] and "usa@1, 2 players — 5 games" in text
    assert "leave out one of --json" in refused(capsys, *show, "--json", "--format", "csv")
    assert "invalid choice: 'xml'" in refused(capsys, *show, "--format", "xml")
    assert "no tournament 'spring'" in refused(capsys, *show, "--tournament", "spring")


# refused commands leave nothing behind --------------------------------------------------------


def test_a_refused_tournament_run_creates_no_store_and_no_records_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "new.db"
    records = tmp_path / "new-records"
    run = ["tournament", "run", "--db", str(db)]
    cases = [
        (["--players", "3", RANDOM, GREEDY], "need at least 3"),
        (["--variant", "nope", RANDOM, GREEDY], "unknown variant 'nope'"),
        ([RANDOM, str(tmp_path / "no-such-bot")], "not a bot folder"),
        (["--records", str(tmp_path / "deep" / "r"), "--players", "3", RANDOM, GREEDY], "at least"),
        (["--resume"], "no such results store, so no unfinished tournament"),
    ]
    for extra, message in cases:
        assert message in refused(capsys, *run, *extra)
        assert sorted(p.name for p in tmp_path.iterdir()) == [], extra
    assert not records.exists()
    # An existing store stays (with its tournaments); the records folder made for the
    # refused run goes.
    two_tournaments(db)
    assert "need at least 3" in refused(capsys, *run, "--players", "3", RANDOM, GREEDY)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.db"]
    with Store(db) as store:
        assert len(store.tournaments()) == 2


def test_a_refused_game_creates_no_record_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    never = tmp_path / "bots" / "never"
    never.mkdir(parents=True)
    (never / "bot.toml").write_text(
        'name = "never"\nversion = "1"\ncommand = ["{python}", "-c", "import sys; sys.exit(4)"]\n'
    )
    record = tmp_path / "out" / "game.json"
    # The first bot starts (and writes its log beside the record); the second will not.
    # Unsandboxed, so that this runs where bots cannot be sandboxed too.
    message = refused(capsys, "play", "--no-sandbox", "--record", str(record), RANDOM, str(never))
    assert "status 4" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bots"]


def test_a_bot_that_declares_other_variants_is_refused_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bot.toml's ``variants``: ``ttr play`` and ``ttr tournament run`` of another variant
    refuse the bot by name, start nothing and create no store."""
    folder, marker = marker_bot(tmp_path / "bots" / "cards_only")
    toml = Path(folder) / "bot.toml"
    toml.write_text(toml.read_text() + 'variants = ["cardgame"]\n')
    for argv in (
        ["play", "--no-sandbox", "--variant", "usa", folder, RANDOM],
        ["tournament", "run", "--db", str(tmp_path / "l.db"), "--players", "2", folder, RANDOM],
    ):
        line = refused(capsys, *argv)
        assert "'cards_only' declares variants cardgame, not usa" in line, line
        assert not marker.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bots"]


# checked before the game starts ---------------------------------------------------------------


def test_record_paths_are_checked_before_any_bot_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot, started = marker_bot(tmp_path / "bots" / "marker")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    a_folder = tmp_path / "folder"
    a_folder.mkdir()
    play = ["play", "--no-sandbox", bot, bot]
    assert "notes.txt is not a folder" in refused(capsys, *play, "--record", f"{a_file}/x/g.json")
    assert "is a folder; give a file name" in refused(capsys, *play, "--record", str(a_folder))
    assert "--logs" in refused(
        capsys, *play, "--record", f"{a_folder}/g.json", "--logs", str(a_file)
    )
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        line = refused(capsys, *play, "--record", f"{locked}/sub/g.json")
        assert "cannot write in" in line and "ermission denied" in line
    assert not started.exists()
    assert list(a_folder.iterdir()) == [] and a_file.read_text() == "mine"


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--move-ms", "0", "must be 10-600000, got 0"),
        ("--move-ms", "-5", "must be 10-600000, got -5"),
        ("--move-ms", "99999999999", "must be 10-600000"),
        ("--move-ms", "1.5", "expected a whole number"),
        ("--bank-ms", "-1", "must be 0-3600000"),
        ("--bank-ms", "86400000", "must be 0-3600000"),
        ("--startup-s", "0", "must be 0.1-600"),
        ("--startup-s", "nan", "must be 0.1-600"),
        ("--startup-s", "1e9", "must be 0.1-600"),
    ],
)
def test_out_of_range_clocks_are_refused_before_any_bot_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, says: str
) -> None:
    bot, started = marker_bot(tmp_path / "marker")
    for command in (
        ["play", bot, bot],
        ["tournament", "run", "--db", str(tmp_path / "l.db"), bot, bot],
    ):
        line = refused(capsys, *command, f"{option}={value}")
        assert option in line and says in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marker"]
    assert not started.exists()


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every runnable command path (``("tournament", "run")``, ...) of the parser."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*path, name))
    return found or [path]


def _options(command: tuple[str, ...]) -> dict[str, argparse.Action]:
    parser = build_parser()
    for name in command:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return {o: a for a in parser._actions for o in a.option_strings}


def test_unknown_variants_are_errors_in_every_command_that_takes_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot, started = marker_bot(tmp_path / "marker")
    db = tmp_path / "league.db"
    two_tournaments(db)
    runs = [
        ["selfplay"],
        ["play", bot, bot],
        ["tournament", "run", "--db", str(tmp_path / "new.db"), bot, bot],
        ["leaderboard", "show", "--db", str(db)],
    ]
    for argv in runs:
        for variant in ("nope", "usa@7"):
            line = refused(capsys, *argv, "--variant", variant)
            assert repr(variant) in line, line
            if variant == "nope":
                assert "available: " in line and "usa1910" in line and "cardgame" in line
    assert not started.exists() and not (tmp_path / "new.db").exists()
    # A known variant without games in a store that has some names the pools it does have.
    line = refused(capsys, "leaderboard", "show", "--db", str(db), "--variant", "mega")
    assert line == "ttr: error: no mega games in this store; its pools: usa@1 2p", line
    # Every command taking --variant checks it as it is read (leaderboard show: above).
    from ttr_arena.cli.options import known_variant

    for command in _commands(build_parser()):
        option = _options(command).get("--variant")
        if option is not None and command != ("leaderboard", "show"):
            assert option.type is known_variant, command


# output ---------------------------------------------------------------------------------------


def _to_a_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``ttr argv`` with stdout a pipe nobody reads: the reader is gone before the
    command writes a byte (as with ``| head`` once head has its lines), so every write fails
    with EPIPE, without depending on timing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*TTR, *argv], stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=60
        )
    finally:
        os.close(write_end)


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    two_tournaments(db)
    for argv in (
        ["variants"],
        ["leaderboard", "show", "--db", str(db)],
        ["leaderboard", "show", "--db", str(db), "--format", "csv"],
        ["tournament", "list", "--db", str(db)],
    ):
        done = _to_a_closed_pipe(argv)
        assert (done.returncode, done.stderr) == (0, ""), argv


def test_help_works_for_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    # A bare "%" in any help string makes argparse's formatting raise: every command's
    # --help is formatted here, so one slipping in fails this test.
    commands = _commands(build_parser())
    assert {("tournament", "abandon"), ("tournament", "list"), ("leaderboard", "show")} <= set(
        commands
    )
    for command in [(), *{c[:1] for c in commands}, *commands]:
        with pytest.raises(SystemExit) as exit_info:
            main([*command, "--help"])
        assert exit_info.value.code == 0, command
        out, err = capsys.readouterr()
        assert out.startswith("usage: ttr") and err == "", command
        # argparse %-formats help strings but prints descriptions as written: "%%" in the
        # output is a description escaped as if it were a help string.
        assert "%%" not in out, command
    out = subprocess.run(
        [*TTR, "leaderboard", "show", "--help"], capture_output=True, text=True, cwd=ROOT
    ).stdout
    assert "95% interval" in " ".join(out.split())
