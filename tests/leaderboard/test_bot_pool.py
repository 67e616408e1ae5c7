"""The worker's bot pool keeps the referee's channel to each bot process across its games."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import grpc
import pytest

from leaderboard.worker import BotPool
from referee.games.board import load_ruleset
from referee.games.record import Fault
from referee.games.registry import load
from referee.hosting.sandbox import SandboxConfig
from referee.match import Match
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
RANDOM = str(ROOT / "sample_bots" / "random")
UNSANDBOXED = SandboxConfig(enabled=False)


def _game(pool: BotPool, seed: int) -> Match:
    seats = [pool.seat(RANDOM, "random", "1", copy=i) for i in range(2)]
    match = Match(
        load_ruleset("usa"),
        seats,
        seed,
        channels=lambda i: pool.channel(RANDOM, i),
    )
    result = match.run()
    assert result.faults == [] and result.decisions > 0
    return match


def _closed(channel: grpc.Channel | None) -> bool:
    """Whether gRPC refuses new calls on ``channel`` (it was closed)."""
    assert channel is not None
    try:
        bot_service_pb2_grpc.BotServiceStub(channel).EndGame(
            bot_service_pb2.EndGameRequest(game_id="none"), timeout=5
        )
    except ValueError:  # "Cannot invoke RPC on closed channel!"
        return True
    except grpc.RpcError:  # any answer, even an error status, means it is open
        return False
    return False


def test_a_process_keeps_its_channel_across_games_until_it_is_stopped_or_replaced() -> None:
    """Two games on one pool use the same channel to each process, left open between them
    (a new channel connects first: bench/README.md); a process found dead gets a new one and
    its old one is closed; a process the pool stops for idleness, and every process at
    ``close``, takes its channel with it."""
    pool = BotPool(20.0, UNSANDBOXED, idle_games=2)
    try:
        _game(pool, 1)
        pool.trim([(RANDOM, 0), (RANDOM, 1)])
        first = [pool.channel(RANDOM, i) for i in range(2)]
        assert all(c is not None for c in first) and first[0] is not first[1]
        assert not any(_closed(c) for c in first)
        _game(pool, 2)  # the same channels, still open: the game left them so
        pool.trim([(RANDOM, 0), (RANDOM, 1)])
        assert [pool.channel(RANDOM, i) for i in range(2)] == first

        dead = pool.bots[(RANDOM, 1, 0)].process
        assert dead is not None
        os.killpg(dead.pid, signal.SIGKILL)
        dead.wait(10)
        _game(pool, 3)  # copy 1 restarted: a new process, a new channel
        pool.trim([(RANDOM, 0), (RANDOM, 1)])
        assert pool.channel(RANDOM, 0) is first[0]
        replaced = pool.channel(RANDOM, 1)
        assert replaced is not first[1] and _closed(first[1]) and not _closed(replaced)

        pool.seat(RANDOM, "random", "1")  # copy 1 sits out two games: stopped
        pool.trim([(RANDOM, 0)])
        pool.trim([(RANDOM, 0)])
        assert (RANDOM, 1, 0) not in pool.bots and _closed(replaced)
        kept = pool.channel(RANDOM, 0)
        assert kept is first[0] and not _closed(kept)
    finally:
        pool.close()
    assert _closed(first[0]) and not pool.channels


@pytest.mark.parametrize("variant", ["usa", "cardgame"])
@pytest.mark.parametrize("kept", [False, True])
def test_a_game_closes_only_the_channels_it_opened(
    kept: bool, variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = BotPool(20.0, UNSANDBOXED)
    try:
        seats = [pool.seat(RANDOM, "random", "1", copy=i) for i in range(2)]
        opened: list[grpc.Channel | None] = []
        if kept:
            channels = [pool.channel(RANDOM, i) for i in range(2)]
            Match(load(variant), seats, 5, channels=lambda i: channels[i]).run()
            opened = list(channels)
        else:
            import referee.match as match_module

            real = match_module.bot_channel

            def spy(address: str) -> grpc.Channel:
                channel = real(address)
                opened.append(channel)
                return channel

            monkeypatch.setattr(match_module, "bot_channel", spy)
            Match(load(variant), seats, 5).run()
        assert len(opened) == 2
        assert [_closed(c) for c in opened] == [not kept, not kept]
    finally:
        pool.close()


def test_a_seat_that_lost_its_connection_gets_a_new_channel_for_its_next_game() -> None:
    """After a game in which a seat's calls failed UNAVAILABLE (the bot's process alive, its
    connection not), the pool closes that seat's kept channel: gRPC fails every call on a
    channel waiting to reconnect, for up to two minutes of back-off, so the next game would
    lose the seat again where a new channel connects at once. Other faults keep the channel."""
    pool = BotPool(20.0, UNSANDBOXED)
    try:
        _game(pool, 1)
        kept = [pool.channel(RANDOM, i) for i in range(2)]
        pool.drop_failed_channels(
            [(RANDOM, 0), (RANDOM, 1)],
            [
                Fault(0, 3, 1, "rejected", "answer.unset", "no action"),
                Fault(1, 7, 2, "disconnect", "UNAVAILABLE", "Socket closed"),
            ],
        )
        assert not _closed(kept[0]) and _closed(kept[1])
        _game(pool, 2)  # the same process, a new channel
        assert pool.channel(RANDOM, 0) is kept[0]
        fresh = pool.channel(RANDOM, 1)
        assert fresh is not kept[1] and not _closed(fresh)
    finally:
        pool.close()
