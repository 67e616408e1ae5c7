"""``ttr replay show``: a game record as text, turn by turn, with names instead of indices.

The record is replayed through the engine (referee/replay.py), so every state is the
engine's own. Two readings:

* the whole game (the referee's eye): every event in full, the face-up row and the running
  scores at each turn, every fault with the rule and message its bot was sent;
* one seat (``seat=N``): exactly what that seat was given. Its situation at each of its
  decisions is its family's ``view(state, N)`` (the function that builds the bot's request),
  the other seats' moves are the events as ``project(event, N)`` passes them to it, and only
  its own faults are shown (it was told of those). Of a state itself, that mode reads only
  what every seat is told (whose decision it is, the turn, whether the game is over), so
  nothing hidden from the seat can appear (tests/test_replay_show.py changes the other seats'
  secrets and checks that the output does not change).

What a family's events, tickets and views look like in words is its :class:`Describer`,
chosen by the family's name: the board games (``referee.games.board``) and the card game
(``referee.games.card``) each have one, and the loop below never asks which game it shows.
Colours are the wire's names (``CardColour``: red ... white, locomotive;
referee/games/common/cards.py names them in the same order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from referee.games.board import events as board_events
from referee.games.board.state import EMPTY
from referee.games.card import events as card_events
from referee.games.common.cards import CARD_NAMES, LOCOMOTIVE
from referee.games.registry import AnyRuleset, Family
from referee.replay import Diverged, Game, Step, load_record, replay, start, verify
from ttr_arena.pages.scores import format_outcome


class ShowError(Exception):
    """The record cannot be shown as asked (a seat or a turn it does not have)."""


def card(kind: int) -> str:
    """A card kind by its wire name (``CardColour`` without the prefix, lower case)."""
    return CARD_NAMES[kind] if 0 <= kind < len(CARD_NAMES) else f"card {kind}"


def count(n: int, noun: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def cards(counts: Sequence[int], empty: str = "no cards") -> str:
    """Per-kind counts (a hand, a stack) as ``2 red, 1 locomotive``."""
    parts = [f"{n} {card(kind)}" for kind, n in enumerate(counts) if n]
    return ", ".join(parts) if parts else empty


def row(face_up: Sequence[int]) -> str:
    """The face-up row, slot by slot."""
    return ", ".join("(empty)" if c == EMPTY else card(c) for c in face_up)


def payment(colour: int, count: int, locomotives: int) -> str:
    """``3 red + 1 locomotive``: ``count`` cards of ``colour`` and ``locomotives`` wild cards
    (an all-Locomotive payment is written with the Locomotive as its colour)."""
    if colour == LOCOMOTIVE:
        return f"{count + locomotives} locomotive"
    parts = [f"{count} {card(colour)}"] if count else []
    if locomotives:
        parts.append(f"{locomotives} locomotive")
    return " + ".join(parts)


_END_REASONS = {
    "last_round": "the last round is over",
    "all_passed": "every seat passed",
    "deck_out": "the Train deck ran out",
    "stalled": "play stalled",
}


class Describer:
    """What one rules family's tickets, events and views look like in words. ``names[i]`` is
    seat i as printed (``0:greedy``). The board games' events are shared with the card
    game (referee/games/card/events.py), so they are described here, once."""

    #: the running score a view shows for each seat (``players[i]``), and what it counts
    score_label = "points"

    def __init__(self, ruleset: Any, names: Sequence[str]) -> None:
        self.ruleset = ruleset
        self.names = names

    def seat(self, seat: int) -> str:
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    def ticket(self, index: int) -> str:
        raise NotImplementedError

    def tickets(self, indices: Sequence[int] | None, empty: str = "none") -> str:
        if indices is None:
            return "(hidden)"
        return ", ".join(self.ticket(i) for i in indices) if indices else empty

    def score(self, player: Any) -> int:
        raise NotImplementedError

    def event(self, e: Any) -> str:
        """One event as a sentence with its own subject."""
        match e:
            case board_events.FaceUpTaken(seat=s, slot=slot, card=c):
                return f"{self.seat(s)} takes {card(c)} from the row (slot {slot})"
            case board_events.BlindDrawn(seat=s, card=c):
                drawn = "" if c is None else f": {card(c)}"
                return f"{self.seat(s)} draws a card from the deck{drawn}"
            case board_events.FaceUpDealt(slot=slot, card=c):
                return f"{card(c)} is turned face up in slot {slot}"
            case board_events.FaceUpFlushed(cards=cs):
                return f"the row is discarded ({row(cs)})"
            case board_events.DeckReshuffled(size=n):
                return f"the discards are shuffled into a new deck of {count(n, 'card')}"
            case board_events.TicketsDrawn(seat=s, count=n, tickets=ts):
                shown = "" if ts is None else f": {self.tickets(ts)}"
                return f"{self.seat(s)} draws {count(n, 'ticket')}{shown}"
            case board_events.TicketsKept(seat=s, kept_count=k, returned_count=r, kept=ts):
                shown = "" if ts is None else f" ({self.tickets(ts)})"
                return f"{self.seat(s)} keeps {count(k, 'ticket')}{shown}, returns {r}"
            case board_events.Passed(seat=s):
                return f"{self.seat(s)} passes"
            case board_events.GameEnded(reason=reason):
                return f"game over: {_END_REASONS.get(reason, reason.replace('_', ' '))}"
        return f"{type(e).__name__} {e}"  # an event this version cannot name: shown raw

    def standing(self, view: Any) -> str:
        """The running scores, from a view's public part."""
        scores = ", ".join(f"{self.seat(p.seat)} {self.score(p)}" for p in view.players)
        return f"{self.score_label}: {scores}"

    def view_lines(self, view: Any) -> list[str]:
        """A seat's view: what it holds, then what it knows of the others."""
        raise NotImplementedError


class BoardDescriber(Describer):
    score_label = "route points"

    def ticket(self, index: int) -> str:
        """``Denver-El Paso 4``."""
        tickets = self.ruleset.tickets
        if not 0 <= index < len(tickets):
            return f"ticket #{index}"
        t = tickets[index]
        cities = self.ruleset.game_map.cities
        return f"{cities[t.a].name}-{cities[t.b].name} {t.points}"

    def route(self, index: int) -> str:
        """``Denver-Omaha (4 red, #12)``, the map's own label."""
        routes = self.ruleset.game_map.routes
        if not 0 <= index < len(routes):
            return f"route #{index}"
        label: str = self.ruleset.game_map.route_label(index)
        return label

    def score(self, player: Any) -> int:
        points: int = player.route_points
        return points

    def event(self, e: Any) -> str:
        match e:
            case board_events.RouteClaimed(seat=s, route=r, colour=c, locomotives=n, points=p):
                length = (
                    self.ruleset.game_map.routes[r].length
                    if 0 <= r < len(self.ruleset.game_map.routes)
                    else n
                )
                paid = payment(c, length - n, n)
                return f"{self.seat(s)} claims {self.route(r)} with {paid}: +{p}"
            case board_events.LastRoundStarted(seat=s, trains=t):
                return (
                    f"{self.seat(s)} has {count(t, 'train')} left: last round, one more turn each"
                )
        return super().event(e)

    def view_lines(self, view: Any) -> list[str]:
        me = view.players[view.seat]
        lines = [
            f"hand: {cards(view.hand)}",
            f"tickets: {self.tickets(view.tickets)}",
        ]
        if view.offered:
            lines.append(f"offered: {self.tickets(view.offered)}")
        lines.append(
            f"trains {me.trains}, route points {me.route_points}, routes: {self._routes(me.routes)}"
        )
        lines.append(
            f"row: {row(view.face_up)}; deck {view.deck_size}, discards {sum(view.discards)}, "
            f"ticket deck {view.ticket_deck_size}"
        )
        for p in view.players:
            if p.seat != view.seat:
                pending = f" (+{p.tickets_pending} offered)" if p.tickets_pending else ""
                lines.append(
                    f"{self.seat(p.seat)}: {count(p.hand_size, 'card')}, "
                    f"{count(p.tickets, 'ticket')}{pending}, {count(p.trains, 'train')}, "
                    f"{p.route_points} route points, "
                    f"routes: {self._routes(p.routes)}"
                )
        return lines

    def _routes(self, routes: Sequence[int]) -> str:
        if not routes:
            return "none"
        cities = self.ruleset.game_map.cities
        out = []
        for r in routes:
            route = self.ruleset.game_map.routes[r]
            out.append(f"{cities[route.a].name}-{cities[route.b].name}")
        return ", ".join(out)


class CardDescriber(Describer):
    score_label = "ticket points"

    def ticket(self, index: int) -> str:
        """``Denver-El Paso 4``."""
        tickets = self.ruleset.tickets
        if not 0 <= index < len(tickets):
            return f"ticket #{index}"
        t = tickets[index]
        return f"{t.a}-{t.b} {t.points}"

    def city(self, index: int) -> str:
        cities = self.ruleset.big_cities
        return cities[index].name if 0 <= index < len(cities) else f"city #{index}"

    def score(self, player: Any) -> int:
        points: int = player.ticket_points
        return points

    def event(self, e: Any) -> str:
        match e:
            case card_events.MovedOnTrack(seat=s, count=n, cards=cs):
                shown = "" if cs is None else f" ({', '.join(card(c) for c in cs) or 'none'})"
                return f"{self.seat(s)} moves {count(n, 'card')} onto its On-the-Track stack{shown}"
            case card_events.SuitPlaced(seat=s, colour=c, cards=n, locomotives=loc):
                return f"{self.seat(s)} places {payment(c, n, loc)} in its {card(c)} Railyard row"
            case card_events.MixPlaced(seat=s, colours=cs):
                return f"{self.seat(s)} places a mix: one {', one '.join(card(c) for c in cs)}"
            case card_events.TrainRobbed(robber=r, seat=s, colour=c, cards=n, locomotives=loc):
                return (
                    f"{self.seat(r)} robs {self.seat(s)}: its {card(c)} row "
                    f"({payment(c, n, loc)}) is discarded"
                )
            case card_events.FinalRoundStarted(seat=s, deck=d):
                by = "the deal" if s < 0 else self.seat(s)
                return f"{by} took the last card of deck {d}: final round, one more turn each"
            case card_events.PlayStalled(turns=t):
                return f"no card moved and no ticket kept for {t} turns: the deck is scored now"
            case card_events.StackScored(seat=s, deck=d, stack=st, completed=done, points=p):
                return (
                    f"{self.seat(s)} scores its stack (deck {d}: {cards(st)}): completes "
                    f"{self.tickets(done)}: +{p}"
                )
            case card_events.CardsDealt(seat=s, count=n, cards=cs):
                shown = "" if cs is None else f" ({', '.join(card(c) for c in cs)})"
                return f"{self.seat(s)} is dealt {count(n, 'card')} from the second deck{shown}"
            case card_events.TicketsRevealed(seat=s, tickets=ts, points=p):
                return f"{self.seat(s)} shows the tickets left in hand: {self.tickets(ts)}: -{p}"
            case card_events.BonusAwarded(city=c, seats=ss, points=p):
                to = ", ".join(self.seat(s) for s in ss) or "nobody"
                return f"Big Cities bonus {self.city(c)} (+{p}) to {to}"
        return super().event(e)

    def view_lines(self, view: Any) -> list[str]:
        me = view.players[view.seat]
        lines = [
            f"hand: {cards(view.hand)}",
            f"tickets: {self.tickets(view.tickets)}",
        ]
        if view.offered:
            lines.append(f"offered: {self.tickets(view.offered)}")
        stack = (
            f"{cards(view.stack, 'empty')}"
            if view.stack is not None
            else f"{count(me.stack_size, 'card')}, face down"
        )
        lines.append(f"your stack: {stack}; railyard: {self._yard(me)}")
        lines.append(
            f"completed: {self.tickets(me.completed)} ({me.ticket_points} points)"
            if me.completed
            else f"completed: none ({me.ticket_points} points)"
        )
        lines.append(
            f"row: {row(view.face_up)}; deck {view.deck_number}: {view.deck_size} cards, "
            f"discards {sum(view.discards)}, ticket deck {view.ticket_deck_size}"
        )
        for p in view.players:
            if p.seat != view.seat:
                pending = f" (+{p.tickets_pending} offered)" if p.tickets_pending else ""
                done = f", completed {self.tickets(p.completed)}" if p.completed else ""
                lines.append(
                    f"{self.seat(p.seat)}: {count(p.hand_size, 'card')}, "
                    f"{count(p.tickets, 'ticket')}{pending}, "
                    f"stack {p.stack_size}, railyard: {self._yard(p)}, "
                    f"{p.ticket_points} ticket points{done}"
                )
        return lines

    @staticmethod
    def _yard(player: Any) -> str:
        rows = [
            payment(c, n, loc)
            for c, (n, loc) in enumerate(
                zip(player.railyard, player.railyard_locomotives, strict=True)
            )
            if n or loc
        ]
        return ", ".join(rows) if rows else "empty"


#: A family's describer, by the family's name (referee/games/registry.py).
DESCRIBERS: dict[str, Callable[[Any, Sequence[str]], Describer]] = {
    "board": BoardDescriber,
    "card": CardDescriber,
}

_FAULT_WORDS = {
    "rejected": "answer rejected",
    "timeout": "timed out",
    "crash": "crashed",
    "disconnect": "disconnected",
    "start_game": "StartGame failed",
    "end_game": "EndGame failed",
}


def fault_line(fault: dict[str, Any], who: str) -> str:
    """A recorded fault: for a rejection, the rule and message the bot was sent with the
    next request (``Rejection``); for the others, the status and what the referee saw."""
    kind = str(fault.get("kind", ""))
    rule = str(fault.get("rule", ""))
    message = str(fault.get("message", ""))
    words = _FAULT_WORDS.get(kind, kind)
    if kind == "rejected":
        return f"!! {who}: {words}: rule {rule}: {message}"
    status = f" ({rule})" if rule else ""
    return f"!! {who}: {words}{status}: {message}"


def default_line(default: str, who: str) -> str:
    """A decision the referee ended with its safe default move, and why (the record's
    ``default``: ``faults``, ``timeout``, ...)."""
    return f"!! {who}: the safe default move is played ({default})"


def seat_names(data: dict[str, Any], seats: int) -> tuple[list[str], list[str]]:
    """Per seat: the short name for lines (``0:greedy``) and the table's (``0:greedy 1.0``)."""
    short: list[str] = []
    full: list[str] = []
    recorded = data.get("seats")
    for i in range(seats):
        entry = recorded[i] if isinstance(recorded, list) and i < len(recorded) else None
        name = str(entry.get("name", "")) if isinstance(entry, dict) else ""
        version = str(entry.get("version", "")) if isinstance(entry, dict) else ""
        short.append(f"{i}:{name}" if name else f"seat {i}")
        full.append(f"{i}:{f'{name} {version}'.strip()}" if name else f"seat {i}")
    return short, full


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
    family: Family = game.family
    ruleset: AnyRuleset = game.ruleset
    seats = game.start.num_seats
    names, table_names = seat_names(data, seats)
    describe = DESCRIBERS[family.name](ruleset, names)
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
        f"game {data.get('game_id', '?')}"
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
                        if not isinstance(e, board_events.FaceUpDealt)
                    )
            elif shown_turn != turn:
                shown_turn = turn
                yield f"turn {turn}  row: {row(public.face_up)} | {describe.standing(public)}"
            yield from _decision(step, family, describe, seat, faults.get(step.number, []))
            yield from (f"  {describe.event(e)}" for e in project(state.events))
    except Diverged as e:
        raise ShowError(f"{path}: cannot replay it past {e.difference}") from None
    if not state.is_over:
        raise ShowError(f"{path}: the record ends before the game does")
    yield ""
    yield f"final scores after {state.turn} turns ({state.end_reason.replace('_', ' ')}):"
    yield from format_outcome(ruleset, family.outcome(state), table_names).splitlines()
    for f in faults.get(-1, []):
        if f.get("kind") != "start_game":
            yield fault_line(f, who(f))


def _decision(
    step: Step,
    family: Family,
    describe: Describer,
    seat: int | None,
    faults: list[dict[str, Any]],
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
    for f in faults:
        yield f"  {fault_line(f, name)}"
    default = step.entry.get("default")
    if default and (seat is None or actor == seat):
        yield f"  {default_line(str(default), name)}"
