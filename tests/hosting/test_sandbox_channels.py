"""No channel between jails (issue 34): every kernel object two jails could both touch, tried.

For each item of docs/security.md's inventory ("What two jails share"), a sender and a
receiver (``tests/hostile_bots/channels/probe.py``) try to pass a random 64-bit secret
through it. Unjailed (the control, what ``--no-sandbox`` runs) the receiver reads the secret
exactly, so each test can fail; jailed, it gets no more bits right than a guess. Both jails
are real (``referee.hosting.sandbox.prepare``), started as the launcher starts a bot, and run
at once as two seats' bots of one game do, in two ways: two bots whose folders differ but who
read one shared path (the runtime, an organiser's ``--read-only`` folder), and two processes
of one bot (one folder), as a tournament's rotations of one deal are.

The secret has as many ones as zeros, so a receiver that learns nothing and answers a
constant gets exactly 32 bits of 64 right, and one that guesses at random gets 49 or more
about once in 50,000 runs; the jailed receiver must stay at 48 or under, and most answer
``refused`` outright.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.hosting import sandbox
from referee.hosting.sandbox import JAIL_ENV, Limits, SandboxConfig, unavailable_reason

ROOT = Path(__file__).resolve().parents[2]
PROBE_DIR = ROOT / "tests" / "hostile_bots" / "channels"
probe_mod = pytest.importorskip("tests.hostile_bots.channels.probe")
BITS = probe_mod.BITS
#: the most bits a jailed receiver may get right (a guess gets 32; 49+ is 1 in 50,000)
CHANCE_MAX = 48
LIMITS = Limits(memory_mb=512, processes=64, scratch_mb=8)
TIMEOUT_S = 30


@pytest.fixture(autouse=True)
def sandbox_available() -> None:
    reason = unavailable_reason()
    if reason is not None:
        pytest.fail(f"the bot sandbox cannot run on this machine: {reason}")


class Side:
    """One probe process, jailed or not, and its line protocol."""

    def __init__(
        self, channel: str, role: str, folder: Path, shared: Path, jailed: bool, native: bool
    ):
        program = ["./probe"] if native else [sys.executable, "probe.py"]
        command = [*program, channel, role, str(shared)]
        self.jail: sandbox.Jail | None = None
        if jailed:
            config = SandboxConfig(limits=LIMITS, read_only=(str(shared),))
            self.jail = sandbox.prepare(command, folder, config, dict(JAIL_ENV))
            self.proc = self.jail.popen(
                env=dict(JAIL_ENV),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        else:
            self.proc = subprocess.Popen(
                command,
                cwd=folder,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        self.first = self.line()

    def line(self) -> str:
        assert self.proc.stdout is not None
        out = self.proc.stdout.readline().decode().strip()
        if not out:
            self.proc.kill()
            err = self.proc.stderr.read().decode() if self.proc.stderr else ""
            raise AssertionError(f"the probe said nothing: {err[-2000:]}")
        return out

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        return self.line()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        if self.jail is not None:
            self.jail.cleanup()


@contextlib.contextmanager
def pair(
    channel: str, tmp: Path, jailed: bool, one_folder: bool, native: bool = False
) -> Iterator[tuple[Side, Side]]:
    """A receiver (started first: it watches before anything is sent) and a sender. Their
    folders are copies of the probe's, or one folder for both; ``tmp/shared`` is what the
    channels' files are in, readable by both (and, for one folder, the folder itself).
    ``native``: the C probe, compiled into each folder."""
    folders = [tmp / "bot-a", tmp / "bot-b"]
    for f in folders[: 1 if one_folder else 2]:
        shutil.copytree(PROBE_DIR, f, ignore=shutil.ignore_patterns("__pycache__"))
        if native:
            compiler = shutil.which("cc")
            if compiler is None:
                message = "no C compiler (cc) for the native probe"
                if os.environ.get("CI"):
                    pytest.fail(f"{message} (CI is set, so this is a failure, not a skip)")
                pytest.skip(f"{message}: run tools/ensure_toolchains.sh")
            build = [compiler, "-O1", "-o", str(f / "probe"), str(f / "probe.c")]
            subprocess.run(build, check=True, capture_output=True, timeout=TIMEOUT_S)
    if one_folder:
        folders[1] = folders[0]
        shared = folders[0] / "shared"
    else:
        shared = tmp / "shared"
    probe_mod.fill(shared)
    for p in [tmp, *folders, *shared.rglob("*"), shared]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    sides: list[Side] = []
    try:
        sides.append(Side(channel, "recv", folders[0], shared, jailed, native))
        sides.append(Side(channel, "send", folders[1], shared, jailed, native))
        yield sides[0], sides[1]
    finally:
        for side in reversed(sides):
            side.close()


def passes(
    channel: str, tmp: Path, jailed: bool, one_folder: bool = False, native: bool = False
) -> tuple[int, str]:
    """Bits of a random secret the receiver got right, and what it said last."""
    # as many ones as zeros: a receiver that learns nothing (refused, or reading a stand-in
    # that never moves) answers a constant and gets exactly half right
    secret = [1] * (BITS // 2) + [0] * (BITS // 2)
    secrets.SystemRandom().shuffle(secret)
    with pair(channel, tmp, jailed, one_folder, native) as (recv, send):
        if channel in probe_mod.SERIAL:
            got = []
            last = recv.first
            for bit in secret:
                send.ask("bit 0")
                recv.ask("base")
                said = send.ask(f"bit {bit}")
                last = recv.ask("read")
                got.append(int(last.split()[1]) if last.startswith("bit ") else 0)
                if said.startswith("refused") and last.startswith("refused"):
                    break
            got += [0] * (BITS - len(got))
        else:
            send.ask("bits " + "".join(map(str, secret)))
            last = recv.ask("read")
            got = [int(c) for c in last.split()[1]] if last.startswith("bits ") else [0] * BITS
    return sum(a == b for a, b in zip(got, secret, strict=True)), last


#: every channel of the inventory; the control must carry each exactly (the page cache's
#: may lose a page the kernel brought in on its own)
PARALLEL = sorted(probe_mod.PARALLEL)
SERIAL = sorted(probe_mod.SERIAL)


@pytest.mark.parametrize(
    "channel",
    # a machine-wide figure is moved by whatever else runs: `make test` runs these controls
    # alone, after the parallel phase (the ``serial`` marker), where only this test moves it
    PARALLEL + [pytest.param(c, marks=pytest.mark.serial) for c in SERIAL],
)
def test_the_channel_carries_the_secret_unjailed(channel: str, tmp_path: Path) -> None:
    right, last = passes(channel, tmp_path, jailed=False)
    # a machine-wide figure moves with whatever else runs (a loaded machine starts threads
    # and opens files of its own), and the kernel may bring a page in by itself: those
    # controls may miss a few rounds, and 56 of 64 is still far beyond chance (1 in 10^10)
    exact = channel not in ("mincore", "cachestat", *SERIAL)
    assert right >= (BITS if exact else 56), (channel, right, last)


@pytest.mark.parametrize("channel", PARALLEL + SERIAL)
def test_two_jails_share_nothing(channel: str, tmp_path: Path) -> None:
    right, last = passes(channel, tmp_path, jailed=True)
    assert right <= CHANCE_MAX, (channel, right, last)


@pytest.mark.parametrize("channel", PARALLEL)
def test_two_processes_of_one_bot_share_nothing(channel: str, tmp_path: Path) -> None:
    right, last = passes(channel, tmp_path, jailed=True, one_folder=True)
    assert right <= CHANCE_MAX, (channel, right, last)


#: what probe.c knows: the channels of the issue's attacks, made by a native program (a Go or
#: C++ bot's runtime is its own code making the calls, with no interpreter between)
NATIVE = ["posix-lock", "flock", "inotify"]


@pytest.mark.parametrize("jailed", [False, True], ids=["unjailed", "jailed"])
@pytest.mark.parametrize("channel", NATIVE)
def test_a_native_pair_shares_nothing(channel: str, jailed: bool, tmp_path: Path) -> None:
    right, last = passes(channel, tmp_path, jailed=jailed, native=True)
    if jailed:
        assert right <= CHANCE_MAX and last.startswith("refused"), (channel, right, last)
    else:
        assert right == BITS, (channel, last)


SQLITE = """
import sqlite3
for target, uri in ((":memory:", False), ("file:/tmp/scratch.db?nolock=1", True)):
    db = sqlite3.connect(target, uri=uri)
    db.execute("create table t (x)")
    db.execute("insert into t values (41)")
    db.commit()
    print(target, db.execute("select x + 1 from t").fetchone()[0])
try:
    sqlite3.connect("/tmp/locking.db").execute("create table t (x)")
    print("locking file: ok")
except sqlite3.OperationalError as e:
    print("locking file:", e)
"""


def test_a_jailed_python_bot_keeps_sqlite_in_memory_and_without_locks(tmp_path: Path) -> None:
    """Locks are refused in a jail's own ``/tmp`` too (the filter cannot tell a private inode
    from a shared one): SQLite in memory takes none and works, a file database works with
    ``nolock=1``, and one that locks is told so (docs/bot-api.md)."""
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "db.py").write_text(SQLITE)
    jail = sandbox.prepare([sys.executable, "db.py"], folder, SandboxConfig(), dict(JAIL_ENV))
    try:
        proc = jail.popen(env=dict(JAIL_ENV), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = proc.communicate(timeout=TIMEOUT_S)[0].decode()
    finally:
        jail.cleanup()
    assert ":memory: 42" in out and "file:/tmp/scratch.db?nolock=1 42" in out, out
    assert "locking file: database is locked" in out, out


EVICT = """
import os, sys
for name in sys.argv[1:]:
    fd = os.open(name, os.O_RDONLY)
    os.read(fd, 4096)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
print("done")
"""


@pytest.mark.parametrize("jailed", [False, True], ids=["unjailed", "jailed"])
def test_a_jail_cannot_drop_a_shared_page_from_the_cache(tmp_path: Path, jailed: bool) -> None:
    """A page once read stays cached, so the page cache's timing carries at most a bit per
    page of the runtime, once; a bot that could drop pages (``posix_fadvise`` DONTNEED
    needs only read access) could reuse them without end. The host reads residency with
    ``mincore`` (it owns the files); unjailed the drop works, so the test can fail."""
    shared = tmp_path / "shared"
    probe_mod.fill(shared)
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "evict.py").write_text(EVICT)
    files = [str(f) for f in sorted(shared.glob("bit*"))]
    command = [sys.executable, "evict.py", *files]
    if jailed:
        config = SandboxConfig(limits=LIMITS, read_only=(str(shared),))
        jail = sandbox.prepare(command, folder, config, dict(JAIL_ENV))
        try:
            proc = jail.popen(env=dict(JAIL_ENV), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            out = proc.communicate(timeout=TIMEOUT_S)[0].decode()
        finally:
            jail.cleanup()
    else:
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
        out = done.stdout + done.stderr
    assert "done" in out, out
    cached = sum(probe_mod.Mincore().recv(shared))
    assert cached == (BITS if jailed else 0), (cached, out)
