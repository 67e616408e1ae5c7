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

import contextlib
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
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


#: What :meth:`PlayStream.ask` returns when no answer came in time.
NO_ANSWER = object()


#: How often a Play stream's watchdog looks at the clock: a stream's timeout comes this much
#: later at most than an Act call's deadline would.
WATCH_S = 0.01


class PlayStream:
    """One seat's ``Play`` stream for one game (proto: a bot that set ``play_stream``), as the
    referee (referee.match) and the compliance kit (sdk.compliance) drive it.

    Sync gRPC cannot read a stream with a deadline, so the caller reads the next answer itself
    and a watchdog thread cancels the stream once the decision's deadline has passed: a
    reader thread handing answers over would cost every message a thread switch (bench/README.md,
    "Wire overhead (issue 25)"). Only one answer is read at a time, so a bot that floods the
    stream is held back by gRPC's flow control.
    """

    def __init__(self, channel: grpc.Channel, method: str) -> None:
        self._requests: queue.SimpleQueue[bot_service_pb2.ActRequest | None] = queue.SimpleQueue()
        play = channel.stream_stream(
            method,
            request_serializer=bot_service_pb2.ActRequest.SerializeToString,
            response_deserializer=None,
        )
        self._call = play(iter(self._requests.get, None))
        self._lock = threading.Lock()
        self._deadline = 0.0  #: time.monotonic() of the pending answer's deadline; 0: none
        self._timed_out = False
        self._done = threading.Event()
        self._watchdog = threading.Thread(target=self._watch, name="ttr-play-watchdog", daemon=True)
        self._watchdog.start()

    def _watch(self) -> None:
        while not self._done.wait(WATCH_S):
            with self._lock:
                if self._deadline and time.monotonic() >= self._deadline:
                    self._timed_out = True
                    self._call.cancel()  # type: ignore[no-untyped-call]
                    return

    def ask(self, request: bot_service_pb2.ActRequest, timeout_s: float) -> object:
        """The next thing the stream brings within ``timeout_s``: an answer's bytes, the
        error that ended the stream, None (the bot ended it) or :data:`NO_ANSWER`. After
        anything but bytes the stream is over."""
        with self._lock:
            self._deadline = time.monotonic() + timeout_s
        got: object
        self._requests.put(request)
        try:
            got = next(self._call)  # type: ignore[call-overload]
        except StopIteration:
            got = None
        except grpc.RpcError as e:
            got = e
        with self._lock:
            self._deadline = 0.0
            if self._timed_out:
                return NO_ANSWER  # whatever came, it came after the deadline
        return got

    def close(self, wait_s: float = 0.0) -> None:
        """End the stream: no more requests; the bot has ``wait_s`` to end it, then it is
        cancelled. The watchdog is gone when this returns."""
        self._requests.put(None)  # also frees gRPC's thread waiting for the next request
        with self._lock:
            if not self._timed_out:
                self._deadline = time.monotonic() + wait_s
        with contextlib.suppress(grpc.RpcError):
            for _ in self._call:
                pass  # answers nobody asked for
        self._done.set()
        self._watchdog.join()
