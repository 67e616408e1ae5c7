"""What one answer can cost the referee: real bot servers that send giant, malformed and
escaping answers, status details and replies, against the bounds of ``referee.match``.

A bot controls the size and content of what it sends; before these bounds, one rejected
answer's payload was copied into the fault message, and 16 such answers made a 595 MB record.
Now every reply over :data:`~referee.match.MAX_ANSWER_BYTES` is cut off by gRPC, and every
fault's rule and message (and the Rejection sent back) goes through
:func:`~referee.match.bounded`. The bots here answer with raw bytes (:class:`RawBot`), so
they can send what no generated servicer would; ``tests/referee/test_fuzz.py`` reuses them.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from referee.games.board import (
    MalformedActionError,
    apply,
    legal_actions,
    load_ruleset,
    new_game,
    wire,
)
from referee.games.protocol import (
    MAX_MESSAGE_CHARS,
    MAX_RULE_CHARS,
    bounded,
)
from referee.match import (
    MAX_ANSWER_BYTES,
    MAX_FAULTS_PER_DECISION,
    Clock,
    Fault,
    MatchResult,
    SeatBot,
    play_match,
)
from referee.replay import verify
from tests.helpers import RULESETS, VARIANTS
from ttr.v1 import actions_pb2, bot_service_pb2, cards_pb2

ROOT = Path(__file__).resolve().parents[2]
USA = load_ruleset("usa")
FAST = Clock(move_ms=500, bank_ms=2000)
MB = 1 << 20


# ---------------------------------------------------------------------------------------------
# a bot that answers with bytes


@dataclass(frozen=True)
class Abort:
    """A reply that is an error status: the handler aborts with ``code`` and ``details``."""

    code: grpc.StatusCode
    details: str


Reply = bytes | Abort
ActPolicy = Callable[[bot_service_pb2.ActRequest, int], Reply]


def legal_answer(request: bot_service_pb2.ActRequest, call: int = 0) -> bytes:
    """The first legal action, as the referee wants it."""
    return answer(request.request_id, legal_action_index=0)


def answer(request_id: str, **fields: Any) -> bytes:
    return bot_service_pb2.ActResponse(request_id=request_id, **fields).SerializeToString()


def length_field(number: int, payload: bytes) -> bytes:
    """Field ``number`` as a length-delimited field holding ``payload``: an unknown field for
    a number the message does not define, or a sub-message spliced in by hand."""
    return wire_varint(number << 3 | 2) + wire_varint(len(payload)) + payload


def wire_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


class RawBot:
    """An in-process bot whose replies are bytes (or an :class:`Abort`) chosen by the test:
    ``act(request, call_number)`` answers every Act; ``start`` and ``end`` are the StartGame
    and EndGame replies."""

    def __init__(self, act: ActPolicy = legal_answer, start: Reply = b"", end: Reply = b"") -> None:
        self.act = act
        self.start = start
        self.end = end
        self.requests: list[bot_service_pb2.ActRequest] = []
        self.started = 0
        self.ended = 0
        self._lock = threading.Lock()

    def handler(self) -> grpc.GenericRpcHandler[Any, bytes]:
        def raw(data: bytes) -> bytes:
            return data

        def start(
            request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
        ) -> bytes:
            self.started += 1
            return self._reply(self.start, context)

        def act(request: bot_service_pb2.ActRequest, context: grpc.ServicerContext) -> bytes:
            with self._lock:
                self.requests.append(request)
                call = len(self.requests) - 1
            return self._reply(self.act(request, call), context)

        def end(request: bot_service_pb2.EndGameRequest, context: grpc.ServicerContext) -> bytes:
            self.ended += 1
            return self._reply(self.end, context)

        return grpc.method_handlers_generic_handler(
            "ttr.v1.BotService",
            {
                "StartGame": grpc.unary_unary_rpc_method_handler(
                    start,
                    request_deserializer=bot_service_pb2.StartGameRequest.FromString,
                    response_serializer=raw,
                ),
                "Act": grpc.unary_unary_rpc_method_handler(
                    act,
                    request_deserializer=bot_service_pb2.ActRequest.FromString,
                    response_serializer=raw,
                ),
                "EndGame": grpc.unary_unary_rpc_method_handler(
                    end,
                    request_deserializer=bot_service_pb2.EndGameRequest.FromString,
                    response_serializer=raw,
                ),
            },
        )

    @staticmethod
    def _reply(reply: Reply, context: grpc.ServicerContext) -> bytes:
        if isinstance(reply, Abort):
            context.abort(reply.code, reply.details)
        return reply


@contextmanager
def serve_raw(bots: list[RawBot]) -> Iterator[list[SeatBot]]:
    """Each bot on its own real server on a free port, for as long as the block runs."""
    with ExitStack() as stack:
        seats = []
        for i, bot in enumerate(bots):
            server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
            server.add_generic_rpc_handlers((bot.handler(),))
            port = server.add_insecure_port("127.0.0.1:0")
            server.start()
            stack.callback(server.stop, 0)
            seats.append(SeatBot(f"raw{i}", "0", f"127.0.0.1:{port}"))
        yield seats


def play_raw(bots: list[RawBot], seed: int = 5, record: Path | None = None) -> MatchResult:
    with serve_raw(bots) as seats:
        return play_match(USA, seats, seed, FAST, record_path=record, call_s=2.0)


def assert_bounded(faults: list[Fault] | list[dict[str, Any]]) -> None:
    for f in faults:
        rule, message = (f.rule, f.message) if isinstance(f, Fault) else (f["rule"], f["message"])
        assert len(rule) <= MAX_RULE_CHARS and rule.isprintable(), f
        assert len(message) <= MAX_MESSAGE_CHARS and message.isprintable(), f


# ---------------------------------------------------------------------------------------------
# the one bounding helper


def test_short_printable_text_is_kept_as_it_is() -> None:
    assert bounded("claim.taken") == "claim.taken"
    assert bounded("") == ""
    text = "é" * MAX_MESSAGE_CHARS
    assert bounded(text) == text


def test_long_text_is_cut_with_a_marker_naming_its_length() -> None:
    text = "a" * 5 * MB
    out = bounded(text)
    assert len(out) == MAX_MESSAGE_CHARS
    assert out.startswith("a" * 100) and out.endswith(f"...[cut: {5 * MB} chars]")
    assert bounded("b" * (MAX_RULE_CHARS + 1), MAX_RULE_CHARS).endswith("chars]")
    assert len(bounded("b" * 1000, 10)) == 10  # a limit shorter than the marker still holds


def test_non_printable_characters_are_escaped_within_the_limit() -> None:
    assert bounded("a\nb\x00c\u200bd") == "a\\nb\\x00c\\u200bd"
    out = bounded("\x07" * 100, 64)
    assert len(out) <= 64 and out.isprintable() and out.startswith("\\x07\\x07")
    assert out.endswith("...[cut: 100 chars]")
    assert bounded("\udc80") == "\\udc80"  # a lone surrogate (undecodable bytes) too


def test_bounding_looks_only_at_the_start_of_the_text() -> None:
    text = "\x07" * 20 * MB  # escaping all of it would take seconds
    start = time.perf_counter()
    bounded(text)
    assert time.perf_counter() - start < 0.05


def test_the_wire_names_a_repeated_ticket_not_the_whole_list() -> None:
    msg = actions_pb2.Action(keep_tickets=actions_pb2.KeepTickets(tickets=[5] * 60_000))
    with pytest.raises(MalformedActionError) as e:
        wire.action_from_pb(msg)
    assert e.value.rule == "action.tickets"
    assert e.value.message == "keep_tickets lists ticket 5 twice"


# ---------------------------------------------------------------------------------------------
# the size limit


def test_the_largest_legitimate_answer_is_far_below_the_limit() -> None:
    """Every legal action of random games of every variant, as a full-action answer with the
    longest request id a game makes: the limit leaves a margin of hundreds."""
    rng = random.Random(11)
    game_id = uuid.uuid4().hex  # the referee's default game id
    request_id = f"{game_id}/{99_999}/{MAX_FAULTS_PER_DECISION}"
    largest = 0
    for name in VARIANTS:
        ruleset = RULESETS[name]
        for seats in (ruleset.min_players, ruleset.max_players):
            state = new_game(ruleset, seats, rng.randrange(1000))
            while not state.is_over:
                legal = legal_actions(state)
                for action in legal:
                    reply = answer(request_id, action=wire.action_to_pb(action))
                    largest = max(largest, len(reply))
                state = apply(state, rng.choice(legal))
    # a ticket choice in Mega (five tickets) is the longest; under 100 bytes
    assert 50 < largest < 100
    assert largest * 500 < MAX_ANSWER_BYTES
    assert bot_service_pb2.StartGameResponse().ByteSize() == 0
    assert bot_service_pb2.EndGameResponse().ByteSize() == 0


def test_an_over_size_answer_is_rejected_and_the_bot_may_answer_again() -> None:
    giant = answer("y" * 10 * MB, legal_action_index=0)

    def giant_once(request: bot_service_pb2.ActRequest, call: int) -> Reply:
        return giant if call == 3 else legal_answer(request)

    bot = RawBot(giant_once)
    start = time.monotonic()
    result = play_raw([bot, RawBot()])
    assert time.monotonic() - start < 30
    assert result.final.is_over
    assert [(f.seat, f.kind, f.rule) for f in result.faults] == [
        (0, "rejected", "answer.too_large")
    ]
    assert str(MAX_ANSWER_BYTES) in result.faults[0].message
    assert result.defaults == [0, 0]  # the channel still works: the retry was accepted
    retry = bot.requests[4]
    assert retry.rejection.rule == "answer.too_large"
    assert retry.rejection.message == result.faults[0].message


def test_bytes_that_are_not_an_answer_are_rejected() -> None:
    def garbage(request: bot_service_pb2.ActRequest, call: int) -> Reply:
        # field 1 (request_id) declared 2 bytes long, holding invalid UTF-8
        return b"\x0a\x02\xff\xfe" if call % 2 == 0 else legal_answer(request)

    result = play_raw([RawBot(garbage), RawBot()])
    assert result.final.is_over
    assert {(f.seat, f.kind, f.rule) for f in result.faults} == {
        (0, "rejected", "answer.malformed")
    }
    assert result.defaults == [0, 0]
    assert_bounded(result.faults)


# ---------------------------------------------------------------------------------------------
# every fault's text is bounded


def test_a_long_request_id_is_quoted_only_in_part() -> None:
    def long_id(request: bot_service_pb2.ActRequest, call: int) -> Reply:
        if call == 0:
            return answer("\x07\n" * 30_000, legal_action_index=0)  # 60 KB: under the limit
        return legal_answer(request)

    bot = RawBot(long_id)
    result = play_raw([bot, RawBot()])
    (fault,) = result.faults
    assert fault.rule == "answer.request_id"
    assert fault.message.startswith("request_id '\\x07\\n\\x07\\n")
    assert "...[cut: 60000 chars]" in fault.message
    assert fault.message.endswith(f"does not echo {bot.requests[0].request_id!r}")
    assert_bounded(result.faults)
    assert bot.requests[1].rejection.message == fault.message


def test_huge_status_details_are_bounded_in_every_call() -> None:
    """Status details a bot sets: over gRPC's own metadata limit (16 KB) the call fails with
    RESOURCE_EXHAUSTED; under it they arrive whole, and the fault keeps the start."""
    huge = Abort(grpc.StatusCode.INTERNAL, "x" * 5 * MB)
    long = Abort(grpc.StatusCode.UNKNOWN, "\x07\n\t" * 800)  # 2,400 chars, under 8 KB coded

    def aborts(request: bot_service_pb2.ActRequest, call: int) -> Reply:
        return (huge, long)[call] if call < 2 else legal_answer(request)

    result = play_raw([RawBot(aborts, start=huge, end=long), RawBot()])
    assert result.final.is_over
    assert {f.seat for f in result.faults} == {0}
    assert [(f.kind, f.rule) for f in result.faults] == [
        ("start_game", "RESOURCE_EXHAUSTED"),
        ("crash", "RESOURCE_EXHAUSTED"),
        ("crash", "UNKNOWN"),
        ("end_game", "UNKNOWN"),
    ]
    assert result.faults[2].message.startswith("\\x07\\n\\t\\x07")
    assert result.faults[2].message.endswith("...[cut: 2400 chars]")
    assert_bounded(result.faults)


def test_ten_megabyte_start_and_end_replies_are_faults_of_that_seat() -> None:
    ten = length_field(99, b"z" * 10 * MB)  # a valid (empty) reply with 10 MB more
    result = play_raw([RawBot(), RawBot(start=ten, end=ten)])
    assert result.final.is_over
    assert [(f.seat, f.kind, f.rule) for f in result.faults] == [
        (1, "start_game", "RESOURCE_EXHAUSTED"),
        (1, "end_game", "RESOURCE_EXHAUSTED"),
    ]
    assert "larger than max" in result.faults[0].message


# ---------------------------------------------------------------------------------------------
# the hostile tester's game: record size and the referee's memory


def giant_answers() -> ActPolicy:
    """Seat 0's attack: 24 rejected answers, most of them several MB (a long request id,
    unknown fields around and inside a valid answer, a ticket list, 10 MB), the rest just
    under the size limit so that their text reaches the fault messages; then it plays."""
    long_id = "\x00é\n" * (MB - 16)  # 4 MB of UTF-8, just under gRPC's default limit
    unknown = length_field(99, b"u" * 3 * MB)
    # A claim whose ClaimRoute message carries the 3 MB, where a message quoting the action
    # would find it (ActResponse.action = 3, Action.claim_route = 3).
    claim = (
        actions_pb2.ClaimRoute(route=1, colour=cards_pb2.CARD_COLOUR_RED).SerializeToString()
        + unknown
    )
    inner = length_field(3, length_field(3, claim))
    ten = answer("y" * 10 * MB, legal_action_index=0)
    many = actions_pb2.Action(keep_tickets=actions_pb2.KeepTickets(tickets=range(MB)))

    def attack(request: bot_service_pb2.ActRequest, call: int) -> Reply:
        rid = request.request_id
        match call % 8:
            case 0:  # at setup: 20,000 distinct tickets never offered (40 KB)
                keep = actions_pb2.KeepTickets(tickets=range(1000, 21_000))
                return answer(rid, action=actions_pb2.Action(keep_tickets=keep))
            case 1:  # the same ticket 60,000 times
                keep = actions_pb2.KeepTickets(tickets=[5] * 60_000)
                return answer(rid, action=actions_pb2.Action(keep_tickets=keep))
            case 2:  # 60 KB of request id
                return answer("\x07" * 60_000, legal_action_index=0)
            case 3:
                return answer(long_id, legal_action_index=0)
            case 4:
                return legal_answer(request) + unknown
            case 5:
                return answer(rid) + inner
            case 6:
                return answer(rid, action=many)
            case _:
                return ten

    def policy(request: bot_service_pb2.ActRequest, call: int) -> Reply:
        return attack(request, call) if call < 24 else legal_answer(request)

    return policy


#: Plays one game in a fresh interpreter, so that its memory is the referee's alone (the bots
#: stay in the test's process): prints the resident memory before ``run()``, its peak during
#: the game (the high-water mark is reset first where the kernel allows) and the result.
_REFEREE = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from referee.match import Clock, Match, SeatBot
    from referee.games.board import load_ruleset

    def kb(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise LookupError(field)

    addresses, record = json.loads(sys.argv[1]), Path(sys.argv[2])
    seats = [SeatBot(f"seat{i}", "0", a) for i, a in enumerate(addresses)]
    clock = Clock(move_ms=2000, bank_ms=10000)
    match = Match(load_ruleset("usa"), seats, 3, clock, record, call_s=5.0)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    before = kb("VmRSS")
    match.run()
    peak, after = kb("VmHWM"), kb("VmRSS")
    print(json.dumps({"before_kb": before, "peak_kb": peak, "after_kb": after}))
    """
)


def referee_in_subprocess(bots: list[RawBot], record: Path) -> dict[str, int]:
    with serve_raw(bots) as seats:
        done = subprocess.run(
            [sys.executable, "-c", _REFEREE, json.dumps([s.address for s in seats]), str(record)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    data: dict[str, int] = json.loads(done.stdout.splitlines()[-1])
    return data


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc (Linux)")
def test_giant_answers_cost_a_few_kb_of_record_and_no_memory(tmp_path: Path) -> None:
    """The hostile tester's game, with four seats: 24 rejected answers of up to 10 MB
    (seat 0), status details of 5 MB and escaping ones (seat 1), 10 MB replies to every call
    (seat 2), and a bot that plays (seat 3). Against the same game between four good bots:
    the record grows by well under 1 KB a fault, the referee's peak memory by a few MB."""
    huge = Abort(grpc.StatusCode.INTERNAL, "d" * 5 * MB)
    escaping = Abort(grpc.StatusCode.UNKNOWN, "\x1b[2J\n" * 500)
    ten = length_field(99, b"z" * 10 * MB)
    ten_answer = answer("y" * 10 * MB, legal_action_index=0)

    def aborts(request: bot_service_pb2.ActRequest, call: int) -> Reply:
        return (huge, escaping)[call % 2] if call < 8 else legal_answer(request)

    def ten_mb(request: bot_service_pb2.ActRequest, call: int) -> Reply:
        return ten_answer if call < 8 else legal_answer(request)

    honest_record = tmp_path / "honest.json"
    honest = referee_in_subprocess([RawBot() for _ in range(4)], honest_record)
    hostile_record = tmp_path / "hostile.json"
    bots = [
        RawBot(giant_answers()),
        RawBot(aborts, start=huge, end=escaping),
        RawBot(ten_mb, start=ten, end=ten),
        RawBot(),
    ]
    hostile = referee_in_subprocess(bots, hostile_record)

    data = json.loads(hostile_record.read_text())
    faults = data["faults"]
    assert data["outcome"]["seats"] and verify(hostile_record) is None  # the game finished
    by_seat = {s: [(f["kind"], f["rule"]) for f in faults if f["seat"] == s] for s in range(4)}
    assert by_seat[0].count(("rejected", "answer.too_large")) == 15
    assert len(by_seat[0]) == 24 and all(k == "rejected" for k, _ in by_seat[0])
    assert by_seat[1][0] == ("start_game", "RESOURCE_EXHAUSTED")
    assert by_seat[1][-1] == ("end_game", "UNKNOWN")
    assert by_seat[1].count(("crash", "RESOURCE_EXHAUSTED")) == 4
    assert by_seat[2] == [("start_game", "RESOURCE_EXHAUSTED")] + [
        ("rejected", "answer.too_large")
    ] * 8 + [("end_game", "RESOURCE_EXHAUSTED")]
    assert by_seat[3] == []
    assert_bounded(faults)

    fault_bytes = len(json.dumps(faults, indent=1))
    assert fault_bytes < 600 * len(faults)
    grown = hostile_record.stat().st_size - honest_record.stat().st_size
    assert grown < 1024 * len(faults), (grown, len(faults))

    honest_mb = (honest["peak_kb"] - honest["before_kb"]) / 1024
    hostile_mb = (hostile["peak_kb"] - hostile["before_kb"]) / 1024
    # Measured: good bots +5 MB; these +22 MB at the peak (gRPC reading the 5 MB status
    # headers, which flow control does not cover), +5 MB after the game. Before the bounds:
    # +139 MB at the peak and a 1.6 MB record; 16 answers of a 3.9 MB request id alone made
    # +373 MB and a 312 MB record.
    assert hostile_mb < honest_mb + 48, (honest_mb, hostile_mb)
    kept_mb = (hostile["after_kb"] - hostile["before_kb"]) / 1024
    assert kept_mb < (honest["after_kb"] - honest["before_kb"]) / 1024 + 16, kept_mb
