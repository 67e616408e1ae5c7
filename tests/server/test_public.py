"""What everyone sees: the league page, its data and the replays, served by the competition
server's app without a single log link or log route; the data computed once for many readers;
the headers of every answer; and :func:`serve` run as ``ttr server run`` runs it (main thread,
``ready`` told the URL, back to its caller on SIGTERM or SIGINT)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.conftest import ANN_TOKEN, GAME, HOSTILE, Served, make_fake
from ttr_arena.pages.league.server import PAGE_POLICY
from ttr_arena.server.app import WebSettings, make_app, running, serve

ROOT = Path(__file__).resolve().parents[2]


def _seats(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [seat for game in data["recent"] for seat in game["seats"]]


def test_the_league_and_replays_are_public_and_no_log_is(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        data = client.get("/api/league.json")
        assert data.status_code == 200 and data.headers["content-type"] == "application/json"
        league = data.json()
        [game] = league["recent"]
        assert game["id"] == GAME and game["replay"] == f"games/{GAME}.html"
        assert [s["bot"] for s in game["seats"]] == ["ann-bot", HOSTILE]
        assert all(seat["log"] is None for seat in _seats(league))
        assert "seat0.log" not in data.text and ".log" not in data.text

        page = client.get("/")
        assert page.status_code == 200 and page.headers["content-security-policy"] == PAGE_POLICY
        assert "seat0.log" not in page.text and "seat1.log" not in page.text
        assert HOSTILE not in page.text  # escaped in its JSON

        replay = client.get(f"/games/{GAME}.html")
        assert replay.status_code == 200 and "<html" in replay.text
        assert "private thoughts" not in replay.text  # the record's lines are the logs'

        for target in (
            f"/games/{GAME}/seat0.log",
            f"/games/{GAME}/seat1.log",
            "/games/nope.html",
            "/games/..%2F..%2Fetc%2Fpasswd.html",
            "/records/L1-g1-seat0.log",
        ):
            answer = client.get(target)
            assert answer.status_code == 404, target
            assert "private thoughts" not in answer.text
        assert client.post("/").status_code == 405


def test_many_readers_share_one_computation_of_the_league(
    tmp_path: Path, league_store: Path
) -> None:
    app = make_app(make_fake(tmp_path, league_store), WebSettings(refresh_s=600))

    async def read_all(url: str) -> list[bytes]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            answers = await asyncio.gather(*(client.get("/api/league.json") for _ in range(50)))
        assert {a.status_code for a in answers} == {200}
        return [a.content for a in answers]

    with running(app) as url:
        # in a thread of its own: the browser tests leave an event loop in this one
        with ThreadPoolExecutor(1) as pool:
            bodies = pool.submit(asyncio.run, read_all(url)).result()
        assert len(set(bodies)) == 1 and json.loads(bodies[0])["recent"]
        assert httpx.get(url).status_code == 200
    assert app.state.web.league.computed == 1


def test_every_answer_carries_the_security_headers(served: Served) -> None:
    with httpx.Client(base_url=served.url) as client:
        answers = [
            client.get("/"),
            client.get("/api/league.json"),
            client.get("/api/season"),
            client.get("/api/submissions"),  # 401
            client.get("/nowhere"),
            client.get("/login"),
            client.get("/me"),  # a redirect to /login
            client.get(f"/games/{GAME}.html"),
            client.get("/api/submissions", headers={"Authorization": f"Bearer {ANN_TOKEN}"}),
        ]
    for answer in answers:
        assert answer.headers["x-content-type-options"] == "nosniff", answer.url
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["referrer-policy"] == "no-referrer"
        policy = answer.headers["content-security-policy"]
        assert policy.startswith("default-src 'none'") and "unsafe-eval" not in policy
        assert "server" not in answer.headers  # nothing for a scanner to go on


_SERVE = """
import sys
from pathlib import Path
from tests.server.fake import FakeBackend
from ttr_arena.server.app import serve
fake = FakeBackend(Path(sys.argv[1]), Path(sys.argv[2]))
serve(fake, "127.0.0.1", 0, ready=lambda url: print("ready", url, flush=True))
print("returned", flush=True)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_runs_in_the_main_thread_and_returns_on_a_signal(
    tmp_path: Path, league_store: Path, sig: signal.Signals
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVE, str(tmp_path), str(league_store)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("ready http://127.0.0.1:"), process.stderr and process.stderr.read()
        url = line.split()[1]
        assert not url.endswith(":0/")
        assert httpx.get(url + "api/season").status_code == 200
        process.send_signal(sig)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert out.strip() == "returned" and "Traceback" not in err


def test_running_stops_its_server(tmp_path: Path, league_store: Path) -> None:
    with running(make_app(make_fake(tmp_path, league_store))) as url:
        assert httpx.get(url + "api/season").status_code == 200
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url + "api/season", timeout=2)
        except httpx.TransportError:
            break
        assert time.monotonic() < deadline, "still answering after running() ended"
        time.sleep(0.05)


def test_serve_on_a_busy_port_is_an_oserror(tmp_path: Path, league_store: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        fake = make_fake(tmp_path, league_store)
        with ThreadPoolExecutor(1) as pool:  # not this thread: it may hold an event loop
            future = pool.submit(serve, fake, "127.0.0.1", port)
            with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}"):
                future.result(timeout=60)
