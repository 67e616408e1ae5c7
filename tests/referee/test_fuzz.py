"""Fuzzing the referee: hypothesis writes the answers of a real bot server.

Each example is one game over real gRPC between a fuzzed bot and a good one. The fuzzed bot
answers every Act with the next of a script of replies that hypothesis draws, over and over
until the game ends, so one game puts dozens of fuzzed answers to the referee: random bytes,
answers assembled field by field from valid ones and mutated (a wrong, long or missing
request id; indices past the end, huge or negative; random ``oneof`` members with random field
values; legal actions with a field changed; unknown fields; duplicated fields; cut or flipped
bytes) and error statuses. Its StartGame and EndGame replies are fuzzed too. The referee must
never raise or stall: every game ends, on short clocks, with every fault on the fuzzed seat,
each bounded, and a record that replays.

A second test puts 1,200 fuzzed answers to the answer check alone (twenty per game asked
with ``TTR_FUZZ_EXAMPLES``).

The default suite (and CI) runs a fixed set (``derandomize``: the same cases every run): 20
games and 1,200 checks, about 8 s on two cores; ``TTR_SOAK=1`` adds 60 other fixed games
(tests/soak.py). For a longer run with fresh random cases, set ``TTR_FUZZ_EXAMPLES`` to the
number of games, e.g. ``TTR_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest
tests/referee/test_fuzz.py`` (500 games and 10,000 checks took 2.5 minutes). Add
``--hypothesis-show-statistics`` to see which faults the cases reached.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import grpc
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from referee.games.board import Action, GameState, apply, legal_actions, new_game, wire
from referee.games.protocol import MAX_RULE_CHARS, judge_bytes
from referee.games.registry import BOARD
from referee.match import (
    Clock,
    SeatBot,
    play_match,
)
from referee.replay import verify
from tests.helpers import RULESETS, VARIANTS
from tests.referee.test_faults_bounded import (
    Abort,
    RawBot,
    Reply,
    assert_bounded,
    length_field,
    serve_raw,
    wire_varint,
)
from ttr.v1 import actions_pb2, bot_service_pb2

#: Games in the default suite and in the soak (TTR_SOAK=1); ``TTR_FUZZ_EXAMPLES`` asks for
#: more (and for random ones) in both.
CI_EXAMPLES = 20
SOAK_EXAMPLES = 60
_ASKED = os.environ.get("TTR_FUZZ_EXAMPLES")
#: answers put to the answer check alone: 1,200 fixed, or twenty per game asked
CHECKS = int(_ASKED) * 20 if _ASKED else 1_200
FUZZ = settings(
    max_examples=int(_ASKED) if _ASKED else CI_EXAMPLES,
    derandomize=_ASKED is None,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ_SOAK = settings(FUZZ, max_examples=int(_ASKED) if _ASKED else SOAK_EXAMPLES)
CLOCK = Clock(move_ms=150, bank_ms=500)
T = TypeVar("T")


# ---------------------------------------------------------------------------------------------
# replies: recipes that hypothesis draws and that become bytes once the request is known


@dataclass(frozen=True)
class Field:
    """One field on the wire: an int is a varint (any 64-bit value, so a negative int32 as
    its ten-byte form), bytes are length-delimited."""

    number: int
    value: int | bytes

    def encode(self) -> bytes:
        if isinstance(self.value, int):
            return wire_varint(self.number << 3) + wire_varint(self.value % 2**64)
        return length_field(self.number, self.value)


def encode(fields: Sequence[Field]) -> bytes:
    return b"".join(f.encode() for f in fields)


@dataclass(frozen=True)
class Echo:
    """The request's id, with ``suffix`` added (none: the right id)."""

    suffix: str = ""


@dataclass(frozen=True)
class Index:
    """``legal_action_index``: ``valid`` (n mod the number of actions), ``past`` (the number
    of actions + n) or ``raw`` (n itself, up to 2**64 - 1)."""

    how: str
    n: int


@dataclass(frozen=True)
class LegalAction:
    """Legal action ``k`` (mod their number) as a full action, with ``tweak`` fields appended
    to its message (a later scalar wins, a repeated field grows)."""

    k: int
    tweak: tuple[Field, ...]


@dataclass(frozen=True)
class RandomAction:
    """An ``Action`` with member ``kind`` (1-6 are the protocol's, more are unknown) holding
    random fields."""

    kind: int
    fields: tuple[Field, ...]


Part = Index | LegalAction | RandomAction


@dataclass(frozen=True)
class Answer:
    """An ActResponse put together field by field, then mutated at the byte level: ``cut``
    keeps that many bytes, ``flip`` XORs a byte (position mod the length) with a value."""

    request_id: Echo | str | None
    parts: tuple[Part, ...]  #: each written in turn: the last ``oneof`` member wins
    extra: tuple[Field, ...]  #: unknown (or repeated known) fields at the end
    cut: int | None
    flip: tuple[int, int] | None

    def render(self, request: bot_service_pb2.ActRequest) -> bytes:
        out = b""
        if isinstance(self.request_id, Echo):
            out += length_field(1, (request.request_id + self.request_id.suffix).encode())
        elif isinstance(self.request_id, str):
            out += length_field(1, self.request_id.encode("utf-8", "surrogatepass"))
        legal = request.legal_actions
        for part in self.parts:
            match part:
                case Index(how="valid", n=n):
                    out += Field(2, n % len(legal)).encode()
                case Index(how="past", n=n):
                    out += Field(2, len(legal) + n).encode()
                case Index(n=n):
                    out += Field(2, n).encode()
                case LegalAction(k=k, tweak=tweak):
                    action = legal[k % len(legal)]
                    kind = action.WhichOneof("kind")
                    assert kind is not None
                    inner = getattr(action, kind).SerializeToString() + encode(tweak)
                    number = actions_pb2.Action.DESCRIPTOR.fields_by_name[kind].number
                    out += length_field(3, length_field(number, inner))
                case RandomAction(kind=kind, fields=fields):
                    out += length_field(3, length_field(kind, encode(fields)))
        out += encode(self.extra)
        if self.cut is not None:
            out = out[: self.cut]
        if self.flip is not None and out:
            at, mask = self.flip
            out = (
                out[: at % len(out)] + bytes([out[at % len(out)] ^ mask]) + out[at % len(out) + 1 :]
            )
        return out


@dataclass(frozen=True)
class Garbage:
    data: bytes


Recipe = Answer | Garbage | Abort

#: small numbers, the edges of the integer types, and anything
numbers = st.one_of(
    st.integers(0, 12),
    st.sampled_from([2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1, -1, -(2**31)]),
    st.integers(-(2**63), 2**64 - 1),
)
texts = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(codec="utf-8"), min_size=200, max_size=3000),
    st.builds(lambda c, n: c * n, st.characters(), st.integers(1000, 60_000)),
)
fields = st.builds(
    Field,
    st.integers(1, 20),
    st.one_of(numbers, st.binary(max_size=40), st.builds(bytes, st.integers(0, 5000))),
)
#: fields an action's message has (route/slot/tickets 1, colour 2, locomotives 3), as varints
#: or (for tickets) packed
action_fields = st.one_of(
    st.builds(Field, st.integers(1, 3), numbers),
    st.builds(
        lambda xs: Field(1, b"".join(wire_varint(x % 2**64) for x in xs)),
        st.lists(numbers, max_size=30),
    ),
    fields,
)
parts: st.SearchStrategy[Part] = st.one_of(
    st.builds(Index, st.sampled_from(["valid", "past", "raw"]), numbers),
    st.builds(LegalAction, st.integers(0, 1000), st.lists(action_fields, max_size=3).map(tuple)),
    st.builds(RandomAction, st.integers(1, 9), st.lists(action_fields, max_size=4).map(tuple)),
)


def rarely(strategy: st.SearchStrategy[T], otherwise: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """``strategy`` one time in four, else ``otherwise``: most answers must get past the
    request id and the parser, or the checks behind them would hardly be reached."""
    # (st.integers(0, 3) draws 0 almost half the time; sampled_from is even)
    return st.sampled_from([True, True, True, False]).flatmap(
        lambda common: otherwise if common else strategy
    )


answers = st.builds(
    Answer,
    request_id=rarely(
        st.one_of(st.builds(Echo, st.text(min_size=1, max_size=5)), texts, st.none()),
        st.just(Echo()),
    ),
    parts=st.lists(parts, max_size=3).map(tuple),
    extra=rarely(st.lists(fields, min_size=1, max_size=3).map(tuple), st.just(())),
    cut=rarely(st.integers(0, 200), st.none()),
    flip=rarely(st.tuples(st.integers(0, 200), st.integers(1, 255)), st.none()),
)
aborts = st.builds(
    Abort,
    st.sampled_from([c for c in grpc.StatusCode if c is not grpc.StatusCode.OK]),
    st.text(max_size=3000),
)
garbage = st.builds(Garbage, st.binary(max_size=300))
recipes: st.SearchStrategy[Recipe] = rarely(st.one_of(garbage, aborts), answers)
#: StartGame and EndGame replies: empty (right), random bytes, unknown fields, statuses
other_replies: st.SearchStrategy[Reply] = st.one_of(
    st.just(b""),
    st.binary(max_size=200),
    st.lists(fields, max_size=3).map(encode),
    aborts,
)


def reply(recipe: Recipe, request: bot_service_pb2.ActRequest) -> Reply:
    match recipe:
        case Answer():
            return recipe.render(request)
        case Garbage(data=data):
            return data
        case Abort():
            return recipe


# ---------------------------------------------------------------------------------------------
# whole games


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[list[RawBot], list[SeatBot]]]:
    """A fuzzed bot and a good one, served for the whole module (a game per example)."""
    bots = [RawBot(), RawBot()]
    with serve_raw(bots) as seats:
        yield bots, seats


fuzzed_games = given(
    script=st.lists(recipes, min_size=1, max_size=12),
    start=other_replies,
    end=other_replies,
    variant=st.sampled_from(VARIANTS),
    fuzzed=st.integers(0, 1),
    seed=st.integers(0, 2**32),
)


@FUZZ
@fuzzed_games
def test_fuzzed_bot_never_breaks_the_referee(
    servers: tuple[list[RawBot], list[SeatBot]],
    tmp_path_factory: pytest.TempPathFactory,
    script: list[Recipe],
    start: Reply,
    end: Reply,
    variant: str,
    fuzzed: int,
    seed: int,
) -> None:
    play_fuzzed(servers, tmp_path_factory, script, start, end, variant, fuzzed, seed)


@pytest.mark.soak
@FUZZ_SOAK
@fuzzed_games
def test_fuzzed_bot_never_breaks_the_referee_in_more_games(
    servers: tuple[list[RawBot], list[SeatBot]],
    tmp_path_factory: pytest.TempPathFactory,
    script: list[Recipe],
    start: Reply,
    end: Reply,
    variant: str,
    fuzzed: int,
    seed: int,
) -> None:
    """The soak: other fixed cases (hypothesis derives them from the test's name)."""
    play_fuzzed(servers, tmp_path_factory, script, start, end, variant, fuzzed, seed)


def play_fuzzed(
    servers: tuple[list[RawBot], list[SeatBot]],
    tmp_path_factory: pytest.TempPathFactory,
    script: list[Recipe],
    start: Reply,
    end: Reply,
    variant: str,
    fuzzed: int,
    seed: int,
) -> None:
    """One game against a bot that answers with ``script``, checked."""
    bots, addresses = servers
    bot, good = bots
    bot.requests.clear()
    good.requests.clear()
    bot.act = lambda request, call: reply(script[call % len(script)], request)
    bot.start, bot.end = start, end
    seats = list(reversed(addresses)) if fuzzed else addresses
    record = tmp_path_factory.mktemp("fuzz") / "game.json"
    began = time.monotonic()
    result = play_match(RULESETS[variant], seats, seed, CLOCK, record_path=record, call_s=0.5)
    took = time.monotonic() - began
    assert result.final.is_over
    assert {f.seat for f in result.faults} <= {fuzzed}
    assert result.defaults[1 - fuzzed] == 0
    assert_bounded(result.faults)
    # Time is the fuzzed seat's bank plus its move limit per decision, and the calls around.
    assert took < 1.0 + CLOCK.bank_ms / 1000 + result.decisions * CLOCK.move_ms / 1000
    assert verify(record) is None
    for kind_rule in sorted({f"{f.kind} {f.rule}" for f in result.faults}):
        event(kind_rule)  # what the cases reached: pytest --hypothesis-show-statistics


# ---------------------------------------------------------------------------------------------
# the answer check alone: many more cases a second


def states() -> list[GameState]:
    """Positions of every phase in every variant: a game played to its end by the first
    legal action, every 7th state kept."""
    out: list[GameState] = []
    for name in VARIANTS:
        state = new_game(RULESETS[name], RULESETS[name].min_players, 3)
        n = 0
        while not state.is_over:
            if n % 7 == 0:
                out.append(state)
            actions = legal_actions(state)
            state = apply(state, actions[(n * 5) % len(actions)])
            n += 1
    return out


STATES = states()


@settings(FUZZ, max_examples=CHECKS)
@given(
    recipe=rarely(garbage, answers),
    at=st.integers(0, len(STATES) - 1),
)
def test_fuzzed_answers_are_accepted_only_when_legal(recipe: Answer | Garbage, at: int) -> None:
    """The answer judge (``referee.games.protocol.judge_bytes``) on any bytes: a rule id (never
    the bot's text) and a message, or a legal action."""
    state = STATES[at]
    legal = legal_actions(state)
    request_id = "g/0/0"
    request = bot_service_pb2.ActRequest(
        request_id=request_id, legal_actions=wire.legal_actions_to_pb(legal)
    )
    data = reply(recipe, request)
    assert isinstance(data, bytes)
    verdict = judge_bytes(data, request_id, legal, state, BOARD)
    rule, message, action = verdict.rule, verdict.message, verdict.action
    if action is None:
        assert rule and message and len(rule) <= MAX_RULE_CHARS and rule.isprintable()
        event(rule)
    else:
        event("accepted")
        accepted: Action = action
        assert accepted in legal
        apply(state, accepted)
