"""Train card colours.

A card is a small int so that a hand is a tuple of per-colour counts (identical cards are
interchangeable, so counts are the whole truth) and a route's colour indexes the same tuple.
"""

from __future__ import annotations

from typing import Final

#: Card colours in a fixed order; index = card value. ``pink`` is the colour some sources call
#: purple (shared/data/README.md).
COLOURS: Final[tuple[str, ...]] = (
    "red",
    "orange",
    "yellow",
    "green",
    "blue",
    "pink",
    "black",
    "white",
)
NUM_COLOURS: Final = len(COLOURS)
#: 003:67 "Locomotives are multi-coloured and act as wild cards".
LOCOMOTIVE: Final = NUM_COLOURS
#: Number of distinct card kinds (8 colours + Locomotive): the length of a hand tuple.
NUM_CARD_KINDS: Final = NUM_COLOURS + 1
#: Route colour for gray routes, which take "a set of cards of any one colour" (003:83).
GRAY: Final = -1

CARD_NAMES: Final[tuple[str, ...]] = (*COLOURS, "locomotive")


def card_name(card: int) -> str:
    """Human name of a card kind (or ``gray`` for the gray route colour)."""
    if card == GRAY:
        return "gray"
    return CARD_NAMES[card]


def parse_route_colour(name: str) -> int:
    """Route colour from its data-file name; raises ``ValueError`` naming the bad value."""
    if name == "gray":
        return GRAY
    try:
        return COLOURS.index(name)
    except ValueError:
        raise ValueError(
            f"unknown route colour {name!r}; expected one of {', '.join((*COLOURS, 'gray'))}"
        ) from None


def parse_card(name: str) -> int:
    """Card kind from its name (a colour or ``locomotive``)."""
    try:
        return CARD_NAMES.index(name)
    except ValueError:
        raise ValueError(
            f"unknown card {name!r}; expected one of {', '.join(CARD_NAMES)}"
        ) from None
