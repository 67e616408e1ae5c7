"""Tournaments on a real Ray instance (``--cluster``, leaderboard/cluster.py): the same games
as a local run, records and logs back on the driver, a worker killed mid-game, the driver
interrupted and killed and then resumed, and one-line errors.

Skipped only where Ray is not installed, and never under CI (``.ci/run`` installs the
``ray`` extra). One Ray instance (2 CPUs) serves the in-process tests; the command-line test
starts its own with ``--cluster local``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leaderboard.runner import Crew, Events, Outcome, run
from leaderboard.schedule import games_in
from leaderboard.store import GameResult, Store
from leaderboard.worker import Settings
from referee.hosting.sandbox import SandboxConfig
from referee.replay import verify
from tests.leaderboard.test_disabling import REASON, first_game_only
from tests.leaderboard.test_tournament import (
    GREEDY,
    PLANNER,
    RANDOM,
    ROOT,
    TTR,
    _alive,
    _descendants,
    _start_and_wait,
    _stored,
)

try:
    import ray  # noqa: F401
except ImportError:
    if os.environ.get("CI"):
        raise  # CI installs the extra: a missing Ray is a broken install, not a skip
    pytest.skip("Ray is not installed (pip install 'ttr-arena[ray]')", allow_module_level=True)

from leaderboard.cluster import Cluster, connect

pytestmark = [
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc"),
    # one pytest-xdist worker runs them all, in file order (`make test`: --dist loadgroup), as
    # a serial run does: the module's Ray instance is started once, and never beside another
    # worker's
    pytest.mark.xdist_group("ray"),
]
NO_SANDBOX = SandboxConfig(enabled=False)


def _run(store: Store, **options: Any) -> Outcome:
    """A tournament on 2 workers with a short clock."""
    return run(store, workers=2, move_ms=500, bank_ms=5000, startup_s=10.0, **options)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with connect("local", 2) as connected:
        yield connected


def _never_starts(folder: Path) -> str:
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "never"\nversion = "1"\ncommand = ["{python}", "-c", "import sys; sys.exit(4)"]\n'
    )
    return str(folder)


def _games(store: Store) -> list[tuple[Any, ...]]:
    """What must not depend on where games were played: slot, seed, seats, results."""
    names = {e.bot_id: e.name for e in store.bots().values()}
    return sorted(
        (
            g.game_id,
            g.schedule_index,
            g.seed,
            g.end_reason,
            tuple((s.seat, names[s.bot_id], s.score, s.rank, s.faults) for s in g.seats),
        )
        for g in store.games()
    )


def test_a_tournament_on_ray_stores_the_same_games_as_a_local_run(
    tmp_path: Path, cluster: Cluster
) -> None:
    never = _never_starts(tmp_path / "never")
    bots = [RANDOM, GREEDY, PLANNER, never]
    common: dict[str, Any] = {"bot_dirs": bots, "players": 2, "rounds": 1, "base_seed": 2024}
    # The same deals need the same store key: the Ray run's store starts as a copy of the
    # local one, key and all (another store would deal other games from the same seed).
    with Store(tmp_path / "local.db") as store:
        store.seed_key()
    shutil.copyfile(tmp_path / "local.db", tmp_path / "ray.db")
    with Store(tmp_path / "local.db") as store:
        local = _run(store, records=str(tmp_path / "local"), sandbox=NO_SANDBOX, **common)
        expected = _games(store)
    records = tmp_path / "ray-records"
    with Store(tmp_path / "ray.db") as store:
        # sandboxed: the bots run confined on the node as they do locally
        on_ray = _run(store, records=str(records), crews=cluster.crew, **common)
        assert _games(store) == expected
        assert on_ray.complete and on_ray.played == local.played == games_in(3, 2, 1)
        for g in store.games():
            # records and logs came back to the driver, where the store says they are
            assert g.record_path == str(records / f"{g.game_id}.json")
            assert verify(g.record_path) is None
            for s in g.seats:
                assert s.log_path is not None and Path(s.log_path).is_file()
                assert Path(s.log_path).is_relative_to(records / "logs" / g.game_id)
    [left_out] = on_ray.rejected
    assert left_out.entrant.path == never  # the driver's folder, not the node's copy
    assert "would not start" in left_out.reason and "status 4" in left_out.reason
    log = left_out.reason.rsplit("(its whole output: ", 1)[1].rstrip(")")
    assert Path(log).is_relative_to(records) and Path(log).is_file()
    assert "/tmp/ttr-bots-" not in left_out.reason and "ttr-ray-" not in left_out.reason


def test_a_bot_disabled_on_ray_has_its_games_skipped(tmp_path: Path, cluster: Cluster) -> None:
    # tests/hostile_bots/first_game_only behaves in its first game only (tests/leaderboard/
    # test_disabling.py has the whole story, locally): the actors' games count towards the
    # fault rule as a local worker's do, and its games still pending are taken back.
    hostile = first_game_only(tmp_path)
    with Store(tmp_path / "league.db") as store:
        outcome = _run(
            store,
            bot_dirs=[hostile, RANDOM, GREEDY],
            variant="newyork",
            players=2,
            rounds=5,
            records=str(tmp_path / "records"),
            crews=cluster.crew,
        )
        [(entrant, reason)] = outcome.disabled
        assert entrant.name == "hostile-first-game-only" and REASON.match(reason), reason
        assert outcome.complete and outcome.skipped > 0
        assert outcome.played + outcome.skipped == games_in(3, 2, 5)
        skipped = store.skipped_game_ids(outcome.tournament.tournament_id)
        assert len(skipped) == outcome.skipped
        assert not skipped & {g.game_id for g in store.games()}
        [d] = store.disabled()
        assert (d.bot_id, d.reason) == (entrant.bot_id, reason)


def _actors() -> list[tuple[int, str]]:
    """This test process's Ray actors (pid, process title): Ray titles them ray::CLASS while
    idle and ray::CLASS.METHOD while in a call."""
    found = []
    for pid in _descendants(os.getpid()):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        except OSError:
            continue
        if title.startswith("ray::GameActor"):
            found.append((pid, title))
    return found


def test_a_worker_killed_mid_game_loses_no_game_and_plays_none_twice(
    tmp_path: Path, cluster: Cluster
) -> None:
    crews: list[Any] = []

    def crew(count: int, settings: Settings) -> Crew:
        crews.append(cluster.crew(count, settings))
        return crews[-1]  # type: ignore[no-any-return]

    killed: list[int] = []
    its_bots: set[int] = set()

    def played(game: GameResult, top: object) -> None:
        if killed:
            return
        # The actors play on while the driver stores: a busy one is in a game now. It may be
        # between two deals, its old bots stopped and the next not yet started (sandboxed,
        # bots are fresh per deal): wait for one that has its bots, to kill it mid-game.
        deadline = time.monotonic() + 10
        while True:
            busy = [pid for pid, title in _actors() if title.endswith(".run")]
            playing = [(pid, _descendants(pid)) for pid in busy]
            playing = [(pid, bots) for pid, bots in playing if bots]
            if playing or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert playing, "no actor was playing"
        pid, bots = playing[0]
        its_bots.update(bots)
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    with Store(tmp_path / "league.db") as store:
        outcome = _run(
            store,
            bot_dirs=[RANDOM, GREEDY, PLANNER],
            players=2,
            rounds=2,
            records=str(tmp_path / "records"),
            events=Events(played=played),
            crews=crew,
        )
        ids = [g.game_id for g in store.games()]
    total = games_in(3, 2, 2)
    assert killed and not _alive(killed[0]) and its_bots
    assert not [p for p in its_bots if _alive(p)], "the killed actor's bots live on"
    assert crews[0].retried, "the killed actor's game was not handed on"
    assert outcome.complete and not outcome.failed and outcome.played == total
    assert len(ids) == len(set(ids)) == total
    assert sorted(p.name for p in (tmp_path / "records").glob("*.json")) == sorted(
        f"{i}.json" for i in ids
    )


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_a_cluster_run_interrupted_then_killed_resumes_without_losing_or_doubling_games(
    tmp_path: Path,
) -> None:
    db = tmp_path / "league.db"
    args = ["tournament", "run", "--db", str(db), "--cluster", "local", "--workers", "2"]
    quick = ["--move-ms", "500", "--bank-ms", "5000", "--no-sandbox"]
    total = games_in(3, 2, 4)

    # Ctrl-C: the actors stop after their game, the driver says how to resume.
    proc, family = _start_and_wait(
        [*args, *quick, "--players", "2", "--rounds", "4", RANDOM, GREEDY, PLANNER], db, 2
    )
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "--resume" in err
    _assert_exit(family)

    # SIGKILL: no goodbye; whatever was stored stays, the rest is played by the resume.
    proc, family = _start_and_wait([*args, *quick, "--resume"], db, len(_stored(db)) // 2 + 1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _stored(db)
    _assert_exit(family)
    assert len({g for g, _, _ in before}) < total

    resumed = subprocess.run(
        [*TTR, *args, *quick, "--resume", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["complete"] and summary["games"] == total
    assert summary["stored_before"] == len({g for g, _, _ in before})
    assert set(before) <= set(_stored(db))
    with sqlite3.connect(db) as conn:
        slots = [r[0] for r in conn.execute("SELECT schedule_index FROM games ORDER BY 1")]
    assert slots == list(range(total))


#: Ray's per-node agents, started by ``ray.init``: when their driver is SIGKILLed they log
#: that the raylet is gone and then hang on exit (Ray 2.60). Ray's processes, not ours.
_RAY_AGENTS = ("ray::DashboardAgent", "ray::RuntimeEnvAgent")


def _assert_exit(family: set[int], within_s: float = 20.0) -> None:
    """Every actor, bot and Ray daemon of a run exits; Ray's agents, which may hang after a
    SIGKILLed driver, are stopped here."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        left = {p: _cmdline(p) for p in family if _alive(p)}
        if all(c.startswith(_RAY_AGENTS) for c in left.values()):
            break
        time.sleep(0.2)
    for pid, cmd in left.items():
        if cmd.startswith(_RAY_AGENTS):
            os.kill(pid, signal.SIGKILL)
    others = {p: c for p, c in left.items() if not c.startswith(_RAY_AGENTS)}
    assert not others, f"processes outlived the run: {others}"


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("nonsense", "expected ray://HOST:PORT"),
        ("10.0.0.1:6379", "expected ray://HOST:PORT"),  # Ray would retry it for ever
        ("ray://host", "expected ray://HOST:PORT"),
    ],
)
def test_a_bad_cluster_address_is_one_line_and_stores_nothing(
    tmp_path: Path, address: str, message: str
) -> None:
    db = tmp_path / "league.db"
    result = subprocess.run(
        [*TTR, "tournament", "run", "--db", str(db), "--cluster", address, RANDOM, GREEDY],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert result.stderr.startswith(f"ttr: error: --cluster {address}: ")
    assert message in result.stderr and len(result.stderr.splitlines()) == 1
    assert not db.exists()


def test_identical_bots_of_two_entrants_are_two_processes_on_a_node(tmp_path: Path) -> None:
    """Two authors may upload the same files (two versions of one content hash): on a node
    each plays from a folder of its own, so that a game seating both seats two processes."""
    from leaderboard.cluster import GameActor, pack_bots
    from leaderboard.worker import Entrant

    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        shutil.copytree(RANDOM, folder, ignore=shutil.ignore_patterns("__pycache__"))
    package = tmp_path / "bots.zip"
    hashes = pack_bots([str(one), str(two)], package)
    assert hashes[str(one)] == hashes[str(two)]
    data = package.read_bytes()
    settings = Settings("usa", 2, 1000, 5000, 10.0, None, validation_bot=str(one))
    actor = GameActor(settings, data)
    try:
        first = actor._staged(Entrant(1, str(one), "a", "v1", hashes[str(one)]))
        second = actor._staged(Entrant(2, str(two), "b", "v1", hashes[str(two)]))
        assert first != second
        assert actor._staged(Entrant(2, str(two), "b", "v1", hashes[str(two)])) == second
        assert sorted(p.name for p in second.iterdir()) == sorted(p.name for p in first.iterdir())
    finally:
        actor.close()
    assert not actor.copies.exists()


def test_a_ladder_plays_on_ray_with_the_server_the_only_writer(
    tmp_path: Path, cluster: Cluster
) -> None:
    """``ttr server run --cluster``: validation and ladder games on Ray actors, results and
    records written by the ladder alone, on the driver; two authors' identical uploads play."""
    from leaderboard.ladder.season import Pool, Season
    from leaderboard.ladder.service import Ladder
    from referee.hosting.upload import pack

    ladder = Ladder(
        Season(pools=(Pool("usa@1", 2),), workers=2), tmp_path / "data", crew=cluster.crew
    )
    ladder.open()
    store = ladder.store()
    authors = {}
    for name, bot in (("ann", RANDOM), ("bo", RANDOM), ("cy", GREEDY)):
        author = ladder.authenticate(store.add_author(name))
        assert author is not None
        authors[name] = author
        ladder.submit(author, pack(bot))
    ladder.start()
    deadline = time.monotonic() + 240
    try:
        # until the two identical versions have met (each its own process on the node)
        while len(store.games()) < 6 or frozenset({1, 2}) not in {
            frozenset(s.bot_id for s in g.seats) for g in store.games()
        }:
            assert ladder.error is None and time.monotonic() < deadline
            time.sleep(0.5)
    finally:
        ladder.stop()
    records = ladder.records
    for game in store.games():
        assert game.record_path is not None and verify(game.record_path) is None
        assert Path(game.record_path).is_relative_to(records)
        for seat in game.seats:
            assert seat.log_path is not None and Path(seat.log_path).is_file()
    for author in authors.values():
        assert ladder.validation_log(author, 1, 0) is not None  # on the driver, servable
    met = [g for g in store.games() if {s.bot_id for s in g.seats} == {1, 2}]
    assert met and all(s.faults == 0 for g in met for s in g.seats)
