"""Hostile bot: hands passed between seats through inotify on files every jail reads (issue 34).

An inotify watch is on the inode, so it reports every open of the file on the machine, from
any jail. The Python runtime is bound read-only into every jail at its host path, and much of
its standard library is never imported by a bot or the referee (IDLE, the turtle demos, the
test suite): a file there that opens is a signal. Each seat gets a lane of :data:`LANE` such
files: the first is the frame marker, the others the bits of a frame (an 8-bit decision count,
then 5 bits per card kind of the hand).

At StartGame the bot watches (``IN_OPEN | IN_ACCESS``) every other seat's lane. At every
decision it opens its own lane's marker and then the files of its frame's 1 bits, and reads
its queue: the events of a lane after that lane's last marker are the other seat's latest
frame (inotify keeps the queue in order; a seat publishes before it answers, so a frame is
whole by the time the next seat is asked). ``ATTACK inotify wrote seat<N>: SUCCEEDED decision
<k> hand <counts>`` says what it published, ``ATTACK inotify read seat<N>: SUCCEEDED decision
<k> hand <counts>`` what it read of seat N (its hand at its k-th decision).

Jailed, ``inotify_init1`` answers ENOSYS and nothing passes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referee.games.board import Action, SeatView
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, attempt, main, report
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, attempt, main, report

IN_ACCESS = 0x01
IN_OPEN = 0x20
STAMP_BITS = 8
COUNT_BITS = 5
LANE = 64  #: files per seat: the marker, the stamp, 5 bits for each of up to 11 card kinds
#: standard-library folders nothing of a game imports, in the order their files are used
QUIET = ("idlelib", "idlelib/idle_test", "turtledemo", "lib2to3", "tkinter", "test")
EVENT = "iIII"  #: struct inotify_event: wd, mask, cookie, len (then len bytes of name)

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def _check(ret: int) -> int:
    if ret < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return ret


@functools.cache
def runtime_files(seats: int) -> list[Path]:
    """The files of the seats' lanes, the same list in every process: ``.py`` files of the
    read-only standard library's quiet folders, sorted (listed once: a decision's clock)."""
    stdlib = Path(os.__file__).parent
    files = [f for sub in QUIET for f in sorted((stdlib / sub).glob("*.py"))]
    if len(files) < LANE * seats:
        raise LookupError(f"only {len(files)} quiet files in {stdlib}")
    return files[: LANE * seats]


def frame(decision: int, hand: Sequence[int]) -> list[int]:
    """The lane's files to open after the marker (1-based bit numbers) for this frame."""
    values = [(min(decision, 2**STAMP_BITS - 1), STAMP_BITS)]
    values += [(min(c, 2**COUNT_BITS - 1), COUNT_BITS) for c in hand]
    bits: list[int] = []
    for value, width in values:
        bits += [(value >> i) & 1 for i in range(width)]
    if len(bits) >= LANE:
        raise ValueError(f"a frame of {len(bits)} bits does not fit a lane")
    return [i + 1 for i, b in enumerate(bits) if b]


def unframe(ones: set[int], kinds: int) -> str:
    def value(at: int, width: int) -> int:
        return sum(1 << i for i in range(width) if at + i in ones)

    decision = value(1, STAMP_BITS)
    hand = tuple(value(1 + STAMP_BITS + k * COUNT_BITS, COUNT_BITS) for k in range(kinds))
    return f"decision {decision} hand {hand}"


@dataclass
class Watch:
    """One game's inotify instance: which lane and bit each watch is, and each lane's events
    since its last marker."""

    fd: int
    where: dict[int, tuple[int, int]]  #: watch descriptor -> (seat, bit)
    pending: dict[int, list[int]] = field(default_factory=dict)  #: seat -> bits since marker
    framed: set[int] = field(default_factory=set)  #: seats whose marker was seen

    def drain(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            at = 0
            while at + 16 <= len(data):
                wd, _mask, _cookie, size = struct.unpack_from(EVENT, data, at)
                at += 16 + size
                if wd not in self.where:
                    continue
                seat, bit = self.where[wd]
                if bit == 0:
                    self.pending[seat] = []
                    self.framed.add(seat)
                elif seat in self.framed:
                    self.pending[seat].append(bit)

    def read(self, seat: int, kinds: int) -> str:
        self.drain()
        if seat not in self.framed:
            raise LookupError("no frame seen")
        return unframe(set(self.pending[seat]), kinds)


def watch(seat: int, seats: int) -> Watch:
    files = runtime_files(seats)
    fd = _check(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
    where: dict[int, tuple[int, int]] = {}
    try:
        for other in range(seats):
            if other == seat:
                continue
            for bit in range(LANE):
                path = os.fsencode(files[other * LANE + bit])
                wd = _check(libc.inotify_add_watch(fd, path, IN_OPEN | IN_ACCESS))
                where[wd] = (other, bit)
    except BaseException:
        os.close(fd)
        raise
    return Watch(fd, where)


def send(seats: int, seat: int, decision: int, hand: Sequence[int]) -> str:
    lane = runtime_files(seats)[seat * LANE : (seat + 1) * LANE]
    for bit in [0, *frame(decision, hand)]:
        os.close(os.open(lane[bit], os.O_RDONLY | os.O_CLOEXEC))
    return f"decision {decision} hand {tuple(hand)}"


class HandInotifyBot(HostileBot):
    def __init__(self) -> None:
        #: each game's watch, or why there is none
        self.watches: dict[str, Watch | str] = {}

    def attack_at_start(self, game: Game) -> None:
        try:
            w = watch(game.seat, game.num_seats)
        except Exception as e:
            self.watches[game.game_id] = why = f"{type(e).__name__}: {e}"
            report("inotify watch", why)
            return
        self.watches[game.game_id] = w
        report("inotify watch", f"SUCCEEDED {len(w.where)} files of {Path(os.__file__).parent}")

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        game = self.game
        attempt(
            f"inotify wrote seat{game.seat}",
            send,
            view.num_seats,
            game.seat,
            game.decisions,
            view.hand,
        )
        w = self.watches.get(game.game_id, "no StartGame")
        for other in range(view.num_seats):
            if other == game.seat:
                continue
            if isinstance(w, str):
                report(f"inotify read seat{other}", f"no watch: {w}")
            else:
                attempt(f"inotify read seat{other}", w.read, other, len(view.hand))
        return super().choose(view, legal)

    def on_end(self, outcome: Any) -> None:
        w = self.watches.pop(self.game.game_id, None)
        if isinstance(w, Watch):
            os.close(w.fd)


if __name__ == "__main__":
    main(HandInotifyBot())
