"""The Node.js sample bot (sample_bots/node_random) plays a full game against Python bots.

It needs ``node`` and ``npm``: without them the test is skipped, or fails where ``CI`` is set
(so a CI image that lost Node does not pass silently). It has no build: its gRPC packages are
the platform's (runtimes/node, installed by tools/ensure_toolchains.sh), given read-only on
``NODE_PATH``, since builds have no network.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from referee.hosting.newbot import PROTO_ROOT, proto_files
from referee.hosting.sandbox import node_runtime
from referee.replay import verify
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
NODE_BOT = ROOT / "sample_bots" / "node_random"
NODE_KIT = ROOT / "referee" / "hosting" / "starters" / "node"


def _require_node() -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if node_runtime() is None:
        missing.append("the Node runtime packages (tools/ensure_toolchains.sh installs them)")
    if not missing:
        return
    message = f"the Node.js sample bot needs {' and '.join(missing)} on PATH"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so this is a failure, not a skip)")
    pytest.skip(message)


def test_node_bot_carries_the_current_contract() -> None:
    """Its proto/ is a copy (so the folder works wherever it is copied): the same files as
    the repository's proto/, byte for byte."""
    copy = NODE_BOT / "proto"
    assert proto_files(copy) == proto_files(PROTO_ROOT), "run `make proto`"
    stale = [
        str(rel)
        for rel in proto_files(PROTO_ROOT)
        if (copy / rel).read_bytes() != (PROTO_ROOT / rel).read_bytes()
    ]
    assert not stale, f"sample_bots/node_random/proto is stale ({stale}): run `make proto`"


def test_node_bot_is_the_node_starter_kit() -> None:
    """One Node bot, not two drifting apart: the sample is what `ttr new-bot --lang node`
    makes, apart from its bot.toml and README."""
    for name in ("bot.js", "package.json", "package-lock.json"):
        assert (NODE_BOT / name).read_bytes() == (NODE_KIT / name).read_bytes(), name


@pytest.mark.parametrize("variant", ["usa", "newyork", "cardgame"])
def test_node_bot_plays_a_full_game(
    variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the usa map and on New York (whose StartGame has optional coordinates, attractions
    and a deck without yellow or white), and on the card game (another rules family: a card
    setup instead of a map, card-game actions): a reader built from proto/ alone copes."""
    _require_node()
    record = tmp_path / "game.json"
    bots = [NODE_BOT, ROOT / "sample_bots" / "random", ROOT / "sample_bots" / "greedy"]
    args = ["play", "--variant", variant, "--json", "--seed", "3", "--record", str(record)]
    code = cli_main([*args, *(str(b) for b in bots)])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    players = {p["seat"]: p for p in result["players"]}
    assert players[0]["bot"] == "node_random"
    assert players[0]["faults"] == 0, players[0]

    data = json.loads(record.read_text(encoding="utf-8"))
    assert data["outcome"]["final"] is True  # the game finished
    assert data["faults"] == []
    node_moves = [a for a in data["actions"] if a["seat"] == 0]
    assert node_moves and all(a["default"] is None for a in node_moves)
    assert verify(record) is None  # `ttr replay verify` agrees
