"""Ticket to Ride: The Card Game on the wire: conversions to and from ``ttr.v1`` messages.

The card game's counterpart of :mod:`referee.games.board.wire`, with the same function names and
shapes. Both families share one contract (proto/README.md): the card game sends the same
``SeatView``, ``Event``, ``Action`` and ``Outcome`` messages as the board games, fills the fields
whose meaning is the same in both, and carries its own facts in card-game parts
(``SeatView.card_game``, ``SeatScore.card_game``, ``StartGameRequest.card_game``, the actions
``place_suit`` and ``place_mix``, the events 12-21). The shared pieces (the five shared actions
and eight shared events, card and phase names, card counts) are converted by
:mod:`referee.games.common.codec`, as the board games' are, so the two families spell them the
same way byte for byte.

Errors, as in :mod:`referee.games.board.wire`: an action message that describes no card-game action
raises :class:`~referee.games.common.errors.MalformedActionError` with a rule id naming what is
wrong (the engine then judges a well-formed action); any other message that cannot be read back
(views, events, outcomes, the setup; the SDK's direction) raises
:class:`~referee.games.common.codec.WireError`. Like the engine, this module imports the generated
message classes only, never grpc.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import assert_never

from referee.games.card.actions import CardAction, PlaceMix, PlaceSuit
from referee.games.card.engine import IDLE_ROUNDS
from referee.games.card.events import (
    BonusAwarded,
    CardEvent,
    CardsDealt,
    FinalRoundStarted,
    MixPlaced,
    MovedOnTrack,
    PlayStalled,
    StackScored,
    SuitPlaced,
    TicketsRevealed,
    TrainRobbed,
)
from referee.games.card.ruleset import (
    BigCity,
    CardRuleset,
    CardTicket,
    available_card_variants,
    load_card_ruleset,
)
from referee.games.card.scoring import CardOutcome, CardSeatScore
from referee.games.card.view import CardPlayerPublic, CardSeatView
from referee.games.common import family
from referee.games.common.cards import NUM_COLOURS

# The shared vocabulary, spelled exactly as the board games spell it (common/codec.py).
from referee.games.common.codec import (
    PB_TO_CARD,
    PB_TO_PHASE,
    PHASE_TO_PB,
    WireError,
    card_to_pb,
    counts_from_pb,
    counts_to_pb,
    end_reason_from_pb,
    end_reason_to_pb,
    entry_bytes,
    shared_action_from_pb,
    shared_action_to_pb,
    shared_event_from_pb,
    shared_event_to_pb,
    slot_from_pb,
    slot_to_pb,
)
from referee.games.common.errors import MalformedActionError
from referee.games.common.events import (
    BlindDrawn,
    DeckReshuffled,
    FaceUpDealt,
    FaceUpTaken,
    GameEnded,
    Passed,
    TicketsDrawn,
    TicketsKept,
)
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
    "WireError",
    "act_request_pb",
    "action_from_pb",
    "action_to_pb",
    "actions_from_pb",
    "event_from_pb",
    "event_to_pb",
    "events_from_pb",
    "events_to_pb",
    "legal_actions_from_pb",
    "legal_actions_to_pb",
    "outcome_from_pb",
    "outcome_to_pb",
    "ruleset_from_setup",
    "ruleset_from_start",
    "setup_to_pb",
    "starts",
    "static_bytes",
    "view_from_pb",
    "view_to_pb",
]

#: The Action members both families use: read and written by :mod:`referee.games.common.codec`.
_SHARED_ACTIONS = frozenset(
    {"draw_blind", "draw_face_up", "draw_tickets", "keep_tickets", "pass_turn"}
)


def _colour_name(colour: int) -> str:
    """A CardColour's name for an error message, or its number if it has none."""
    if colour in cards_pb2.CardColour.values():
        return cards_pb2.CardColour.Name(cards_pb2.CardColour.ValueType(colour))
    return str(colour)


def _colour_from_pb(colour: int, what: str) -> int:
    """One of the eight colours (never the Locomotive); :class:`WireError` otherwise."""
    card = PB_TO_CARD.get(cards_pb2.CardColour.ValueType(colour))
    if card is None or card >= NUM_COLOURS:
        raise WireError(f"{what}: {_colour_name(colour)} is not one of the eight colours")
    return card


def _cards_from_pb(colours: Iterable[int], what: str) -> tuple[int, ...]:
    """Card kinds, one per card, in the order sent."""
    out = []
    for colour in colours:
        card = PB_TO_CARD.get(cards_pb2.CardColour.ValueType(colour))
        if card is None:
            raise WireError(f"{what}: {_colour_name(colour)} is not a card")
        out.append(card)
    return tuple(out)


def _card_list(cards: tuple[int, ...] | None) -> cards_pb2.CardList | None:
    return None if cards is None else cards_pb2.CardList(cards=[card_to_pb(c) for c in cards])


# ---------------------------------------------------------------------------------------------
# actions


def action_to_pb(action: CardAction) -> actions_pb2.Action:
    """A card-game action as an ``Action`` message (the shared actions as the board games
    write them)."""
    match action:
        case PlaceSuit(colour=colour, cards=cards, locomotives=locos):
            return actions_pb2.Action(
                place_suit=actions_pb2.PlaceSuit(
                    colour=card_to_pb(colour), cards=cards, locomotives=locos
                )
            )
        case PlaceMix(colours=colours):
            return actions_pb2.Action(
                place_mix=actions_pb2.PlaceMix(colours=[card_to_pb(c) for c in colours])
            )
        case _:
            return shared_action_to_pb(action)


def action_from_pb(msg: actions_pb2.Action) -> CardAction:
    """An ``Action`` message as a card-game action.

    Raises ``MalformedActionError`` for a message that describes no card-game action:
    ``action.unset`` (no member of ``kind``), ``action.kind`` (``claim_route``, a board-game
    action), ``action.colour`` (a CardColour that is unspecified or unknown), ``action.colours``
    (a mix listing a colour twice), ``action.tickets`` (a ticket kept twice). Whether the
    action is legal now is the engine's to judge (a suit of Locomotives, say). Kept tickets and
    a mix's colours come back in their canonical ascending order.
    """
    kind = msg.WhichOneof("kind")
    match kind:
        case "draw_blind" | "draw_face_up" | "draw_tickets" | "keep_tickets" | "pass_turn":
            return shared_action_from_pb(msg)
        case "place_suit":
            suit = msg.place_suit
            colour = PB_TO_CARD.get(suit.colour)
            if colour is None:
                raise MalformedActionError(
                    "action.colour",
                    f"place_suit.colour {_colour_name(suit.colour)} is not a card colour (set "
                    "CARD_COLOUR_RED ... CARD_COLOUR_WHITE)",
                )
            return PlaceSuit(colour, suit.cards, suit.locomotives)
        case "place_mix":
            colours = []
            for c in msg.place_mix.colours:
                card = PB_TO_CARD.get(c)
                if card is None:
                    raise MalformedActionError(
                        "action.colour",
                        f"place_mix.colours holds {_colour_name(c)}, not a card colour (set "
                        "CARD_COLOUR_RED ... CARD_COLOUR_WHITE)",
                    )
                colours.append(card)
            if len(set(colours)) != len(colours):
                twice = next(c for c, n in Counter(colours).items() if n > 1)
                raise MalformedActionError(
                    "action.colours",
                    f"place_mix lists {_colour_name(card_to_pb(twice))} twice (a mix is cards "
                    "of different colours)",
                )
            return PlaceMix(tuple(sorted(colours)))
        case "claim_route":
            raise MalformedActionError(
                "action.kind", "claim_route is a board-game action; the card game has no routes"
            )
        case None:
            raise MalformedActionError(
                "action.unset", "the Action message has no action set (its `kind` is empty)"
            )
        case _:
            assert_never(kind)


def legal_actions_to_pb(actions: Iterable[CardAction]) -> list[actions_pb2.Action]:
    """The legal actions, in order (an answer's ``legal_action_index`` is a position here)."""
    return [action_to_pb(a) for a in actions]


_legal_action_bytes: Callable[[CardAction], bytes] = memoized(
    lambda a: entry_bytes(bot_service_pb2.ActRequest, "legal_actions", action_to_pb(a))
)

#: serialized Action -> the card-game action; a malformed one raises each time
_action_of_bytes: Callable[[bytes], CardAction] = memoized(
    lambda data: action_from_pb(actions_pb2.Action.FromString(data))
)


def legal_actions_from_pb(msgs: Iterable[actions_pb2.Action]) -> tuple[CardAction, ...]:
    """The legal actions of a request, in order (read through a memo keyed by each message's
    bytes: they repeat from decision to decision)."""
    return tuple(_action_of_bytes(m.SerializeToString()) for m in msgs)


#: Another name for :func:`legal_actions_from_pb`.
actions_from_pb = legal_actions_from_pb


class LegalActions(family.LegalActions[CardAction]):
    """The legal actions of a request, each read from its message when first used: what the
    SDK hands to ``Bot.choose`` (as :class:`referee.games.board.wire.LegalActions` in a board
    game). An action this version cannot read (a member added by a later version) raises
    ``MalformedActionError`` when it is used, not before, so the others stay choosable."""

    __slots__ = ()

    @staticmethod
    def _read(data: bytes) -> CardAction:
        return _action_of_bytes(data)

    def position(self, action: CardAction) -> int:
        """Where ``action`` is in the list, or -1. Looks among the actions already read first
        (a bot usually answers with one of them); an action this version cannot read is
        never equal to ``action``."""
        for i, seen in enumerate(self._actions):
            if seen is action:
                return i
        for i in range(len(self._actions)):
            try:
                if self[i] == action:
                    return i
            except MalformedActionError:
                continue
        return -1


# ---------------------------------------------------------------------------------------------
# views


def _railyard_to_pb(p: CardPlayerPublic) -> list[view_pb2.RailyardRow]:
    return [
        view_pb2.RailyardRow(colour=card_to_pb(c), cards=n, locomotives=locos)
        for c, (n, locos) in enumerate(zip(p.railyard, p.railyard_locomotives, strict=True))
        if n or locos
    ]


def _card_player_to_pb(p: CardPlayerPublic) -> view_pb2.CardGamePlayer:
    return view_pb2.CardGamePlayer(
        seat=p.seat,
        railyard=_railyard_to_pb(p),
        stack_size=p.stack_size,
        completed_tickets=p.completed,
        completed_points=p.ticket_points,
    )


#: a seat's public part changes only when it acts: kept as wire bytes
_card_player_bytes: Callable[[CardPlayerPublic], bytes] = memoized(
    lambda p: entry_bytes(view_pb2.CardGameView, "players", _card_player_to_pb(p))
)


def view_to_pb(view: CardSeatView) -> view_pb2.SeatView:
    """A seat's view as a ``SeatView`` message: the fields the board games share, and the
    card game's own facts in ``card_game`` (-1 sentinels and a hidden stack become absent)."""
    msg = view_pb2.SeatView(
        variant=view.variant,
        num_seats=view.num_seats,
        seat=view.seat,
        phase=PHASE_TO_PB[view.phase],
        turn=view.turn,
        face_up=[slot_to_pb(c) for c in view.face_up],
        deck_size=view.deck_size,
        discards=counts_to_pb(view.discards),
        ticket_deck_size=view.ticket_deck_size,
        end_reason=end_reason_to_pb(view.end_reason),
        players=[
            view_pb2.PlayerPublic(
                seat=p.seat,
                hand_size=p.hand_size,
                ticket_count=p.tickets,
                pending_ticket_count=p.tickets_pending,
            )
            for p in view.players
        ],
        hand=counts_to_pb(view.hand),
        tickets=view.tickets,
        offered=view.offered,
        card_game=view_pb2.CardGameView(
            deck_number=view.deck_number,
            stack=None
            if view.stack is None
            else cards_pb2.CardCounts(counts=counts_to_pb(view.stack)),
        ),
    )
    if view.to_act >= 0:
        msg.to_act = view.to_act
    if view.last_round >= 0:
        msg.last_round_turns_left = view.last_round
    msg.card_game.MergeFromString(b"".join(_card_player_bytes(p) for p in view.players))
    return msg


def _railyard_from_pb(
    rows: Iterable[view_pb2.RailyardRow], what: str
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    cards = [0] * NUM_COLOURS
    locos = [0] * NUM_COLOURS
    seen: set[int] = set()
    for row in rows:
        colour = _colour_from_pb(row.colour, what)
        if colour in seen:
            raise WireError(f"{what}: the {_colour_name(row.colour)} row is listed twice")
        seen.add(colour)
        cards[colour] = row.cards
        locos[colour] = row.locomotives
    return tuple(cards), tuple(locos)


def view_from_pb(msg: view_pb2.SeatView) -> CardSeatView:
    """A ``SeatView`` message of a card game as the engine's :class:`CardSeatView` (the SDK's
    typed view). :class:`WireError` for a view with no ``card_game`` part (a board game's)."""
    if not msg.HasField("card_game"):
        raise WireError("SeatView has no card_game part: it is not a card-game view")
    try:
        phase = PB_TO_PHASE[msg.phase]
    except KeyError:
        raise WireError(f"SeatView.phase {msg.phase} is not a phase this version knows") from None
    card = msg.card_game
    if len(card.players) != len(msg.players):
        raise WireError(
            f"SeatView lists {len(msg.players)} players but card_game {len(card.players)}"
        )
    players = []
    for i, (p, c) in enumerate(zip(msg.players, card.players, strict=True)):
        if p.seat != i or c.seat != i:
            raise WireError(f"SeatView.players[{i}]: seat {p.seat} / card_game seat {c.seat}")
        railyard, railyard_locos = _railyard_from_pb(
            c.railyard, f"SeatView.card_game.players[{i}].railyard"
        )
        players.append(
            CardPlayerPublic(
                seat=i,
                hand_size=p.hand_size,
                tickets=p.ticket_count,
                tickets_pending=p.pending_ticket_count,
                railyard=railyard,
                railyard_locomotives=railyard_locos,
                stack_size=c.stack_size,
                completed=tuple(c.completed_tickets),
                ticket_points=c.completed_points,
            )
        )
    return CardSeatView(
        variant=msg.variant,
        num_seats=msg.num_seats,
        seat=msg.seat,
        to_act=msg.to_act if msg.HasField("to_act") else -1,
        phase=phase,
        turn=msg.turn,
        deck_number=card.deck_number,
        face_up=tuple(slot_from_pb(c) for c in msg.face_up),
        deck_size=msg.deck_size,
        discards=counts_from_pb(msg.discards, "SeatView.discards"),
        ticket_deck_size=msg.ticket_deck_size,
        last_round=msg.last_round_turns_left if msg.HasField("last_round_turns_left") else -1,
        end_reason=end_reason_from_pb(msg.end_reason),
        players=tuple(players),
        hand=counts_from_pb(msg.hand, "SeatView.hand"),
        tickets=tuple(msg.tickets),
        offered=tuple(msg.offered),
        stack=(
            counts_from_pb(card.stack.counts, "SeatView.card_game.stack")
            if card.HasField("stack")
            else None
        ),
    )


# ---------------------------------------------------------------------------------------------
# events


def event_to_pb(event: CardEvent) -> events_pb2.Event:
    """An event as an ``Event`` message. Give it the event already projected for the seat it
    is for (:func:`referee.games.card.project`): a hidden field (``None``) is left absent."""
    match event:
        case (
            FaceUpTaken()
            | BlindDrawn()
            | FaceUpDealt()
            | DeckReshuffled()
            | TicketsDrawn()
            | TicketsKept()
            | Passed()
            | GameEnded()
        ):
            return shared_event_to_pb(event)
        case MovedOnTrack(seat=seat, count=count, cards=cards, shown_to_owner=shown):
            return events_pb2.Event(
                moved_on_track=events_pb2.MovedOnTrack(
                    seat=seat, count=count, cards=_card_list(cards), shown_to_owner=shown
                )
            )
        case SuitPlaced(seat=seat, colour=colour, cards=cards, locomotives=locos):
            return events_pb2.Event(
                suit_placed=events_pb2.SuitPlaced(
                    seat=seat, colour=card_to_pb(colour), cards=cards, locomotives=locos
                )
            )
        case MixPlaced(seat=seat, colours=colours):
            return events_pb2.Event(
                mix_placed=events_pb2.MixPlaced(seat=seat, colours=[card_to_pb(c) for c in colours])
            )
        case TrainRobbed(robber=robber, seat=seat, colour=colour, cards=cards, locomotives=locos):
            return events_pb2.Event(
                train_robbed=events_pb2.TrainRobbed(
                    robber=robber,
                    seat=seat,
                    colour=card_to_pb(colour),
                    cards=cards,
                    locomotives=locos,
                )
            )
        case FinalRoundStarted(seat=seat, deck=deck):
            final = events_pb2.FinalRoundStarted(deck=deck)
            if seat >= 0:
                final.seat = seat
            return events_pb2.Event(final_round_started=final)
        case PlayStalled(turns=turns):
            return events_pb2.Event(play_stalled=events_pb2.PlayStalled(turns=turns))
        case StackScored(seat=seat, deck=deck, stack=stack, completed=completed, points=points):
            return events_pb2.Event(
                stack_scored=events_pb2.StackScored(
                    seat=seat,
                    deck=deck,
                    stack=counts_to_pb(stack),
                    completed=completed,
                    points=points,
                )
            )
        case CardsDealt(seat=seat, count=count, cards=cards):
            return events_pb2.Event(
                cards_dealt=events_pb2.CardsDealt(seat=seat, count=count, cards=_card_list(cards))
            )
        case TicketsRevealed(seat=seat, tickets=tickets, points=points):
            return events_pb2.Event(
                tickets_revealed=events_pb2.TicketsRevealed(
                    seat=seat, tickets=tickets, points=points
                )
            )
        case BonusAwarded(city=city, seats=seats, points=points):
            return events_pb2.Event(
                bonus_awarded=events_pb2.BonusAwarded(city=city, seats=seats, points=points)
            )
        case _:
            assert_never(event)


def events_to_pb(events: Iterable[CardEvent]) -> list[events_pb2.Event]:
    """Already projected events as messages, in order."""
    return [event_to_pb(e) for e in events]


_event_bytes: Callable[[CardEvent], bytes] = memoized(
    lambda e: entry_bytes(bot_service_pb2.ActRequest, "events", event_to_pb(e))
)


def event_from_pb(msg: events_pb2.Event) -> CardEvent:
    """An ``Event`` message as a card-game event (an absent hidden field comes back as
    ``None``). Raises :class:`WireError` for a board-game event, a value this version does not
    know, or an event with no member set (also what an event kind added by a later version
    looks like: :func:`events_from_pb` skips those)."""
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
        case "moved_on_track":
            e12 = msg.moved_on_track
            cards = (
                _cards_from_pb(e12.cards.cards, "MovedOnTrack.cards")
                if e12.HasField("cards")
                else None
            )
            return MovedOnTrack(e12.seat, e12.count, cards, e12.shown_to_owner)
        case "suit_placed":
            e13 = msg.suit_placed
            colour = _colour_from_pb(e13.colour, "SuitPlaced.colour")
            return SuitPlaced(e13.seat, colour, e13.cards, e13.locomotives)
        case "mix_placed":
            e14 = msg.mix_placed
            return MixPlaced(
                e14.seat,
                tuple(_colour_from_pb(c, "MixPlaced.colours") for c in e14.colours),
            )
        case "train_robbed":
            e15 = msg.train_robbed
            colour = _colour_from_pb(e15.colour, "TrainRobbed.colour")
            return TrainRobbed(e15.robber, e15.seat, colour, e15.cards, e15.locomotives)
        case "final_round_started":
            e16 = msg.final_round_started
            return FinalRoundStarted(e16.seat if e16.HasField("seat") else -1, e16.deck)
        case "play_stalled":
            return PlayStalled(msg.play_stalled.turns)
        case "stack_scored":
            e18 = msg.stack_scored
            return StackScored(
                e18.seat,
                e18.deck,
                counts_from_pb(e18.stack, "StackScored.stack"),
                tuple(e18.completed),
                e18.points,
            )
        case "cards_dealt":
            e19 = msg.cards_dealt
            dealt = (
                _cards_from_pb(e19.cards.cards, "CardsDealt.cards")
                if e19.HasField("cards")
                else None
            )
            return CardsDealt(e19.seat, e19.count, dealt)
        case "tickets_revealed":
            e20 = msg.tickets_revealed
            return TicketsRevealed(e20.seat, tuple(e20.tickets), e20.points)
        case "bonus_awarded":
            e21 = msg.bonus_awarded
            return BonusAwarded(e21.city, tuple(e21.seats), e21.points)
        case "face_up_flushed" | "route_claimed" | "last_round_started":
            raise WireError(f"{kind} is a board-game event; the card game has none")
        case None:
            raise WireError("the Event message has no event set (its `kind` is empty)")
        case _:
            assert_never(kind)


_event_of_bytes: Callable[[bytes], CardEvent] = memoized(
    lambda data: event_from_pb(events_pb2.Event.FromString(data))
)


def events_from_pb(msgs: Iterable[events_pb2.Event]) -> list[CardEvent]:
    """The events of a request, in order, skipping any with no member set: an event kind added
    by a later version of the contract looks like that to this one."""
    return [
        _event_of_bytes(m.SerializeToString()) for m in msgs if m.WhichOneof("kind") is not None
    ]


# ---------------------------------------------------------------------------------------------
# the act request


def act_request_pb(
    view: CardSeatView,
    events: Iterable[CardEvent],
    legal: Iterable[CardAction],
    game_id: str,
    request_id: str,
    clock: bot_service_pb2.Clock,
    rejection: bot_service_pb2.Rejection | None = None,
) -> bot_service_pb2.ActRequest:
    """One decision's request: ``view`` and ``events`` as the acting seat may see them (the
    events already projected for it), the legal actions in order, the clock and the previous
    answer's rejection. The events and legal actions are merged in from kept bytes, as in
    :func:`referee.games.board.wire.act_request_pb`."""
    request = bot_service_pb2.ActRequest(
        game_id=game_id,
        request_id=request_id,
        view=view_to_pb(view),
        clock=clock,
        rejection=rejection,
    )
    request.MergeFromString(
        b"".join([*[_event_bytes(e) for e in events], *[_legal_action_bytes(a) for a in legal]])
    )
    return request


# ---------------------------------------------------------------------------------------------
# scores


def outcome_to_pb(outcome: CardOutcome) -> scoring_pb2.Outcome:
    """Scores with their per-seat breakdown; every seat's tickets are revealed."""
    return scoring_pb2.Outcome(
        complete=outcome.final,
        end_reason=end_reason_to_pb(outcome.end_reason),
        seats=[
            scoring_pb2.SeatScore(
                seat=s.seat,
                tickets_completed=s.completed,
                tickets_failed=s.failed,
                ticket_points=s.completed_points - s.failed_points,
                total=s.total,
                rank=s.rank,
                card_game=scoring_pb2.CardGameScore(
                    completed_points=s.completed_points,
                    failed_points=s.failed_points,
                    big_cities=s.bonuses,
                    big_city_points=s.bonus_points,
                ),
            )
            for s in outcome.seats
        ],
    )


def outcome_from_pb(msg: scoring_pb2.Outcome) -> CardOutcome:
    """An ``Outcome`` message of a card game as the engine's :class:`CardOutcome`;
    :class:`WireError` for a seat score without its ``card_game`` part."""
    seats = []
    for s in msg.seats:
        if not s.HasField("card_game"):
            raise WireError(f"seat {s.seat}: the score has no card_game part")
        c = s.card_game
        seats.append(
            CardSeatScore(
                seat=s.seat,
                completed=tuple(s.tickets_completed),
                failed=tuple(s.tickets_failed),
                completed_points=c.completed_points,
                failed_points=c.failed_points,
                bonuses=tuple(c.big_cities),
                bonus_points=c.big_city_points,
                total=s.total,
                rank=s.rank,
            )
        )
    return CardOutcome(msg.complete, end_reason_from_pb(msg.end_reason), tuple(seats))


# ---------------------------------------------------------------------------------------------
# static facts (StartGameRequest.card_game)


def setup_to_pb(ruleset: CardRuleset) -> game_map_pb2.CardGameSetup:
    """The ruleset as a ``CardGameSetup``: tickets with their colour needs, the Big Cities
    Bonus cards and the rule numbers."""
    return game_map_pb2.CardGameSetup(
        name=ruleset.name,
        version=ruleset.version,
        title=ruleset.title,
        description=ruleset.description,
        tickets=[
            game_map_pb2.CardTicket(
                index=t.index,
                city_a=t.a,
                city_b=t.b,
                points=t.points,
                requires=[
                    cards_pb2.CardCount(colour=card_to_pb(c), count=n)
                    for c, n in enumerate(t.requires)
                    if n
                ],
                big_cities=t.big_cities,
            )
            for t in ruleset.tickets
        ],
        big_cities=[
            game_map_pb2.BigCityBonus(index=b.index, city=b.name, points=b.points)
            for b in ruleset.big_cities
        ],
        rules=game_map_pb2.CardRuleParameters(
            min_seats=ruleset.min_players,
            max_seats=ruleset.max_players,
            deck=counts_to_pb(ruleset.deck),
            starting_locomotives=ruleset.starting_locomotives,
            hand_size=ruleset.hand_size,
            face_up_slots=ruleset.face_up,
            setup_tickets_dealt=ruleset.setup_tickets_dealt,
            setup_tickets_keep_min=ruleset.setup_tickets_keep_min,
            cards_drawn=ruleset.cards_drawn,
            suit_min=ruleset.suit_min,
            mix_size=ruleset.mix_size,
            tickets_drawn=ruleset.tickets_drawn,
            tickets_keep_min=ruleset.tickets_keep_min,
            second_deck_min_seats=ruleset.second_deck_min_players,
            second_deck_deal=ruleset.second_deck_deal,
            owners_see_stack=ruleset.owners_see_stack,
            tie_breaks=ruleset.tie_breaks,
            stall_rounds=IDLE_ROUNDS,
        ),
    )


@per_object
def static_bytes(ruleset: CardRuleset) -> bytes:
    """The ruleset's ``CardGameSetup`` as a serialized message, made once per ruleset: every
    card game's StartGame sends it to every seat (``StartGameRequest.card_game``)."""
    return setup_to_pb(ruleset).SerializeToString()


def _requires_from_pb(entries: Sequence[cards_pb2.CardCount], what: str) -> tuple[int, ...]:
    need = [0] * NUM_COLOURS
    seen: set[int] = set()
    for entry in entries:
        colour = _colour_from_pb(entry.colour, what)
        if colour in seen:
            raise WireError(f"{what}: {_colour_name(entry.colour)} listed twice")
        seen.add(colour)
        need[colour] = entry.count
    return tuple(need)


def ruleset_from_setup(msg: game_map_pb2.CardGameSetup) -> CardRuleset:
    """A ``CardGameSetup`` as the engine's :class:`CardRuleset` (equal to the ruleset it was
    made from). :class:`WireError` for lists out of index order or references out of range."""
    cities = []
    for i, b in enumerate(msg.big_cities):
        if b.index != i:
            raise WireError(f"CardGameSetup.big_cities[{i}] has index {b.index}")
        cities.append(BigCity(i, b.city, b.points))
    tickets = []
    for i, t in enumerate(msg.tickets):
        where = f"CardGameSetup.tickets[{i}]"
        if t.index != i:
            raise WireError(f"{where} has index {t.index}")
        if any(c >= len(cities) for c in t.big_cities):
            raise WireError(f"{where}.big_cities: {list(t.big_cities)} out of range")
        tickets.append(
            CardTicket(
                index=i,
                a=t.city_a,
                b=t.city_b,
                points=t.points,
                requires=_requires_from_pb(t.requires, f"{where}.requires"),
                big_cities=tuple(t.big_cities),
            )
        )
    r = msg.rules
    return CardRuleset(
        name=msg.name,
        version=msg.version,
        title=msg.title,
        description=msg.description,
        min_players=r.min_seats,
        max_players=r.max_seats,
        deck=counts_from_pb(r.deck, "CardRuleParameters.deck"),
        starting_locomotives=r.starting_locomotives,
        hand_size=r.hand_size,
        face_up=r.face_up_slots,
        setup_tickets_dealt=r.setup_tickets_dealt,
        setup_tickets_keep_min=r.setup_tickets_keep_min,
        cards_drawn=r.cards_drawn,
        suit_min=r.suit_min,
        mix_size=r.mix_size,
        tickets_drawn=r.tickets_drawn,
        tickets_keep_min=r.tickets_keep_min,
        second_deck_min_players=r.second_deck_min_seats,
        second_deck_deal=r.second_deck_deal,
        owners_see_stack=r.owners_see_stack,
        big_cities=tuple(cities),
        tie_breaks=tuple(r.tie_breaks),
        tickets=tuple(tickets),
    )


# ---------------------------------------------------------------------------------------------
# the bot's side of StartGame


#: The variant name of the card game (``cardgame@1``).
def starts(request: bot_service_pb2.StartGameRequest) -> bool:
    """Whether a StartGame is for Ticket to Ride: The Card Game: it carries the card-game
    setup, or its variant is ``cardgame@...``."""
    name = request.variant.partition("@")[0]
    return request.HasField("card_game") or name in available_card_variants()


def ruleset_from_start(request: bot_service_pb2.StartGameRequest) -> CardRuleset:
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
            raise WireError(
                f"StartGame for {request.variant!r} has no card_game setup and this SDK has "
                "no packaged ruleset of that name and version"
            )
        return packaged
    if packaged is not None:
        setup = static_bytes(packaged)
        if request.card_game.SerializeToString() == setup or (
            # the same message, serialized differently (another protobuf implementation)
            game_map_pb2.CardGameSetup.FromString(setup) == request.card_game
        ):
            return packaged
    return ruleset_from_setup(request.card_game)
