"""The legal actions, cross-checked against a naive reading of the rulebook, and perft.

``tests/naive_rules.py`` decides legality straight from the rulebook text and RULINGS.md,
without the engine's tables or shortcuts. Here: in many states of random games (every
phase) the engine's ``legal_actions`` is exactly the set of candidates the naive check
accepts, and ``apply`` rejects every other candidate with a rules error.

Perft (python-chess ``examples/perft``; STYLE.md, Tests): from fixed seeded positions, the
number of leaves of the legal-action tree to depth 1, 2 and 3 is pinned in
``tests/data/perft_usa.json`` and recomputed with the naive check. The file is rewritten only
by ``pytest --regen-golden``; review its diff like code.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import (
    GameState,
    IllegalActionError,
    MalformedActionError,
    Phase,
    apply,
    legal_actions,
    new_game,
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
from referee.rules.cards import LOCOMOTIVE
from tests.helpers import USA, after_setup
from tests.naive_rules import candidate_actions, naive_is_legal, naive_legal_actions

PERFT_FILE = Path(__file__).parent / "data" / "perft_usa.json"


def hoarder(actions: tuple[Action, ...], rng: random.Random) -> Action:
    """Draws cards while it can, then tickets: runs the decks dry (empty slots, passes)."""
    draws = [a for a in actions if isinstance(a, DrawBlind | DrawFaceUp)]
    if draws:
        return draws[rng.randrange(len(draws))]
    if any(isinstance(a, DrawTickets) for a in actions):
        return DrawTickets()
    return actions[rng.randrange(len(actions))]


def game_states(players: int, seed: int, hoard: bool) -> Iterable[GameState]:
    """Every state of one random game, the final one included."""
    state = new_game(USA, players, seed)
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


@pytest.mark.slow
def test_legal_actions_are_the_naive_legal_actions_in_random_games() -> None:
    """Every state of 10 games (uniform and hoarding players, 2-5 seats); every 10th state
    also has every illegal candidate rejected by ``apply``. The states seen cover every
    phase and the rules' corners, so the comparison means something."""
    seen: set[str] = set()
    games = [(2 + i % 4, 900 + i, False) for i in range(6)]
    games += [(2 + i % 4, 910 + i, True) for i in range(3)] + [(5, 23, True)]  # 5p/23: a pass
    for players, seed, hoard in games:
        for step, state in enumerate(game_states(players, seed, hoard)):
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
    assert seen >= {
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
        "double track closed (4 seats)",
    }, seen


def double_track_closed(state: GameState) -> bool:
    """Whether the acting seat faces a double route one of whose tracks someone holds."""
    routes = USA.game_map.routes
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
    players=st.integers(min_value=2, max_value=5),
    steps=st.integers(min_value=0, max_value=450),
    hoard=st.booleans(),
)
def test_hypothesis_legal_actions_are_the_naive_legal_actions(
    seed: int, players: int, steps: int, hoard: bool
) -> None:
    for step, state in enumerate(game_states(players, seed, hoard)):
        if step == steps or state.is_over:
            legal = assert_engine_agrees_with_naive(state)
            assert_apply_rejects_the_rest(state, legal)
            break


def test_the_naive_check_is_not_vacuous() -> None:
    """It rejects most candidates and accepts some in each phase (a naive check that said
    yes or no to everything would not be worth comparing with)."""
    state = after_setup(2, 1)
    candidates = list(candidate_actions(state))
    legal = naive_legal_actions(state)
    assert 0 < len(legal) < len(candidates) // 10
    assert not any(naive_is_legal(state, a) for a in candidates if isinstance(a, KeepTickets))
    assert not naive_is_legal(state, PASS)
    deal = new_game(USA, 2, 1)
    assert {type(a) for a in naive_legal_actions(deal)} == {KeepTickets}


# ---------------------------------------------------------------------------------------------
# perft


@dataclass(frozen=True)
class Position:
    """A position for perft: ``how`` players take ``decisions`` decisions of game ``seed``.

    ``how`` is ``deal`` (no decision), ``keep_all`` (every seat keeps its starting tickets:
    the first turn), ``uniform`` or ``hoard`` (random players with ``random.Random(seed)``).
    """

    name: str
    players: int
    seed: int
    how: str
    decisions: int
    depth: int  #: perft depths 1..depth go in the file
    naive_depth: int  #: depths 1..naive_depth are recounted with the naive check

    def reach(self) -> GameState:
        if self.how == "keep_all":
            return after_setup(self.players, self.seed)
        state = new_game(USA, self.players, self.seed)
        rng = random.Random(self.seed)
        for _ in range(self.decisions):
            actions = legal_actions(state)
            if self.how == "hoard":
                state = apply(state, hoarder(actions, rng))
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
            "tests/test_perft.py (POSITIONS), which says how each position is reached.",
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
