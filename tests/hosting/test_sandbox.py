"""The sandbox's own machinery: the CLI around it, what it leaves behind, what a bot sees of
its jail. The attacks themselves are in test_sandbox_conformance.py."""

from __future__ import annotations

import ast
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from referee.hosting import sandbox
from referee.hosting.launcher import launch
from referee.hosting.sandbox import Limits, SandboxConfig
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]

PROBE_BOT = """
    import os, sys
    from sdk import run
    from sdk.bot import Bot

    seen = {
        "pid1": open("/proc/1/cmdline", "rb").read().replace(b"\\0", b" ").decode(),
        "env": sorted(os.environ),
        "uid": os.getuid(),
        "pids": sorted(p for p in os.listdir("/proc") if p.isdigit()),
        "cwd_writable": os.access(".", os.W_OK),
        "cwd": os.getcwd(),
        "pwd": os.environ.get("PWD"),
    }
    print("SEEN", repr(seen), file=sys.stderr, flush=True)

    class B(Bot):
        def choose(self, view, legal):
            return legal[0]

    run(B())
"""


@pytest.fixture(autouse=True)
def sandbox_available() -> None:
    reason = sandbox.unavailable_reason()
    if reason is not None:
        pytest.fail(f"the bot sandbox cannot run on this machine: {reason}")


def _bot(folder: Path, script: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(textwrap.dedent(script))
    (folder / "bot.toml").write_text(
        'name = "probe"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n'
    )
    return folder


def _seen(text: str) -> dict[str, object]:
    line = next(ln for ln in text.splitlines() if ln.startswith("SEEN "))
    value: dict[str, object] = ast.literal_eval(line[5:])
    return value


def test_a_bot_sees_no_host_path_in_its_jail_no_referee_env_and_its_own_uid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTR_SECRET_OF_THE_REFEREE", "424242")
    folder = _bot(tmp_path / "probe", PROBE_BOT)
    with launch(folder) as bot:
        seen = _seen(bot.stderr_tail(lines=5))
        jail = bot._jail
        assert jail is not None
    # bwrap's options (host paths of the socket folder, the binds, the limits) came through
    # a pipe: its command line is just "bwrap --args N -- setpriv ... prlimit ... python bot.py"
    pid1 = str(seen["pid1"])
    assert "--args" in pid1 and "--ro-bind" not in pid1 and str(jail.home) not in pid1
    assert "TTR_SECRET_OF_THE_REFEREE" not in seen["env"]  # type: ignore[operator]
    assert "TTR_BOT_ADDRESS" in seen["env"]  # type: ignore[operator]
    assert seen["cwd_writable"] is False
    # its folder is /bot: its working folder and environment name no host path (its mounts
    # still do: docs/security.md, "What the organiser must still do")
    assert seen["cwd"] == "/bot" and seen["pwd"] == "/bot", seen
    if os.geteuid() == 0:
        assert seen["uid"] == jail.uid and jail.uid is not None and jail.uid >= 3_000_000_000
    assert len(seen["pids"]) <= 3  # type: ignore[arg-type]


def test_what_a_killed_referee_leaves_is_swept_by_the_next_one(tmp_path: Path) -> None:
    """A referee killed with SIGKILL takes its bots with it (--die-with-parent) but cannot
    remove its socket folder and cgroup; the next referee's first bot sweeps them, and never a
    folder still in use."""
    code = textwrap.dedent(
        f"""
        import sys, time
        from referee.hosting.launcher import launch
        bot = launch({str(ROOT / "sample_bots" / "random")!r})
        bot.start()
        print(bot._jail.home, flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    home = Path(child.stdout.readline().strip())
    assert home.is_dir()
    cgroups = sandbox._cgroup_dirs_named(home.name)
    with launch(ROOT / "sample_bots" / "random") as alive:  # a folder in use, not to be swept
        in_use = alive._jail.home if alive._jail else None
        child.send_signal(signal.SIGKILL)
        child.wait()
        deadline = time.monotonic() + 5
        while any((d / "cgroup.procs").read_text().split() for d in cgroups if d.exists()):
            assert time.monotonic() < deadline, "the dead referee's bot outlived it"
            time.sleep(0.05)
        assert home.is_dir()  # left behind
        sandbox.sweep_stale.cache_clear()
        assert sandbox.sweep_stale() >= 1
        assert not home.exists()
        assert not any(d.exists() for d in cgroups)
        assert in_use is not None and in_use.is_dir()


def test_a_sweep_between_making_a_home_and_locking_it_leaves_it_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The race that lost a resumed tournament's game (``FileNotFoundError: .../sock``): a
    worker's first sweep ran while another process had made a bot's home but not yet locked
    it. Here the sweep is made to run at exactly that moment, every time."""
    real_flock = fcntl.flock
    swept: list[int] = []

    def flock_after_a_sweep(fd: int, how: int) -> None:
        if how == fcntl.LOCK_EX and not swept:
            swept.append(sandbox.sweep_stale.__wrapped__())  # another process's sweep
        real_flock(fd, how)

    monkeypatch.setattr(fcntl, "flock", flock_after_a_sweep)
    home, lock = sandbox._make_home()
    try:
        assert swept, "the sweep did not run"
        assert home.is_dir() and (home / ".lock").exists()
        assert home.name.startswith("ttr-bot-")
        monkeypatch.setattr(fcntl, "flock", real_flock)
        assert sandbox.sweep_stale.__wrapped__() >= 0 and home.is_dir()  # locked: kept
    finally:
        os.close(lock)
        shutil.rmtree(home, ignore_errors=True)


def test_ttr_sandbox_says_how_each_defence_is_enforced_here(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli_main(["sandbox", "--memory-mb", "300", "--cpus", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "namespaces" in out and "memory 300 MB" in out
    assert "logs capped at 1024 KB per game" in out
    assert "socket folder a 64 KiB tmpfs" in out and "RLIMIT_FSIZE" in out
    assert "seccomp: 39 syscalls refused (keyrings: add_key, keyctl, request_key;" in out
    assert "shared kernel objects: 16 syscalls and 12 fcntl commands refused" in out
    assert "builds: a uid of its own, no network (--online-builds to allow)" in out


def test_no_sandbox_warns_and_bad_limits_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bots = [str(ROOT / "sample_bots" / "random")] * 2
    with pytest.raises(SystemExit) as e:
        cli_main(["play", *bots, "--max-processes", "4", "--record", str(tmp_path / "r.json")])
    assert e.value.code == 2
    assert "processes=4 is too low" in capsys.readouterr().err
    args = ["play", *bots, "--variant", "newyork", "--no-sandbox"]
    assert cli_main([*args, "--record", str(tmp_path / "r.json")]) == 0
    assert "WARNING: --no-sandbox" in capsys.readouterr().err


def test_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="memory_mb"):
        Limits(memory_mb=0)
    with pytest.raises(ValueError, match="cpus"):
        Limits(cpus=0)
    assert SandboxConfig().enabled and Limits().processes >= 16


def test_a_machine_without_bubblewrap_gets_a_reason_and_the_way_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "bwrap_binary", lambda: None)
    sandbox.unavailable_reason.cache_clear()
    try:
        reason = sandbox.unavailable_reason()
        assert reason is not None and "bubblewrap is not installed" in reason
        with pytest.raises(sandbox.SandboxError, match="--no-sandbox"):
            sandbox.require_available()
    finally:
        sandbox.unavailable_reason.cache_clear()


REMEMBERING_BOT = """
    import sys
    from sdk import run
    from sdk.bot import Bot

    SEEN = set()

    class Remembering(Bot):
        '''Recognises a deal by the face-up row at its first decision of a game (the row
        is the same in every rotation then; the ticket deck is not, since the seat
        before may have returned tickets under it).'''

        def on_start(self, game):
            game.state = None

        def choose(self, view, legal):
            if self.game.state is None:
                self.game.state = sig = tuple(view.face_up)
                print("REMEMBERED" if sig in SEEN else "NEW DEAL", file=sys.stderr, flush=True)
                SEEN.add(sig)
            return 0

    run(Remembering())
"""


def _bots_still_running() -> list[str]:
    """Command lines of this process's live descendants that run a ``bot.py`` (a jailed
    bot's working folder is not visible from outside its mount namespace, so parentage is
    what ties a process to this test)."""
    parents: dict[int, int] = {}
    cmdlines: dict[int, str] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] == "Z":
            continue
        parents[int(proc.name)] = int(fields[1])
        cmdlines[int(proc.name)] = cmdline

    def descends(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [c for pid, c in cmdlines.items() if "bot.py" in c and descends(pid)]


@pytest.mark.parametrize("mode", ["sandbox", "sandbox-reuse-bots", "no-sandbox"])
def test_a_bot_cannot_remember_a_deal_across_the_rotations_that_replay_it(
    tmp_path: Path, mode: str
) -> None:
    """Duplicate scheduling deals a combination's games alike in every rotation; sandboxed,
    a bot process is replaced before a deal it has played, so it has nothing to remember with.
    Unsandboxed (trusted bots), or sandboxed with ``--reuse-bots``, the process is kept, and
    the same bot does remember: the check can see the leak it closes. Whatever the mode, no
    bot process (spares included) outlives the run."""
    from leaderboard.runner import run
    from leaderboard.store import Store
    from referee.hosting.sandbox import NO_SANDBOX

    bot = _bot(tmp_path / "remembering", REMEMBERING_BOT)
    records = tmp_path / "records"
    with Store(tmp_path / "t.db") as store:
        outcome = run(
            store,
            bot_dirs=[str(bot), str(ROOT / "sample_bots" / "random")],
            variant="newyork",
            players=2,
            rounds=1,
            workers=1,
            records=str(records),
            move_ms=500,
            bank_ms=5000,
            sandbox={
                "sandbox": SandboxConfig(),
                "sandbox-reuse-bots": SandboxConfig(fresh_per_deal=False),
                "no-sandbox": NO_SANDBOX,
            }[mode],
        )
    assert outcome.complete and outcome.total == 2  # one deal, two rotations
    logs = [p.read_text() for p in records.glob("logs/t*/seat*-probe.log")]
    assert len(logs) == 2 and all(log.strip() for log in logs)
    remembered = sum("REMEMBERED" in log for log in logs)
    assert remembered == (0 if mode == "sandbox" else 1)
    assert _bots_still_running() == []


def test_a_sandboxed_pool_gives_a_replayed_deal_another_process_and_leaves_none_behind() -> None:
    """A deal the bot's process has seen goes to another of its processes (a slot); a new
    deal goes back to the first slot, and a deal both have seen to a third. Nothing starts on
    speculation: ``prestart`` spawns exactly the processes a game's seats will need (a new slot,
    a dead one's restart), side by side, and ``seat`` takes them. A slot whose process died
    starts afresh, having seen nothing. Closing the pool stops every process."""
    from leaderboard.worker import BotPool

    pool = BotPool(startup_s=20.0, sandbox=SandboxConfig())
    try:
        random_bot = str(ROOT / "sample_bots" / "random")
        copies = [(random_bot, 0), (random_bot, 1)]
        pool.prestart(copies, deal=7)
        assert len(pool.spares) == 2  # two seats, two processes on their way at once
        first = pool.seat(random_bot, "random", "1", deal=7)
        assert not first.down and len(pool.spares) == 1
        assert pool.seat(random_bot, "random", "1", copy=1, deal=7).address != first.address
        assert not pool.spares
        pool.prestart(copies, deal=8)
        assert not pool.spares  # both have a process that has not seen deal 8
        again = pool.seat(random_bot, "random", "1", deal=8)  # same process
        assert again.address == first.address
        pool.prestart([(random_bot, 0)], deal=7)
        assert len(pool.spares) == 1  # deal 7 again: a second slot is needed
        repeat = pool.seat(random_bot, "random", "1", deal=7)  # another
        assert not repeat.down and repeat.address != first.address and not pool.spares
        assert pool.seat(random_bot, "random", "1", deal=8).address == repeat.address
        assert pool.seat(random_bot, "random", "1", deal=9).address == first.address
        third = pool.seat(random_bot, "random", "1", deal=7)  # not prestarted: started now
        assert third.address not in (first.address, repeat.address)
        assert not pool.spares
        assert len(_bots_still_running()) >= 4
        # The first slot's process dies: its replacement has seen nothing, so it plays 7.
        crashed = pool.bots[(random_bot, 0, 0)].process
        assert crashed is not None
        os.killpg(crashed.pid, signal.SIGKILL)
        crashed.wait(10)
        pool.prestart([(random_bot, 0)], deal=7)
        assert len(pool.spares) == 1  # the dead slot's restart
        restarted = pool.seat(random_bot, "random", "1", deal=7)
        assert not restarted.down and restarted.address not in (
            first.address,
            repeat.address,
            third.address,
        )
        assert pool.deals[(random_bot, 0, 0)] == {7}
        pool.prestart([(random_bot, 0)], deal=10)
        assert not pool.spares  # slot 0 is alive again and has not seen deal 10
    finally:
        pool.close()
    assert _bots_still_running() == []


WATCHED_BOT = """
    import secrets, sys
    from sdk import run
    from sdk.bot import Bot

    PROCESS = secrets.token_hex(8)  # pids repeat across jails: each has a PID namespace

    class Watched(Bot):
        def on_start(self, game):
            print("PROCESS", PROCESS, file=sys.stderr, flush=True)

        def choose(self, view, legal):
            return 0

    run(Watched())
"""


def test_no_bot_process_plays_a_deal_twice_and_none_restarts_per_deal(tmp_path: Path) -> None:
    """A sandboxed tournament (3 players, 2 rounds: each deal in 3 rotations) with bots that
    say which process they are in every game: no process plays a deal twice, and each bot
    has at most one process per rotation on its worker (before issue 25 a bot was restarted
    before every deal it had played: 5 processes each here)."""
    import re

    from leaderboard.runner import run
    from leaderboard.store import Store

    bots = []
    for name in ("w-a", "w-b", "w-c"):
        folder = _bot(tmp_path / name, WATCHED_BOT)
        toml = (folder / "bot.toml").read_text()
        (folder / "bot.toml").write_text(toml.replace('name = "probe"', f'name = "{name}"'))
        bots.append(str(folder))
    records = tmp_path / "records"
    with Store(tmp_path / "t.db") as store:
        outcome = run(
            store,
            bot_dirs=bots,
            variant="newyork",
            players=3,
            rounds=2,
            workers=1,
            records=str(records),
            move_ms=500,
            bank_ms=5000,
            sandbox=SandboxConfig(),
        )
        seeds = {g.game_id: g.seed for g in store.games()}
    assert outcome.complete and len(seeds) == 6 and len(set(seeds.values())) == 2
    deals: dict[str, dict[str, list[int]]] = {}  # bot -> process -> the deals it played
    for log in records.glob("logs/t*/seat*.log"):
        [process] = re.findall(r"^PROCESS (\w+)$", log.read_text(), re.M)
        bot = log.stem.split("-", 1)[1]
        deals.setdefault(bot, {}).setdefault(process, []).append(seeds[log.parent.name])
    assert sorted(deals) == ["w-a", "w-b", "w-c"]
    for processes in deals.values():
        assert sum(len(d) for d in processes.values()) == 6
        assert all(len(d) == len(set(d)) for d in processes.values()), processes
        assert len(processes) <= 3, processes  # one per rotation: none restarted per deal
    assert _bots_still_running() == []
