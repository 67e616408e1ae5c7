"""bot.toml build steps run in the bots' jail (referee/hosting/build.py, sandbox.py).

A build is the entrant's code, run by the organiser's launcher (often as root): these builds
are real processes in real bubblewrap jails, written as a hostile entrant would write them.
Skipped where bots cannot be jailed at all (``ttr sandbox`` says why), failed where ``CI``
is set. The starter kits' real builds (make, go, g++, npm ci) run jailed in
tests/hosting/test_starter_kits.py.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import socket
import sys
import uuid
from pathlib import Path

import pytest

from referee.hosting import build, sandbox
from referee.hosting.build import BotBuildError
from referee.hosting.launcher import load_bot_config
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "sample_bots" / "random"
SECRET = "the-organisers-secret-4711"


@pytest.fixture(autouse=True)
def _jail_available() -> None:
    reason = sandbox.unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"bots cannot be sandboxed here: {reason} (CI is set: a failure)")
    pytest.skip(f"bots cannot be sandboxed here: {reason}")


# What a hostile entrant's build tries; each line it prints says what happened.
_PROBE = """\
import os, pathlib, sys
secret, outside, victim = sys.argv[1:4]

def attempt(what, fn):
    try:
        print(what, "OK", fn())
    except Exception as e:
        print(what, "DENIED", type(e).__name__, e)

attempt("read-secret", lambda: pathlib.Path(secret).read_text())
attempt("write-outside", lambda: pathlib.Path(outside).write_text("planted"))
attempt("write-runtime", lambda: pathlib.Path(sys.prefix, "planted").write_text("x"))
attempt("write-usr", lambda: pathlib.Path("/usr/planted").write_text("x"))
cmdlines = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            cmdline = pathlib.Path("/proc", pid, "cmdline").read_bytes()
            cmdlines.append(cmdline.replace(b"\\0", b" ").replace(b"\\n", b" "))
        except OSError:
            pass
print("processes", len(cmdlines), b"\\t".join(cmdlines).decode(errors="replace"))
status = dict(l.split(":", 1) for l in pathlib.Path("/proc/self/status").read_text().splitlines())
print("capeff", status["CapEff"].strip(), "nonewprivs", status["NoNewPrivs"].strip())
cpu = [l for l in pathlib.Path("/proc/self/limits").read_text().splitlines() if "cpu time" in l]
print("cpu-limit", cpu[0].split()[3])
print("uid", os.getuid(), "home", os.environ["HOME"])
try:
    print("beside-folder", sorted(os.listdir(os.path.dirname(secret))))
except OSError as e:
    print("beside-folder", "DENIED", type(e).__name__)
print("where", os.getcwd(), os.environ.get("GOCACHE"), os.environ.get("PWD"))
print("host-paths", sum(os.path.dirname(secret) in t for t in os.environ.values()))
print("netns", os.readlink("/proc/self/ns/net"))
# The launcher writes its stamp here after the build: make it a link to a file outside.
os.symlink(victim, ".ttr-build")
pathlib.Path("out.txt").write_text("built")
"""


def _bot(tmp_path: Path, build_line: str, script: str = _PROBE) -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text(
        'name = "hostile"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n' + build_line + "\n",
        encoding="utf-8",
    )
    (folder / "build.py").write_text(script, encoding="utf-8")
    return folder


def _probe_lines(folder: Path) -> dict[str, str]:
    log = (folder / build.LOG).read_text(encoding="utf-8")
    return {
        line.split(" ", 1)[0]: line.split(" ", 1)[1]
        for line in log.splitlines()
        if " " in line and not line.startswith("$")
    }


def test_a_hostile_build_reaches_nothing_but_its_folder(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    outside = tmp_path / "planted.txt"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    folder = _bot(
        tmp_path, f'build = ["{{python}}", "build.py", "{secret}", "{outside}", "{victim}"]'
    )
    config = load_bot_config(folder)  # the default: sandboxed
    seen = _probe_lines(folder)
    assert seen["read-secret"].startswith("DENIED FileNotFoundError"), seen
    assert SECRET not in (folder / build.LOG).read_text()
    # Outside its folder it writes nowhere: the host's /tmp is a private tmpfs in there, and
    # the runtime and /usr are read-only.
    assert not outside.exists()
    assert (
        seen["write-runtime"].startswith("DENIED OSError") and "Read-only" in seen["write-runtime"]
    )
    assert seen["write-usr"].startswith("DENIED")
    assert not (Path(sys.prefix) / "planted").exists() and not Path("/usr/planted").exists()
    # Its own PID namespace: bwrap (its init) and itself, none of the host's processes.
    count, _, cmdlines = seen["processes"].partition(" ")
    assert int(count) <= 3, seen["processes"]
    assert all("build.py" in c for c in cmdlines.split("\t")), seen["processes"]
    assert seen["capeff"] == "0000000000000000 nonewprivs 1"
    assert int(seen["cpu-limit"]) == build.build_limits(sandbox.Limits()).cpu_s
    uid = int(seen["uid"].split()[0])
    assert uid != 0 and (uid >= 3_000_000_000 if os.geteuid() == 0 else uid == os.geteuid())
    assert seen["uid"].endswith(" home /tmp")
    assert "secret" not in seen["beside-folder"] and "victim" not in seen["beside-folder"]
    # It builds at /bot: its working folder and cache variables name no host path (the
    # organiser's data folder and the bot's id were in both; its mounts still do)
    assert seen["where"] == "/bot /bot/.ttr-cache/go /bot", seen["where"]
    assert seen["host-paths"] == "0", seen
    # No network but a loopback of its own: another network namespace.
    assert seen["netns"] != os.readlink("/proc/self/ns/net")
    # The stamp the build made a link to a file outside: replaced, the file untouched.
    assert victim.read_text() == "precious"
    assert not (folder / build.STAMP).is_symlink()
    assert (folder / "out.txt").read_text() == "built"
    assert build.ensure_built(config) is False  # and the stamp vouches for the build


def test_a_log_swapped_for_a_link_does_not_leak_into_the_error(tmp_path: Path) -> None:
    """A failing build that replaced its log with a link to a file outside its folder: the
    error message (shown to the organiser, stored with the tournament) does not read it."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    script = (
        "import os, sys\n"
        f"os.unlink({build.LOG!r}); os.symlink({str(secret)!r}, {build.LOG!r})\n"
        "sys.exit(3)\n"
    )
    folder = _bot(tmp_path, 'build = ["{python}", "build.py"]', script)
    with pytest.raises(BotBuildError, match="failed with status 3") as caught:
        load_bot_config(folder)
    assert SECRET not in str(caught.value)
    assert secret.read_text() == SECRET


def test_a_good_build_writes_its_folder_and_the_bot_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bot's program exists only once its build made it; then ``ttr play`` (sandboxed)
    builds it, jailed, and plays it against the random sample bot."""
    script = "import shutil\nshutil.copy('bot.src', 'bot.py')\n"
    folder = _bot(tmp_path, 'build = ["{python}", "build.py"]', script)
    (folder / "bot.src").write_text((RANDOM / "bot.py").read_text(), encoding="utf-8")
    record = tmp_path / "game.json"
    code = cli_main(
        ["play", "--json", "--seed", "3", "--record", str(record), str(folder), str(RANDOM)]
    )
    assert code == 0
    out, err = capsys.readouterr()
    assert "ttr: building bot 'hostile'" in err and "in a sandbox as " in err
    assert (folder / "bot.py").is_file()
    players = json.loads(out)["players"]
    assert next(p for p in players if p["seat"] == 0)["faults"] == 0


def test_a_build_past_its_time_is_stopped_with_everything_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"ttr-build-sleeper-{os.getpid()}"
    # A daemon of its own session (so not in the build's process group), its marker in its
    # command line, where /proc shows it to this test.
    script = (
        "import pathlib, subprocess, sys, time\n"
        "sleep = [sys.executable, '-c', 'import time; time.sleep(300)', sys.argv[1]]\n"
        "subprocess.Popen(sleep, start_new_session=True)\n"
        "print('started', flush=True)\n"
        "time.sleep(300)\n"
    )
    folder = _bot(tmp_path, f'build = ["{{python}}", "build.py", "{marker}"]', script)
    monkeypatch.setattr(build, "BUILD_TIMEOUT_S", 5.0)
    with pytest.raises(BotBuildError, match=r"did not finish in 5 s"):
        load_bot_config(folder)
    left = []
    for pid in os.listdir("/proc"):
        try:
            if marker.encode() in Path("/proc", pid, "cmdline").read_bytes():
                left.append(pid)
        except OSError:
            pass
    # it started (a timed-out build's files never reach its folder: only its log says so)
    assert "started" in (folder / build.LOG).read_text() and left == []


def test_without_the_sandbox_the_build_runs_as_before(tmp_path: Path) -> None:
    """``--no-sandbox`` (trusted bots only): the build runs as the launching user, with its
    file system, as it always did."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    script = f"import pathlib\nsecret = pathlib.Path({str(secret)!r}).read_text()\n"
    script += "pathlib.Path('out.txt').write_text(secret)\n"
    folder = _bot(tmp_path, 'build = ["{python}", "build.py"]', script)
    load_bot_config(folder, sandbox.NO_SANDBOX)
    assert (folder / "out.txt").read_text() == SECRET


# ---------------------------------------------------------------------------------------------
# a build that floods its output (issue 21, item 3)


@pytest.mark.parametrize("jailed", [True, False], ids=["sandbox", "no-sandbox"])
def test_a_flooding_build_is_capped_on_disk_in_memory_and_on_the_terminal(
    tmp_path: Path, jailed: bool
) -> None:
    """tests/hostile_bots/build_flood prints an 8 MB line with terminal escapes and 20,000 more
    lines, then fails: the log keeps the bots' --log-kb and says what it dropped, and the error
    (what reaches the organiser's terminal) is a few lines, each bounded and escaped."""
    folder = tmp_path / "build_flood"
    shutil.copytree(ROOT / "tests" / "hostile_bots" / "build_flood", folder)
    config = sandbox.SandboxConfig(
        enabled=jailed, limits=dataclasses.replace(sandbox.Limits(), log_kb=64)
    )
    with pytest.raises(BotBuildError) as e:
        load_bot_config(folder, config)
    message = str(e.value)
    assert "failed with status 3" in message
    assert len(message) < 20_000 and "\x1b" not in message
    assert message.rstrip().endswith("| \\x1b[31mfatal: the last line\\x1b[0m")
    assert all(len(line) <= 1010 for line in message.splitlines())
    log = (folder / ".ttr-build.log").read_bytes()
    assert len(log) < 64 * 1024 + 200
    assert re.search(rb"\[ttr: build log truncated: \d+ more bytes dropped \(limit 64 KB\)\]", log)


def test_a_failing_build_is_left_out_and_the_night_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As a bot that will not start is: the tournament plays the others, and the line that
    leaves it out names its first error and its log (issue 21, item 3)."""
    folder = tmp_path / "broken"
    folder.mkdir()
    script = (
        "import sys; print('compiling bot.cc'); "
        "print('bot.cc:3:9: error: expected \\';\\' before \\'}\\' token'); "
        "print('bot.cc:7:1: error: second error'); sys.exit(2)"
    )
    (folder / "bot.toml").write_text(
        'name = "broken"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n'
        f"build = {json.dumps(['{python}', '-c', script])}\n"
    )
    (folder / "bot.py").write_text("raise SystemExit('never runs')\n")
    db = tmp_path / "night.db"
    greedy = ROOT / "sample_bots" / "greedy"
    args = ["tournament", "run", "--db", str(db), "--players", "2", "--rounds", "1"]
    code = cli_main([*args, str(folder), str(RANDOM), str(greedy)])
    out = capsys.readouterr()
    assert code == 0, out.err
    text = out.out + out.err
    log = folder / ".ttr-build.log"
    assert (
        f"LEFT OUT  broken 1: its build `{{python}} -c {script}` failed with status 2: "
        f"bot.cc:3:9: error: expected ';' before '}}' token (log: {log})"
    ) in text
    assert "2/2 games" in text or "games stored" in text


def test_a_build_cannot_read_the_referees_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every /proc/*/environ a jailed build can read, the jail's PID 1 (bwrap) included, is the
    clean environment bots get, not the referee's (issue 21, item 3)."""
    monkeypatch.setenv("TTR_TEST_REFEREE_SECRET", SECRET)
    script = (
        "import os, pathlib\n"
        "for pid in os.listdir('/proc'):\n"
        "    if pid.isdigit():\n"
        "        try:\n"
        "            env = pathlib.Path('/proc', pid, 'environ').read_bytes()\n"
        "        except OSError as e:\n"
        "            env = repr(e).encode()\n"
        "        print(pid, env.replace(b'\\0', b' ').decode(errors='replace'))\n"
    )
    folder = tmp_path / "envbot"
    folder.mkdir()
    (folder / "probe.py").write_text(script)
    (folder / "bot.toml").write_text(
        'name = "envbot"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n'
        'build = ["{python}", "probe.py"]\n'
    )
    load_bot_config(folder, sandbox.SandboxConfig())
    log = (folder / ".ttr-build.log").read_text()
    assert "\n1 " in log  # it did read PID 1's environment
    assert SECRET not in log and "TTR_TEST_REFEREE_SECRET" not in log


# ---------------------------------------------------------------------------------------------
# tests/hostile_bots/build_escape: the host's network, disk, links and root (issue 21, item 3)

ESCAPE = ROOT / "tests" / "hostile_bots" / "build_escape"


def _escape(tmp_path: Path, **targets: object) -> Path:
    folder = tmp_path / "escape"
    shutil.copytree(ESCAPE, folder)
    (folder / "targets.json").write_text(json.dumps(targets), encoding="utf-8")
    return folder


def _attacks(folder: Path) -> dict[str, str]:
    log = (folder / build.LOG).read_text(encoding="utf-8", errors="replace")
    return {m.group(1): m.group(2) for m in re.finditer(r"^ATTACK (.+?): (.*)$", log, re.M)}


def _listeners() -> tuple[socket.socket, socket.socket, str]:
    tcp = socket.create_server(("127.0.0.1", 0))
    name = f"ttr-build-escape-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + name)
    abstract.listen()
    return tcp, abstract, name


def test_a_build_has_no_network_runs_as_no_one_and_sees_a_clean_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTR_BUILD_HOST_SECRET", SECRET)
    tcp, abstract, name = _listeners()
    with tcp, abstract:
        folder = _escape(tmp_path, tcp=list(tcp.getsockname()), abstract=name)
        os.chown(folder, 0, 0) if os.geteuid() == 0 else None  # a root-owned entrant's folder
        load_bot_config(folder)
    tried = _attacks(folder)
    assert tried["tcp"].startswith("OSError") or "Error" in tried["tcp"], tried
    assert "Error" in tried["abstract"], tried
    assert int(tried["uid"]) != 0
    assert "referee's" not in tried["environ of pid 1"], tried
    assert (folder / "bot.py").read_text() == "built\n"


def test_online_builds_reach_the_network_only_when_asked(tmp_path: Path) -> None:
    """The control for the test above: the same build with ``online_builds`` connects."""
    tcp, abstract, name = _listeners()
    with tcp, abstract:
        folder = _escape(tmp_path, tcp=list(tcp.getsockname()), abstract=name)
        load_bot_config(folder, sandbox.SandboxConfig(online_builds=True))
    tried = _attacks(folder)
    assert tried["tcp"].startswith("SUCCEEDED connected"), tried
    assert tried["abstract"] == "SUCCEEDED connected", tried


def test_a_build_that_fills_its_folder_stops_at_its_quota(tmp_path: Path) -> None:
    """It asks for 2 GiB; it gets its quota (a tmpfs of ``build_mb``), and its folder on the
    host holds no more than that afterwards."""
    folder = _escape(tmp_path, fill_mb=2048)
    load_bot_config(folder, sandbox.SandboxConfig(build_mb=16))
    stopped = re.match(r"OSError: stopped at (\d+) MB", _attacks(folder)["fill"])
    assert stopped is not None and int(stopped.group(1)) <= 16, _attacks(folder)
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert total <= 16 << 20
    assert (folder / "bot.py").read_text() == "built\n"


def test_a_build_that_leaves_a_link_out_of_its_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    folder = _escape(tmp_path, link_out=str(secret))
    with pytest.raises(BotBuildError, match="what its build left was refused") as caught:
        load_bot_config(folder)
    assert not (folder / "leak").is_symlink()
    assert SECRET not in str(caught.value)
