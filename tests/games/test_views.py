"""Hidden information: what a seat sees depends only on what that seat may know.

OpenSpiel's information-state rule (STYLE.md, Hidden information): perturb every fact a seat
cannot observe (the other hands with the same sizes, the other seats' kept and offered
tickets, the deck order, the ticket deck, the seed that drives future reshuffles) and the
seat's serialised view must stay byte-identical, and the acting seat's legal actions must
not move. Change a public fact and the view must change. Events get the same treatment, and
a golden playthrough prints every seat's view so that a leak shows as a readable diff.

003:91 "Destination Tickets are kept secret until the end of the game" (001:32-33 the same
in New York); a hand is secret by the nature of the game (only its size shows). Every
property test here runs for every variant (the sampled states are split across them); the
golden playthrough stays a usa game.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games.board import (
    GameState,
    Phase,
    Ruleset,
    apply,
    legal_actions,
    new_game,
    view,
    view_json,
)
from referee.games.board.actions import Action, DrawBlind, DrawFaceUp, DrawTickets
from referee.games.board.events import (
    BlindDrawn,
    DeckReshuffled,
    Event,
    FaceUpDealt,
    FaceUpFlushed,
    FaceUpTaken,
    GameEnded,
    LastRoundStarted,
    Passed,
    RouteClaimed,
    TicketsDrawn,
    TicketsKept,
    project,
)
from referee.games.board.state import EMPTY
from referee.games.common.cards import NUM_CARD_KINDS
from tests.helpers import FACTS, RULESETS, USA, VARIANTS, variant_seats, with_

DATA = Path(__file__).parents[1] / "data"
PLAYTHROUGH = DATA / "playthrough_usa_2p_seed7.txt"
PLAYTHROUGH_DECISIONS = 40

ViewFn = Callable[[GameState, int], str]


# ---------------------------------------------------------------------------------------------
# reaching states


def hoarder(actions: tuple[Action, ...], rng: random.Random) -> Action:
    """Draws cards while it can, then tickets: runs the decks dry (empty slots, passes)."""
    draws = [a for a in actions if isinstance(a, DrawBlind | DrawFaceUp)]
    if draws:
        return draws[rng.randrange(len(draws))]
    if any(isinstance(a, DrawTickets) for a in actions):
        return DrawTickets()
    return actions[rng.randrange(len(actions))]


def play(
    players: int, seed: int, steps: int, hoard: bool = False, ruleset: Ruleset = USA
) -> GameState:
    """The state after ``steps`` random decisions (or the end) of game ``seed``."""
    state = new_game(ruleset, players, seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if state.is_over:
            break
        actions = legal_actions(state)
        state = apply(state, hoarder(actions, rng) if hoard else rng.choice(actions))
    return state


# ---------------------------------------------------------------------------------------------
# perturbations


def hide_and_seek(state: GameState, seat: int, rng: random.Random) -> GameState:
    """``state`` with every fact ``seat`` cannot know redrawn at random, consistently: the
    same cards and tickets in the game, every hand and pile the same size.

    Train cards: the deck and the other seats' hands are one unseen pool (the discards and the
    row are seen face up). Tickets: the ticket deck, the other seats' kept tickets and the
    other seats' offered tickets are one unseen pool. The seed decides future reshuffles.
    """
    others = [s for s in range(state.num_seats) if s != seat]

    cards = list(state.deck)
    for s in others:
        cards += [kind for kind, n in enumerate(state.hands[s]) for _ in range(n)]
    rng.shuffle(cards)
    deck = tuple(cards[: len(state.deck)])
    rest = cards[len(state.deck) :]
    hands = list(state.hands)
    for s in others:
        size = sum(state.hands[s])
        dealt, rest = rest[:size], rest[size:]
        hands[s] = tuple(dealt.count(kind) for kind in range(NUM_CARD_KINDS))
    assert not rest

    tickets = list(state.ticket_deck)
    for s in others:
        tickets += state.tickets[s] + state.offered[s]
    rng.shuffle(tickets)
    ticket_deck = tuple(tickets[: len(state.ticket_deck)])
    pool = tickets[len(state.ticket_deck) :]
    kept = list(state.tickets)
    offered = list(state.offered)
    for s in others:
        n_kept, n_offered = len(state.tickets[s]), len(state.offered[s])
        kept[s] = tuple(pool[:n_kept])
        offered[s] = tuple(pool[n_kept : n_kept + n_offered])
        pool = pool[n_kept + n_offered :]
    assert not pool

    hidden = dataclasses.replace(
        state,
        deck=deck,
        hands=tuple(hands),
        ticket_deck=ticket_deck,
        tickets=tuple(kept),
        offered=tuple(offered),
        seed=rng.randrange(2**32),
    )
    assert hidden.card_count() == state.card_count()
    return hidden


def assert_view_hides(
    state: GameState, seat: int, rng: random.Random, tries: int = 3, see: ViewFn = view_json
) -> None:
    """``see(state, seat)`` and, if ``seat`` acts, the legal actions survive ``tries``
    redraws of everything ``seat`` cannot know."""
    seen = see(state, seat)
    actions = legal_actions(state) if seat == state.seat else None
    for _ in range(tries):
        other = hide_and_seek(state, seat, rng)
        assert see(other, seat) == seen, f"seat {seat}'s view depends on a hidden fact"
        if actions is not None:
            assert legal_actions(other) == actions, (
                f"seat {seat}'s legal actions depend on a fact it cannot see"
            )


def some_unclaimed_route(state: GameState) -> int:
    taken = 0
    for owned in state.owned:
        taken |= owned
    return next(i for i in range(len(state.ruleset.game_map.routes)) if not taken >> i & 1)


def public_changes(state: GameState, seat: int) -> dict[str, GameState]:
    """``state`` with one public fact changed, by name (none of them need be reachable: the
    view only has to notice)."""
    n = state.num_seats
    other = (seat + 1) % n
    first = state.face_up[0]
    route = some_unclaimed_route(state)
    spare_ticket = state.ticket_deck[-1] if state.ticket_deck else None
    changes: dict[str, GameState] = {
        "face-up row": with_(state, face_up=((first + 1) % NUM_CARD_KINDS, *state.face_up[1:])),
        "claimed route": with_(state, owned={other: state.owned[other] | 1 << route}),
        "deck size": with_(state, deck=state.deck[:-1] if state.deck else (0,)),
        "another seat's hand size": with_(
            state, hands={other: (state.hands[other][0] + 1, *state.hands[other][1:])}
        ),
        "own hand": with_(
            state, hands={seat: (*state.hands[seat][:-1], state.hands[seat][-1] + 1)}
        ),
        "discards": with_(state, discards=(state.discards[0] + 1, *state.discards[1:])),
        "another seat's trains": with_(state, trains={other: state.trains[other] - 1}),
        "another seat's score": with_(state, route_points={other: state.route_points[other] + 1}),
        "ticket deck size": with_(
            state, ticket_deck=state.ticket_deck[:-1] if state.ticket_deck else (0,)
        ),
        "turn": with_(state, turn=state.turn + 1),
        "last round": with_(state, last_round=state.last_round + 1),
        "seat to act": with_(state, seat=(state.seat + 1) % n),
    }
    if first == EMPTY:
        changes["face-up row"] = with_(state, face_up=(0, *state.face_up[1:]))
    if spare_ticket is not None:
        rest = state.ticket_deck[:-1]
        changes["another seat's ticket count"] = with_(
            state, ticket_deck=rest, tickets={other: (*state.tickets[other], spare_ticket)}
        )
        changes["another seat's pending tickets"] = with_(
            state, ticket_deck=rest, offered={other: (*state.offered[other], spare_ticket)}
        )
        changes["own tickets"] = with_(
            state, ticket_deck=rest, tickets={seat: (*state.tickets[seat], spare_ticket)}
        )
    if state.is_over:
        del changes["seat to act"]  # to_act is -1 for everyone once the game is over
    return changes


# ---------------------------------------------------------------------------------------------
# the view hides what it must


VARIANT_SEATS = variant_seats()


@settings(max_examples=150, derandomize=True, database=None, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    variant_players=st.sampled_from(VARIANT_SEATS),
    steps=st.integers(min_value=0, max_value=450),
    hoard=st.booleans(),
)
def test_views_and_legal_actions_ignore_hidden_facts(
    seed: int, variant_players: tuple[str, int], steps: int, hoard: bool
) -> None:
    variant, players = variant_players
    state = play(players, seed, steps, hoard, RULESETS[variant])
    rng = random.Random(seed ^ steps)
    for seat in range(players):
        assert_view_hides(state, seat, rng)


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    variant_players=st.sampled_from(VARIANT_SEATS),
    steps=st.integers(min_value=0, max_value=450),
    hoard=st.booleans(),
)
def test_views_change_with_every_public_fact(
    seed: int, variant_players: tuple[str, int], steps: int, hoard: bool
) -> None:
    variant, players = variant_players
    state = play(players, seed, steps, hoard, RULESETS[variant])
    for seat in range(players):
        seen = view_json(state, seat)
        for name, changed in public_changes(state, seat).items():
            assert view_json(changed, seat) != seen, f"seat {seat} does not see the {name}"


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_state_of_some_games_hides_what_it_must(variant: str) -> None:
    """Every decision of whole games (each phase, each seat), not just sampled states: 3 per
    variant (a hoarder's and two uniform), 6 in New York, whose games are short."""
    counts = FACTS[variant].players
    for i in range(6 if variant == "newyork" else 3):
        players = counts[i % len(counts)]
        state = new_game(RULESETS[variant], players, 500 + i)
        rng = random.Random(i)
        while True:
            for seat in range(players):
                assert_view_hides(state, seat, rng, tries=1)
            if state.is_over:
                break
            actions = legal_actions(state)
            state = apply(state, hoarder(actions, rng) if i % 3 == 0 else rng.choice(actions))


@pytest.mark.parametrize("variant", VARIANTS)
def test_hide_and_seek_does_move_hidden_facts(variant: str) -> None:
    """The perturbation is not a no-op: it redraws other hands, tickets and the deck."""
    state = play(4, 3, 60, ruleset=RULESETS[variant])
    rng = random.Random(0)
    moved = {"deck": False, "hands": False, "tickets": False, "ticket deck": False}
    for _ in range(5):
        other = hide_and_seek(state, 0, rng)
        moved["deck"] |= other.deck != state.deck
        moved["hands"] |= other.hands[1:] != state.hands[1:]
        moved["tickets"] |= other.tickets[1:] != state.tickets[1:]
        moved["ticket deck"] |= other.ticket_deck != state.ticket_deck
        assert other.hands[0] == state.hands[0] and other.tickets[0] == state.tickets[0]
    assert all(moved.values()), moved


@pytest.mark.parametrize(
    "leak",
    [
        lambda s, seat: str(s.hands[(seat + 1) % s.num_seats]),
        lambda s, seat: str(s.deck[-1:]),
        lambda s, seat: str(s.tickets[(seat + 1) % s.num_seats]),
        lambda s, seat: str(s.ticket_deck[-1:]),
        lambda s, seat: str(s.seed),
    ],
    ids=["other hand", "deck top", "other tickets", "ticket deck top", "seed"],
)
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_leaky_view_is_caught(variant: str, leak: Callable[[GameState, int], str]) -> None:
    """The check above can fail: a view that shows any one hidden fact is caught."""
    state = play(3, 5, 80, ruleset=RULESETS[variant])

    def leaky(s: GameState, seat: int) -> str:
        return view_json(s, seat) + leak(s, seat)

    with pytest.raises(AssertionError, match="hidden fact"):
        assert_view_hides(state, 0, random.Random(1), tries=10, see=leaky)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_view_shows_the_seat_its_own_secrets_and_only_counts_of_others(variant: str) -> None:
    state = play(3, 11, 30, ruleset=RULESETS[variant])
    for seat in range(3):
        v = view(state, seat)
        assert v.variant == f"{variant}@1"
        assert len(v.hand) == NUM_CARD_KINDS  # New York too: its 6 colours + Taxi, zeros kept
        assert len(v.face_up) == FACTS[variant].face_up
        assert v.hand == state.hands[seat]
        assert v.tickets == state.tickets[seat]
        assert v.offered == state.offered[seat]
        assert [p.hand_size for p in v.players] == [sum(h) for h in state.hands]
        assert [p.tickets for p in v.players] == [len(t) for t in state.tickets]
        # The opponent part has no field that could hold a card or a ticket (allow-list).
        decoded = json.loads(view_json(state, seat))
        for p in decoded["players"]:
            assert set(p) == {
                "seat",
                "hand_size",
                "tickets",
                "tickets_pending",
                "trains",
                "route_points",
                "routes",
            }
            assert all(isinstance(p[k], int) for k in p if k != "routes")


@pytest.mark.parametrize("variant", VARIANTS)
def test_over_state_shows_no_seat_to_act(variant: str) -> None:
    state = play(2, 1, 10_000, ruleset=RULESETS[variant])
    assert state.is_over
    assert all(view(state, seat).to_act == -1 for seat in range(2))


# ---------------------------------------------------------------------------------------------
# events


HIDDEN_EVENTS = (BlindDrawn, TicketsDrawn, TicketsKept)


def events_of_games() -> list[Event]:
    """The events of 20 whole games, 4 per variant, hoarders and uniform players."""
    events: list[Event] = []
    for i in range(20):
        rules = RULESETS[VARIANTS[i % len(VARIANTS)]]
        counts = FACTS[rules.name].players
        state = new_game(rules, counts[i // len(VARIANTS) % len(counts)], 700 + i)
        events += state.events
        rng = random.Random(i)
        while not state.is_over:
            actions = legal_actions(state)
            state = apply(state, hoarder(actions, rng) if i // 5 % 2 else rng.choice(actions))
            events += state.events
    return events


def test_projected_events_hide_cards_and_tickets_from_other_seats() -> None:
    events = events_of_games()
    kinds = {type(e) for e in events}
    # Every kind of event occurred, so every projection rule was exercised.
    assert kinds >= {
        BlindDrawn,
        DeckReshuffled,
        FaceUpDealt,
        FaceUpFlushed,
        FaceUpTaken,
        GameEnded,
        LastRoundStarted,
        Passed,
        RouteClaimed,
        TicketsDrawn,
        TicketsKept,
    }
    for event in events:
        for seat in range(5):
            seen = project(event, seat)
            assert type(seen) is type(event)
            owner = getattr(event, "seat", None)
            if not isinstance(event, HIDDEN_EVENTS) or owner == seat:
                assert seen == event
                continue
            match seen:
                case BlindDrawn(seat=s, card=c):
                    assert isinstance(event, BlindDrawn)
                    assert (s, c) == (event.seat, None)
                case TicketsDrawn(seat=s, count=n, tickets=t):
                    assert isinstance(event, TicketsDrawn)
                    assert (s, n, t) == (event.seat, event.count, None)
                case TicketsKept(seat=s, kept_count=k, returned_count=r, kept=t):
                    assert isinstance(event, TicketsKept)
                    assert (s, k, r, t) == (
                        event.seat,
                        event.kept_count,
                        event.returned_count,
                        None,
                    )


def test_projection_of_another_seat_event_does_not_depend_on_its_secret() -> None:
    for seat in range(4):
        for owner in range(4):
            if owner == seat:
                continue
            assert len({project(BlindDrawn(owner, card), seat) for card in range(9)}) == 1
            assert (
                len({project(TicketsDrawn(owner, 3, t), seat) for t in [(1, 2, 3), (4, 5, 6)]}) == 1
            )
            assert len({project(TicketsKept(owner, 2, 1, t), seat) for t in [(1, 2), (7, 9)]}) == 1


# ---------------------------------------------------------------------------------------------
# golden playthrough


def playthrough() -> str:
    """Every seat's view (and projected events) after each of the first decisions of a
    2-seat game, seed 7, random choices from ``random.Random(7)``."""
    state = new_game(USA, 2, 7)
    rng = random.Random(7)
    lines = [
        "# Golden playthrough: usa, 2 seats, game seed 7, choices from random.Random(7).",
        "# Each step: the decision, then per seat the events it was shown and its view_json.",
        "# Regenerate with `pytest tests/games/test_views.py --regen-golden`; review the diff: a",
        "# card or ticket of another seat appearing anywhere here is a leak.",
    ]

    def show(title: str) -> None:
        lines.append(title)
        for seat in range(state.num_seats):
            events = [repr(project(e, seat)) for e in state.events]
            lines.append(f"  events[{seat}]: [{', '.join(events)}]")
            lines.append(f"  view[{seat}]: {view_json(state, seat)}")

    show("step 0: the deal")
    for step in range(1, PLAYTHROUGH_DECISIONS + 1):
        if state.is_over:
            break
        actions = legal_actions(state)
        action = actions[rng.randrange(len(actions))]
        phase, seat = state.phase.name.lower(), state.seat
        state = apply(state, action)
        show(f"step {step}: seat {seat} ({phase}) chooses {action!r} of {len(actions)}")
    return "\n".join(lines) + "\n"


def test_golden_playthrough(regen_golden: bool) -> None:
    text = playthrough()
    if regen_golden:
        PLAYTHROUGH.parent.mkdir(exist_ok=True)
        PLAYTHROUGH.write_text(text, encoding="utf-8")
    assert PLAYTHROUGH.is_file(), f"{PLAYTHROUGH} is missing: run pytest --regen-golden"
    expected = PLAYTHROUGH.read_text(encoding="utf-8")
    for number, (got, want) in enumerate(
        zip(text.splitlines(), expected.splitlines(), strict=False), start=1
    ):
        assert got == want, f"{PLAYTHROUGH.name} line {number} differs"
    assert text == expected


def test_golden_playthrough_covers_every_phase() -> None:
    """The 40 decisions go through the setup, card draws, a claim and a ticket draw."""
    text = playthrough()
    for phase in Phase:
        if phase is not Phase.OVER:
            assert f"({phase.name.lower()})" in text
    assert "ClaimRoute(" in text
