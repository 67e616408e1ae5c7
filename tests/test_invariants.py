"""Invariants over thousands of random legal games, checked after every decision.

Whatever the seats do, a game of the USA ruleset keeps its 110 train cards and its 30
tickets, never spends a train it does not have, scores routes incrementally exactly as a
recount from the claims would, ends after a bounded number of decisions, and is a pure
function of the seed and the actions (STYLE.md, Tests: "Hypothesis properties over random
legal games").

Three kinds of random player drive the games: ``uniform`` (every legal action equally likely,
as ``referee.selfplay``), ``hoarder`` (draws cards whenever it can, so decks run dry, face-up
slots go empty and seats pass: RULINGS 1-5) and ``claimer`` (claims whenever it can, so trains
run out early and the last round comes fast).
"""

from __future__ import annotations

import dataclasses
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from operator import attrgetter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import (
    GameState,
    Phase,
    Ruleset,
    apply,
    legal_actions,
    load_ruleset,
    new_game,
    outcome,
)
from referee.rules.actions import (
    PASS,
    Action,
    ClaimRoute,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
)
from referee.rules.cards import LOCOMOTIVE, NUM_CARD_KINDS
from referee.rules.events import Event, FaceUpFlushed, GameEnded
from referee.rules.scoring import owned_routes, route_points_of
from referee.rules.state import EMPTY
from referee.selfplay import play_random_game
from tests.helpers import USA, after_setup, card, hand, with_

#: Far above any game seen (random games take 150-400 decisions): reaching it means the game
#: does not end. Each claim spends trains, each ticket draw keeps a ticket for good and card
#: draws stop when the cards are all in hands, so a real game is bounded well below this.
MAX_DECISIONS = 5_000

PLAYER_COUNTS = (2, 3, 4, 5)

Policy = Callable[[GameState, tuple[Action, ...], random.Random], Action]


def uniform(state: GameState, actions: tuple[Action, ...], rng: random.Random) -> Action:
    return actions[rng.randrange(len(actions))]


def hoarder(state: GameState, actions: tuple[Action, ...], rng: random.Random) -> Action:
    draws = [a for a in actions if isinstance(a, DrawBlind | DrawFaceUp)]
    if draws:
        return draws[rng.randrange(len(draws))]
    tickets = [a for a in actions if isinstance(a, DrawTickets)]
    if tickets:
        return tickets[0]
    return actions[rng.randrange(len(actions))]


def claimer(state: GameState, actions: tuple[Action, ...], rng: random.Random) -> Action:
    claims = [a for a in actions if isinstance(a, ClaimRoute)]
    if claims:
        return claims[rng.randrange(len(claims))]
    return actions[rng.randrange(len(actions))]


POLICIES: dict[str, Policy] = {"uniform": uniform, "hoarder": hoarder, "claimer": claimer}


# ---------------------------------------------------------------------------------------------
# the invariants


_snapshot = attrgetter(*(f.name for f in dataclasses.fields(GameState)))


def snapshot(state: GameState) -> tuple[object, ...]:
    """Every field of ``state`` (the values are immutable tuples and ints, so holding them is
    a faithful copy of the state as it was)."""
    fields: tuple[object, ...] = _snapshot(state)
    return fields


_CLAIM_FACTS: dict[tuple[int, int], tuple[int, int, bool]] = {}


def claim_facts(rules: Ruleset, owned: int) -> tuple[int, int, bool]:
    """(route points recounted from scratch, trains spent, whether both tracks of some double
    route are in ``owned``) for a claim mask. A pure function of the mask, memoised per
    distinct mask: most decisions claim nothing, so the same masks come back step after
    step."""
    key = (id(rules), owned)
    found = _CLAIM_FACTS.get(key)
    if found is None:
        routes = rules.game_map.routes
        assert owned >> len(routes) == 0, "a claim bit beyond the last route"
        indices = owned_routes(owned)
        both = False
        for i in indices:
            sibling = routes[i].sibling
            if sibling is not None and owned >> sibling & 1:
                both = True
        found = (route_points_of(rules, owned), sum(routes[i].length for i in indices), both)
        _CLAIM_FACTS[key] = found
    return found


def check_invariants(state: GameState) -> tuple[Action, ...]:
    """Every fact that must hold in every reachable state (a message names the broken one);
    returns the legal actions, which it has checked too."""
    rules = state.ruleset
    n = state.num_seats

    # Cards: 002:20 "110 train car cards", each kind conserved wherever it lies.
    assert state.card_count() == rules.deck_size == 110
    for seat_hand in state.hands:
        assert len(seat_hand) == NUM_CARD_KINDS
        assert min(seat_hand) >= 0, f"negative hand count {seat_hand}"
    assert min(state.discards) >= 0
    assert len(state.face_up) == rules.face_up
    for kind, expected in enumerate(rules.initial_deck_counts()):
        total = (
            state.deck.count(kind)
            + state.discards[kind]
            + state.face_up.count(kind)
            + sum(h[kind] for h in state.hands)
        )
        assert total == expected, f"card kind {kind}: {total} in play, {expected} printed"
    assert all(-1 <= c < NUM_CARD_KINDS for c in state.face_up)

    # 003:75 the discards become the deck as soon as it runs out; RULINGS 3: a slot is empty
    # only while there is no card anywhere to fill it.
    if not state.deck:
        assert not any(state.discards), "empty deck beside a discard pile not reshuffled"
    if EMPTY in state.face_up:
        assert not state.deck and not any(state.discards), "empty slot with cards to deal"
    # 003:73 + RULINGS 1: three face-up Locomotives stand only when no row could stand (fewer
    # than 3 non-Locomotives in the deck, the discards and the row together).
    if state.face_up.count(LOCOMOTIVE) >= rules.flush_locomotives:
        non_locos = (
            len(state.deck)
            - state.deck.count(LOCOMOTIVE)
            + sum(state.discards)
            - state.discards[LOCOMOTIVE]
            + sum(1 for c in state.face_up if c not in (EMPTY, LOCOMOTIVE))
        )
        flushes = sum(1 for e in state.events if isinstance(e, FaceUpFlushed))
        assert non_locos < rules.face_up - rules.flush_locomotives + 1, (
            f"a row of {state.face_up.count(LOCOMOTIVE)} Locomotives stands with {non_locos} "
            f"non-Locomotives in deck+discards+row, after {flushes} flushes (RULINGS 1, 2)"
        )

    # Claims: disjoint; 003:87 doubles; trains (003:9 "45 Train Cars", one per space claimed,
    # never negative); the running route score equals the recount from the claims.
    union = 0
    for seat in range(n):
        owned = state.owned[seat]
        assert owned & union == 0, f"seat {seat} owns a route someone else owns"
        union |= owned
        points, spent, both_tracks = claim_facts(rules, owned)
        assert not both_tracks, f"seat {seat} owns both tracks of a double route (003:87)"
        assert state.trains[seat] == rules.trains - spent >= 0
        assert state.route_points[seat] == points, f"seat {seat}: running score is off"
    if n <= 3:  # 003:87 "In 2 or 3 player games, only one of the Double Routes can be used."
        assert not claim_facts(rules, union)[2], f"both tracks of a double used with {n} seats"

    # Tickets: each of the 30 is in exactly one place.
    places = list(state.ticket_deck)
    for seat in range(n):
        places += state.tickets[seat] + state.offered[seat]
    assert sorted(places) == list(range(len(rules.tickets))), "a ticket lost or duplicated"

    # Phases.
    assert 0 <= state.seat < n
    assert state.last_round == -1 or 0 <= state.last_round <= n
    if state.phase is Phase.SETUP_TICKETS:
        assert state.turn == 0
        for seat in range(n):
            if seat < state.seat:
                assert len(state.tickets[seat]) >= 2 and not state.offered[seat]
            else:
                assert not state.tickets[seat] and len(state.offered[seat]) == 3
    else:
        # 003:17 every seat kept at least 2 starting tickets.
        assert all(len(t) >= 2 for t in state.tickets)
        for seat in range(n):
            if state.phase is Phase.KEEP_TICKETS and seat == state.seat:
                assert 1 <= len(state.offered[seat]) <= 3
            else:
                assert not state.offered[seat], f"seat {seat} holds undecided tickets"
    actions = legal_actions(state)
    if state.phase is Phase.OVER:
        assert state.end_reason in ("last_round", "all_passed")
        assert actions == ()
        assert isinstance(state.events[-1], GameEnded)
    else:
        assert state.end_reason == ""
        assert actions, f"no legal action in phase {state.phase.name}"
        assert len(set(actions)) == len(actions), "an action listed twice"
        assert PASS not in actions or actions == (PASS,), "pass beside another action"
    return actions


# ---------------------------------------------------------------------------------------------
# games


def walk(
    players: int, seed: int, policy: Policy, choice_seed: int, ruleset: Ruleset = USA
) -> Iterator[tuple[GameState, Action]]:
    """The decisions of one game: each state before a decision and the action taken."""
    state = new_game(ruleset, players, seed)
    rng = random.Random(choice_seed)
    for _ in range(MAX_DECISIONS):
        if state.is_over:
            return
        action = policy(state, legal_actions(state), rng)
        yield state, action
        state = apply(state, action)
    raise AssertionError(f"game {players}p seed {seed} did not end in {MAX_DECISIONS} decisions")


def check_basics(state: GameState) -> tuple[Action, ...]:
    """The cheap core of :func:`check_invariants`, for the bulk of the games: cards conserved,
    no negative hand count or train stock, the running route score equal to the recount,
    claims disjoint, and a legal action whenever the game runs."""
    rules = state.ruleset
    assert state.card_count() == 110
    union = 0
    for seat in range(state.num_seats):
        assert min(state.hands[seat]) >= 0, f"seat {seat}: negative hand count"
        owned = state.owned[seat]
        assert owned & union == 0, f"seat {seat} owns a route someone else owns"
        union |= owned
        points, spent, _ = claim_facts(rules, owned)
        assert state.trains[seat] == rules.trains - spent >= 0
        assert state.route_points[seat] == points, f"seat {seat}: running score is off"
    actions = legal_actions(state)
    assert bool(actions) != state.is_over
    return actions


def play_checked(
    players: int,
    seed: int,
    policy: Policy,
    choice_seed: int,
    check: Callable[[GameState], tuple[Action, ...]] = check_invariants,
) -> GameState:
    """Play one game, checking ``check`` before and after every decision and that ``apply``
    leaves its input as it was."""
    state = new_game(USA, players, seed)
    rng = random.Random(choice_seed)
    for _ in range(MAX_DECISIONS):
        actions = check(state)
        if state.is_over:
            return state
        action = policy(state, actions, rng)
        before = snapshot(state)
        state_after = apply(state, action)
        assert snapshot(state) == before, f"apply({action}) changed its input"
        assert state_after is not state
        state = state_after
    raise AssertionError(f"game {players}p seed {seed} did not end in {MAX_DECISIONS} decisions")


@pytest.mark.slow
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_uniform_random_games_keep_the_basic_invariants(players: int) -> None:
    """2000 uniform random games in all (500 per player count), the cheap checks after every
    decision."""
    for seed in range(500):
        final = play_checked(players, seed, uniform, seed, check_basics)
        assert final.end_reason


@pytest.mark.slow
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_uniform_random_games_keep_every_invariant(players: int) -> None:
    """Every check after every decision, in 400 more uniform random games."""
    for seed in range(100):
        play_checked(players, 1_000 + seed, uniform, seed)


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["hoarder", "claimer"])
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_skewed_random_games_keep_every_invariant(players: int, policy: str) -> None:
    """Hoarders empty the deck and the ticket deck and end up passing; claimers race to the
    last round."""
    for seed in range(20 if policy == "hoarder" else 40):
        play_checked(players, 10_000 + seed, POLICIES[policy], seed)


def test_hoarders_reach_the_corners_of_the_rules() -> None:
    """The skewed games above do visit the states they are there for (empty deck, empty
    face-up slot, a standing row of Locomotives, a forced pass), so their checks mean
    something."""
    seen: set[str] = set()
    for seed in range(40):
        for state, action in walk(2 + seed % 4, seed, hoarder, seed):
            if not state.deck:
                seen.add("empty deck")
            if EMPTY in state.face_up:
                seen.add("empty slot")
            if state.face_up.count(LOCOMOTIVE) >= 3:
                seen.add("standing locomotive row")
            if action == PASS:
                seen.add("pass")
            if state.phase is Phase.SECOND_CARD and not state.deck:
                seen.add("second card from the row only")
            if not state.ticket_deck:
                seen.add("empty ticket deck")
    assert seen == {
        "empty deck",
        "empty slot",
        "standing locomotive row",
        "pass",
        "second card from the row only",
        "empty ticket deck",
    }


@pytest.mark.slow
def test_every_legal_action_applies_and_leaves_the_state_unchanged() -> None:
    """Not just the action chosen: every action ``legal_actions`` lists applies without error
    and keeps the cards, hands and trains sound; ``apply`` leaves its input as it was. Every
    state of 40 uniform games; every 8th state of 4 hoarder games, whose huge hands make
    tens of thousands of payments per game."""
    games = [(PLAYER_COUNTS[i % 4], 20_000 + i, uniform, 1) for i in range(40)]
    games += [(players, 30_000 + players, hoarder, 8) for players in PLAYER_COUNTS]
    for players, seed, policy, every in games:
        for step, (state, _) in enumerate(walk(players, seed, policy, seed)):
            if step % every:
                continue
            before = snapshot(state)
            for action in legal_actions(state):
                after = apply(state, action)
                assert after.card_count() == 110
                assert min(after.trains) >= 0
                assert all(min(h) >= 0 for h in after.hands)
            assert snapshot(state) == before


def test_selfplay_games_end_with_consistent_scores() -> None:
    """``referee.selfplay`` (what ``ttr selfplay`` runs) ends every game, and its outcome's
    route points are the recount from the final claims."""
    for players in PLAYER_COUNTS:
        for seed in range(25):
            result = play_random_game(USA, players, seed)
            assert result.final.is_over
            assert 0 < result.decisions < MAX_DECISIONS
            check_invariants(result.final)
            for s in result.outcome.seats:
                assert s.route_points == result.final.route_points[s.seat]


# ---------------------------------------------------------------------------------------------
# determinism


def record(
    players: int, seed: int, policy: Policy, choice_seed: int, ruleset: Ruleset = USA
) -> tuple[GameState, list[Action], list[tuple[Event, ...]]]:
    actions: list[Action] = []
    events: list[tuple[Event, ...]] = []
    state = new_game(ruleset, players, seed)
    events.append(state.events)
    rng = random.Random(choice_seed)
    while not state.is_over:
        assert len(actions) < MAX_DECISIONS
        action = policy(state, legal_actions(state), rng)
        actions.append(action)
        state = apply(state, action)
        events.append(state.events)
    return state, actions, events


def replay(players: int, seed: int, actions: list[Action], ruleset: Ruleset = USA) -> GameState:
    state = new_game(ruleset, players, seed)
    for action in actions:
        state = apply(state, action)
    return state


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_same_seed_and_actions_give_the_same_game(players: int) -> None:
    for seed in range(8):
        for name, policy in POLICIES.items():
            first, actions, events = record(players, seed, policy, seed)
            second, actions2, events2 = record(players, seed, policy, seed)
            assert actions == actions2, name
            assert events == events2, name
            assert first == second, name
            # The record (seed + actions) is the whole game.
            assert replay(players, seed, actions) == first, name


def test_replay_under_a_separately_loaded_ruleset_gives_the_same_game() -> None:
    """An equal ruleset that is a different object (a fresh load, not the cached one) plays
    the same game: nothing in the engine depends on object identity."""
    fresh = load_ruleset.__wrapped__("usa")
    assert fresh is not USA and fresh == USA
    for players in PLAYER_COUNTS:
        final, actions, _ = record(players, 7, uniform, 7)
        assert replay(players, 7, actions, fresh) == final


def test_replay_by_action_index_gives_the_same_game() -> None:
    """The wire sends indices into ``legal_actions``: the order of the list is part of the
    determinism."""
    for players in PLAYER_COUNTS:
        final, actions, _ = record(players, 3, uniform, 3)
        state = new_game(USA, players, 3)
        indices = []
        for action in actions:
            legal = legal_actions(state)
            indices.append(legal.index(action))
            state = apply(state, action)
        again = new_game(USA, players, 3)
        for i in indices:
            again = apply(again, legal_actions(again)[i])
        assert again == final


def test_different_seeds_deal_different_games() -> None:
    """The seed is used: twenty seeds give twenty different deals."""
    deals = {
        (new_game(USA, 4, seed).deck, new_game(USA, 4, seed).ticket_deck) for seed in range(20)
    }
    assert len(deals) == 20


_FINGERPRINT = """
import random
from referee.rules import apply, legal_actions, load_ruleset, new_game, outcome
usa = load_ruleset("usa")
for players in (2, 3, 4, 5):
    state = new_game(usa, players, 12345)
    rng = random.Random(99)
    while not state.is_over:
        actions = legal_actions(state)
        state = apply(state, actions[rng.randrange(len(actions))])
    print(players, state.shuffles, state.turn, state.deck, state.hands, state.owned,
          state.tickets, [s.total for s in outcome(state).seats])
"""


def fingerprint_in_subprocess(hash_seed: str) -> str:
    env = {"PYTHONHASHSEED": hash_seed, "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", _FINGERPRINT],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
        check=True,
        timeout=120,
    )
    return done.stdout


def test_games_do_not_depend_on_string_hashing() -> None:
    """Same game in two interpreters with different hash seeds (set/dict order, str hashes):
    the engine's chance comes only from its seeded RNGs (engine.py docstring: "the same
    game, byte for byte, on every machine")."""
    first = fingerprint_in_subprocess("1")
    assert first.count("\n") == 4
    assert fingerprint_in_subprocess("2") == first


# ---------------------------------------------------------------------------------------------
# hypothesis


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**63),
    players=st.sampled_from(PLAYER_COUNTS),
    policy=st.sampled_from(sorted(POLICIES)),
    choice_seed=st.integers(min_value=0, max_value=2**32),
)
def test_hypothesis_games_keep_every_invariant(
    seed: int, players: int, policy: str, choice_seed: int
) -> None:
    final = play_checked(players, seed, POLICIES[policy], choice_seed)
    # The final scores are computed from the same claims the running totals count.
    for s in outcome(final).seats:
        assert s.route_points == final.route_points[s.seat]


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**63),
    players=st.sampled_from(PLAYER_COUNTS),
    choice_seed=st.integers(min_value=0, max_value=2**32),
    cut=st.integers(min_value=0, max_value=400),
)
def test_hypothesis_replay_from_any_prefix(
    seed: int, players: int, choice_seed: int, cut: int
) -> None:
    """Replaying the first ``cut`` recorded actions reproduces the state reached after them,
    and going on from there with the rest reproduces the end."""
    final, actions, _ = record(players, seed, uniform, choice_seed)
    cut = min(cut, len(actions))
    middle = replay(players, seed, actions[:cut])
    check_invariants(middle)
    state = middle
    for action in actions[cut:]:
        state = apply(state, action)
    assert state == final


def test_setup_is_one_ticket_choice_per_seat_in_seat_order() -> None:
    """The games above start like this: every seat's first decision is its ticket choice
    (003:15-17), seat 0 first, and then seat 0 plays the first turn."""
    state = new_game(USA, 3, 1)
    for seat in range(3):
        assert state.phase is Phase.SETUP_TICKETS and state.seat == seat
        choices = legal_actions(state)
        assert all(isinstance(a, KeepTickets) for a in choices)
        assert len(choices) == 4  # 3 ways to keep two, 1 to keep all three (003:17)
        state = apply(state, choices[-1])
    assert state.phase is Phase.TURN and state.seat == 0


def test_a_flush_with_exactly_a_row_left_in_the_deck_settles() -> None:
    """RULINGS 2: "with exactly 5 cards left, reshuffling eagerly between flushes can swap the
    same two sets forever. Flush first, then reshuffle, and keep the guard of ruling 1."

    The random games above found this: seat 0 takes the red card; the replacement is the
    third face-up Locomotive. Outside the hands there are 10 cards, 6 Locomotives and 4
    others: the row (3 Locomotives) and the deck (3 Locomotives). Reshuffling the old row
    into a new deck the moment the deck runs out deals the deck's 5 cards as the new row and
    makes the old row the deck: the two sets of 3 Locomotives swap at every flush and no row
    ever stands. With 4 non-Locomotives about, RULINGS 1 wants a row that stands.
    """
    state = with_(
        after_setup(2, 1),
        deck=(card("green"), LOCOMOTIVE, card("blue"), LOCOMOTIVE, LOCOMOTIVE, LOCOMOTIVE),
        face_up=(card("red"), card("orange"), LOCOMOTIVE, LOCOMOTIVE, card("yellow")),
        discards=(0,) * NUM_CARD_KINDS,
        hands={
            0: hand(red=11, orange=11, yellow=11, green=11, blue=11, loco=4),
            1: hand(pink=12, black=12, white=12, loco=4),
        },
    )
    check_invariants(state)
    after = apply(state, DrawFaceUp(0))
    flushes = sum(1 for e in after.events if isinstance(e, FaceUpFlushed))
    assert after.face_up.count(LOCOMOTIVE) < 3, (
        f"row {after.face_up} stands after {flushes} flushes; deck {after.deck}"
    )
    check_invariants(after)
