"""The competition server's ladder JSON under concurrent readers: latency percentiles.

    python bench/server.py [--readers 50] [--seconds 20] [--games 150] [--authors 6]
                           [--idle 600] [--no-sandbox] [--json]

A real ``ttr server run`` (its ladder playing on worker processes, sandboxed unless
``--no-sandbox``) with ``--authors`` authors each submitting a sample bot (random, greedy,
planner in turn); once it has stored ``--games`` games, ``--readers`` clients (one asyncio
task and HTTP connection each, httpx) fetch ``/api/league.json`` back to back for
``--seconds`` while the ladder goes on playing and writing. Printed: requests, requests/s,
the JSON's size, and the latency p50 / p90 / p99 / max in milliseconds (each request timed
from send to the last byte), and the games the ladder stored meanwhile (the readers must not
stall it). The issue's figure is the p99 with 50 readers. One request before the readers
start makes the first computation of the data (the only one a reader ever waits for: later
ones run in the background while readers get the last copy, ``PublicLeague``).

``--idle N`` (issue 35, item 2): meanwhile another client, from the source address 127.0.0.2,
holds N connections open that never send a byte, opened before the readers connect; every
``--idle-reopen-s`` it opens again those the server has closed, so it holds as many as the
server lets it. Printed besides: how many it held open (the least and the most seen) and how
many times it connected. A reader's answer other than 200 (uvicorn's 503 when the idle
connections held its concurrency limit) is counted as an error, and the percentiles are of
the 200s. Now the server keeps 64 of them (``--connections-per-address``), so a client that
reopens the rest every second connects some 550 times a second: about 100 us of the server's
CPU each (accepted, made room for, closed), and about as much again of its own, on the same
cores as the readers.

The readers run on the same machine as the server (2 shared cores here): the figures include
their own CPU, so they are an upper bound of what a remote reader sees.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import re
import select
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
TTR = [sys.executable, "-m", "ttr_arena.cli"]
BOTS = ("random", "greedy", "planner")


def start_server(data: Path, args: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [*TTR, "server", "run", "--data", str(data), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            threading.Thread(target=_drain, args=(proc,), daemon=True).start()
            return proc, found.group(1)
    raise SystemExit("the server did not start")


def _drain(proc: subprocess.Popen[str]) -> None:
    """Read the server's output to the end, so that it never blocks on a full pipe."""
    assert proc.stdout is not None
    for _ in proc.stdout:
        pass


def games(data: Path) -> int:
    with sqlite3.connect(data / "season.db") as db:
        return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])


def populate(data: Path, url: str, authors: int, tmp: Path) -> None:
    from referee.hosting.upload import pack

    for i in range(authors):
        name = f"author{i}"
        token = subprocess.run(
            [*TTR, "server", "author", "add", name, "--data", str(data)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        folder = tmp / name
        shutil.copytree(
            ROOT / "sample_bots" / BOTS[i % len(BOTS)],
            folder,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        answer = httpx.post(
            f"{url}api/submissions",
            content=pack(folder),
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        answer.raise_for_status()


class IdleHolder:
    """Another client, from ``source``, holding ``n`` connections to ``url`` that send nothing;
    every ``reopen_s`` it replaces those the server closed. In a process of its own (its
    connects would otherwise take the readers' interpreter from them), until :meth:`stop`.
    Its figures: ``connects`` and ``held`` (how many were open at each round)."""

    def __init__(self, url: str, n: int, reopen_s: float, source: str = "127.0.0.2") -> None:
        host, port = url.removeprefix("http://").rstrip("/").rsplit(":", 1)
        self.address = (host, int(port))
        self.n = n
        self.reopen_s = reopen_s
        self.source = source
        self.connects = 0
        self.held: list[int] = []
        self._pipe, child = multiprocessing.Pipe()
        self._process = multiprocessing.get_context("fork").Process(
            target=self._hold, args=(child,), daemon=True
        )

    def start(self) -> IdleHolder:
        """Once its connections are open (the first ``n``, or as many as the backlog took)."""
        self._process.start()
        if not self._pipe.poll(60):
            raise SystemExit("the idle client did not start")
        self._pipe.recv()
        return self

    def stop(self) -> None:
        self._pipe.send("stop")
        if self._pipe.poll(30):
            self.connects, self.held = self._pipe.recv()
        self._process.join(30)

    def _hold(self, parent: Connection) -> None:
        sockets: list[socket.socket] = []
        connects = 0
        held: list[int] = []

        def fill() -> None:
            nonlocal connects
            while len(sockets) < self.n:
                s = socket.socket()
                s.bind((self.source, 0))
                s.settimeout(5)
                try:
                    s.connect(self.address)
                except OSError:
                    s.close()
                    return  # the backlog is full: again next round
                connects += 1
                sockets.append(s)

        fill()
        parent.send("open")
        while not parent.poll(self.reopen_s):
            poller = select.poll()
            for s in sockets:
                poller.register(s, select.POLLIN)
            closed = {fd for fd, _ in poller.poll(0)}  # an idle connection is read only closed
            for s in [s for s in sockets if s.fileno() in closed]:
                sockets.remove(s)
                s.close()
            held.append(len(sockets))
            fill()
        parent.send((connects, held))
        for s in sockets:
            s.close()


async def read_for(url: str, readers: int, seconds: float) -> tuple[list[float], int, int]:
    """Each reader fetches the JSON back to back on its own connection. The clients are made
    (and connected) before the clock starts: making 50 httpx clients at once costs the
    readers' process some 2 s of CPU (an SSL context each), which is not the server's.
    (the latencies of the 200s, the JSON's size, the answers that were not 200)"""
    latencies: list[float] = []
    size = 0
    errors = 0
    clients = [httpx.AsyncClient(timeout=60) for _ in range(readers)]
    for client in clients:
        with contextlib.suppress(httpx.HTTPError):
            await client.get(f"{url}api/season")  # connected
    stop = time.monotonic() + seconds

    async def reader(client: httpx.AsyncClient) -> None:
        nonlocal size, errors
        while time.monotonic() < stop:
            began = time.perf_counter()
            try:
                answer = await client.get(f"{url}api/league.json")
            except httpx.HTTPError:
                errors += 1
                continue
            if answer.status_code != 200:
                errors += 1
                continue
            latencies.append(time.perf_counter() - began)
            size = len(answer.content)

    try:
        await asyncio.gather(*(reader(client) for client in clients))
    finally:
        for client in clients:
            await client.aclose()
    return latencies, size, errors


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--games", type=int, default=150, help="stored before reading")
    parser.add_argument("--authors", type=int, default=6)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument(
        "--idle", type=int, default=0, help="connections held idle by another client meanwhile"
    )
    parser.add_argument("--idle-reopen-s", type=float, default=1.0)
    parser.add_argument("--no-sandbox", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ttr-bench-server-"))
    data = tmp / "data"
    flags = ["--variant", "usa", "--players", str(args.players), "--workers", "2"]
    flags += ["--uploads-per-minute", "1000"]
    if args.no_sandbox:
        flags.append("--no-sandbox")
    proc, url = start_server(data, flags)
    try:
        populate(data, url, args.authors, tmp)
        while games(data) < args.games:
            if proc.poll() is not None:
                raise SystemExit("the server stopped")
            time.sleep(1)
        httpx.get(f"{url}api/league.json", timeout=60).raise_for_status()  # the first computation
        before = games(data)
        idle = IdleHolder(url, args.idle, args.idle_reopen_s).start() if args.idle else None
        try:
            latencies, size, errors = asyncio.run(read_for(url, args.readers, args.seconds))
        finally:
            if idle is not None:
                idle.stop()
        played = games(data) - before
    finally:
        proc.terminate()
        proc.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)
    ms = [x * 1000 for x in latencies] or [float("nan")]
    result: dict[str, object] = {
        "readers": args.readers,
        "seconds": args.seconds,
        "sandboxed": not args.no_sandbox,
        "games_stored_before": before,
        "requests": len(latencies),
        "requests_per_s": round(len(latencies) / args.seconds, 1),
        "errors": errors,
        "json_bytes": size,
        "p50_ms": round(statistics.median(ms), 1),
        "p90_ms": round(percentile(ms, 0.90), 1),
        "p99_ms": round(percentile(ms, 0.99), 1),
        "max_ms": round(max(ms), 1),
        "games_played_while_reading": played,
    }
    if idle is not None:
        result["idle"] = args.idle
        result["idle_held_min"] = min(idle.held, default=0)
        result["idle_held_max"] = max(idle.held, default=0)
        result["idle_connects"] = idle.connects
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{args.readers} readers of /api/league.json for {args.seconds:g} s "
        f"({'sandboxed' if result['sandboxed'] else 'unsandboxed'} ladder, {before} games stored, "
        f"{size} bytes each)"
    )
    print(
        f"  {result['requests']} requests answered 200, {result['requests_per_s']}/s, "
        f"{errors} errors; latency ms: p50 {result['p50_ms']}, p90 {result['p90_ms']}, "
        f"p99 {result['p99_ms']}, max {result['max_ms']}"
    )
    if idle is not None:
        print(
            f"  another client held {result['idle_held_min']} to {result['idle_held_max']} of "
            f"its {args.idle} idle connections open ({idle.connects} connects)"
        )
    print(f"  the ladder stored {played} games meanwhile")


if __name__ == "__main__":
    main()
