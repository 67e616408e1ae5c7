"""The league page beside a bot disabled for its faults (issue 21, item 8): its row is marked
with why, it is listed with its reason, and the tournament's progress counts its skipped games
as done, not as played. A store made by hand (no tournament needs playing): the data module
reads ``disabled`` and ``skipped`` as a tournament writes them (tests/leaderboard/
test_disabling.py has the real thing). Screenshot: league-disabled.png."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from leaderboard.store import Store, TournamentSpec
from tests.browser import screenshot
from tests.leaderboard.test_store import make_game
from ttr_arena.pages.league.data import league_json
from ttr_arena.pages.league.static import export

if TYPE_CHECKING:
    from playwright.sync_api import Page

#: what a bot author may name a bot, and so what a reason quotes: text, never markup
NAME = "<i>crashy</i>"
REASON = (
    "disabled after game t1-g4: faulted in 5 of its last 5 games "
    "(last: disconnected (UNAVAILABLE): the bot exited with status 1)"
)


def _store(db: Path) -> None:
    """A tournament of two bots (usa, 2 seats, 4 rounds: 8 games): 5 played, then the bot
    ``NAME`` disabled and the 3 games left skipped."""
    with Store(db) as store:
        a = store.add_bot(NAME, "1", "", "ha")
        b = store.add_bot("steady", "1", "", "hb")
        spec = TournamentSpec("night", "usa@1", 2, 4, 1, {"bots": [{"bot_id": a}, {"bot_id": b}]})
        t = store.begin_tournament(spec).tournament_id
        store.enter(t, a, "/bots/a", True)
        store.enter(t, b, "/bots/b", True)
        for i in range(5):
            store.record_game(make_game(t, i, (a, b) if i % 2 else (b, a)))
        store.disable(t, a, f"t{t}-g4", REASON)
        store.skip(t, [(f"t{t}-g{i}", i) for i in range(5, 8)], a, f"{NAME} 1 is disabled")
        store.finish_tournament(t)


def test_the_data_marks_the_disabled_bot_and_counts_skipped_games(tmp_path: Path) -> None:
    _store(tmp_path / "l.db")
    with Store(tmp_path / "l.db", readonly=True) as store:
        data = league_json(store)
    [t] = data["tournaments"]
    assert (t["games_stored"], t["games_skipped"], t["games_scheduled"]) == (5, 3, 8)
    [disabled] = data["disabled"]
    assert (disabled["bot"], disabled["game_id"], disabled["reason"]) == (NAME, "t1-g4", REASON)
    rows = {row["bot"]: row for row in data["pools"][0]["standings"]}
    assert rows[NAME]["label"] == f"{NAME} 1 [disabled]"
    assert rows[NAME]["disabled"] == [{"tournament": 1, "game_id": "t1-g4", "reason": REASON}]
    assert rows["steady"]["disabled"] == [] and rows["steady"]["label"] == "steady 1"


def test_the_page_shows_why_a_bot_was_disabled(page: Page, tmp_path: Path) -> None:
    _store(tmp_path / "l.db")
    export(tmp_path / "l.db", tmp_path / "site")
    page.goto((tmp_path / "site" / "index.html").as_uri())
    page.wait_for_selector("table.standings tr[data-bot]")
    row = page.locator("table.standings tr.disabled")
    assert row.count() == 1
    assert row.get_attribute("data-bot-id") == "1"
    assert row.get_attribute("data-disabled") == f"tournament #1: {REASON}"
    assert row.locator("td.bot").inner_text().strip() == f"{NAME} 1 [disabled]"
    assert row.locator("td.bot").get_attribute("title") == f"tournament #1: {REASON}"
    panel = page.locator("#left-out .disabled-bot")
    assert panel.count() == 1
    assert panel.get_attribute("data-bot") == f"{NAME} 1"
    assert REASON in panel.inner_text() and "tournament #1 night" in panel.inner_text()
    assert page.locator("#left-out i").count() == 0  # the name's markup drew nothing
    progress = page.locator('[data-tournament="1"]')
    assert progress.get_attribute("data-skipped") == "3"
    assert "5 / 8 games, 3 skipped" in progress.inner_text()
    assert "(100% done)" in progress.inner_text()
    screenshot(page, "league-disabled")
