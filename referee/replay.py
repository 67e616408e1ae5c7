"""Check a game record: replay its actions through the engine and compare what happens.

``verify(path)`` starts from ``new_game(ruleset, seats, seed)``, applies every recorded action
in order and compares the events of each transition and, at the end, the final scores with
their breakdown. It returns the first difference, or ``None`` when the record replays
exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.family import family_of, load
from referee.match import RECORD_FORMAT, action_from_json, outcome_to_json, to_json
from referee.rules import IllegalActionError, MalformedActionError, RulesetError


class RecordError(Exception):
    """The file is not a readable game record."""


@dataclass(frozen=True, slots=True)
class Difference:
    decision: int | None  #: index of the decision; None for setup or the final scores
    what: str
    expected: Any  #: what the record says
    found: Any  #: what the replay gives

    def __str__(self) -> str:
        where = "setup/final" if self.decision is None else f"decision {self.decision}"
        return (
            f"{where}: {self.what}: record has {json.dumps(self.expected, sort_keys=True)}, "
            f"replay gives {json.dumps(self.found, sort_keys=True)}"
        )


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
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        raise RecordError(f"{path}: not a game record (format is not {RECORD_FORMAT!r})")
    for key in ("ruleset", "seed", "num_seats", "actions", "outcome"):
        if key not in data:
            raise RecordError(f"{path}: not a game record (key `{key}` is missing)")
    return data


def verify(record_path: str | Path) -> Difference | None:
    """The first difference between the record and its replay, or ``None``.

    Raises :class:`RecordError` for a file that is no record at all.
    """
    data = load_record(record_path)
    ident = str(data["ruleset"])
    try:
        ruleset = load(ident)
    except RulesetError as e:
        raise RecordError(f"{record_path}: ruleset {ident!r}: {e}") from None
    if ruleset.ident != ident:
        return Difference(None, "ruleset", ident, ruleset.ident)
    family = family_of(ruleset)
    try:
        state = family.new_game(ruleset, int(data["num_seats"]), int(data["seed"]))
    except (ValueError, TypeError) as e:
        raise RecordError(f"{record_path}: cannot set up the game: {e}") from None
    initial = [to_json(e) for e in state.events]
    if "initial_events" in data and data["initial_events"] != initial:
        return Difference(None, "setup events", data["initial_events"], initial)
    actions = data["actions"]
    if not isinstance(actions, list):
        raise RecordError(f"{record_path}: `actions` is not a list")
    for number, entry in enumerate(actions):
        if state.is_over:
            return Difference(number, "action after the end of the game", entry, None)
        if not isinstance(entry, dict):
            raise RecordError(f"{record_path}: action {number} is not an object")
        if entry.get("seat") != state.seat:
            return Difference(number, "seat to act", entry.get("seat"), state.seat)
        try:
            action = action_from_json(entry.get("action") or {}, family)
        except ValueError as e:
            return Difference(number, "action", entry.get("action"), f"unreadable: {e}")
        try:
            state = family.apply(state, action)
        except (IllegalActionError, MalformedActionError) as e:
            return Difference(number, "action", entry.get("action"), f"rejected: {e}")
        events = [to_json(e) for e in state.events]
        if entry.get("events") != events:
            return Difference(number, "events", entry.get("events"), events)
    if not state.is_over:
        return Difference(None, "game over", True, False)
    final = _as_recorded(data["outcome"], outcome_to_json(family.outcome(state)))
    if data["outcome"] != final:
        return Difference(None, "final scores", data["outcome"], final)
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
