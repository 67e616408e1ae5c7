"""The league page without a browser: its data against ``ttr leaderboard show``, the server's
routes (and every way of asking it for a file it must not serve), read-only serving, the
static export and the commands' errors.

One real tournament (three sample bots and one that never starts, six games, records and
logs kept) is played once for the module; tests that damage a store or a record work on a
copy of it (:func:`_copy`).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from http.client import HTTPMessage
from pathlib import Path
from typing import Any

import pytest

from leaderboard.store import Store, StoreError
from leaderboard.table import leaderboard, text_rows
from ttr_arena.cli import main
from ttr_arena.pages.league.data import league_json
from ttr_arena.pages.league.server import LeagueSite, running
from ttr_arena.pages.league.static import MARKER
from ttr_arena.pages.viewer import render_html

ROOT = Path(__file__).resolve().parents[2]
BOTS = [str(ROOT / "sample_bots" / name) for name in ("random", "greedy", "planner")]
TTR = [sys.executable, "-m", "ttr_arena.cli"]
HOSTILE = "<b>never</b></script>"  #: a bot author may name a bot anything


def _never_starts(folder: Path) -> str:
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "{HOSTILE}"\nversion = "1"\n'
        'command = ["{python}", "-c", "import sys; sys.exit(4)"]\n'
    )
    return str(folder)


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of a finished tournament: 3 bots x 2 seats, 6 games, one bot left out."""
    folder = tmp_path_factory.mktemp("league")
    db = folder / "league.db"
    never = _never_starts(folder / "never")
    args = ["tournament", "run", "--db", str(db), "--players", "2", "--workers", "2"]
    run = subprocess.run(
        [*TTR, *args, *BOTS, never],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    return db


def _copy(db: Path, into: Path) -> Path:
    """The store and its records under ``into``, the paths inside the store moved along."""
    old, new = str(db.parent), str(into)
    shutil.copytree(db.parent, into)
    copy = into / db.name
    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE games SET record_path = replace(record_path, ?, ?)", (old, new))
        conn.execute("UPDATE seats SET log_path = replace(log_path, ?, ?)", (old, new))
        conn.execute("UPDATE tournaments SET config = replace(config, ?, ?)", (old, new))
    return copy


def _fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.fixture(scope="module")
def served(league: Path) -> Iterator[str]:
    with running(LeagueSite(league)) as base:
        yield base


def _get(base: str, target: str, method: str = "GET") -> tuple[int, HTTPMessage, bytes]:
    """One raw request: ``target`` goes on the request line exactly as given (no client-side
    clean-up of ``..`` as a browser would do)."""
    host, port = base.removeprefix("http://").rstrip("/").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.putrequest(method, target, skip_host=False, skip_accept_encoding=True)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


def _show_json(db: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["leaderboard", "show", "--db", str(db), "--format", "json"]) == 0
    shown: dict[str, Any] = json.loads(capsys.readouterr().out)
    return shown


# the data


def test_the_data_holds_leaderboard_shows_tables_and_agrees_with_itself(
    league: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store(league, readonly=True) as store:
        data = league_json(store)
        table_pools = leaderboard(store)
        seed = store.tournaments()[0].spec.base_seed
    shown = _show_json(league, capsys)
    assert len(data["pools"]) == len(shown["pools"]) == 1
    pool, expected = data["pools"][0], shown["pools"][0]
    extra = {"label", "cells"}
    assert [{k: v for k, v in row.items() if k not in extra} for row in pool["standings"]] == (
        expected["standings"]
    )
    assert (pool["variant"], pool["players"], pool["games"]) == ("usa@1", 2, 6)
    # Each row's cells are the text table's, figure for figure.
    assert [tuple(row["cells"]) for row in pool["standings"]] == text_rows(table_pools[0][2])
    assert [row["label"] for row in pool["standings"]] == [
        f"{s['bot']} {s['version']}" for s in expected["standings"]
    ]

    # The chart ends where the table stands; it starts from a new bot's rating.
    for line, row in zip(pool["history"], pool["standings"], strict=True):
        assert line["bot_id"] == row["bot_id"]
        xs = [p[0] for p in line["points"]]
        assert xs == sorted(xs) and len(xs) == row["games"] + 1
        assert line["points"][0][3] == pytest.approx(0.0)
        last = line["points"][-1]
        assert last[1:] == pytest.approx([row["mu"], row["sigma"], row["conservative"]])

    # Head to head: three bots, two seats, one round: each pair met twice (both seatings).
    matrix = pool["head_to_head"]
    for i, cells in enumerate(matrix):
        for j, cell in enumerate(cells):
            if i == j:
                assert cell is None
                continue
            assert cell["games"] == 2 == cell["ahead"] + cell["behind"] + cell["ties"]
            assert (cell["ahead"], cell["behind"]) == (
                matrix[j][i]["behind"],
                matrix[j][i]["ahead"],
            )
    wins = {row["bot_id"]: row["wins"] for row in pool["standings"]}
    for i, row in enumerate(pool["standings"]):  # in a 2-player game, ahead of the other = won
        won = sum(c["ahead"] for c in matrix[i] if c is not None)
        ties = sum(c["ties"] for c in matrix[i] if c is not None)
        assert won <= wins[row["bot_id"]] <= won + ties

    # Recent games: newest first, every one with its replay and its seats' logs.
    recent = data["recent"]
    assert len(recent) == 6
    assert [g["finished_at"] for g in recent] == sorted(
        (g["finished_at"] for g in recent), reverse=True
    )
    for g in recent:
        assert g["replay"] == f"games/{g['id']}.html"
        assert [s["log"] for s in g["seats"]] == [f"games/{g['id']}/seat{n}.log" for n in (0, 1)]

    (left_out,) = data["left_out"]
    assert left_out["bot"] == HOSTILE and "would not start" in left_out["reason"]
    tournament = data["tournaments"][0]
    assert (tournament["state"], tournament["games_stored"], tournament["games_scheduled"]) == (
        "finished",
        6,
        6,
    )
    dumped = json.dumps(data)
    assert "base_seed" not in dumped and str(seed) not in dumped


def test_a_read_only_store_refuses_writes_and_stores_it_cannot_read_as_they_are(
    league: Path, tmp_path: Path
) -> None:
    with (
        Store(league, readonly=True) as store,
        pytest.raises(sqlite3.OperationalError, match="readonly"),
    ):
        store.add_bot("x", "1", "", "hash")
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(StoreError, match="not a TTR Arena results store"):
        Store(empty, readonly=True)
    assert empty.read_bytes() == b""  # not turned into a store
    old = _copy(league, tmp_path / "old")
    with sqlite3.connect(old) as conn:
        conn.execute("PRAGMA user_version = 2")
    before = _fingerprint(old)
    with pytest.raises(StoreError, match="older than this program's"):
        Store(old, readonly=True)
    assert _fingerprint(old) == before  # refused, not upgraded


# the server


def test_the_server_serves_the_page_its_data_replays_and_logs(league: Path, served: str) -> None:
    status, headers, body = _get(served, "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b'id="ttr-data"' in body and b"league.json" in body
    assert "connect-src 'self'" in headers["Content-Security-Policy"]

    status, headers, body = _get(served, "/api/league.json")
    assert status == 200 and headers["Content-Type"] == "application/json"
    data = json.loads(body)
    game = data["recent"][0]

    with Store(league, readonly=True) as store:
        stored = store.game(game["id"])
    assert stored is not None and stored.record_path is not None
    status, headers, body = _get(served, "/" + game["replay"])
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert body == render_html(stored.record_path).encode()

    seat = stored.seats[1]
    assert seat.log_path is not None
    status, headers, body = _get(served, "/" + game["seats"][1]["log"])
    assert status == 200 and headers["Content-Type"] == "text/plain; charset=utf-8"
    assert body == Path(seat.log_path).read_bytes()
    assert "sandbox" in headers["Content-Security-Policy"]  # a bot's output stays inert

    status, headers, head_body = _get(served, "/", method="HEAD")
    assert status == 200 and head_body == b"" and int(headers["Content-Length"]) > 1000


@pytest.mark.parametrize(
    "target",
    [
        "/games/../../etc/passwd",
        "/games/%2e%2e%2fetc%2fpasswd.html",
        "/games/%2e%2e%2f%2e%2e%2fleague.db.html",
        "/games/..%2fleague.db.html",
        "/../league.db",
        "/league.db",
        "/league-records/t1-r1-c0-s0.json",
        "/games/t1-r1-c0-s0.json",
        "/games/no-such-game.html",
        "/games/%2Fetc%2Fpasswd.html",
        "//etc/passwd",
        "/etc/passwd",
        "http://127.0.0.1/etc/passwd",
        "/games/t1-r1-c0-s0/seat7.log",
        "/games/t1-r1-c0-s0/../../league.db",
        "/api/league.json/../../league.db",
        "/index.html",
    ],
)
def test_nothing_but_the_routes_is_served(served: str, target: str) -> None:
    status, _, body = _get(served, target)
    assert status == 404, body
    assert body.startswith(b"404 ") and b"root:" not in body and b"SQLite" not in body


def test_only_get_and_head(served: str) -> None:
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        status, headers, _ = _get(served, "/api/league.json", method)
        assert status == 405 and headers["Allow"] == "GET, HEAD"


def test_a_request_that_fails_is_a_500_and_one_line_never_a_traceback(
    league: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    site = LeagueSite(league)

    def fail() -> bytes:
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(site, "page", fail)
    capsys.readouterr()
    with running(site) as base:
        status, _, body = _get(base, "/")
        assert (status, body) == (500, b"500 this request failed\n")
        assert _get(base, "/api/league.json")[0] == 200  # the next request is served
    err = capsys.readouterr().err
    assert err == "ttr: request from 127.0.0.1 failed: RuntimeError('the disk is on fire')\n"


def test_a_store_path_out_of_the_records_folder_is_not_served(league: Path, tmp_path: Path) -> None:
    """The store names the files; still, only files inside the tournament's records folder
    are read, so a store pointing at /etc/passwd, or a link out of the folder, serves
    nothing. Decided: symbolic links are followed only while they stay inside."""
    db = _copy(league, tmp_path / "copy")
    records = tmp_path / "copy" / "league-records"
    outside = tmp_path / "outside.json"
    shutil.copy(records / "t1-r1-c0-s0.json", outside)  # a real record, but elsewhere
    (records / "t1-r1-c0-s1.json").unlink()
    (records / "t1-r1-c0-s1.json").symlink_to(outside)
    (records / "t1-r1-c1-s0.json").unlink()
    (records / "t1-r1-c1-s0.json").symlink_to(records / "t1-r1-c0-s0.json")  # stays inside
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE games SET record_path = '/etc/passwd' WHERE game_id = 't1-r1-c0-s0'")
        conn.execute("UPDATE seats SET log_path = '/etc/passwd' WHERE game_id = 't1-r1-c1-s1'")
    site = LeagueSite(db)
    data, _ = site.league()
    links = {g["id"]: g["replay"] for g in data["recent"]}
    assert links["t1-r1-c0-s0"] is None and links["t1-r1-c0-s1"] is None
    assert links["t1-r1-c1-s0"] == "games/t1-r1-c1-s0.html"
    with running(site) as base:
        for target in (
            "/games/t1-r1-c0-s0.html",
            "/games/t1-r1-c0-s1.html",
            "/games/t1-r1-c1-s1/seat0.log",
        ):
            status, _, body = _get(base, target)
            assert status == 404 and b"root:" not in body, target
        assert _get(base, "/games/t1-r1-c1-s0.html")[0] == 200


def test_serving_leaves_the_store_file_untouched(league: Path, served: str) -> None:
    before = _fingerprint(league)
    for target in ["/", "/api/league.json", "/games/t1-r1-c0-s0.html", "/nope"] * 3:
        _get(served, target)
    assert _fingerprint(league) == before


def test_serve_prints_its_url_and_stops_on_ctrl_c_without_tracebacks(league: Path) -> None:
    proc = subprocess.Popen(
        [*TTR, "leaderboard", "serve", "--db", str(league), "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.fullmatch(r"serving (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops\)\n", line)
        assert match, line
        base = match[1]
        assert _get(base, "/")[0] == 200
        host, port = base[7:-1].split(":")
        for _ in range(3):  # clients that hang up mid-request or mid-answer
            with socket.create_connection((host, int(port))) as s:
                s.sendall(b"GET /api/league.json HTTP/1.1\r\nHost: x\r\n\r\n")
            with socket.create_connection((host, int(port))) as s:
                s.sendall(b"GET /games/t1-r1")
        assert _get(base, "/api/league.json")[0] == 200
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "stopped" in out and "Traceback" not in err and err == ""


# the static export


def test_html_writes_a_folder_of_relative_links_and_rewrites_only_its_own(
    league: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _copy(league, tmp_path / "copy")
    records = tmp_path / "copy" / "league-records"
    (records / "t1-r1-c0-s0.json").unlink()  # a lost record
    (records / "t1-r1-c0-s1.json").write_text('{"not": "a record"}')  # a damaged one
    out = tmp_path / "site"
    capsys.readouterr()
    assert main(["leaderboard", "html", "--db", str(db), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "with 4 game replay(s)" in printed
    assert "no replay for t1-r1-c0-s0: its record file is missing" in printed
    assert "no replay for t1-r1-c0-s1: this game's record cannot be replayed" in printed
    index = (out / "index.html").read_text()
    assert sorted(p.name for p in (out / "games").iterdir()) == sorted(
        f"{g}.html" for g in ("t1-r1-c1-s0", "t1-r1-c1-s1", "t1-r1-c2-s0", "t1-r1-c2-s1")
    )
    embedded = re.search(r'id="ttr-data" type="application/json">(.*?)</script>', index)
    assert embedded is not None
    data = json.loads(embedded[1])
    assert data["page"]["live"] is False
    hrefs = [g["replay"] for g in data["league"]["recent"] if g["replay"]]
    hrefs += [s["log"] for g in data["league"]["recent"] for s in g["seats"] if s["log"]]
    assert len(hrefs) == 4 and all(h.startswith("games/") for h in hrefs)  # no logs: not asked
    for h in hrefs:
        assert (out / h).is_file()

    (out / "notes.txt").write_text("mine")  # a user's file in the folder survives a rewrite
    assert main(["leaderboard", "html", "--db", str(db), "--out", str(out), "--logs"]) == 0
    assert "12 bot log(s)" in capsys.readouterr().out
    assert (out / "notes.txt").read_text() == "mine"
    assert len(list((out / "games").glob("*/seat*.log"))) == 12  # 6 games x 2 seats, --logs
    marker = json.loads((out / MARKER).read_text())
    assert "index.html" in marker["files"] and "notes.txt" not in marker["files"]


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ttr: error: "), err
    return err


def test_commands_refuse_in_one_line(
    league: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing.db")
    assert "no such results store" in _refused(capsys, "leaderboard", "serve", "--db", missing)
    assert "no such results store" in _refused(
        capsys, "leaderboard", "html", "--db", missing, "--out", str(tmp_path / "o")
    )
    assert not (tmp_path / "missing.db").exists() and not (tmp_path / "o").exists()
    text = tmp_path / "notes.txt"
    text.write_text("not a database, but long enough to be looked at as one" * 20)
    assert "not" in _refused(capsys, "leaderboard", "serve", "--db", str(text))

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("years of work")
    err = _refused(capsys, "leaderboard", "html", "--db", str(league), "--out", str(foreign))
    assert "did not write" in err
    assert [p.name for p in foreign.iterdir()] == ["thesis.tex"]
    err = _refused(capsys, "leaderboard", "html", "--db", str(league), "--out", str(text))
    assert "not a folder" in err

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        err = _refused(capsys, "leaderboard", "serve", "--db", str(league), "--port", port)
    assert "cannot listen on 127.0.0.1:" in err
    assert os.path.exists(league)
