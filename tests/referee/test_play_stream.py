"""The Play stream (proto BotService.Play): a bot that offers it is driven through it, and
everything the referee enforces holds as over Act: the same record, the clock, rejections with
new request ids, and the faults of a bot that misbehaves on the stream."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from referee.match import Clock, Match, MatchResult, SeatBot
from sdk import StrategyBot
from sdk.serve import start_server
from sdk.strategies import RandomStrategy
from tests.referee.test_match import FAST, USA, TestBot, first_legal, serve_all
from ttr.v1 import bot_service_pb2

Requests = Iterator[bot_service_pb2.ActRequest]
Responses = Iterator[bot_service_pb2.ActResponse]
#: a hostile stream: (the bot, its requests, the context) -> its answers
PlayPolicy = Callable[["StreamBot", Requests, grpc.ServicerContext], Responses]


def answers_each(bot: StreamBot, requests: Requests, context: grpc.ServicerContext) -> Responses:
    for request in requests:
        yield bot.Act(request, context)


class StreamBot(TestBot):
    """A TestBot that offers Play; ``play`` answers the stream (counted in ``streamed``)."""

    __test__ = False

    def __init__(self, play: PlayPolicy = answers_each) -> None:
        super().__init__(first_legal)
        self.play = play
        self.streamed = 0
        self.streams = 0

    def StartGame(
        self, request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.StartGameResponse:
        super().StartGame(request, context)
        return bot_service_pb2.StartGameResponse(play_stream=True)

    def Play(self, request_iterator: Requests, context: grpc.ServicerContext) -> Responses:
        self.streams += 1

        def counted() -> Requests:
            for request in request_iterator:
                self.streamed += 1
                yield request

        yield from self.play(self, counted(), context)


def run_streamed(bots: list[TestBot], clock: Clock = FAST, seed: int = 7) -> MatchResult:
    before = threading.active_count()
    with serve_all(bots) as seats:
        result = Match(USA, seats, seed, clock, call_s=1.0).run()
    # every stream's reader thread has ended with the game
    assert threading.active_count() <= before + 8  # gRPC's own pollers may linger
    assert not [t for t in threading.enumerate() if t.name == "ttr-play-watchdog"]
    return result


def _without_timings(record: dict[str, Any]) -> dict[str, Any]:
    for key in ("started_at", "finished_at", "game_id"):
        record.pop(key)
    for entry in record["actions"]:
        entry.pop("ms")
    return record


@pytest.mark.parametrize(("variant", "seed"), [("usa", 3), ("usa", 11), ("cardgame", 5)])
def test_a_stream_game_records_what_the_act_game_records(
    tmp_path: Path, variant: str, seed: int
) -> None:
    from referee.games.registry import load
    from sdk.strategies import CardRandomStrategy

    running = [start_server(StrategyBot(RandomStrategy, CardRandomStrategy)) for _ in range(3)]
    try:
        seats = [SeatBot("random", "1", r.address) for r in running]
        records = []
        for streams in (True, False):
            path = tmp_path / f"{streams}.json"
            Match(load(variant), seats, seed, record_path=path, streams=streams).run()
            records.append(_without_timings(json.loads(path.read_text())))
    finally:
        for r in running:
            r.stop(0)
    assert records[0] == records[1]
    assert records[0]["actions"]


def test_a_bot_that_offers_the_stream_is_driven_through_it() -> None:
    bots: list[TestBot] = [StreamBot(), TestBot()]
    result = run_streamed(bots)
    assert result.faults == []
    stream_bot = bots[0]
    assert isinstance(stream_bot, StreamBot)
    assert stream_bot.streams == 1
    assert stream_bot.streamed == len(stream_bot.requests) > 10  # every decision on the stream
    ids = [r.request_id for r in stream_bot.requests]
    assert len(set(ids)) == len(ids)
    assert len(stream_bot.ended) == 1


def test_rejected_answers_on_the_stream_are_asked_again_with_new_ids() -> None:
    def wrong_then_right(bot: StreamBot, requests: Requests, context: Any) -> Responses:
        for request in requests:
            answer = bot.Act(request, context)
            if request.request_id.endswith("/0"):
                answer.request_id = "nope"  # every first attempt echoes a wrong id
            yield answer

    bots: list[TestBot] = [StreamBot(wrong_then_right), TestBot()]
    result = run_streamed(bots)
    rules = {f.rule for f in result.faults}
    assert rules == {"answer.request_id"}
    assert result.defaults == [0, 0]
    retried = [r for r in bots[0].requests if r.HasField("rejection")]
    assert retried and all(r.request_id.endswith("/1") for r in retried)


def test_a_stream_that_never_answers_times_out_then_act_is_called() -> None:
    def silent(bot: StreamBot, requests: Requests, context: Any) -> Responses:
        for _ in requests:
            pass  # reads every request, answers none
        yield from ()

    bot = StreamBot(silent)
    result = run_streamed([bot, TestBot()], Clock(move_ms=50, bank_ms=100))
    assert [(f.kind, f.rule) for f in result.faults] == [("timeout", "DEADLINE_EXCEEDED")]
    assert result.defaults == [1, 0]
    assert bot.streamed == 1  # then Act for the rest of the game
    assert len(bot.requests) > 10


def test_a_stream_that_goes_silent_mid_game_times_out_at_that_decisions_deadline() -> None:
    # The watchdog sleeps until the deadline it last saw: here the first decision's, long
    # gone by the silent one, whose own deadline it must then wait for and enforce.
    def answers_then_silent(bot: StreamBot, requests: Requests, context: Any) -> Responses:
        for i, request in enumerate(requests):
            if i >= 5:
                continue  # reads the rest, answers none
            yield bot.Act(request, context)

    bot = StreamBot(answers_then_silent)
    result = run_streamed([bot, TestBot()], Clock(move_ms=50, bank_ms=100))
    assert [(f.kind, f.rule) for f in result.faults] == [("timeout", "DEADLINE_EXCEEDED")]
    assert result.defaults == [1, 0]
    assert bot.streamed == 6  # five answered, the sixth timed out; then Act


def test_an_earlier_deadline_than_the_watchdogs_wakes_it() -> None:
    # A stream asked first with a long timeout, then with a short one it never answers: the
    # watchdog, asleep until the long deadline, is woken for the short one.
    from concurrent import futures

    from referee.stream import NO_ANSWER, PlayStream

    def first_only(requests: Iterator[bytes], context: Any) -> Iterator[bytes]:
        for i, _ in enumerate(requests):
            if i == 0:
                yield bot_service_pb2.ActResponse(request_id="a").SerializeToString()

    handler = grpc.method_handlers_generic_handler(
        "ttr.v1.BotService", {"Play": grpc.stream_stream_rpc_method_handler(first_only)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stream = PlayStream(channel, "/ttr.v1.BotService/Play")
            request = bot_service_pb2.ActRequest(request_id="a")
            assert isinstance(stream.ask(request, 600.0), bytes)
            started = time.monotonic()
            assert stream.ask(request, 0.2) is NO_ANSWER
            assert time.monotonic() - started < 60  # not the first deadline's 600 s
            stream.close()
    finally:
        server.stop(None)


def test_a_stream_that_answers_twice_gets_the_extra_answers_rejected() -> None:
    def twice(bot: StreamBot, requests: Requests, context: Any) -> Responses:
        for request in requests:
            answer = bot.Act(request, context)
            yield answer
            yield answer

    result = run_streamed([StreamBot(twice), TestBot()])
    assert result.final.is_over
    assert {(f.kind, f.rule) for f in result.faults} == {("rejected", "answer.request_id")}


@pytest.mark.parametrize(
    ("ending", "fault"),
    [("return", ("crash", "OK")), ("abort", ("crash", "INTERNAL"))],
)
def test_a_stream_that_ends_mid_game_is_a_crash_then_act(
    ending: str, fault: tuple[str, str]
) -> None:
    def ends(bot: StreamBot, requests: Requests, context: grpc.ServicerContext) -> Responses:
        for i, request in enumerate(requests):
            if i == 3:
                if ending == "abort":
                    context.abort(grpc.StatusCode.INTERNAL, "choose raised: boom")
                return
            yield bot.Act(request, context)

    bot = StreamBot(ends)
    result = run_streamed([bot, TestBot()])
    assert [(f.kind, f.rule) for f in result.faults] == [fault]
    assert result.defaults == [1, 0]
    assert bot.streamed == 4 and len(bot.requests) > 10


def test_a_stream_flood_is_bounded_and_the_game_goes_on() -> None:
    flood = bot_service_pb2.ActResponse(request_id="x" * 6_000, legal_action_index=0)

    def floods(bot: StreamBot, requests: Requests, context: Any) -> Responses:
        while context.is_active():  # until the referee cancels the stream
            yield flood

    started = time.monotonic()
    bot = StreamBot(floods)
    result = run_streamed([bot, TestBot()], Clock(move_ms=50, bank_ms=200))
    assert result.final.is_over
    assert bot.streams == 1
    assert result.faults[0].rule == "answer.request_id"  # the flood's first answer, judged
    assert {f.rule for f in result.faults} <= {"answer.request_id", "DEADLINE_EXCEEDED"}
    assert time.monotonic() - started < 30


def test_a_stopped_game_ends_between_decisions_with_its_streams_closed(tmp_path: Path) -> None:
    # A worker whose parent died stops its game through Match(stop=...): the game ends before
    # the next decision, no record is written, and every stream and channel closes (an
    # exception thrown into gRPC from a signal handler once left a channel's close waiting
    # forever).
    from referee.match import GameStopped

    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 12

    running = [start_server(StrategyBot(RandomStrategy)) for _ in range(2)]
    record = tmp_path / "game.json"
    try:
        seats = [SeatBot("random", "1", r.address) for r in running]
        with pytest.raises(GameStopped, match="at decision 12"):
            Match(USA, seats, 3, record_path=record, stop=stop).run()
    finally:
        for r in running:
            r.stop(0)
    assert not record.exists()
    assert not [t for t in threading.enumerate() if t.name == "ttr-play-watchdog"]
