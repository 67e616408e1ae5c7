"""``ttr replay show|view|verify|ask`` on a crafted record (issue 34, item 5): a record is a
file anyone may hand over, so each command, run as the real ``ttr`` in a subprocess, must
survive one built to hurt it.

Each record starts as a real one (an in-process game, ``sdk.local``) and is then edited:
escape sequences in its strings never reach the terminal raw, a seed of 100,000 digits or
``1e999`` is one line and exit 2 (not a traceback), a FIFO given as the record is refused at
once (a hang fails on the subprocess timeout), a file over the bound is refused before it is
read, and a 20 MB line a bot never could have written is shown as the referee would have
kept it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.games.protocol import ECHO_LINE_CHARS, RECORD_LINES_CHARS
from referee.replay import MAX_RECORD_BYTES
from sdk.local import RandomBot, play_game
from tests.cli.test_replay_ask import Capture, serving

ROOT = Path(__file__).resolve().parents[2]
TTR = [sys.executable, "-m", "ttr_arena.cli"]
COMMANDS = ["show", "view", "verify", "ask"]
#: the raw forms of an escape sequence, a C1 control (CSI) and a right-to-left override
RAW = ("\x1b", "\x9b", "\u202e")
EVIL = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202eevil"


@pytest.fixture(scope="module")
def real() -> dict[str, Any]:
    """A short real game's record, as ``ttr play --record`` writes it."""
    record = play_game("usa", [RandomBot(), RandomBot()], seed=5)
    data: dict[str, Any] = json.loads(json.dumps(record.data))  # as a file holds it
    return data


@pytest.fixture(scope="module")
def bot() -> Iterator[str]:
    """An in-process bot for ``ask`` to send its request to."""
    with serving(Capture()) as address:
        yield address


def crafted(folder: Path, real: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> Path:
    data = json.loads(json.dumps(real))
    edit(data)
    path = folder / "crafted.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


NOBODY = "127.0.0.1:1"


def ttr(command: str, record: Path, bot: str = NOBODY) -> subprocess.CompletedProcess[str]:
    """``ttr replay COMMAND RECORD`` (``ask`` asks ``bot`` for decision 0; ``view`` writes
    beside the record). A command that hangs fails the test on the timeout. A real bot gets
    the usual time to answer its health check (a loaded machine may take more than a
    moment); nobody listening, the record's fault must show before any wait matters."""
    startup = "0.1" if bot == NOBODY else "30"
    extra = {
        "view": ["--out", str(record.with_suffix(".html"))],
        "ask": [bot, "--decision", "0", "--startup-s", startup],
    }.get(command, [])
    return subprocess.run(
        [*TTR, "replay", command, str(record), *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def one_error_line(done: subprocess.CompletedProcess[str], says: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ttr: error: "), done.stderr
    assert says in lines[0]


def page_film(record: Path) -> dict[str, Any]:
    page = record.with_suffix(".html").read_text(encoding="utf-8")
    found = re.search(r'<script id="ttr-data" type="application/json">(.*?)</script>', page, re.S)
    assert found is not None
    film: dict[str, Any] = json.loads(found.group(1))
    return film


@pytest.mark.parametrize("command", ["show", "view", "ask"])
def test_escapes_in_the_game_id_never_reach_the_terminal_or_page_raw(
    command: str, real: dict[str, Any], bot: str, tmp_path: Path
) -> None:
    record = crafted(tmp_path, real, lambda d: d.update(game_id=EVIL))
    done = ttr(command, record, bot)
    assert done.returncode == 0, done.stderr
    for raw in RAW:
        assert raw not in done.stdout + done.stderr
    if command == "view":
        page = record.with_suffix(".html").read_text(encoding="utf-8")
        assert not any(raw in page for raw in RAW)
        assert page_film(record)["game_id"] == ascii(EVIL)[1:-1]
    else:  # shown, escaped: `show`'s header, `ask`'s header and request id
        assert done.stdout.count("\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202eevil") == (
            2 if command == "ask" else 1
        )


@pytest.mark.parametrize("command", ["show", "verify"])
def test_escapes_in_a_recorded_key_never_reach_the_terminal_raw(
    command: str, real: dict[str, Any], tmp_path: Path
) -> None:
    """A key the replay lacks is a difference named by its path: the path is the record's."""
    record = crafted(tmp_path, real, lambda d: d["actions"][0]["events"][0].update({EVIL: 1}))
    done = ttr(command, record)
    assert done.returncode == (1 if command == "verify" else 0), done.stderr
    for raw in RAW:
        assert raw not in done.stdout + done.stderr
    assert "actions[0].events[0].\\x1b]0;owned" in done.stdout + done.stderr


@pytest.mark.parametrize("seed", ["9" * 100_000, "1e999"], ids=["100000-digits", "1e999"])
@pytest.mark.parametrize("command", COMMANDS)
def test_an_out_of_range_seed_is_one_line_and_exit_2(
    command: str, seed: str, real: dict[str, Any], tmp_path: Path
) -> None:
    record = tmp_path / "seed.json"
    text = json.dumps(real)
    record.write_text(text.replace(f'"seed": {real["seed"]}', f'"seed": {seed}'))
    done = ttr(command, record)
    one_error_line(done, "not a game record (`seed` is ")
    assert "out of range" in done.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_fifo_is_refused_at_once(command: str, tmp_path: Path) -> None:
    """Nobody writes to it: opened for reading the usual way, it would block forever."""
    fifo = tmp_path / "record.json"
    os.mkfifo(fifo)
    one_error_line(ttr(command, fifo), "not a game record (a FIFO, not a regular file)")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_over_the_bound_is_refused_before_it_is_read(
    command: str, real: dict[str, Any], tmp_path: Path
) -> None:
    """A real record made one byte too long by a hole (sparse: the test writes nothing)."""
    record = crafted(tmp_path, real, lambda d: None)
    os.truncate(record, MAX_RECORD_BYTES + 1)
    one_error_line(ttr(command, record), f"over the {MAX_RECORD_BYTES >> 20} MiB a record may hold")


@pytest.fixture(scope="module")
def flooded(real: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seat 0's first decision says it wrote a 20 MB line, an escape sequence and then 200 KB
    more: the referee keeps 1,000 characters of a line and 32,000 of a seat's game."""

    def edit(data: dict[str, Any]) -> None:
        data["actions"][0]["lines"] = ["A" * 20_000_000, "\x1b[31mred", *["B" * 1000] * 200]

    return crafted(tmp_path_factory.mktemp("flooded"), real, edit)


@pytest.mark.parametrize("command", ["show", "ask"])
def test_a_20_mb_line_is_printed_as_the_referee_bounds_lines(
    command: str, flooded: Path, bot: str
) -> None:
    done = ttr(command, flooded, bot)
    assert done.returncode == 0, done.stderr
    shown = [ln for ln in done.stdout.splitlines() if "> " in ln]
    assert shown[0].endswith("...[cut: 20000000 chars]")
    assert max(len(ln.partition("> ")[2]) for ln in shown) <= ECHO_LINE_CHARS
    assert shown[1].endswith("> \\x1b[31mred")
    assert "\x1b" not in done.stdout
    said = sum(len(ln.partition("> ")[2]) for ln in shown)
    assert said <= RECORD_LINES_CHARS + 2 * ECHO_LINE_CHARS
    assert shown[-1].endswith("the rest is not shown]")
    assert len(done.stdout) < 200_000


def test_a_20_mb_line_makes_a_page_of_the_usual_size(flooded: Path) -> None:
    done = ttr("view", flooded)
    assert done.returncode == 0, done.stderr
    assert flooded.with_suffix(".html").stat().st_size < 1_000_000
    [said] = page_film(flooded)["output"]
    assert len(said["lines"][0]) == ECHO_LINE_CHARS
    assert sum(len(line) for line in said["lines"]) <= RECORD_LINES_CHARS + 2 * ECHO_LINE_CHARS
