"""``ttr leaderboard html`` writes every game of the store by default (issue 23): a copied
folder is the league's archive, and it kept only the 50 newest. ``--recent N`` still keeps
the N newest. The replays' rendering is replaced by a cheap one here (it has tests of its own:
test_league_page.py, test_viewer.py); which games are listed and written is what counts."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from leaderboard.store import Store, TournamentSpec
from tests.cli.test_cli_edges import ok
from tests.leaderboard.test_store import make_game
from ttr_arena.pages.league.data import RECENT

GAMES = RECENT + 3  #: more than the listing of the live page


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "l.db"
    records = tmp_path / "records"
    records.mkdir()
    with Store(db) as store:
        a, b = store.add_bot("a", "1", "", "ha"), store.add_bot("b", "1", "", "hb")
        spec = TournamentSpec("big", "usa@1", 2, 1, 1, {"bots": [], "records": str(records)})
        t = store.begin_tournament(spec).tournament_id
        for i in range(GAMES):
            record = records / f"g{i}.json"
            record.write_text("{}")
            game = make_game(t, i, (a, b) if i % 2 else (b, a))
            store.record_game(dataclasses.replace(game, record_path=str(record)))
        store.finish_tournament(t)
    return db


def _written(site: Path) -> list[str]:
    """The replays the export wrote (its marker's list), each listed on its page too."""
    html = (site / "index.html").read_text(encoding="utf-8")
    marker = json.loads((site / ".ttr-league-page").read_text(encoding="utf-8"))
    replays = sorted(f for f in marker["files"] if f.startswith("games/"))
    assert all(f'"{name}"' in html for name in replays)
    return replays


def test_the_export_keeps_every_game_unless_told_recent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "ttr_arena.pages.league.static.render_replay",
        lambda path, output: f"<p>replay of {Path(path).name}</p>",
    )
    db = _store(tmp_path)
    site = tmp_path / "site"
    out, _ = ok(capsys, "leaderboard", "html", "--db", str(db), "--out", str(site))
    assert f"with {GAMES} game replay(s)" in out
    assert _written(site) == sorted(f"games/t1-g{i}.html" for i in range(GAMES))
    assert (site / "games" / "t1-g0.html").read_text() == "<p>replay of g0.json</p>"

    out, _ = ok(capsys, "leaderboard", "html", "--db", str(db), "--out", str(site), "--recent", "5")
    assert "with 5 game replay(s)" in out
    newest = range(GAMES - 5, GAMES)  # make_game's games finish one second apart, in order
    assert _written(site) == sorted(f"games/t1-g{i}.html" for i in newest)
    assert not (site / "games" / "t1-g0.html").exists()  # the earlier export's, replaced
