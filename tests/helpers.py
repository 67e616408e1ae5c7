"""Shared test helpers: build exact game situations from a seeded game.

Tests set hidden and public facts directly with ``dataclasses.replace`` on a real state, so
every case starts from a legal game and changes only what it names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leaderboard.store import GameResult, SeatResult
from referee.games.board import (
    GameState,
    Pass,
    Phase,
    Ruleset,
    apply,
    legal_actions,
    load_ruleset,
    new_game,
)
from referee.games.board.actions import KeepTickets
from referee.games.common.cards import CARD_NAMES, COLOURS, LOCOMOTIVE, NUM_CARD_KINDS
from referee.games.registry import load
from referee.match import Clock, SeatBot, play_match
from sdk import StrategyBot, start_server
from sdk.strategies import CardRandomStrategy, RandomStrategy

USA = load_ruleset("usa")

#: Every packaged variant, written out (tests/games/test_variants.py checks this is exactly
#: ``available_variants()``, so a new variant file fails the suite until it is tested).
VARIANTS: tuple[str, ...] = ("usa", "usa1910", "mega", "bigcities", "newyork")
RULESETS: dict[str, Ruleset] = {name: load_ruleset(name) for name in VARIANTS}
NEW_YORK = RULESETS["newyork"]


@dataclass(frozen=True)
class BoxFacts:
    """What a variant's box and rulebook print, written down again from the rulebook text
    (never read from the ruleset), so a wrong ruleset value shows up as a failing test."""

    players: tuple[int, ...]  #: the player counts the game is for
    #: train cards per kind in card order (red, orange, yellow, green, blue, pink, black,
    #: white), the wild card (Locomotive; New York's Taxi card) last
    cards: tuple[int, ...]
    trains: int  #: trains (New York: taxis) per player
    hand: int  #: train cards dealt to each player
    face_up: int
    tickets: int  #: destination tickets in play
    setup_dealt: int
    setup_keep: int
    drawn: int  #: tickets drawn by the ticket action
    draw_keep: int
    #: the most seats at which claiming one track of a double route closes the other
    one_track_up_to: int
    trigger: int  #: a turn ending with this many trains or fewer starts the final round
    route_points: tuple[int, ...]  #: points by route length 1, 2, ...
    longest_path: int  #: the Longest Path bonus (0: not in play)
    globetrotter: int  #: the Globetrotter bonus (0: not in play)
    attraction: int  #: points per Tourist Attraction touched (0: none on the map)


_USA_BOX = BoxFacts(
    players=(2, 3, 4, 5),  # 002:18 "5 scoring markers"; the game is for 2-5 players
    cards=(12,) * 8 + (14,),  # 002:20 "110 train car cards ... including 14 locomotives"
    trains=45,  # 003:9
    hand=4,  # 003:11
    face_up=5,  # 003:11
    tickets=30,  # 002:23 "30 destination cards"
    setup_dealt=3,  # 003:15
    setup_keep=2,  # 003:17
    drawn=3,  # 003:59
    draw_keep=1,  # 003:59
    one_track_up_to=3,  # 003:87 "In 2 or 3 player games, only one of the Double Routes"
    trigger=2,  # 003:101
    route_points=(1, 2, 4, 7, 10, 15),  # 002:89-95
    longest_path=10,  # 003:107
    globetrotter=0,  # 003:25 the Globetrotter belongs to the 1910 variants
    attraction=0,
)

#: Per variant: 003 lines 21-37 change only tickets, deal and bonus cards; 001 is New York.
FACTS: dict[str, BoxFacts] = {
    "usa": _USA_BOX,
    # 003:25 only the 35 tickets with the 1910 logo; the Globetrotter (15, shared/data/README)
    # replaces the Longest Path card.
    "usa1910": dataclasses.replace(_USA_BOX, tickets=35, longest_path=0, globetrotter=15),
    # 003:29 "Use both bonus cards. Shuffle all 69 tickets and deal 5 to each player; keep at
    # least 3." 003:31 "draw 4 and keep at least 1".
    "mega": dataclasses.replace(
        _USA_BOX, tickets=69, setup_dealt=5, setup_keep=3, drawn=4, globetrotter=15
    ),
    # 003:35 "the 35 tickets that feature at least 1 Big City ... deal 4 to each player; keep
    # at least 2"; 003:37 "draw 4 and keep at least 1". The bonus: docs/rules.md (003:13).
    "bigcities": dataclasses.replace(_USA_BOX, tickets=35, setup_dealt=4, drawn=4),
    "newyork": BoxFacts(
        players=(2, 3, 4),  # 001:164-165 "60 plastic Taxis (15 in each color)": 4 colours
        # 001:170-175 "44 Transportation cards (8 multi-colored Taxi cards and 6 cards of each
        # following colors: blue, green, black, pink, red, orange)"
        cards=(6, 6, 0, 6, 6, 6, 6, 0, 8),
        trains=15,  # 001:164-165
        hand=2,  # 001:88-89
        face_up=5,  # 001:91-92
        tickets=18,  # 001:177
        setup_dealt=2,  # 001:96-97
        setup_keep=1,  # 001:99 "keep one or both cards"
        drawn=2,  # 001:24-25
        draw_keep=1,  # 001:25-26
        one_track_up_to=2,  # 001:152-153 "In two-player games"
        trigger=2,  # 001:36-37 "two or fewer plastic Taxis"
        route_points=(1, 2, 4, 7),  # 001:70-73 the Route Scoring Table on the board
        longest_path=0,  # 001:70-81 lists every score: no bonus card
        globetrotter=0,
        attraction=1,  # 001:79-81
    ),
}


def seat_counts(ruleset: Ruleset) -> range:
    """Every player count the ruleset allows."""
    return range(ruleset.min_players, ruleset.max_players + 1)


def variant_seats() -> list[tuple[str, int]]:
    """Every (variant, player count) pair, in a fixed order."""
    return [(name, n) for name in VARIANTS for n in FACTS[name].players]


def mask(*indices: int) -> int:
    """An ownership bitmask of route indices (each listed once)."""
    out = 0
    for i in indices:
        assert not out >> i & 1, "route listed twice"
        out |= 1 << i
    return out


def card(name: str) -> int:
    """Card kind by name: a colour or 'loco'/'locomotive'."""
    if name in ("loco", "locomotive"):
        return LOCOMOTIVE
    return COLOURS.index(name)


def hand(**counts: int) -> tuple[int, ...]:
    """A hand as per-kind counts: ``hand(red=2, loco=1)``."""
    out = [0] * NUM_CARD_KINDS
    for name, n in counts.items():
        out[card(name)] += n
    return tuple(out)


def route_index(ruleset: Ruleset, a: str, b: str, colour: str | None = None) -> int:
    """Index of the route between two cities (of the given colour, for doubles)."""
    m = ruleset.game_map
    ia, ib = m.city_index[a], m.city_index[b]
    found = [
        r.index
        for r in m.routes
        if {r.a, r.b} == {ia, ib}
        and (
            colour is None
            or (r.colour == -1 and colour == "gray")
            or (r.colour >= 0 and COLOURS[r.colour] == colour)
        )
    ]
    if len(found) != 1:
        raise ValueError(f"{len(found)} routes match {a}-{b} {colour}")
    return found[0]


def ticket_index(ruleset: Ruleset, a: str, b: str) -> int:
    m = ruleset.game_map
    pair = {m.city_index[a], m.city_index[b]}
    for t in ruleset.tickets:
        if {t.a, t.b} == pair:
            return t.index
    raise ValueError(f"no ticket {a}-{b}")


def after_setup(num_seats: int = 4, seed: int = 1, ruleset: Ruleset = USA) -> GameState:
    """A game after every seat kept all its starting tickets: seat 0 to play its first turn."""
    state = new_game(ruleset, num_seats, seed)
    while state.phase is Phase.SETUP_TICKETS:
        state = apply(state, KeepTickets(tuple(sorted(state.offered[state.seat]))))
    return state


def with_(state: GameState, **changes: Any) -> GameState:
    """``dataclasses.replace`` that also accepts a per-seat dict for tuple-per-seat fields:
    ``with_(s, hands={0: hand(red=3)})``."""
    fixed: dict[str, Any] = {}
    for name, value in changes.items():
        if isinstance(value, dict):
            current = list(getattr(state, name))
            for seat, v in value.items():
                current[seat] = v
            value = tuple(current)
        fixed[name] = value
    return dataclasses.replace(state, **fixed)


def play_out(state: GameState, choose: Any) -> GameState:
    """Apply ``choose(state, legal)`` until the game is over."""
    while not state.is_over:
        state = apply(state, choose(state, legal_actions(state)))
    return state


def stored_game(index: int, seats: tuple[SeatResult, ...], variant: str = "usa@1") -> GameResult:
    """A finished game of tournament 1 as the store holds it, in schedule slot ``index``."""
    return GameResult(
        game_id=f"g{index}",
        tournament_id=1,
        schedule_index=index,
        round=0,
        variant=variant,
        num_seats=len(seats),
        seed=index,
        end_reason="last_round",
        decisions=100,
        record_path=None,
        started_at=0.0,
        finished_at=1.0,
        seats=seats,
        faults=(),
    )


#: The clock of the recorded test games: generous, so a slow machine never times a bot out.
CLOCK = Clock(move_ms=2000, bank_ms=20000)


class Liar(StrategyBot):
    """Plays randomly, but answers ``Pass`` (illegal while it has anything else to do) to
    its first four requests: three rejections and the default move in its first decision,
    one rejection in its second."""

    def __init__(self) -> None:
        super().__init__(RandomStrategy, CardRandomStrategy)
        self.calls = 0

    def choose(self, view: Any, legal: Sequence[Any]) -> Any:
        self.calls += 1
        if self.calls <= 4:
            return Pass()
        return super().choose(view, legal)


def play(
    path: Path,
    variant: str,
    seats: int,
    seed: int,
    liar: bool = False,
    names: Sequence[str] | None = None,
) -> Path:
    """A real game between in-process SDK bots over gRPC, its record written to ``path``.
    The bots are named ``random``, ``random2`` (``liar`` for the liar in seat 1), ``random3``
    ... unless ``names`` are given."""
    bots = [
        Liar() if liar and i == 1 else StrategyBot(RandomStrategy, CardRandomStrategy)
        for i in range(seats)
    ]
    if names is None:
        names = ["random", "liar" if liar else "random2"]
        names += [f"random{i + 1}" for i in range(2, seats)]
    running = [start_server(b) for b in bots]
    try:
        seat_bots = [SeatBot(names[i], "1", r.address) for i, r in enumerate(running)]
        play_match(load(variant), seat_bots, seed, CLOCK, record_path=path)
    finally:
        for r in running:
            r.stop(grace=None)
    return path


#: The fields ``project`` hides from other seats, per event class (referee/games/board/events.py,
#: referee/games/card/events.py).
HIDDEN = {
    "BlindDrawn": "card",
    "TicketsDrawn": "tickets",
    "TicketsKept": "kept",
    "MovedOnTrack": "cards",
    "CardsDealt": "cards",
}


def _other(value: Any, size: int) -> Any:
    """A different secret of the same size (a count stays public)."""
    if isinstance(value, int):
        return (value + 1) % size
    return tuple((v + 1) % size for v in value)


def hide_differently(state: Any, seat: int) -> Any:
    """``state`` with ``seat``'s secrets changed and its public counts kept: its hand and
    stack permuted, its tickets (kept and offered) others, its last events' hidden fields
    changed."""
    n_tickets = len(state.ruleset.tickets)
    changes: dict[str, Any] = {}
    for name in ("hands", "stacks"):
        if hasattr(state, name):
            per_seat = list(getattr(state, name))
            per_seat[seat] = tuple(reversed(per_seat[seat]))
            changes[name] = tuple(per_seat)
    for name in ("tickets", "offered"):
        per_seat = list(getattr(state, name))
        per_seat[seat] = _other(per_seat[seat], n_tickets)
        changes[name] = tuple(per_seat)
    new_events = []
    for e in state.events:
        field = HIDDEN.get(type(e).__name__)
        if field is not None and getattr(e, "seat", None) == seat:
            size = n_tickets if "ticket" in field or field == "kept" else len(CARD_NAMES)
            e = dataclasses.replace(e, **{field: _other(getattr(e, field), size)})
        new_events.append(e)
    changes["events"] = tuple(new_events)
    return dataclasses.replace(state, **changes)
