"""``ttr replay ask``: send one recorded decision's request to a bot again.

:func:`referee.replay.ask_request` rebuilds what the referee sent the seat (its StartGame and
that decision's ActRequest); :func:`ask` sends both to a running bot, with no deadline (the
clock is off: the author may be stepping through the bot in a debugger), and judges the answer
as the referee does (:func:`referee.games.protocol.judge_bytes`). The bot is a folder the
caller started with the launcher, or an address the author runs by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from referee.games.protocol import Verdict, judge_bytes
from referee.match import MAX_ANSWER_BYTES
from referee.replay import Asked
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc


class AskError(Exception):
    """The bot could not be asked (unreachable, or an error status from its handler)."""


@dataclass(frozen=True, slots=True)
class Answer:
    reply: bot_service_pb2.ActResponse | None  #: None when the bytes were not an ActResponse
    verdict: Verdict


_ACT = f"/{bot_service_pb2.DESCRIPTOR.services_by_name['BotService'].full_name}/Act"


def ask(asked: Asked, address: str, timeout_s: float | None = None) -> Answer:
    """StartGame for the asked seat, then the decision's ActRequest; the bot's reply and the
    referee's verdict on it. ``timeout_s`` bounds each call (``None``: no deadline)."""
    options = [("grpc.max_receive_message_length", MAX_ANSWER_BYTES), ("grpc.enable_retries", 0)]
    with grpc.insecure_channel(address, options=options) as channel:
        stub = bot_service_pb2_grpc.BotServiceStub(channel)
        act = channel.unary_unary(
            _ACT,
            request_serializer=bot_service_pb2.ActRequest.SerializeToString,
            response_deserializer=None,
        )
        try:
            stub.StartGame(asked.start_request, timeout=timeout_s)
        except grpc.RpcError as e:
            raise AskError(f"StartGame failed: {_status(e)}") from None
        try:
            data: bytes = act(asked.request, timeout=timeout_s)
        except grpc.RpcError as e:
            raise AskError(f"Act failed: {_status(e)}") from None
    state = asked.step.before
    verdict = judge_bytes(data, asked.request.request_id, asked.legal, state, asked.game.family)
    try:
        reply: bot_service_pb2.ActResponse | None = bot_service_pb2.ActResponse.FromString(data)
    except Exception:  # DecodeError: the verdict says so
        reply = None
    return Answer(reply, verdict)


def _status(e: grpc.RpcError) -> str:
    if isinstance(e, grpc.Call):
        code = e.code()
        return f"{code.name if code else '?'}: {e.details() or ''}"
    return str(e)
