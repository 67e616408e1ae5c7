"""Drawing destination tickets during the game.

003:59 (draw 3, keep >= 1, returns to the bottom), 003:91-95 (any number, short deck, kept
tickets stay), 002:97-106, RULINGS 6. Each case id or comment cites the line it checks.
"""

from __future__ import annotations

from itertools import combinations

import pytest

from referee.games.board import (
    GameState,
    IllegalActionError,
    KeepTickets,
    Phase,
    apply,
    legal_actions,
)
from referee.games.board.actions import DRAW_TICKETS, DrawTickets
from tests.helpers import after_setup, with_


def start(ticket_deck: tuple[int, ...] | None = None) -> GameState:
    """Seat 0 to play its first turn of a 4-player game (every seat kept its 3 tickets)."""
    s = after_setup(4, seed=1)
    return s if ticket_deck is None else with_(s, ticket_deck=ticket_deck)


def test_draw_tickets_takes_3_from_the_top() -> None:
    # 003:59 "Draw 3 Destination Tickets from the top of the Tickets deck"
    s = start()
    deck = s.ticket_deck
    after = apply(s, DRAW_TICKETS)
    assert after.offered[0] == (deck[-1], deck[-2], deck[-3])  # top last in the tuple
    assert after.ticket_deck == deck[:-3]
    assert after.phase is Phase.KEEP_TICKETS
    assert after.seat == 0  # the choice is the same seat's decision, same turn
    assert after.turn == s.turn
    assert after.tickets == s.tickets  # nothing kept yet
    offered = sorted(after.offered[0])
    assert set(legal_actions(after)) == {
        KeepTickets(c) for k in (1, 2, 3) for c in combinations(offered, k)
    }


@pytest.mark.parametrize(
    ("positions", "rule"),
    [
        pytest.param((), "tickets.keep_min", id="keep-0-rejected-003:59"),
        pytest.param((0,), None, id="keep-1-003:59"),
        pytest.param((2,), None, id="keep-1-other-003:59"),
        pytest.param((0, 2), None, id="keep-2-003:59"),
        pytest.param((0, 1, 2), None, id="keep-3-002:103"),
    ],
)
def test_keep_at_least_1_returns_go_to_the_bottom(
    positions: tuple[int, ...], rule: str | None
) -> None:
    # 003:59 "You must keep at least 1. Returned cards go to the bottom of the deck."
    s = apply(start(), DRAW_TICKETS)
    offered = s.offered[0]
    kept = tuple(sorted(offered[p] for p in positions))
    action = KeepTickets(kept)
    if rule is not None:
        assert action not in legal_actions(s)
        with pytest.raises(IllegalActionError) as err:
            apply(s, action)
        assert err.value.rule == rule
        return
    after = apply(s, action)
    returned = [t for t in offered if t not in kept]
    held_before = s.tickets[0]
    assert after.tickets[0] == held_before + kept  # 003:91 any number of tickets
    assert after.offered[0] == ()
    # bottom = front of the tuple; the rest of the deck (and its top) unchanged
    assert sorted(after.ticket_deck[: len(returned)]) == sorted(returned)
    assert after.ticket_deck[len(returned) :] == s.ticket_deck
    assert after.tickets[1:] == s.tickets[1:]
    assert after.phase is Phase.TURN
    assert after.seat == 1
    assert after.turn == s.turn + 1


@pytest.mark.parametrize(
    ("deck_size", "keep_count", "rule"),
    [
        pytest.param(2, 0, "tickets.keep_min", id="2-left-keep-0-003:93"),
        pytest.param(2, 1, None, id="2-left-keep-1-003:93"),
        pytest.param(2, 2, None, id="2-left-keep-2-003:93"),
        pytest.param(1, 0, "tickets.keep_min", id="1-left-keep-0-003:93"),
        pytest.param(1, 1, None, id="1-left-keep-1-003:93"),
        pytest.param(3, 1, None, id="3-left-keep-1-003:59"),
    ],
)
def test_short_ticket_deck_draws_what_is_left(
    deck_size: int, keep_count: int, rule: str | None
) -> None:
    # 003:93 "If there are less than 3 Tickets left, the player draws only what is available."
    # (002:105) The minimum of 1 (003:59) still applies to what was drawn.
    full = start()
    deck = full.ticket_deck[-deck_size:]
    s = apply(start(deck), DRAW_TICKETS)
    assert s.offered[0] == tuple(reversed(deck))
    assert s.ticket_deck == ()
    assert s.phase is Phase.KEEP_TICKETS
    kept = tuple(sorted(s.offered[0][:keep_count]))
    expected_choices = {
        KeepTickets(c) for k in range(1, deck_size + 1) for c in combinations(sorted(deck), k)
    }
    assert set(legal_actions(s)) == expected_choices
    if rule is not None:
        with pytest.raises(IllegalActionError) as err:
            apply(s, KeepTickets(kept))
        assert err.value.rule == rule
        return
    after = apply(s, KeepTickets(kept))
    assert after.tickets[0] == full.tickets[0] + kept
    assert sorted(after.ticket_deck) == sorted(t for t in deck if t not in kept)
    assert after.seat == 1


def test_empty_ticket_deck_makes_draw_tickets_illegal() -> None:
    # 003:93 draws "only what is available": with none, there is no ticket draw
    s = start(())
    assert DRAW_TICKETS not in legal_actions(s)
    with pytest.raises(IllegalActionError) as err:
        apply(s, DrawTickets())
    assert err.value.rule == "tickets.deck_empty"


def test_returned_tickets_come_back_only_after_the_rest_of_the_deck() -> None:
    # 003:59 returns go to the bottom: drawing through the deck meets them last
    s = start()
    s = apply(s, DRAW_TICKETS)
    offered = s.offered[0]
    s = apply(s, KeepTickets((offered[0],)))
    returned = set(offered[1:])
    remaining = len(s.ticket_deck) - len(returned)
    seen: list[int] = []
    while len(seen) < remaining:
        assert s.phase is Phase.TURN
        s = apply(s, DRAW_TICKETS)
        seen.extend(s.offered[s.seat])
        s = apply(s, KeepTickets(tuple(sorted(s.offered[s.seat]))))
    assert len(seen) == remaining
    assert not returned & set(seen)
    assert set(s.ticket_deck) == returned
    s = apply(s, DRAW_TICKETS)
    assert set(s.offered[s.seat]) == returned  # the returned tickets, last


def test_kept_tickets_are_never_discarded_later() -> None:
    # 003:95 "Once kept, Tickets must be kept until the end of the game and cannot be
    # discarded during a later Ticket draw."
    s = start()
    held = s.tickets[0]
    assert len(held) == 3
    s = apply(s, DRAW_TICKETS)
    new = s.offered[0]
    # every choice keeps at least one new ticket and never lists a held one
    for action in legal_actions(s):
        assert isinstance(action, KeepTickets)
        assert not set(action.tickets) & set(held)
    # trying to "keep" an old ticket together with new ones (as if re-choosing) is rejected
    with pytest.raises(IllegalActionError) as err:
        apply(s, KeepTickets(tuple(sorted((held[0], new[0])))))
    assert err.value.rule == "tickets.not_offered"
    after = apply(s, KeepTickets((new[1],)))
    assert after.tickets[0] == (*held, new[1])  # the old tickets are all still held


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("ticket_deck", id="from-the-deck-003:59"),
        pytest.param("own_kept", id="own-kept-ticket-003:95"),
        pytest.param("other_seat", id="other-seats-ticket-003:91"),
        pytest.param("nonexistent", id="no-such-ticket-003:59"),
    ],
)
def test_keeping_a_ticket_not_offered_is_rejected(source: str) -> None:
    s = apply(start(), DRAW_TICKETS)
    stray = {
        "ticket_deck": s.ticket_deck[-1],
        "own_kept": s.tickets[0][0],
        "other_seat": s.tickets[2][0],
        "nonexistent": 999,
    }[source]
    with pytest.raises(IllegalActionError) as err:
        apply(s, KeepTickets(tuple(sorted((s.offered[0][0], stray)))))
    assert err.value.rule == "tickets.not_offered"
    with pytest.raises(IllegalActionError) as err:
        apply(s, KeepTickets((stray,)))
    assert err.value.rule == "tickets.not_offered"
