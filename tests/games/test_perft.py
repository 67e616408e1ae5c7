"""The legal actions, cross-checked against a naive reading of the rulebook, and perft.

``tests/games/naive_rules.py`` decides legality straight from the rulebook text and RULINGS.md,
without the engine's tables or shortcuts. Here: in many states of random games (every
phase) the engine's ``legal_actions`` is exactly the set of candidates the naive check
accepts, and ``apply`` rejects every other candidate with a rules error.

Perft (python-chess ``examples/perft``; STYLE.md, Tests): from fixed seeded positions, the
number of leaves of the legal-action tree to depth 1, 2 and 3 is pinned in
``tests/data/perft_usa.json`` and recomputed with the naive check. The file is rewritten only
by ``pytest --regen-golden``; review its diff like code. The other variants' positions are
pinned below (``VARIANT_PERFT``), computed by the engine and recounted by the naive check,
whose numbers for each variant are written from that variant's rulebook lines.

Every test here runs for every variant: the random games and the Hypothesis states are split
across them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from math import comb
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games.board import (
    GameState,
    IllegalActionError,
    MalformedActionError,
    Phase,
    Ruleset,
    apply,
    legal_actions,
    new_game,
)
from referee.games.board.actions import (
    DRAW_TICKETS,
    PASS,
    Action,
    ClaimRoute,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
)
from referee.games.common.cards import LOCOMOTIVE
from tests.games.naive_rules import candidate_actions, naive_is_legal, naive_legal_actions
from tests.helpers import FACTS, RULESETS, USA, VARIANTS, after_setup, variant_seats

PERFT_FILE = Path(__file__).parents[1] / "data" / "perft_usa.json"


def hoarder(actions: tuple[Action, ...], rng: random.Random) -> Action:
    """Draws cards while it can, then tickets: runs the decks dry (empty slots, passes)."""
    draws = [a for a in actions if isinstance(a, DrawBlind | DrawFaceUp)]
    if draws:
        return draws[rng.randrange(len(draws))]
    if any(isinstance(a, DrawTickets) for a in actions):
        return DrawTickets()
    return actions[rng.randrange(len(actions))]


def ticketer(actions: tuple[Action, ...], rng: random.Random) -> Action:
    """Draws tickets whenever it may: runs the ticket deck short while hands stay small."""
    if DRAW_TICKETS in actions:
        return DRAW_TICKETS
    return actions[rng.randrange(len(actions))]


def game_states(
    players: int, seed: int, hoard: bool, ruleset: Ruleset = USA
) -> Iterable[GameState]:
    """Every state of one random game, the final one included."""
    state = new_game(ruleset, players, seed)
    rng = random.Random(seed)
    while True:
        yield state
        if state.is_over:
            return
        actions = legal_actions(state)
        state = apply(state, hoarder(actions, rng) if hoard else rng.choice(actions))


# ---------------------------------------------------------------------------------------------
# legal_actions == the naive check


def assert_engine_agrees_with_naive(state: GameState) -> set[Action]:
    legal = legal_actions(state)
    naive = naive_legal_actions(state)
    engine = set(legal)
    assert len(engine) == len(legal), "legal_actions lists an action twice"
    assert engine == naive, (
        f"phase {state.phase.name}, seat {state.seat}: engine only {engine - naive}, "
        f"naive only {naive - engine}"
    )
    return naive


def assert_apply_rejects_the_rest(state: GameState, legal: set[Action]) -> None:
    for action in candidate_actions(state):
        if action in legal:
            continue
        try:
            apply(state, action)
        except (IllegalActionError, MalformedActionError):
            continue
        raise AssertionError(f"apply accepted {action!r} in phase {state.phase.name}")


#: (players, seed, hoard) per variant: uniform and hoarding players at every seat count, and
#: one hoarder game that reaches a forced pass (found by search). New York's games are short
#: and its map small, so it gets more of them.
NAIVE_GAMES: dict[str, list[tuple[int, int, bool]]] = {
    "usa": [(2 + i % 4, 900 + i, False) for i in range(4)]
    + [(2, 910, True), (5, 23, True)],  # 5p/23: a pass
    "usa1910": [(3, 900, False), (4, 901, False), (2, 910, True), (5, 3, True)],  # 5p/3: a pass
    "mega": [(2, 900, False), (5, 901, False), (4, 6, True)],  # 4p/6: a pass
    "bigcities": [(4, 900, False), (2, 901, False), (3, 17, True)],  # 3p/17: a pass
    "newyork": [(2 + i % 3, 900 + i, False) for i in range(6)]
    + [(3, 910, True), (4, 2, True)],  # 4p/2: a pass
}

#: What the games of every variant must show, so that the comparison means something.
NAIVE_CORNERS = {
    "SETUP_TICKETS",
    "TURN",
    "SECOND_CARD",
    "KEEP_TICKETS",
    "OVER",
    "pass",
    "face-up locomotive refused as second card",
    "all-locomotive payment",
    "keep one ticket",
    "empty face-up slot",
    "double track closed (2 seats)",
}


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_legal_actions_are_the_naive_legal_actions_in_random_games(variant: str) -> None:
    """Every state of the games of ``NAIVE_GAMES`` (uniform and hoarding players); every 10th
    state also has every illegal candidate rejected by ``apply``. The states seen cover every
    phase and the rules' corners, so the comparison means something."""
    seen: set[str] = set()
    rules = RULESETS[variant]
    for players, seed, hoard in NAIVE_GAMES[variant]:
        for step, state in enumerate(game_states(players, seed, hoard, rules)):
            legal = assert_engine_agrees_with_naive(state)
            if step % 10 == 0:
                assert_apply_rejects_the_rest(state, legal)
            seen.add(state.phase.name)
            if legal == {PASS}:
                seen.add("pass")
            if state.phase is Phase.SECOND_CARD and LOCOMOTIVE in state.face_up:
                seen.add("face-up locomotive refused as second card")
            if any(isinstance(a, ClaimRoute) and a.colour == LOCOMOTIVE for a in legal):
                seen.add("all-locomotive payment")
            if any(isinstance(a, KeepTickets) and len(a.tickets) == 1 for a in legal):
                seen.add("keep one ticket")
            if sum(1 for c in state.face_up if c == -1):
                seen.add("empty face-up slot")
            if double_track_closed(state):
                seen.add(f"double track closed ({players} seats)")
    # the other track stays open to other seats from 4 seats (003:87), from 3 in New York
    # (001:152-153): the comparison covers one such seat count too
    open_from = FACTS[variant].one_track_up_to + 1
    assert seen >= NAIVE_CORNERS | {f"double track closed ({open_from} seats)"}, seen


def double_track_closed(state: GameState) -> bool:
    """Whether the acting seat faces a double route one of whose tracks someone holds."""
    routes = state.ruleset.game_map.routes
    taken = 0
    for owned in state.owned:
        taken |= owned
    return state.phase is Phase.TURN and any(
        r.sibling is not None and taken >> r.sibling & 1 and not taken >> r.index & 1
        for r in routes
    )


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    variant_players=st.sampled_from(variant_seats()),
    steps=st.integers(min_value=0, max_value=450),
    hoard=st.booleans(),
)
def test_hypothesis_legal_actions_are_the_naive_legal_actions(
    seed: int, variant_players: tuple[str, int], steps: int, hoard: bool
) -> None:
    variant, players = variant_players
    for step, state in enumerate(game_states(players, seed, hoard, RULESETS[variant])):
        if step == steps or state.is_over:
            legal = assert_engine_agrees_with_naive(state)
            assert_apply_rejects_the_rest(state, legal)
            break


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_naive_check_is_not_vacuous(variant: str) -> None:
    """It rejects most candidates and accepts some in each phase (a naive check that said
    yes or no to everything would not be worth comparing with)."""
    rules = RULESETS[variant]
    state = after_setup(2, 1, rules)
    candidates = list(candidate_actions(state))
    legal = naive_legal_actions(state)
    assert 0 < len(legal) < len(candidates) // 10
    assert not any(naive_is_legal(state, a) for a in candidates if isinstance(a, KeepTickets))
    assert not naive_is_legal(state, PASS)
    deal = new_game(rules, 2, 1)
    assert {type(a) for a in naive_legal_actions(deal)} == {KeepTickets}


# ---------------------------------------------------------------------------------------------
# perft


@dataclass(frozen=True)
class Position:
    """A position for perft: ``how`` players take ``decisions`` decisions of game ``seed``.

    ``how`` is ``deal`` (no decision), ``keep_all`` (every seat keeps its starting tickets:
    the first turn), ``uniform``, ``hoard`` or ``tickets`` (random players with
    ``random.Random(seed)``; ``tickets`` draws tickets whenever it may). ``variant`` names the
    ruleset (tests/helpers.py ``RULESETS``).
    """

    name: str
    players: int
    seed: int
    how: str
    decisions: int
    depth: int  #: perft depths 1..depth go in the file
    naive_depth: int  #: depths 1..naive_depth are recounted with the naive check
    variant: str = "usa"

    def reach(self) -> GameState:
        rules = RULESETS[self.variant]
        if self.how == "keep_all":
            return after_setup(self.players, self.seed, rules)
        state = new_game(rules, self.players, self.seed)
        rng = random.Random(self.seed)
        for _ in range(self.decisions):
            actions = legal_actions(state)
            if self.how == "hoard":
                state = apply(state, hoarder(actions, rng))
            elif self.how == "tickets":
                state = apply(state, ticketer(actions, rng))
            else:
                assert self.how == "uniform", self.how
                state = apply(state, actions[rng.randrange(len(actions))])
        return state


POSITIONS = (
    *(Position(f"deal-{p}p-seed{s}", p, s, "deal", 0, 3, 3) for p in (2, 4) for s in (1, 2, 3)),
    # The first turn: 4 cards in hand, so many payments; the naive recount stops at 2 there
    # (depth 3 is ~100 000 naive checks of ~3 700 candidates each).
    *(
        Position(f"first-turn-{p}p-seed{s}", p, s, "keep_all", 0, 3, 2)
        for p in (2, 4)
        for s in (1, 2, 3)
    ),
    Position("mid-game-3p-seed11", 3, 11, "uniform", 120, 3, 3),
    Position("late-game-5p-seed12", 5, 12, "uniform", 300, 3, 3),
    Position("keep-tickets-4p-seed5", 4, 5, "uniform", 35, 3, 3),
    Position("second-card-locomotive-up-3p-seed8", 3, 8, "uniform", 31, 3, 3),
    Position("second-card-row-with-gaps-2p-seed0", 2, 0, "hoard", 103, 3, 2),
    Position("deck-dry-2p-seed0", 2, 0, "hoard", 239, 3, 3),
    Position("forced-pass-5p-seed23", 5, 23, "hoard", 387, 3, 3),
)

MovesFn = Callable[[GameState], Iterable[Action]]


def perft(state: GameState, depth: int, moves: MovesFn) -> int:
    """Leaves of the legal-action tree ``depth`` decisions deep (a finished game is a leaf
    only at depth 0: it adds nothing to deeper counts)."""
    if depth == 0:
        return 1
    actions = list(moves(state))
    if depth == 1:
        return len(actions)
    return sum(perft(apply(state, a), depth - 1, moves) for a in actions)


def engine_counts() -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for pos in POSITIONS:
        state = pos.reach()
        out[pos.name] = {
            "players": pos.players,
            "seed": pos.seed,
            "how": pos.how,
            "decisions": pos.decisions,
            "phase": state.phase.name.lower(),
            "perft": [perft(state, d, legal_actions) for d in range(1, pos.depth + 1)],
        }
    return out


def load_perft_file() -> dict[str, dict[str, object]]:
    assert PERFT_FILE.is_file(), f"{PERFT_FILE} is missing: run pytest --regen-golden"
    data = json.loads(PERFT_FILE.read_text(encoding="utf-8"))
    positions: dict[str, dict[str, object]] = data["positions"]
    return positions


def dump_one_position_per_line(document: dict[str, object]) -> str:
    """JSON with one line per position, so a changed count shows as a one-line diff."""
    positions = document["positions"]
    assert isinstance(positions, dict)
    lines = ["{", f' "about": {json.dumps(document["about"])},', ' "positions": {']
    for i, (name, entry) in enumerate(positions.items()):
        comma = "," if i + 1 < len(positions) else ""
        lines.append(f"  {json.dumps(name)}: {json.dumps(entry)}{comma}")
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


def test_engine_perft_matches_the_file(regen_golden: bool) -> None:
    counts = engine_counts()
    if regen_golden:
        PERFT_FILE.parent.mkdir(exist_ok=True)
        document: dict[str, object] = {
            "about": "Leaf counts of the legal-action tree (perft) of the usa ruleset from "
            "fixed positions; perft[d-1] is depth d. Written by `pytest --regen-golden` from "
            "tests/games/test_perft.py (POSITIONS), which says how each position is reached.",
            "positions": counts,
        }
        PERFT_FILE.write_text(dump_one_position_per_line(document), encoding="utf-8")
    stored = load_perft_file()
    assert sorted(stored) == sorted(counts), "positions differ: run pytest --regen-golden"
    for name, entry in counts.items():
        assert stored[name] == entry, f"perft of {name}"


@pytest.mark.parametrize("pos", POSITIONS, ids=[p.name for p in POSITIONS])
def test_naive_perft_matches_the_file(pos: Position) -> None:
    stored = load_perft_file()[pos.name]["perft"]
    assert isinstance(stored, list)
    state = pos.reach()
    naive = [perft(state, d, naive_legal_actions) for d in range(1, pos.naive_depth + 1)]
    assert naive == stored[: pos.naive_depth]


def test_perft_positions_cover_every_phase() -> None:
    phases = {entry["phase"] for entry in load_perft_file().values()}
    assert phases == {"setup_tickets", "turn", "second_card", "keep_tickets"}


# ---------------------------------------------------------------------------------------------
# perft of the other variants, pinned here


def variant_positions(variant: str, spots: dict[str, tuple[int, int, int]]) -> list[Position]:
    """Six positions of ``variant``: the deal, the first turn, a ticket choice, a second card
    with a Locomotive face up, a turn facing a ticket deck shorter than a draw (003:93;
    001:30-31 a single ticket left) and a turn in the final round. ``spots`` gives (players,
    seed, decisions) of the last four, found by playing the games. The naive check recounts
    depths 1-2 (every depth of the deal, and every depth on New York's small map)."""
    naive = 3 if variant == "newyork" else 2
    p, s, d = spots["keep"]
    out = [
        Position(f"{variant}/deal-3p-seed1", 3, 1, "deal", 0, 3, 3, variant),
        Position(f"{variant}/first-turn-2p-seed2", 2, 2, "keep_all", 0, 3, naive, variant),
        Position(f"{variant}/keep-tickets-{p}p-seed{s}", p, s, "uniform", d, 3, naive, variant),
    ]
    p, s, d = spots["second"]
    name = f"{variant}/second-card-locomotive-up-{p}p-seed{s}"
    out.append(Position(name, p, s, "uniform", d, 3, naive, variant))
    p, s, d = spots["short"]
    name = f"{variant}/short-ticket-deck-{p}p-seed{s}"
    out.append(Position(name, p, s, "tickets", d, 3, naive, variant))
    p, s, d = spots["last"]
    name = f"{variant}/last-round-{p}p-seed{s}"
    out.append(Position(name, p, s, "uniform", d, 3, naive, variant))
    return out


VARIANT_POSITIONS = (
    *variant_positions(
        "usa1910",
        {"keep": (4, 13, 18), "second": (3, 12, 68), "short": (3, 17, 33), "last": (2, 11, 149)},
    ),
    *variant_positions(
        "mega",
        {"keep": (4, 13, 18), "second": (3, 12, 68), "short": (3, 17, 51), "last": (2, 11, 140)},
    ),
    *variant_positions(
        "bigcities",
        {"keep": (4, 13, 35), "second": (3, 12, 63), "short": (2, 16, 28), "last": (2, 11, 151)},
    ),
    *variant_positions(
        "newyork",
        {"keep": (4, 13, 10), "second": (3, 12, 5), "short": (2, 16, 26), "last": (2, 11, 57)},
    ),
)

#: Position name -> (phase, [perft depth 1, 2, 3]), computed by the engine and recounted by
#: the naive check (the tests below); change them only with a reason, like a golden file.
VARIANT_PERFT: dict[str, tuple[str, list[int]]] = {
    "usa1910/deal-3p-seed1": ("setup_tickets", [4, 16, 64]),
    "usa1910/first-turn-2p-seed2": ("turn", [61, 3196, 97584]),
    "usa1910/keep-tickets-4p-seed13": ("keep_tickets", [7, 49, 266]),
    "usa1910/second-card-locomotive-up-3p-seed12": ("second_card", [5, 35, 195]),
    "usa1910/short-ticket-deck-3p-seed17": ("turn", [61, 3136, 312707]),
    "usa1910/last-round-2p-seed11": ("turn", [8, 46, 299]),
    "mega/deal-3p-seed1": ("setup_tickets", [16, 256, 4096]),
    "mega/first-turn-2p-seed2": ("turn", [61, 3204, 98512]),
    "mega/keep-tickets-4p-seed13": ("keep_tickets", [15, 105, 690]),
    "mega/second-card-locomotive-up-3p-seed12": ("second_card", [5, 35, 235]),
    "mega/short-ticket-deck-3p-seed17": ("turn", [61, 3134, 312477]),
    "mega/last-round-2p-seed11": ("turn", [16, 108, 576]),
    "bigcities/deal-3p-seed1": ("setup_tickets", [11, 121, 1331]),
    "bigcities/first-turn-2p-seed2": ("turn", [61, 3204, 98512]),
    "bigcities/keep-tickets-4p-seed13": ("keep_tickets", [15, 120, 885]),
    "bigcities/second-card-locomotive-up-3p-seed12": ("second_card", [5, 35, 445]),
    "bigcities/short-ticket-deck-2p-seed16": ("turn", [60, 6532, 203757]),
    "bigcities/last-round-2p-seed11": ("turn", [20, 138, 851]),
    "newyork/deal-3p-seed1": ("setup_tickets", [3, 9, 27]),
    "newyork/first-turn-2p-seed2": ("turn", [19, 182, 1399]),
    "newyork/keep-tickets-4p-seed13": ("keep_tickets", [3, 72, 561]),
    "newyork/second-card-locomotive-up-3p-seed12": ("second_card", [5, 140, 1015]),
    "newyork/short-ticket-deck-2p-seed16": ("turn", [28, 280, 2075]),
    "newyork/last-round-2p-seed11": ("turn", [14, 84, 426]),
}


@pytest.fixture(scope="module")
def variant_states() -> dict[str, GameState]:
    return {pos.name: pos.reach() for pos in VARIANT_POSITIONS}


def test_variant_perft_table_lists_every_position() -> None:
    assert sorted(VARIANT_PERFT) == sorted(pos.name for pos in VARIANT_POSITIONS)
    assert len(VARIANT_POSITIONS) == 6 * 4


@pytest.mark.parametrize("pos", VARIANT_POSITIONS, ids=[p.name for p in VARIANT_POSITIONS])
def test_variant_engine_perft_matches_the_table(
    pos: Position, variant_states: dict[str, GameState]
) -> None:
    state = variant_states[pos.name]
    phase, counts = VARIANT_PERFT[pos.name]
    assert state.phase.name.lower() == phase
    assert [perft(state, d, legal_actions) for d in range(1, pos.depth + 1)] == counts


@pytest.mark.parametrize("pos", VARIANT_POSITIONS, ids=[p.name for p in VARIANT_POSITIONS])
def test_variant_naive_perft_matches_the_table(
    pos: Position, variant_states: dict[str, GameState]
) -> None:
    state = variant_states[pos.name]
    naive = [perft(state, d, naive_legal_actions) for d in range(1, pos.naive_depth + 1)]
    assert naive == VARIANT_PERFT[pos.name][1][: pos.naive_depth]


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v != "usa"])
def test_variant_perft_positions_are_what_their_names_say(
    variant: str, variant_states: dict[str, GameState]
) -> None:
    """Every phase is covered, and the special positions are special: the short ticket deck
    holds fewer tickets than a draw (New York: exactly one, 001:30-31), the last-round
    position is in the final round (003:101, 001:36-37)."""
    facts = FACTS[variant]
    states = {name: s for name, s in variant_states.items() if name.startswith(f"{variant}/")}
    assert {s.phase.name.lower() for s in states.values()} == {
        "setup_tickets",
        "turn",
        "second_card",
        "keep_tickets",
    }
    for name, state in states.items():
        if "/short-ticket-deck-" in name:
            assert 0 < len(state.ticket_deck) < facts.drawn
            if variant == "newyork":
                assert len(state.ticket_deck) == 1
        if "/last-round-" in name:
            assert state.last_round > 0
        if "/second-card-locomotive-up-" in name:
            assert LOCOMOTIVE in state.face_up
        if "/keep-tickets-" in name:
            assert len(state.offered[state.seat]) == facts.drawn
        if "/deal-" in name:
            assert len(legal_actions(state)) == sum(
                comb(facts.setup_dealt, k) for k in range(facts.setup_keep, facts.setup_dealt + 1)
            )
