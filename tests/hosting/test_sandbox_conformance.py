"""The bot sandbox against bots that misbehave on purpose (issue 9, docs/security.md).

Each bot under tests/hostile_bots/ plays legal random moves around one attack and writes one
``ATTACK <what>: <outcome>`` line per attempt to stderr. For each, a real game on the shortest
variant, sandboxed, against the sample random bot(s) must: finish; put faults (if any) on the
hostile seat only; leave the other bots running with no fault; leave no trace of the attack
(files, connections, processes); and leave nothing of the hostile bot running once it is
stopped. The hostile bot's own log must show each attempt failing. ``test_soak_*`` plays 28
such games (40 with ``TTR_SOAK=1``, or ``TTR_HOSTILE_GAMES=N``) in this process and checks
that the referee's memory and open files stay flat.

A machine that cannot run the sandbox fails these tests, naming what is missing: a sandbox
that silently does not run is what they exist to catch.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from leaderboard.store import Store
from referee.games.board import load_ruleset
from referee.games.protocol import ECHO_LINE_CHARS, RECORD_LINES_CHARS
from referee.hosting.launcher import LaunchedBot, launch
from referee.hosting.sandbox import FOLDER_INSIDE, Limits, SandboxConfig, unavailable_reason
from referee.match import Clock, Match, MatchResult, SeatBot, play_match

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "hostile_bots"
RANDOM = ROOT / "sample_bots" / "random"
NEW_YORK = load_ruleset("newyork")  # the shortest variant: a game is about 50 decisions
CLOCK = Clock(move_ms=300, bank_ms=2000)
#: small, so that the floods and hogs reach them quickly
LIMITS = Limits(memory_mb=256, processes=64, log_kb=64, scratch_mb=8)
#: a game's record is about 20 KB; faults with giant messages must not make it much bigger
RECORD_MAX = 256 * 1024
STARTUP_S = 20.0
#: processes a bot may see in its own PID namespace: itself and bwrap's init, one to spare
MAX_VISIBLE = 3


@pytest.fixture(autouse=True)
def sandbox_available() -> None:
    """Fail, never skip, where the sandbox cannot run."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.fail(f"the bot sandbox cannot run on this machine: {reason}")


# ---------------------------------------------------------------------------------------------
# the arena: bot copies, a records folder and a store, with a secret in each


@dataclass(frozen=True)
class Proc:
    uid: int  #: the real uid, as the host numbers it
    cmdline: str


def marked(marker: str) -> dict[int, Proc]:
    """Every live process (zombies are dead) with ``marker`` in its command line."""
    found: dict[int, Proc] = {}
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            if needle not in cmdline:
                continue
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("State", "").split()[:1] == ["Z"]:
            continue
        text = cmdline.replace(b"\0", b" ").decode("utf-8", "replace")
        found[int(entry)] = Proc(int(fields["Uid"].split()[0]), text)
    return found


def with_uids(uids: set[int]) -> list[int]:
    """Every live process whose real uid is one of ``uids``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                line = next(
                    ln
                    for ln in Path(f"/proc/{entry}/status").read_text().splitlines()
                    if ln.startswith("Uid:")
                )
                if int(line.split()[1]) in uids:
                    found.append(int(entry))
    return found


def attacks(log: str) -> dict[str, str]:
    """The bot's ``ATTACK <what>: <outcome>`` lines as what -> outcome (the last one wins)."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^ATTACK (.+?): (.*)$", log, re.MULTILINE)}


def failed(outcome: str) -> bool:
    return not outcome.startswith("SUCCEEDED") and "NOT SENT" not in outcome


@dataclass
class Arena:
    root: Path
    secret: str

    @property
    def bots(self) -> Path:
        return self.root / "bots"

    @property
    def records(self) -> Path:
        return self.root / "records"

    @property
    def store(self) -> Path:
        return self.root / "store.db"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def opponent(self, i: int) -> Path:
        """A copy of the sample random bot with a secret in its folder."""
        folder = self.bots / f"random-{i}"
        if not folder.exists():
            shutil.copytree(RANDOM, folder, ignore=shutil.ignore_patterns("__pycache__"))
            (folder / "secret.txt").write_text(f"{self.secret}\n")
        return folder

    def hostile(self, name: str, targets: dict[str, Any]) -> tuple[Path, str]:
        """A copy of a hostile bot, with the shared module and its targets beside it; the
        folder is named after its marker, so the sandbox's own processes carry it too."""
        marker = f"ttr-hostile-{name}-{uuid.uuid4().hex[:10]}"
        folder = self.bots / marker
        shutil.copytree(HOSTILE / name, folder, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(HOSTILE / "_common.py", folder)
        write_targets(
            folder,
            {"marker": marker, "host_pidns": os.readlink("/proc/self/ns/pid"), **targets},
        )
        return folder, marker

    def snapshot(self) -> dict[str, str]:
        """Every file and folder of the arena (but the logs and the referee's new records)
        with a hash of its content."""
        out: dict[str, str] = {}
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            if rel.parts[0] == "logs" or (rel.parts[0] == "records" and path.name != "old.json"):
                continue
            if rel.name == "targets.json":  # the test's own writes
                continue
            out[str(rel)] = (
                "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
            )
        return out


def write_targets(folder: Path, targets: dict[str, Any]) -> None:
    (folder / "targets.json").write_text(json.dumps(targets))


def update_targets(folder: Path, **more: Any) -> None:
    targets = json.loads((folder / "targets.json").read_text())
    targets.update(more)
    write_targets(folder, targets)


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    a = Arena(tmp_path, f"ttr-secret-{uuid.uuid4().hex}")
    a.records.mkdir()
    (a.records / "old.json").write_text(json.dumps({"secret": a.secret}))
    with Store(a.store) as store:
        store.add_bot(a.secret, "1", "", "0" * 64)
    a.logs.mkdir()
    return a


# ---------------------------------------------------------------------------------------------
# one game


@dataclass
class Played:
    result: MatchResult
    seat: int  #: the hostile bot's
    log: str  #: the hostile bot's log of the game
    record: Path
    marker: str
    folder: Path
    #: the hostile bot's processes seen before and after the game
    during: dict[int, Proc]
    death: str  #: why the hostile bot was not running at the end of the game ('' if it was)
    others_death: list[str]  #: the same for the other bots
    stop_s: float  #: how long stopping the hostile bot took
    left: dict[int, Proc]  #: the hostile bot's processes right after stop() returned

    @property
    def attacks(self) -> dict[str, str]:
        return attacks(self.log)

    def faults_of(self, seat: int) -> list[str]:
        return [f.kind for f in self.result.faults if f.seat == seat]


def play(
    arena: Arena,
    name: str,
    targets: dict[str, Any] | None = None,
    *,
    seats: int = 2,
    seat: int = 0,
    limits: Limits = LIMITS,
    seed: int = 1,
    opponents: list[LaunchedBot] | None = None,
) -> Played:
    """Start the hostile bot first (so it could race the others for their addresses), then
    the random bots (or use ``opponents``, already running), tell the hostile bot their
    addresses and pids, and play one game with it in ``seat``."""
    folder, marker = arena.hostile(name, targets or {})
    config = SandboxConfig(limits=limits)
    with ExitStack() as stack:
        hostile = stack.enter_context(launch(folder, startup_s=STARTUP_S, sandbox=config))
        others = opponents
        if others is None:
            others = [
                stack.enter_context(launch(arena.opponent(i), startup_s=STARTUP_S, sandbox=config))
                for i in range(seats - 1)
            ]
        order = [*others]
        order.insert(seat, hostile)
        tag = marker.rsplit("-", 1)[1]
        for i, bot in enumerate(order):
            bot.log_to(arena.logs / f"{tag}-seat{i}.log")
        update_targets(
            folder,
            peers=[o.address for o in others],
            pids=[os.getpid(), *(pid for o in others for pid in bot_pids(o))],
        )
        record = arena.records / f"game-{tag}.json"
        seat_bots = [SeatBot(b.name, b.version, b.address) for b in order]
        during = marked(marker)
        result = play_match(NEW_YORK, seat_bots, seed, CLOCK, record_path=record)
        during |= marked(marker)
        death = hostile.death()
        others_death = [o.death() for o in others]
        start = time.monotonic()
        hostile.stop()
        stop_s = time.monotonic() - start
        left = marked(marker)
    log = (arena.logs / f"{tag}-seat{seat}.log").read_text("utf-8", "replace")
    return Played(
        result, seat, log, record, marker, folder, during, death, others_death, stop_s, left
    )


def bot_pids(bot: LaunchedBot) -> list[int]:
    """The host's pids of a running bot: the process we started and everything below it."""
    if bot.process is None:
        return []
    return [bot.process.pid, *bot.processes()]


def gone(marker: str, timeout_s: float = 3.0) -> dict[int, Proc]:
    """The marker's processes still alive after up to ``timeout_s`` (empty: all gone)."""
    deadline = time.monotonic() + timeout_s
    while (left := marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def check_contained(played: Played, *, hostile_may_fault: bool = True) -> None:
    """What every hostile game must show, whatever the attack."""
    result = played.result
    assert result.final.is_over
    others = [i for i in range(len(result.seats)) if i != played.seat]
    for i in others:
        assert played.faults_of(i) == [], f"seat {i} (a random bot) got faults: {result.faults}"
    assert played.others_death == [""] * len(others), "another bot died during the game"
    if not hostile_may_fault:
        assert played.faults_of(played.seat) == [], result.faults
    assert played.record.stat().st_size < RECORD_MAX
    assert played.left == {}, f"still running right after stop(): {played.left}"
    assert gone(played.marker) == {}
    uids = {p.uid for p in played.during.values() if p.uid != os.getuid()}
    assert not with_uids(uids), f"processes of the bot's uid {uids} remain"


# ---------------------------------------------------------------------------------------------
# one test per attack


def test_network_is_unreachable(arena: Arena) -> None:
    with ExitStack() as stack:
        tcp = stack.enter_context(socket.create_server(("0.0.0.0", 0)))
        tcp.setblocking(False)
        port = tcp.getsockname()[1]
        udp = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        udp.bind(("127.0.0.1", 0))
        udp.setblocking(False)
        abstract_name = f"ttr-test-{uuid.uuid4().hex}"
        abstract = stack.enter_context(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
        abstract.bind("\0" + abstract_name)
        abstract.listen()
        abstract.setblocking(False)
        hosts = ["127.0.0.1", *_host_addresses()]
        played = play(
            arena,
            "network",
            {
                "tcp": [[h, port] for h in hosts],
                "udp": [list(udp.getsockname())],
                "abstract": abstract_name,
                "external": [["1.1.1.1", 443], ["8.8.8.8", 53]],
                "dns": "example.com",
            },
        )
        for sock in (tcp, abstract):
            with pytest.raises(BlockingIOError):
                sock.accept()
        with pytest.raises(BlockingIOError):
            udp.recv(100)
    check_contained(played, hostile_may_fault=False)
    tried = played.attacks
    assert tried["list network interfaces"] == "SUCCEEDED ['lo']"
    connects = {k: v for k, v in tried.items() if k.startswith(("connect", "resolve"))}
    assert len(connects) == len(hosts) + 4, tried
    assert all(failed(v) for v in connects.values()), connects


def _host_addresses() -> list[str]:
    """The host's own non-loopback IPv4 addresses (from its routing table's local entries)."""
    found: set[str] = set()
    with contextlib.suppress(OSError):
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
        for prev, line in itertools.pairwise(lines):
            if "/32 host LOCAL" in line:
                address = prev.split()[-1]
                if not address.startswith("127."):
                    found.add(address)
    return sorted(found)


def test_reads_of_other_bots_records_store_and_referee_fail(
    arena: Arena, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTR_TEST_SECRET", arena.secret)
    opponent = arena.opponent(0)
    reads = [
        opponent / "secret.txt",
        opponent / "bot.py",
        arena.records / "old.json",
        arena.store,
        ROOT / "referee" / "match.py",  # the referee's own code is not for bots
        ROOT / "referee" / "hosting" / "sandbox.py",  # nor the jail's
        ROOT / "ttr_arena" / "cli" / "main.py",  # nor the command's
        ROOT / "leaderboard" / "store.py",
    ]
    #: folder -> names in it the bot must not learn (the parents of its own folder and of
    #: the runtime exist in its file system, holding only what leads to those)
    lists = {
        opponent: ["bot.py"],
        arena.records: ["old.json"],
        arena.bots: ["random-0"],
        arena.root: ["records", "store.db"],
        ROOT: ["leaderboard", "tests", ".git"],
    }
    played = play(
        arena,
        "reader",
        {
            "read": [str(p) for p in reads],
            "list": [str(p) for p in lists],
            "referee_pid": os.getpid(),
        },
    )
    check_contained(played, hostile_may_fault=False)
    assert arena.secret not in played.log
    tried = played.attacks
    for path in reads:
        assert failed(tried[f"read {path}"])
    for path, names in lists.items():
        seen = tried[f"list {path}"]
        assert not any(repr(n) in seen for n in names), seen
    for what in ("cmdline", "environ", "root"):
        verb = "list" if what == "root" else "read"
        assert failed(tried[f"{verb} /proc/{os.getpid()}/{what}"])
    assert failed(tried["find --seed in /proc/*/cmdline"])
    assert failed(tried["read /etc/shadow"])
    assert "PYTEST_CURRENT_TEST" not in tried["own environment"]
    assert int(tried["count visible processes"].split()[1]) <= MAX_VISIBLE


def test_writes_outside_scratch_fail_and_scratch_is_bounded(arena: Arena) -> None:
    opponent = arena.opponent(0)
    #: paths the bot cannot even see in the sandbox, or sees read-only
    creates = [
        opponent / "pwned.txt",
        arena.records / "forged.json",
        arena.root / "pwned.txt",
        ROOT / "sdk" / f"pwned_{uuid.uuid4().hex[:8]}.py",
        Path(sysconfig.get_paths()["purelib"]) / f"pwned_{uuid.uuid4().hex[:8]}.pth",
    ]
    #: the host's /tmp: the bot's /tmp is its scratch, so this lands there, not on the host
    host_tmp = Path("/tmp") / f"ttr-hostile-{uuid.uuid4().hex[:8]}.txt"
    appends = [opponent / "bot.py", arena.records / "old.json", arena.store]
    before = arena.snapshot()
    try:
        played = play(
            arena,
            "writer",
            {
                "create": [str(p) for p in [*creates, host_tmp]],
                "append": [str(p) for p in appends],
                "fill_mb": 3 * LIMITS.scratch_mb,
            },
        )
        assert [p for p in [*creates, host_tmp] if p.exists()] == []
    finally:
        for p in [*creates[-2:], host_tmp]:
            p.unlink(missing_ok=True)
    check_contained(played, hostile_may_fault=False)
    after = arena.snapshot()
    assert {k for k in before if after.get(k) != before[k]} == set()
    own = str(played.folder.relative_to(arena.root))
    assert set(after) - set(before) == {own, *(f"{own}/{f}" for f in BOT_FILES)}
    assert (played.folder / "bot.py").read_bytes() == (HOSTILE / "writer" / "bot.py").read_bytes()
    tried = played.attacks
    own_inside = Path(FOLDER_INSIDE)  # where the jail shows the bot its own folder
    for path in [own_inside / "pwned.txt", *creates]:
        assert failed(tried[f"create {path}"])
    for path in [own_inside / "bot.py", *appends]:
        assert failed(tried[f"append {path}"])
    assert tried["scratch /tmp"].startswith("SUCCEEDED")
    assert tried["scratch $HOME=/tmp"].startswith("SUCCEEDED")
    fill = tried[f"fill /tmp with {3 * LIMITS.scratch_mb} MB"]
    stopped = re.match(r"stopped at (\d+) MB", fill)
    assert stopped is not None, fill
    assert int(stopped.group(1)) <= LIMITS.scratch_mb
    # the socket's folder, the only other writable path, holds the socket and next to nothing
    fill = tried[f"fill /run/ttr with {3 * LIMITS.scratch_mb} MB"]
    assert fill.startswith("stopped at 0 MB"), fill


#: what a hostile bot's folder holds besides targets.json
BOT_FILES = ("bot.py", "bot.toml", "_common.py")


def test_setsid_daemons_die_with_the_bot(arena: Arena) -> None:
    played = play(arena, "setsid_escape")
    check_contained(played, hostile_may_fault=False)
    tried = played.attacks
    assert tried["escape by setsid"].startswith("SUCCEEDED")
    assert tried["escape by setpgid"].startswith("SUCCEEDED")
    for how in ("setsid", "setpgid"):
        daemons = [p for p in played.during.values() if f"{played.marker}-{how}" in p.cmdline]
        assert len(daemons) == 1, f"the {how} daemon never ran: {played.during}"


def test_fork_flood_is_capped(arena: Arena) -> None:
    played = play(arena, "fork_flood", {"threads": 400, "processes": 400})
    check_contained(played)
    tried = played.attacks
    for what in ("start 400 threads", "start 400 processes"):
        reached = re.match(r"stopped at (\d+)", tried[what])
        assert reached is not None, tried[what]
        assert int(reached.group(1)) < LIMITS.processes
    assert len(played.during) <= LIMITS.processes + 3  # + the jail's own (sh, bwrap)


def test_memory_hog_is_stopped_and_faults_its_own_seat(arena: Arena) -> None:
    played = play(arena, "memory_hog", {"memory_mb": 5000})
    check_contained(played)
    progress = [
        int(m.group(1))
        for m in re.finditer(r"^ATTACK allocate 5000 MB: reached (\d+) MB", played.log, re.M)
    ]
    assert progress, played.log[-2000:]
    assert max(progress) <= LIMITS.memory_mb
    assert "SUCCEEDED" not in played.attacks["allocate 5000 MB"]
    assert played.faults_of(played.seat), "the hog's seat shows no fault"
    assert set(played.faults_of(played.seat)) <= {"crash", "disconnect", "timeout"}
    killed = "memory limit" in played.death
    assert killed or "MemoryError" in played.log, (played.death, played.log[-2000:])


def test_giant_answers_fault_their_seat_and_keep_the_record_small(arena: Arena) -> None:
    played = play(arena, "giant_answers", {"mb": 3})
    check_contained(played)
    kinds = played.faults_of(played.seat)
    assert "rejected" in kinds and "crash" in kinds, played.result.faults
    for fault in played.result.faults:
        assert len(fault.message) < 4096 and len(fault.rule) < 256
    record = json.loads(played.record.read_text())
    assert len(record["faults"]) == len(played.result.faults)


def test_a_play_stream_answered_twice_then_held_silent_costs_only_its_seat(arena: Arena) -> None:
    """A jailed bot misuses its Play stream: a second answer to its first request (read as a
    stale answer to the next), then a request it never answers while holding the stream open.
    Its stale answers are rejected, the silent one times out on the bot's own clock, and its
    seat goes on over Act; nobody else is touched and the game ends."""
    played = play(arena, "stream_abuse", {"mode": "twice_then_silent", "silent_at": 4})
    check_contained(played)
    assert "SUCCEEDED" not in played.log
    assert {"answer the first request twice", "never answer request 4"} <= set(played.attacks)
    mine = [f for f in played.result.faults if f.seat == played.seat]
    assert {f.kind for f in mine} == {"rejected", "timeout"}, mine
    assert {f.rule for f in mine if f.kind == "rejected"} == {"answer.request_id"}
    timeout = next(f for f in mine if f.kind == "timeout")
    assert mine[-1] == timeout  # after it the seat answers over Act, without a fault
    record = json.loads(played.record.read_text())
    assert len(record["actions"]) > timeout.decision + 10


def test_a_flooded_play_stream_is_read_one_answer_per_request(arena: Arena) -> None:
    """A jailed bot floods its Play stream with 60 KB answers nobody asked for (its gRPC server
    accepts thousands of them, hundreds of MB): the referee reads one per request it makes and
    the rest never reach it (about 7 MB of growth measured), so the flood costs the seat its
    decisions and the referee nothing; the game ends."""
    before = _rss_kb()
    played = play(arena, "stream_abuse", {"mode": "flood"})
    check_contained(played)
    assert played.attacks["flood the Play stream"].startswith(
        ("1 ", "10 ", "100 ", "1000 ", "cancelled after ")
    )
    mine = {f.rule for f in played.result.faults if f.seat == played.seat}
    assert mine and mine <= {"answer.request_id", "DEADLINE_EXCEEDED"}, mine
    assert _rss_kb() - before < 64 * 1024  # not the flood's size: one answer at a time


def test_a_flooding_bot_on_a_kept_channel_costs_only_its_seat_game_after_game(
    arena: Arena,
) -> None:
    """A worker keeps its channel to a bot process from one game to the next (BotPool): a
    jailed bot that floods its Play stream in one game leaves nothing on that channel that
    costs the next game more than its own seat's decisions. It starts the next game on the
    same channel, floods again, and its opponent plays both games without a fault."""
    from leaderboard.worker import BotPool

    folder, marker = arena.hostile("stream_abuse", {"mode": "flood"})
    hostile, opponent = str(folder), str(arena.opponent(0))
    paths = [(hostile, 0), (opponent, 0)]
    pool = BotPool(STARTUP_S, SandboxConfig(limits=LIMITS))
    kept = []
    try:
        for seed in (1, 2):
            seats = [pool.seat(hostile, "hostile", "1"), pool.seat(opponent, "random", "1")]
            result = Match(
                NEW_YORK, seats, seed, CLOCK, channels=lambda i: pool.channel(*paths[i])
            ).run()
            pool.drop_failed_channels(paths, result.faults)
            kept.append(pool.channel(hostile))
            assert result.final.is_over
            assert [f for f in result.faults if f.seat == 1] == [], result.faults
            mine = {(f.kind, f.rule) for f in result.faults if f.seat == 0}
            assert mine and mine <= {
                ("rejected", "answer.request_id"),
                ("timeout", "DEADLINE_EXCEEDED"),
            }
        assert kept[0] is kept[1]  # one process, one channel, both games
    finally:
        pool.close()
    assert gone(marker) == {}


def test_other_bots_addresses_cannot_be_found_bound_or_called(arena: Arena) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        played = play(
            arena,
            "bind_address",
            {"scout_s": 3, "tcp_ports": [port], "unix_paths": []},
            seats=3,
            seat=1,
        )
        # the port is still the test's: a connection to it lands here
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            conn, _ = listener.accept()
            conn.close()
    check_contained(played, hostile_may_fault=False)
    tried = played.attacks
    assert not any(k.startswith(("find ", "hijack")) for k in tried), tried
    ends = {k: v for k, v in tried.items() if k.startswith("EndGame on ")}
    assert len(ends) == 2 and all(failed(v) for v in ends.values()), ends
    assert not re.search(rf"(?<!\d){port}(?!\d)", tried["read /proc/net/tcp"])  # whole numbers
    assert "ttr-bot-" not in tried["read /proc/net/unix"]


def test_other_bots_addresses_cannot_be_bound_by_path(arena: Arena) -> None:
    """The hostile bot is told the other bots' socket paths (as the referee sees them) and
    tries to replace them."""
    config = SandboxConfig(limits=LIMITS)
    with ExitStack() as stack:
        others = [
            stack.enter_context(launch(arena.opponent(i), startup_s=STARTUP_S, sandbox=config))
            for i in range(2)
        ]
        paths = [o.address.removeprefix("unix:") for o in others]
        played = play(arena, "bind_address", {"scout_s": 0, "unix_paths": paths}, opponents=others)
        assert all(Path(p).is_socket() for p in paths)
    check_contained(played, hostile_may_fault=False)
    for path in paths:
        assert failed(played.attacks[f"bind unix {path}"])


def test_signals_reach_only_the_bots_own_processes(arena: Arena) -> None:
    played = play(arena, "signaller", seats=3, seat=2)
    check_contained(played)
    tried = played.attacks
    assert not any("NOT SENT" in v for v in tried.values()), "the bot shared our PID namespace"
    assert "kill -1" in tried
    named = [k for k in tried if k.startswith("kill named pid")]
    assert len(named) >= 3, tried  # the referee and both other bots


def test_a_bot_that_ignores_sigterm_is_still_stopped(arena: Arena) -> None:
    played = play(arena, "ignore_sigterm")
    check_contained(played, hostile_may_fault=False)
    assert played.attacks["ignore SIGTERM, SIGINT, SIGHUP"].startswith("SUCCEEDED")
    assert played.stop_s < 5.0


def test_log_flood_is_capped(arena: Arena) -> None:
    played = play(arena, "log_flood", {"flood_mb": 250})
    check_contained(played)
    path = next(arena.logs.glob(f"{played.marker.rsplit('-', 1)[1]}-seat0.log"))
    assert path.stat().st_size <= LIMITS.log_kb * 1024 + 200
    assert "ATTACK write 250 MB to stdout and stderr: starting" in played.log[:4096]
    note = re.search(r"\[ttr: log truncated: (\d+) more bytes dropped", played.log)
    assert note is not None and played.log.rstrip().endswith("]")
    assert int(note.group(1)) >= 100 << 20  # it wrote at least 100 MB before the game ended


# ---------------------------------------------------------------------------------------------
# through the command line


def ttr_play(
    arena: Arena, bots: list[Path], *extra: str, start: Sequence[str] = ()
) -> tuple[dict[str, Any], Path]:
    """``ttr play`` of ``bots`` on New York with the arena's clocks and limits, in a process
    of its own (``start``: what runs it instead of ``python -m ttr_arena.cli``, given the
    command's arguments); its JSON summary and its logs folder."""
    record = arena.records / f"cli-{uuid.uuid4().hex[:8]}.json"
    logs = arena.logs / record.stem
    argv = [
        *(start or (sys.executable, "-m", "ttr_arena.cli")),
        "play",
        *map(str, bots),
        "--variant",
        "newyork",
        "--move-ms",
        str(CLOCK.move_ms),
        "--bank-ms",
        str(CLOCK.bank_ms),
        "--record",
        str(record),
        "--logs",
        str(logs),
        "--memory-mb",
        str(LIMITS.memory_mb),
        "--max-processes",
        str(LIMITS.processes),
        "--log-kb",
        str(LIMITS.log_kb),
        "--scratch-mb",
        str(LIMITS.scratch_mb),
        "--json",
        *extra,
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), logs


def test_cli_reader_cannot_see_the_seed(arena: Arena) -> None:
    folder, marker = arena.hostile("reader", {"read": [str(arena.records / "old.json")]})
    summary, logs = ttr_play(arena, [folder, arena.opponent(0)], "--seed", "424242")
    assert [p["faults"] for p in summary["players"]] == [0, 0]
    [log_file] = [p for p in logs.iterdir() if p.name.startswith("seat0")]
    log = log_file.read_text()
    tried = attacks(log)
    assert failed(tried["find --seed in /proc/*/cmdline"])
    assert "424242" not in log and arena.secret not in log
    assert failed(tried[f"read {arena.records / 'old.json'}"])
    assert gone(marker) == {}


def test_cli_log_flood_is_capped_per_seat(arena: Arena) -> None:
    folder, marker = arena.hostile("log_flood", {"flood_mb": 200})
    summary, logs = ttr_play(arena, [arena.opponent(0), folder], "--seed", "7")
    assert summary["players"][[p["seat"] for p in summary["players"]].index(0)]["faults"] == 0
    files = sorted(logs.iterdir())
    assert [p.name.split("-")[0] for p in files] == ["seat0", "seat1"]
    flood = files[1].read_text()
    assert files[1].stat().st_size <= LIMITS.log_kb * 1024 + 200
    assert "[ttr: log truncated:" in flood
    # the record keeps its bounded share of the flood, then says how much more there was
    record = json.loads(Path(summary["record"]).read_text())
    said = [line for a in record["actions"] if a["seat"] == 1 for line in a.get("lines", [])]
    said += record.get("end_lines", [[], []])[1]
    assert sum(len(line) for line in said[:-1]) <= RECORD_LINES_CHARS
    assert all(len(line) <= ECHO_LINE_CHARS for line in said)
    note = re.fullmatch(r"\[ttr: (\d+) more line\(s\) only in the log: .*\]", said[-1])
    assert note is not None and int(note.group(1)) > 100_000  # 200 MB of 1 KB lines
    assert gone(marker) == {}


# ---------------------------------------------------------------------------------------------
# the referee stays flat


#: cheap attacks, with the expensive ones (a hog, a flood, a stop that waits out SIGTERM)
#: among them
SOAK: list[tuple[str, dict[str, Any]]] = [
    ("reader", {}),
    ("writer", {"fill_mb": 16}),
    ("network", {"tcp": [["127.0.0.1", 9]], "external": [["1.1.1.1", 443]]}),
    ("setsid_escape", {}),
    ("bind_address", {"scout_s": 0.5}),
    ("signaller", {}),
    ("giant_answers", {"mb": 3}),
    ("stream_abuse", {"mode": "flood"}),
    ("reader", {}),
    ("fork_flood", {"threads": 200, "processes": 200, "keep": 8}),
    ("setsid_escape", {}),
    ("memory_hog", {"memory_mb": 5000}),
    ("network", {"tcp": [["127.0.0.1", 9]]}),
    ("log_flood", {"flood_mb": 50}),
    ("ignore_sigterm", {}),
]


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize(
    ("games", "warmup"),
    [
        pytest.param(len(SOAK), len(SOAK) // 2, id="every-attack-once"),
        pytest.param(
            int(os.environ.get("TTR_HOSTILE_GAMES", "40")),
            len(SOAK),
            id="soak",
            marks=pytest.mark.soak,
        ),
    ],
)
def test_soak_referee_memory_and_files_stay_flat(arena: Arena, games: int, warmup: int) -> None:
    """Every attack of SOAK played once in the default suite (its second half measured
    against its first); 40 games (``TTR_HOSTILE_GAMES``) with ``TTR_SOAK=1``, measured
    after a first round of every attack."""
    assert games > warmup
    config = SandboxConfig(limits=LIMITS)
    marks: dict[str, tuple[int, int]] = {}
    with launch(arena.opponent(0), startup_s=STARTUP_S, sandbox=config) as opponent:
        for game in range(games):
            name, targets = SOAK[game % len(SOAK)]
            played = play(arena, name, targets, seat=game % 2, seed=game, opponents=[opponent])
            assert played.result.final.is_over
            assert played.faults_of(1 - played.seat) == [], (name, played.result.faults)
            assert opponent.death() == ""
            assert gone(played.marker) == {}
            for path in (played.record, *arena.logs.iterdir()):
                path.unlink()
            if game + 1 in (warmup, games):
                gc.collect()
                marks["warm" if game + 1 == warmup else "end"] = (_rss_kb(), _fds())
    # The wire encoders' memos (referee/games/common/memo.py) grow by some 20-50 KB a game until
    # they reach their bound: most of the growth measured here.
    (rss_warm, fds_warm), (rss_end, fds_end) = marks["warm"], marks["end"]
    print(f"games {warmup} -> {games}: RSS {rss_warm} -> {rss_end} kB, fds {fds_warm} -> {fds_end}")
    assert abs(fds_end - fds_warm) <= 2, (fds_warm, fds_end)
    assert rss_end - rss_warm < 30 * 1024, (rss_warm, rss_end)
