"""``ttr replay show``: a game record as text, turn by turn, with names instead of indices.

The record is replayed through the engine (referee/replay.py), so every state is the
engine's own. Two readings:

* the whole game (the referee's eye): every event in full, the face-up row and the running
  scores at each turn, every fault with the rule and message its bot was sent, and at each
  decision the lines its bot wrote while deciding (the record's ``lines``);
* one seat (``seat=N``): exactly what that seat was given. Its situation at each of its
  decisions is its family's ``view(state, N)`` (the function that builds the bot's request),
  the other seats' moves are the events as ``project(event, N)`` passes them to it, and only
  its own faults and its own bot's lines are shown (it was told of those; it wrote these).
  Of a state itself, that mode reads only
  what every seat is told (whose decision it is, the turn, whether the game is over), so
  nothing hidden from the seat can appear (tests/pages/test_replay_show.py changes the other seats'
  secrets and checks that the output does not change).

What a family's events, tickets and views look like in words is its describer
(``family.describer``, referee/games/*/describe.py): the loop below never asks which game it
shows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from referee.games.common.describe import Describer, row
from referee.games.common.events import FaceUpDealt
from referee.games.protocol import (
    ECHO_LINE_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_RULE_CHARS,
    RECORD_LINES_CHARS,
    bounded,
)
from referee.games.registry import AnyFamily, AnyRuleset
from referee.match import fault_words
from referee.replay import Diverged, Game, Step, load_record, replay, start, verify
from ttr_arena.pages.scores import detail_lines, format_outcome, score_details, tickets_so_far


class ShowError(Exception):
    """The record cannot be shown as asked (a seat or a turn it does not have)."""


def fault_line(fault: dict[str, Any], who: str) -> str:
    """A recorded fault, as ``ttr play`` printed it live (:func:`referee.match.fault_words`):
    for a rejection, the rule and message the bot was sent with the next request
    (``Rejection``); for the others, the status and what the referee saw. Bounded and escaped
    as the referee wrote them (a record is a file anyone may have edited)."""
    words = fault_words(
        bounded(str(fault.get("kind", "")), MAX_RULE_CHARS),
        bounded(str(fault.get("rule", "")), MAX_RULE_CHARS),
        bounded(str(fault.get("message", "")), MAX_MESSAGE_CHARS),
    )
    return f"!! {who}: {words}"


def default_line(default: str, who: str) -> str:
    """A decision the referee ended with its safe default move, and why (the record's
    ``default``: ``faults``, ``timeout``, ...), escaped: it may come from an edited record."""
    return f"!! {who}: the safe default move is played ({bounded(default, MAX_RULE_CHARS)})"


def seat_names(data: dict[str, Any], seats: int) -> tuple[list[str], list[str]]:
    """Per seat: the short name for lines (``0:greedy``) and the table's (``0:greedy 1.0``)."""
    short: list[str] = []
    full: list[str] = []
    recorded = data.get("seats")
    for i in range(seats):
        entry = recorded[i] if isinstance(recorded, list) and i < len(recorded) else None
        # A record is a file anyone may hand over: its names are escaped before they print, and
        # no longer than the longest line the referee shows (they are in every event's line).
        name = shown(entry.get("name", "")) if isinstance(entry, dict) else ""
        version = shown(entry.get("version", "")) if isinstance(entry, dict) else ""
        short.append(f"{i}:{name}" if name else f"seat {i}")
        full.append(f"{i}:{f'{name} {version}'.strip()}" if name else f"seat {i}")
    return short, full


def shown(value: Any) -> str:
    """A string from a record as a terminal or a page may show it: non-printable characters
    escaped (an escape sequence, a C1 control, a right-to-left override), at most
    :data:`ECHO_LINE_CHARS` characters, the longest line the referee itself shows."""
    return bounded(str(value), ECHO_LINE_CHARS)


class BotLines:
    """What a record says each seat's bot wrote, bounded on the way out as the referee bounds
    it on the way in (:meth:`referee.hosting.launcher.BotLog.take_lines`): each line
    :data:`ECHO_LINE_CHARS` characters, escaped, and at most :data:`RECORD_LINES_CHARS` of a
    seat's over the game, then the referee's own note of the cut. A record the referee wrote
    is shown whole; an edited one cannot print a 20 MB line or fill a page with lines."""

    #: what the referee writes at the most for one seat: its lines and the note of the cut
    MOST = RECORD_LINES_CHARS + ECHO_LINE_CHARS

    def __init__(self) -> None:
        self._used: dict[int, int] = {}

    def take(self, seat: int, lines: Any) -> list[str]:
        """Seat ``seat``'s next ``lines`` (one decision's, or its ``end_lines``), bounded."""
        if not isinstance(lines, list):
            return []
        used = self._used.get(seat, 0)
        out: list[str] = []
        for line in lines:
            if used > self.MOST:
                break
            text = shown(line)
            used += len(text)
            out.append(
                text
                if used <= self.MOST
                else f"[ttr: the record holds more of this bot's output than the referee keeps "
                f"({RECORD_LINES_CHARS:,} characters a game); the rest is not shown]"
            )
        self._used[seat] = used
        return out


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def show(
    path: str | Path,
    seat: int | None = None,
    first: int | None = None,
    last: int | None = None,
) -> Iterator[str]:
    """The lines of ``ttr replay show``. The request is checked before the first line (a
    :class:`ShowError` or :class:`~referee.replay.RecordError` naming the problem), so a
    mistake never leaves half an output; the lines are then made as they are printed."""
    data = load_record(path)
    game = start(data, path)
    seats = game.start.num_seats
    if seat is not None and not 0 <= seat < seats:
        raise ShowError(f"--seat {seat}: the game has seats 0-{seats - 1}")
    turns = (_int(a.get("turn")) for a in data["actions"] if isinstance(a, dict))
    last_turn = max((t for t in turns if t is not None), default=0)
    if first is not None and first > last_turn:
        raise ShowError(f"--from {first}: the game's last turn is {last_turn}")
    if first is not None and last is not None and last < first:
        raise ShowError(f"--to {last} is before --from {first}")
    return _lines(path, data, game, seat, first, last)


def _lines(
    path: str | Path,
    data: dict[str, Any],
    game: Game,
    seat: int | None,
    first: int | None,
    last: int | None,
) -> Iterator[str]:
    family: AnyFamily = game.family
    ruleset: AnyRuleset = game.ruleset
    seats = game.start.num_seats
    names, table_names = seat_names(data, seats)
    describe = family.describer(ruleset, names)
    said = BotLines()
    faults: dict[int, list[dict[str, Any]]] = {}
    for f in data.get("faults") or []:
        if isinstance(f, dict) and (seat is None or f.get("seat") == seat):
            decision = _int(f.get("decision"))
            faults.setdefault(-1 if decision is None else decision, []).append(f)
    # the seat whose view gives the public facts of a turn (any seat's would do)
    eye = 0 if seat is None else seat

    def project(events: Sequence[Any]) -> Sequence[Any]:
        return events if seat is None else [family.project(e, seat) for e in events]

    def who(f: dict[str, Any]) -> str:
        return describe.seat(_int(f.get("seat")) or 0)

    clock = data.get("clock") if isinstance(data.get("clock"), dict) else {}
    yield (
        f"{ruleset.ident}, {ruleset.title}: {seats} seats, seed {data['seed']}, "
        f"game {shown(data.get('game_id', '?'))}"
        + (f", {clock.get('move_ms')} ms a move + {clock.get('bank_ms')} ms bank" if clock else "")
    )
    for i, name in enumerate(table_names):
        yield f"seat {i}: {name.partition(':')[2]}" + (" (you)" if i == seat else "")
    difference = verify(path)
    if difference is not None:
        yield f"!! the record differs from its replay ({difference}); shown: the replay"
    for f in faults.get(-1, []):
        if f.get("kind") == "start_game":
            yield fault_line(f, who(f))

    shown_turn: int | None = None  # the turn whose header was printed last
    in_setup = False
    setup_events = project(game.start.events)
    state = game.start
    try:
        for step in replay(game, data, path):
            state = step.after
            before = step.before
            turn = before.turn
            if first is not None and turn < first:
                continue
            if last is not None and turn > last:
                return
            public = family.view(before, eye)
            if public.phase == "setup_tickets":
                if not in_setup:
                    in_setup = True
                    yield "setup"
                    yield f"  row: {row(public.face_up)}"
                    # the deal of the row is the line above; anything else the deal did:
                    yield from (
                        f"  {describe.event(e)}"
                        for e in setup_events
                        if not isinstance(e, FaceUpDealt)
                    )
            elif shown_turn != turn:
                shown_turn = turn
                yield f"turn {turn}  row: {row(public.face_up)} | {describe.standing(public)}"
            yield from _decision(step, family, describe, seat, faults.get(step.number, []), said)
            yield from (f"  {describe.event(e)}" for e in project(state.events))
    except Diverged as e:
        raise ShowError(f"{path}: cannot replay it past {e.difference}") from None
    if not state.is_over:
        raise ShowError(f"{path}: the record ends before the game does")
    yield ""
    yield f"final scores after {state.turn} turns ({state.end_reason.replace('_', ' ')}):"
    result = family.outcome(state)
    yield from format_outcome(ruleset, result, table_names).splitlines()
    # the outcome is sent to every seat at the end (EndGame), so every perspective shows it
    yield "why:"
    yield from (f"  {line}" for line in detail_lines(score_details(ruleset, result), describe))
    for f in faults.get(-1, []):
        if f.get("kind") != "start_game":
            yield fault_line(f, who(f))
    end_lines = data.get("end_lines")
    if isinstance(end_lines, list):
        for i, lines in enumerate(end_lines):
            if lines and (seat is None or i == seat):
                yield f"after its last decision, {describe.seat(i)} wrote:"
                yield from output_lines(said.take(i, lines), f"{describe.seat(i)} > ")


def _decision(
    step: Step,
    family: AnyFamily,
    describe: Describer,
    seat: int | None,
    faults: list[dict[str, Any]],
    said: BotLines,
) -> Iterator[str]:
    """What comes before a decision's events: in one seat's eyes, its view when it is the one
    to decide; its faults, and the default move played for it."""
    actor = step.before.seat
    name = describe.seat(actor)
    if seat is None:
        if step.before.phase.name.lower() == "setup_tickets":  # later, TicketsDrawn says
            offered = family.view(step.before, actor).offered
            yield f"  {name} is offered {describe.tickets(offered)}"
    elif actor == seat:
        v = family.view(step.before, seat)
        yield f"  -- your decision ({v.phase.replace('_', ' ')}) --"
        yield from (f"  | {line}" for line in describe.view_lines(v))
        done, not_yet = tickets_so_far(describe.ruleset, v)
        yield (
            f"  | your tickets so far: completed {describe.tickets(done)}; "
            f"not yet {describe.tickets(not_yet)}"
        )
    for f in faults:
        yield f"  {fault_line(f, name)}"
    default = step.entry.get("default")
    if default and (seat is None or actor == seat):
        yield f"  {default_line(str(default), name)}"
    if seat is None or actor == seat:
        yield from output_lines(said.take(actor, step.entry.get("lines")), f"{name} > ")


def output_lines(lines: Any, prefix: str) -> Iterator[str]:
    """What a bot wrote for one decision (the record's ``lines``, bounded and escaped by the
    referee; :class:`BotLines` bounds a seat's over the game), indented, each after ``prefix``.
    Bounded and escaped again here: a record is a file anyone may have edited, and what
    reaches a terminal must not move its cursor."""
    if isinstance(lines, list):
        for line in lines:
            yield f"  {prefix}{shown(line)}"
