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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.games.board import IllegalActionError, MalformedActionError, RulesetError
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
