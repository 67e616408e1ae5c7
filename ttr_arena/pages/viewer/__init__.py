"""``ttr replay view``: a game record as one self-contained HTML page that replays the game.

The record is replayed through the engine (referee/replay.py), and what the page shows of each
step is made here, in Python, once: the *film* (:func:`build_film`), embedded in the page as
JSON and drawn by ``assets/viewer.js``. The page fetches nothing: its code, style and data are
all inside the file (referee/web).

Perspectives. The whole truth (every seat's own part, the public part, and for the card game
the real contents of the face-down On-the-Track stacks), or one seat: that seat's frame at each
step *is* ``family.view(state, seat)`` serialised with ``dataclasses.asdict`` (the function
that builds the bot's requests), its events are ``family.project(event, seat)`` in words, and
only its own faults are listed. Nothing in a seat's frames comes from the state itself, so the
viewer cannot show a seat more than it was told (tests/pages/test_viewer.py changes the other seats'
secrets and checks that the film does not change). With ``seat=N`` the file holds *only* seat
N's perspective, and no seed: a bot author can share it without giving anyone's hand away.

Size. A view repeats most of itself from one step to the next, and the public part of every
seat's view is the same, so the film stores the public part once and each seat's own part
(hand, tickets, offer) apart, each as a stream of deltas: the first frame whole, then only the
top-level keys that changed, and for a list of objects (``players``) only the changed keys of
the changed elements. :func:`frames` rebuilds them (viewer.js does the same at load time).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from referee.games.board import events as board_events
from referee.games.board.ruleset import GameMap
from referee.games.card import CardRuleset
from referee.games.common.cards import CARD_NAMES
from referee.games.registry import AnyFamily
from referee.replay import Diverged, load_record, replay, start, verify
from ttr_arena.pages import show
from ttr_arena.pages.scores import score_details, tickets_so_far
from ttr_arena.pages.show import ShowError, default_line, fault_line
from ttr_arena.pages.web import SEAT_COLOURS, asset, html_page

__all__ = ["FILM_FORMAT", "OWN_FIELDS", "board_data", "build_film", "frames", "render_html"]

#: The layout of the embedded data; viewer.js refuses any other.
FILM_FORMAT = "ttr-film/1"

#: The fields of a seat's view (both families) that belong to that seat alone: its number, its
#: hand, its tickets, its offer and (card game, where the rules let owners look) its stack.
#: Every other field must be the same in every seat's view at every step; :func:`build_film`
#: checks it, so a private field added to a view later fails loudly instead of being shown to
#: the others.
OWN_FIELDS = ("seat", "hand", "tickets", "offered", "stack")

#: JSON-like values as this module handles them.
Json = Any


@cache
def _field_names(cls: type[Any]) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _plain(value: Json) -> Json:
    """A value as JSON will hold it: a dataclass (a view) as ``dataclasses.asdict`` makes it,
    tuples as lists, so a delta compares what the page will see. Written out because
    ``asdict`` deep-copies every leaf, which made a long game's film several times slower."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _field_names(type(value))}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _delta(prev: dict[str, Json] | None, cur: dict[str, Json]) -> dict[str, Json]:
    """``cur`` as a change to ``prev`` (whole, when there is no ``prev``): the keys whose
    value changed; a list of objects as ``{index: {changed keys}}``."""
    if prev is None:
        return cur
    out: dict[str, Json] = {}
    for key, value in cur.items():
        old = prev.get(key)
        if value == old:
            continue
        if (
            isinstance(value, list)
            and isinstance(old, list)
            and len(value) == len(old)
            and value
            and all(isinstance(v, dict) for v in value)
        ):
            out[key] = {
                str(i): {k: v for k, v in new.items() if was.get(k) != v}
                for i, (new, was) in enumerate(zip(value, old, strict=True))
                if new != was
            }
        else:
            out[key] = value
    return out


def _patch(prev: dict[str, Json], delta: dict[str, Json]) -> dict[str, Json]:
    """The inverse of :func:`_delta` (viewer.js's ``patch`` is the same)."""
    out = dict(prev)
    for key, value in delta.items():
        if isinstance(value, dict):
            items = list(prev[key])
            for i, change in value.items():
                items[int(i)] = {**items[int(i)], **change}
            out[key] = items
        else:
            out[key] = value
    return out


def _decode(stream: Sequence[dict[str, Json]]) -> list[dict[str, Json]]:
    out: list[dict[str, Json]] = []
    for delta in stream:
        out.append(_patch(out[-1], delta) if out else delta)
    return out


def frames(film: dict[str, Json], perspective: int | str) -> list[dict[str, Json]]:
    """Every step's frame of one perspective, rebuilt from the film's deltas: for a seat
    ``N``, exactly ``asdict(view(state, N))`` as JSON has it; for ``"truth"``, the public
    part with ``own`` (each seat's own part, in seat order) and, in the card game,
    ``stacks`` (every On-the-Track stack's real contents)."""
    public = _decode(film["public"])
    if perspective == "truth":
        if "truth" not in film["perspectives"]:
            raise ShowError("this film holds one seat's perspective only")
        owns = [_decode(film["own"][str(s)]) for s in range(film["num_seats"])]
        secret = _decode(film["secret"])
        return [{**p, "own": [o[i] for o in owns], **secret[i]} for i, p in enumerate(public)]
    if perspective not in film["perspectives"]:
        raise ShowError(f"this film has no perspective {perspective!r}")
    own = _decode(film["own"][str(perspective)])
    return [{**p, **o} for p, o in zip(public, own, strict=True)]


class _Lines:
    """Interned sentences: every perspective tells most events in the same words."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, line: str) -> int:
        found = self._index.get(line)
        if found is None:
            found = self._index[line] = len(self.table)
            self.table.append(line)
        return found


@lru_cache(maxsize=8)
def schematic_layout(game_map: GameMap) -> tuple[tuple[float, float], ...]:
    """Positions (0..1) for a map whose data has no board coordinates, from its route graph
    alone: a force-directed layout (Fruchterman-Reingold) started from a circle in city
    order, so the same map always comes out the same. Not the board's geography: the page
    says so."""
    n = len(game_map.cities)
    pos = [[math.cos(2 * math.pi * i / n), math.sin(2 * math.pi * i / n)] for i in range(n)]
    edges = sorted({(min(r.a, r.b), max(r.a, r.b)) for r in game_map.routes})
    k = math.sqrt(4.0 / max(n, 1))
    heat = 0.2
    for _ in range(400):
        move = [[0.0, 0.0] for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                dx, dy = pos[i][0] - pos[j][0], pos[i][1] - pos[j][1]
                d = max(math.hypot(dx, dy), 1e-6)
                f = k * k / d
                move[i][0] += dx / d * f
                move[i][1] += dy / d * f
                move[j][0] -= dx / d * f
                move[j][1] -= dy / d * f
        for a, b in edges:
            dx, dy = pos[a][0] - pos[b][0], pos[a][1] - pos[b][1]
            d = max(math.hypot(dx, dy), 1e-6)
            f = d * d / k
            move[a][0] -= dx / d * f
            move[a][1] -= dy / d * f
            move[b][0] += dx / d * f
            move[b][1] += dy / d * f
        for i in range(n):
            d = max(math.hypot(*move[i]), 1e-9)
            step = min(d, heat)
            pos[i][0] += move[i][0] / d * step
            pos[i][1] += move[i][1] / d * step
        heat = max(heat * 0.985, 0.002)
    if max(p[1] for p in pos) - min(p[1] for p in pos) > max(p[0] for p in pos) - min(
        p[0] for p in pos
    ):
        pos = [[p[1], p[0]] for p in pos]  # lying down: the page is wider than tall
    xs, ys = [p[0] for p in pos], [p[1] for p in pos]
    # each axis stretched to the page: a schematic, so only who is next to whom matters
    return tuple(
        (
            round(0.03 + 0.94 * (p[0] - min(xs)) / max(max(xs) - min(xs), 1e-9), 4),
            round(0.03 + 0.94 * (p[1] - min(ys)) / max(max(ys) - min(ys), 1e-9), 4),
        )
        for p in pos
    )


def board_data(ruleset: Any, describe: Any) -> dict[str, Json]:
    """The map as the pages draw it (web/assets/board.js, for the replay and for the human
    seat's page): cities at their coordinates (or a schematic layout when the data has
    none), routes with length, colour (-1 gray), the other track of a double route (-1 none)
    and the map's own label; and what a seat's pieces are called (``piece``, singular)."""
    game_map = ruleset.game_map
    schematic = any(c.x is None or c.y is None for c in game_map.cities)
    where = (
        schematic_layout(game_map)
        if schematic
        else tuple((float(c.x), float(c.y)) for c in game_map.cities)
    )
    return {
        "piece": ruleset.piece,  # New York's are taxis (its ruleset's [setup] piece)
        "schematic": schematic,
        "cities": [
            {"name": c.name, "x": x, "y": y, "attraction": c.attraction}
            for c, (x, y) in zip(game_map.cities, where, strict=True)
        ],
        "routes": [
            [
                r.a,
                r.b,
                r.length,
                r.colour,
                -1 if r.sibling is None else r.sibling,
                describe.route(r.index),
            ]
            for r in game_map.routes
        ],
        "attraction_points": ruleset.attraction_points,
    }


def _tickets_so_far(ruleset: Any, view: Any, card_game: bool) -> list[list[int]]:
    """A seat's own tickets as its own view tells them: ``[completed so far, not yet]``
    (:func:`~ttr_arena.pages.scores.tickets_so_far`)."""
    done, not_yet = tickets_so_far(ruleset, view)
    return [done, not_yet]


def _outcome(family: AnyFamily, ruleset: Any, state: Any, names: Sequence[str]) -> dict[str, Json]:
    """The final score table as ``ttr play`` and ``ttr replay show`` print it: the family's
    columns (they add up to the total), best rank first; and ``details``, why each seat's total
    is what it is (:func:`~ttr_arena.pages.scores.score_details`: tickets completed and
    failed, bonuses). Public: every seat is sent the outcome at the end (EndGame)."""
    result = family.outcome(state)
    columns = family.columns(ruleset)
    rows = sorted(result.seats, key=lambda s: (s.rank, s.seat))
    return {
        "details": score_details(ruleset, result),
        "end_reason": state.end_reason,
        "turns": state.turn,
        "columns": ["rank", "seat", "total", *(header for header, _ in columns)],
        "rows": [
            {
                "seat": s.seat,
                "rank": s.rank,
                "total": s.total,
                "cells": [str(s.rank), names[s.seat], str(s.total), *(c(s) for _, c in columns)],
            }
            for s in rows
        ],
    }


def build_film(
    path: str | Path, seat: int | None = None, *, output: bool = True
) -> dict[str, Json]:
    """Everything the page shows, made by replaying the record through the engine: all
    perspectives (the truth and every seat), or with ``seat`` only that seat's; the lines
    the bots wrote unless ``output`` is false (a public page whose logs are private). Raises
    :class:`~referee.replay.RecordError` for a file that is no record and
    :class:`~ttr_arena.pages.show.ShowError` for a seat the game lacks or a record that cannot be
    replayed to its end, each with a one-line message."""
    data = load_record(path)
    game = start(data, path)
    family = game.family
    ruleset = game.ruleset
    seats = game.start.num_seats
    if seat is not None and not 0 <= seat < seats:
        raise ShowError(f"--seat {seat}: the game has seats 0-{seats - 1}")
    eyes = list(range(seats)) if seat is None else [seat]
    names, table_names = show.seat_names(data, seats)
    describe = family.describer(ruleset, names)
    lines = _Lines()
    card_game = family.name == "card"

    public: list[dict[str, Json]] = []
    own: dict[int, list[dict[str, Json]]] = {s: [] for s in eyes}
    secret: list[dict[str, Json]] = []
    last: dict[str, Json] = {}  # the previous frame of each stream, by stream name
    scores: list[list[int]] = []
    steps: list[list[Json]] = []
    claims: list[list[int]] = []
    log: dict[str, list[list[int]]] = {str(s): [] for s in eyes}
    # each seat's tickets completed so far and not yet, from its own view: [step, done, open]
    # whenever they change
    progress: dict[str, list[list[Json]]] = {str(s): [] for s in eyes}
    seen: dict[int, Json] = {}
    if seat is None:
        log["truth"] = []

    def push(stream: list[dict[str, Json]], name: str, frame: dict[str, Json]) -> None:
        stream.append(_delta(last.get(name), frame))
        last[name] = frame

    def snapshot(state: Any) -> None:
        views = {s: family.view(state, s) for s in eyes}
        plain = {s: _plain(v) for s, v in views.items()}
        shared = {k: v for k, v in plain[eyes[0]].items() if k not in OWN_FIELDS}
        for s in eyes[1:]:
            other = {k: v for k, v in plain[s].items() if k not in OWN_FIELDS}
            if other != shared:
                differ = sorted(k for k in shared if shared[k] != other.get(k))
                raise RuntimeError(f"view fields {differ} differ between seats: see OWN_FIELDS")
        push(public, "public", shared)
        for s in eyes:
            push(own[s], f"own{s}", {k: v for k, v in plain[s].items() if k in OWN_FIELDS})
        if seat is None:
            push(secret, "secret", {"stacks": _plain(state.stacks)} if card_game else {})
        scores.append([describe.score(p) for p in views[eyes[0]].players])
        for s in eyes:
            now = _tickets_so_far(ruleset, views[s], card_game)
            if seen.get(s) != now:
                seen[s] = now
                progress[str(s)].append([len(scores) - 1, *now])

    def tell(events: Sequence[Any]) -> None:
        if seat is None:
            log["truth"].append([lines(describe.event(e)) for e in events])
        for s in eyes:
            log[str(s)].append([lines(describe.event(family.project(e, s))) for e in events])
        told = [family.project(e, eyes[0]) for e in events]  # a claim is public anyway
        claims.append([e.route for e in told if isinstance(e, board_events.RouteClaimed)])

    snapshot(game.start)
    tell(game.start.events)
    steps.append([0, -1, "deal"])
    state = game.start
    try:
        for step in replay(game, data, path):
            before = last["public"]  # what every seat was told of the decision: who, when
            steps.append([before["turn"], before["to_act"], before["phase"]])
            state = step.after
            snapshot(state)
            tell(state.events)
    except Diverged as e:
        raise ShowError(f"{path}: cannot replay it past {e.difference}") from None
    if not state.is_over:
        raise ShowError(f"{path}: the record ends before the game does")

    faults = _faults(data, describe, len(steps) - 1, eyes if seat is not None else None)
    shown = _output(data, len(steps) - 1, eyes if seat is not None else None) if output else []
    difference = verify(path)
    film: dict[str, Json] = {
        "format": FILM_FORMAT,
        "family": family.name,
        "variant": ruleset.ident,
        "title": ruleset.title,
        "game_id": show.shown(data.get("game_id", "")),
        "num_seats": seats,
        "names": names,
        "seat_colours": list(SEAT_COLOURS[:seats]),
        "card_names": list(CARD_NAMES),
        "score_label": describe.score_label,
        "perspectives": (["truth"] if seat is None else []) + eyes,
        "tickets": [describe.ticket(i) for i in range(len(ruleset.tickets))],
        "steps": steps,
        "claims": claims,
        "scores": scores,
        "lines": lines.table,
        "log": log,
        "faults": faults,
        "output": shown,
        "public": public,
        "own": {str(s): own[s] for s in eyes},
        "progress": progress,
        "outcome": _outcome(family, ruleset, state, table_names),
        # in one seat's file, no detail: a difference names hidden values
        "differs": (
            None
            if difference is None
            else str(difference)
            if seat is None
            else "the record differs from its replay"
        ),
    }
    if seat is None:
        film["secret"] = secret
        # it orders every deck: never in one seat's file. A string, because a 64-bit seed is
        # past what a JavaScript number holds exactly, and a rounded seed deals another game.
        film["seed"] = str(data["seed"])
    if isinstance(ruleset, CardRuleset):
        film["big_cities"] = [f"{c.name} ({c.points})" for c in ruleset.big_cities]
        film["owners_see_stack"] = ruleset.owners_see_stack
    else:
        film["board"] = board_data(ruleset, describe)
    return film


def _faults(
    data: dict[str, Json], describe: Any, last_step: int, only: Sequence[int] | None
) -> list[dict[str, Json]]:
    """Every fault at the step that shows its decision (StartGame's at the deal, EndGame's at
    the end), and every default move the referee played; with ``only``, those seats' alone
    (a seat is told of its own faults, never of the others')."""
    out: list[dict[str, Json]] = []

    def step_of(decision: Any, kind: str) -> int:
        if isinstance(decision, int) and 0 <= decision < last_step:
            return decision + 1
        return 0 if kind == "start_game" else last_step

    for f in data.get("faults") or []:
        if not isinstance(f, dict) or not isinstance(f.get("seat"), int):
            continue
        who: int = f["seat"]
        kind = str(f.get("kind", ""))
        out.append(
            {
                "step": step_of(f.get("decision"), kind),
                "seat": who,
                "kind": kind,
                "text": fault_line(f, describe.seat(who)).removeprefix("!! "),
            }
        )
    for number, entry in enumerate(data["actions"]):
        default = entry.get("default") if isinstance(entry, dict) else None
        if default and isinstance(entry.get("seat"), int):
            who = entry["seat"]
            out.append(
                {
                    "step": number + 1,
                    "seat": who,
                    "kind": "default",
                    "text": default_line(str(default), describe.seat(who)).removeprefix("!! "),
                }
            )
    out.sort(key=lambda f: f["step"])  # stable: the record's order within a step
    return [f for f in out if only is None or f["seat"] in only]


def _output(
    data: dict[str, Json], last_step: int, only: Sequence[int] | None
) -> list[dict[str, Json]]:
    """What each bot wrote, at the step of the decision it was answering (the record's
    ``lines``; ``end_lines`` at the last step), as ``{"step", "seat", "lines"}``; with
    ``only``, those seats' alone: a seat's file never holds another bot's output. The page
    sets each line with ``textContent``, and :class:`~ttr_arena.pages.show.BotLines` escapes
    and bounds again what a hand-edited record might hold (a 20 MB line would make a page no
    browser loads)."""
    out: list[dict[str, Json]] = []
    said = show.BotLines()

    def add(step: int, who: Any, lines: Any) -> None:
        if not isinstance(who, int) or not isinstance(lines, list) or not lines:
            return
        if only is None or who in only:
            kept = said.take(who, lines)
            if kept:
                out.append({"step": step, "seat": who, "lines": kept})

    for number, entry in enumerate(data["actions"]):
        if isinstance(entry, dict):
            add(number + 1, entry.get("seat"), entry.get("lines"))
    end_lines = data.get("end_lines")
    if isinstance(end_lines, list):
        for who, lines in enumerate(end_lines):
            add(last_step, who, lines)
    return out


#: The page's fixed markup (made here, never from data: every name, event and fault is set
#: by viewer.js with ``textContent``).
_BODY = """
<header id="top">
  <h1 id="title"></h1>
  <div id="meta" class="muted"></div>
  <label class="perspective">Perspective <select id="seat"></select></label>
  <p id="notes"></p>
</header>
<nav id="controls" class="panel">
  <button id="first" type="button" title="first step (Home)">|&#x25C0;</button>
  <button id="back" type="button" title="step back (Left arrow)">&#x25C0;</button>
  <button id="play" type="button" title="play / pause (Space)">play</button>
  <button id="forward" type="button" title="step forward (Right arrow)">&#x25B6;</button>
  <button id="last" type="button" title="last step (End)">&#x25B6;|</button>
  <span id="track"><input id="slider" type="range" min="0" max="0" value="0"
    aria-label="step"><span id="ticks" aria-hidden="true"></span></span>
  <label>speed <select id="speed">
    <option value="1">1 step/s</option><option value="3">3 steps/s</option>
    <option value="8" selected>8 steps/s</option><option value="20">20 steps/s</option>
    <option value="60">60 steps/s</option>
  </select></label>
  <span id="position"></span>
</nav>
<div id="now" class="panel"><div id="now-head"></div><ul id="now-lines"></ul></div>
<main id="main">
  <section id="stage"></section>
  <aside id="side">
    <div id="table" class="panel"></div>
    <div id="players"></div>
    <h2>Scores</h2>
    <svg id="chart" role="img" aria-label="scores over the game"></svg>
    <div id="final"></div>
    <h2>Faults</h2>
    <p id="no-faults" class="muted" hidden>none</p>
    <ol id="faults"></ol>
  </aside>
</main>
<h2>Game log</h2>
<div id="log" class="panel"></div>
"""


def render_html(path: str | Path, seat: int | None = None, *, output: bool = True) -> str:
    """The whole HTML document of ``ttr replay view`` for a record (see :func:`build_film`
    for ``seat``, ``output`` and the errors)."""
    film = build_film(path, seat, output=output)
    who = ", ".join(film["names"])
    mode = "" if seat is None else f", as seen by seat {seat}"
    return html_page(
        f"{film['title']}: {who}{mode}",
        _BODY,
        data=film,
        scripts=(asset("board.js"), asset("viewer.js", "ttr_arena.pages.viewer")),
        styles=(asset("viewer.css", "ttr_arena.pages.viewer"),),
    )
