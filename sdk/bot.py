"""The Python bot SDK: subclass :class:`Bot`, implement ``choose``, call :func:`sdk.run`.

::

    from sdk import Bot, run

    class FirstBot(Bot):
        def choose(self, view, legal):
            return 0  # an index into `legal`, or one of its actions

    if __name__ == "__main__":
        run(FirstBot())

The SDK decodes every request with :mod:`referee.games.board.wire`, so ``view`` is the engine's own
:class:`~referee.games.board.SeatView` and ``legal`` the engine's own actions. One bot process
serves game after game, possibly several at once: what belongs to one game lives in its
:class:`Game` (``self.game`` inside ``choose`` and the hooks), keyed by the request's ``game_id``.

The same bot class serves Ticket to Ride: The Card Game too: for a card game (``game.family``
``"card"``) the requests are decoded with :mod:`referee.games.card.wire`, so ``view`` is a
:class:`~referee.games.card.CardSeatView`, ``legal`` the card engine's actions
(:data:`~referee.games.card.CardAction`), ``game.ruleset`` a
:class:`~referee.games.card.CardRuleset` and the outcome a :class:`~referee.games.card.CardOutcome`.
"""

from __future__ import annotations

import contextvars
import sys
import threading
import traceback
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc

from referee.games.board import Action, Outcome, Ruleset, wire
from referee.games.board.actions import ClaimRoute
from referee.games.board.events import Event
from referee.games.board.ruleset import City, GameMap, Route, RulesetError, Ticket, load_ruleset
from referee.games.card import CardOutcome, CardRuleset, load_card_ruleset
from referee.games.card import wire as wire_cardgame
from referee.games.card.actions import CardAction, PlaceMix, PlaceSuit
from referee.games.card.events import CardEvent
from referee.games.common.cards import COLOURS, GRAY
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc, cards_pb2, game_map_pb2

__all__ = [
    "BOARD",
    "CARD",
    "Bot",
    "BotServicer",
    "Game",
    "card_ruleset_from_start",
    "is_card_game_start",
    "ruleset_from_start",
]

#: ``Game.family`` of a board game (usa, usa1910, mega, bigcities, newyork)
BOARD = "board"
#: ``Game.family`` of Ticket to Ride: The Card Game
CARD = "card"

#: The variant name of the card game (``cardgame@1``).
_CARD_VARIANT = "cardgame"


@dataclass(slots=True)
class Game:
    """One game this bot plays, from StartGame to EndGame."""

    game_id: str
    variant: str  #: ``name@version``
    seat: int
    num_seats: int
    #: the map, tickets and rule numbers as the engine has them: a
    #: :class:`~referee.games.board.Ruleset` in a board game, a
    #: :class:`~referee.games.card.CardRuleset` in the card game (typed views of it:
    #: :attr:`board_ruleset`, :attr:`card_ruleset`)
    ruleset: Any
    move_limit_ms: int
    bank_ms: int
    #: which rules family: ``"board"`` (:data:`BOARD`) or ``"card"`` (:data:`CARD`)
    family: str = BOARD
    #: the seed for this bot's own randomness in this game (``StartGameRequest.bot_seed``):
    #: the same game seed gives the same bot seed, so a bot that draws only from it replays
    #: its game exactly; it differs per seat and tells nothing of the deal. From a referee
    #: too old to send one, a value derived from the game id.
    bot_seed: int = 0
    #: every public event so far, oldest first, as this seat sees them
    events: list[Event | CardEvent] = field(default_factory=list)
    #: the events that arrived with the current request only
    new_events: list[Event | CardEvent] = field(default_factory=list)
    #: the current decision's clock (ms for this move, ms left in the bank)
    clock: tuple[int, int] = (0, 0)
    #: why the previous answer to this decision was rejected: (rule, message), or None
    rejection: tuple[str, str] | None = None
    decisions: int = 0
    #: the final scores, once EndGame arrived (a CardOutcome in the card game)
    outcome: Outcome | CardOutcome | None = None
    #: free for the bot's own per-game memory (e.g. a strategy object)
    state: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def is_card_game(self) -> bool:
        """True for Ticket to Ride: The Card Game, False for a board game."""
        return self.family == CARD

    @property
    def board_ruleset(self) -> Ruleset:
        """:attr:`ruleset`, typed, for a board game (``TypeError`` in the card game)."""
        if not isinstance(self.ruleset, Ruleset):
            raise TypeError(f"{self.variant} is not a board game")
        return self.ruleset

    @property
    def card_ruleset(self) -> CardRuleset:
        """:attr:`ruleset`, typed, for the card game (``TypeError`` in a board game)."""
        if not isinstance(self.ruleset, CardRuleset):
            raise TypeError(f"{self.variant} is not the card game")
        return self.ruleset


class Bot:
    """Base class of a Python bot. Implement :meth:`choose`; the hooks are optional."""

    def choose(self, view: Any, legal: Sequence[Any]) -> Action | CardAction | int:
        """The action for this decision: one of ``legal`` or its index (0-based).

        In a board game ``view`` is a :class:`~referee.games.board.SeatView` and ``legal`` holds
        :data:`~referee.games.board.Action` values; in the card game (``self.game.is_card_game``)
        ``view`` is a :class:`~referee.games.card.CardSeatView` and ``legal`` holds
        :data:`~referee.games.card.CardAction` values. (Typed loosely here so that a subclass
        may annotate the family it plays.)"""
        raise NotImplementedError

    def on_start(self, game: Game) -> None:
        """A game starts (``game.ruleset`` holds its map and tickets, ``game.family`` says
        which rules family it is)."""

    def on_end(self, outcome: Any) -> None:
        """The game in ``self.game`` is over: final scores, every ticket revealed (an
        :class:`~referee.games.board.Outcome`, or a :class:`~referee.games.card.CardOutcome` in the
        card game)."""

    @property
    def game(self) -> Game:
        """The game of the request being answered (inside ``choose`` and the hooks)."""
        game = _current_game.get()
        if game is None:
            raise RuntimeError("Bot.game is only set while a request is being answered")
        return game


class Strategy(Protocol):
    """What :class:`StrategyBot` plays: ``sdk.strategies`` (board games) and
    ``sdk.card_strategies`` (the card game) both have this shape."""

    def new_game(self, ruleset: Any, seat: int, seed: int) -> None: ...

    def choose(self, view: Any, legal: Sequence[Any], ruleset: Any) -> Any: ...


class StrategyBot(Bot):
    """A bot that plays one fresh strategy object per game (games may run at once), made by
    ``board()`` or ``card()`` as the game's family asks and seeded with :attr:`Game.bot_seed`,
    so a game's play depends neither on what else the process served nor on chance: the same
    game seed replays the same game. Without ``card`` it refuses card games at StartGame (the
    referee records why)."""

    def __init__(
        self,
        board: Callable[[], Strategy],
        card: Callable[[], Strategy] | None = None,
    ) -> None:
        self.board = board
        self.card = card

    def on_start(self, game: Game) -> None:
        if game.is_card_game and self.card is None:
            raise ValueError(f"this bot plays board games only, not {game.variant}")
        make = self.card if game.is_card_game and self.card is not None else self.board
        strategy = make()
        strategy.new_game(game.ruleset, game.seat, game.bot_seed)
        game.state = strategy

    def choose(self, view: Any, legal: Sequence[Any]) -> Any:
        strategy: Strategy = self.game.state
        return strategy.choose(view, legal, self.game.ruleset)


_current_game: contextvars.ContextVar[Game | None] = contextvars.ContextVar(
    "ttr_current_game", default=None
)


# ---------------------------------------------------------------------------------------------
# the ruleset, from StartGame


_PB_TO_ROUTE_COLOUR: dict[int, int] = {
    cards_pb2.ROUTE_COLOUR_GRAY: GRAY,
    **{cards_pb2.RouteColour.Value(f"ROUTE_COLOUR_{n.upper()}"): c for c, n in enumerate(COLOURS)},
}


def ruleset_from_start(request: bot_service_pb2.StartGameRequest) -> Ruleset:
    """The engine's :class:`Ruleset` for a StartGame: the packaged variant when its name and
    version match and its map is the one sent, else one rebuilt from the message itself."""
    name, _, version = request.variant.partition("@")
    try:
        packaged = load_ruleset(name)
    except RulesetError:
        packaged = None
    if packaged is not None and packaged.version == version:
        game_map, rules = wire.static_bytes(packaged)
        if (
            request.game_map.SerializeToString() == game_map
            and request.rules.SerializeToString() == rules
        ) or (
            # the same messages, serialized differently (another protobuf implementation)
            game_map_pb2.GameMap.FromString(game_map) == request.game_map
            and game_map_pb2.RuleParameters.FromString(rules) == request.rules
        ):
            return packaged
    return _ruleset_from_pb(name, version, request.game_map, request.rules)


def is_card_game_start(request: bot_service_pb2.StartGameRequest) -> bool:
    """Whether a StartGame is for Ticket to Ride: The Card Game: it carries the card-game
    setup, or its variant is ``cardgame@...``."""
    return request.HasField("card_game") or request.variant.partition("@")[0] == _CARD_VARIANT


def card_ruleset_from_start(request: bot_service_pb2.StartGameRequest) -> CardRuleset:
    """The card engine's :class:`CardRuleset` for a card-game StartGame: the packaged one when
    its name and version match and the setup sent is its own, else one rebuilt from the setup
    itself. Without a setup, the packaged ruleset of the variant's name and version."""
    name, _, version = request.variant.partition("@")
    try:
        packaged: CardRuleset | None = load_card_ruleset(name)
    except RulesetError:
        packaged = None
    if packaged is not None and packaged.version != version:
        packaged = None
    if not request.HasField("card_game"):
        if packaged is None:
            raise wire.WireError(
                f"StartGame for {request.variant!r} has no card_game setup and this SDK has "
                "no packaged ruleset of that name and version"
            )
        return packaged
    if packaged is not None:
        setup = wire_cardgame.static_bytes(packaged)
        if request.card_game.SerializeToString() == setup or (
            # the same message, serialized differently (another protobuf implementation)
            game_map_pb2.CardGameSetup.FromString(setup) == request.card_game
        ):
            return packaged
    return wire_cardgame.ruleset_from_setup(request.card_game)


def _ruleset_from_pb(
    name: str, version: str, m: game_map_pb2.GameMap, r: game_map_pb2.RuleParameters
) -> Ruleset:
    cities = tuple(
        City(
            i,
            c.name,
            c.x if c.HasField("x") else None,
            c.y if c.HasField("y") else None,
            c.tourist_attraction,
        )
        for i, c in enumerate(m.cities)
    )
    routes = []
    for i, pr in enumerate(m.routes):
        if pr.index != i:
            raise wire.WireError(f"GameMap.routes[{i}] has index {pr.index}")
        colour = _PB_TO_ROUTE_COLOUR.get(pr.colour)
        if colour is None:
            raise wire.WireError(f"GameMap.routes[{i}]: RouteColour {pr.colour} unknown")
        sibling = pr.double_sibling if pr.HasField("double_sibling") else None
        group = None if sibling is None else min(i, sibling)
        routes.append(
            Route(i, pr.route_id, pr.city_a, pr.city_b, pr.length, colour, group, sibling)
        )
    game_map = GameMap(m.name, m.version, cities, tuple(routes), {c.name: c.index for c in cities})
    tickets = tuple(
        Ticket(i, t.ticket_id, t.city_a, t.city_b, t.points) for i, t in enumerate(m.tickets)
    )
    return Ruleset(
        name=name,
        version=version,
        title=m.name,
        description="",
        game_map=game_map,
        tickets=tickets,
        min_players=r.min_seats,
        max_players=r.max_seats,
        deck=wire.deck_from_pb(r),
        trains=r.trains,
        hand_size=r.hand_size,
        face_up=r.face_up_slots,
        setup_tickets_dealt=r.setup_tickets_dealt,
        setup_tickets_keep_min=r.setup_tickets_keep_min,
        cards_drawn=r.cards_drawn,
        tickets_drawn=r.tickets_drawn,
        tickets_keep_min=r.tickets_keep_min,
        flush_locomotives=r.flush_locomotives,
        trains_trigger=r.trains_trigger,
        route_points=tuple(r.route_points),
        bonuses=wire.bonuses_from_pb(r),
        attraction_points=r.attraction_points,
        tie_breaks=tuple(r.tie_breaks),
        both_tracks_min_players=r.both_tracks_min_seats,
    )


# ---------------------------------------------------------------------------------------------
# the service


class BotServicer(bot_service_pb2_grpc.BotServiceServicer):
    """Serves one :class:`Bot` over ``ttr.v1.BotService``, many games at once."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        #: by game id and seat: one process may play several seats of one game (a bot
        #: entered twice by address), each with its own Game
        self._games: dict[tuple[str, int], Game] = {}
        self._lock = threading.Lock()

    def _game(self, game_id: str, seat: int, context: grpc.ServicerContext) -> Game:
        with self._lock:
            game = self._games.get((game_id, seat))
        if game is None:
            context.abort(
                grpc.StatusCode.FAILED_PRECONDITION, f"unknown game {game_id!r} (seat {seat})"
            )
        return game

    def _fail(self, context: grpc.ServicerContext, what: str, exc: BaseException) -> None:
        traceback.print_exception(exc, file=sys.stderr)
        context.abort(grpc.StatusCode.INTERNAL, f"{what}: {type(exc).__name__}: {exc}")

    def StartGame(
        self, request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.StartGameResponse:
        card = is_card_game_start(request)
        try:
            ruleset: Ruleset | CardRuleset = (
                card_ruleset_from_start(request) if card else ruleset_from_start(request)
            )
        except (ValueError, TypeError) as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"cannot read the game: {e}")
        game = Game(
            game_id=request.game_id,
            variant=request.variant,
            seat=request.seat,
            num_seats=request.num_seats,
            ruleset=ruleset,
            move_limit_ms=request.clock.move_limit_ms,
            bank_ms=request.clock.bank_ms,
            family=CARD if card else BOARD,
            bot_seed=(
                request.bot_seed
                if request.HasField("bot_seed")
                else zlib.crc32(request.game_id.encode())
            ),
        )
        with self._lock:
            self._games[request.game_id, request.seat] = game
        token = _current_game.set(game)
        try:
            self.bot.on_start(game)
        except Exception as e:
            self._fail(context, "on_start raised", e)
        finally:
            _current_game.reset(token)
        return bot_service_pb2.StartGameResponse()

    def Act(
        self, request: bot_service_pb2.ActRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.ActResponse:
        game = self._game(request.game_id, request.view.seat, context)
        view: object
        legal: wire.LegalActions | wire_cardgame.LegalActions
        events: list[Event] | list[CardEvent]
        try:
            if game.is_card_game:
                view = wire_cardgame.view_from_pb(request.view)
                legal = wire_cardgame.LegalActions(request.legal_actions)
                events = wire_cardgame.events_from_pb(request.events)
            else:
                view = wire.view_from_pb(request.view)
                legal = wire.LegalActions(request.legal_actions)
                events = wire.events_from_pb(request.events)
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"cannot read the request: {e}")
        with game.lock:
            game.new_events = list(events)
            game.events.extend(events)
            game.clock = (request.clock.move_limit_ms, request.clock.bank_left_ms)
            game.rejection = (
                (request.rejection.rule, request.rejection.message)
                if request.HasField("rejection")
                else None
            )
            game.decisions += 1
            token = _current_game.set(game)
            try:
                choice = self.bot.choose(view, legal)
            except Exception as e:
                self._fail(context, "choose raised", e)
            finally:
                _current_game.reset(token)
        response = bot_service_pb2.ActResponse(request_id=request.request_id)
        if isinstance(choice, bool) or not isinstance(
            choice, int | (CardAction if game.is_card_game else Action)
        ):
            context.abort(
                grpc.StatusCode.INTERNAL,
                f"choose returned {choice!r}: not an action or an index",
            )
        if isinstance(choice, int):
            if not 0 <= choice < len(legal):
                context.abort(
                    grpc.StatusCode.INTERNAL,
                    f"choose returned index {choice}; there are {len(legal)} legal actions",
                )
            response.legal_action_index = choice
        elif isinstance(legal, wire.LegalActions):
            assert not isinstance(choice, PlaceSuit | PlaceMix)  # a board game's: checked above
            index = legal.position(choice)
            if index >= 0:
                response.legal_action_index = index
            else:
                # Not a legal action: send it whole, so that the referee says which rule it
                # breaks.
                response.action.CopyFrom(wire.action_to_pb(choice))
        else:
            assert not isinstance(choice, ClaimRoute)  # a card game's: checked above
            index = legal.position(choice)
            if index >= 0:
                response.legal_action_index = index
            else:
                response.action.CopyFrom(wire_cardgame.action_to_pb(choice))
        return response

    def EndGame(
        self, request: bot_service_pb2.EndGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.EndGameResponse:
        with self._lock:
            game = self._games.pop((request.game_id, request.view.seat), None)
        if game is None:
            return bot_service_pb2.EndGameResponse()
        outcome: Outcome | CardOutcome
        events: list[Event] | list[CardEvent]
        try:
            if game.is_card_game:
                outcome = wire_cardgame.outcome_from_pb(request.outcome)
                events = wire_cardgame.events_from_pb(request.events)
            else:
                outcome = wire.outcome_from_pb(request.outcome)
                events = wire.events_from_pb(request.events)
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"cannot read the outcome: {e}")
        game.new_events = list(events)
        game.events.extend(events)
        game.outcome = outcome
        token = _current_game.set(game)
        try:
            self.bot.on_end(outcome)
        except Exception as e:
            self._fail(context, "on_end raised", e)
        finally:
            _current_game.reset(token)
        return bot_service_pb2.EndGameResponse()

    @property
    def active_games(self) -> int:
        with self._lock:
            return len(self._games)
