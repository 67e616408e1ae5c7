"""Hostile bot: the kernel's shared state and powers (issue 21, item 1).

At StartGame it runs every probe of ``probes.py`` (ptrace, perf events, userfaultfd, new
namespaces, BPF, io_uring, clone3, the keyrings). At every decision it stores its own hand in
the session keyring under ``ttr-seat<N>`` and tries to read every other seat's: two of these
bots, started by a referee that runs under a session keyring (an SSH login, a systemd
service), read each other's hands exactly, every turn, unless the jail refuses the keyring
calls. What it reads is reported as ``ATTACK keyring read seat<N>: SUCCEEDED <hand>``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.games.board import Action, SeatView
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, attempt, main, report
    from tests.hostile_bots.kernel import probes
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    sys.path.append(str(Path(__file__).resolve().parent))
    import probes
    from _common import HostileBot, attempt, main, report


class KernelBot(HostileBot):
    def attack_at_start(self, game: Game) -> None:
        probes.run_all(report)

    def choose(self, view: SeatView, legal: Sequence[Action]) -> Action:
        game = self.game
        hand = repr(view.hand).encode()
        attempt(f"keyring write seat{game.seat}", probes.store, f"ttr-seat{game.seat}", hand)
        for other in range(view.num_seats):
            if other != game.seat:
                attempt(f"keyring read seat{other}", probes.fetch, f"ttr-seat{other}")
        return super().choose(view, legal)


if __name__ == "__main__":
    main(KernelBot())
