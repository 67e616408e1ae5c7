"""The ladder's builds (issue 35, item 7): one author's slow builds must not stop everyone's.

A version is ``queued`` until its build really starts; the builds start in an order fair
between authors (an author's next version waits behind every other author's); each build has
the season's ``build_timeout_s``; and a stop kills the builds running rather than waiting out
their limit. The ladder runs in this process, its builds unjailed (a jailed build stopped by
SIGTERM is tests/cli/test_server_ladder_faults.py's).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from leaderboard.ladder.model import Author
from leaderboard.ladder.season import Pool, Season
from leaderboard.ladder.service import Ladder
from leaderboard.ladder.store import DAY_S
from referee.hosting.sandbox import SandboxConfig
from referee.hosting.upload import pack
from tests.leaderboard.test_ladder import SAMPLES, state, variant_of, wait_for

UNSANDBOXED = SandboxConfig(enabled=False)
LIMIT_S = 5.0  #: the season's build limit here: long enough to look, short enough to wait


def sleeper(tmp: Path, marker: str) -> Path:
    """A bot whose build writes its pid into its folder and then sleeps for ten minutes."""
    folder = variant_of(SAMPLES / "random", tmp, marker)
    config = (folder / "bot.toml").read_text()
    build = 'build = [["sh", "-c", "echo $$ > build.pid; exec sleep 600"]]\ncommand ='
    (folder / "bot.toml").write_text(config.replace("command =", build, 1))
    return folder


def authors(ladder: Ladder, *names: str) -> dict[str, Author]:
    found = {}
    for name in names:
        author = ladder.authenticate(ladder.store().add_author(name))
        assert author is not None
        found[name] = author
    return found


def building(lines: list[str]) -> list[str]:
    return [line.removeprefix("ttr server: building ") for line in lines if " building " in line]


def test_builds_wait_queued_take_turns_between_authors_keep_the_limit_and_stop_at_once(
    tmp_path: Path,
) -> None:
    """alice uploads two versions whose builds sleep, then bob one that builds at once, all
    before the ladder starts; one build slot. bob's waits ``queued`` (not ``building``) while
    alice's first runs; that one fails at the season's limit; bob's starts next, ahead of
    alice's second; and ``stop`` kills alice's second build there and then, leaving it to be
    built again at the next start (the machine stopping is not the author's fault)."""
    lines: list[str] = []
    season = Season(pools=(Pool("usa@1", 2),), builds=1, workers=1, build_timeout_s=LIMIT_S)
    ladder = Ladder(season, tmp_path / "data", sandbox=UNSANDBOXED, log=lines.append)
    ladder.open()
    people = authors(ladder, "alice", "bob")
    alice, bob = people["alice"], people["bob"]
    first = ladder.submit(alice, pack(sleeper(tmp_path, "a1"))).version
    second = ladder.submit(alice, pack(sleeper(tmp_path, "a2"))).version
    ladder.submit(bob, pack(variant_of(SAMPLES / "greedy", tmp_path, "b1")))
    ladder.start()
    try:
        pid_file = ladder.build_folder(first.bot_id) / "build.pid"
        wait_for("alice's first build running", pid_file.exists, ladder)
        assert state(ladder, alice, 1) == "building"
        assert (state(ladder, bob, 1), state(ladder, alice, 2)) == ("queued", "queued")

        wait_for("alice's first build at its limit", lambda: state(ladder, alice, 1) == "failed")
        reason = ladder.versions(alice)[-1].reason
        assert f"did not finish in {LIMIT_S:g} s" in reason, reason

        second_pid = ladder.build_folder(second.bot_id) / "build.pid"
        wait_for("alice's second build running", second_pid.exists, ladder)
        assert building(lines) == ["alice v1", "bob v1", "alice v2"]
        assert state(ladder, bob, 1) in ("validating", "active")
        pid = _pid(second_pid)
    finally:
        ladder.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped by the stop, not left for its ten minutes
    assert state(ladder, alice, 2) == "building"  # queued again at the next start, not failed


def _pid(path: Path) -> int:
    def written() -> bool:
        return path.read_text().strip().isdigit()

    wait_for("the pid written", written)
    return int(path.read_text())


def test_the_build_queue_is_fair_over_the_last_day(tmp_path: Path) -> None:
    """The order builds start in: each author's queued versions in upload order, behind every
    author who has had fewer builds in the last 24 hours (the window ``per_day`` counts)."""
    season = Season(pools=(Pool("usa@1", 2),), per_day=100)
    ladder = Ladder(season, tmp_path / "data", sandbox=UNSANDBOXED)
    ladder.open()
    try:
        people = authors(ladder, "alice", "bob", "carol")
        store = ladder.store()

        def submit(name: str, marker: str) -> int:
            folder = variant_of(SAMPLES / "random", tmp_path, f"{name}-{marker}")
            return ladder.submit(people[name], pack(folder)).version.bot_id

        built = submit("alice", "0")
        store.set_state(built, "active")  # alice had a build today
        ids = {
            f"{name} {marker}": submit(name, marker)
            for name, marker in (("alice", "1"), ("alice", "2"), ("bob", "1"), ("alice", "3"))
        }
        ids["bob 2"] = submit("bob", "2")
        ids["carol 1"] = submit("carol", "1")
        names = {bot_id: name for name, bot_id in ids.items()}

        def order(since: float) -> list[str]:
            return [names[r.bot_id] for r in store.build_queue(since=since)]

        assert order(time.time() - DAY_S) == [
            "bob 1",
            "carol 1",
            "alice 1",
            "bob 2",
            "alice 2",
            "alice 3",
        ]
        # a build more than a day ago no longer counts against alice: upload order per turn
        assert order(time.time() + 1) == [
            "alice 1",
            "bob 1",
            "carol 1",
            "alice 2",
            "bob 2",
            "alice 3",
        ]
    finally:
        ladder.stop()
