"""The Python bot SDK: subclass :class:`Bot`, implement ``choose``, call :func:`sdk.run`.

::

    from sdk import Bot, run

    class FirstBot(Bot):
        def choose(self, view, legal):
            return 0  # an index into `legal`, or one of its actions

    if __name__ == "__main__":
        run(FirstBot())

The SDK decodes every request with the wire codec of the game's rules family (its
``Family`` record, ``referee.games.registry``: the family whose setup a StartGame carries), so
``view`` is that engine's own view and ``legal`` its own actions. In a board game
(``game.family == "board"``) that is a :class:`~referee.games.board.SeatView` and
:data:`~referee.games.board.Action` values; in Ticket to Ride: The Card Game (``"card"``) a
:class:`~referee.games.card.CardSeatView`, :data:`~referee.games.card.CardAction` values, a
:class:`~referee.games.card.CardRuleset` as ``game.ruleset`` and a
:class:`~referee.games.card.CardOutcome` at the end. One bot process serves game after game,
possibly several at once: what belongs to one game lives in its :class:`Game` (``self.game``
inside ``choose`` and the hooks), keyed by the request's ``game_id``.
"""

from __future__ import annotations

import contextvars
import sys
import threading
import traceback
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc

from referee.games.board import Action, Outcome, Ruleset
from referee.games.board.events import Event
from referee.games.board.wire import ruleset_from_start
from referee.games.card import CardOutcome, CardRuleset
from referee.games.card.actions import CardAction
from referee.games.card.events import CardEvent
from referee.games.card.wire import ruleset_from_start as card_ruleset_from_start
from referee.games.card.wire import starts as is_card_game_start
from referee.games.registry import FAMILIES, AnyFamily, family_named
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc

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
    #: this seat's view of the finished game, once EndGame arrived (EndGameRequest.view)
    final_view: Any = None
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
    ``sdk.strategies.card`` (the card game) both have this shape."""

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
        # The family whose setup the request carries; one that carries none is a board game
        # (what every StartGame was before the card game).
        family = next((f for f in FAMILIES if f.starts(request)), FAMILIES[0])
        try:
            ruleset: Ruleset | CardRuleset = family.ruleset_from_start(request)
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
            family=family.name,
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
        return bot_service_pb2.StartGameResponse(play_stream=True)

    def Play(
        self,
        request_iterator: Iterator[bot_service_pb2.ActRequest],
        context: grpc.ServicerContext,
    ) -> Iterator[bot_service_pb2.ActResponse]:
        # The stream carries exactly Act's exchange, so each message is answered by Act itself:
        # a failure aborts the stream with the status Act would have returned, and the referee
        # records it as it would Act's and goes on over Act.
        for request in request_iterator:
            yield self.Act(request, context)

    def Act(
        self, request: bot_service_pb2.ActRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.ActResponse:
        game = self._game(request.game_id, request.view.seat, context)
        family: AnyFamily = family_named(game.family)
        try:
            view = family.view_from_pb(request.view)
            legal = family.legal_from_pb(request.legal_actions)
            events = family.events_from_pb(request.events)
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
        if isinstance(choice, bool) or not (isinstance(choice, int) or family.is_action(choice)):
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
        else:
            index = legal.position(choice)
            if index >= 0:
                response.legal_action_index = index
            else:
                # Not a legal action: send it whole, so that the referee says which rule it
                # breaks.
                response.action.CopyFrom(family.action_to_pb(choice))
        return response

    def EndGame(
        self, request: bot_service_pb2.EndGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.EndGameResponse:
        with self._lock:
            game = self._games.pop((request.game_id, request.view.seat), None)
        if game is None:
            return bot_service_pb2.EndGameResponse()
        family: AnyFamily = family_named(game.family)
        try:
            outcome = family.outcome_from_pb(request.outcome)
            events = family.events_from_pb(request.events)
            final_view = family.view_from_pb(request.view) if request.HasField("view") else None
        except ValueError as e:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"cannot read the outcome: {e}")
        game.new_events = list(events)
        game.events.extend(events)
        game.outcome = outcome
        game.final_view = final_view
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
