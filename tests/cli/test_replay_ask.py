"""``ttr replay ask``: one recorded decision's request, rebuilt from the record, sent again.

A game is played between in-process bots that keep every request they get; the rebuilt
requests must equal what the referee sent (the clock aside: it is off when asking again), and
``ttr replay ask`` must send that request to a bot folder or to a running address and print the
answer in names with its verdict."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from referee.games.registry import load
from referee.match import Clock, SeatBot, play_match
from referee.replay import ask_request, load_record, start
from sdk import StrategyBot
from sdk.bot import BotServicer
from sdk.strategies import CardRandomStrategy, RandomStrategy
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc
from ttr_arena.cli import main

ROOT = Path(__file__).resolve().parents[2]
RANDOM = str(ROOT / "sample_bots" / "random")
Answer = Callable[[bot_service_pb2.ActRequest], bot_service_pb2.ActResponse]


class Capture(BotServicer):
    """A random SDK bot that keeps every StartGame and Act it is sent; ``answer``, when given,
    replies to Act instead of the bot."""

    def __init__(self, answer: Answer | None = None) -> None:
        super().__init__(StrategyBot(RandomStrategy, CardRandomStrategy))
        self.answer = answer
        self.starts: list[bot_service_pb2.StartGameRequest] = []
        self.acts: list[bot_service_pb2.ActRequest] = []

    def StartGame(self, request: Any, context: Any) -> Any:
        self.starts.append(request)
        return super().StartGame(request, context)

    def Act(self, request: Any, context: Any) -> Any:
        self.acts.append(request)
        if self.answer is not None:
            return self.answer(request)
        return super().Act(request, context)


@contextmanager
def serving(bot: Capture) -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(bot, server)
    checks = health.HealthServicer()
    checks.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(0)


def recorded(tmp_path: Path, variant: str) -> tuple[Path, list[Capture]]:
    bots = [Capture(), Capture()]
    path = tmp_path / f"{variant}.json"
    with serving(bots[0]) as a, serving(bots[1]) as b:
        seats = [SeatBot("random", "1", a), SeatBot("random2", "1", b)]
        play_match(load(variant), seats, 11, Clock(2000, 20000), record_path=path)
    return path, bots


def without_clock(request: bot_service_pb2.ActRequest) -> bot_service_pb2.ActRequest:
    copy = bot_service_pb2.ActRequest()
    copy.CopyFrom(request)
    copy.ClearField("clock")
    return copy


@pytest.fixture(scope="module", params=["usa", "cardgame"])
def game(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return recorded(tmp_path_factory.mktemp(request.param), request.param)


def test_every_rebuilt_request_is_the_one_the_referee_sent(game: Any) -> None:
    path, bots = game
    data = load_record(path)
    replayed = start(data, path)
    sent = {r.request_id: (i, r) for i, bot in enumerate(bots) for r in bot.acts}
    for decision, entry in enumerate(data["actions"]):
        asked = ask_request(replayed, data, path, decision)
        seat, original = sent[f"{data['game_id']}/{decision}/0"]
        assert asked.seat == seat == entry["seat"]
        assert without_clock(asked.request) == without_clock(original), decision
        assert asked.request.clock.move_limit_ms == 2000
        assert asked.start_request == bots[seat].starts[0]


def first_of(data: dict[str, Any], phase: str, seat: int = 1) -> dict[str, Any]:
    return next(a for a in data["actions"] if a["phase"] == phase and a["seat"] == seat)


def test_ask_an_address_sends_the_recorded_request(
    game: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A follow-up decision (a second card, or tickets to keep) of seat 1: ``--nth 2``."""
    path, bots = game
    data = json.loads(path.read_text())
    entry = next(
        a
        for a in data["actions"]
        if a["seat"] == 1 and a["phase"] in ("second_card", "keep_tickets")
    )
    asked_bot = Capture()
    with serving(asked_bot) as address:
        rc = main(
            [
                "replay",
                "ask",
                str(path),
                address,
                "--turn",
                str(entry["turn"]),
                "--seat",
                "1",
                "--nth",
                "2",
            ]
        )
    assert rc == 0
    request_id = f"{data['game_id']}/{entry['decision']}/0"
    original = next(r for r in bots[1].acts if r.request_id == request_id)
    assert [without_clock(r) for r in asked_bot.acts] == [without_clock(original)]
    assert asked_bot.starts == bots[1].starts
    out = capsys.readouterr().out
    assert f"decision {entry['decision']}, turn {entry['turn']}" in out
    assert "legal: the referee accepts it" in out
    assert "\nrecorded: 1:random2 " in out


@pytest.mark.parametrize("variant", ["usa", "cardgame"])
def test_ask_a_sample_bot_folder(
    variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = recorded(tmp_path, variant)
    rc = main(
        ["replay", "ask", str(path), RANDOM, "--turn", "setup", "--seat", "0", "--no-sandbox"]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "answer (legal_action_index" in out and "0:random keeps" in out
    assert "legal: the referee accepts it" in out
    assert "recorded: 0:random keeps" in out


def test_an_illegal_answer_is_named_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = recorded(tmp_path, "usa")
    wild = Capture(
        lambda r: bot_service_pb2.ActResponse(request_id=r.request_id, legal_action_index=999)
    )
    with serving(wild) as address:
        rc = main(["replay", "ask", str(path), address, "--turn", "0", "--seat", "0"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "illegal (answer.index): legal_action_index 999 is out of range" in out
    assert "recorded: 0:random " in out and "differs from the record" in out


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["--turn", "1", "--seat", "0"],
            "--turn 1: that is seat 1's turn; seat 0's turns are 0, 2, 4",
        ),
        (["--turn", "99999", "--seat", "0"], "--turn 99999: the game's turns are 0-"),
        (["--turn", "0", "--seat", "5"], "--seat 5: the game has seats 0-1"),
        (
            ["--turn", "0", "--seat", "0", "--nth", "3"],
            "--nth 3: seat 0 has ",
        ),
        (["--decision", "99999"], "--decision 99999: the record has decisions 0-"),
        (["--decision", "0", "--seat", "1"], "--decision 0 is seat 0's, not seat 1's"),
        (["--turn", "0"], "--turn needs --seat"),
    ],
)
def test_a_decision_the_record_lacks_is_one_line(
    game: Any, args: list[str], error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = game
    with pytest.raises(SystemExit) as exit_:
        main(["replay", "ask", str(path), "127.0.0.1:1", *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert error in err and len(err.splitlines()) == 1, err
