"""Shared test helpers: build exact game situations from a seeded game.

Tests set hidden and public facts directly with ``dataclasses.replace`` on a real state, so
every case starts from a legal game and changes only what it names.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from leaderboard.store import GameResult, SeatResult
from referee.rules import GameState, Phase, Ruleset, apply, legal_actions, load_ruleset, new_game
from referee.rules.actions import KeepTickets
from referee.rules.cards import COLOURS, LOCOMOTIVE, NUM_CARD_KINDS

USA = load_ruleset("usa")


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
