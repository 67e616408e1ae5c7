"""Hostile bot: answers with giant and bloated messages, one kind per Act call, then plays
normally. ``mb`` (default 3) is the size of each bloat, under gRPC's 4 MB default receive
limit; one answer is 10 MB, over it.

Act calls: 1. a ``request_id`` of ``mb`` MB (a wrong echo); 2. a right answer with ``mb`` MB of
unknown fields; 3. a 10 MB ``request_id``; 4. an error status whose details are ``mb`` MB;
5. ``keep_tickets`` listing one ticket ``mb`` MB worth of times; 6. ``keep_tickets`` with 200,000
distinct tickets; 7-9: a 60 KB request_id, 60 KB error details, one ticket listed 30,000 times
(under a 64 KB cap on answers, so they reach the checks whose messages go in the record).
StartGame and EndGame answers carry ``mb`` MB of unknown fields.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import grpc
from google.protobuf.message import Message

from sdk.bot import BotServicer
from ttr.v1 import bot_service_pb2

if TYPE_CHECKING:
    from tests.hostile_bots._common import HostileBot, main, report, targets
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, main, report, targets

M = TypeVar("M", bound=Message)
MB = 1 << 20
SMALL = 60_000  #: under a 64 KB cap on answers: what a referee that caps them still reads


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def bloated(message: M, size: int) -> M:
    """``message`` plus ``size`` bytes of an unknown length-delimited field (number 9999)."""
    extra = _varint(9999 << 3 | 2) + _varint(size) + b"U" * size
    return type(message).FromString(message.SerializeToString() + extra)


class GiantServicer(BotServicer):
    calls = 0

    def StartGame(
        self, request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.StartGameResponse:
        reply = super().StartGame(request, context)
        report("StartGame answer with unknown fields", f"sent {size()} bytes")
        return bloated(reply, size())

    def EndGame(
        self, request: bot_service_pb2.EndGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.EndGameResponse:
        reply = super().EndGame(request, context)
        return bloated(reply, size())

    def Act(
        self, request: bot_service_pb2.ActRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.ActResponse:
        self.calls += 1
        n = size()
        reply = super().Act(request, context)
        if self.calls == 1:
            reply.request_id = "A" * n
            report("Act answer with a giant request_id", f"sent {n} bytes")
        elif self.calls == 2:
            report("Act answer with unknown fields", f"sent {n} bytes")
            return bloated(reply, n)
        elif self.calls == 3:
            reply.request_id = "B" * (10 * MB)
            report("Act answer over the 4 MB limit", f"sent {10 * MB} bytes")
        elif self.calls == 4:
            report("Act error status with giant details", f"sent {n} bytes")
            context.abort(grpc.StatusCode.INTERNAL, "E" * n)
        elif self.calls == 5:
            reply = bot_service_pb2.ActResponse(request_id=request.request_id)
            reply.action.keep_tickets.tickets.extend([1] * (n // 2))
            report("Act answer listing one ticket again and again", f"sent {n // 2} tickets")
        elif self.calls == 6:
            reply = bot_service_pb2.ActResponse(request_id=request.request_id)
            reply.action.keep_tickets.tickets.extend(range(200_000))
            report("Act answer keeping 200000 tickets", "sent")
        elif self.calls == 7:
            reply.request_id = "C" * SMALL
            report("Act answer with a 60 KB request_id", f"sent {SMALL} bytes")
        elif self.calls == 8:
            report("Act error status with 60 KB details", f"sent {SMALL} bytes")
            context.abort(grpc.StatusCode.INTERNAL, "F" * SMALL)
        elif self.calls == 9:
            reply = bot_service_pb2.ActResponse(request_id=request.request_id)
            reply.action.keep_tickets.tickets.extend([1] * (SMALL // 2))
            report("Act answer listing one ticket 30000 times", "sent")
        return reply


def size() -> int:
    return int(float(targets().get("mb", 3)) * MB)


if __name__ == "__main__":
    # The SDK builds its servicer from this name (``sdk.serve`` the attribute is the function).
    vars(importlib.import_module("sdk.serve"))["BotServicer"] = GiantServicer
    main(HostileBot())
