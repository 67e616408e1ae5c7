"""docs/bot-api.md cannot rot: its worked example is taken from the page and played in a real
game (and through ``ttr check``), every field of the objects a bot receives is named on the
page, and the numbers the page gives are the code's."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from referee.games import board
from referee.games import card as cardgame
from referee.games.board import events as board_events
from referee.games.board import wire
from referee.games.board.ruleset import City, Route, Ticket
from referee.games.board.state import Phase as EnginePhase
from referee.games.card import events as card_events
from referee.games.common.cards import CARD_NAMES
from referee.games.protocol import (
    DEFAULT_BANK_MS,
    DEFAULT_CALL_S,
    DEFAULT_MOVE_MS,
    MAX_MESSAGE_CHARS,
    MAX_RULE_CHARS,
)
from referee.hosting.config import BotConfig
from referee.hosting.launcher import DEFAULT_STARTUP_S, STOP_GRACE_S
from referee.match import (
    MAX_ANSWER_BYTES,
    MAX_FAULTS_PER_DECISION,
)
from sdk import Game, Phase
from ttr.v1 import bot_service_pb2
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "bot-api.md").read_text(encoding="utf-8")
FLAT = " ".join(DOC.split())  #: the page with its line breaks as spaces


def example(name: str) -> str:
    """The fenced block after ``<!-- example: NAME -->`` on the page."""
    found = re.search(rf"<!-- example: {re.escape(name)} -->\n```\w+\n(.*?)\n```", DOC, re.S)
    assert found, f"docs/bot-api.md has no example {name}"
    return found.group(1) + "\n"


@pytest.fixture(scope="module")
def hello(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("doc") / "hello"
    folder.mkdir()
    (folder / "bot.py").write_text(example("bot.py"))
    (folder / "bot.toml").write_text(example("bot.toml"))
    return folder


def test_the_worked_example_plays_a_real_game(
    hello: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record, logs = tmp_path / "game.json", tmp_path / "logs"
    args = ["play", "--seed", "3", "--record", str(record), "--logs", str(logs)]
    assert cli_main([*args, str(hello), str(ROOT / "sample_bots" / "random")]) == 0
    capsys.readouterr()
    data = json.loads(record.read_text())
    assert data["faults"] == []
    mine = [a for a in data["actions"] if a["seat"] == 0]
    assert all(a["default"] is None for a in mine)
    assert any(a["action"]["type"] == "ClaimRoute" for a in mine)
    # it kept every ticket it was offered
    setup = mine[0]["events"]
    assert setup[0]["type"] == "TicketsKept" and setup[0]["returned_count"] == 0
    log = (logs / "seat0-hello.log").read_text()
    lines = [ln for ln in log.splitlines() if ": hand [" in ln]
    assert len(lines) == len(mine)
    assert lines[0].startswith("setup_tickets: hand [")
    assert any(ln.startswith("turn: ") for ln in lines)
    assert any(ln.startswith("second_card: ") for ln in lines)
    # cards and the row by name, tickets by their cities
    names = "|".join(CARD_NAMES)
    assert re.search(rf"hand \[\d+ ({names})", lines[0]), lines[0]
    assert re.search(rf"row \[({names}), ", lines[0]), lines[0]
    assert re.search(r"tickets \[[A-Z][^\]]*-[A-Z][^\]]* \d+", lines[-1]), lines[-1]


def test_the_worked_example_passes_ttr_check_for_what_it_declares(
    hello: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["check", str(hello), "--games", "1", "--variant", "newyork"]) == 0
    out = capsys.readouterr().out
    assert "newyork@1: PASS" in out
    with pytest.raises(SystemExit) as refused:  # it declares board games only
        cli_main(["check", str(hello), "--variant", "cardgame"])
    assert refused.value.code == 2


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


@pytest.mark.parametrize(
    "cls",
    [
        board.SeatView,
        board.PlayerPublic,
        board.Ruleset,
        City,
        Route,
        Ticket,
        board.Outcome,
        board.SeatScore,
        cardgame.CardSeatView,
        cardgame.CardPlayerPublic,
        cardgame.CardRuleset,
        cardgame.CardOutcome,
        cardgame.CardSeatScore,
    ],
    ids=lambda c: c.__name__,
)
def test_every_field_a_bot_receives_is_on_the_page(cls: type) -> None:
    assert cls.__name__ in DOC
    missing = [name for name in _fields(cls) if f"`{name}`" not in DOC and f" {name}," not in DOC]
    assert not missing, f"{cls.__name__}: {missing} not in docs/bot-api.md"


def test_the_game_actions_events_and_phases_are_on_the_page() -> None:
    missing = [f for f in _fields(Game) if f != "lock" and f"| `{f}` |" not in DOC]
    assert not missing
    classes = [
        *board.Action.__args__,
        *cardgame.CardAction.__args__,
        *board_events.Event.__args__,
        *card_events.CardEvent.__args__,
    ]
    assert not [c.__name__ for c in classes if f"`{c.__name__}" not in DOC]
    for cls in classes:  # with every field, as a signature or a table row
        fields = _fields(cls)
        signature = f"{cls.__name__}({', '.join(fields)})"
        row = f"| `{cls.__name__}` | " + ", ".join(f"`{f}`" for f in fields) + " |"
        assert signature in FLAT or row in DOC, signature
    for phase in Phase:
        assert f'| `{phase.name}` | `"{phase.value}"` |' in DOC
    toml_keys = {"name", "version", "author", "description", "command", "build", "variants"}
    assert toml_keys == {f for f in _fields(BotConfig) if f != "folder"}
    assert all(f"| `{k}` |" in DOC for k in toml_keys)


def test_the_wire_facts_on_the_page_are_the_codes() -> None:
    service = bot_service_pb2.DESCRIPTOR.services_by_name["BotService"]
    assert f"`{service.full_name}`" in DOC
    for method in service.methods:
        assert f"| `{method.name}` | `{method.input_type.name}`" in DOC
    start_fields = bot_service_pb2.StartGameRequest.DESCRIPTOR.fields_by_name
    act_fields = bot_service_pb2.ActRequest.DESCRIPTOR.fields_by_name
    assert all(f"`{name}`" in DOC for name in (*start_fields, *act_fields))
    assert f"up to\n{MAX_FAULTS_PER_DECISION} rejected answers" in DOC
    assert f"each cut to {MAX_RULE_CHARS} and {MAX_MESSAGE_CHARS} characters" in DOC
    assert f"over {MAX_ANSWER_BYTES // 1024} KiB" in DOC
    assert f"SIGKILL {STOP_GRACE_S:g} second later" in DOC
    assert f"(default {DEFAULT_STARTUP_S:g})" in DOC
    assert f"({DEFAULT_CALL_S:g} seconds in `ttr play`)" in DOC
    assert f"(`--move-ms`, default {DEFAULT_MOVE_MS})" in DOC
    assert f"(`--bank-ms`, default\n{DEFAULT_BANK_MS})" in DOC


def test_phase_is_the_views_phase_and_compares_either_way() -> None:
    """``sdk.Phase`` follows the engine's phases, and a view the SDK decodes holds the member
    itself, so ``view.phase is Phase.X`` holds, while string comparisons keep working."""
    assert [p.name for p in Phase] == [p.name for p in EnginePhase]
    assert all(p == p.name.lower() for p in Phase)
    usa = board.load_ruleset("usa")
    state = board.new_game(usa, 2, 7)
    seen = set()
    while True:
        view = board.view(state, 0)
        decoded = wire.view_from_pb(wire.view_to_pb(view))
        assert decoded == view
        assert decoded.phase is Phase(view.phase)
        seen.add(decoded.phase)
        if state.is_over:
            break
        state = board.apply(state, board.legal_actions(state)[-1])
    assert seen >= {Phase.SETUP_TICKETS, Phase.TURN, Phase.OVER}
    turn: object = Phase.TURN
    engine_turn: object = EnginePhase.TURN
    assert turn == "turn" and turn != engine_turn  # the trap the SDK avoids
    assert sys.modules["sdk"].Phase is wire.ViewPhase
