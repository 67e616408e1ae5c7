"""The pure rules engine of Ticket to Ride: The Card Game, the second rules family.

No I/O, no clock, no global random state, no grpc, like the board games' engine
(``referee.games.board``), whose function names and shapes it mirrors::

    ruleset = load_card_ruleset()                    # "cardgame@1"
    state = new_game(ruleset, num_seats=4, seed=1)
    while not state.is_over:
        action = choose(view(state, state.seat), legal_actions(state))
        state = apply(state, action)                 # raises IllegalActionError naming the rule
    print(outcome(state))

Events: ``state.events`` (what the last transition did), ``project(event, seat)`` (what a seat
may see of one). What it shares with the board games (cards, the draw and ticket actions,
their events, phases, table parsing) comes from ``referee.games.common``; the registry knows it
by its ``family.py``.
"""

from referee.games.card.actions import (
    CardAction,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Pass,
    PlaceMix,
    PlaceSuit,
    keep,
    mix,
)
from referee.games.card.engine import IDLE_ROUNDS, apply, legal_actions, new_game
from referee.games.card.events import CardEvent, project
from referee.games.card.ruleset import (
    BigCity,
    CardRuleset,
    CardTicket,
    load_card_ruleset,
    load_card_ruleset_file,
)
from referee.games.card.scoring import CardOutcome, CardSeatScore, best_completion, outcome
from referee.games.card.state import CardGameState, Phase
from referee.games.card.view import CardPlayerPublic, CardSeatView, view, view_json
from referee.games.common.errors import IllegalActionError, MalformedActionError, RulesError

__all__ = [
    "IDLE_ROUNDS",
    "BigCity",
    "CardAction",
    "CardEvent",
    "CardGameState",
    "CardOutcome",
    "CardPlayerPublic",
    "CardRuleset",
    "CardSeatScore",
    "CardSeatView",
    "CardTicket",
    "DrawBlind",
    "DrawFaceUp",
    "DrawTickets",
    "IllegalActionError",
    "KeepTickets",
    "MalformedActionError",
    "Pass",
    "Phase",
    "PlaceMix",
    "PlaceSuit",
    "RulesError",
    "apply",
    "best_completion",
    "keep",
    "legal_actions",
    "load_card_ruleset",
    "load_card_ruleset_file",
    "mix",
    "new_game",
    "outcome",
    "project",
    "view",
    "view_json",
]
