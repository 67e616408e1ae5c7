"""What the contract asks of a bot's answer, judged in one place.

The referee's game loop (``referee.match``) and the SDK's compliance kit (``sdk.compliance``)
both ask a bot to act and must agree on what counts as an answer: the same rule ids, the same
messages, the same order of checks. So the judge lives here, below both, beside the protocol's
default clock, and each caller only decides what a verdict costs the bot (a rejection and a
retry in a game, a fault in a compliance report).

Pure like the engines it calls: protobuf messages in, a :class:`Verdict` out; no sockets, no
clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError

from referee.games.common.errors import IllegalActionError, MalformedActionError
from referee.games.registry import AnyFamily
from ttr.v1 import bot_service_pb2

#: The clock a game gets unless told otherwise (``ttr play``, tournaments, the compliance kit).
DEFAULT_MOVE_MS = 1000
DEFAULT_BANK_MS = 60000
DEFAULT_CALL_S = 5.0  #: deadline of StartGame and EndGame
#: rejected answers in one decision before the seat plays the safe default
MAX_FAULTS_PER_DECISION = 3
MAX_RULE_CHARS = 64  #: the longest fault (and Rejection) rule id kept
MAX_MESSAGE_CHARS = 240  #: the longest fault (and Rejection) message kept
#: the longest line of a bot's or a build's output shown on a terminal (or kept in a record)
ECHO_LINE_CHARS = 1000
#: the most characters of one seat's output a game's record keeps with its decisions (the
#: game's log file keeps up to the sandbox's ``log_kb``): a chatty bot cannot grow every
#: record of a league night by more than this per seat
RECORD_LINES_CHARS = 32_000


def printable(text: str) -> str:
    """``text`` with every non-printable character escaped as in ``repr`` (an escape sequence
    becomes ``\\x1b]0;...``): what a name that came from a bot folder, a store or a record is
    turned into before it reaches a terminal, so it can never move the cursor, retitle the
    window or forge a line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` made safe to record and send back: at most ``limit`` characters on one line.

    Fault messages quote what bots send, and a bot controls its size and content. Non-printable
    characters are escaped as in ``repr`` (a newline becomes ``\\n``), so a message stays one
    readable line; a cut is marked with the original length, so a reader knows text is
    missing. Only the first ``limit`` characters are ever looked at.
    """
    out: list[str] = []
    size = 0
    for c in text[:limit]:
        piece = c if c.isprintable() else repr(c)[1:-1]
        if size + len(piece) > limit:
            break
        out.append(piece)
        size += len(piece)
    else:
        if len(text) <= limit:
            return "".join(out)
    marker = f"...[cut: {len(text)} chars]"
    while out and size + len(marker) > limit:
        size -= len(out.pop())
    return ("".join(out) + marker)[:limit]


@dataclass(frozen=True, slots=True)
class Verdict:
    """An accepted ``action``, or why the answer was refused: a stable ``rule`` id, a
    ``message`` for people, and the ``kind`` of mistake a compliance report groups by
    (``request_id``, ``index``, ``malformed`` or ``illegal``)."""

    action: Any = None
    rule: str = ""
    message: str = ""
    kind: str = ""

    @property
    def accepted(self) -> bool:
        return not self.rule


def _refused(kind: str, rule: str, message: str) -> Verdict:
    return Verdict(None, rule, message, kind)


def judge(
    reply: bot_service_pb2.ActResponse,
    request_id: str,
    legal: Sequence[Any],
    state: Any,
    family: AnyFamily,
) -> Verdict:
    """The verdict on ``reply`` to the request ``request_id`` whose legal actions were
    ``legal`` in ``state``: an index into ``legal``, or a full action the engine accepts."""
    if reply.request_id != request_id:
        # Only the start of the bot's id, which may be long: the message keeps the expected one.
        return _refused(
            "request_id",
            "answer.request_id",
            f"request_id '{bounded(reply.request_id, MAX_RULE_CHARS)}' does not echo "
            f"{request_id!r}",
        )
    answer = reply.WhichOneof("answer")
    if answer is None:
        return _refused(
            "malformed", "answer.unset", "the answer sets neither legal_action_index nor action"
        )
    if answer == "legal_action_index":
        index = reply.legal_action_index
        if index >= len(legal):
            return _refused(
                "index",
                "answer.index",
                f"legal_action_index {index} is out of range (0..{len(legal) - 1})",
            )
        return Verdict(legal[index])
    try:
        action = family.action_from_pb(reply.action)
    except MalformedActionError as e:
        return _refused("malformed", e.rule, e.message)
    if action in legal:
        return Verdict(action)
    try:
        family.apply(state, action)
    except MalformedActionError as e:
        return _refused("malformed", e.rule, e.message)
    except IllegalActionError as e:
        return _refused("illegal", e.rule, e.message)
    return _refused("illegal", "action.not_legal", "the action is not one of the legal actions")


def judge_bytes(
    data: bytes, request_id: str, legal: Sequence[Any], state: Any, family: AnyFamily
) -> Verdict:
    """:func:`judge` of a serialized ``ActResponse``, as the referee reads it off the wire."""
    try:
        reply = bot_service_pb2.ActResponse.FromString(data)
    except DecodeError as e:
        return _refused("malformed", "answer.malformed", f"the answer is not an ActResponse ({e})")
    return judge(reply, request_id, legal, state, family)
