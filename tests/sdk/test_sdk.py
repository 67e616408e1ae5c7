"""The Python SDK on the wire: sample bots served in-process and as subprocesses, health
checking, and the compliance kit."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.games.board import (
    Action,
    DrawFaceUp,
    SeatView,
    apply,
    available_variants,
    legal_actions,
    load_ruleset,
    new_game,
    outcome,
    view,
    wire,
)
from referee.games.board.events import Event, project
from sdk import Bot
from sdk.bot import ruleset_from_start
from sdk.compliance import check_bot
from sdk.serve import SERVICE_NAME, RunningBot, start_server
from sdk.strategies import RandomStrategy
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
NAMES = ("random", "greedy", "planner")


def _load_sample(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"sample_bot_{name}", SAMPLE_BOTS / name / "bot.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sample_bot(name: str) -> Bot:
    bot = _load_sample(name).BOT
    assert isinstance(bot, Bot)
    return bot


@pytest.fixture
def served() -> Iterator[list[RunningBot]]:
    running: list[RunningBot] = []
    yield running
    for r in running:
        r.stop(grace=0)


def _start(bot: Bot, served: list[RunningBot]) -> RunningBot:
    r = start_server(bot, "127.0.0.1:0")
    served.append(r)
    assert r.port > 0
    return r


def _play(stub: bot_service_pb2_grpc.BotServiceStub, variant: str, seed: int, seat: int) -> int:
    """A whole game driven here, the bot at ``seat``, random players elsewhere; every answer
    must be a legal action. Returns the bot's decisions."""
    ruleset = load_ruleset(variant)
    seats = 2
    game_id = f"test-{variant}-{seed}"
    stub.StartGame(
        bot_service_pb2.StartGameRequest(
            game_id=game_id,
            variant=ruleset.ident,
            seat=seat,
            num_seats=seats,
            game_map=wire.map_to_pb(ruleset),
            rules=wire.rules_to_pb(ruleset),
            clock=bot_service_pb2.ClockSettings(move_limit_ms=1000, bank_ms=10_000),
        ),
        timeout=5,
    )
    other = RandomStrategy(seed)
    other.new_game(ruleset, 1 - seat, seed)
    state = new_game(ruleset, seats, seed)
    pending: list[Event] = [project(e, seat) for e in state.events]
    decisions = 0
    while not state.is_over:
        legal = legal_actions(state)
        if state.seat == seat:
            decisions += 1
            request_id = f"r{decisions}"
            response = stub.Act(
                wire.act_request_pb(
                    view(state, seat),
                    pending,
                    legal,
                    game_id,
                    request_id,
                    bot_service_pb2.Clock(move_limit_ms=1000, bank_left_ms=10_000),
                ),
                timeout=5,
            )
            pending = []
            assert response.request_id == request_id
            assert response.WhichOneof("answer") == "legal_action_index"
            assert response.legal_action_index < len(legal)
            action = legal[response.legal_action_index]
        else:
            action = other.choose(view(state, state.seat), legal, ruleset)
        state = apply(state, action)
        pending.extend(project(e, seat) for e in state.events)
    stub.EndGame(
        bot_service_pb2.EndGameRequest(
            game_id=game_id,
            outcome=wire.outcome_to_pb(outcome(state)),
            events=wire.events_to_pb(pending),
            view=wire.view_to_pb(view(state, seat)),
        ),
        timeout=5,
    )
    return decisions


@pytest.mark.parametrize("name", NAMES)
def test_sample_bot_plays_a_full_game(name: str, served: list[RunningBot]) -> None:
    """Every sample bot plays every board variant legally over the wire (``_play`` checks
    each answer against the legal actions)."""
    r = _start(_sample_bot(name), served)
    with grpc.insecure_channel(r.address) as channel:
        stub = bot_service_pb2_grpc.BotServiceStub(channel)
        for i, variant in enumerate(available_variants()):
            assert _play(stub, variant, seed=7 + i, seat=i % 2) > 5, variant
        assert r.servicer.active_games == 0  # EndGame forgot the games


def test_health_serving_and_unknown_game(served: list[RunningBot]) -> None:
    r = _start(_sample_bot("random"), served)
    with grpc.insecure_channel(r.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", SERVICE_NAME):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        stub = bot_service_pb2_grpc.BotServiceStub(channel)
        with pytest.raises(grpc.RpcError) as info:
            stub.Act(bot_service_pb2.ActRequest(game_id="nope", request_id="x"), timeout=5)
        assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION


@pytest.mark.parametrize("variant", available_variants())
def test_ruleset_from_start_is_the_packaged_one_or_an_equal_rebuild(variant: str) -> None:
    ruleset = load_ruleset(variant)
    request = bot_service_pb2.StartGameRequest(
        variant=ruleset.ident,
        game_map=wire.map_to_pb(ruleset),
        rules=wire.rules_to_pb(ruleset),
    )
    assert ruleset_from_start(request) is ruleset
    request.variant = "homebrew@1"  # not packaged: rebuilt from the message
    rebuilt = ruleset_from_start(request)
    assert rebuilt.ident == "homebrew@1"
    assert wire.map_to_pb(rebuilt) == request.game_map
    assert wire.rules_to_pb(rebuilt) == request.rules
    assert [r.sibling for r in rebuilt.game_map.routes] == [
        r.sibling for r in ruleset.game_map.routes
    ]
    # everything the engine plays by is rebuilt, not only what the messages compare
    assert rebuilt.game_map.cities == ruleset.game_map.cities
    for field in ("deck", "bonuses", "attraction_points", "route_points", "tickets", "trains"):
        assert getattr(rebuilt, field) == getattr(ruleset, field), field


def test_bot_subprocess_from_bot_toml() -> None:
    folder = SAMPLE_BOTS / "random"
    meta = tomllib.loads((folder / "bot.toml").read_text(encoding="utf-8"))
    assert {"name", "version", "author", "description", "command"} <= meta.keys()
    argv = [sys.executable if a == "{python}" else a for a in meta["command"]]
    env = {**os.environ, "TTR_BOT_ADDRESS": "127.0.0.1:0", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on 127.0.0.1:"), line
        address = line.removeprefix("listening on ")
        assert int(address.rpartition(":")[2]) > 0
        report = check_bot(address, games=1)
        assert report.ok, report.summary()
        assert report.decisions > 0
    finally:
        proc.terminate()
        rc = proc.wait(timeout=10)
    assert rc == 0


def test_compliance_passes_the_random_bot(served: list[RunningBot]) -> None:
    r = _start(_sample_bot("random"), served)
    report = check_bot(r.address, games=4, seats=3)
    assert report.ok, report.summary()
    assert report.games == 4
    assert report.decisions > 100
    assert 0 < report.mean_latency_ms <= report.max_latency_ms < 1000
    assert "PASS" in report.summary()


class IllegalBot(Bot):
    """Answers with a face-up slot that does not exist."""

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        return DrawFaceUp(99)


class CrashingBot(Bot):
    def choose(self, view: SeatView, legal: Sequence[Action]) -> int:
        return len(legal)  # one past the end


@pytest.mark.parametrize(
    ("bot", "kinds"),
    [(IllegalBot(), {"illegal", "malformed"}), (CrashingBot(), {"rpc"})],
)
def test_compliance_reports_faults(bot: Bot, kinds: set[str], served: list[RunningBot]) -> None:
    r = _start(bot, served)
    report = check_bot(r.address, games=1)
    assert not report.ok
    assert report.games == 1
    assert len(report.faults) == report.decisions > 0
    assert {f.kind for f in report.faults} <= kinds
    assert "FAIL" in report.summary()


def test_compliance_cli_exit_code(served: list[RunningBot]) -> None:
    from sdk.compliance import main

    good = _start(_sample_bot("random"), served)
    bad = _start(IllegalBot(), served)
    assert main(["--address", good.address, "--games", "1"]) == 0
    assert main(["--address", bad.address, "--games", "1"]) == 1


def test_one_bot_serves_concurrent_games(served: list[RunningBot]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    r = _start(_sample_bot("planner"), served)
    with ThreadPoolExecutor(3) as pool:
        reports = list(pool.map(lambda s: check_bot(r.address, games=1, seed=s), (1, 2, 3)))
    for report in reports:
        assert report.ok, report.summary()
    assert r.servicer.active_games == 0
