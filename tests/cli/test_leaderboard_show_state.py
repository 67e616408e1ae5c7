"""``ttr leaderboard show`` ends its text with one line on an unfinished tournament (issue 23):
running (its heartbeat fresh at the store's clock) or stopped, with the commands that resume
or abandon it. The store's clock is replaced (``leaderboard.store.time``): nothing sleeps."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from leaderboard.store import STALE_S, Store, TournamentSpec
from tests.cli.test_cli_edges import add_game, ok, two_tournaments


def _clock(monkeypatch: pytest.MonkeyPatch, now: float) -> None:
    monkeypatch.setattr("leaderboard.store.time", types.SimpleNamespace(time=lambda: now))


def test_show_notes_a_running_or_stopped_tournament_after_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "my league.db"
    alpha, beta = two_tournaments(db)
    show = ("leaderboard", "show", "--db", str(db))
    out, _ = ok(capsys, *show)
    assert "running" not in out and "resume" not in out  # every tournament finished

    _clock(monkeypatch, 1000.0)
    with Store(db) as store:
        spring = store.begin_tournament(TournamentSpec("spring", "usa@1", 2, 1, 0, {"bots": []}))
        add_game(store, spring.tournament_id, 0, {alpha: 1, beta: 2})  # beats at 1000

    _clock(monkeypatch, 1000.0 + STALE_S)
    out, _ = ok(capsys, *show)
    assert out.splitlines()[-1] == (
        'tournament #3 "spring" is running: these tables change as it stores games'
    )
    assert out.splitlines()[-2].startswith("interval.")  # after the table and its legend

    _clock(monkeypatch, 1000.0 + STALE_S + 1)  # three heartbeats missed: killed
    out, _ = ok(capsys, *show)
    assert out.splitlines()[-1] == (
        'tournament #3 "spring" is unfinished and not running (killed?): resume it with '
        f"`ttr tournament run --db '{db}' --resume` or give it up with "
        f"`ttr tournament abandon --db '{db}' --id 3`"
    )
    out, _ = ok(capsys, *show, "--tournament", "spring")
    assert "not running (killed?)" in out.splitlines()[-1]
    out, _ = ok(capsys, *show, "--tournament", "autumn")  # a finished one: nothing to say
    assert "running" not in out
    out, _ = ok(capsys, *show, "--json")  # data formats stay data
    assert json.loads(out)["pools"]
    out, _ = ok(capsys, *show, "--format", "csv")
    assert "running" not in out

    ok(capsys, "tournament", "abandon", "--db", str(db))
    out, _ = ok(capsys, *show)
    assert "running" not in out and "resume" not in out
