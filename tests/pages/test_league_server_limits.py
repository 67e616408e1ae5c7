"""The league page server under many slow or idle clients (issue 21, item 6): with the
descriptor limit of a small account (256), 300 idle connections neither exhaust its
descriptors nor make it spin on ``accept``; a connection left idle or sending its headers
slowly is closed; the page answers again as soon as the flood stops."""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.store import Store, TournamentSpec
from ttr_arena.pages.league import server as server_mod
from ttr_arena.pages.league.server import MAX_CONNECTIONS, LeagueSite, make_server

FLOOD = 300
TTR = [sys.executable, "-m", "ttr_arena.cli"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "league.db"
    store = Store(path)
    store.begin_tournament(TournamentSpec("night", "usa@1", 2, 1, 0, {}))
    store.close()
    return path


def _limit_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


@contextlib.contextmanager
def _serve_in_a_process(db: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc = subprocess.Popen(
        [*TTR, "leaderboard", "serve", "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limit_descriptors,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("serving http://"), line + (
            proc.stderr.read() if proc.stderr else ""
        )
        yield proc, line.split()[1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100


def test_an_idle_flood_neither_exhausts_nor_spins_the_server(db: Path) -> None:
    with _serve_in_a_process(db) as (proc, base):
        host, port = base.removeprefix("http://").rstrip("/").split(":")
        idle = [socket.create_connection((host, int(port)), timeout=10) for _ in range(FLOOD)]
        try:
            time.sleep(0.5)
            before = _cpu_s(proc.pid)
            time.sleep(1.0)
            assert _cpu_s(proc.pid) - before < 0.5  # not spinning on accept
            descriptors = len(list(Path(f"/proc/{proc.pid}/fd").iterdir()))
            assert descriptors < MAX_CONNECTIONS + 40
        finally:
            for s in idle:
                s.close()
        deadline = time.monotonic() + 10
        while True:  # the slots free as the idle clients go
            try:
                with urllib.request.urlopen(base + "api/league.json", timeout=5) as answer:
                    assert answer.status == 200
                break
            except OSError:
                assert time.monotonic() < deadline, "the page did not come back"
                time.sleep(0.1)
        assert proc.poll() is None


def test_an_idle_or_slow_connection_is_closed(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_mod._Handler, "timeout", 0.5)  # the real path, a shorter wait
    server = make_server(LeagueSite(db), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        for first in (b"", b"GET / HTTP/1.1\r\nHost: x\r\n"):  # idle; headers never finished
            with socket.create_connection((str(host), int(port)), timeout=10) as s:
                s.sendall(first)
                started = time.monotonic()
                assert s.recv(1024) == b""  # closed by the server
                assert time.monotonic() - started < 5
    finally:
        server.shutdown()
        server.server_close()
