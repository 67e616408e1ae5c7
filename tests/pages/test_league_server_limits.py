"""The league page server under many slow or idle clients (issue 21, item 6): with the
descriptor limit of a small account (256), 300 idle connections neither exhaust its
descriptors nor make it spin on ``accept``; a connection left idle or sending its headers
slowly is closed; the page answers again as soon as the flood stops. And however its clients
behave, Ctrl-C or SIGTERM stops it at once, even when it was started with SIGINT ignored, as a
background job of a script or CI is (issue 21: "did not stop within 10 s of Ctrl-C").

One client's share of the connections, and the other limits, are
tests/pages/test_league_server_idle.py's (issue 34)."""

from __future__ import annotations

import contextlib
import re
import resource
import signal
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
from ttr_arena.pages.league.server import LeagueSite, running
from ttr_arena.pages.web.limits import ConnectionLimits

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
            assert descriptors < ConnectionLimits().total + 40
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


def test_an_idle_or_slow_connection_is_closed(db: Path) -> None:
    limits = ConnectionLimits(header_timeout_s=0.5)  # the real path, a shorter wait
    with running(LeagueSite(db), "127.0.0.1", limits) as base:
        host, port = base.removeprefix("http://").rstrip("/").split(":")
        for first in (b"", b"GET / HTTP/1.1\r\nHost: x\r\n"):  # idle; headers never finished
            with socket.create_connection((host, int(port)), timeout=10) as s:
                s.sendall(first)
                started = time.monotonic()
                assert s.recv(1024) == b""  # closed by the server
                assert time.monotonic() - started < 5


def _clients_that_hold_connections(host: str, port: int) -> list[socket.socket]:
    """Connections that each keep the server waiting: idle ones, one whose request never
    ends, a keep-alive one between two requests, and one that asks for the page again and
    again and reads none of it, so that its answer ends up stuck unsent."""
    clients = [socket.create_connection((host, port), timeout=30) for _ in range(6)]
    idle, unfinished, polling, greedy = clients[:3], clients[3], clients[4], clients[5]
    del idle  # connected, nothing sent (a browser's spare connections)
    unfinished.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # the headers never end
    for _ in range(2):  # a page's keep-alive connection, between two polls
        polling.sendall(b"GET /api/league.json HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _answer(polling).startswith(b"{")
    greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    with contextlib.suppress(OSError):  # until the server stops reading it (2 s at most)
        greedy.settimeout(2)
        for _ in range(400):
            greedy.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(0.5)  # every connection reaches the server
    return clients


def test_stop_hangs_up_on_every_client_and_leaves_no_thread_behind(db: Path) -> None:
    """What ``serve`` does when told to stop: without it, the server would wait for these
    clients until the header and send timeouts (made a minute here, to tell the two apart)."""
    limits = ConnectionLimits(header_timeout_s=60.0, send_timeout_s=60.0, stop_s=0.5)
    before = set(threading.enumerate())
    clients: list[socket.socket] = []
    try:
        with running(LeagueSite(db), "127.0.0.1", limits) as base:
            host, port = base.removeprefix("http://").rstrip("/").split(":")
            clients = _clients_that_hold_connections(host, int(port))
            started = set(threading.enumerate()) - before
            assert any(t.name == "ttr-league" for t in started)
        for thread in started:  # the server's and its thread pool's
            thread.join(10)
            assert not thread.is_alive(), f"{thread.name} outlived the server"
        for s in clients[:5]:  # closed by the server (the greedy one was reset)
            s.settimeout(10)
            with contextlib.suppress(ConnectionResetError):
                while s.recv(65536):
                    pass
        with pytest.raises(ConnectionResetError):
            clients[5].settimeout(10)
            while clients[5].recv(1 << 20):
                pass
        with pytest.raises(OSError):  # no longer listening
            socket.create_connection((host, int(port)), timeout=10).close()
    finally:
        for s in clients:
            s.close()


def _ignore_sigint() -> None:
    """What a non-interactive shell does to a background job (``ttr leaderboard serve &``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _answer(s: socket.socket) -> bytes:
    """One whole HTTP answer (headers and a Content-Length body) read from ``s``."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, "the server hung up before answering"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = re.search(rb"\r\ncontent-length: (\d+)", head, re.IGNORECASE)
    assert length is not None, head
    while len(body) < int(length[1]):
        chunk = s.recv(65536)
        assert chunk, "the server hung up mid-answer"
        body += chunk
    assert head.startswith(b"HTTP/1.1 200 ")
    return body


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_stops_at_once_on_a_signal_whatever_its_clients_do(
    db: Path, signum: signal.Signals
) -> None:
    proc = subprocess.Popen(
        [*TTR, "leaderboard", "serve", "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_sigint,
    )
    clients: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("serving http://"), line
        host, port = line.split()[1].removeprefix("http://").rstrip("/").split(":")
        clients = _clients_that_hold_connections(host, int(port))
        assert proc.poll() is None

        proc.send_signal(signum)
        signalled = time.monotonic()
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"ttr leaderboard serve still ran 10 s after {signum.name}")
        took = time.monotonic() - signalled
    finally:
        for s in clients:
            s.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, out, err) == (0, "stopped\n", ""), f"after {took:.1f} s"
    assert took < 10
