"""One conformance suite for every rules family: what any game must do to be played here.

Every test runs for every entry of ``referee.games.registry.FAMILIES``, every variant of it and
every player count it allows (``usa-2p`` ... ``cardgame-4p``), the way PettingZoo's
``api_test`` and OpenSpiel's random-simulation test serve every game they ship. The families
are reached only through their :class:`~referee.games.common.family.Family` record and the
registry, never through their own modules or types, so a third family added to ``FAMILIES``
is tested here with no edit to the tests (but one entry saying what its seats cannot know,
below), and fails here first if it breaks a contract the referee, the records, the SDK or
the pages rely on.

Two things cannot be read off the record and are kept here per family, in dicts keyed by
``Family.name``: which fields of a state a seat cannot know (``SECRETS``, for the view-leak
property; a test fails when a family has no entry, so none skips it silently), and the naive
legality oracle where one exists (``ORACLES``, for perft; a family without one is listed in
``WITHOUT_ORACLE``, and a test fails if the two stop covering every family).

The per-family files (test_invariants.py, test_views.py, test_perft.py, test_wire*.py,
test_cardgame_engine.py) keep what is specific to a family: rulebook numbers, golden files,
hand-made rare values. Here the games are few and sampled (two seeds per variant and player
count for whole-game properties, every 7th state for per-state ones) so the file stays quick.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import random
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import referee.selfplay
from referee.games.common.errors import RulesError
from referee.games.common.family import AnyFamily
from referee.games.play import Played, Policy, play
from referee.games.registry import (
    FAMILIES,
    family_named,
    family_of,
    family_of_variant,
    load,
    variants,
)
from referee.match import RECORD_FORMAT, action_from_json, outcome_to_json, to_json
from referee.replay import load_record, replay, start, verify
from tests.games.naive_rules import naive_legal_actions
from ttr.v1 import actions_pb2, bot_service_pb2, events_pb2, scoring_pb2, view_pb2

ROOT = Path(__file__).resolve().parents[2]

#: Far above any random game seen (they take 50-400 decisions): a game reaching it does not
#: end. Each family's own invariant tests argue why its games are bounded well below this.
MAX_DECISIONS = 5_000

#: Game seeds of the whole-game properties (end, determinism): two per variant and count.
GAME_SEEDS = (0, 1)

#: The per-state properties look at every EVERY-th state of a game, and at its last.
EVERY = 7

#: The clock of the act requests built here (any value: it is compared, not obeyed).
CLOCK = bot_service_pb2.Clock(move_limit_ms=1000, bank_left_ms=10_000)


# ---------------------------------------------------------------------------------------------
# what is tested: every family, variant and player count


@dataclass(frozen=True, eq=False)
class Case:
    """One family's variant at one player count. Compared by identity: the cases are made
    once, below, and :func:`trace` caches its games by case."""

    family: AnyFamily
    variant: str
    ruleset: Any
    players: int

    @property
    def id(self) -> str:
        return f"{self.variant}-{self.players}p"

    @property
    def names(self) -> list[str]:
        return [f"random{seat}" for seat in range(self.players)]


def all_cases() -> tuple[Case, ...]:
    """Every (family, variant, player count) the registry offers, from the records alone."""
    cases = []
    for family in FAMILIES:
        for variant in family.variants():
            ruleset = family.load(variant)
            for players in range(ruleset.min_players, ruleset.max_players + 1):
                cases.append(Case(family, variant, ruleset, players))
    return tuple(cases)


CASES = all_cases()
CASE_IDS = [c.id for c in CASES]
#: one case per variant (the fewest players): for what does not depend on the count
VARIANT_CASES = tuple(c for c in CASES if c.players == c.ruleset.min_players)
VARIANT_IDS = [c.variant for c in VARIANT_CASES]
#: one case per family (its first variant, the most players): for the checks of the checks
FAMILY_CASES = tuple(
    [c for c in CASES if c.family is f and c.variant == f.variants()[0]][-1] for f in FAMILIES
)
FAMILY_IDS = [c.family.name for c in FAMILY_CASES]

by_case = pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
by_variant = pytest.mark.parametrize("case", VARIANT_CASES, ids=VARIANT_IDS)
by_family = pytest.mark.parametrize("case", FAMILY_CASES, ids=FAMILY_IDS)


# ---------------------------------------------------------------------------------------------
# playing


def uniform_players(players: int, seed: int) -> list[Policy]:
    """Seats that choose uniformly among the legal actions (from their own RNG, never the
    game's) and fail the test past :data:`MAX_DECISIONS` decisions, so a game that does not
    end fails instead of hanging."""
    rng = random.Random(f"conformance/{seed}")
    decisions = [0]

    def choose(view: Any, legal: Sequence[Any]) -> Any:
        decisions[0] += 1
        if decisions[0] > MAX_DECISIONS:
            raise AssertionError(f"the game did not end in {MAX_DECISIONS} decisions")
        assert view is not None and legal, "a seat asked to act with no view or no action"
        return legal[rng.randrange(len(legal))]

    return [choose] * players


def play_case(case: Case, seed: int) -> Played[Any, Any]:
    """One uniform random game of ``case`` through the one in-process loop."""
    return play(
        case.family, case.ruleset, uniform_players(case.players, seed), seed, names=case.names
    )


@dataclass(frozen=True)
class Trace:
    """One random game: every state from the deal to the end, and per decision the legal
    actions offered and the one taken."""

    states: tuple[Any, ...]
    offered: tuple[tuple[Any, ...], ...]
    actions: tuple[Any, ...]

    def sampled(self) -> list[Any]:
        """Every :data:`EVERY`-th state, and the final one."""
        picked = list(self.states[::EVERY])
        if picked[-1] is not self.states[-1]:
            picked.append(self.states[-1])
        return picked


@functools.cache
def trace(case: Case, seed: int) -> Trace:
    """Game ``seed`` of ``case`` with uniform random choices, played here state by state
    (the loop of :func:`referee.games.play.play`, keeping what it throws away). Cached: the
    per-state tests walk the same games."""
    family = case.family
    state = family.new_game(case.ruleset, case.players, seed)
    rng = random.Random(f"conformance-trace/{case.id}/{seed}")
    states: list[Any] = [state]
    offered: list[tuple[Any, ...]] = []
    actions: list[Any] = []
    while not state.is_over:
        assert len(actions) < MAX_DECISIONS, f"game {seed} did not end"
        legal = tuple(family.legal_actions(state))
        action = legal[rng.randrange(len(legal))]
        state = family.apply(state, action)
        states.append(state)
        offered.append(legal)
        actions.append(action)
    return Trace(tuple(states), tuple(offered), tuple(actions))


# ---------------------------------------------------------------------------------------------
# 1. random games end, and their outcome ranks the seats by their totals


def assert_ranked(outcome: Any, players: int) -> None:
    """One seat score per seat; ranks are competition ranks 1..n (tied seats share one, the
    next is skipped: RULINGS 8) and a higher total never ranks worse."""
    seats = outcome.seats
    assert len(seats) == players, f"{len(seats)} seat scores for {players} seats"
    totals = [s.total for s in seats]
    ranks = [s.rank for s in seats]
    assert all(isinstance(t, int) for t in totals), totals
    assert min(ranks) == 1, f"nobody ranks first: {ranks}"
    assert all(1 <= r <= players for r in ranks), ranks
    for r in ranks:
        assert r == 1 + sum(1 for other in ranks if other < r), f"not competition ranks: {ranks}"
    for i in range(players):
        for j in range(players):
            if totals[i] > totals[j]:
                assert ranks[i] < ranks[j], f"totals {totals} ranked {ranks}"


@by_case
def test_random_games_end_with_one_ranked_score_per_seat(case: Case) -> None:
    """Uniform random play through ``play`` ends within :data:`MAX_DECISIONS` decisions in
    a state with no legal action, and the outcome ranks every seat consistently with its
    total (what the referee, the store and the league tables read)."""
    for seed in GAME_SEEDS:
        played = play_case(case, seed)
        assert played.final.is_over
        assert 0 < played.decisions <= MAX_DECISIONS
        assert not case.family.legal_actions(played.final), "a finished game offers actions"
        assert played.outcome == case.family.outcome(played.final)
        assert_ranked(played.outcome, case.players)


# ---------------------------------------------------------------------------------------------
# 2. determinism


@by_case
def test_the_same_seed_and_choices_give_the_same_game(case: Case) -> None:
    """A game is a pure function of its seed and its choices: a record (seed + actions) is
    the whole game, and a replay can be trusted."""
    for seed in GAME_SEEDS:
        first, second = play_case(case, seed), play_case(case, seed)
        assert first.final == second.final
        assert repr(first.final) == repr(second.final)
        assert first.outcome == second.outcome
        assert first.decisions == second.decisions
    # and applying the recorded actions again, from a fresh deal, reaches the same end
    game = trace(case, 0)
    state = case.family.new_game(case.ruleset, case.players, 0)
    for action in game.actions:
        state = case.family.apply(state, action)
    assert state == game.states[-1]


@by_case
def test_different_seeds_deal_different_games(case: Case) -> None:
    """The seed is used: what the seats see of the deal changes with it (the views, since a
    state's own ``seed`` field would differ trivially)."""
    family = case.family
    deals = {
        repr(
            [
                family.view(family.new_game(case.ruleset, case.players, seed), seat)
                for seat in range(case.players)
            ]
        )
        for seed in range(4)
    }
    assert len(deals) > 1, "four seeds deal the same game"


def fingerprint() -> str:
    """One line per variant and player count: a self-play game's decisions and a hash of its
    outcome and final views as sent on the wire, and of its whole final state, hidden facts
    (deck order, other hands) included."""
    lines = []
    for case in CASES:
        family = case.family
        game = referee.selfplay.play_random_game(case.ruleset, case.players, 12345)
        h = hashlib.sha256(family.outcome_to_pb(game.outcome).SerializeToString(deterministic=True))
        for seat in range(case.players):
            v = family.view_to_pb(family.view(game.final, seat))
            h.update(v.SerializeToString(deterministic=True))
        h.update(repr(game.final).encode())
        lines.append(f"{case.id} {game.decisions} {h.hexdigest()}")
    return "\n".join(lines)


def test_games_do_not_depend_on_string_hashing() -> None:
    """The same games in two interpreters with other hash seeds (set and dict order, str
    hashes) as here: a game's chance comes only from its seed."""
    here = fingerprint()
    code = "from tests.games.test_conformance import fingerprint; print(fingerprint())"
    for hash_seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={"PYTHONHASHSEED": hash_seed, "PATH": ""},
            cwd=ROOT,
            check=True,
            timeout=120,
        )
        assert done.stdout.strip() == here, f"PYTHONHASHSEED={hash_seed} plays other games"


# ---------------------------------------------------------------------------------------------
# 3. the legal actions are exactly what apply accepts, and apply leaves its input alone


@by_case
def test_legal_actions_are_exactly_what_apply_accepts(case: Case) -> None:
    """In sampled states: the legal actions are listed once each, the same on every call,
    none once the game is over and some while it runs; every one of them applies; every
    action legal somewhere else in the game but not listed here is refused with a
    ``RulesError``; and ``apply`` never changes the state it is given (its ``repr`` is the
    same after every action was tried)."""
    family = case.family
    game = trace(case, 0)
    elsewhere = list(dict.fromkeys(a for legal in game.offered for a in legal))
    refused = 0
    for state in game.sampled():
        before = repr(state)
        legal = tuple(family.legal_actions(state))
        assert legal == tuple(family.legal_actions(state)), "legal_actions is not repeatable"
        assert len(set(legal)) == len(legal), "an action listed twice"
        assert bool(legal) != state.is_over
        for action in legal:
            after = family.apply(state, action)
            assert after is not state
        listed = set(legal)
        for action in elsewhere:
            if action in listed:
                continue
            try:
                family.apply(state, action)
            except RulesError:
                refused += 1
            else:
                raise AssertionError(f"apply accepted unlisted {action!r} in {state.phase}")
        assert repr(state) == before, "apply changed the state it was given"
    assert refused, "no unlisted action was tried"


# ---------------------------------------------------------------------------------------------
# 4. a seat's view, and what it receives on the wire, ignore what it cannot know


#: A scrambler: ``state`` with every fact ``seat`` cannot know redrawn at random (same cards
#: and tickets in the game, every pile the same size); the seat's view must not move.
Scrambler = Callable[[Any, int, random.Random], Any]


def _card_list(counts: Sequence[int]) -> list[int]:
    return [kind for kind, n in enumerate(counts) for _ in range(n)]


def redraw(
    state: Any,
    rng: random.Random,
    cards: Sequence[tuple[str, int]],
    tickets: Sequence[tuple[str, int]],
    **chance: int,
) -> Any:
    """``state`` with the train deck and the per-seat card counts ``cards`` names (``(field,
    seat)``) pooled, shuffled and dealt back in the same sizes; the same for the ticket deck
    and the per-seat ticket lists ``tickets`` names; and the fields of ``chance`` replaced
    (what decides future shuffles). Both families keep a deck as a tuple of card kinds, top
    last, a hand as counts per kind and tickets as tuples of indices."""
    kinds = len(state.discards)
    per_seat: dict[str, list[Any]] = {}

    pool = list(state.deck)
    for field, seat in cards:
        pool += _card_list(getattr(state, field)[seat])
    rng.shuffle(pool)
    changes: dict[str, Any] = {"deck": tuple(pool[: len(state.deck)])}
    pool = pool[len(state.deck) :]
    for field, seat in cards:
        values = per_seat.setdefault(field, list(getattr(state, field)))
        n = sum(values[seat])
        values[seat] = tuple(pool[:n].count(kind) for kind in range(kinds))
        pool = pool[n:]
    assert not pool

    ticket_pool = list(state.ticket_deck)
    for field, seat in tickets:
        ticket_pool += getattr(state, field)[seat]
    rng.shuffle(ticket_pool)
    changes["ticket_deck"] = tuple(ticket_pool[: len(state.ticket_deck)])
    ticket_pool = ticket_pool[len(state.ticket_deck) :]
    for field, seat in tickets:
        values = per_seat.setdefault(field, list(getattr(state, field)))
        n = len(values[seat])
        values[seat] = tuple(ticket_pool[:n])
        ticket_pool = ticket_pool[n:]
    assert not ticket_pool

    changes.update({field: tuple(values) for field, values in per_seat.items()})
    changes.update(chance)
    return dataclasses.replace(state, **changes)


def scramble_board(state: Any, seat: int, rng: random.Random) -> Any:
    """The board games (tests/games/test_views.py ``hide_and_seek``): the deck and the other
    hands are one unseen pool of cards (the discards and the row are face up); the ticket
    deck and the other seats' kept and offered tickets one unseen pool of tickets (003:91);
    the seed decides future reshuffles."""
    others = [s for s in range(state.num_seats) if s != seat]
    return redraw(
        state,
        rng,
        cards=[("hands", s) for s in others],
        tickets=[(field, s) for s in others for field in ("tickets", "offered")],
        seed=rng.randrange(2**32),
    )


def scramble_card(state: Any, seat: int, rng: random.Random) -> Any:
    """The card game (tests/games/test_cardgame_engine.py ``hide_and_seek``): as the board
    games, and the On-the-Track stacks are unseen too: the other seats', and the seat's own
    unless owners may look at it (000:119-129); completed tickets were shown (000:185-191)."""
    others = [s for s in range(state.num_seats) if s != seat]
    stacks = others if state.ruleset.owners_see_stack else list(range(state.num_seats))
    return redraw(
        state,
        rng,
        cards=[("hands", s) for s in others] + [("stacks", s) for s in stacks],
        tickets=[(field, s) for s in others for field in ("tickets", "offered")],
        seed=rng.randrange(2**32),
        shuffles=rng.randrange(100),
    )


@dataclass(frozen=True)
class Secrets:
    """What a family's seats cannot know, as this suite redraws it."""

    scramble: Scrambler
    fields: tuple[str, ...]  #: the state's fields it redraws; it changes no other


_DEALT = ("deck", "hands", "ticket_deck", "tickets", "offered", "seed")

#: The one family-specific part of the view-leak property, by ``Family.name``: the record has
#: no hook that says which of a state's facts are secret. A family missing here fails
#: ``test_every_family_says_what_its_seats_cannot_know``; it is never skipped.
SECRETS: dict[str, Secrets] = {
    "board": Secrets(scramble_board, _DEALT),
    "card": Secrets(scramble_card, (*_DEALT, "stacks", "shuffles")),
}

#: What a seat is shown, by name, as it must not depend on hidden facts.
Observe = Callable[[AnyFamily, Any, int], dict[str, object]]


def observe(family: AnyFamily, state: Any, seat: int) -> dict[str, object]:
    """Everything ``seat`` receives in ``state``: its view, the view's bytes on the wire and,
    when it is to act, its legal actions and the whole act request's bytes."""
    v = family.view(state, seat)
    seen: dict[str, object] = {
        "view": v,
        "view bytes": family.view_to_pb(v).SerializeToString(deterministic=True),
    }
    if seat == state.seat and not state.is_over:
        legal = tuple(family.legal_actions(state))
        events = [family.project(e, seat) for e in state.events]
        request = family.act_request_pb(v, events, legal, "g", "g/0", CLOCK)
        seen["legal actions"] = legal
        seen["act request bytes"] = request.SerializeToString(deterministic=True)
    return seen


def assert_view_hides(
    family: AnyFamily,
    state: Any,
    seat: int,
    rng: random.Random,
    tries: int = 2,
    see: Observe = observe,
) -> None:
    """What ``seat`` is shown survives ``tries`` redraws of everything it cannot know."""
    scramble = SECRETS[family.name].scramble
    seen = see(family, state, seat)
    for _ in range(tries):
        again = see(family, scramble(state, seat, rng), seat)
        for name, value in seen.items():
            assert again[name] == value, f"seat {seat}'s {name} depends on a hidden fact"


def test_every_family_says_what_its_seats_cannot_know() -> None:
    """A third family must say what its seats cannot see before it can pass this suite."""
    missing = [f.name for f in FAMILIES if f.name not in SECRETS]
    assert not missing, f"nothing says what is secret in {missing}: add them to SECRETS"


@by_case
def test_views_and_what_a_seat_receives_ignore_hidden_facts(case: Case) -> None:
    """For sampled states and every seat: the view, its wire bytes and (for the seat to act)
    the legal actions and the act request's bytes are unchanged when every fact the seat
    cannot know is redrawn (other hands and tickets, deck order, undrawn tickets, in the card
    game the On-the-Track stacks)."""
    rng = random.Random(case.id)
    for state in trace(case, 0).sampled():
        for seat in range(case.players):
            assert_view_hides(case.family, state, seat, rng)


@by_family
def test_scramblers_redraw_every_secret_and_nothing_else(case: Case) -> None:
    """The check above is not vacuous: along a game, every field the family's scrambler
    claims to redraw does change for some seat, and no other field ever does."""
    secrets = SECRETS[case.family.name]
    rng = random.Random(0)
    moved: set[str] = set()
    for state in trace(case, 0).sampled():
        for seat in range(case.players):
            other = secrets.scramble(state, seat, rng)
            moved |= {
                f.name
                for f in dataclasses.fields(state)
                if getattr(other, f.name) != getattr(state, f.name)
            }
    assert moved == set(secrets.fields)


LEAKS = [
    pytest.param(case, field, id=f"{case.family.name}-{field}")
    for case in FAMILY_CASES
    if case.family.name in SECRETS
    for field in SECRETS[case.family.name].fields
]


@pytest.mark.parametrize(("case", "field"), LEAKS)
def test_the_view_check_catches_a_leak_of_each_secret(case: Case, field: str) -> None:
    """The check can fail: seat 0 shown one secret field of the state (the whole field, its
    own part included) is caught in some state of a game."""

    def leaky(family: AnyFamily, state: Any, seat: int) -> dict[str, object]:
        return {**observe(family, state, seat), "leak": getattr(state, field)}

    rng = random.Random(1)
    for state in trace(case, 0).sampled():
        try:
            assert_view_hides(case.family, state, 0, rng, see=leaky)
        except AssertionError as e:
            assert "seat 0's leak depends on a hidden fact" in str(e)
            return
    raise AssertionError(f"a view showing {field} went unnoticed")


# ---------------------------------------------------------------------------------------------
# 5. the wire: views, actions, events and outcomes come back equal through their bytes


@by_case
def test_views_actions_events_and_outcomes_round_trip_through_the_wire(case: Case) -> None:
    """What the referee encodes the SDK decodes to the engine's own values, through the
    bytes: every legal action offered (one by one and as a request's lazy list, whose
    ``position`` finds each), every event as every seat sees it, sampled views of every seat
    with the act requests built from them, and the outcome."""
    family = case.family
    game = trace(case, 0)
    sampled = {id(s) for s in game.sampled()}
    for state, legal in zip(game.states, (*game.offered, ()), strict=True):
        msgs = [family.action_to_pb(a) for a in legal]
        for action, msg in zip(legal, msgs, strict=True):
            back = family.action_from_pb(actions_pb2.Action.FromString(msg.SerializeToString()))
            assert back == action
        lazy = family.legal_from_pb(msgs)
        assert tuple(lazy) == legal
        assert [lazy.position(a) for a in legal] == list(range(len(legal)))
        for seat in range(case.players):
            events = [family.project(e, seat) for e in state.events]
            sent = [m.SerializeToString() for m in family.events_to_pb(events)]
            assert family.events_from_pb([events_pb2.Event.FromString(d) for d in sent]) == events
        if id(state) not in sampled:
            continue
        for seat in range(case.players):
            v = family.view(state, seat)
            data = family.view_to_pb(v).SerializeToString()
            assert family.view_from_pb(view_pb2.SeatView.FromString(data)) == v
        if legal:
            seat = state.seat
            v = family.view(state, seat)
            events = [family.project(e, seat) for e in state.events]
            request = family.act_request_pb(v, events, legal, "g", "g/1", CLOCK)
            got = bot_service_pb2.ActRequest.FromString(request.SerializeToString())
            assert family.view_from_pb(got.view) == v
            assert family.events_from_pb(got.events) == events
            assert tuple(family.legal_from_pb(got.legal_actions)) == legal
    result = family.outcome(game.states[-1])
    data = family.outcome_to_pb(result).SerializeToString()
    assert family.outcome_from_pb(scoring_pb2.Outcome.FromString(data)) == result


# ---------------------------------------------------------------------------------------------
# 6. records: a self-play game replays from its record to the same end


def write_record(case: Case, seed: int, actions: Sequence[Any], path: Path) -> Any:
    """The record of a game, as ``referee.match`` writes one (same keys, same JSON forms:
    ``to_json``, ``outcome_to_json``) but without bots or sockets; returns the final state
    reached while writing it."""
    family = case.family
    state = family.new_game(case.ruleset, case.players, seed)
    initial = [to_json(e) for e in state.events]
    entries = []
    for decision, action in enumerate(actions):
        after = family.apply(state, action)
        entries.append(
            {
                "decision": decision,
                "seat": state.seat,
                "turn": state.turn,
                "phase": state.phase.name.lower(),
                "action": to_json(action),
                "default": "",
                "ms": 0.0,
                "events": [to_json(e) for e in after.events],
            }
        )
        state = after
    record = {
        "format": RECORD_FORMAT,
        "game_id": f"conformance-{case.id}",
        "ruleset": case.ruleset.ident,
        "seed": seed,
        "num_seats": case.players,
        "clock": {"move_ms": 1000, "bank_ms": 10_000},
        "seats": [
            {"seat": i, "name": name, "version": "1", "address": ""}
            for i, name in enumerate(case.names)
        ],
        "started_at": 0.0,
        "finished_at": 0.0,
        "initial_events": initial,
        "actions": entries,
        "faults": [],
        "outcome": outcome_to_json(family.outcome(state)),
    }
    path.write_text(json.dumps(record), encoding="utf-8")
    return state


@by_case
def test_a_selfplay_game_replays_from_its_record(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``play_random_game`` (what ``ttr selfplay`` runs), its choices written as a record:
    ``verify`` finds no difference, and ``replay`` rebuilds the identical final state from
    the file alone (the ruleset by its ``name@version``, the actions from their JSON). A
    record whose final score was tampered with is caught."""
    chosen: list[Any] = []

    def recording_play(
        family: AnyFamily, ruleset: Any, policies: Sequence[Policy], seed: int, **kw: Any
    ) -> Played[Any, Any]:
        def recorded(policy: Policy) -> Policy:
            def choose(view: Any, legal: Sequence[Any]) -> Any:
                action = policy(view, legal)
                chosen.append(action)
                return action

            return choose

        return play(family, ruleset, [recorded(p) for p in policies], seed, **kw)

    monkeypatch.setattr(referee.selfplay, "play", recording_play)
    seed = 3
    result = referee.selfplay.play_random_game(case.ruleset, case.players, seed)
    assert len(chosen) == result.decisions
    path = tmp_path / "game.json"
    assert write_record(case, seed, chosen, path) == result.final

    assert verify(path) is None
    data = load_record(path)
    game = start(data, path)
    assert game.family is case.family
    final = game.start
    for step in replay(game, data, path):
        final = step.after
    assert final == result.final
    assert repr(final) == repr(result.final)
    assert game.family.outcome(final) == result.outcome

    data["outcome"]["seats"][0]["total"] += 1
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data), encoding="utf-8")
    difference = verify(tampered)
    assert difference is not None and difference.field == "outcome.seats[0].total"


@by_case
def test_every_action_and_event_survives_the_record_json(case: Case) -> None:
    """What a record needs of a family: ``action_types`` names the class of every action
    ``legal_actions`` offers, ``is_action`` knows it, and ``to_json`` / ``action_from_json``
    give it back through real JSON; every event is JSON too."""
    family = case.family
    game = trace(case, 0)
    assert all(cls.__name__ == name for name, cls in family.action_types.items())
    assert not family.is_action(object())
    for action in dict.fromkeys(a for legal in game.offered for a in legal):
        assert family.action_types.get(type(action).__name__) is type(action), action
        assert family.is_action(action)
        data = json.loads(json.dumps(to_json(action)))
        assert action_from_json(data, family) == action
    for state in game.states:
        for event in state.events:
            json.dumps(to_json(event))


# ---------------------------------------------------------------------------------------------
# 7. perft against an independent naive reading of the rules, where one exists

#: Naive legality oracles by ``Family.name``: the rulebook read the slow, obvious way,
#: without the engine's tables (tests/games/naive_rules.py, which knows each board variant by
#: name and fails on one it does not know). The card game has no such oracle: its perft
#: numbers (tests/games/test_cardgame_engine.py) are the engine's own, pinned, not an
#: independent count, so it is listed in WITHOUT_ORACLE rather than compared with itself.
ORACLES: dict[str, Callable[[Any], Iterable[Any]]] = {"board": naive_legal_actions}


def perft(family: AnyFamily, state: Any, depth: int, moves: Callable[[Any], Iterable[Any]]) -> int:
    """Leaves of the legal-action tree ``depth`` decisions below ``state`` (python-chess)."""
    if depth == 0:
        return 1
    actions = list(moves(state))
    if depth == 1:
        return len(actions)
    return sum(perft(family, family.apply(state, a), depth - 1, moves) for a in actions)


#: the families without an oracle, said out loud: a test fails if this list and ORACLES
#: stop covering FAMILIES between them, so a new family is a decision, not a silent skip
WITHOUT_ORACLE = frozenset({"card"})
ORACLE_CASES = [c for c in CASES if c.family.name in ORACLES]


def test_every_family_has_an_oracle_or_is_listed_without_one() -> None:
    names = {f.name for f in FAMILIES}
    assert names == set(ORACLES) | WITHOUT_ORACLE
    assert not set(ORACLES) & WITHOUT_ORACLE


@pytest.mark.parametrize("case", ORACLE_CASES, ids=[c.id for c in ORACLE_CASES])
def test_perft_to_depth_two_matches_the_naive_oracle(case: Case) -> None:
    """From the deal, a third and two thirds into a random game: the legal actions are the
    oracle's, and the leaf counts to depth 2 are the same."""
    oracle = ORACLES[case.family.name]
    family = case.family
    states = trace(case, 0).states
    for state in (states[0], states[len(states) // 3], states[2 * len(states) // 3]):
        assert set(family.legal_actions(state)) == set(oracle(state))
        engine = [perft(family, state, d, family.legal_actions) for d in (1, 2)]
        assert engine == [perft(family, state, d, oracle) for d in (1, 2)]


# ---------------------------------------------------------------------------------------------
# 8. the registry, the StartGame and the words


@by_variant
def test_the_registry_finds_each_variant_and_its_family(case: Case) -> None:
    """Every way in (by ruleset, variant name, ``name@version``, family name) leads to the
    same family, and the version a record pins loads."""
    family, variant, ruleset = case.family, case.variant, case.ruleset
    assert variant in variants()
    assert family_of(family.load(variant)) is family
    assert family_of_variant(variant) is family
    assert family_named(family.name) is family
    assert ruleset.ident == f"{variant}@{ruleset.version}"
    pinned = load(f"{variant}@{ruleset.version}")
    assert pinned.ident == ruleset.ident
    assert family_of(pinned) is family
    assert sum(variant in f.variants() for f in FAMILIES) == 1


@by_variant
def test_start_game_is_recognised_by_its_family_alone(case: Case) -> None:
    """A StartGame filled as the referee fills it (``fill_start_for_seat``) is claimed by
    this family's ``starts`` and no other's, and the SDK rebuilds an equal ruleset from it."""
    family, ruleset = case.family, case.ruleset
    request = bot_service_pb2.StartGameRequest(
        game_id="g", variant=ruleset.ident, seat=1, num_seats=case.players
    )
    family.fill_start_for_seat(request, ruleset, 12345)
    got = bot_service_pb2.StartGameRequest.FromString(request.SerializeToString())
    assert [f.name for f in FAMILIES if f.starts(got)] == [family.name]
    assert family.ruleset_from_start(got) == ruleset


@by_case
def test_scores_and_events_read_as_text(case: Case) -> None:
    """``ttr play`` and ``ttr replay`` need words for everything: every score column cell
    of a finished game is a string, the breakdown is JSON, the ticket counts are counts, and
    the describer names every event of a game (as it happened and as each seat saw it,
    never falling back to the raw form) and every seat's final view."""
    family, ruleset = case.family, case.ruleset
    game = trace(case, 0)
    final = game.states[-1]
    result = family.outcome(final)
    columns = family.columns(ruleset)
    headers = [header for header, _ in columns]
    assert all(isinstance(h, str) and h for h in headers) and len(set(headers)) == len(headers)
    for score in result.seats:
        for header, cell in columns:
            text = cell(score)
            assert isinstance(text, str) and text, f"column {header!r}: {text!r}"
        breakdown = family.breakdown(ruleset, score)
        assert all(isinstance(k, str) for k in breakdown)
        json.dumps(breakdown)
        done, failed = family.ticket_counts(score)
        assert isinstance(done, int) and isinstance(failed, int) and min(done, failed) >= 0
    describer = family.describer(ruleset, case.names)
    for state in game.states:
        for event in state.events:
            for shown in (event, *(family.project(event, s) for s in range(case.players))):
                text = describer.event(shown)
                assert isinstance(text, str) and text.strip(), shown
                assert text != f"{type(shown).__name__} {shown}", f"no words for {shown!r}"
    for seat in range(case.players):
        lines = describer.view_lines(family.view(final, seat))
        assert lines and all(isinstance(line, str) for line in lines)
