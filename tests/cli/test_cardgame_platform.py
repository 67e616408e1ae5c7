"""The card game on the platform: everything that takes ``--variant usa`` takes ``cardgame``.

The engine's own rules are in tests/games/test_cardgame_rules.py and
tests/games/test_cardgame_engine.py, its wire in tests/games/test_wire_cardgame.py. Here: real
sample-bot processes in the sandbox (so the jail shows them the card engine and its wire module),
``ttr play``, records that ``ttr replay verify`` accepts, tournaments with one rating pool per
player count, the compliance kit, and the hidden-information property carried through to the bytes a
bot receives.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from leaderboard.runner import run
from leaderboard.store import Store
from leaderboard.table import leaderboard
from referee.games.card import CardGameState, legal_actions, load_card_ruleset, view
from referee.games.registry import CARD, family_of, load, variants
from referee.hosting.launcher import LaunchedBot, launch
from referee.hosting.sandbox import NO_SANDBOX, SandboxConfig
from referee.match import act_request
from referee.replay import verify
from referee.selfplay import run_selfplay
from sdk.compliance import check_bot
from tests.games.test_cardgame_engine import hide_and_seek, sampled_states
from ttr.v1 import bot_service_pb2
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = [str(ROOT / "sample_bots" / name) for name in ("random", "greedy", "planner")]


@pytest.fixture(scope="module")
def sample_bots() -> Iterator[list[LaunchedBot]]:
    """The three sample bots as real sandboxed processes, started once."""
    with ExitStack() as stack:
        yield [
            stack.enter_context(launch(folder, python=sys.executable, sandbox=SandboxConfig()))
            for folder in SAMPLES
        ]


def test_cardgame_is_a_variant_of_the_card_family() -> None:
    assert "cardgame" in variants()
    ruleset = load("cardgame")
    assert family_of(ruleset) is CARD and ruleset.ident == "cardgame@1"
    assert (ruleset.min_players, ruleset.max_players) == (2, 4)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_selfplay_plays_the_card_game(players: int) -> None:
    stats, results = run_selfplay(load("cardgame"), players, 20, 1)
    assert stats.games == 20 and all(r.final.is_over for r in results)
    assert all(len(r.outcome.seats) == players for r in results)


@pytest.mark.parametrize("seats", [2, 4])
def test_ttr_play_plays_the_card_game_and_the_record_replays(
    seats: int,
    sample_bots: list[LaunchedBot],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = tmp_path / "game.json"
    bots = [b.address for b in (sample_bots * 2)[:seats]]
    args = ["play", "--variant", "cardgame", "--seed", "5", "--json", "--record", str(record)]
    assert cli_main([*args, *bots]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == "cardgame@1"
    data = json.loads(record.read_text())
    assert data["ruleset"] == "cardgame@1" and data["faults"] == []
    assert verify(record) is None
    for player in out["players"]:
        assert player["faults"] == 0  # the sample bots play the card game legally
        parts = player["breakdown"]
        assert player["score"] == parts["ticket_points"] + parts["bonus_points"]
    if seats == 4:  # two decks, two scorings (000: the four-player game)
        scored = [e for a in data["actions"] for e in a["events"] if e["type"] == "StackScored"]
        assert {e["deck"] for e in scored} == {1, 2}


def test_a_tampered_card_record_is_caught(
    sample_bots: list[LaunchedBot], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "game.json"
    args = ["play", "--variant", "cardgame", "--seed", "8", "--record", str(record)]
    assert cli_main([*args, sample_bots[0].address, sample_bots[2].address]) == 0
    capsys.readouterr()
    data = json.loads(record.read_text())
    data["outcome"]["seats"][0]["total"] += 1
    record.write_text(json.dumps(data))
    difference = verify(record)
    assert difference is not None and difference.what == "final scores"


def test_card_tournaments_keep_one_rating_pool_per_player_count(tmp_path: Path) -> None:
    """Sandboxed (the default) for 2 players: the jail must show the bots the card engine and
    its wire. Four players need a fourth bot: a renamed copy of random."""
    copy = tmp_path / "random-b"
    shutil.copytree(SAMPLES[0], copy, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (copy / "bot.toml").read_text().replace('name = "random"', 'name = "random-b"')
    (copy / "bot.toml").write_text(toml)
    with Store(tmp_path / "league.db") as store:
        for players in (2, 4):
            done = run(
                store,
                bot_dirs=SAMPLES if players == 2 else [*SAMPLES, str(copy)],
                variant="cardgame",
                players=players,
                rounds=1,
                workers=2,
                records=str(tmp_path / "records"),
                sandbox=SandboxConfig() if players == 2 else NO_SANDBOX,
            )
            assert done.complete and not done.failed, done
        pools = {(v, p): table for v, p, table in leaderboard(store)}
    assert set(pools) == {("cardgame@1", 2), ("cardgame@1", 4)}
    assert sum(s.games for s in pools[("cardgame@1", 2)]) == 3 * 2 * 2  # 3 pairs x 2 seatings
    assert all(s.faults == 0 for table in pools.values() for s in table)
    records = sorted((tmp_path / "records").glob("*.json"))
    assert records and all(verify(p) is None for p in records)


def test_the_compliance_kit_checks_a_card_bot(sample_bots: list[LaunchedBot]) -> None:
    report = check_bot(sample_bots[2].address, games=2, variant="cardgame", seats=3)
    assert report.ok, report.summary()
    assert report.games == 2 and report.decisions > 20


def _request_bytes(state: CardGameState, seat: int) -> bytes:
    """What the wire would carry to ``seat`` now: its ActRequest when it acts, else the view
    it gets at EndGame (the same converter)."""
    if seat == state.seat and not state.is_over:
        clock = bot_service_pb2.Clock(move_limit_ms=1000, bank_left_ms=1000)
        return act_request(state, legal_actions(state), [], "g", "r", clock).SerializeToString()
    data: bytes = CARD.view_to_pb(view(state, seat)).SerializeToString()
    return data


def test_the_bytes_a_bot_receives_ignore_every_hidden_fact() -> None:
    """The engine-level property (tests/games/test_cardgame_engine.py) carried to the wire: change
    every fact a seat cannot know and its serialised request stays byte-identical."""
    rng = random.Random(1)
    checked = 0
    for n, state in enumerate(sampled_states()):
        if n % 4:
            continue
        for seat in range(state.num_seats):
            seen = _request_bytes(state, seat)
            assert _request_bytes(hide_and_seek(state, seat, rng), seat) == seen
            checked += 1
    assert checked > 200


def test_hidden_facts_do_change_the_bytes_of_a_seat_that_may_see_them() -> None:
    """The check above can fail: a seat's own hand is in its bytes."""
    ruleset = load_card_ruleset("cardgame")
    state = next(s for s in sampled_states() if s.ruleset == ruleset and sum(s.hands[0]) > 1)
    hand = list(state.hands[0])
    kind = next(k for k, n in enumerate(hand) if n)
    hand[kind] -= 1
    hand[(kind + 1) % len(hand)] += 1
    changed = dataclasses.replace(
        state, hands=(tuple(hand), *state.hands[1:])
    )  # not a legal state, only different bytes
    assert _request_bytes(changed, 0) != _request_bytes(state, 0)
