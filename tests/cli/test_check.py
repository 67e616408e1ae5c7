"""``ttr check BOT_DIR``: the compliance kit run on a bot folder, with real bot processes
(sandboxed, as a user runs it): a sample bot passes; a bot that answers illegally, or whose
process dies mid-game, fails with the reason shown; bot.toml's ``variants`` says what is
checked."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee.games.registry import variants
from ttr_arena.cli import build_parser
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]


def _bot(folder: Path, body: str, toml_extra: str = "") -> Path:
    """A bot folder: bot.toml and a bot.py whose ``choose`` is ``body``."""
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "{folder.name}"\nversion = "0.1"\ncommand = ["{{python}}", "bot.py"]\n'
        + toml_extra
    )
    (folder / "bot.py").write_text(
        "import os, sys\n"
        "from referee.games.board import DrawFaceUp\n"
        "from sdk import Bot, run\n\n"
        "class B(Bot):\n"
        "    def choose(self, view, legal):\n"
        + textwrap.indent(textwrap.dedent(body), " " * 8)
        + "\n\nrun(B())\n"
    )
    return folder


def _check(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli_main(["check", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out


def test_a_sample_bot_passes_every_variant(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _check([str(ROOT / "sample_bots" / "planner"), "--games", "1"], capsys)
    assert code == 0, out
    lines = out.splitlines()
    for name in variants():
        [line] = [ln for ln in lines if ln.startswith(f"{name}@")]
        assert ": PASS: 1 game(s), " in line and "no fault" in line
    assert "slowest answer" in out and "1000 ms per move + 60000 ms bank" in out
    assert lines[-1].startswith("PASS: planner 1.0.0: ")


def test_an_illegal_bot_fails_with_the_rule_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = _bot(tmp_path / "illegal", "return DrawFaceUp(99)", 'variants = ["usa"]\n')
    code, out = _check([str(bot), "--games", "1"], capsys)
    assert code == 1, out
    assert "usa@1: FAIL: 1 game(s)" in out
    # each kind, then its first messages, naming the rule the engine applied
    assert "\n  malformed: " in out
    assert "game 0 decision 2: face-up slot 99 does not exist (0-4) [action.slot]" in out
    assert "cardgame" not in out  # only the declared variant is checked
    assert out.splitlines()[-1] == "FAIL: illegal 0.1: usa@1"


def test_a_bot_that_dies_mid_game_fails_with_its_exit_and_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = """
    if self.game.decisions == 3:
        print("out of luck at decision 3", file=sys.stderr, flush=True)
        os._exit(3)
    return 0
    """
    bot = _bot(tmp_path / "dies", body, 'variants = ["usa", "cardgame"]\n')
    code, out = _check([str(bot), "--games", "2"], capsys)
    assert code == 1, out
    assert "usa@1: FAIL: 1 game(s)" in out  # no second game once the bot is gone
    assert "disconnect: 1" in out
    assert "the bot exited with status 3" in out
    assert "| out of luck at decision 3" in out
    assert "not checked: cardgame@1" in out
    assert out.splitlines()[-1] == "FAIL: dies 0.1: usa@1, cardgame@1"


def test_a_bot_that_cannot_start_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bot = tmp_path / "broken"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "b"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n')
    (bot / "bot.py").write_text("raise SystemExit('no luck')\n")
    code, out = _check([str(bot), "--startup-s", "5"], capsys)
    assert code == 1
    assert out.startswith("ttr check: b 1") and "FAIL: " in out and "no luck" in out


@pytest.mark.parametrize(
    ("toml", "mentions"),
    [('variants = ["usa", "nope"]\n', "nope"), ("variants = []\n", "non-empty list")],
)
def test_a_bad_variants_key_fails_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], toml: str, mentions: str
) -> None:
    bot = _bot(tmp_path / "bad", "return 0", toml)
    code, out = _check([str(bot)], capsys)
    assert code == 1
    assert out.startswith("FAIL: ") and "variants" in out and mentions in out


def test_usage_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    bot = _bot(tmp_path / "usaonly", "return 0", 'variants = ["usa"]\n')
    for args, mentions in [
        ([str(tmp_path / "missing")], "not a bot folder"),
        ([str(bot), "--variant", "cardgame"], "declares only usa"),
        ([str(bot), "--players", "6"], "usa is for 2-5 players"),
        ([str(bot), "--variant", "nope"], "unknown variant"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "ttr_arena.cli", "check", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.startswith("ttr: error: ") and len(done.stderr.splitlines()) == 1
        assert mentions in done.stderr, done.stderr


def test_help_explains_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(["check", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for option in (
        "BOT_DIR",
        "--games",
        "--variant",
        "--players",
        "--seed",
        "--move-ms",
        "--bank-ms",
        "--startup-s",
        "--no-sandbox",
    ):
        assert option in text, option
    assert "`variants`" in text and "Exit 0" in text and "1 on any fault" in text
    # every option has its own explanation
    assert text.count("(default") >= 6


def test_a_folder_without_bot_toml_or_a_file_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli_main(["check", str(tmp_path)])
    assert exit_.value.code == 2
    assert (
        f"ttr: error: {tmp_path}: not a bot folder (no bot.toml in it)" in capsys.readouterr().err
    )
    script = tmp_path / "x.py"
    script.write_text("")
    with pytest.raises(SystemExit) as exit_:
        cli_main(["check", str(script)])
    assert exit_.value.code == 2
    assert "is a file, not a bot folder (a folder holding bot.toml)" in capsys.readouterr().err
