"""Ticket to Ride: The Card Game as one :class:`~referee.games.common.family.Family`: the
engine, both halves of the wire codec, the score columns and the describer, bound and typed.
The one place the registry learns what the card game is."""

from __future__ import annotations

from referee.games.card import actions as card_actions
from referee.games.card import engine, events, scoring, wire
from referee.games.card.actions import CardAction
from referee.games.card.describe import CardDescriber
from referee.games.card.events import CardEvent
from referee.games.card.ruleset import CardRuleset, available_card_variants, load_card_ruleset
from referee.games.card.scoring import CardOutcome, CardSeatScore
from referee.games.card.state import CardGameState
from referee.games.card.view import CardSeatView, view
from referee.games.common.family import Column, Family
from ttr.v1 import bot_service_pb2


def _fill_start(request: bot_service_pb2.StartGameRequest, ruleset: CardRuleset) -> None:
    """StartGame carries the tickets with their colour needs, the Big Cities and the rule
    numbers in its card-game setup; a board bot never sees such a game."""
    request.card_game.MergeFromString(wire.static_bytes(ruleset))


def _columns(ruleset: CardRuleset) -> list[Column]:
    """Completed tickets plus, tickets left in hand minus, Big Cities bonuses: they add up
    to the total."""
    return [
        ("tickets+", lambda s: str(s.completed_points)),
        ("tickets-", lambda s: str(-s.failed_points)),
        ("done/all", lambda s: f"{len(s.completed)}/{len(s.completed) + len(s.failed)}"),
        ("+cities", lambda s: str(s.bonus_points)),
    ]


def _breakdown(ruleset: CardRuleset, score: CardSeatScore) -> dict[str, object]:
    return {
        "ticket_points": score.completed_points - score.failed_points,
        "completed_points": score.completed_points,
        "failed_points": score.failed_points,
        "tickets_completed": len(score.completed),
        "tickets_failed": len(score.failed),
        "bonus_points": score.bonus_points,
        "big_cities": [ruleset.big_cities[b].name for b in score.bonuses],
    }


def _ticket_counts(score: CardSeatScore) -> tuple[int, int]:
    return len(score.completed), len(score.failed)


def _is_action(value: object) -> bool:
    return isinstance(value, CardAction)


CARD: Family[CardRuleset, CardGameState, CardAction, CardSeatView, CardOutcome, CardEvent] = Family(
    name="card",
    ruleset_type=CardRuleset,
    variants=available_card_variants,
    load=load_card_ruleset,
    new_game=engine.new_game,
    legal_actions=engine.legal_actions,
    apply=engine.apply,
    view=view,
    outcome=scoring.outcome,
    project=events.project,
    action_types={
        c.__name__: c
        for c in (
            card_actions.DrawFaceUp,
            card_actions.DrawBlind,
            card_actions.PlaceSuit,
            card_actions.PlaceMix,
            card_actions.DrawTickets,
            card_actions.KeepTickets,
            card_actions.Pass,
        )
    },
    fill_start=_fill_start,
    view_to_pb=wire.view_to_pb,
    events_to_pb=wire.events_to_pb,
    outcome_to_pb=wire.outcome_to_pb,
    action_from_pb=wire.action_from_pb,
    act_request_pb=wire.act_request_pb,
    starts=wire.starts,
    ruleset_from_start=wire.ruleset_from_start,
    view_from_pb=wire.view_from_pb,
    legal_from_pb=wire.LegalActions,
    events_from_pb=wire.events_from_pb,
    outcome_from_pb=wire.outcome_from_pb,
    action_to_pb=wire.action_to_pb,
    is_action=_is_action,
    columns=_columns,
    breakdown=_breakdown,
    ticket_counts=_ticket_counts,
    describer=CardDescriber,
)
