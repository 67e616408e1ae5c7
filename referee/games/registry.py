"""The rules families behind one interface: what the referee loop, records, replay, self-play,
the CLI and tournaments need of a game, whichever rules it follows.

Two families exist. The board games (``usa``, ``usa1910``, ``mega``, ``bigcities``,
``newyork``) are one engine with variants as data (``referee.games.board`` +
``referee.games.board.wire``); Ticket to Ride: The Card Game is the other (``referee.games.card`` +
``referee.games.card.wire``). A :class:`Family` bundles one engine's pure functions with its wire
converters and the record's action types, so the machinery around the rules is written once and
never asks which game it runs. A third family is a new engine, its data, its wire module and one
more :class:`Family` here.

States, actions, views and outcomes are typed ``Any`` at this seam: each family's own modules
type them exactly, and the code on this side only passes them between a family's functions
(or reads what both share: ``state.seat``, ``.turn``, ``.phase``, ``.is_over``, ``.events``,
``.end_reason``; ``ruleset.ident``, ``.min_players``, ``.max_players``; ``outcome.seats[i]``
``.total`` and ``.rank``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.games import board
from referee.games import card as cardgame
from referee.games.board import Ruleset, RulesetError, wire
from referee.games.board import actions as _board_actions
from referee.games.board.events import project as _board_project
from referee.games.card import CardRuleset
from referee.games.card import wire as wire_cardgame
from ttr.v1 import bot_service_pb2

#: a ruleset of either family
AnyRuleset = Ruleset | CardRuleset


def _fill_board_start(request: bot_service_pb2.StartGameRequest, ruleset: Any) -> None:
    """StartGame carries the board, tickets and rule numbers (memoized bytes, wire.py)."""
    game_map, rules = wire.static_bytes(ruleset)
    request.game_map.MergeFromString(game_map)
    request.rules.MergeFromString(rules)


def _fill_card_start(request: bot_service_pb2.StartGameRequest, ruleset: Any) -> None:
    """StartGame carries the tickets with their colour needs, the Big Cities and the rule
    numbers in its card-game setup; a board bot never sees such a game."""
    request.card_game.MergeFromString(wire_cardgame.static_bytes(ruleset))


#: Short column headers of the board games' bonus cards (``ruleset.BONUS_KINDS``).
_BONUS_COLUMNS = {"longest_path": "+longest", "globetrotter": "+globe"}

#: A score-table column: its header and the cell of one seat's score.
Column = tuple[str, Callable[[Any], str]]


def _bonus_cell(kind: str) -> Callable[[Any], str]:
    return lambda s: str(s.bonus_points(kind))


def _board_columns(ruleset: Any) -> list[Column]:
    """Every scoring component the board ruleset uses: they add up to the total."""
    columns: list[Column] = [
        ("routes", lambda s: str(s.route_points)),
        ("tickets", lambda s: str(s.ticket_points)),
        (
            "done/all",
            lambda s: (
                f"{len(s.tickets_completed)}/{len(s.tickets_completed) + len(s.tickets_failed)}"
            ),
        ),
    ]
    for bonus in ruleset.bonuses:
        columns.append((_BONUS_COLUMNS[bonus.kind], _bonus_cell(bonus.kind)))
    if ruleset.attraction_points:
        columns.append(("+attract", lambda s: str(s.attraction_points)))
    columns.append(("path", lambda s: str(s.longest_path)))
    return columns


def _board_breakdown(ruleset: Any, score: Any) -> dict[str, object]:
    return {
        "route_points": score.route_points,
        "ticket_points": score.ticket_points,
        "tickets_completed": len(score.tickets_completed),
        "tickets_failed": len(score.tickets_failed),
        "longest_path": score.longest_path,
        "bonuses": {b.kind: score.bonus_points(b.kind) for b in ruleset.bonuses},
        "attractions": [ruleset.game_map.cities[c].name for c in score.attractions],
        "attraction_points": score.attraction_points,
    }


def _card_columns(ruleset: Any) -> list[Column]:
    """Completed tickets plus, tickets left in hand minus, Big Cities bonuses: they add up
    to the total."""
    return [
        ("tickets+", lambda s: str(s.completed_points)),
        ("tickets-", lambda s: str(-s.failed_points)),
        ("done/all", lambda s: f"{len(s.completed)}/{len(s.completed) + len(s.failed)}"),
        ("+cities", lambda s: str(s.bonus_points)),
    ]


def _card_breakdown(ruleset: Any, score: Any) -> dict[str, object]:
    return {
        "ticket_points": score.completed_points - score.failed_points,
        "completed_points": score.completed_points,
        "failed_points": score.failed_points,
        "tickets_completed": len(score.completed),
        "tickets_failed": len(score.failed),
        "bonus_points": score.bonus_points,
        "big_cities": [ruleset.big_cities[b].name for b in score.bonuses],
    }


@dataclass(frozen=True, slots=True)
class Family:
    """One rules family: its engine's pure functions and its wire converters."""

    name: str  #: "board" or "card"
    variants: Callable[[], tuple[str, ...]]
    load: Callable[[str], Any]  #: a variant name to its ruleset (``RulesetError`` if unknown)
    new_game: Callable[[Any, int, int], Any]  #: (ruleset, seats, seed) -> state
    legal_actions: Callable[[Any], Sequence[Any]]
    apply: Callable[[Any, Any], Any]
    view: Callable[[Any, int], Any]
    outcome: Callable[[Any], Any]
    project: Callable[[Any, int], Any]  #: (event, seat) -> what that seat may see of it
    #: the action classes a record may name, by class name
    action_types: Mapping[str, type[Any]]
    fill_start: Callable[[bot_service_pb2.StartGameRequest, Any], None]
    view_to_pb: Callable[[Any], Any]
    events_to_pb: Callable[[Sequence[Any]], Any]
    outcome_to_pb: Callable[[Any], Any]
    action_from_pb: Callable[[Any], Any]  #: raises ``MalformedActionError`` naming the rule
    #: (view, events, legal, game_id, request_id, clock, rejection) -> ActRequest
    act_request_pb: Callable[..., bot_service_pb2.ActRequest]
    #: score-table columns between "total" and the end, for a ruleset (``ttr play``)
    columns: Callable[[Any], list[Column]]
    #: one seat's score components for ``--json`` output, for (ruleset, seat score)
    breakdown: Callable[[Any, Any], dict[str, object]]
    #: (completed, failed) ticket counts of one seat's score: the store keeps both
    ticket_counts: Callable[[Any], tuple[int, int]]

    def fill_start_for_seat(
        self, request: bot_service_pb2.StartGameRequest, ruleset: Any, seed: int
    ) -> None:
        """What StartGame carries beyond its id, seat, seats and clock: the ruleset's static
        facts and the seat's ``bot_seed``, derived one way from the game seed (never the seed
        itself: it orders the decks, wire.bot_seed)."""
        self.fill_start(request, ruleset)
        request.bot_seed = wire.bot_seed(seed, request.seat)


def _types(*classes: type[Any]) -> dict[str, type[Any]]:
    return {c.__name__: c for c in classes}


BOARD = Family(
    name="board",
    variants=board.available_variants,
    load=board.load_ruleset,
    new_game=board.new_game,
    legal_actions=board.legal_actions,
    apply=board.apply,
    view=board.view,
    outcome=board.outcome,
    project=_board_project,
    action_types=_types(
        _board_actions.DrawFaceUp,
        _board_actions.DrawBlind,
        _board_actions.ClaimRoute,
        _board_actions.DrawTickets,
        _board_actions.KeepTickets,
        _board_actions.Pass,
    ),
    fill_start=_fill_board_start,
    view_to_pb=wire.view_to_pb,
    events_to_pb=wire.events_to_pb,
    outcome_to_pb=wire.outcome_to_pb,
    action_from_pb=wire.action_from_pb,
    act_request_pb=wire.act_request_pb,
    columns=_board_columns,
    breakdown=_board_breakdown,
    ticket_counts=lambda s: (len(s.tickets_completed), len(s.tickets_failed)),
)

CARD = Family(
    name="card",
    variants=lambda: ("cardgame",),
    load=cardgame.load_card_ruleset,
    new_game=cardgame.new_game,
    legal_actions=cardgame.legal_actions,
    apply=cardgame.apply,
    view=cardgame.view,
    outcome=cardgame.outcome,
    project=cardgame.project,
    action_types=_types(
        cardgame.DrawFaceUp,
        cardgame.DrawBlind,
        cardgame.PlaceSuit,
        cardgame.PlaceMix,
        cardgame.DrawTickets,
        cardgame.KeepTickets,
        cardgame.Pass,
    ),
    fill_start=_fill_card_start,
    view_to_pb=wire_cardgame.view_to_pb,
    events_to_pb=wire_cardgame.events_to_pb,
    outcome_to_pb=wire_cardgame.outcome_to_pb,
    action_from_pb=wire_cardgame.action_from_pb,
    act_request_pb=wire_cardgame.act_request_pb,
    columns=_card_columns,
    breakdown=_card_breakdown,
    ticket_counts=lambda s: (len(s.completed), len(s.failed)),
)

FAMILIES: tuple[Family, ...] = (BOARD, CARD)


def variants() -> tuple[str, ...]:
    """Every variant a game can be played in, board games first."""
    return tuple(v for f in FAMILIES for v in f.variants())


def variant_name(variant: str) -> str:
    """``usa`` for ``usa@1`` (and for ``usa``): the part of a variant spec that names the
    rules, without the version."""
    return variant.partition("@")[0]


def matches_variant(spec: str, ident: str) -> bool:
    """Whether a user's ``--variant`` (a bare name, matching every version, or a full
    ``name@version``) selects the ruleset ``ident`` (``usa@1``)."""
    return spec == ident or spec == variant_name(ident)


def family_of_variant(variant: str) -> Family:
    """The family that plays ``variant`` (a name, or ``name@version``); ``RulesetError``
    listing the variants if none does."""
    name = variant_name(variant)
    for family in FAMILIES:
        if name in family.variants():
            return family
    raise RulesetError(f"unknown variant {name!r} (available: {', '.join(variants())})")


def load(variant: str) -> AnyRuleset:
    """The ruleset of ``variant`` from either family; ``RulesetError`` naming the problem."""
    ruleset: AnyRuleset = family_of_variant(variant).load(variant_name(variant))
    return ruleset


def family_of(ruleset: AnyRuleset) -> Family:
    """The family whose engine plays ``ruleset``."""
    return CARD if isinstance(ruleset, CardRuleset) else BOARD
