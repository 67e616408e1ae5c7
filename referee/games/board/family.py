"""The board games as one :class:`~referee.games.common.family.Family`: the engine, both
halves of the wire codec, the score columns and the describer, bound and typed. The one
place the registry learns what a board game is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referee.games.board import actions, engine, events, ruleset, scoring, wire
from referee.games.board.actions import Action
from referee.games.board.describe import BoardDescriber
from referee.games.board.events import Event
from referee.games.board.ruleset import Ruleset
from referee.games.board.scoring import Outcome, SeatScore
from referee.games.board.state import GameState
from referee.games.board.view import SeatView, view
from referee.games.common.family import Column, Family
from ttr.v1 import bot_service_pb2


def _fill_start(request: bot_service_pb2.StartGameRequest, ruleset: Ruleset) -> None:
    """StartGame carries the board, tickets and rule numbers (memoized bytes, wire.py)."""
    game_map, rules = wire.static_bytes(ruleset)
    request.game_map.MergeFromString(game_map)
    request.rules.MergeFromString(rules)


#: Short column headers of the board games' bonus cards (``ruleset.BONUS_KINDS``).
_BONUS_COLUMNS = {"longest_path": "+longest", "globetrotter": "+globe"}


def _bonus_cell(kind: str) -> Callable[[Any], str]:
    return lambda s: str(s.bonus_points(kind))


def _columns(ruleset: Ruleset) -> list[Column]:
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
    if ruleset.longest_path_bonus:  # the path's length scores only through its bonus card
        columns.append(("path", lambda s: str(s.longest_path)))
    return columns


def _breakdown(ruleset: Ruleset, score: SeatScore) -> dict[str, object]:
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


def _ticket_counts(score: SeatScore) -> tuple[int, int]:
    return len(score.tickets_completed), len(score.tickets_failed)


def _is_action(value: object) -> bool:
    return isinstance(value, Action)


BOARD: Family[Ruleset, GameState, Action, SeatView, Outcome, Event] = Family(
    name="board",
    ruleset_type=Ruleset,
    variants=ruleset.available_variants,
    load=ruleset.load_ruleset,
    new_game=engine.new_game,
    legal_actions=engine.legal_actions,
    apply=engine.apply,
    view=view,
    outcome=scoring.outcome,
    project=events.project,
    action_types={
        c.__name__: c
        for c in (
            actions.DrawFaceUp,
            actions.DrawBlind,
            actions.ClaimRoute,
            actions.DrawTickets,
            actions.KeepTickets,
            actions.Pass,
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
    describer=BoardDescriber,
)
