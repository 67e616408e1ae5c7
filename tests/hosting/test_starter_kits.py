"""``ttr new-bot`` starter kits and bot.toml build steps (referee/hosting/newbot.py, build.py).

Each kit is made in a temporary folder (outside the repository, so it must carry everything
it needs), then plays real sandboxed games against the random sample bot on the usa map and in
the card game, its build run by the launcher once. A kit whose toolchain is missing is
skipped with the reason, or fails where ``CI`` is set (``make test`` installs the toolchains
first: tools/ensure_toolchains.sh). The build machinery itself is tested with a build
written in Python, so those tests need no toolchain.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.hosting import build, sandbox
from referee.hosting.build import BotBuildError
from referee.hosting.config import BotConfigError
from referee.hosting.launcher import load_bot_config
from referee.hosting.newbot import LANGUAGES, missing_tools
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "sample_bots" / "random"
#: a line each kit writes to its log for every decision
CHOSE = "chose #"

# Per kit with a build: a file its build reads, and an edit that breaks the build: a line added
# at its end, or at its start where the compiler then stops at once: Go as it reads the
# imports, g++ at a missing header, before parsing gRPC's. (The Node kit has no build: its
# packages are the platform's, runtimes/node.)
_SOURCE = {
    "go": ("main.go", "this is not Go\n", "start"),
    "cpp": ("bot.cc", '#include "this_is_not_a_header.h"\n', "start"),
}


def _require(lang: str) -> None:
    missing = missing_tools(lang)
    if not missing:
        return
    message = f"the {LANGUAGES[lang].title} starter kit needs {', '.join(missing)} on PATH"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so this is a failure, not a skip)")
    pytest.skip(f"{message}: run tools/ensure_toolchains.sh")


@pytest.fixture(scope="module", params=sorted(LANGUAGES))
def kit(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bot made by ``ttr new-bot`` in a temporary folder, one per language."""
    lang: str = request.param
    _require(lang)
    parent = tmp_path_factory.mktemp(f"kit-{lang}")
    assert cli_main(["new-bot", f"my_{lang}", "--lang", lang, "--dir", str(parent)]) == 0
    return parent / f"my_{lang}"


def _play(
    bot: Path, variant: str, record: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[dict[str, object], str]:
    args = ["play", "--json", "--variant", variant, "--seed", "11", "--record", str(record)]
    code = cli_main([*args, str(bot), str(RANDOM)])
    assert code == 0
    out, err = capsys.readouterr()
    result: dict[str, object] = json.loads(out)
    return result, err


def test_kit_plays_usa_and_the_card_game(
    kit: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = load_bot_config(kit)  # a fresh kit: the launcher builds it here, once
    builds = capsys.readouterr().err.count("ttr: building bot")
    assert builds == (1 if config.build else 0)
    for variant in ("usa", "cardgame"):
        record = tmp_path / f"{variant}.json"
        result, err = _play(kit, variant, record, capsys)
        builds += err.count("ttr: building bot")
        players = result["players"]
        assert isinstance(players, list)
        mine = next(p for p in players if p["seat"] == 0)
        assert mine["bot"] == config.name
        assert mine["faults"] == 0, (variant, mine)
        data = json.loads(record.read_text(encoding="utf-8"))
        assert data["outcome"]["final"] is True
        assert data["faults"] == []
        log = (tmp_path / f"{variant}.logs" / f"seat0-{config.name}.log").read_text()
        # It says what it does: the start with the variant, each decision, the end.
        assert f"{variant}@" in log and CHOSE in log and "end after" in log, log[-2000:]
        moves = [a for a in data["actions"] if a["seat"] == 0]
        assert moves and all(a["default"] is None for a in moves)
        assert log.count(CHOSE) >= len(moves)
    # Seeded from bot_seed: the same --seed plays the same game again (timings aside).
    again = tmp_path / "usa-again.json"
    _play(kit, "usa", again, capsys)

    def moves_of(path: Path) -> list[dict[str, object]]:
        actions = json.loads(path.read_text(encoding="utf-8"))["actions"]
        # the time each took, and what the bots wrote (their start-up lines name a fresh address)
        return [{k: v for k, v in a.items() if k not in ("ms", "lines")} for a in actions]

    assert moves_of(again) == moves_of(tmp_path / "usa.json")
    assert builds == (1 if config.build else 0)  # not again for either game
    assert bool(config.build) == (kit.name.removeprefix("my_") in _SOURCE)
    if config.build:
        assert (kit / build.STAMP).is_file()


@pytest.mark.parametrize("kit", sorted(_SOURCE), indirect=True)
def test_kit_rebuilds_after_an_edit_only_and_reports_a_broken_build(kit: Path) -> None:
    """An edit that breaks the build: the launch fails with the tool's own complaint; the fix
    (another edit) builds again; then nothing is built until the next edit."""
    config = load_bot_config(kit)  # built, if the test above did not run
    assert config.build
    assert build.ensure_built(config) is False  # nothing changed
    source_name, broken, where = _SOURCE[kit.name.removeprefix("my_")]
    source = kit / source_name
    good = source.read_text(encoding="utf-8")
    try:
        source.write_text(broken + good if where == "start" else good + broken, encoding="utf-8")
        with pytest.raises(BotBuildError) as caught:
            load_bot_config(kit)
        message = str(caught.value)
        assert f"bot {config.name!r}" in message and "failed with status" in message
        assert source_name in message  # the tool's own complaint, from the end of the log
        assert not (kit / build.STAMP).exists()  # so the next launch builds again
    finally:
        source.write_text(good, encoding="utf-8")
    assert build.ensure_built(config) is True
    assert build.ensure_built(config) is False


@pytest.mark.parametrize("kit", ["go"], indirect=True)
def test_go_kit_rebuilds_a_one_line_edit_from_its_build_cache(kit: Path) -> None:
    """The jailed build keeps Go's GOCACHE in the folder's ``.ttr-cache/go``: after a one-line
    edit of main.go only the bot's own package is compiled and linked again, a handful of new
    cache entries beside the hundreds grpc-go's packages left the first time."""
    if sandbox.unavailable_reason() is not None:
        pytest.skip("the build cache is the jailed build's; bots cannot be sandboxed here")
    config = load_bot_config(kit)
    cache = kit / build.CACHE_DIR / "go"

    def entries() -> set[Path]:
        return {p.relative_to(cache) for p in cache.rglob("*") if p.is_file()}

    before = entries()
    assert len(before) > 200, len(before)  # grpc-go and protobuf compiled once, kept
    with (kit / "main.go").open("a", encoding="utf-8") as f:
        f.write("// a one-line edit\n")
    assert build.ensure_built(config) is True
    new = entries() - before
    assert 0 < len(new) <= 12, sorted(map(str, new))


# ---------------------------------------------------------------------------------------------
# The build machinery, with a build written in Python


_BUILD_PY = """\
import pathlib, sys, time
count = pathlib.Path(sys.argv[1])
count.write_text(count.read_text() + "x" if count.exists() else "x")
time.sleep(float(sys.argv[2]))
if pathlib.Path("fail").exists():
    print("step one went fine")
    print("error: the build is broken", file=sys.stderr)
    sys.exit(3)
pathlib.Path("out.bin").write_text("built")
"""


def _bot(tmp_path: Path, sleep_s: float = 0.0, build_line: str | None = None) -> Path:
    folder = tmp_path / "pybuild"
    folder.mkdir(parents=True)
    # in the folder, the only place a (jailed) build can write; named from inside it, since a
    # jailed build sees its folder at /bot, never at the host's path
    if build_line is None:
        build_line = f'build = ["{{python}}", "build.py", "builds.txt", "{sleep_s}"]'
    (folder / "bot.toml").write_text(
        'name = "pybuild"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n' + build_line + "\n",
        encoding="utf-8",
    )
    (folder / "build.py").write_text(_BUILD_PY, encoding="utf-8")
    (folder / "bot.py").write_text((RANDOM / "bot.py").read_text(), encoding="utf-8")
    return folder


def _builds(tmp_path: Path) -> int:
    count = tmp_path / "pybuild" / "builds.txt"
    return len(count.read_text()) if count.exists() else 0


def test_build_runs_once_then_again_after_an_edit_or_a_lost_output(tmp_path: Path) -> None:
    folder = _bot(tmp_path)
    load_bot_config(folder)
    assert _builds(tmp_path) == 1 and (folder / "out.bin").read_text() == "built"
    assert "$ {python} build.py" in (folder / build.LOG).read_text()
    load_bot_config(folder)
    load_bot_config(folder)
    assert _builds(tmp_path) == 1
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "# edited\n")
    load_bot_config(folder)
    assert _builds(tmp_path) == 2
    (folder / "out.bin").unlink()  # an output gone: the stamp does not vouch for it
    load_bot_config(folder)
    assert _builds(tmp_path) == 3 and (folder / "out.bin").exists()
    load_bot_config(folder)
    assert _builds(tmp_path) == 3


def test_a_failed_build_stops_the_launch_with_the_end_of_its_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _bot(tmp_path)
    (folder / "fail").touch()
    with pytest.raises(BotBuildError) as caught:
        load_bot_config(folder)
    message = str(caught.value)
    assert "bot 'pybuild'" in message and "failed with status 3" in message
    assert "  | error: the build is broken" in message
    assert str(folder.resolve() / build.LOG) in message
    assert not (folder / build.STAMP).exists()
    with pytest.raises(SystemExit) as exited:
        cli_main(["play", str(folder), str(RANDOM)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "ttr: error: bot 'pybuild'" in err and "error: the build is broken" in err
    (folder / "fail").unlink()  # fixed: the next launch builds again, and plays
    code = cli_main(
        ["play", "--json", "--record", str(tmp_path / "r.json"), str(folder), str(RANDOM)]
    )
    assert code == 0
    # three builds ran, but a jailed build works in a copy of the folder and only a build that
    # succeeded brings back what it wrote: the two failed ones left no trace
    assert _builds(tmp_path) == 1


def test_build_config_errors_are_one_clear_line(tmp_path: Path) -> None:
    folder = _bot(tmp_path, build_line='build = ["make", 3]')
    with pytest.raises(BotConfigError, match=r"bot.toml: key `build` must be a command"):
        load_bot_config(folder)
    folder2 = _bot(tmp_path / "b", build_line='build = [["no-such-builder-xyz"]]')
    with pytest.raises(BotBuildError, match=r"cannot run its build command `no-such-builder-xyz`"):
        load_bot_config(folder2)


def test_several_steps_run_in_order(tmp_path: Path) -> None:
    folder = _bot(
        tmp_path,
        build_line=(
            'build = [["{python}", "build.py", "builds.txt", "0"], '
            '["{python}", "-c", "import pathlib; pathlib.Path(\'two\').write_text(\'2\')"]]'
        ),
    )
    config = load_bot_config(folder)
    assert len(config.build) == 2
    assert _builds(tmp_path) == 1 and (folder / "two").read_text() == "2"


def test_concurrent_launches_build_once(tmp_path: Path) -> None:
    """Two processes load the same folder at once (a tournament starting copies): the lock
    makes one wait for the other's build, then find the stamp fresh."""
    folder = _bot(tmp_path, sleep_s=1.0)
    code = f"from referee.hosting.launcher import load_bot_config; load_bot_config({str(folder)!r})"
    procs = [
        subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    assert _builds(tmp_path) == 1


def test_new_bot_refuses_bad_names_and_existing_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["new-bot", "taken", "--dir", str(tmp_path)]) == 0
    for argv in (
        ["new-bot", "taken", "--dir", str(tmp_path)],
        ["new-bot", "../escape", "--dir", str(tmp_path)],
        ["new-bot", "ok", "--dir", str(tmp_path / "nowhere")],
    ):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            cli_main(argv)
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("ttr: error: ") and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    assert {p.name for p in (tmp_path / "taken").iterdir()} == {
        ".gitignore",
        "README.md",
        "bot.py",
        "bot.toml",
    }
