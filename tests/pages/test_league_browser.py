"""The league page in a real browser (Chromium, tests/browser.py), during a real tournament.

``ttr tournament run`` plays in the background while ``ttr leaderboard serve`` serves its
store. To see the page follow the run on any machine, fast or slow, the run is paused
(SIGSTOP to the tournament's parent, the store's only writer) while the page opens, and
resumed once the page shows what is stored: the page must then show more games without
being reloaded. Once the run is over, the table drawn must be ``leaderboard show``'s, row for
row; a replay link must open its game; the static export must show the same table from
``file://``. Screenshots: league-live.png, league-static.png.
"""

from __future__ import annotations

import hashlib
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from leaderboard.store import Store, TournamentSpec
from leaderboard.table import leaderboard, text_rows
from tests.browser import screenshot
from tests.leaderboard.test_store import make_game
from ttr_arena.pages.league.static import export

if TYPE_CHECKING:
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[2]
BOTS = [str(ROOT / "sample_bots" / name) for name in ("random", "greedy", "planner")]
TTR = [sys.executable, "-m", "ttr_arena.cli"]
HOSTILE = "<b>never</b></script>"
WAIT_MS = 60_000  #: generous: a slow, shared machine only makes the waits longer, not fail

ROWS_JS = """() => Array.from(document.querySelectorAll('table.standings tr[data-bot]'))
  .map(tr => Array.from(tr.children).map(td => td.textContent))"""
FETCH_JS = """() => Promise.all([1, 2, 3, 4, 5].map(
  () => fetch('api/league.json', {cache: 'no-store'}).then(r => r.status)))"""
STORED = "+document.querySelector('[data-tournament=\"1\"]').dataset.stored"


def _stored_games(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0  # the schema is being created


def _wait_stopped(pid: int) -> None:
    """Until the process is really stopped (a signal is delivered asynchronously): a game it
    commits after this would make the page's first count stale."""
    stat = Path(f"/proc/{pid}/stat")
    deadline = time.monotonic() + 10
    while stat.exists() and time.monotonic() < deadline:
        if stat.read_text().rsplit(")", 1)[1].split()[0] == "T":
            return
        time.sleep(0.005)


def _expected_rows(db: Path) -> list[list[str]]:
    """The rows ``ttr leaderboard show`` prints, cell by cell."""
    with Store(db, readonly=True) as store:
        return [list(row) for _, _, table in leaderboard(store) for row in text_rows(table)]


def _never_starts(folder: Path) -> str:
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "{HOSTILE}"\nversion = "1"\n'
        'command = ["{python}", "-c", "import sys; sys.exit(4)"]\n'
    )
    return str(folder)


def _check_hostile_name_is_text(page: Page) -> None:
    left_out = page.locator("#left-out .left-out")
    assert left_out.count() == 1
    assert left_out.get_attribute("data-bot") == f"{HOSTILE} 1"
    assert HOSTILE in left_out.inner_text()
    assert page.locator("#left-out b").count() == 0  # the name's markup drew nothing


def test_the_served_page_follows_a_running_tournament(page: Page, tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    never = _never_starts(tmp_path / "never")
    args = ["--db", str(db), "--players", "2", "--rounds", "3", "--workers", "2"]
    log = tmp_path / "run.log"
    with log.open("w") as output:  # a file, not a pipe nobody reads while the run goes on
        run = subprocess.Popen(
            [*TTR, "tournament", "run", *args, *BOTS, never],
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    serve: subprocess.Popen[str] | None = None
    try:
        deadline = time.monotonic() + 60
        while _stored_games(db) < 2 and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        run.send_signal(signal.SIGSTOP)  # hold the writer while the page opens
        _wait_stopped(run.pid)
        assert _stored_games(db) < 18, "the run finished before the page could watch it"

        serve = subprocess.Popen(
            [*TTR, "leaderboard", "serve", "--db", str(db), "--port", "0", "--refresh", "0.5"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert serve.stdout is not None
        match = re.search(r"serving (http://\S+) ", serve.stdout.readline())
        assert match, "the server did not say where it serves"
        url = match[1]

        page.goto(url)
        page.wait_for_selector("table.standings tr[data-bot]")
        shown = page.evaluate(f"() => {STORED}")
        assert shown == _stored_games(db)
        assert page.get_attribute('[data-tournament="1"]', "data-state") == "unfinished"
        page.evaluate("() => { window.notReloaded = true; }")
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            seed = str(conn.execute("SELECT base_seed FROM tournaments").fetchone()[0])
        assert seed not in page.content()  # a running tournament's deals stay secret

        run.send_signal(signal.SIGCONT)
        page.wait_for_function(f"() => {STORED} > {shown}", timeout=WAIT_MS)
        assert page.evaluate("() => window.notReloaded === true")  # updated in place
        assert page.locator("#live").inner_text().startswith("live")
        screenshot(page, "league-live")

        assert run.wait(timeout=120) == 0, log.read_text()
        # The writer is gone: from here on, whatever the server is asked, the store's bytes
        # stay as they are.
        before = hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns
        page.wait_for_function(
            "() => document.querySelector('[data-tournament=\"1\"]').dataset.state === 'finished'",
            timeout=WAIT_MS,
        )
        assert page.evaluate(f"() => {STORED}") == 18
        assert page.evaluate(ROWS_JS) == _expected_rows(db)
        _check_hostile_name_is_text(page)
        assert page.locator("table.recent tr[data-game]").count() == 18
        assert page.locator("svg.rating-chart polyline.series").count() == 3

        # A recent game's replay opens from its link.
        first = page.locator("table.recent a.replay").first
        game_id = first.inner_text()
        first.click()
        page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
        assert page.url.split("#")[0] == f"{url}games/{game_id}.html"
        page.go_back()
        page.wait_for_selector("table.standings tr[data-bot]")
        assert page.evaluate(FETCH_JS) == [200] * 5
        assert (hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns) == before
        page.goto("about:blank")  # before the server stops: no failed poll to report

        # The static export shows the same table from file://, with no server at all.
        site = tmp_path / "site"
        done = subprocess.run(
            [*TTR, "leaderboard", "html", "--db", str(db), "--out", str(site)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        assert "with 18 game replay(s)" in done.stdout
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGCONT)
            run.kill()
            run.wait()
        if serve is not None:
            serve.send_signal(signal.SIGINT)
            try:
                serve.wait(timeout=10)
            except subprocess.TimeoutExpired:
                serve.kill()
                serve.wait()
    assert serve.returncode == 0

    page.goto((site / "index.html").as_uri())
    page.wait_for_selector("table.standings tr[data-bot]")
    assert page.evaluate(ROWS_JS) == _expected_rows(db)
    assert page.locator("#live").inner_text().startswith("snapshot of ")
    _check_hostile_name_is_text(page)
    screenshot(page, "league-static")
    page.locator("table.recent a.replay").first.click()
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    assert page.url.startswith((site / "games").as_uri())


#: Each rating line's points as drawn (SVG units): [[x, y], ...] per bot.
LINES_JS = """() => Array.from(document.querySelectorAll('svg.rating-chart polyline.series'))
  .map(l => l.getAttribute('points').split(' ').map(p => p.split(',').map(Number)))"""


def test_a_rating_line_runs_on_flat_to_the_end_of_the_chart(page: Page, tmp_path: Path) -> None:
    """A bot that stopped playing keeps its rating until it plays again: its line goes on,
    flat, to the pool's last game (it stopped at its own last game). A store made by hand:
    ``early`` plays the first two of five games only."""
    db = tmp_path / "l.db"
    with Store(db) as store:
        early, b, c = (store.add_bot(n, "1", "", f"h{n}") for n in ("early", "b", "c"))
        spec = TournamentSpec("night", "usa@1", 2, 5, 1, {"bots": []})
        t = store.begin_tournament(spec).tournament_id
        for bot in (early, b, c):
            store.enter(t, bot, f"/bots/{bot}", True)
        for i, pair in enumerate([(early, b), (c, early), (b, c), (c, b), (b, c)]):
            store.record_game(make_game(t, i, pair))
        store.finish_tournament(t)
    export(db, tmp_path / "site")
    page.goto((tmp_path / "site" / "index.html").as_uri())
    page.wait_for_selector("svg.rating-chart polyline.series")
    lines = page.evaluate(LINES_JS)
    assert len(lines) == 3
    end = max(x for line in lines for x, _ in line)
    assert [line[-1][0] for line in lines] == [end] * 3
    # the early bot's line: flat from its last game (the pool's second) to the end
    flat = [line for line in lines if len({round(x) for x, _ in line}) == 4]
    assert len(flat) == 1 and flat[0][-1][1] == flat[0][-2][1] and flat[0][-2][0] < end
