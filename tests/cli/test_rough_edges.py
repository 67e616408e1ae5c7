"""Issue 23, part 7: sample bots by name from anywhere, the kits' READMEs, and the way out of
an unfinished tournament named where a run stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.hosting.launcher import SAMPLE_BOTS, SAMPLE_NAMES, LaunchedBot, resolve_bot
from ttr_arena.cli import main

STARTERS = Path(__file__).resolve().parents[2] / "referee" / "hosting" / "starters"


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_a_sample_name_resolves_to_the_sample_folder_anywhere(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_bot(name) == str(SAMPLE_BOTS / name)
    assert (Path(resolve_bot(name)) / "bot.toml").is_file()
    assert LaunchedBot(name).spec == str(SAMPLE_BOTS / name)


def test_a_folder_of_that_name_here_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "random").mkdir()
    assert resolve_bot("random") == "random"
    assert resolve_bot("nosuchbot") == "nosuchbot"
    assert resolve_bot("127.0.0.1:5000") == "127.0.0.1:5000"


def test_play_takes_sample_names_outside_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    record = tmp_path / "game.json"
    rc = main(["play", "random", "random", "--no-sandbox", "--seed", "3", "--record", str(record)])
    assert rc == 0 and record.is_file()
    assert f"record: {record}" in capsys.readouterr().out


def test_check_takes_a_sample_name_outside_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rc = main(["check", "random", "--no-sandbox", "--games", "1", "--variant", "newyork"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "newyork" in out


def test_new_bot_prints_a_play_line_that_works_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new-bot", "mybot"]) == 0
    out = capsys.readouterr().out
    assert "ttr play mybot random" in out and "sample_bots" not in out


@pytest.mark.parametrize("kit", ["cpp", "go", "node", "python"])
def test_kit_readmes_point_at_ttr_check_and_sample_names(kit: str) -> None:
    text = (STARTERS / kit / "README.md").read_text()
    assert "ttr check {{name}}" in text
    assert "sdk.compliance" not in text and "sample_bots/" not in text
    assert "ttr play {{name}} random" in text


def test_sample_readme_gives_the_sandboxed_address() -> None:
    text = (SAMPLE_BOTS / "README.md").read_text()
    assert "TTR_BOT_ADDRESS=unix:/run/ttr/bot.sock" in text
