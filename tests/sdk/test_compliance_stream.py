"""``ttr check`` (sdk.compliance) asks a bot that offers the Play stream on it, as the referee
does, and reports what goes wrong there as it would over Act."""

from __future__ import annotations

from typing import Any

from sdk import StrategyBot
from sdk.compliance import check_bot
from sdk.serve import start_server
from sdk.strategies import RandomStrategy
from tests.referee.test_match import serve_all
from tests.referee.test_play_stream import Requests, Responses, StreamBot


def test_compliance_plays_an_sdk_bot_over_its_stream() -> None:
    running = start_server(StrategyBot(RandomStrategy))
    try:
        report = check_bot(running.address, games=2)
    finally:
        running.stop(0)
    assert report.ok, report.summary()
    assert report.streamed == report.decisions > 0
    assert "on the Play stream" in report.summary()


def test_compliance_reports_a_silent_stream_then_goes_on_over_act() -> None:
    def silent(bot: StreamBot, requests: Requests, context: Any) -> Responses:
        for _ in requests:
            pass
        yield from ()

    bot = StreamBot(silent)
    with serve_all([bot]) as (seat,):
        report = check_bot(seat.address, games=1, move_limit_ms=100)
    assert [f.kind for f in report.faults] == ["timeout"]
    assert report.streamed == 1
    assert len(bot.requests) == report.decisions - 1 > 5
