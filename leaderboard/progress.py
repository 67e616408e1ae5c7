"""What an organiser watches while a tournament runs: validation verdicts, then a progress
bar (games done / total, games per minute, ETA) over a live top 5, and a line for each bot
disabled for its faults (its skipped games count as done).

On a terminal it is a rich live display on stderr; anywhere else (a CI log, a pipe) it prints
a plain line at each tenth of the games, so logs stay short and readable. Either way stdout
is left for the final leaderboard. The live top 5 follows games as they arrive and is a
preview only: the table printed at the end is recomputed from the store in schedule order.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

from rich.console import Console, Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from leaderboard.ratings import Rating
from leaderboard.runner import Events
from leaderboard.store import GameResult, SeatResult
from leaderboard.worker import Entrant, Validation
from referee.match import fault_words

FAULT_LINES = 20  #: faulty seats shown per run


class _PerMinute(ProgressColumn):
    """Games per minute (rich's own speed column is per second)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-- games/min" if speed is None else f"{speed * 60:.1f} games/min")


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class TournamentDisplay:
    """Turns a run's :class:`~leaderboard.runner.Events` into output. A context manager: the
    live display is started and stopped around the run."""

    def __init__(self, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.console = Console(file=self.stream, highlight=False)
        self.live = self.console.is_terminal if live is None else live
        self.progress = Progress(
            TextColumn("games"),
            BarColumn(),
            MofNCompleteColumn(),
            _PerMinute(),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.progress.add_task("games", total=None, start=False)
        self.top: list[tuple[Entrant, Rating]] = []
        self.total = 0
        self.done = 0
        self.first_done = 0  #: games already stored when this run began
        self.started = time.monotonic()
        self.next_line = 0
        self.fault_lines = 0
        self._live: Live | None = None

    # events ---------------------------------------------------------------------------------

    def events(self) -> Events:
        return Events(
            validating=self.validating,
            validated=self.validated,
            playing=self.playing,
            played=self.played,
            failed=self.failed,
            faulty=self.faulty,
            disabled=self.disabled,
        )

    def _print(self, text: str) -> None:
        if self._live is not None:
            self._live.console.print(text, markup=False)
        else:
            print(text, file=self.stream, flush=True)

    def validating(self, count: int) -> None:
        self._print(f"validating {count} bot(s): one game each against copies of a sample bot")

    def validated(self, v: Validation) -> None:
        if v.ok:
            self._print(f"  ok    {v.entrant.label}")
        else:
            self._print(f"  LEFT OUT  {v.entrant.label}: {v.reason}")

    def playing(self, total: int, done: int) -> None:
        self.total, self.done, self.first_done = total, done, done
        self.started = time.monotonic()
        self.next_line = done + self._step()
        left = total - done
        resumed = f" ({done} already stored; {left} to play)" if done else ""
        self._print(f"{total} games in the schedule{resumed}")
        self.progress.update(self.task, total=total, completed=done)
        self.progress.start_task(self.task)
        if self.live and left:
            self._live = Live(self._renderable(), console=self.console, refresh_per_second=4)
            self._live.start()

    def played(self, game: GameResult, top: list[tuple[Entrant, Rating]]) -> None:
        self.done += 1
        self.top = top
        self.progress.advance(self.task)
        if self._live is not None:
            self._live.update(self._renderable())
        elif self.done >= self.next_line or self.done == self.total:
            self.next_line = self.done + self._step()
            self._print(self._line())

    def faulty(self, game: GameResult, seat: SeatResult, entrant: Entrant) -> None:
        """One line per faulty seat, naming its first fault and its log, for the first
        :data:`FAULT_LINES` of a run (the store keeps every fault; a broken bot would
        otherwise fill the screen)."""
        self.fault_lines += 1
        if self.fault_lines > FAULT_LINES:
            if self.fault_lines == FAULT_LINES + 1:
                self._print("  (more faulty games: not shown here; the store keeps every fault)")
            return
        what = ""
        first = next((f for f in game.faults if f.seat == seat.seat), None)
        if first is not None:
            what = f" (first: {fault_words(first.kind, first.rule, first.message)})"
        log = f"; log: {seat.log_path}" if seat.log_path else ""
        self._print(
            f"  faults: game {game.game_id}, seat {seat.seat} {entrant.label}: "
            f"{seat.faults}{what}{log}"
        )

    def disabled(self, entrant: Entrant, reason: str, skipped: int) -> None:
        """A bot disabled for its faults: always shown (once per bot), with why; the games
        skipped for it count as done, so the bar and the ETA stay true."""
        games = f"; {skipped} of its games not yet begun skipped" if skipped else ""
        self._print(f"  DISABLED  {entrant.label}: {reason}{games}")
        if skipped:
            self.done += skipped
            self.first_done += skipped  # not played: the speed counts games played
            self.progress.advance(self.task, skipped)
            if self._live is not None:
                self._live.update(self._renderable())
            elif self.done >= self.next_line or self.done == self.total:
                self.next_line = self.done + self._step()
                self._print(self._line())

    def failed(self, key: str, error: str) -> None:
        last = error.strip().splitlines()[-1] if error.strip() else "unknown error"
        self._print(f"game {key} FAILED (left for --resume): {last}")

    # rendering ------------------------------------------------------------------------------

    def _step(self) -> int:
        return max(1, self.total // 10)

    def _line(self) -> str:
        played = self.done - self.first_done
        speed = played / max(time.monotonic() - self.started, 1e-9)  # games/s this run
        eta = _clock((self.total - self.done) / speed) if played else "--"
        leader = (
            f", leader {self.top[0][0].label} ({self.top[0][1].conservative:.1f})"
            if self.top
            else ""
        )
        return (
            f"  {self.done}/{self.total} games ({100 * self.done / max(1, self.total):.0f}%), "
            f"{speed * 60:.1f} games/min, ETA {eta}{leader}"
        )

    def _table(self) -> Table:
        table = Table(title="live top 5 (preview)", title_justify="left", box=None)
        for name, justify in (("#", "right"), ("bot", "left"), ("rating", "right")):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        table.add_column("mu", justify="right")
        table.add_column("sigma", justify="right")
        for i, (entrant, rating) in enumerate(self.top, start=1):
            table.add_row(
                str(i),
                entrant.label,
                f"{rating.conservative:.1f}",
                f"{rating.mu:.2f}",
                f"{rating.sigma:.2f}",
            )
        return table

    def _renderable(self) -> Group:
        return Group(self.progress, self._table())

    # context manager ------------------------------------------------------------------------

    def __enter__(self) -> TournamentDisplay:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.update(self._renderable())
            self._live.stop()
            self._live = None
