"""One game between bot servers over gRPC: the game loop, the clocks and the fault policy.

The rules stay pure (``referee.games.board``); everything about time, networks and misbehaving bots
lives here.

Clocks (measured by the referee, from sending a request to receiving its answer): each
decision has ``move_limit_ms``; time beyond it is taken from the seat's game bank
(``bank_ms``). A decision's deadline is therefore ``move limit + bank left``; retries after a
rejection share that deadline.

Fault policy, for each decision:

* A bad answer -- bytes that are not an ``ActResponse`` (``answer.malformed``), one larger
  than :data:`MAX_ANSWER_BYTES` (``answer.too_large``: gRPC stops reading it at the limit), a
  wrong ``request_id`` (``answer.request_id``), no answer set (``answer.unset``), an index
  outside the legal actions (``answer.index``), a malformed action (the wire's rule, e.g.
  ``action.colour``) or an illegal one (the engine's rule, e.g. ``claim.taken``) -- is a fault:
  it is recorded and rejected, and the bot is asked again (a new ``request_id``, ``rejection``
  set) while its time lasts.
* After :data:`MAX_FAULTS_PER_DECISION` faults in one decision, a timeout, or an error
  status from the bot's handler (``crash``), the seat plays the safe default for that
  decision.
* A bot that cannot be reached (``disconnect``: the server is gone) plays the safe default for
  this decision and every later one; it is not called again, not even for EndGame.
* StartGame and EndGame are deadline-guarded too; their failures are recorded, never fatal.
  Their replies have the same size limit (an over-size one is a ``RESOURCE_EXHAUSTED`` fault).

A fault costs the referee a few hundred bytes whatever the bot sent: every fault's rule and
message, and so every ``Rejection`` sent back, go through :func:`bounded` (at most
:data:`MAX_RULE_CHARS` and :data:`MAX_MESSAGE_CHARS` characters, non-printable characters
escaped, a cut marked), because they quote text the bot controls (an echoed ``request_id``,
gRPC status details, the values in a malformed action). Together with the answer size limit,
no answer can grow the record, the store or the referee's memory by more than that.

The safe default (:func:`safe_default`) is the first legal action in the engine's order:
on a turn, draw a blind card if the deck has any (else the first face-up card, else the first
claim, else draw tickets, else pass); for a second card, a blind card if possible, else the
first allowed face-up slot; for a ticket choice (setup or mid-game), the smallest allowed
choice of the lowest-numbered tickets -- the fewest tickets the rules allow, so the fewest
points at risk. It never needs the bot and is always legal.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from referee.games.protocol import (
    DEFAULT_BANK_MS,
    DEFAULT_CALL_S,
    DEFAULT_MOVE_MS,
    MAX_MESSAGE_CHARS,
    MAX_RULE_CHARS,
    bounded,
    judge_bytes,
)

# The record's pieces live below this module (shared with sdk.local); named here too, as before.
from referee.games.protocol import MAX_FAULTS_PER_DECISION as MAX_FAULTS_PER_DECISION
from referee.games.record import RECORD_FORMAT as RECORD_FORMAT
from referee.games.record import Fault as Fault
from referee.games.record import action_entry, game_record, record_text
from referee.games.record import action_from_json as action_from_json
from referee.games.record import outcome_to_json as outcome_to_json
from referee.games.record import to_json as to_json
from referee.games.registry import AnyFamily, AnyRuleset, family_of
from referee.stream import NO_ANSWER, PlayStream
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc

#: The game loop is generic over the rules families (referee/games/registry.py): states, actions,
#: events and outcomes are whatever the game's family makes of them.
GameState = Any
Action = Any
Event = Any
Outcome = Any

#: The most bytes the referee reads of one reply (ActResponse, StartGameResponse,
#: EndGameResponse). The largest legitimate ActResponse is under 100 bytes (a request id and
#: at most a ticket choice; the other two replies are empty), so this leaves a margin of
#: hundreds while keeping what one answer can cost the referee small.
MAX_ANSWER_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class SeatBot:
    """Who plays a seat: the bot's name and version and where it listens.

    ``down`` set (why the bot is not running, e.g. it failed to restart) means the seat has
    no bot: it is never called, plays the safe default throughout, and the reason is
    recorded as its ``start_game`` fault. A tournament uses it so that a bot that cannot be
    started costs its own games, never a stalled run.
    """

    name: str
    version: str
    address: str
    down: str = ""


@dataclass(frozen=True, slots=True)
class Clock:
    move_ms: int = DEFAULT_MOVE_MS
    bank_ms: int = DEFAULT_BANK_MS


@dataclass(slots=True)
class MatchResult:
    variant: str
    seed: int
    game_id: str
    seats: tuple[SeatBot, ...]
    outcome: Outcome
    faults: list[Fault]
    decisions: int
    record_path: Path | None
    final: GameState
    defaults: list[int] = field(default_factory=list)  #: per seat: decisions played by default

    def fault_counts(self) -> list[int]:
        counts = [0] * len(self.seats)
        for f in self.faults:
            counts[f.seat] += 1
        return counts


#: Told of each fault as it happens (``Match(on_fault=...)``): the fault and the safe default
#: the seat then played, or ``None`` when nothing was played for it: a rejected answer whose
#: bot is asked again, or a StartGame/EndGame fault. ``ttr play`` prints a line from it.
FaultHook = Callable[[Fault, Action | None], None]


#: what each fault kind is called in a line for people
FAULT_WORDS = {
    "rejected": "answer rejected",
    "timeout": "timed out",
    "crash": "crashed",
    "disconnect": "disconnected",
    "start_game": "StartGame failed",
    "end_game": "EndGame failed",
}


def fault_words(kind: str, rule: str, message: str) -> str:
    """A fault in words, the one format every line about a fault uses, live (``ttr play``,
    tournaments) or read back from a record (``ttr replay show``, the HTML replay): what
    happened, the rule id or status the bot was sent, and the message."""
    status = f" ({rule})" if rule else ""
    return f"{FAULT_WORDS.get(kind, kind)}{status}: {message}"


def fault_line(fault: Fault, bot: str, played: Action | None) -> str:
    """One line for a person watching a game: when, who, the fault, and what the seat
    played instead (a :data:`FaultHook`'s arguments)."""
    when = {"start_game": "StartGame", "end_game": "EndGame"}.get(fault.kind)
    if played is not None:
        then = f"played the default {played!r}"
        if fault.kind == "disconnect":
            then += " (and will for the rest of the game: the bot is not called again)"
    elif fault.kind == "rejected":
        then = "asked again"
    else:
        then = "no move involved"
    return (
        f"fault: {when or f'turn {fault.turn}'}, seat {fault.seat} {bot}: "
        f"{fault_words(fault.kind, fault.rule, fault.message)}; {then}"
    )


def safe_default(actions: Sequence[Action]) -> Action:
    """The action a seat plays when its bot cannot: the first legal action (module docs)."""
    return actions[0]


# ---------------------------------------------------------------------------------------------
# the game loop

#: Act's and Play's paths, for the channel's raw-bytes calls (the generated stub parses replies)
_SERVICE = bot_service_pb2.DESCRIPTOR.services_by_name["BotService"].full_name
_ACT_METHOD = f"/{_SERVICE}/Act"
_PLAY_METHOD = f"/{_SERVICE}/Play"
#: How long the referee waits for a bot to end its Play stream after the last request before
#: cancelling it (an SDK bot takes a round trip).
_STREAM_CLOSE_S = 1.0


def bot_channel(address: str) -> grpc.Channel:
    """The channel the referee calls a bot through. A caller that plays several games against
    one bot process may keep it across games (``Match(channels=...)``): a game on a new
    channel first connects, which costs its StartGame calls more than the calls themselves
    (bench/README.md)."""
    # gRPC's default is 4 MB per reply: enough for a bot to cost the referee that much
    # memory per answer. Over the limit the call fails (RESOURCE_EXHAUSTED) without
    # reading the rest. Without bandwidth probing the flow-control window stays at its
    # initial 64 KB, so little more than that arrives before the call fails (probing
    # grows it to MBs: a 10 MB answer then cost the referee about 10 MB for a moment).
    # Legitimate replies are tiny, and the window on requests is the bot's.
    # No gRPC retries: the fault policy above is the referee's own (a bot is asked
    # again only after a rejected answer), and the retry machinery costs every call
    # some time (about 4% of a random game's wall time, bench/README.md).
    return grpc.insecure_channel(
        address,
        options=[
            ("grpc.max_receive_message_length", MAX_ANSWER_BYTES),
            ("grpc.http2.bdp_probe", 0),
            ("grpc.enable_retries", 0),
        ],
    )


class _Seat:
    def __init__(self, bot: SeatBot, kept: grpc.Channel | None = None) -> None:
        """``kept``: the caller's channel to the bot, used and left open; else the seat
        opens one, closed at the end of the game."""
        self.bot = bot
        self.gone = bool(bot.down)  #: never call it again (or at all)
        self.channel: grpc.Channel | None = None
        self.owns_channel = kept is None
        if not self.gone:
            self.channel = bot_channel(bot.address) if kept is None else kept
            self.stub = bot_service_pb2_grpc.BotServiceStub(self.channel)
            # Act's reply comes back as bytes and is parsed in _ask: bytes that are not an
            # ActResponse are then a rejected answer (answer.malformed), not a gRPC error.
            self.act: grpc.UnaryUnaryMultiCallable[bot_service_pb2.ActRequest, bytes] = (
                self.channel.unary_unary(
                    _ACT_METHOD,
                    request_serializer=bot_service_pb2.ActRequest.SerializeToString,
                    response_deserializer=None,
                )
            )
        self.bank_ms = 0.0
        self.pending: list[Event] = []
        self.defaults = 0
        #: the seat's Play stream, while it has a working one (else Act is called)
        self.stream: PlayStream | None = None

    def drop_stream(self, wait_s: float = 0.0) -> None:
        if self.stream is not None:
            self.stream.close(wait_s)
            self.stream = None


def _status(e: grpc.RpcError) -> tuple[grpc.StatusCode | None, str]:
    if isinstance(e, grpc.Call | _StreamEnded):
        return e.code(), e.details() or ""
    return None, str(e)


def _too_large(code: grpc.StatusCode | None, details: str) -> bool:
    """Whether gRPC stopped reading a reply at :data:`MAX_ANSWER_BYTES`. Only its status
    details tell this apart from a bot's handler failing with RESOURCE_EXHAUSTED; a bot that
    fakes them only gets its answer rejected instead of defaulted."""
    return (
        code is grpc.StatusCode.RESOURCE_EXHAUSTED and "Received message larger than max" in details
    )


class GameStopped(Exception):
    """A game ended before its end because ``Match(stop=...)`` said so."""


class Match:
    """One game. ``run()`` plays it to the end and returns the :class:`MatchResult`."""

    def __init__(
        self,
        ruleset: AnyRuleset,
        bots: Sequence[SeatBot],
        seed: int,
        clock: Clock = Clock(),
        record_path: Path | None = None,
        call_s: float = DEFAULT_CALL_S,
        game_id: str | None = None,
        diagnose: Callable[[int], str] | None = None,
        on_fault: FaultHook | None = None,
        lines: Callable[[int], list[str]] | None = None,
        streams: bool = True,
        stop: Callable[[], bool] | None = None,
        channels: Callable[[int], grpc.Channel | None] | None = None,
    ) -> None:
        """``streams`` False calls every bot's Act, even a bot that offers ``Play`` (benchmarks and
        tests compare the two). ``diagnose(seat)``, when given, says why a seat's bot cannot be
        reached (the launcher knows: it exited, or the kernel killed it over its memory limit); it
        leads the ``disconnect`` fault's message, since the gRPC status only says the socket is
        closed. ``on_fault`` hears of each fault as it happens (:data:`FaultHook`), so a bot author
        watching a game sees a rejection when it happens, not after the game. ``lines(seat)``, when
        given, returns what the seat's bot wrote since it was last asked
        (``LaunchedBot.take_lines``: bounded, escaped); it is asked as soon as the seat's decision
        ends and after EndGame, so each line is recorded with the decision its bot was answering
        when it wrote it (docs/records.md). ``stop()``, when given, is asked before each
        decision: once it says True the game ends there with :class:`GameStopped`, no record
        written, its streams and channels closed (a worker whose parent died: the game is
        played again by whoever resumes). ``channels(seat)``, when given, returns a channel
        to the seat's bot that the caller keeps across games (:func:`bot_channel`; ``None``:
        the seat opens its own): the game uses it and leaves it open, its streams closed."""
        if not ruleset.min_players <= len(bots) <= ruleset.max_players:
            raise ValueError(
                f"{ruleset.ident} is for {ruleset.min_players}-{ruleset.max_players} players, "
                f"not {len(bots)}"
            )
        self.ruleset = ruleset
        self.family = family_of(ruleset)
        self.bots = tuple(bots)
        self.seed = seed
        self.clock = clock
        self.record_path = record_path
        self.call_s = call_s
        self.game_id = game_id or uuid.uuid4().hex
        self.diagnose = diagnose
        self.on_fault = on_fault
        self.lines = lines
        self.streams = streams
        self.stop = stop
        self.channels = channels
        self.faults: list[Fault] = []
        self.actions: list[dict[str, Any]] = []

    def _fault(self, seat: int, decision: int, turn: int, kind: str, rule: str, msg: str) -> Fault:
        """Record a fault; its rule and message are :func:`bounded` here, the one way in."""
        fault = Fault(
            seat,
            decision,
            turn,
            kind,
            bounded(rule, MAX_RULE_CHARS),
            bounded(msg, MAX_MESSAGE_CHARS),
        )
        self.faults.append(fault)
        return fault

    def _tell(self, fault: Fault, played: Action | None) -> None:
        if self.on_fault is not None:
            self.on_fault(fault, played)

    def run(self) -> MatchResult:
        started = time.time()
        family = self.family
        state = family.new_game(self.ruleset, len(self.bots), self.seed)
        initial_events = state.events
        kept = self.channels
        seats = [
            _Seat(b, None if kept is None or b.down else kept(i)) for i, b in enumerate(self.bots)
        ]
        try:
            for i, s in enumerate(seats):
                s.bank_ms = float(self.clock.bank_ms)
                s.pending = [family.project(e, i) for e in initial_events]
            self._start_games(seats)
            decision = 0
            stop = self.stop
            while not state.is_over:
                if stop is not None and stop():
                    raise GameStopped(f"game {self.game_id} stopped at decision {decision}")
                state = self._decide(state, seats, decision)
                decision += 1
            result = family.outcome(state)
            self._end_games(state, seats, result)
            end_lines = [self._take_lines(i) for i in range(len(seats))]
        finally:
            for s in seats:
                s.drop_stream()
                if s.channel is not None and s.owns_channel:
                    s.channel.close()
        record = game_record(
            game_id=self.game_id,
            ruleset_ident=self.ruleset.ident,
            seed=self.seed,
            clock=(self.clock.move_ms, self.clock.bank_ms),
            seats=[(b.name, b.version, b.address) for b in self.bots],
            started_at=started,
            finished_at=time.time(),
            initial_events=initial_events,
            actions=self.actions,
            faults=self.faults,
            outcome=result,
            end_lines=end_lines,
        )
        if self.record_path is not None:
            write_text_atomic(self.record_path, record_text(record))
        return MatchResult(
            variant=self.ruleset.ident,
            seed=self.seed,
            game_id=self.game_id,
            seats=self.bots,
            outcome=result,
            faults=self.faults,
            decisions=decision,
            record_path=self.record_path,
            final=state,
            defaults=[s.defaults for s in seats],
        )

    # StartGame / EndGame ----------------------------------------------------------------------

    def _start_games(self, seats: list[_Seat]) -> None:
        """StartGame to every seat at once, then each answer read in seat order, so faults
        are recorded and told in the order they were when the calls went one by one. At once,
        a game waits for its slowest bot's StartGame rather than for all of theirs in turn
        (a bot that hangs until the deadline no longer delays the others' calls either)."""
        settings = bot_service_pb2.ClockSettings(
            move_limit_ms=self.clock.move_ms, bank_ms=self.clock.bank_ms
        )
        calls: dict[int, grpc.Future] = {}  # type: ignore[type-arg]
        for i, s in enumerate(seats):
            if s.bot.down:
                continue
            request = bot_service_pb2.StartGameRequest(
                game_id=self.game_id,
                variant=self.ruleset.ident,
                seat=i,
                num_seats=len(seats),
                clock=settings,
            )
            self.family.fill_start_for_seat(request, self.ruleset, self.seed)
            calls[i] = s.stub.StartGame.future(request, timeout=self.call_s)
        for i, s in enumerate(seats):
            if s.bot.down:
                self._tell(self._fault(i, -1, 0, "start_game", "", f"no bot: {s.bot.down}"), None)
                continue
            try:
                started = calls[i].result()
                if started.play_stream and self.streams:
                    s.stream = PlayStream(s.channel, _PLAY_METHOD)  # type: ignore[arg-type]
            except grpc.RpcError as e:
                code, details = _status(e)
                fault = self._fault(i, -1, 0, "start_game", code.name if code else "", details)
                self._tell(fault, None)
                if code is grpc.StatusCode.UNAVAILABLE:
                    s.gone = True

    def _end_games(self, state: GameState, seats: list[_Seat], result: Outcome) -> None:
        """Every seat's stream ended (all told first, then each waited for, so the bots end
        theirs side by side), then EndGame to every seat at once, as StartGame."""
        family = self.family
        outcome_pb = family.outcome_to_pb(result)
        for s in seats:
            if s.stream is not None:
                s.stream.end(_STREAM_CLOSE_S)
        for s in seats:
            s.drop_stream(_STREAM_CLOSE_S)
        calls: dict[int, grpc.Future] = {}  # type: ignore[type-arg]
        for i, s in enumerate(seats):
            if s.gone:
                continue
            request = bot_service_pb2.EndGameRequest(
                game_id=self.game_id,
                outcome=outcome_pb,
                events=family.events_to_pb(s.pending),
                view=family.view_to_pb(family.view(state, i)),
            )
            s.pending = []
            calls[i] = s.stub.EndGame.future(request, timeout=self.call_s)
        for i, call in calls.items():
            try:
                call.result()
            except grpc.RpcError as e:
                code, details = _status(e)
                name = code.name if code else ""
                self._tell(self._fault(i, -1, state.turn, "end_game", name, details), None)

    # one decision -----------------------------------------------------------------------------

    def _decide(self, state: GameState, seats: list[_Seat], decision: int) -> GameState:
        seat_no = state.seat
        seat = seats[seat_no]
        family = self.family
        legal = tuple(family.legal_actions(state))
        chosen, default_reason, elapsed_ms, last = self._ask(state, seat_no, seat, legal, decision)
        lines = self._take_lines(seat_no)
        if chosen is None:
            chosen = safe_default(legal)
            seat.defaults += 1
            if last is not None:
                self._tell(last, chosen)
        new_state = family.apply(state, chosen)
        for i, s in enumerate(seats):
            s.pending.extend(family.project(e, i) for e in new_state.events)
        self.actions.append(
            action_entry(decision, state, chosen, default_reason, elapsed_ms, new_state, lines)
        )
        return new_state

    def _take_lines(self, seat: int) -> list[str]:
        return [] if self.lines is None else self.lines(seat)

    def _ask(
        self,
        state: GameState,
        seat_no: int,
        seat: _Seat,
        legal: tuple[Action, ...],
        decision: int,
    ) -> tuple[Action | None, str | None, float, Fault | None]:
        """The bot's accepted action, or ``None``, why the default is played and the fault
        that ended the decision (``None`` for a seat whose bot is gone: it was told once)."""
        if seat.gone:
            return None, "gone", 0.0, None
        turn = state.turn
        move_ms = float(self.clock.move_ms)
        budget_ms = move_ms + seat.bank_ms
        rejection: bot_service_pb2.Rejection | None = None
        faults = 0
        start = time.monotonic()

        def elapsed() -> float:
            return (time.monotonic() - start) * 1000.0

        def settle() -> float:
            spent = elapsed()
            seat.bank_ms = max(0.0, seat.bank_ms - max(0.0, spent - move_ms))
            return spent

        attempt = 0
        while True:
            left_ms = budget_ms - elapsed()
            if left_ms <= 0:
                spent = settle()
                fault = self._fault(
                    seat_no, decision, turn, "timeout", "", f"no accepted answer in {spent:.0f} ms"
                )
                return None, "timeout", spent, fault
            request_id = f"{self.game_id}/{decision}/{attempt}"
            attempt += 1
            spent_now = elapsed()
            request = act_request(
                state,
                legal,
                seat.pending,
                self.game_id,
                request_id,
                bot_service_pb2.Clock(
                    move_limit_ms=int(max(0.0, move_ms - spent_now)),
                    bank_left_ms=int(max(0.0, seat.bank_ms - max(0.0, spent_now - move_ms))),
                ),
                rejection,
                self.family,
            )
            seat.pending = []
            try:
                if seat.stream is None:
                    data: bytes = seat.act(request, timeout=left_ms / 1000.0)
                else:
                    data = self._over_stream(seat, request, left_ms)
            except grpc.RpcError as e:
                code, details = _status(e)
                if not _too_large(code, details):
                    spent = settle()
                    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
                        fault = self._fault(
                            seat_no,
                            decision,
                            turn,
                            "timeout",
                            code.name,
                            f"no answer in {spent:.0f} ms",
                        )
                        return None, "timeout", spent, fault
                    if code is grpc.StatusCode.UNAVAILABLE:
                        seat.gone = True
                        why = self.diagnose(seat_no) if self.diagnose is not None else ""
                        if why:
                            details = f"the bot {why}; {details}"
                        fault = self._fault(
                            seat_no, decision, turn, "disconnect", code.name, details
                        )
                        return None, "disconnect", spent, fault
                    name = code.name if code else ""
                    fault = self._fault(seat_no, decision, turn, "crash", name, details)
                    return None, "crash", spent, fault
                rule = "answer.too_large"
                message = (
                    f"the answer is over the {MAX_ANSWER_BYTES} bytes the referee reads ({details})"
                )
            else:
                verdict = judge_bytes(data, request_id, legal, state, self.family)
                if verdict.accepted:
                    return verdict.action, None, settle(), None
                rule, message = verdict.rule, verdict.message
            faults += 1
            fault = self._fault(seat_no, decision, turn, "rejected", rule, message)
            if faults >= MAX_FAULTS_PER_DECISION:
                return None, "faults", settle(), fault
            self._tell(fault, None)  # asked again
            rejection = bot_service_pb2.Rejection(rule=fault.rule, message=fault.message)

    @staticmethod
    def _over_stream(seat: _Seat, request: bot_service_pb2.ActRequest, left_ms: float) -> bytes:
        """The answer to ``request`` over the seat's Play stream, or the error Act would have
        raised for the same behaviour, so that every fault reads and counts as over Act. A
        stream that fails is dropped, and the seat's later requests go to Act: a late answer
        could otherwise be read as the answer to a later request."""
        assert seat.stream is not None
        got = seat.stream.ask(request, left_ms / 1000.0)
        if isinstance(got, bytes):
            return got
        seat.drop_stream()
        if got is NO_ANSWER:
            raise _StreamEnded(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
        if isinstance(got, grpc.RpcError):
            raise got
        raise _StreamEnded(grpc.StatusCode.OK, "the bot ended its Play stream without answering")


class _StreamEnded(grpc.RpcError):
    """What a Play stream's timeout or end reads as: the status an Act call would have
    ended with (a deadline), or OK for a stream the bot ended, a ``crash``."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self._code = code
        self._details = details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


def act_request(
    state: GameState,
    legal: Sequence[Action],
    events: Sequence[Event],
    game_id: str,
    request_id: str,
    clock: bot_service_pb2.Clock,
    rejection: bot_service_pb2.Rejection | None = None,
    family: AnyFamily | None = None,
) -> bot_service_pb2.ActRequest:
    """The request for the acting seat's decision: its view, ``events`` (already projected for
    it), the legal actions, the clock and the previous answer's rejection. Built only from what
    that seat may know. ``family`` defaults to the state's ruleset's."""
    family = family or family_of(state.ruleset)
    return family.act_request_pb(
        family.view(state, state.seat), events, legal, game_id, request_id, clock, rejection
    )


def play_match(
    ruleset: AnyRuleset,
    bots: Sequence[SeatBot],
    seed: int,
    clock: Clock = Clock(),
    record_path: Path | None = None,
    call_s: float = DEFAULT_CALL_S,
    diagnose: Callable[[int], str] | None = None,
    on_fault: FaultHook | None = None,
    lines: Callable[[int], list[str]] | None = None,
) -> MatchResult:
    """Play one game to the end (see :class:`Match`)."""
    return Match(
        ruleset,
        bots,
        seed,
        clock,
        record_path,
        call_s,
        diagnose=diagnose,
        on_fault=on_fault,
        lines=lines,
    ).run()


def _umask() -> int:
    """The process umask, read without changing it where Linux shows it."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` via a temporary file in the same folder and a
    rename: a reader never sees half a file, and a failed write leaves none behind. The
    file gets the usual mode (0666 less the umask), like any output file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would hide an output file
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
