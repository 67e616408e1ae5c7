"""The Node.js sample bot (sample_bots/node_random) plays a full game against Python bots.

It needs ``node`` and ``npm``: without them the test is skipped, or fails where ``CI`` is set
(so a CI image that lost Node does not pass silently). Its npm dependencies are installed
with ``npm ci`` on first use (or by ``make node-bots``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from referee.cli import main as cli_main
from referee.replay import verify

ROOT = Path(__file__).resolve().parent.parent
NODE_BOT = ROOT / "sample_bots" / "node_random"
NPM_CI_TIMEOUT_S = 300


def _require_node() -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if not missing:
        return
    message = f"the Node.js sample bot needs {' and '.join(missing)} on PATH"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set, so this is a failure, not a skip)")
    pytest.skip(message)


def _install_node_bot() -> None:
    if (NODE_BOT / "node_modules").is_dir():
        return
    npm = shutil.which("npm")
    assert npm is not None
    done = subprocess.run(
        [npm, "ci", "--silent", "--no-audit", "--no-fund"],
        cwd=NODE_BOT,
        capture_output=True,
        text=True,
        timeout=NPM_CI_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"npm ci failed in {NODE_BOT}:\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("variant", ["usa", "newyork", "cardgame"])
def test_node_bot_plays_a_full_game(
    variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the usa map and on New York (whose StartGame has optional coordinates, attractions
    and a deck without yellow or white), and on the card game (another rules family: a card
    setup instead of a map, card-game actions): a reader built from proto/ alone copes."""
    _require_node()
    _install_node_bot()
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
