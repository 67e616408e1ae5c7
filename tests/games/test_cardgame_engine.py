"""The Card Game engine as a whole: invariants, perft, a golden game, exact scoring, hidden
information and determinism.

The rules one by one are in tests/games/test_cardgame_rules.py; here thousands of random games
check what must hold whatever the seats do (96 cards, each kind conserved through both decks
and every robbery; 46 tickets; every game ends), perft pins the size of the legal-action tree
from fixed positions, a golden playthrough pins one whole game's events and outcome,
``best_completion`` is checked against a brute force over card assignments, and every fact
a seat cannot know is redrawn to show that its view and its legal actions do not move.
Rulebook lines are ``000:LINE`` (shared/seeds/000_*.txt).
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Iterator
from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games.board.actions import DRAW_TICKETS
from referee.games.card import (
    CardAction,
    CardGameState,
    CardRuleset,
    KeepTickets,
    Phase,
    PlaceMix,
    PlaceSuit,
    apply,
    best_completion,
    legal_actions,
    new_game,
    outcome,
    project,
    view_json,
)
from referee.games.card.events import (
    CardsDealt,
    DeckReshuffled,
    FinalRoundStarted,
    GameEnded,
    MixPlaced,
    MovedOnTrack,
    PlayStalled,
    StackScored,
    SuitPlaced,
    TicketsDrawn,
    TrainRobbed,
)
from referee.games.card.state import EMPTY
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS, NUM_COLOURS
from tests import soak
from tests.games.test_cardgame_rules import BOX, RULES, after_setup, cards, with_

DATA = Path(__file__).parents[1] / "data" / "cardgame"
PLAYTHROUGH = DATA / "playthrough_4p_seed5.txt"
SEEING = dataclasses.replace(RULES, owners_see_stack=True)  # 000:124-129

#: Far above any game seen (random 4-player games take 150-400 decisions, two decks): a game
#: reaching it does not end.
MAX_DECISIONS = 5_000

Policy = Callable[[CardGameState, tuple[CardAction, ...], random.Random], CardAction]


def uniform(
    state: CardGameState, actions: tuple[CardAction, ...], rng: random.Random
) -> CardAction:
    return actions[rng.randrange(len(actions))]


def placer(state: CardGameState, actions: tuple[CardAction, ...], rng: random.Random) -> CardAction:
    """Places cards whenever it can, biggest suits likeliest: Railyards fill, rows get robbed."""
    places = [a for a in actions if isinstance(a, PlaceSuit | PlaceMix)]
    if places and rng.random() < 0.8:
        return places[-1 - int(rng.random() ** 2 * len(places))]
    return actions[rng.randrange(len(actions))]


def idler(state: CardGameState, actions: tuple[CardAction, ...], rng: random.Random) -> CardAction:
    """Mostly draws tickets and keeps none: drives games into the stall guard."""
    if DRAW_TICKETS in actions and rng.random() < 0.97:
        return DRAW_TICKETS
    if state.phase is Phase.KEEP_TICKETS and rng.random() < 0.97:
        return KeepTickets(())
    return actions[rng.randrange(len(actions))]


POLICIES: dict[str, Policy] = {"uniform": uniform, "placer": placer, "idler": idler}


def game(
    players: int, seed: int, policy: Policy, rules: CardRuleset = RULES
) -> Iterator[CardGameState]:
    """Every state of one game, the final one included."""
    state = new_game(rules, players, seed)
    rng = random.Random(seed)
    while True:
        yield state
        if state.is_over:
            return
        state = apply(state, policy(state, legal_actions(state), rng))


# ---------------------------------------------------------------------------------------------
# invariants


def check(state: CardGameState, before: CardGameState | None) -> None:
    """Everything that holds in every reachable state; ``before`` is the previous one."""
    n = state.num_seats
    # 000:8-10: 96 cards, each kind conserved wherever it lies (both decks, every robbery)
    assert state.kind_counts() == BOX
    for per_seat in (state.hands, state.stacks):
        assert all(len(x) == NUM_CARD_KINDS and min(x) >= 0 for x in per_seat)
    for s in range(n):
        cards_, locos = state.yard_cards[s], state.yard_locos[s]
        assert min(cards_) >= 0 and min(locos) >= 0
        # 000:133-135 Locomotives lie on top of a row of their colour, never alone
        assert all(cards_[c] or not locos[c] for c in range(NUM_COLOURS))
    assert min(state.discards) >= 0
    # 000:44-46 five face up; a slot is empty only once the deck is out
    assert len(state.face_up) == 5
    assert EMPTY not in state.face_up or not state.deck
    # 000:27-29: 46 tickets, each in exactly one place
    tickets = list(state.ticket_deck)
    for s in range(n):
        tickets += [*state.tickets[s], *state.offered[s], *state.completed[s]]
    assert sorted(tickets) == list(range(46))
    assert state.ticket_points == tuple(
        sum(RULES.tickets[t].points for t in done) for done in state.completed
    )
    # 000:78-81 one deck for 2-3 players; 000:59-66 two for 4
    assert state.deck_number == 1 or (n == 4 and state.deck_number == 2)
    assert -1 <= state.last_round <= n and (state.last_round != 0 or state.is_over)
    if before is not None and not any(isinstance(e, DeckReshuffled) for e in state.events):
        # 000:166-168 a robbed row goes to the discards, whole; nothing else reaches them
        robbed = [0] * NUM_CARD_KINDS
        for e in state.events:
            if isinstance(e, TrainRobbed):
                robbed[e.colour] += e.cards
                robbed[LOCOMOTIVE] += e.locomotives
        grown = [a - b for a, b in zip(state.discards, before.discards, strict=True)]
        assert grown == robbed
    if not state.is_over:
        assert legal_actions(state), "a seat to act with no legal action"


def play_checked(players: int, seed: int, policy: Policy) -> tuple[CardGameState, set[str]]:
    """Plays one game checking every state; returns the end and what happened in it."""
    before: CardGameState | None = None
    seen: set[str] = set()
    for decisions, state in enumerate(game(players, seed, policy)):
        assert decisions < MAX_DECISIONS, "the game does not end"
        check(state, before)
        seen.update(type(e).__name__ for e in state.events)
        before = state
    assert before is not None and before.is_over
    return before, seen


#: games per policy and player count: a quarter by default, the rest with TTR_SOAK=1
RANDOM_GAMES = {2: 170, 3: 160, 4: 150}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("players", "seeds"),
    [
        pytest.param(n, *split.values, id=f"{n}-{split.id}", marks=split.marks)
        for n, games in RANDOM_GAMES.items()
        for split in soak.seeds(games, games // 4)
    ],
)
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_invariants_hold_in_every_state_of_random_games(
    players: int, seeds: range, policy: str
) -> None:
    """1,440 games in all (3 policies x 170 / 160 / 150; a quarter by default, the rest with
    TTR_SOAK=1), every state checked; the events seen prove the games reached robbing, the
    stall guard and (4 players) the second deck, in either share."""
    seen: set[str] = set()
    reasons: set[str] = set()
    for seed in seeds:
        end, events = play_checked(players, seed, POLICIES[policy])
        seen |= events
        reasons.add(end.end_reason)
        scorings = sum(isinstance(e, StackScored) for e in end.events)
        assert scorings == players  # the last scoring's events (000:199-209)
        result = outcome(end)
        assert result.final
        for s in result.seats:
            assert s.total == s.completed_points - s.failed_points + s.bonus_points
    assert {"MovedOnTrack", "StackScored", "GameEnded"} <= seen
    if policy == "placer":
        assert {"TrainRobbed", "SuitPlaced", "MixPlaced"} <= seen
    if policy == "idler":
        assert "stalled" in reasons
    else:
        assert reasons == {"deck_out"}
    if players == 4 and policy != "idler":
        assert {"CardsDealt", "DeckReshuffled"} <= seen


def test_games_end_and_a_four_player_game_scores_twice() -> None:
    end, _ = play_checked(4, 3, uniform)
    decks = [e.deck for e in end.events if isinstance(e, StackScored)]
    assert decks == [2, 2, 2, 2]
    assert end.deck_number == 2


# ---------------------------------------------------------------------------------------------
# determinism: tests/games/test_conformance.py, for every family


# ---------------------------------------------------------------------------------------------
# perft


def perft(state: CardGameState, depth: int) -> int:
    """Leaves of the legal-action tree below ``state`` (python-chess's perft)."""
    if depth == 0 or state.is_over:
        return 1
    actions = legal_actions(state)
    if depth == 1:
        return len(actions)
    return sum(perft(apply(state, a), depth - 1) for a in actions)


def reach(players: int, seed: int, decisions: int, policy: Policy = uniform) -> CardGameState:
    """The state after ``decisions`` decisions of a game."""
    for i, state in enumerate(game(players, seed, policy)):
        if i == decisions:
            return state
    raise AssertionError("the game ended first")


#: name -> (players, seed, decisions, policy, phase, [perft depth 1, 2, ...]). Computed by
#: the engine; change a number only with the reason the tree changed, like a golden file.
#: Depth 1 of the deal is counted by hand below (63 = every non-empty subset of 6 tickets).
PERFT: dict[str, tuple[int, int, int, str, str, list[int]]] = {
    "deal-2p-seed1": (2, 1, 0, "uniform", "setup_tickets", [63, 3969, 99225]),
    "first-turn-3p-seed2": (3, 2, 3, "uniform", "turn", [35, 744, 11339]),
    "keep-tickets-4p-seed13": (4, 13, 45, "uniform", "keep_tickets", [16, 112, 896]),
    "second-card-locomotive-up-2p-seed4": (2, 4, 26, "uniform", "second_card", [5, 55, 580]),
    "robbery-4p-seed1": (4, 1, 6, "placer", "turn", [22, 276, 2757]),
    "final-round-3p-seed6": (3, 6, 119, "uniform", "turn", [6, 31, 138]),
    "second-deck-4p-seed3": (4, 3, 110, "uniform", "turn", [8, 104, 1855]),
}


@pytest.mark.parametrize("name", sorted(PERFT))
def test_perft(name: str) -> None:
    players, seed, decisions, policy, phase, counts = PERFT[name]
    state = reach(players, seed, decisions, POLICIES[policy])
    assert state.phase.name.lower() == phase
    assert [perft(state, d) for d in range(1, len(counts) + 1)] == counts


def test_perft_positions_are_what_their_names_say() -> None:
    states = {name: reach(p, s, d, POLICIES[pol]) for name, (p, s, d, pol, _, _) in PERFT.items()}
    # counted by hand: 000:54 every non-empty subset of the 6 dealt, for each of 2 seats;
    # 000:180 every subset of the 4 drawn
    assert PERFT["deal-2p-seed1"][-1][:2] == [2**6 - 1, (2**6 - 1) ** 2]
    assert PERFT["keep-tickets-4p-seed13"][-1][0] == 2**4
    # 000:108-111 a face-up Locomotive is up but not among the second card's choices
    second = states["second-card-locomotive-up-2p-seed4"]
    assert LOCOMOTIVE in second.face_up
    assert PERFT["second-card-locomotive-up-2p-seed4"][-1][0] == 1 + sum(
        1 for c in second.face_up if c != LOCOMOTIVE
    )
    assert states["final-round-3p-seed6"].last_round > 0
    assert states["second-deck-4p-seed3"].deck_number == 2
    robbing = states["robbery-4p-seed1"]
    seat = robbing.seat
    assert any(
        isinstance(a, PlaceSuit) and robbing.yard_size(other, a.colour)
        for a in legal_actions(robbing)
        for other in range(4)
        if other != seat
    )


# ---------------------------------------------------------------------------------------------
# golden playthrough


def playthrough() -> str:
    """A whole 4-player game, seed 5, with choices from ``placer`` on ``random.Random(5)``:
    every decision, every event (unprojected) and the outcome."""
    lines = [
        "# Golden playthrough: cardgame, 4 seats, game seed 5, placer policy on random.Random(5)",
        "# (tests/games/test_cardgame_engine.py). Regenerate with",
        "# `pytest tests/games/test_cardgame_engine.py --regen-golden` and review the diff:",
        "# any change here is a change of the rules or of the deal.",
    ]
    state = new_game(RULES, 4, 5)
    rng = random.Random(5)
    step = 0
    lines += [f"  {e!r}" for e in state.events]
    while not state.is_over:
        actions = legal_actions(state)
        action = placer(state, actions, rng)
        lines.append(
            f"step {step}: seat {state.seat} ({state.phase.name.lower()}) {action!r} "
            f"of {len(actions)}"
        )
        state = apply(state, action)
        lines += [f"  {e!r}" for e in state.events]
        step += 1
    lines.append(f"outcome: {outcome(state)!r}")
    return "\n".join(lines) + "\n"


def test_golden_playthrough(regen_golden: bool) -> None:
    text = playthrough()
    if regen_golden:
        DATA.mkdir(parents=True, exist_ok=True)
        PLAYTHROUGH.write_text(text, encoding="utf-8")
    assert PLAYTHROUGH.is_file(), f"{PLAYTHROUGH} is missing: run pytest --regen-golden"
    expected = PLAYTHROUGH.read_text(encoding="utf-8")
    for number, (got, want) in enumerate(
        zip(text.splitlines(), expected.splitlines(), strict=False), start=1
    ):
        assert got == want, f"{PLAYTHROUGH.name} line {number} differs"
    assert text == expected


def test_golden_playthrough_shows_every_part_of_the_game() -> None:
    text = playthrough()
    for kind in (
        MovedOnTrack,
        SuitPlaced,
        MixPlaced,
        TrainRobbed,
        TicketsDrawn,
        FinalRoundStarted,
        StackScored,
        DeckReshuffled,
        CardsDealt,
        GameEnded,
    ):
        assert f"{kind.__name__}(" in text, kind.__name__
    assert "deck=2" in text  # the second deck's scoring


# ---------------------------------------------------------------------------------------------
# best_completion is exact


def brute_force(stack: tuple[int, ...], tickets: tuple[int, ...]) -> tuple[int, ...]:
    """000:199-209 read literally: try every set of tickets, and for each, every assignment of
    single cards to the circles of its tickets (a Locomotive fits any circle, each card one
    circle); keep the most points, then the most tickets, then the smallest index list."""
    pile = [k for k, n in enumerate(stack) for _ in range(n)]

    def assignable(circles: list[int], free: list[bool]) -> bool:
        if not circles:
            return True
        colour, rest = circles[0], circles[1:]
        tried: set[int] = set()
        for i, card in enumerate(pile):
            if free[i] and card not in tried and card in (colour, LOCOMOTIVE):
                tried.add(card)  # identical cards are interchangeable
                free[i] = False
                if assignable(rest, free):
                    free[i] = True
                    return True
                free[i] = True
        return False

    best: tuple[int, int, tuple[int, ...]] = (0, 0, ())
    order = sorted(tickets)
    for size in range(1, len(order) + 1):
        for chosen in combinations(order, size):
            circles = [
                c for t in chosen for c, n in enumerate(RULES.tickets[t].requires) for _ in range(n)
            ]
            if len(circles) > len(pile) or not assignable(circles, [True] * len(pile)):
                continue
            points = sum(RULES.tickets[t].points for t in chosen)
            if (points, size) > best[:2] or ((points, size) == best[:2] and chosen < best[2]):
                best = (points, size, chosen)
    return best[2]


def random_case(
    rng: random.Random, most_tickets: int, most_cards: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A random stack drawn from the 96 cards, and distinct tickets."""
    deck = [k for k, n in enumerate(BOX) for _ in range(n)]
    stack = [0] * NUM_CARD_KINDS
    for card in rng.sample(deck, rng.randint(0, most_cards)):
        stack[card] += 1
    tickets = tuple(rng.sample(range(46), rng.randint(0, most_tickets)))
    return tuple(stack), tickets


def test_best_completion_equals_brute_force_on_small_random_cases() -> None:
    rng = random.Random(2008)
    for _ in range(1500):
        stack, tickets = random_case(rng, 6, 12)
        assert best_completion(RULES, stack, tickets) == brute_force(stack, tickets), (
            stack,
            tickets,
        )


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(
    stack=st.lists(st.integers(0, 3), min_size=NUM_CARD_KINDS, max_size=NUM_CARD_KINDS),
    tickets=st.lists(st.integers(0, 45), max_size=6, unique=True),
)
def test_best_completion_equals_brute_force_hypothesis(
    stack: list[int], tickets: list[int]
) -> None:
    """Hypothesis shrinks a failure to the smallest stack and ticket list that shows it."""
    got = best_completion(RULES, tuple(stack), tuple(tickets))
    assert got == brute_force(tuple(stack), tuple(tickets))


def by_sets(stack: tuple[int, ...], tickets: tuple[int, ...]) -> tuple[int, ...]:
    """A second oracle for hands too large for the brute force: every set of tickets, each
    checked with the shortfall rule (per colour, cards missing <= Locomotives held), which
    the brute force above confirms on small cases."""
    best: tuple[int, int, tuple[int, ...]] = (0, 0, ())
    order = sorted(tickets)
    for size in range(1, len(order) + 1):
        for chosen in combinations(order, size):
            short = 0
            for c in range(NUM_COLOURS):
                need = sum(RULES.tickets[t].requires[c] for t in chosen)
                short += max(0, need - stack[c])
            if short > stack[LOCOMOTIVE]:
                continue
            points = sum(RULES.tickets[t].points for t in chosen)
            if (points, size) > best[:2] or ((points, size) == best[:2] and chosen < best[2]):
                best = (points, size, chosen)
    return best[2]


def test_best_completion_equals_every_set_on_larger_hands() -> None:
    rng = random.Random(1910)
    for _ in range(40):
        stack, tickets = random_case(rng, 13, 40)
        assert best_completion(RULES, stack, tickets) == by_sets(stack, tickets), (stack, tickets)


def test_best_completion_breaks_ties_like_every_set_on_larger_hands() -> None:
    """Hands of tickets of few point values, where many sets tie on points and count: the
    search ranks them by one value per ticket whose low bits carry the index order, and
    the smallest index list must win as the oracle's plain comparison says."""
    rng = random.Random(1911)
    alike = [t for t, ticket in enumerate(RULES.tickets) if ticket.points in (9, 10, 11)]
    for _ in range(30):
        stack, _ = random_case(rng, 0, 36)
        tickets = tuple(rng.sample(alike, rng.randint(8, 13)))
        assert best_completion(RULES, stack, tickets) == by_sets(stack, tickets), (stack, tickets)


def test_best_completion_is_fast_on_the_largest_hands() -> None:
    """A seat may hold most of the 46 tickets: the exact search stays quick (the old
    set-by-set memo took minutes here), and its answer is a completable, maximal set."""
    rng = random.Random(46)
    for _ in range(3):
        stack, _ = random_case(rng, 0, 96)
        tickets = tuple(range(46))
        done = best_completion(RULES, stack, tickets)
        short = sum(
            max(0, sum(RULES.tickets[t].requires[c] for t in done) - stack[c])
            for c in range(NUM_COLOURS)
        )
        assert short <= stack[LOCOMOTIVE]
        assert done == tuple(sorted(done))


def test_scoring_uses_best_completion() -> None:
    """The engine's scoring (000:199-209) is the function tested above, for every seat."""
    for seed in range(3):
        end, _ = play_checked(3, 40 + seed, uniform)
        for e in end.events:
            if isinstance(e, StackScored):
                held = tuple(sorted(set(end.tickets[e.seat]) | set(e.completed)))
                assert e.completed == best_completion(RULES, e.stack, held)


# ---------------------------------------------------------------------------------------------
# hidden information: the view and the legal actions ignore every hidden fact


def hide_and_seek(state: CardGameState, seat: int, rng: random.Random) -> CardGameState:
    """``state`` with every fact ``seat`` cannot know redrawn at random, consistently (the
    same cards and tickets in the game, every pile the same size).

    Train cards: the deck, the other hands, the other On-the-Track stacks and the seat's own
    stack unless owners may look at it (000:119-129) are one unseen pool; the discards, the
    row and the Railyards are face up. Tickets: the ticket deck and the other seats' kept and
    offered tickets are one unseen pool (completed ones were shown, 000:185-191). The seed
    decides future shuffles."""
    n = state.num_seats
    others = [s for s in range(n) if s != seat]
    stacks_hidden = others if state.ruleset.owners_see_stack else list(range(n))

    pool = list(state.deck)
    for s in others:
        pool += [k for k, c in enumerate(state.hands[s]) for _ in range(c)]
    for s in stacks_hidden:
        pool += [k for k, c in enumerate(state.stacks[s]) for _ in range(c)]
    rng.shuffle(pool)

    def take(size: int) -> tuple[int, ...]:
        out = [0] * NUM_CARD_KINDS
        for _ in range(size):
            out[pool.pop()] += 1
        return tuple(out)

    hands = list(state.hands)
    stacks = list(state.stacks)
    for s in others:
        hands[s] = take(sum(state.hands[s]))
    for s in stacks_hidden:
        stacks[s] = take(sum(state.stacks[s]))
    deck = tuple(pool)
    assert len(deck) == len(state.deck)

    tickets = list(state.ticket_deck)
    for s in others:
        tickets += [*state.tickets[s], *state.offered[s]]
    rng.shuffle(tickets)
    kept = list(state.tickets)
    offered = list(state.offered)
    for s in others:
        kept[s] = tuple(tickets.pop() for _ in state.tickets[s])
        offered[s] = tuple(tickets.pop() for _ in state.offered[s])
    hidden = dataclasses.replace(
        state,
        deck=deck,
        hands=tuple(hands),
        stacks=tuple(stacks),
        ticket_deck=tuple(tickets),
        tickets=tuple(kept),
        offered=tuple(offered),
        seed=rng.randrange(2**32),
        shuffles=rng.randrange(100),
    )
    assert hidden.kind_counts() == state.kind_counts()
    return hidden


def assert_view_hides(
    state: CardGameState,
    seat: int,
    rng: random.Random,
    tries: int = 2,
    see: Callable[[CardGameState, int], str] = view_json,
) -> None:
    seen = see(state, seat)
    actions = legal_actions(state) if seat == state.seat and not state.is_over else None
    for _ in range(tries):
        other = hide_and_seek(state, seat, rng)
        assert see(other, seat) == seen, f"seat {seat}'s view depends on a hidden fact"
        if actions is not None:
            assert legal_actions(other) == actions, f"seat {seat}'s actions use a hidden fact"


def sampled_states() -> Iterator[CardGameState]:
    """States of whole games, every phase and both decks, both stack settings."""
    for i in range(12):
        rules = SEEING if i % 3 == 2 else RULES
        policy = placer if i % 2 else uniform
        for k, state in enumerate(game(2 + i % 3, 300 + i, policy, rules)):
            if k % 3 == 0 or state.is_over:
                yield state


def test_views_and_legal_actions_ignore_every_hidden_fact() -> None:
    rng = random.Random(0)
    phases: set[Phase] = set()
    for state in sampled_states():
        phases.add(state.phase)
        for seat in range(state.num_seats):
            assert_view_hides(state, seat, rng, tries=1)
    assert phases == set(Phase)


def test_hide_and_seek_moves_every_hidden_fact() -> None:
    """The perturbation is not a no-op: each hidden fact does change."""
    state = reach(4, 3, 80, placer)
    assert all(sum(s) for s in state.stacks) and state.deck
    rng = random.Random(1)
    moved = dict.fromkeys(
        ("deck", "hands", "own stack", "other stacks", "tickets", "ticket deck"), False
    )
    for _ in range(5):
        other = hide_and_seek(state, 0, rng)
        moved["deck"] |= other.deck != state.deck
        moved["hands"] |= other.hands[1:] != state.hands[1:]
        moved["own stack"] |= other.stacks[0] != state.stacks[0]
        moved["other stacks"] |= other.stacks[1:] != state.stacks[1:]
        moved["tickets"] |= other.tickets[1:] != state.tickets[1:]
        moved["ticket deck"] |= other.ticket_deck != state.ticket_deck
        assert other.hands[0] == state.hands[0] and other.tickets[0] == state.tickets[0]
    assert all(moved.values()), moved
    seeing = dataclasses.replace(state, ruleset=SEEING)
    assert all(hide_and_seek(seeing, 0, rng).stacks[0] == state.stacks[0] for _ in range(3))


@pytest.mark.parametrize(
    "leak",
    [
        lambda s, seat: str(s.hands[(seat + 1) % s.num_seats]),
        lambda s, seat: str(s.stacks[(seat + 1) % s.num_seats]),
        lambda s, seat: str(s.stacks[seat]),
        lambda s, seat: str(s.deck[-1:]),
        lambda s, seat: str(s.tickets[(seat + 1) % s.num_seats]),
        lambda s, seat: str(s.ticket_deck[-1:]),
        lambda s, seat: str(s.seed),
    ],
    ids=[
        "other hand",
        "other stack",
        "own stack",
        "deck top",
        "other tickets",
        "ticket deck",
        "seed",
    ],
)
def test_a_leaky_view_is_caught(leak: Callable[[CardGameState, int], str]) -> None:
    state = reach(3, 5, 90, placer)

    def leaky(s: CardGameState, seat: int) -> str:
        return view_json(s, seat) + leak(s, seat)

    with pytest.raises(AssertionError, match="hidden fact"):
        assert_view_hides(state, 0, random.Random(1), tries=10, see=leaky)


def test_views_change_with_public_facts() -> None:
    """The other direction: what is public does show (the Railyards, every count, the
    completed tickets, the discards, the row)."""
    state = reach(3, 5, 90, placer)
    seen = view_json(state, 0)
    changes = {
        "railyard": with_(state, yard_cards={1: (1, *state.yard_cards[1][1:])}),
        "railyard locomotives": with_(state, yard_cards={1: (5,) * 8}, yard_locos={1: (1,) * 8}),
        "stack size": with_(state, stacks={1: cards(red=sum(state.stacks[1]) + 1)}),
        "hand size": with_(state, hands={2: (*state.hands[2][:-1], state.hands[2][-1] + 1)}),
        "completed": with_(state, completed={2: (*state.completed[2], 45)}),
        "discards": with_(state, discards=(state.discards[0] + 1, *state.discards[1:])),
        "row": with_(state, face_up=((state.face_up[0] + 1) % NUM_CARD_KINDS, *state.face_up[1:])),
        "deck size": with_(state, deck=state.deck[:-1]),
        "ticket count": with_(state, tickets={1: state.tickets[1][:-1]}),
    }
    for name, changed in changes.items():
        assert view_json(changed, 0) != seen, name


def test_events_show_a_seat_only_what_it_may_know() -> None:
    """Projected events: other seats' drawn cards, dealt cards and tickets are gone, and the
    stack's cards are gone for everyone (000:119-122) unless owners may look (000:124-129)."""
    for rules in (RULES, SEEING):
        state = None
        for state in game(4, 3, placer, rules):
            for e in state.events:
                for seat in range(4):
                    p = project(e, seat)
                    owner = getattr(e, "seat", None)
                    if isinstance(e, MovedOnTrack):
                        shown = owner == seat and rules.owners_see_stack
                        assert p.cards == (e.cards if shown else None)  # type: ignore[union-attr]
                    elif isinstance(e, CardsDealt):
                        assert p.cards == (e.cards if owner == seat else None)  # type: ignore[union-attr]
                    elif owner is not None and owner != seat and hasattr(e, "card"):
                        assert getattr(p, "card", None) is None or type(e).__name__ == "FaceUpTaken"
                    if owner == seat and not isinstance(e, MovedOnTrack):
                        assert p == e
        assert state is not None and state.is_over


def test_stall_guard_events_and_play_stalled() -> None:
    end, seen = play_checked(2, 1, idler)
    assert end.end_reason == "stalled"
    assert any(isinstance(e, PlayStalled) for e in end.events)
    assert "TicketsKept" in seen


def test_view_json_is_canonical_json() -> None:
    state = after_setup(3, 2)
    for seat in range(3):
        text = view_json(state, seat)
        assert json.dumps(json.loads(text), sort_keys=True, separators=(",", ":")) == text
