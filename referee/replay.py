"""Replay a game record through the engine: check it (``ttr replay verify``) and walk it
(``ttr replay show``, ttr_arena/pages/show.py).

A record holds the seed and every action, so the engine alone can rebuild each state:
:func:`replay` starts from ``new_game(ruleset, seats, seed)`` and applies the recorded actions
in order, yielding one :class:`Step` per decision. :func:`verify` compares the events of each
transition and, at the end, the final scores with their breakdown, and returns the first
difference, or ``None`` when the record replays exactly. A difference names the record's
field that differs (``actions[37].events[1].card``, ``outcome.seats[2].total``) and both
values, so a reader goes straight to it. docs/records.md describes every field.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.games.board import IllegalActionError, MalformedActionError, RulesetError
from referee.games.common.events import FaceUpDealt
from referee.games.protocol import (
    ECHO_LINE_CHARS,
    MAX_FAULTS_PER_DECISION,
    MAX_RULE_CHARS,
    bounded,
)
from referee.games.record import RECORD_FORMAT, action_from_json, outcome_to_json, to_json
from referee.games.registry import AnyFamily, AnyRuleset, family_of, load


class RecordError(Exception):
    """The file is not a readable game record."""


@dataclass(frozen=True, slots=True)
class Difference:
    decision: int | None  #: index of the decision; None for setup or the final scores
    what: str  #: which part differs: "events", "final scores", "action", "seat to act", ...
    expected: Any  #: what the record says (at ``field``)
    found: Any  #: what the replay gives (at ``field``)
    field: str = ""  #: the record's field that differs, as a path: ``outcome.seats[2].total``
    turn: int | None = None  #: the game's turn (completed turns) where it differs
    seat: int | None = None  #: the seat that acted at ``decision``

    def __str__(self) -> str:
        where: list[str] = []
        if self.turn is not None:
            where.append(f"turn {self.turn}")
        if self.decision is not None:
            seat = f" (seat {self.seat})" if self.seat is not None else ""
            where.append(f"decision {self.decision}{seat}")
        else:
            where.append("setup" if self.what == "setup events" else self.what)
        # a path names the record's own keys: escaped, as anything read from a record
        shown = bounded(self.field, ECHO_LINE_CHARS)
        field = f": {shown}" if shown and shown != where[-1] else ""
        return (
            f"{', '.join(where)}{field}: record {_short(self.expected)}, "
            f"replay {_short(self.found)}"
        )


#: Stands for a value one side lacks (a key or a list element).
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()


def _short(value: Any, limit: int = 200) -> str:
    """A value as JSON on one line, cut (and marked) past ``limit`` characters."""
    text = "<missing>" if value is MISSING else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else f"{text[: limit - 12]}...[{len(text)} chars]"


def first_difference(recorded: Any, replayed: Any, path: str) -> tuple[str, Any, Any] | None:
    """The first leaf where two JSON values differ, as ``(path, recorded, replayed)``:
    keys in sorted order, lists element by element (an element one side lacks is
    :data:`MISSING`), so the reported field is the one a reader should look at."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in sorted(set(recorded) | set(replayed)):
            found = first_difference(
                recorded.get(key, MISSING), replayed.get(key, MISSING), f"{path}.{key}"
            )
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        for i in range(max(len(recorded), len(replayed))):
            found = first_difference(
                recorded[i] if i < len(recorded) else MISSING,
                replayed[i] if i < len(replayed) else MISSING,
                f"{path}[{i}]",
            )
            if found is not None:
                return found
        return None
    if recorded == replayed and type(recorded) is type(replayed):
        return None
    return path, recorded, replayed


#: The largest file read as a record. The largest the referee writes are about 110 KB (a
#: five-seat Mega Game between random bots, 400 decisions; 83 KB with four seats), and a game
#: of 1,000 decisions whose bots fault three times at each and fill all the output a record
#: keeps, every character one JSON writes widest (12 bytes), would make about 14 MB. Past
#: four times that a file is no game's: the bound only keeps a crafted one from costing the
#: reader its memory.
MAX_RECORD_BYTES = 64 << 20

#: Every integer in a record fits in a signed 64-bit one (seeds have 63 bits, the store's
#: INTEGER is 64); a longer one is refused as it is parsed, before it can become a 100,000-digit
#: seed or an ``int()`` overflow in a tool.
_INT_RANGE = range(-(2**63), 2**63)

#: The clock's fields are ``uint32`` on the wire (``ttr replay ask`` sends them again).
_CLOCK_RANGE = range(2**32)


def _read(path: str | Path) -> bytes:
    """The bytes of the regular file at ``path``, at most :data:`MAX_RECORD_BYTES` of them.
    Opened without blocking, so a FIFO cannot hold the open until a writer comes, and
    checked by ``fstat`` before a byte is read: a FIFO, a device or a directory never gets to
    ``read``, and neither does a file over the bound."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise RecordError(f"{path}: cannot read it: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = _kind(st.st_mode)
            raise RecordError(f"{path}: not a game record ({kind}, not a regular file)")
        if st.st_size > MAX_RECORD_BYTES:
            raise RecordError(_too_large(path, st.st_size))
        try:
            raw = f.read(MAX_RECORD_BYTES + 1)  # one more: a file that grew is still caught
        except OSError as e:
            raise RecordError(f"{path}: cannot read it: {e.strerror or e}") from None
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError(_too_large(path, len(raw)))
    return raw


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _too_large(path: str | Path, size: int) -> str:
    return (
        f"{path}: not a game record ({size:,} bytes, over the {MAX_RECORD_BYTES >> 20} MiB a "
        "record may hold)"
    )


class _OutOfRange:
    """A number that no record holds, as the parser met it: the record is refused, naming it
    (and the key it is under, where that is a top-level one such as ``seed``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        if len(self.text) <= 24:
            return self.text
        digits = sum(c.isdigit() for c in self.text)
        return f"a number of {digits:,} digits"


def _parse(text: str) -> tuple[Any, list[_OutOfRange]]:
    """``text`` as JSON, with every number range-checked as it is parsed: an integer out of
    :data:`_INT_RANGE` (never converted when it is longer than any in range), a float that
    overflows (``1e999``) and ``NaN``/``Infinity`` come back as :class:`_OutOfRange`, listed."""
    found: list[_OutOfRange] = []

    def out(text: str) -> _OutOfRange:
        found.append(_OutOfRange(text))
        return found[-1]

    def integer(text: str) -> int | _OutOfRange:
        if len(text) > 20:  # 19 digits and a sign: past that, out of range unread
            return out(text)
        value = int(text)
        return value if value in _INT_RANGE else out(text)

    def real(text: str) -> float | _OutOfRange:
        value = float(text)
        return value if math.isfinite(value) else out(text)

    data = json.loads(text, parse_int=integer, parse_float=real, parse_constant=out)
    return data, found


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def load_record(path: str | Path) -> dict[str, Any]:
    """The record in the file at ``path``, or :class:`RecordError` with one line naming why
    it is none.

    A record is a file anyone may hand over, and every replay tool (and the league's replay
    pages) reads it here, so here it is read as untrusted: a regular file of at most
    :data:`MAX_RECORD_BYTES` (:func:`_read`), every number in range, and the top-level fields
    the tools read checked for type and range before any of them is used. The strings are
    checked for type only: the tools escape and bound each where they show it."""
    raw = _read(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not a game record (not UTF-8 text)") from None
    try:
        data, out_of_range = _parse(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not a game record (invalid JSON: {e})") from None
    except RecursionError:
        raise RecordError(f"{path}: not a game record (JSON nested too deeply)") from None
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        raise RecordError(f"{path}: not a game record (format is not {RECORD_FORMAT!r})")
    if out_of_range:
        bad = out_of_range[0]
        key = next((k for k, v in data.items() if v is bad), None)
        where = f"`{bounded(key, MAX_RULE_CHARS)}` is" if key is not None else "it holds"
        raise RecordError(
            f"{path}: not a game record ({where} {bad}, out of range: a record's numbers are "
            "finite and fit in 64 bits)"
        )
    for key in ("ruleset", "seed", "num_seats", "actions", "outcome"):
        if key not in data:
            raise RecordError(f"{path}: not a game record (key `{key}` is missing)")
    problem = _problem(data)
    if problem is not None:
        raise RecordError(f"{path}: not a game record ({problem})")
    return data


def _problem(data: dict[str, Any]) -> str | None:
    """What makes ``data`` no record the tools can read, at the top level: the types every
    tool relies on, and the counts the referee never exceeds."""
    ruleset = data["ruleset"]
    if not isinstance(ruleset, str) or not 0 < len(ruleset) <= MAX_RULE_CHARS:
        return "`ruleset` is not a variant's name@version"
    if not _is_int(data["seed"]):
        return "`seed` is not an integer"
    seats = data["num_seats"]
    if not _is_int(seats) or seats < 1:
        return "`num_seats` is not a number of seats"
    if not isinstance(data["actions"], list):
        return "`actions` is not a list"
    for key in ("seats", "faults", "end_lines", "initial_events"):
        if data.get(key) is not None and not isinstance(data[key], list):
            return f"`{key}` is not a list"
    if "game_id" in data and not isinstance(data["game_id"], str):
        return "`game_id` is not a string"
    clock = data.get("clock")
    if clock is not None:
        if not isinstance(clock, dict):
            return "`clock` is not an object"
        for key in ("move_ms", "bank_ms"):
            value = clock.get(key)
            if value is not None and not (_is_int(value) and value in _CLOCK_RANGE):
                return f"`clock.{key}` is not a number of milliseconds (0 to {2**32 - 1})"
    # the referee records at most so many faults in a decision, and one a seat at StartGame
    # and at EndGame: more is no game's, and would only fill a page
    most = MAX_FAULTS_PER_DECISION * len(data["actions"]) + 2 * seats
    faults = len(data.get("faults") or ())
    if faults > most:
        return f"{faults:,} faults, over the {most:,} a game of its length can have"
    return None


@dataclass(frozen=True, slots=True)
class Game:
    """A record's game at its start: the rules it names and the dealt state."""

    ruleset: AnyRuleset
    family: AnyFamily
    start: Any  #: the state after ``new_game``; its ``events`` are the setup's


def start(data: dict[str, Any], path: str | Path) -> Game:
    """The game a record (from :func:`load_record`) was played in, dealt from its seed;
    :class:`RecordError` when its ruleset or seats cannot make one."""
    ident = str(data["ruleset"])
    try:
        ruleset = load(ident)
    except RulesetError as e:
        raise RecordError(f"{path}: ruleset {ident!r}: {e}") from None
    family = family_of(ruleset)
    try:
        state = family.new_game(ruleset, int(data["num_seats"]), int(data["seed"]))
    except (ValueError, TypeError) as e:
        raise RecordError(f"{path}: cannot set up the game: {e}") from None
    return Game(ruleset, family, state)


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded decision, replayed."""

    number: int  #: index in ``actions`` (= the entry's ``decision``)
    entry: dict[str, Any]  #: the record's entry for it
    before: Any  #: the state the seat decided in (``before.seat`` acted)
    action: Any
    after: Any  #: the state the action led to; ``after.events`` is what it did


class Diverged(Exception):
    """The record cannot be replayed past this point."""

    def __init__(self, difference: Difference) -> None:
        super().__init__(str(difference))
        self.difference = difference


def replay(game: Game, data: dict[str, Any], path: str | Path) -> Iterator[Step]:
    """Every recorded decision, applied in order from ``game.start``. Raises
    :class:`Diverged` where an action cannot be replayed (a wrong seat, an unreadable or
    rejected action, an action after the end) and :class:`RecordError` for an entry that is
    not an object. The events are the replay's: comparing them is :func:`verify`'s job."""
    state = game.start
    family = game.family
    for number, entry in enumerate(data["actions"]):
        if not isinstance(entry, dict):
            raise RecordError(f"{path}: action {number} is not an object")
        where = {"decision": number, "turn": state.turn}
        if state.is_over:
            raise Diverged(
                Difference(
                    what="action after the end",
                    expected=entry.get("action"),
                    found=MISSING,
                    field=f"actions[{number}]",
                    **where,
                )
            )
        if entry.get("seat") != state.seat:
            raise Diverged(
                Difference(
                    what="seat to act",
                    expected=entry.get("seat"),
                    found=state.seat,
                    field=f"actions[{number}].seat",
                    **where,
                )
            )
        where["seat"] = state.seat
        try:
            action = action_from_json(entry.get("action") or {}, family)
        except ValueError as e:
            raise Diverged(
                Difference(
                    what="action",
                    expected=entry.get("action"),
                    found=f"unreadable: {e}",
                    field=f"actions[{number}].action",
                    **where,
                )
            ) from None
        try:
            after = family.apply(state, action)
        except (IllegalActionError, MalformedActionError) as e:
            raise Diverged(
                Difference(
                    what="action",
                    expected=entry.get("action"),
                    found=f"rejected: {e}",
                    field=f"actions[{number}].action",
                    **where,
                )
            ) from None
        yield Step(number, entry, state, action, after)
        state = after


def verify(record_path: str | Path) -> Difference | None:
    """The first difference between the record and its replay, or ``None``.

    Raises :class:`RecordError` for a file that is no record at all.
    """
    data = load_record(record_path)
    game = start(data, record_path)
    ident = str(data["ruleset"])
    if game.ruleset.ident != ident:
        return Difference(None, "ruleset", ident, game.ruleset.ident, "ruleset")
    initial = [to_json(e) for e in game.start.events]
    if "initial_events" in data:
        diff = first_difference(data["initial_events"], initial, "initial_events")
        if diff is not None:
            return Difference(None, "setup events", diff[1], diff[2], diff[0])
    state = game.start
    try:
        for step in replay(game, data, record_path):
            state = step.after
            events = [to_json(e) for e in state.events]
            field = f"actions[{step.number}].events"
            diff = first_difference(step.entry.get("events", MISSING), events, field)
            if diff is not None:
                return Difference(
                    step.number,
                    "events",
                    diff[1],
                    diff[2],
                    diff[0],
                    step.before.turn,
                    step.before.seat,
                )
    except Diverged as e:
        return e.difference
    if not state.is_over:
        return Difference(
            None, "game over", "the game ends", "the game goes on", "actions", state.turn
        )
    final = _as_recorded(data["outcome"], outcome_to_json(game.family.outcome(state)))
    diff = first_difference(data["outcome"], final, "outcome")
    if diff is not None:
        return Difference(None, "final scores", diff[1], diff[2], diff[0], state.turn)
    return None


#: Score fields added to ``ttr-record/1`` after its first records were written, with the value
#: they had in every game of that time (no map had Tourist Attractions then).
_LATER_SEAT_FIELDS: dict[str, Any] = {"attractions": [], "attraction_points": 0}


def _as_recorded(recorded: Any, final: dict[str, Any]) -> dict[str, Any]:
    """``final`` without the seat fields a record predates, where the replay's value is what
    those records implied: older records still verify, and a replay that scored an attraction
    where the record cannot show one is still a difference."""
    seats = recorded.get("seats") if isinstance(recorded, dict) else None
    if not isinstance(seats, list) or len(seats) != len(final.get("seats", [])):
        return final
    out_seats = []
    for old, new in zip(seats, final["seats"], strict=True):
        if isinstance(old, dict):
            new = {
                k: v for k, v in new.items() if k in old or _LATER_SEAT_FIELDS.get(k, object()) != v
            }
        out_seats.append(new)
    return {**final, "seats": out_seats}


# ---------------------------------------------------------------------------------------------
# one decision's request again (``ttr replay ask``)


class NoSuchDecision(Exception):
    """The record has no decision of that seat where one was asked for; the message names
    the range there is."""


#: what ``--turn`` takes for the setup's ticket choice (``ttr replay show`` heads it "setup")
SETUP = "setup"


@dataclass(frozen=True, slots=True)
class Asked:
    """One recorded decision as its seat was asked it: the StartGame that seat's bot got and
    the first ActRequest of that decision, rebuilt from the record, and what it played."""

    game: Game
    step: Step  #: the decision (``step.before`` is the state the seat decided in)
    legal: tuple[Any, ...]  #: the legal actions, in the request's order
    start_request: Any  #: ``bot_service_pb2.StartGameRequest``
    request: Any  #: ``bot_service_pb2.ActRequest``

    @property
    def seat(self) -> int:
        seat: int = self.step.before.seat
        return seat


def _turn_list(turns: list[int]) -> str:
    if len(turns) <= 8:
        return ", ".join(map(str, turns))
    return f"{', '.join(map(str, turns[:4]))} ... {', '.join(map(str, turns[-2:]))}"


def find_decision(data: dict[str, Any], seat: int, turn: int | str, nth: int = 1) -> int:
    """The index of seat ``seat``'s ``nth`` (1-based) decision in ``turn``, numbered as the
    record and ``ttr replay show`` number turns (the first turn is 0); ``turn`` :data:`SETUP`
    is the seat's ticket choice at the setup. :class:`NoSuchDecision` names the valid range."""
    seats = int(data["num_seats"])
    if not 0 <= seat < seats:
        raise NoSuchDecision(f"--seat {seat}: the game has seats 0-{seats - 1}")
    entries = [e for e in data["actions"] if isinstance(e, dict)]
    in_setup = [e for e in entries if e.get("phase") == "setup_tickets"]
    played = [e for e in entries if e.get("phase") != "setup_tickets"]
    if turn == SETUP:
        mine = [e for e in in_setup if e.get("seat") == seat]
        where = "the setup"
        if not mine:
            raise NoSuchDecision(f"--turn setup: seat {seat} made no decision at the setup")
    else:
        turns = sorted({t for e in played if isinstance(t := e.get("turn"), int)})
        if not turns:
            raise NoSuchDecision("--turn: the record has no turn after the setup (try setup)")
        if turn not in turns:
            raise NoSuchDecision(
                f"--turn {turn}: the game's turns are {turns[0]}-{turns[-1]} (or setup)"
            )
        here = [e for e in played if e.get("turn") == turn]
        mine = [e for e in here if e.get("seat") == seat]
        where = f"turn {turn}"
        if not mine:
            own = sorted(
                {t for e in played if e.get("seat") == seat and isinstance(t := e.get("turn"), int)}
            )
            other = _short(here[0].get("seat", MISSING), MAX_RULE_CHARS)
            raise NoSuchDecision(
                f"--turn {turn}: that is seat {other}'s turn; seat {seat}'s turns "
                f"are {_turn_list(own) or 'none'} (or setup)"
            )
    if not 1 <= nth <= len(mine):
        which = ", ".join(
            f"{i + 1}: {bounded(str(e.get('phase', '?')), MAX_RULE_CHARS).replace('_', ' ')}"
            for i, e in enumerate(mine)
        )
        raise NoSuchDecision(
            f"--nth {nth}: seat {seat} has {len(mine)} decision(s) in {where} ({which})"
        )
    number: int = entries.index(mine[nth - 1])
    return number


def ask_request(game: Game, data: dict[str, Any], path: str | Path, decision: int) -> Asked:
    """The requests the referee sent to the seat of ``decision`` (an index into the record's
    ``actions``): its StartGame, and that decision's first ActRequest (before any rejection)
    with its view, its legal actions in the referee's order and the events since the last
    request that seat's bot was sent (projected for it), as :class:`referee.match.Match` built
    them. The clock in it is the record's move limit and the bank the seat had left by the
    recorded times (the referee's own figure differed by the milliseconds of each call); the
    request id is the referee's (``<game_id>/<decision>/0``).
    :class:`NoSuchDecision` for an index the record does not have."""
    from ttr.v1 import bot_service_pb2

    total = len(data["actions"])
    if not 0 <= decision < total:
        raise NoSuchDecision(f"--decision {decision}: the record has decisions 0-{total - 1}")
    family = game.family
    seats = game.start.num_seats
    pending: list[list[Any]] = [
        [family.project(e, i) for e in game.start.events] for i in range(seats)
    ]
    recorded_clock = data.get("clock")
    clock: dict[str, Any] = recorded_clock if isinstance(recorded_clock, dict) else {}
    move_ms = int(clock.get("move_ms") or 0)
    bank = [float(clock.get("bank_ms") or 0)] * seats
    game_id = str(data.get("game_id", ""))
    for step in replay(game, data, path):
        actor = step.before.seat
        if step.number == decision:
            legal = tuple(family.legal_actions(step.before))
            request = family.act_request_pb(
                family.view(step.before, actor),
                pending[actor],
                legal,
                game_id,
                f"{game_id}/{decision}/0",
                bot_service_pb2.Clock(move_limit_ms=move_ms, bank_left_ms=int(bank[actor])),
                None,
            )
            start_request = bot_service_pb2.StartGameRequest(
                game_id=game_id,
                variant=game.ruleset.ident,
                seat=actor,
                num_seats=seats,
                clock=bot_service_pb2.ClockSettings(
                    move_limit_ms=move_ms, bank_ms=int(clock.get("bank_ms") or 0)
                ),
            )
            family.fill_start_for_seat(start_request, game.ruleset, int(data["seed"]))
            return Asked(game, step, legal, start_request, request)
        if step.entry.get("default") != "gone":  # a gone seat's bot was sent nothing
            pending[actor] = []
            ms = step.entry.get("ms")
            if isinstance(ms, int | float):
                bank[actor] = max(0.0, bank[actor] - max(0.0, float(ms) - move_ms))
        for i in range(seats):
            pending[i].extend(family.project(e, i) for e in step.after.events)
    raise NoSuchDecision(f"--decision {decision}: the record has decisions 0-{total - 1}")


def action_words(game: Game, state: Any, action: Any, names: Sequence[str]) -> str:
    """What ``action`` does in ``state``, in names: the events it makes, as the acting seat
    is told them (its family's describer, as ``ttr replay show`` prints them). The action's
    own form for one the engine refuses."""
    family = game.family
    describe = family.describer(game.ruleset, names)
    try:
        after = family.apply(state, action)
    except (IllegalActionError, MalformedActionError):
        return repr(action)
    said = [
        describe.event(family.project(e, state.seat))
        for e in after.events
        if not isinstance(e, FaceUpDealt)  # the row's refill: not the seat's doing
    ]
    return "; ".join(said) or repr(action)
