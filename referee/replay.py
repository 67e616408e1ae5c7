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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.games.board import IllegalActionError, MalformedActionError, RulesetError
from referee.games.common.events import FaceUpDealt
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
        field = f": {self.field}" if self.field and self.field != where[-1] else ""
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


def load_record(path: str | Path) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise RecordError(f"{path}: cannot read it: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not a game record (not UTF-8 text)") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not a game record (invalid JSON: {e})") from None
    except RecursionError:
        raise RecordError(f"{path}: not a game record (JSON nested too deeply)") from None
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        raise RecordError(f"{path}: not a game record (format is not {RECORD_FORMAT!r})")
    for key in ("ruleset", "seed", "num_seats", "actions", "outcome"):
        if key not in data:
            raise RecordError(f"{path}: not a game record (key `{key}` is missing)")
    if not isinstance(data["actions"], list):
        raise RecordError(f"{path}: not a game record (`actions` is not a list)")
    return data


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
            own = sorted({e["turn"] for e in played if e.get("seat") == seat})
            raise NoSuchDecision(
                f"--turn {turn}: that is seat {here[0].get('seat')}'s turn; seat {seat}'s turns "
                f"are {_turn_list(own) or 'none'} (or setup)"
            )
    if not 1 <= nth <= len(mine):
        which = ", ".join(
            f"{i + 1}: {str(e.get('phase', '?')).replace('_', ' ')}" for i, e in enumerate(mine)
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
