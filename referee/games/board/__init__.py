"""The pure rules engine: no I/O, no clock, no global random state, no grpc.

The whole public API::

    ruleset = load_ruleset("usa")
    state = new_game(ruleset, num_seats=4, seed=1)
    while not state.is_over:
        action = choose(view(state, state.seat), legal_actions(state))
        state = apply(state, action)          # raises IllegalActionError naming the rule
    print(outcome(state))
"""

from referee.games.board.actions import (
    Action,
    ClaimRoute,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Pass,
    keep,
)
from referee.games.board.engine import apply, legal_actions, new_game
from referee.games.board.ruleset import (
    GameMap,
    Route,
    Ruleset,
    Ticket,
    available_variants,
    load_ruleset,
    load_ruleset_file,
)
from referee.games.board.scoring import Outcome, SeatScore, outcome
from referee.games.board.state import GameState, Phase
from referee.games.board.view import PlayerPublic, SeatView, view, view_json
from referee.games.common.errors import IllegalActionError, MalformedActionError, RulesError
from referee.games.common.tables import RulesetError

__all__ = [
    "Action",
    "ClaimRoute",
    "DrawBlind",
    "DrawFaceUp",
    "DrawTickets",
    "GameMap",
    "GameState",
    "IllegalActionError",
    "KeepTickets",
    "MalformedActionError",
    "Outcome",
    "Pass",
    "Phase",
    "PlayerPublic",
    "Route",
    "RulesError",
    "Ruleset",
    "RulesetError",
    "SeatScore",
    "SeatView",
    "Ticket",
    "apply",
    "available_variants",
    "keep",
    "legal_actions",
    "load_ruleset",
    "load_ruleset_file",
    "new_game",
    "outcome",
    "view",
    "view_json",
]
