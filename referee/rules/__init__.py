"""The pure rules engine: no I/O, no clock, no global random state, no grpc.

The whole public API::

    ruleset = load_ruleset("usa")
    state = new_game(ruleset, num_seats=4, seed=1)
    while not state.is_over:
        action = choose(view(state, state.seat), legal_actions(state))
        state = apply(state, action)          # raises IllegalActionError naming the rule
    print(outcome(state))
"""

from referee.rules.actions import (
    Action,
    ClaimRoute,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Pass,
    keep,
)
from referee.rules.engine import apply, legal_actions, new_game
from referee.rules.errors import IllegalActionError, MalformedActionError, RulesError
from referee.rules.ruleset import (
    GameMap,
    Route,
    Ruleset,
    RulesetError,
    Ticket,
    available_variants,
    load_ruleset,
    load_ruleset_file,
)
from referee.rules.scoring import Outcome, SeatScore, outcome
from referee.rules.state import GameState, Phase
from referee.rules.view import PlayerPublic, SeatView, view, view_json

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
