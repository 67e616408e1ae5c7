"""Names on the terminal (issue 21, item 5): a ``bot.toml`` name is shown by ``ttr play``,
``ttr check``, tournaments' progress lines and ``ttr leaderboard show``. One with terminal
escapes (tests/hostile_bots/terminal_name) is refused when the config is read, and a name that
reaches a terminal from a store or a record written before the check is printed escaped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.store import SeatResult, Store, TournamentSpec
from referee.games.protocol import printable
from referee.hosting.config import BotConfigError, read_bot_config
from tests.helpers import stored_game

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "hostile_bots" / "terminal_name"
RANDOM = ROOT / "sample_bots" / "random"
TTR = [sys.executable, "-m", "ttr_arena.cli"]
ESC = "\x1b"


def test_the_hostile_name_is_refused_naming_the_key_and_the_character() -> None:
    with pytest.raises(BotConfigError) as e:
        read_bot_config(HOSTILE)
    message = str(e.value)
    assert "key `name` holds the control character '\\x1b' at 4" in message
    assert ESC not in message


@pytest.mark.parametrize("key", ["name", "version", "author", "description"])
def test_every_text_key_refuses_control_characters(tmp_path: Path, key: str) -> None:
    fields = {"name": "ok", "version": "1.0", "author": "a", "description": "d"}
    fields[key] = "bad\u0007bell"
    lines = [f"{k} = {json.dumps(v)}" for k, v in fields.items()]
    (tmp_path / "bot.toml").write_text("\n".join([*lines, 'command = ["true"]']) + "\n")
    with pytest.raises(BotConfigError, match=f"key `{key}` holds the control character"):
        read_bot_config(tmp_path)


def test_play_refuses_the_bot_before_any_game_and_prints_no_escape() -> None:
    done = subprocess.run(
        [*TTR, "play", str(HOSTILE), str(RANDOM), "--no-sandbox"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode != 0
    assert "holds the control character" in done.stdout + done.stderr
    assert ESC not in done.stdout + done.stderr


def _store_with_a_hostile_name(db: Path) -> None:
    """A store as an earlier version could have written it: the name was never checked."""
    store = Store(db)
    store.begin_tournament(TournamentSpec("old night", "usa@1", 2, 1, 0, {}))
    evil = store.add_bot(f"evil{ESC}]0;pwned\x07{ESC}[2J", "1.0", "x", "h1")
    honest = store.add_bot("honest", "1.0", "y", "h2")
    seats = (SeatResult(0, evil, 10, 1, 0, 0, 0, 0), SeatResult(1, honest, 5, 2, 0, 0, 0, 0))
    store.record_game(stored_game(0, seats, "usa@1"))
    store.close()


def test_a_hostile_name_from_an_old_store_is_printed_escaped(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    _store_with_a_hostile_name(db)
    done = subprocess.run(
        [*TTR, "leaderboard", "show", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert ESC not in done.stdout
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J 1.0" in done.stdout


def test_printable_escapes_and_leaves_plain_text_alone() -> None:
    assert printable("greedy 1.0") == "greedy 1.0"
    assert printable("a\x1b[2Jb\nc\u200bd") == "a\\x1b[2Jb\\nc\\u200bd"


def test_a_hostile_name_in_a_record_is_printed_escaped(tmp_path: Path) -> None:
    """A record is a file anyone may hand over: ``ttr replay show`` escapes its names."""
    record = tmp_path / "game.json"
    args = ["play", str(RANDOM), str(RANDOM), "--no-sandbox", "--seed", "3", "--record"]
    played = subprocess.run(
        [*TTR, *args, str(record)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert played.returncode == 0, played.stderr
    data = json.loads(record.read_text())
    data["seats"][0]["name"] = f"evil{ESC}[2J"
    record.write_text(json.dumps(data))
    shown = subprocess.run(
        [*TTR, "replay", "show", str(record)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert shown.returncode == 0, shown.stderr
    assert ESC not in shown.stdout and "0:evil\\x1b[2J" in shown.stdout


def test_a_file_given_as_a_bot_folder_is_named_a_file(tmp_path: Path) -> None:
    script = tmp_path / "x.py"
    script.write_text("")
    with pytest.raises(BotConfigError, match="is a file, not a bot folder"):
        read_bot_config(script)


def test_atomic_writes_get_the_usual_mode(tmp_path: Path) -> None:
    from referee.match import write_text_atomic

    mask = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "r.json", '{"a": 1}\n')
    finally:
        os.umask(mask)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644
