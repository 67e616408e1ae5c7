"""Reproducible games: ``ttr play --seed N`` replays the same game against the sample bots,
because every seat gets ``StartGameRequest.bot_seed``, derived one way from the game seed and
the seat, and the sample bots draw all their randomness from it; the game seed itself (it
orders the decks) never reaches a bot."""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from collections.abc import Iterator, Sequence
from concurrent import futures
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message
from hypothesis import given
from hypothesis import strategies as st

from referee.games.board import load_ruleset, wire
from referee.games.registry import load
from referee.hosting.launcher import LaunchedBot, launch
from referee.match import Match, SeatBot
from sdk import Game, StrategyBot
from sdk.bot import BotServicer
from sdk.serve import start_server
from sdk.strategies import CardRandomStrategy, RandomStrategy
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = [str(ROOT / "sample_bots" / name) for name in ("random", "greedy", "planner")]

#: What may differ between two records of one seed: the run's own id, the wall-clock times,
#: the address each bot listened on (a fresh socket or port per run) and how long each
#: answer took. Every other field -- the deal, every action and event, faults, scores -- must
#: be the same.
PER_RUN = {"game_id", "started_at", "finished_at", "seats/*/address", "actions/*/ms"}
#: A bot entered by address (not by folder) is named by its address, without a version, and
#: its output is not the referee's to read (a folder's bot's first lines name its address).
ENTERED = {"seats/*/name", "seats/*/version", "actions/*/lines"}


def _differences(a: Any, b: Any, path: str = "") -> Iterator[str]:
    """The paths where two JSON values differ (list indices written ``*``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            sub = f"{path}/{key}" if path else key
            if key not in a or key not in b:
                yield sub
            else:
                yield from _differences(a[key], b[key], sub)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for x, y in zip(a, b, strict=True):
            yield from _differences(x, y, f"{path}/*")
    elif a != b:
        yield path


@pytest.fixture(scope="module")
def long_lived() -> Iterator[list[LaunchedBot]]:
    """The sample bots as processes that serve many games (a second run of a seed meets bots
    that have already played other games: their play must not depend on it)."""
    with ExitStack() as stack:
        yield [stack.enter_context(launch(folder, python=sys.executable)) for folder in SAMPLES]


@pytest.mark.parametrize("variant", ["usa", "cardgame"])
def test_ttr_play_with_a_seed_replays_the_same_game(
    variant: str,
    long_lived: list[LaunchedBot],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    first, second, other = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    args = ["play", "--variant", variant, "--json"]
    # fresh bot processes from the folders (sandboxed, as a user runs it) ...
    assert cli_main([*args, "--seed", "5", "--record", str(first), *SAMPLES]) == 0
    # ... then the long-lived ones, after another game in between
    addresses = [b.address for b in long_lived]
    assert cli_main([*args, "--seed", "6", "--record", str(other), *addresses]) == 0
    assert cli_main([*args, "--seed", "5", "--record", str(second), *addresses]) == 0
    capsys.readouterr()
    a, b, c = (json.loads(p.read_text()) for p in (first, second, other))
    assert a["faults"] == [] and len(a["actions"]) > 50
    assert set(_differences(a, b)) <= PER_RUN | ENTERED
    # the check can fail: another seed is another game
    assert set(_differences(a, c)) - PER_RUN - ENTERED


def test_the_sample_bots_play_differently_with_another_bot_seed() -> None:
    """What makes the replay above meaningful: the random bot's choices follow its bot seed,
    not only the deal (same deal, two bot seeds, two different games)."""
    ruleset = load_ruleset("usa")
    games = []
    for bot_seed in (1, 2):
        strategy = RandomStrategy()
        strategy.new_game(ruleset, 0, bot_seed)
        games.append([strategy.rng.random() for _ in range(3)])
    assert games[0] != games[1]


@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_bot_seed_differs_per_seat_and_is_not_the_seed(seed: int) -> None:
    seeds = [wire.bot_seed(seed, seat) for seat in range(5)]
    assert len(set(seeds)) == 5
    assert seed not in seeds
    assert all(0 <= s < 2**64 for s in seeds)
    assert seeds == [wire.bot_seed(seed, seat) for seat in range(5)]  # a function of both


def test_bot_seed_is_pinned() -> None:
    """Bots in other languages may rely on it: SHA-256 of ``ttr-arena/bot-seed/v1\\0`` +
    ``"SEED/SEAT"``, the first 8 bytes big-endian."""
    digest = hashlib.sha256(b"ttr-arena/bot-seed/v1\0" + b"5/1").digest()
    assert wire.bot_seed(5, 1) == int.from_bytes(digest[:8], "big")


class _Recording(BotServicer):
    """The SDK's servicer, keeping every request exactly as it arrived."""

    def __init__(self, bot: StrategyBot) -> None:
        super().__init__(bot)
        self.requests: list[Message] = []

    def StartGame(
        self, request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.StartGameResponse:
        self.requests.append(request)
        return super().StartGame(request, context)

    def Act(
        self, request: bot_service_pb2.ActRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.ActResponse:
        self.requests.append(request)
        return super().Act(request, context)

    def EndGame(
        self, request: bot_service_pb2.EndGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.EndGameResponse:
        self.requests.append(request)
        return super().EndGame(request, context)


class _SeedKeeper(StrategyBot):
    def __init__(self) -> None:
        super().__init__(RandomStrategy, CardRandomStrategy)
        self.bot_seeds: dict[int, int] = {}

    def on_start(self, game: Game) -> None:
        super().on_start(game)
        self.bot_seeds[game.seat] = game.bot_seed


def _integers(msg: Message) -> Iterator[int]:
    """Every integer in a message, however deep."""
    for _field, value in msg.ListFields():
        values: Sequence[Any] = value if isinstance(value, Sequence) else [value]
        for v in values:
            if isinstance(v, Message):
                yield from _integers(v)
            elif isinstance(v, int) and not isinstance(v, bool):
                yield v


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


@pytest.mark.parametrize("variant", ["usa", "cardgame"])
def test_the_game_seed_never_reaches_a_bot(variant: str) -> None:
    seed = 0x1D2C_3B4A_5968_7766  # distinctive: no count or index in a game comes near it
    bot = _SeedKeeper()
    server = grpc.server(futures.ThreadPoolExecutor(4))
    recording = _Recording(bot)
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(recording, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        seats = [SeatBot("keeper", "1", f"127.0.0.1:{port}")] * 3
        result = Match(load(variant), seats, seed).run()
    finally:
        server.stop(0)
    assert result.faults == []
    assert bot.bot_seeds == {seat: wire.bot_seed(seed, seat) for seat in range(3)}
    assert len(set(bot.bot_seeds.values())) == 3
    starts = [r for r in recording.requests if isinstance(r, bot_service_pb2.StartGameRequest)]
    assert len(starts) == 3 and all(r.HasField("bot_seed") for r in starts)
    encodings = [
        _varint(seed),
        struct.pack("<Q", seed),
        struct.pack(">Q", seed),
        str(seed).encode(),
        f"{seed:x}".encode(),
    ]
    assert len(recording.requests) > 50
    for request in recording.requests:
        assert seed not in set(_integers(request))
        data = request.SerializeToString()
        assert not any(e in data for e in encodings)


def test_an_sdk_bot_without_a_bot_seed_still_gets_one() -> None:
    """From an older referee (no ``bot_seed`` field): a seed derived from the game id."""
    bot = _SeedKeeper()
    running = start_server(bot, "127.0.0.1:0")
    try:
        with grpc.insecure_channel(running.address) as channel:
            stub = bot_service_pb2_grpc.BotServiceStub(channel)
            request = bot_service_pb2.StartGameRequest(
                game_id="old", variant="usa@1", seat=0, num_seats=2
            )
            game_map, rules = wire.static_bytes(load_ruleset("usa"))
            request.game_map.MergeFromString(game_map)
            request.rules.MergeFromString(rules)
            stub.StartGame(request, timeout=5)
    finally:
        running.stop(grace=0)
    assert bot.bot_seeds[0] != 0
