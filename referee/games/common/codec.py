"""The wire codec pieces both rules families share, written once: card and phase names, card
counts, face-up slots, end reasons, the kept-bytes trick, and the shared actions and events.

Each family's ``wire`` module converts its own values and hands these to the functions here,
so the two families spell the shared parts the same way byte for byte and neither codec
imports the other. Like the engines, nothing here imports grpc: only the generated message
classes.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import TypeAlias, TypeVar, assert_never

from google.protobuf.message import Message

from referee.games.common.actions import (
    DRAW_BLIND,
    DRAW_TICKETS,
    PASS,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Pass,
)
from referee.games.common.cards import CARD_NAMES, NUM_CARD_KINDS
from referee.games.common.errors import MalformedActionError
from referee.games.common.events import (
    BlindDrawn,
    DeckReshuffled,
    FaceUpDealt,
    FaceUpTaken,
    GameEnded,
    Passed,
    SharedEvent,
    TicketsDrawn,
    TicketsKept,
)
from referee.games.common.memo import MEMO_BYTES, memoized
from referee.games.common.phase import EMPTY, Phase
from ttr.v1 import actions_pb2, cards_pb2, events_pb2, view_pb2

#: an action both families share
SharedAction = DrawFaceUp | DrawBlind | DrawTickets | KeepTickets | Pass

CardColourPb: TypeAlias = cards_pb2.CardColour.ValueType


PhasePb: TypeAlias = view_pb2.Phase.ValueType


EndReasonPb: TypeAlias = view_pb2.EndReason.ValueType


class WireError(ValueError):
    """A message (other than an action) that does not describe a valid rule value."""


K = TypeVar("K")


V = TypeVar("V")


def invert(table: Mapping[K, V]) -> dict[V, K]:
    inverse = {v: k for k, v in table.items()}
    assert len(inverse) == len(table), "translation table is not one-to-one"
    return inverse


M = TypeVar("M", bound=Message)


def entry_bytes(parent: type[M], field: str, entry: object) -> bytes:
    """The wire bytes of ``entry`` as one element of the repeated field ``field`` of
    ``parent`` (its tag, length and body).

    Speed: every decision sends a view, the new events and the legal actions, and building
    protobuf messages field by field from Python costs more than the gRPC call they ride on
    (bench/wire.py). Yet the values repeat: rule values are immutable and hashable, and a game
    sends the same actions, events, players' public parts and card counts over and over. So
    the encoders keep each value's wire bytes (memoized), and the decoders the value read
    from each message's bytes.

    Protobuf parses a message written as concatenated fields, and a repeated field's elements
    may arrive one by one, so a message's repeated parts can be assembled from kept bytes and
    read in with one ``MergeFromString``: much cheaper than building and copying a Python
    message for each element. The bytes come from the generated code itself, so no field
    number or wire type is written down here.
    """
    return parent(**{field: entry if isinstance(entry, list) else [entry]}).SerializeToString()


#: card kind (index into CARD_NAMES) -> CardColour
CARD_TO_PB: dict[int, CardColourPb] = {
    card: cards_pb2.CardColour.Value(f"CARD_COLOUR_{name.upper()}")
    for card, name in enumerate(CARD_NAMES)
}


PB_TO_CARD = invert(CARD_TO_PB)


class ViewPhase(StrEnum):
    """The decision a view's seat faces: the type of ``view.phase`` in every view the wire
    decodes (``sdk.Phase``; the SDK's bots compare ``view.phase is Phase.TURN``).

    A view holds the engine's :class:`~referee.games.board.state.Phase` by its lower-case name, a
    string, and the engine's ``Phase`` is an ``IntEnum``: ``view.phase == Phase.TURN`` would
    be False without a word. A member here *is* that string (``ViewPhase.TURN == "turn"``),
    so a comparison with either the member or the name gives the right answer, on a decoded
    view and on one the engine built in-process alike; the engine itself is untouched.
    """

    SETUP_TICKETS = "setup_tickets"  #: choosing the starting tickets (each seat in turn)
    TURN = "turn"  #: a turn's first decision: draw a card, claim, or draw tickets
    SECOND_CARD = "second_card"  #: the second train card of a draw
    KEEP_TICKETS = "keep_tickets"  #: which of the drawn tickets to keep
    OVER = "over"  #: the game has ended (the view EndGame carries)


assert [p.name for p in ViewPhase] == [p.name for p in Phase], "ViewPhase must follow Phase"

#: SeatView.phase (the Phase's lower-case name) -> Phase enum
PHASE_TO_PB: dict[str, PhasePb] = {
    ViewPhase[phase.name]: view_pb2.Phase.Value(f"PHASE_{phase.name}") for phase in Phase
}


#: decoded views carry the :class:`ViewPhase` member, so ``is`` works on them
PB_TO_PHASE = invert(PHASE_TO_PB)


_END_REASON_PREFIX = "END_REASON_"


def card_to_pb(card: int) -> CardColourPb:
    """A card kind as a CardColour."""
    try:
        return CARD_TO_PB[card]
    except KeyError:
        raise ValueError(f"card kind {card!r} does not exist") from None


def card_from_pb(colour: int) -> int:
    """A CardColour as a card kind; :class:`WireError` for UNSPECIFIED or an unknown value."""
    try:
        return PB_TO_CARD[cards_pb2.CardColour.ValueType(colour)]
    except KeyError:
        raise WireError(f"CardColour {colour} is not a card this version knows") from None


def slot_to_pb(card: int) -> CardColourPb:
    """A face-up slot: its card, or CARD_COLOUR_UNSPECIFIED for an empty slot."""
    return cards_pb2.CARD_COLOUR_UNSPECIFIED if card == EMPTY else card_to_pb(card)


def slot_from_pb(colour: int) -> int:
    return EMPTY if colour == cards_pb2.CARD_COLOUR_UNSPECIFIED else card_from_pb(colour)


def end_reason_to_pb(reason: str) -> EndReasonPb:
    if not reason:
        return view_pb2.END_REASON_UNSPECIFIED
    try:
        return view_pb2.EndReason.Value(_END_REASON_PREFIX + reason.upper())
    except ValueError:
        raise ValueError(f"end reason {reason!r} has no EndReason value") from None


def end_reason_from_pb(reason: int) -> str:
    if reason == view_pb2.END_REASON_UNSPECIFIED:
        return ""
    try:
        name = view_pb2.EndReason.Name(view_pb2.EndReason.ValueType(reason))
    except ValueError:
        raise WireError(f"EndReason {reason} is not one this version knows") from None
    return name.removeprefix(_END_REASON_PREFIX).lower()


def counts_to_pb(counts: Sequence[int]) -> list[cards_pb2.CardCount]:
    return [cards_pb2.CardCount(colour=CARD_TO_PB[c], count=n) for c, n in enumerate(counts)]


def counts_bytes(parent: type[M], field: str) -> Callable[[Sequence[int]], bytes]:
    """An encoder of card counts as the wire bytes of ``parent``'s repeated ``field``: what
    :func:`entry_bytes` makes of :func:`counts_to_pb`, byte for byte, joined from the kept
    bytes of each (card, count) entry. A hand changes with nearly every decision, and
    building its messages cost 7 us a time; the entries it is made of are few (card kinds
    times the counts a game reaches) and repeat."""
    kinds = len(CARD_TO_PB)

    def build(key: int) -> bytes:
        count, card = divmod(key, kinds)
        return entry_bytes(parent, field, cards_pb2.CardCount(colour=CARD_TO_PB[card], count=count))

    entry = memoized(build, limit=MEMO_BYTES // 16)

    def encode(counts: Sequence[int]) -> bytes:
        return b"".join([entry(n * kinds + card) for card, n in enumerate(counts)])

    return encode


def counts_from_pb(entries: Iterable[cards_pb2.CardCount], what: str) -> tuple[int, ...]:
    counts = [0] * NUM_CARD_KINDS
    seen = 0  # bitmask of the card kinds listed so far
    to_card = PB_TO_CARD
    for entry in entries:
        colour = entry.colour
        card = to_card.get(colour)
        if card is None:
            card = card_from_pb(colour)  # not a card: raises the WireError naming the value
        if seen >> card & 1:
            raise WireError(f"{what}: card kind {colour} listed twice")
        seen |= 1 << card
        counts[card] = entry.count
    return tuple(counts)


def tickets_to_pb(tickets: tuple[int, ...] | None) -> events_pb2.TicketList | None:
    return None if tickets is None else events_pb2.TicketList(tickets=tickets)


# ---------------------------------------------------------------------------------------------
# the shared actions and events


def shared_action_to_pb(action: SharedAction) -> actions_pb2.Action:
    """A shared action as an ``Action`` message."""
    match action:
        case DrawBlind():
            return actions_pb2.Action(draw_blind=actions_pb2.DrawBlind())
        case DrawFaceUp(slot=slot):
            return actions_pb2.Action(draw_face_up=actions_pb2.DrawFaceUp(slot=slot))
        case DrawTickets():
            return actions_pb2.Action(draw_tickets=actions_pb2.DrawTickets())
        case KeepTickets(tickets=tickets):
            return actions_pb2.Action(keep_tickets=actions_pb2.KeepTickets(tickets=tickets))
        case Pass():
            return actions_pb2.Action(pass_turn=actions_pb2.Pass())
        case _:
            assert_never(action)


def shared_action_from_pb(msg: actions_pb2.Action) -> SharedAction:
    """An ``Action`` message whose ``kind`` is one of the shared actions, as that action.
    ``MalformedActionError`` ``action.tickets`` for a ticket kept twice; kept tickets come
    back in their canonical ascending order."""
    kind = msg.WhichOneof("kind")
    match kind:
        case "draw_blind":
            return DRAW_BLIND
        case "draw_face_up":
            return DrawFaceUp(msg.draw_face_up.slot)
        case "draw_tickets":
            return DRAW_TICKETS
        case "keep_tickets":
            tickets = tuple(msg.keep_tickets.tickets)
            if len(set(tickets)) != len(tickets):
                # Name the first repeat, not the list: a bot chooses its length.
                twice = next(t for t, n in Counter(tickets).items() if n > 1)
                raise MalformedActionError(
                    "action.tickets", f"keep_tickets lists ticket {twice} twice"
                )
            return KeepTickets(tuple(sorted(tickets)))
        case "pass_turn":
            return PASS
        case _:
            raise AssertionError(f"{kind} is not a shared action")


def shared_event_to_pb(event: SharedEvent) -> events_pb2.Event:
    """A shared event, already projected for its seat, as an ``Event`` message (a hidden
    field, ``None``, is left absent)."""
    match event:
        case FaceUpTaken(seat=seat, slot=slot, card=card):
            return events_pb2.Event(
                face_up_taken=events_pb2.FaceUpTaken(seat=seat, slot=slot, card=card_to_pb(card))
            )
        case BlindDrawn(seat=seat, card=card):
            blind = events_pb2.BlindDrawn(seat=seat)
            if card is not None:
                blind.card = card_to_pb(card)
            return events_pb2.Event(blind_drawn=blind)
        case FaceUpDealt(slot=slot, card=card):
            return events_pb2.Event(
                face_up_dealt=events_pb2.FaceUpDealt(slot=slot, card=card_to_pb(card))
            )
        case DeckReshuffled(size=size):
            return events_pb2.Event(deck_reshuffled=events_pb2.DeckReshuffled(size=size))
        case TicketsDrawn(seat=seat, count=count, tickets=tickets):
            return events_pb2.Event(
                tickets_drawn=events_pb2.TicketsDrawn(
                    seat=seat, count=count, tickets=tickets_to_pb(tickets)
                )
            )
        case TicketsKept(seat=seat, kept_count=kept_count, returned_count=returned, kept=kept):
            return events_pb2.Event(
                tickets_kept=events_pb2.TicketsKept(
                    seat=seat,
                    kept_count=kept_count,
                    returned_count=returned,
                    kept=tickets_to_pb(kept),
                )
            )
        case Passed(seat=seat):
            return events_pb2.Event(passed=events_pb2.Passed(seat=seat))
        case GameEnded(reason=reason):
            return events_pb2.Event(
                game_ended=events_pb2.GameEnded(reason=end_reason_to_pb(reason))
            )
        case _:
            assert_never(event)


def shared_event_from_pb(msg: events_pb2.Event) -> SharedEvent:
    """An ``Event`` message whose ``kind`` is one of the shared events, as that event (an
    absent hidden field comes back as ``None``)."""
    kind = msg.WhichOneof("kind")
    match kind:
        case "face_up_taken":
            e1 = msg.face_up_taken
            return FaceUpTaken(e1.seat, e1.slot, card_from_pb(e1.card))
        case "blind_drawn":
            e2 = msg.blind_drawn
            return BlindDrawn(e2.seat, card_from_pb(e2.card) if e2.HasField("card") else None)
        case "face_up_dealt":
            e3 = msg.face_up_dealt
            return FaceUpDealt(e3.slot, card_from_pb(e3.card))
        case "deck_reshuffled":
            return DeckReshuffled(msg.deck_reshuffled.size)
        case "tickets_drawn":
            e7 = msg.tickets_drawn
            drawn = tuple(e7.tickets.tickets) if e7.HasField("tickets") else None
            return TicketsDrawn(e7.seat, e7.count, drawn)
        case "tickets_kept":
            e8 = msg.tickets_kept
            kept = tuple(e8.kept.tickets) if e8.HasField("kept") else None
            return TicketsKept(e8.seat, e8.kept_count, e8.returned_count, kept)
        case "passed":
            return Passed(msg.passed.seat)
        case "game_ended":
            return GameEnded(end_reason_from_pb(msg.game_ended.reason))
        case _:
            raise AssertionError(f"{kind} is not a shared event")


# ---------------------------------------------------------------------------------------------
# the seat's seed


#: Domain tag of :func:`bot_seed`'s hash: no other hash of the seed in the project can collide
#: with it.
_BOT_SEED_TAG = b"ttr-arena/bot-seed/v1\0"


def bot_seed(seed: int, seat: int) -> int:
    """``StartGameRequest.bot_seed`` of ``seat`` in the game dealt from ``seed``: the first 8
    bytes of SHA-256 over a domain tag, the seed and the seat.

    The game seed orders every deck, so a bot that knew it would know every hand; this is
    derived one way from it, so a bot learns nothing of the deal, and the seat is hashed in so
    that no seat can compute another's. Still the same game seed gives every seat the same
    bot seed again, and a game between bots that draw their randomness from it replays
    exactly (``ttr play --seed``)."""
    digest = hashlib.sha256(_BOT_SEED_TAG + f"{seed}/{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
