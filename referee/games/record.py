"""A game's record (``ttr-record/1``, docs/records.md), built in one place.

The referee's gRPC loop (``referee.match``) and the SDK's in-process games (``sdk.local``)
write the same record, so ``ttr replay verify/show/view`` read either: the JSON forms of
actions, events and outcomes, a fault's fields and the record's top level live here, below
both. Pure: values in, JSON-ready dicts out; writing the file is the caller's.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from referee.games.registry import AnyFamily

RECORD_FORMAT = "ttr-record/1"


@dataclass(frozen=True, slots=True)
class Fault:
    seat: int
    decision: int  #: 0-based index of the decision in the game (-1: StartGame/EndGame)
    turn: int
    kind: str  #: rejected, timeout, crash, disconnect, start_game, end_game
    rule: str  #: the rule broken (for ``rejected``), else the gRPC status or ''
    message: str


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    """Once per class: dataclasses.fields is slow, and to_json runs on every decision."""
    return tuple(f.name for f in dataclasses.fields(cls))


def to_json(value: Any) -> dict[str, Any]:
    """An action or event as a JSON object: ``{"type": ClassName, field: value, ...}``."""
    cls: type = type(value)
    out: dict[str, Any] = {"type": cls.__name__}
    for name in _field_names(cls):
        v = getattr(value, name)
        out[name] = list(v) if isinstance(v, tuple) else v
    return out


def action_from_json(data: dict[str, Any], family: AnyFamily) -> Any:
    """The inverse of :func:`to_json` for ``family``'s actions; ``ValueError`` for anything
    else (another family's action included)."""
    cls = family.action_types.get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"unknown action type {data.get('type')!r}")
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "type"}
    try:
        action: Any = cls(**kwargs)
    except TypeError as e:
        raise ValueError(f"bad {cls.__name__}: {e}") from None
    return action


def outcome_to_json(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = _plain(dataclasses.asdict(result))
    return data


def action_entry(
    decision: int,
    state: Any,
    chosen: Any,
    default: str | None,
    ms: float,
    new_state: Any,
    lines: Sequence[str] = (),
) -> dict[str, Any]:
    """One decision as the record's ``actions`` list holds it: who acted in ``state``, what
    was played (``default``: why the safe default was, else ``None``), the time it took, the
    events it caused (``new_state.events``) and, when it wrote any, the lines its bot wrote
    since its previous answer (``lines``: already bounded and escaped by whoever read them;
    the key is left out when there are none, so a quiet bot's record is as before)."""
    entry = {
        "decision": decision,
        "seat": state.seat,
        "turn": state.turn,
        "phase": state.phase.name.lower(),
        "action": to_json(chosen),
        "default": default,
        "ms": round(ms, 1),
        "events": [to_json(e) for e in new_state.events],
    }
    if lines:
        entry["lines"] = list(lines)
    return entry


def game_record(
    *,
    game_id: str,
    ruleset_ident: str,
    seed: int,
    clock: tuple[int, int],
    seats: Sequence[tuple[str, str, str]],
    started_at: float,
    finished_at: float,
    initial_events: Sequence[Any],
    actions: list[dict[str, Any]],
    faults: Sequence[Fault],
    outcome: Any,
    end_lines: Sequence[Sequence[str]] = (),
) -> dict[str, Any]:
    """The whole record: ``clock`` is (move ms, bank ms), ``seats`` (name, version, address)
    per seat, ``actions`` the :func:`action_entry` of each decision; ``end_lines``, per seat,
    what its bot wrote after its last decision (EndGame's answer included), kept only when
    some seat wrote something."""
    record = {
        "format": RECORD_FORMAT,
        "game_id": game_id,
        "ruleset": ruleset_ident,
        "seed": seed,
        "num_seats": len(seats),
        "clock": {"move_ms": clock[0], "bank_ms": clock[1]},
        "seats": [
            {"seat": i, "name": name, "version": version, "address": address}
            for i, (name, version, address) in enumerate(seats)
        ],
        "started_at": started_at,
        "finished_at": finished_at,
        "initial_events": [to_json(e) for e in initial_events],
        "actions": actions,
        "faults": [dataclasses.asdict(f) for f in faults],
        "outcome": outcome_to_json(outcome),
    }
    if any(end_lines):
        record["end_lines"] = [list(lines) for lines in end_lines]
    return record


def record_text(record: dict[str, Any]) -> str:
    """A record as its file holds it: its keys in order, one to a line, and a list's items
    (each decision, event, seat, fault) one to a line, each written compactly.

    JSON's own indentation goes through the json module's pure-Python encoder, which cost
    every game's worker about 30 us per decision (as much as building the decision's request);
    each line here is one call of its C encoder. Any JSON reader reads both alike."""
    lines = ["{"]
    last = len(record) - 1
    for n, key in enumerate(sorted(record)):
        value = record[key]
        comma = "," if n < last else ""
        if isinstance(value, list) and value:
            lines.append(f" {_compact(key)}: [")
            lines.append(",\n".join("  " + _compact(item) for item in value))
            lines.append(f" ]{comma}")
        else:
            lines.append(f" {_compact(key)}: {_compact(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _compact(value: object) -> str:
    return json.dumps(value, sort_keys=True)
