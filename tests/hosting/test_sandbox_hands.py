"""Real bots in real games against the channels of issue 34 that carried hands.

tests/hosting/test_sandbox_channels.py shows each kernel channel closed with a probe pair
driven by the test; here the bots that used them play. Two copies of a hostile bot (each in a
folder of its own, as two entrants are) take both seats of a New York game through ``ttr
play``, and each publishes its hand at every decision and reads the other's:

* ``tests/hostile_bots/hand_locks``: ``F_RDLCK`` byte-range locks on the SDK's
  ``__init__.py`` (bound read-only into every jail), read with ``F_GETLK``;
* ``tests/hostile_bots/hand_inotify``: inotify watches on quiet files of the read-only Python
  runtime, the publishing seat opening the files that name its hand's bits.

What a seat read is checked against the game's record (replayed: every seat's real hand at
every decision), not against what the other bot says. Each game is played three ways:
jailed (no read at all), unjailed (``--no-sandbox``), and jailed under a filter without the
channels' rules (the lock, lease and notify commands, ``flock``, the inotify calls). The last
two are the controls: at every decision but the game's first (when the other seat has
published nothing yet) a seat reads the other's exact hand as of that seat's latest decision,
so the jailed assertion can fail, and does where the jail is real but those rules are not.

The last test is the cross-deal channel: a tournament's worker gives a deal replayed in its
second rotation to a new process of the bot ("no process plays a deal twice"), while the
process that played the first rotation lives on beside it. Each process publishes the deal's
fingerprint and its starting hand as locks for as long as it lives; the new one looks for them.
The games are played as a worker plays them (``leaderboard.worker.play_game`` on a
``BotPool``) in this process, so that the control can weaken the jail's filter: a spawned
worker would build its own. Its control is that weaker jail, not ``--no-sandbox``: unjailed, a
pool plays every rotation of a deal in one process (``BotPool.by_deal``), which remembers the
deal in memory and never sees its own locks, so there is no second process to read.
"""

# ruff: noqa: F811 (the arena fixture, imported, is what the tests take)
from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from leaderboard.schedule import ScheduledGame
from leaderboard.worker import BotPool, Entrant, Play, Settings, play_game
from referee.hosting import sandbox
from referee.hosting.sandbox import SandboxConfig
from referee.replay import load_record, replay, start
from tests.hosting.test_sandbox_conformance import (  # noqa: F401 (arena: a fixture)
    CLOCK,
    LIMITS,
    NEW_YORK,
    STARTUP_S,
    Arena,
    arena,
    gone,
    sandbox_available,
    ttr_play,
)

#: the calls the filter refuses so that no lock or watch is shared (sandbox.py's
#: UNAVAILABLE_SYSCALLS and FCNTL_DENIED); the controls run a jail without them
CHANNEL_CALLS = ("flock", "inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch")
#: ``ttr play`` whose jails keep every other rule of the filter
WITHOUT_CHANNEL_RULES = (
    "import sys\n"
    "from referee.hosting import sandbox\n"
    "sandbox.FCNTL_DENIED.clear()\n"
    "sandbox.UNAVAILABLE_SYSCALLS = tuple(\n"
    f"    n for n in sandbox.UNAVAILABLE_SYSCALLS if n not in {CHANNEL_CALLS!r}\n"
    ")\n"
    "from ttr_arena.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
#: Every game here publishes on objects every process on the machine shares (locks on the
#: SDK's ``__init__.py``, opens of quiet files of the runtime), and its controls count what
#: they read: two of these games at once, or anything else opening those files, would be
#: read as the other seat's hand. ``make test`` runs them alone, after the parallel phase.
pytestmark = pytest.mark.serial
BOTS = {"lock": "hand_locks", "inotify": "hand_inotify"}
MODES = ["jailed", "unjailed", "jail-without-channel-rules"]
#: what the jail answers each bot: ENOLCK for a lock command, ENOSYS for inotify
REFUSED = {"lock": "[Errno 37]", "inotify": "[Errno 38]"}
LINE = re.compile(r"^ATTACK (lock|inotify) (wrote|read) seat(\d+): (.*)$", re.M)
HAND = re.compile(r"SUCCEEDED decision (\d+) hand \(([\d, ]*)\)")

Hand = tuple[int, ...]


def _hand(text: str) -> Hand:
    return tuple(int(c) for c in text.replace(",", " ").split())


def hands_by_decision(record: Path) -> tuple[list[int], dict[tuple[int, int], Hand]]:
    """From the record, replayed: the seat of each decision in order, and each seat's real
    hand at its k-th decision (1-based, as the SDK counts them), keyed (seat, k)."""
    data = load_record(record)
    seats: list[int] = []
    hands: dict[tuple[int, int], Hand] = {}
    counts: Counter[int] = Counter()
    for step in replay(start(data, record), data, record):
        seat = step.before.seat
        counts[seat] += 1
        seats.append(seat)
        hands[(seat, counts[seat])] = tuple(step.before.hands[seat])
    return seats, hands


def exact_reads(channel: str, logs: list[str], record: Path) -> tuple[int, int, list[str]]:
    """How many decisions read the other seat's real hand as it was at its latest decision,
    of how many decisions the game had; and every read's outcome.

    A seat's n-th read line is its n-th decision (one other seat, one read each)."""
    seats, hands = hands_by_decision(record)
    latest: Counter[int] = Counter()  #: each seat's decisions so far
    expected: dict[int, list[tuple[int, int]]] = {0: [], 1: []}  #: seat -> (other, its k)
    for seat in seats:
        latest[seat] += 1
        expected[seat].append((1 - seat, latest[1 - seat]))
    exact = 0
    outcomes = []
    for seat, log in enumerate(logs):
        reads = [m for m in LINE.finditer(log) if m.group(1) == channel and m.group(2) == "read"]
        assert len(reads) == len(expected[seat]), (seat, len(reads), len(expected[seat]))
        for read, (other, k) in zip(reads, expected[seat], strict=True):
            outcomes.append(read.group(4))
            got = HAND.fullmatch(read.group(4))
            assert int(read.group(3)) == other
            if got and (int(got.group(1)), _hand(got.group(2))) == (k, hands.get((other, k))):
                exact += 1
    return exact, len(seats), outcomes


def play_pair(arena: Arena, bot: str, mode: str) -> tuple[list[str], Path]:
    """``ttr play`` of two copies of ``bot`` in ``mode``: each seat's log and the record."""
    folders = [arena.hostile(bot, {}) for _ in range(2)]
    extra = ["--seed", "11"] + (["--no-sandbox"] if mode == "unjailed" else [])
    run = (sys.executable, "-c", WITHOUT_CHANNEL_RULES) if mode.startswith("jail-w") else ()
    summary, logs = ttr_play(arena, [f for f, _ in folders], *extra, start=run)
    assert [p["faults"] for p in summary["players"]] == [0, 0], summary
    seat_logs = sorted(logs.iterdir())
    assert [p.name.split("-")[0] for p in seat_logs] == ["seat0", "seat1"]
    for _, marker in folders:
        assert gone(marker) == {}
    return [p.read_text("utf-8", "replace") for p in seat_logs], Path(summary["record"])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("channel", ["lock", "inotify"])
def test_two_seats_read_nothing_of_each_others_hands(arena: Arena, channel: str, mode: str) -> None:
    logs, record = play_pair(arena, BOTS[channel], mode)
    exact, decisions, outcomes = exact_reads(channel, logs, record)
    print(f"{channel} {mode}: the other seat's hand read exactly at {exact} of {decisions}")
    if mode != "jailed":
        # every decision but the game's first, when the other seat has published nothing
        assert exact == decisions - 1, outcomes
        return
    assert exact == 0
    assert not any(o.startswith("SUCCEEDED") for o in outcomes), outcomes
    refused = REFUSED[channel]
    assert all(refused in o for o in outcomes), outcomes
    for log in logs:
        wrote = [m.group(4) for m in LINE.finditer(log) if m.group(2) == "wrote"]
        assert wrote, log[-2000:]
        if channel == "lock":  # the publishing is refused too
            assert all(refused in w for w in wrote), wrote
        else:  # the files that would carry the hand are there, and opened
            assert all(w.startswith("SUCCEEDED") for w in wrote), wrote
            assert f"ATTACK inotify watch: OSError: {refused}" in log


# ---------------------------------------------------------------------------------------------
# a deal replayed in another rotation, by another process of the same bot


def without_channel_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The jails this test starts get the filter without the rules against shared locks and
    watches (and every other rule); the cached filter of the real jail is left alone."""
    with pytest.MonkeyPatch.context() as building:
        building.setattr(sandbox, "FCNTL_DENIED", {})
        kept = tuple(n for n in sandbox.UNAVAILABLE_SYSCALLS if n not in CHANNEL_CALLS)
        building.setattr(sandbox, "UNAVAILABLE_SYSCALLS", kept)
        weaker = sandbox.seccomp_program.__wrapped__()
    assert weaker != sandbox.seccomp_program()
    monkeypatch.setattr(sandbox, "seccomp_program", lambda: weaker)


DEAL_READ = re.compile(r"^ATTACK lock read deal seat(\d+): SUCCEEDED hand \(([\d, ]*)\)$", re.M)


@pytest.mark.parametrize("mode", ["jailed", "jail-without-channel-rules"])
def test_a_replayed_deal_tells_the_new_process_nothing_of_the_old_one(
    arena: Arena, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Both rotations of one deal on a worker: the bot in seat 0, then in seat 1. Its second
    process meets the deal while its first (which held seat 0's starting hand) still lives."""
    if mode != "jailed":
        without_channel_rules(monkeypatch)
    folder, marker = arena.hostile("hand_locks", {})
    entrants = (
        Entrant(1, str(folder), "hand-locks", "1", "0" * 64),
        Entrant(2, str(arena.opponent(0)), "random", "1", "0" * 64),
    )
    config = SandboxConfig(limits=LIMITS)
    settings = Settings(
        "newyork", 2, CLOCK.move_ms, CLOCK.bank_ms, STARTUP_S, str(arena.records), sandbox=config
    )
    pool = BotPool(STARTUP_S, config)
    games = []
    try:
        for rotation in (0, 1):
            seats = entrants[rotation:] + entrants[:rotation]
            game = ScheduledGame(rotation, f"t1-r1-c0-s{rotation}", 1, 0, rotation, 5, (0, 1))
            result = play_game(Play(game.game_id, 1, game, seats), settings, NEW_YORK, pool)
            assert [s.faults for s in result.seats] == [0, 0], result.faults
            games.append(result)
        # the scenario: two processes of the bot, both alive, one per rotation
        processes = [b.process for w, b in pool.bots.items() if w[0] == str(folder)]
        assert len(processes) == 2, pool.bots
        assert all(p is not None and p.poll() is None for p in processes)
    finally:
        pool.close()
    assert gone(marker) == {}
    first, second = (Path(g.seats[rotation].log_path or "") for rotation, g in enumerate(games))
    assert "ATTACK lock published deal seat0" in first.read_text()
    log = second.read_text()
    # seat 0's real starting hand in the second game, held there by the random bot
    record = Path(games[1].record_path or "")
    dealt = tuple(start(load_record(record), record).start.hands[0])
    read = [(int(s), _hand(h)) for s, h in DEAL_READ.findall(log)]
    print(f"deal {mode}: read {read}, seat 0 was dealt {dealt}")
    if mode != "jailed":
        assert read == [(0, dealt)], log[-3000:]
        return
    assert read == []
    published = re.search(r"^ATTACK lock published deal seat1: (.*)$", log, re.M)
    board = re.search(r"^ATTACK lock read deal board: (.*)$", log, re.M)
    assert published and board, log[-3000:]
    assert REFUSED["lock"] in published.group(1) and REFUSED["lock"] in board.group(1)
