"""The one place where rule types meet the wire: conversions to and from ``ttr.v1`` messages.

Everything bot-facing goes through here (STYLE.md, "Layout shows the architecture"): the rules
engine stays pure and never imports protobuf or grpc, and this module imports the generated
message classes only (``*_pb2``, protobuf), never grpc.

Names are translated by table, built from the names on both sides (``CARD_COLOUR_`` + the
card's name, ``PHASE_`` + the phase's name), so a card kind, phase or end reason added to the
rules without its enum value fails at import time rather than on the wire.

Errors, as in python-chess: an action message that describes no action at all raises
:class:`~referee.games.common.errors.MalformedActionError` with a rule id naming what is wrong (the
engine then judges a well-formed action and raises ``IllegalActionError`` if the rules forbid
it). Any other message that cannot be read back (views, events, outcomes; the SDK's direction)
raises :class:`WireError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeAlias, assert_never

from referee.games.board.actions import (
    Action,
    ClaimRoute,
)
from referee.games.board.events import (
    Event,
    FaceUpFlushed,
    LastRoundStarted,
    RouteClaimed,
)
from referee.games.board.ruleset import (
    BonusCard,
    City,
    GameMap,
    Route,
    Ruleset,
    Ticket,
    load_ruleset,
)
from referee.games.board.scoring import Outcome, SeatScore
from referee.games.board.view import PlayerPublic, SeatView
from referee.games.common import family
from referee.games.common.cards import COLOURS, GRAY, NUM_COLOURS
from referee.games.common.codec import (
    PB_TO_CARD,
    PB_TO_PHASE,
    PHASE_TO_PB,
    ViewPhase,
    WireError,
    bot_seed,
    card_from_pb,
    card_to_pb,
    counts_bytes,
    counts_from_pb,
    counts_to_pb,
    end_reason_from_pb,
    end_reason_to_pb,
    entry_bytes,
    invert,
    shared_action_from_pb,
    shared_action_to_pb,
    shared_event_from_pb,
    shared_event_to_pb,
    slot_from_pb,
    slot_to_pb,
)
from referee.games.common.errors import MalformedActionError
from referee.games.common.memo import memoized, per_object
from referee.games.common.tables import RulesetError
from ttr.v1 import (
    actions_pb2,
    bot_service_pb2,
    cards_pb2,
    events_pb2,
    game_map_pb2,
    scoring_pb2,
    view_pb2,
)

__all__ = [
    "LegalActions",
    "ViewPhase",
    "WireError",
    "act_request_pb",
    "action_from_pb",
    "action_to_pb",
    "bonus_kind_from_pb",
    "bonuses_from_pb",
    "bot_seed",
    "card_from_pb",
    "card_to_pb",
    "deck_from_pb",
    "event_from_pb",
    "event_to_pb",
    "events_from_pb",
    "events_to_pb",
    "legal_actions_from_pb",
    "legal_actions_to_pb",
    "map_to_pb",
    "outcome_from_pb",
    "outcome_to_pb",
    "rules_to_pb",
    "ruleset_from_pb",
    "ruleset_from_start",
    "starts",
    "static_bytes",
    "view_from_pb",
    "view_to_pb",
]

RouteColourPb: TypeAlias = cards_pb2.RouteColour.ValueType
BonusKindPb: TypeAlias = scoring_pb2.BonusKind.ValueType


# ---------------------------------------------------------------------------------------------
# name tables


#: route colour (a card colour or GRAY) -> RouteColour
_ROUTE_COLOUR_TO_PB: dict[int, RouteColourPb] = {
    GRAY: cards_pb2.ROUTE_COLOUR_GRAY,
    **{c: cards_pb2.RouteColour.Value(f"ROUTE_COLOUR_{n.upper()}") for c, n in enumerate(COLOURS)},
}


_BONUS_LONGEST_PATH = scoring_pb2.BONUS_KIND_LONGEST_PATH
_BONUS_GLOBETROTTER = scoring_pb2.BONUS_KIND_GLOBETROTTER
#: a ruleset's bonus card kinds (``ruleset.BONUS_KINDS``) and their wire values
_BONUS_TO_PB: dict[str, BonusKindPb] = {
    "longest_path": _BONUS_LONGEST_PATH,
    "globetrotter": _BONUS_GLOBETROTTER,
}
_PB_TO_BONUS = invert(_BONUS_TO_PB)


# ---------------------------------------------------------------------------------------------
# actions


def action_to_pb(action: Action) -> actions_pb2.Action:
    """A rule action as an ``Action`` message."""
    if isinstance(action, ClaimRoute):
        return actions_pb2.Action(
            claim_route=actions_pb2.ClaimRoute(
                route=action.route, colour=card_to_pb(action.colour), locomotives=action.locomotives
            )
        )
    return shared_action_to_pb(action)


def action_from_pb(msg: actions_pb2.Action) -> Action:
    """An ``Action`` message as a rule action.

    Raises ``MalformedActionError`` for a message that describes no action: ``action.unset``
    (no member of ``kind``), ``action.kind`` (a card-game action, which no board game has),
    ``action.colour`` (a CardColour that is unspecified or unknown), ``action.tickets`` (a
    ticket listed twice). Whether the action exists on this map and is legal now is the
    engine's to judge. Kept tickets come back in their canonical ascending order.
    """
    kind = msg.WhichOneof("kind")
    match kind:
        case "draw_blind" | "draw_face_up" | "draw_tickets" | "keep_tickets" | "pass_turn":
            return shared_action_from_pb(msg)
        case "claim_route":
            claim = msg.claim_route
            colour = PB_TO_CARD.get(claim.colour)
            if colour is None:
                name = (
                    cards_pb2.CardColour.Name(claim.colour)
                    if claim.colour in cards_pb2.CardColour.values()
                    else str(claim.colour)
                )
                raise MalformedActionError(
                    "action.colour",
                    f"claim_route.colour {name} is not a card colour (set CARD_COLOUR_RED ... "
                    "CARD_COLOUR_LOCOMOTIVE)",
                )
            return ClaimRoute(claim.route, colour, claim.locomotives)
        case "place_suit" | "place_mix":
            raise MalformedActionError(
                "action.kind", f"{kind} is a card-game action; the board games have none"
            )
        case None:
            raise MalformedActionError(
                "action.unset", "the Action message has no action set (its `kind` is empty)"
            )
        case _:
            assert_never(kind)


def legal_actions_to_pb(actions: Iterable[Action]) -> list[actions_pb2.Action]:
    """The legal actions, in order (an answer's ``legal_action_index`` is a position here)."""
    return [action_to_pb(a) for a in actions]


_legal_action_bytes: Callable[[Action], bytes] = memoized(
    lambda a: entry_bytes(bot_service_pb2.ActRequest, "legal_actions", action_to_pb(a))
)


def _action_from_bytes(data: bytes) -> Action:
    return action_from_pb(actions_pb2.Action.FromString(data))


#: serialized Action -> the rule action; a malformed one raises each time (nothing is kept)
_action_of_bytes: Callable[[bytes], Action] = memoized(_action_from_bytes)


class LegalActions(family.LegalActions[Action]):
    """A board game's legal actions, read lazily (the shared base says why); reads go through
    the same memo as :func:`legal_actions_from_pb`."""

    __slots__ = ()

    @staticmethod
    def _read(data: bytes) -> Action:
        return _action_of_bytes(data)

    def position(self, action: Action) -> int:
        """Where ``action`` is in the list, or -1. Looks among the actions already read for
        this very object first: a bot usually answers with one of them."""
        for i, seen in enumerate(self._actions):
            if seen is action:
                return i
        for i in range(len(self._actions)):
            if self[i] == action:
                return i
        return -1


def legal_actions_from_pb(msgs: Iterable[actions_pb2.Action]) -> tuple[Action, ...]:
    """The legal actions of a request, in order. Read through a memo keyed by each message's
    bytes: the SDK reads the legal actions of every decision, and they repeat."""
    return tuple(_action_of_bytes(m.SerializeToString()) for m in msgs)


# ---------------------------------------------------------------------------------------------
# views


def _player_to_pb(p: PlayerPublic) -> view_pb2.PlayerPublic:
    return view_pb2.PlayerPublic(
        seat=p.seat,
        hand_size=p.hand_size,
        ticket_count=p.tickets,
        pending_ticket_count=p.tickets_pending,
        trains=p.trains,
        route_points=p.route_points,
        routes=p.routes,
    )


_player_bytes: Callable[[PlayerPublic], bytes] = memoized(
    lambda p: entry_bytes(view_pb2.SeatView, "players", _player_to_pb(p))
)
_hand_bytes: Callable[[tuple[int, ...]], bytes] = memoized(counts_bytes(view_pb2.SeatView, "hand"))
_discards_bytes: Callable[[tuple[int, ...]], bytes] = memoized(
    counts_bytes(view_pb2.SeatView, "discards")
)


def _player_from_bytes(data: bytes) -> PlayerPublic:
    p = view_pb2.PlayerPublic.FromString(data)
    return PlayerPublic(
        seat=p.seat,
        hand_size=p.hand_size,
        tickets=p.ticket_count,
        tickets_pending=p.pending_ticket_count,
        trains=p.trains,
        route_points=p.route_points,
        routes=tuple(p.routes),
    )


#: serialized PlayerPublic -> PlayerPublic: a seat's public part changes only when it acts
_player_of_bytes: Callable[[bytes], PlayerPublic] = memoized(_player_from_bytes)


def view_to_pb(view: SeatView) -> view_pb2.SeatView:
    """A seat's view as a ``SeatView`` message (every field; -1 sentinels become absent)."""
    msg = _view_scalars_pb(view)
    msg.MergeFromString(_view_parts_bytes(view))
    return msg


def _view_parts_bytes(view: SeatView) -> bytes:
    """The view's repeated message fields (discards, players, hand) as wire bytes."""
    return b"".join(
        (
            _discards_bytes(view.discards),
            *[_player_bytes(p) for p in view.players],
            _hand_bytes(view.hand),
        )
    )


def _view_scalars_pb(view: SeatView) -> view_pb2.SeatView:
    """Every field of the view but its repeated messages."""
    msg = view_pb2.SeatView(
        variant=view.variant,
        num_seats=view.num_seats,
        seat=view.seat,
        phase=PHASE_TO_PB[view.phase],
        turn=view.turn,
        face_up=[slot_to_pb(c) for c in view.face_up],
        deck_size=view.deck_size,
        ticket_deck_size=view.ticket_deck_size,
        end_reason=end_reason_to_pb(view.end_reason),
        tickets=view.tickets,
        offered=view.offered,
    )
    if view.to_act >= 0:
        msg.to_act = view.to_act
    if view.last_round >= 0:
        msg.last_round_turns_left = view.last_round
    return msg


_face_up_of: Callable[[tuple[int, ...]], tuple[int, ...]] = memoized(
    lambda slots: tuple(slot_from_pb(c) for c in slots)
)


def view_from_pb(msg: view_pb2.SeatView) -> SeatView:
    """A ``SeatView`` message as the rules' :class:`SeatView` (the SDK's typed view)."""
    try:
        phase = PB_TO_PHASE[msg.phase]
    except KeyError:
        raise WireError(f"SeatView.phase {msg.phase} is not a phase this version knows") from None
    return SeatView(
        variant=msg.variant,
        num_seats=msg.num_seats,
        seat=msg.seat,
        to_act=msg.to_act if msg.HasField("to_act") else -1,
        phase=phase,
        turn=msg.turn,
        face_up=_face_up_of(tuple(msg.face_up)),
        deck_size=msg.deck_size,
        discards=counts_from_pb(msg.discards, "SeatView.discards"),
        ticket_deck_size=msg.ticket_deck_size,
        last_round=msg.last_round_turns_left if msg.HasField("last_round_turns_left") else -1,
        end_reason=end_reason_from_pb(msg.end_reason),
        players=tuple(_player_of_bytes(p.SerializeToString()) for p in msg.players),
        hand=counts_from_pb(msg.hand, "SeatView.hand"),
        tickets=tuple(msg.tickets),
        offered=tuple(msg.offered),
    )


# ---------------------------------------------------------------------------------------------
# events


def event_to_pb(event: Event) -> events_pb2.Event:
    """An event as an ``Event`` message. Give it the event already projected for the seat it
    is for (:func:`referee.games.board.events.project`): a hidden field (``None``) is left
    absent."""
    match event:
        case FaceUpFlushed(cards=cards):
            return events_pb2.Event(
                face_up_flushed=events_pb2.FaceUpFlushed(cards=[card_to_pb(c) for c in cards])
            )
        case RouteClaimed(seat=seat, route=route, colour=colour, locomotives=locos, points=points):
            return events_pb2.Event(
                route_claimed=events_pb2.RouteClaimed(
                    seat=seat,
                    route=route,
                    colour=card_to_pb(colour),
                    locomotives=locos,
                    points=points,
                )
            )
        case LastRoundStarted(seat=seat, trains=trains):
            return events_pb2.Event(
                last_round_started=events_pb2.LastRoundStarted(seat=seat, trains=trains)
            )
        case _:
            return shared_event_to_pb(event)


def events_to_pb(events: Iterable[Event]) -> list[events_pb2.Event]:
    """Already projected events as messages, in order."""
    return [event_to_pb(e) for e in events]


_event_bytes: Callable[[Event], bytes] = memoized(
    lambda e: entry_bytes(bot_service_pb2.ActRequest, "events", event_to_pb(e))
)


def event_from_pb(msg: events_pb2.Event) -> Event:
    """An ``Event`` message as a rule event (an absent hidden field comes back as ``None``).
    Raises :class:`WireError` for an event with no member set, which is also what an event
    kind added by a later version looks like: callers that want to skip those check
    ``msg.WhichOneof("kind")`` first."""
    kind = msg.WhichOneof("kind")
    match kind:
        case (
            "face_up_taken"
            | "blind_drawn"
            | "face_up_dealt"
            | "deck_reshuffled"
            | "tickets_drawn"
            | "tickets_kept"
            | "passed"
            | "game_ended"
        ):
            return shared_event_from_pb(msg)
        case "face_up_flushed":
            return FaceUpFlushed(tuple(card_from_pb(c) for c in msg.face_up_flushed.cards))
        case "route_claimed":
            e6 = msg.route_claimed
            return RouteClaimed(
                e6.seat, e6.route, card_from_pb(e6.colour), e6.locomotives, e6.points
            )
        case "last_round_started":
            e10 = msg.last_round_started
            return LastRoundStarted(e10.seat, e10.trains)
        case (
            "moved_on_track"
            | "suit_placed"
            | "mix_placed"
            | "train_robbed"
            | "final_round_started"
            | "play_stalled"
            | "stack_scored"
            | "cards_dealt"
            | "tickets_revealed"
            | "bonus_awarded"
        ):
            raise WireError(f"{kind} is a card-game event; the board games have none")
        case None:
            raise WireError("the Event message has no event set (its `kind` is empty)")
        case _:
            assert_never(kind)


def _event_from_bytes(data: bytes) -> Event:
    return event_from_pb(events_pb2.Event.FromString(data))


_event_of_bytes: Callable[[bytes], Event] = memoized(_event_from_bytes)


def events_from_pb(msgs: Iterable[events_pb2.Event]) -> list[Event]:
    """The events of a request, in order, skipping any with no member set: an event kind added
    by a later version of the contract looks like that to this one. Read through a memo, as
    the legal actions are."""
    return [
        _event_of_bytes(m.SerializeToString()) for m in msgs if m.WhichOneof("kind") is not None
    ]


# ---------------------------------------------------------------------------------------------
# the act request


def act_request_pb(
    view: SeatView,
    events: Iterable[Event],
    legal: Iterable[Action],
    game_id: str,
    request_id: str,
    clock: bot_service_pb2.Clock,
    rejection: bot_service_pb2.Rejection | None = None,
) -> bot_service_pb2.ActRequest:
    """One decision's request: ``view`` and ``events`` as the acting seat may see them (the
    events already projected for it), the legal actions in order, the clock and the previous
    answer's rejection. Its repeated parts are merged in from kept bytes (see
    :func:`entry_bytes`): this runs on every decision of every game."""
    request = bot_service_pb2.ActRequest(
        game_id=game_id,
        request_id=request_id,
        view=_view_scalars_pb(view),
        clock=clock,
        rejection=rejection,
    )
    request.view.MergeFromString(_view_parts_bytes(view))
    request.MergeFromString(
        b"".join([*[_event_bytes(e) for e in events], *[_legal_action_bytes(a) for a in legal]])
    )
    return request


# ---------------------------------------------------------------------------------------------
# scores


def outcome_to_pb(outcome: Outcome) -> scoring_pb2.Outcome:
    """Scores with their per-seat breakdown; every seat's tickets are revealed."""
    seats = []
    for s in outcome.seats:
        bonuses = []
        if s.longest_path_bonus:
            bonuses.append(scoring_pb2.Bonus(kind=_BONUS_LONGEST_PATH, points=s.longest_path_bonus))
        if s.globetrotter_bonus:
            bonuses.append(scoring_pb2.Bonus(kind=_BONUS_GLOBETROTTER, points=s.globetrotter_bonus))
        seats.append(
            scoring_pb2.SeatScore(
                seat=s.seat,
                route_points=s.route_points,
                tickets_completed=s.tickets_completed,
                tickets_failed=s.tickets_failed,
                ticket_points=s.ticket_points,
                longest_path=s.longest_path,
                bonuses=bonuses,
                total=s.total,
                rank=s.rank,
                attractions=s.attractions,
                attraction_points=s.attraction_points,
            )
        )
    return scoring_pb2.Outcome(
        complete=outcome.final, end_reason=end_reason_to_pb(outcome.end_reason), seats=seats
    )


def outcome_from_pb(msg: scoring_pb2.Outcome) -> Outcome:
    """An ``Outcome`` message as the rules' :class:`Outcome`."""
    seats = []
    for s in msg.seats:
        bonus: dict[BonusKindPb, int] = {}
        for b in s.bonuses:
            if b.kind not in (_BONUS_LONGEST_PATH, _BONUS_GLOBETROTTER) or b.kind in bonus:
                raise WireError(f"seat {s.seat}: bonus kind {b.kind} unknown or listed twice")
            bonus[b.kind] = b.points
        seats.append(
            SeatScore(
                seat=s.seat,
                route_points=s.route_points,
                tickets_completed=tuple(s.tickets_completed),
                tickets_failed=tuple(s.tickets_failed),
                ticket_points=s.ticket_points,
                longest_path=s.longest_path,
                longest_path_bonus=bonus.get(_BONUS_LONGEST_PATH, 0),
                globetrotter_bonus=bonus.get(_BONUS_GLOBETROTTER, 0),
                attractions=tuple(s.attractions),
                attraction_points=s.attraction_points,
                total=s.total,
                rank=s.rank,
            )
        )
    return Outcome(msg.complete, end_reason_from_pb(msg.end_reason), tuple(seats))


# ---------------------------------------------------------------------------------------------
# static facts (StartGameRequest)


def map_to_pb(ruleset: Ruleset) -> game_map_pb2.GameMap:
    """The map (cities, routes) and the variant's tickets, indexed as everything else is."""
    game_map = ruleset.game_map
    routes = []
    for r in game_map.routes:
        route = game_map_pb2.Route(
            index=r.index,
            route_id=r.route_id,
            city_a=r.a,
            city_b=r.b,
            length=r.length,
            colour=_ROUTE_COLOUR_TO_PB[r.colour],
        )
        if r.sibling is not None:
            route.double_sibling = r.sibling
        routes.append(route)
    return game_map_pb2.GameMap(
        name=game_map.name,
        version=game_map.version,
        cities=[
            game_map_pb2.City(
                index=c.index, name=c.name, x=c.x, y=c.y, tourist_attraction=c.attraction
            )
            for c in game_map.cities
        ],
        routes=routes,
        tickets=[
            game_map_pb2.Ticket(
                index=t.index, ticket_id=t.ticket_id, city_a=t.a, city_b=t.b, points=t.points
            )
            for t in ruleset.tickets
        ],
    )


def rules_to_pb(ruleset: Ruleset) -> game_map_pb2.RuleParameters:
    """The ruleset's numbers a bot may plan with."""
    return game_map_pb2.RuleParameters(
        min_seats=ruleset.min_players,
        max_seats=ruleset.max_players,
        cards_per_colour=_uniform_colour_count(ruleset),
        locomotives=ruleset.locomotives,
        trains=ruleset.trains,
        hand_size=ruleset.hand_size,
        face_up_slots=ruleset.face_up,
        setup_tickets_dealt=ruleset.setup_tickets_dealt,
        setup_tickets_keep_min=ruleset.setup_tickets_keep_min,
        cards_drawn=ruleset.cards_drawn,
        tickets_drawn=ruleset.tickets_drawn,
        tickets_keep_min=ruleset.tickets_keep_min,
        flush_locomotives=ruleset.flush_locomotives,
        trains_trigger=ruleset.trains_trigger,
        route_points=ruleset.route_points,
        longest_path_bonus=ruleset.longest_path_bonus,
        globetrotter_bonus=ruleset.globetrotter_bonus,
        tie_breaks=ruleset.tie_breaks,
        both_tracks_min_seats=ruleset.both_tracks_min_players,
        deck=counts_to_pb(ruleset.deck),
        bonuses=[
            scoring_pb2.Bonus(kind=_BONUS_TO_PB[b.kind], points=b.points) for b in ruleset.bonuses
        ],
        attraction_points=ruleset.attraction_points,
    )


def _uniform_colour_count(ruleset: Ruleset) -> int:
    """``cards_per_colour`` for bots written before ``deck``: the count when every colour has
    the same, else 0 (New York's deck has six colours)."""
    colours = set(ruleset.deck[:NUM_COLOURS])
    return colours.pop() if len(colours) == 1 else 0


def deck_from_pb(rules: game_map_pb2.RuleParameters) -> tuple[int, ...]:
    """The deck composition per card kind; from ``cards_per_colour`` and ``locomotives`` when
    the sender predates ``deck``."""
    if rules.deck:
        return counts_from_pb(rules.deck, "RuleParameters.deck")
    return (rules.cards_per_colour,) * NUM_COLOURS + (rules.locomotives,)


def bonuses_from_pb(rules: game_map_pb2.RuleParameters) -> tuple[BonusCard, ...]:
    """The bonus cards in play; from the two point fields when the sender predates
    ``bonuses``."""
    if rules.bonuses:
        out: list[BonusCard] = []
        for b in rules.bonuses:
            kind = bonus_kind_from_pb(b.kind)
            if any(o.kind == kind for o in out):
                raise WireError(f"RuleParameters.bonuses: {kind} listed twice")
            out.append(BonusCard(kind, b.points))
        return tuple(out)
    legacy = (
        ("longest_path", rules.longest_path_bonus),
        ("globetrotter", rules.globetrotter_bonus),
    )
    return tuple(BonusCard(kind, points) for kind, points in legacy if points)


def bonus_kind_from_pb(kind: int) -> str:
    """A ``BonusKind`` as the ruleset's name for it; raises :class:`WireError` if unknown."""
    name = _PB_TO_BONUS.get(BonusKindPb(kind))
    if name is None:
        raise WireError(f"BonusKind {kind} is not one this version knows")
    return name


@per_object
def static_bytes(ruleset: Ruleset) -> tuple[bytes, bytes]:
    """The ruleset's ``GameMap`` and ``RuleParameters`` as serialized messages, made once per
    ruleset: every game's StartGame sends them to every seat, and the SDK compares what it
    receives against its packaged copy."""
    return map_to_pb(ruleset).SerializeToString(), rules_to_pb(ruleset).SerializeToString()


# ---------------------------------------------------------------------------------------------
# the bot's side of StartGame


def starts(request: bot_service_pb2.StartGameRequest) -> bool:
    """Whether a StartGame is for a board game: it carries a map."""
    return request.HasField("game_map")


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
        game_map, rules = static_bytes(packaged)
        if (
            request.game_map.SerializeToString() == game_map
            and request.rules.SerializeToString() == rules
        ) or (
            # the same messages, serialized differently (another protobuf implementation)
            game_map_pb2.GameMap.FromString(game_map) == request.game_map
            and game_map_pb2.RuleParameters.FromString(rules) == request.rules
        ):
            return packaged
    return ruleset_from_pb(name, version, request.game_map, request.rules)


def ruleset_from_pb(
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
            raise WireError(f"GameMap.routes[{i}] has index {pr.index}")
        colour = _PB_TO_ROUTE_COLOUR.get(pr.colour)
        if colour is None:
            raise WireError(f"GameMap.routes[{i}]: RouteColour {pr.colour} unknown")
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
        deck=deck_from_pb(r),
        trains=r.trains,
        piece="train",  # a name for the pages and the log only, not sent: a packaged one has it
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
        bonuses=bonuses_from_pb(r),
        attraction_points=r.attraction_points,
        tie_breaks=tuple(r.tie_breaks),
        both_tracks_min_players=r.both_tracks_min_seats,
    )
