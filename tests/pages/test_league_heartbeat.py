"""The league page tells a running tournament from a stopped one (issue 23): the JSON carries
each tournament's heartbeat and the server's judgement of it (its own clock, never the
browser's), the live server judges again on every request even when nothing was written (a
killed run writes nothing), and the page says "running" or "stopped (killed?)" with the
commands that resume or abandon it. Clocks are replaced, nothing sleeps."""

from __future__ import annotations

import types
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from leaderboard.store import STALE_S, Store, TournamentSpec
from tests.leaderboard.test_store import make_game
from ttr_arena.pages.league.data import league_json
from ttr_arena.pages.league.page import page_html
from ttr_arena.pages.league.server import LeagueSite

if TYPE_CHECKING:
    from playwright.sync_api import Page


def _store(db: Path) -> None:
    """#1 finished; #2 unfinished, its run ended (no heartbeat); #3 unfinished, beat at 1000."""
    with Store(db) as store:
        store.clock = lambda: 1000.0
        a, b = store.add_bot("a", "1", "", "ha"), store.add_bot("b", "1", "", "hb")
        for name in ("done", "ended", "live"):
            t = store.begin_tournament(TournamentSpec(name, "usa@1", 2, 1, 1, {"bots": []}))
            store.record_game(make_game(t.tournament_id, 0, (a, b)))
        store.finish_tournament(1)
        store.end_heartbeat(2)


def test_the_json_judges_each_heartbeat_at_the_given_time(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    _store(db)
    with Store(db, readonly=True) as store:
        fresh = league_json(store, now=1000.0 + STALE_S)
        stale = league_json(store, now=1000.0 + STALE_S + 1)
    states = [(t["state"], t["running"], t["heartbeat_at"]) for t in fresh["tournaments"]]
    assert states == [
        ("finished", False, 1000.0),
        ("unfinished", False, None),
        ("unfinished", True, 1000.0),
    ]
    assert [t["running"] for t in stale["tournaments"]] == [False, False, False]
    assert fresh["generated_at"] == 1000.0 + STALE_S  # judged at the time it says


def test_the_server_judges_again_when_a_heartbeat_goes_stale_unwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server caches the data while the store is unchanged; a killed run changes
    nothing in it, so the judgement is part of what the cache is kept by."""
    db = tmp_path / "l.db"
    _store(db)
    now = [1001.0]
    monkeypatch.setattr("leaderboard.store.time", types.SimpleNamespace(time=lambda: now[0]))
    site = LeagueSite(db)
    first, _ = site.league()
    assert [t["running"] for t in first["tournaments"]] == [False, False, True]
    now[0] = 1005.0
    assert site.league()[0] is first  # unchanged, still running: from the cache
    now[0] = 1000.0 + STALE_S + 1
    stale, body = site.league()
    assert [t["running"] for t in stale["tournaments"]] == [False, False, False]
    assert b'"running":true' not in body


def test_the_page_says_running_or_stopped_with_the_commands(page: Page, tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    _store(db)
    with Store(db, readonly=True) as store:
        league = league_json(store, now=1001.0)
    html = tmp_path / "index.html"
    html.write_text(page_html(league, live=False), encoding="utf-8")
    page.goto(html.as_uri())
    page.wait_for_selector("[data-tournament='3'] .state")
    shown = {n: page.inner_text(f"[data-tournament='{n}'] .state") for n in ("1", "2", "3")}
    assert shown == {
        "1": "finished",
        "2": "stopped (killed?) \u2014 resume with `ttr tournament run --db DB --resume` or "
        "`ttr tournament abandon --db DB`",
        "3": "running",
    }
    assert page.get_attribute("[data-tournament='2']", "data-state") == "unfinished"


def test_the_live_banner_counts_only_running_tournaments(page: Page, tmp_path: Path) -> None:
    """A killed run left "live" in the banner and the fast refresh: only a fresh heartbeat
    counts as a tournament running."""
    db = tmp_path / "l.db"
    _store(db)
    banners = []
    for now in (1001.0, 1000.0 + STALE_S + 1):
        with Store(db, readonly=True) as store:
            league = league_json(store, now=now)
        html = tmp_path / f"live{now}.html"
        html.write_text(page_html(league, live=True, refresh_s=60), encoding="utf-8")
        page.goto(html.as_uri())
        page.wait_for_selector("#live[data-mode='live']")
        banners.append(page.inner_text("#live").split(",")[:2])
    assert banners[0][0] == "live" and not banners[0][1].startswith(" no tournament")
    assert banners[1] == ["live", " no tournament running"]
