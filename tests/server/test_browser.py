"""The author pages in Chromium (tests/browser.py): log in with the token, see one's versions
and no one else's, upload a zip through the form, land on the new version, log out; and the
public league page served by the same app, with no log link on it. Screenshots:
author-versions.png, author-version.png, ladder-league.png."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from referee.hosting.upload import pack
from tests.browser import screenshot
from tests.server.conftest import ANN_TOKEN, BO_TOKEN, GAME, HOSTILE, Served

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]


def test_an_author_logs_in_sees_their_versions_and_uploads_through_the_form(
    page: Page, served: Served, tmp_path: Path
) -> None:
    # bo's version: never on ann's pages
    bo = {"Authorization": f"Bearer {BO_TOKEN}"}
    created = httpx.post(
        served.url + "api/submissions", content=pack(ROOT / "sample_bots" / "planner"), headers=bo
    )
    assert created.status_code == 201
    # ann's first version, already active
    ann = {"Authorization": f"Bearer {ANN_TOKEN}"}
    created = httpx.post(
        served.url + "api/submissions", content=pack(ROOT / "sample_bots" / "random"), headers=ann
    )
    assert created.status_code == 201
    for _ in range(3):
        served.fake.advance(served.ann, 1)
    served.fake.add_game(served.ann, 1, GAME, 0, "ann's log\n")

    page.goto(served.url + "me")
    assert page.url == served.url + "login"  # not logged in yet
    page.fill("#token", ANN_TOKEN)
    page.click("#login")
    page.wait_for_url(served.url + "me")
    rows = page.locator("table.versions tbody tr")
    assert rows.count() == 1
    assert rows.first.locator("td").nth(0).inner_text() == "v1"
    assert rows.first.locator("td.bot-name").inner_text() == "random"
    assert rows.first.locator("td.state").inner_text() == "active"
    assert "usa@1 2p: mu 25.0 sigma 8.3 #1, 3 games, 0 faulty" in rows.first.inner_text()
    assert "planner" not in page.content()  # bo's version
    screenshot(page, "author-versions")

    archive = tmp_path / "greedy.zip"
    archive.write_bytes(pack(ROOT / "sample_bots" / "greedy"))
    page.set_input_files("#archive", str(archive))
    page.click("#upload")
    page.wait_for_url(re.compile(r".*/me/versions/2\?uploaded=new.*"))
    assert page.locator("#message").inner_text() == "uploaded: new version v2"
    assert page.locator("h1").inner_text() == "v2 · greedy"
    assert page.locator("td.state").first.inner_text() == "queued"
    screenshot(page, "author-version")

    page.goto(served.url + "me/versions/1")
    replay = page.locator(f'a[href="/games/{GAME}.html"]')
    assert replay.count() == 1
    page.click(f'a[href="/me/games/{GAME}/seat0.log"]')
    assert "ann's log" in page.locator("body").inner_text()

    page.goto(served.url + "me")
    labels = page.locator("table.versions tbody tr td:first-child").all_inner_texts()
    assert labels == ["v2", "v1"]
    page.click("#logout")
    page.wait_for_url(served.url + "login")
    page.goto(served.url + "me")
    assert page.url == served.url + "login"


def test_the_public_league_page_has_replays_and_no_logs(page: Page, served: Served) -> None:
    page.goto(served.url)
    page.wait_for_selector("table.standings tr[data-bot]")
    assert page.locator('a[href$=".log"]').count() == 0
    assert page.locator(f'a[href="games/{GAME}.html"]').count() >= 1
    assert HOSTILE in page.locator("table.standings").inner_text()  # as text
    screenshot(page, "ladder-league")
    page.goto(served.url + f"games/{GAME}.html")
    assert "ann-bot" in page.content()
