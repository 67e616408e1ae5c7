"""``ttr server run`` facing its machine's faults and its organiser's restarts (issue 35, items
7, 8 and 11), as tests/cli/test_server.py runs it: a real process, over HTTP.

* A full disk (a small tmpfs as the data folder, filled up) pauses the ladder: uploads are
  refused with 507 naming it, and once space is freed the ladder goes on by itself.
* A ladder thread that dies takes the server down, exit status 1 and the reason, for its
  supervisor to start it again.
* SIGTERM stops a server whose build slot holds a build that only sleeps, its jail and all.
* A restart without the season file runs the season the store holds; a file that changes
  its pools is refused, naming the change.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import httpx
import pytest

from referee.hosting.sandbox import unavailable_reason
from referee.hosting.upload import pack
from tests.cli.test_server import SAMPLES, Server, bot_copy, games, states, wait_for
from tests.leaderboard.test_ladder_builds import sleeper
from tests.leaderboard.test_ladder_disk import fill, small_disk
from tests.leaderboard.test_tournament import _assert_all_exit, _descendants

DISK_MB = 48  #: the data folder's disk: room for a season's start, filled up on purpose


def said(server: Server, text: str) -> bool:
    return text in "".join(server.output)


def ladder_state(server: Server) -> str:
    """What the league page's data says of the ladder (refreshed every few seconds)."""
    data = httpx.get(f"{server.url}api/league.json", timeout=30).json()
    return str(data.get("ladder", {}).get("state"))


def test_a_full_disk_pauses_the_ladder_uploads_get_507_and_it_goes_on_once_freed(
    tmp_path: Path,
) -> None:
    with small_disk(tmp_path / "data", DISK_MB) as data:
        server = Server(
            data,
            ["--no-sandbox", "--variant", "usa", "--players", "2", "--uploads-per-minute", "100"],
        ).start()
        try:
            tokens = {name: server.author(name) for name in ("ann", "bo")}
            for name, bot in (("ann", "random"), ("bo", "greedy")):
                assert server.upload(tokens[name], pack(SAMPLES / bot)).status_code == 201
            wait_for("games playing", lambda: games(server) >= 1, server)

            filler = fill(data)
            # whether the ladder has paused yet or the upload meets the full disk itself
            refused = server.upload(tokens["ann"], pack(bot_copy(tmp_path, "random", "full")))
            assert refused.status_code == 507, refused.text
            assert "disk is full" in refused.json()["error"]
            wait_for("the ladder paused", lambda: said(server, "the ladder is paused"), server)
            again = server.upload(tokens["bo"], pack(bot_copy(tmp_path, "planner", "full")))
            assert again.status_code == 507, again.text
            season = httpx.get(f"{server.url}api/season", timeout=30)
            assert season.status_code == 200
            # the state is public: the season's API and the league page's data say it
            assert season.json()["state"] == "paused" and season.json()["reason"], season.text
            assert season.json()["since"] is not None
            wait_for("the league page to say so", lambda: ladder_state(server) == "paused", server)
            assert not said(server, "the ladder stopped")

            filler.unlink()
            wait_for("the ladder going on", lambda: said(server, "the ladder goes on"), server)
            assert httpx.get(f"{server.url}api/season", timeout=30).json()["state"] == "running"
            after = server.upload(tokens["bo"], pack(bot_copy(tmp_path, "planner", "after")))
            assert after.status_code == 201, after.text
            wait_for("bo v2 active", lambda: states(server).get(("bo", 2)) == "active", server)
            assert ("ann", 2) not in states(server)  # the refused uploads left nothing
            assert server.stop() == 0
        finally:
            if server.proc and server.proc.poll() is None:
                server.kill()


def test_the_server_exits_non_zero_with_the_reason_when_its_ladder_dies(tmp_path: Path) -> None:
    """Not a full disk: the store losing a table under the ladder ends its thread; the server
    stops serving and exits 1, saying why, where it went on answering before."""
    server = Server(tmp_path / "data", ["--no-sandbox", "--variant", "usa", "--players", "2"])
    server.start()
    try:
        with server.db() as db:
            db.execute("DROP TABLE versions")
        assert server.proc is not None
        assert server.proc.wait(60) == 1
        wait_for("the reason", lambda: said(server, "exiting, the ladder had stopped"))
        assert said(server, "no such table: versions")
    finally:
        if server.proc and server.proc.poll() is None:
            server.kill()


@pytest.mark.skipif(unavailable_reason() is not None, reason=f"no sandbox: {unavailable_reason()}")
def test_sigterm_stops_the_server_while_a_jailed_build_sleeps(tmp_path: Path) -> None:
    """The build's limit is 15 minutes; the server's stop is not: its jail is killed."""
    server = Server(tmp_path / "data", ["--variant", "usa", "--players", "2"]).start()
    try:
        token = server.author("mallory")
        assert server.upload(token, pack(sleeper(tmp_path, "jailed"))).status_code == 201
        assert server.proc is not None
        pid = server.proc.pid

        def sleeping() -> bool:
            for child in _descendants(pid):
                with contextlib.suppress(OSError):
                    if b"sleep\x00600" in Path(f"/proc/{child}/cmdline").read_bytes():
                        return True
            return False

        wait_for("the build sleeping in its jail", sleeping, server)
        assert states(server)[("mallory", 1)] == "building"
        assert server.stop() == 0  # within 60 s (it waited for the build's 900 s before)
    finally:
        if server.proc and server.proc.poll() is None:
            server.kill()
    _assert_all_exit(server.family)


def test_a_restart_without_the_season_file_runs_the_stored_season(tmp_path: Path) -> None:
    """The issue's restart: a season of two pools started again as ``ttr server run --data
    DIR``, the file left off, runs those two pools; a file changing them is refused, naming
    the change, and ``--reconfigure`` applies it."""
    season = tmp_path / "season.toml"
    two = '[[pools]]\nvariant = "usa"\nplayers = 4\n[[pools]]\nvariant = "usa"\nplayers = 2\n'
    season.write_text('name = "Two pools"\n' + two)
    data = tmp_path / "data"
    both = [{"variant": "usa@1", "players": 4}, {"variant": "usa@1", "players": 2}]

    def pools(server: Server) -> object:
        return httpx.get(f"{server.url}api/season", timeout=30).json()["pools"]

    first = Server(data, ["--no-sandbox", "--config", str(season)]).start()
    assert pools(first) == both
    assert first.stop() == 0

    again = Server(data, ["--no-sandbox"]).start()
    try:
        assert said(again, "season 'Two pools' (usa@1 4p, usa@1 2p)")
        assert pools(again) == both
        assert again.stop() == 0
    finally:
        if again.proc and again.proc.poll() is None:
            again.kill()

    changed = tmp_path / "changed.toml"
    changed.write_text('name = "Two pools"\n[[pools]]\nvariant = "usa"\nplayers = 4\n')
    run = ["server", "run", "--data", str(data), "--port", "0", "--no-sandbox"]
    refused = again.ttr(*run, "--config", str(changed))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "pools: usa@1 4p, usa@1 2p -> usa@1 4p" in refused.stderr
    assert "--reconfigure" in refused.stderr and "Traceback" not in refused.stderr

    third = Server(data, ["--no-sandbox", "--config", str(changed), "--reconfigure"]).start()
    try:
        assert pools(third) == both[:1]
        assert third.stop() == 0
    finally:
        if third.proc and third.proc.poll() is None:
            third.kill()
