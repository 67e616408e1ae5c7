"""Which decision the acting seat faces, the same in both families (the card game has no
route claims but the same draws and ticket choices), and the mark of an empty face-up slot."""

from __future__ import annotations

from enum import IntEnum


class Phase(IntEnum):
    """Which decision the acting seat faces. Multi-step turns are explicit phases
    (ARCHITECTURE.md): the second card and the ticket choice are decisions of their own."""

    SETUP_TICKETS = 0  #: 003:15-17, each seat keeps >= 2 of the 3 dealt, in seat order
    TURN = 1  #: 003:41, the first decision of a turn: one of the three actions
    SECOND_CARD = 2  #: 003:49, the second train card of a draw
    KEEP_TICKETS = 3  #: 003:59, which of the drawn tickets to keep
    OVER = 4


#: Marks an empty face-up slot (RULINGS.md 3).
EMPTY = -1
