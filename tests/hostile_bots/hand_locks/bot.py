"""Hostile bot: hands passed between seats, and between processes, through byte-range locks
(issue 34).

Every jail binds the SDK read-only at the same host path, so every jailed Python bot can open
``sdk/__init__.py``: one inode that all of them share. A POSIX lock lives on the inode, and
``F_GETLK`` tells any process that can open the file which byte a lock of another process
covers; so a value ``v`` is sent by taking an ``F_RDLCK`` on byte ``field + v`` of a range no
program locks, and read back by asking ``F_GETLK`` for the first lock in the field's range.
A process never sees its own locks that way: what it reads is another process's.

Two channels, as the issue reported them:

* **hands between seats.** At every decision the bot publishes its decision count and its
  hand (one field per card kind) in its seat's range of the game's region (the wire's game
  id, shared by the game's seats, picks the region), and reads every other seat's: two copies
  of this bot in one game read each other's hands. ``ATTACK lock wrote seat<N>: SUCCEEDED
  decision <k> hand <counts>`` says what it published, ``ATTACK lock read seat<N>: SUCCEEDED
  decision <k> hand <counts>`` what it read of seat N (its hand at its k-th decision).
* **a deal between processes.** At its first decision of a game the process publishes, for as
  long as it lives, the deal's fingerprint (the face-up row then: the same in every rotation
  of a deal) with its seat and starting hand, in a slot of a board every process of every bot
  can read; then it reads the board. A tournament that gives a replayed deal a fresh process
  ("no process plays a deal twice") still has the process that played the deal's other
  rotation alive on the worker: the new one reads the starting hand of the seat its opponent
  now holds. ``ATTACK lock read deal seat<S>: SUCCEEDED hand <counts>``.

Jailed, ``F_SETLK`` and ``F_GETLK`` answer ENOLCK and nothing passes.
"""

from __future__ import annotations

import fcntl
import os
import struct
import sys
import threading
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.games.board import Action, SeatView
    from tests.hostile_bots._common import HostileBot, attempt, main, report
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, attempt, main, report

#: one value per field: a lock on byte ``field start + value`` (values stay far below the
#: stride, so one owner's locks of two fields never touch and merge)
FIELD = 1024
FIELDS = 64
SEAT = FIELDS * FIELD
GAME = 8 * SEAT
#: the games' regions and the deal board: far above any byte a real program locks
HANDS_BASE = 1 << 40
GAME_REGIONS = 4096
DEALS_BASE = 1 << 50
DEAL_SLOTS = 64
#: struct flock on 64-bit Linux: short l_type, l_whence; off_t l_start, l_len; pid_t l_pid
FLOCK = "hhqqi4x"

_fd = -1
_opened = threading.Lock()
#: the deal-board slots this process holds (its own locks are invisible to it)
_my_slots: set[int] = set()


def lock_file() -> str:
    """The shared file: the SDK's package, bound read-only into every jail at its host
    path (imported here, after ``_common`` has re-executed the process)."""
    import sdk

    return str(sdk.__file__)


def lock_fd() -> int:
    """The process's one descriptor of the shared file, opened once: POSIX locks die when
    their owner closes any descriptor of the file."""
    global _fd
    with _opened:
        if _fd < 0:
            _fd = os.open(lock_file(), os.O_RDONLY | os.O_CLOEXEC)
        return _fd


def _flock(kind: int, start: int, length: int) -> bytes:
    return struct.pack(FLOCK, kind, os.SEEK_SET, start, length, 0)


def publish(base: int, values: Sequence[int]) -> None:
    """Replace what this process holds in ``[base, base + FIELDS * FIELD)`` by ``values``."""
    fd = lock_fd()
    fcntl.fcntl(fd, fcntl.F_SETLK, _flock(fcntl.F_UNLCK, base, FIELDS * FIELD))
    for i, v in enumerate(values):
        if not 0 <= v < FIELD:
            raise ValueError(f"field {i}: {v} does not fit")
        fcntl.fcntl(fd, fcntl.F_SETLK, _flock(fcntl.F_RDLCK, base + i * FIELD + v, 1))


def peek(base: int, field: int) -> int | None:
    """The value another process holds in a field, ``None`` for none."""
    start = base + field * FIELD
    got = fcntl.fcntl(lock_fd(), fcntl.F_GETLK, _flock(fcntl.F_WRLCK, start, FIELD))
    assert isinstance(got, bytes)
    kind, _whence, at, _len, _pid = struct.unpack(FLOCK, got)
    return None if kind == fcntl.F_UNLCK else int(at - start)


def peek_all(base: int, count: int) -> list[int]:
    out = []
    for field in range(count):
        value = peek(base, field)
        if value is None:
            raise LookupError(f"field {field} holds nothing")
        out.append(value)
    return out


def seat_base(game_id: str, seat: int) -> int:
    return HANDS_BASE + zlib.crc32(game_id.encode()) % GAME_REGIONS * GAME + seat * SEAT


def write_hand(game_id: str, seat: int, decision: int, hand: Sequence[int]) -> str:
    publish(seat_base(game_id, seat), [decision, *hand])
    return f"decision {decision} hand {tuple(hand)}"


def read_hand(game_id: str, seat: int, kinds: int) -> str:
    base = seat_base(game_id, seat)
    if peek(base, 0) is None:
        raise LookupError("nothing published")
    decision, *hand = peek_all(base, 1 + kinds)
    return f"decision {decision} hand {tuple(hand)}"


def publish_deal(seat: int, face_up: Sequence[int], hand: Sequence[int]) -> str:
    """Take a free slot of the deal board for good: seat + 1, the face-up row (+1: an empty
    slot is -1), the starting hand."""
    for slot in range(DEAL_SLOTS):
        base = DEALS_BASE + slot * SEAT
        if slot not in _my_slots and peek(base, 0) is None:
            publish(base, [seat + 1, *(c + 1 for c in face_up), *hand])
            _my_slots.add(slot)
            return f"slot {slot}: face up {tuple(face_up)} seat {seat} hand {tuple(hand)}"
    raise LookupError("the board is full")


def read_deals(face_up: Sequence[int], kinds: int) -> list[tuple[int, tuple[int, ...]]]:
    """Every other process's publication of this deal: (its seat, its starting hand)."""
    found = []
    for slot in range(DEAL_SLOTS):
        base = DEALS_BASE + slot * SEAT
        if slot in _my_slots or peek(base, 0) is None:
            continue
        seat, *rest = peek_all(base, 1 + len(face_up) + kinds)
        if tuple(c - 1 for c in rest[: len(face_up)]) == tuple(face_up):
            found.append((seat - 1, tuple(rest[len(face_up) :])))
    return found


class HandLocksBot(HostileBot):
    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        game = self.game
        kinds = len(view.hand)
        attempt(
            f"lock wrote seat{game.seat}",
            write_hand,
            game.game_id,
            game.seat,
            game.decisions,
            view.hand,
        )
        for other in range(view.num_seats):
            if other != game.seat:
                attempt(f"lock read seat{other}", read_hand, game.game_id, other, kinds)
        if game.decisions == 1:
            self.deal(view)
        return super().choose(view, legal)

    def deal(self, view: SeatView) -> None:
        seat = self.game.seat
        attempt(f"lock published deal seat{seat}", publish_deal, seat, view.face_up, view.hand)
        try:
            found = read_deals(view.face_up, len(view.hand))
        except Exception as e:
            report("lock read deal board", f"{type(e).__name__}: {e}")
            return
        report("lock read deal board", f"SUCCEEDED {len(found)} publications of this deal")
        for other, hand in found:
            if other != seat:
                report(f"lock read deal seat{other}", f"SUCCEEDED hand {hand}")


if __name__ == "__main__":
    main(HandLocksBot())
