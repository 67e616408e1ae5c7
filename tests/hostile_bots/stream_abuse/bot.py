"""Hostile bot: offers the Play stream (as every SDK bot does) and misuses it.

``mode`` ``twice_then_silent`` (the default): the first request is answered twice (the second
answer arrives as the answer to the next request, with the wrong ``request_id``); the
``silent_at``-th request (default 4) is read and never answered, and the stream is held open
without another word. ``flood``: from the first request on, the stream sends answers with a
60 KB wrong ``request_id`` back to back, never reading another request, until the referee
cancels it. Act, which the referee falls back to, answers normally.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc

from sdk.bot import BotServicer
from ttr.v1 import bot_service_pb2

if TYPE_CHECKING:
    from tests.hostile_bots._common import HostileBot, main, report, targets
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, main, report, targets


class StreamAbuser(BotServicer):
    def Play(
        self,
        request_iterator: Iterator[bot_service_pb2.ActRequest],
        context: grpc.ServicerContext,
    ) -> Iterator[bot_service_pb2.ActResponse]:
        mode = str(targets().get("mode", "twice_then_silent"))
        silent_at = int(targets().get("silent_at", 4))
        for n, request in enumerate(request_iterator, start=1):
            answer = self.Act(request, context)
            if mode == "flood":
                flood = bot_service_pb2.ActResponse(request_id="X" * 60_000)
                sent = 0
                while context.is_active():
                    yield flood
                    sent += 1
                    if sent in (1, 10, 100, 1000):
                        report("flood the Play stream", f"{sent} answers sent")
                report("flood the Play stream", f"cancelled after {sent} answers")
                return
            if n == 1:
                report("answer the first request twice", "sent")
                yield answer
                yield answer
            elif n == silent_at:
                report(f"never answer request {n}", "holding the stream")
                for _ in request_iterator:
                    pass  # reads whatever else comes, answers nothing
                return
            else:
                yield answer


if __name__ == "__main__":
    # The SDK builds its servicer from this name (``sdk.serve`` the attribute is the function).
    vars(importlib.import_module("sdk.serve"))["BotServicer"] = StreamAbuser
    main(HostileBot())
