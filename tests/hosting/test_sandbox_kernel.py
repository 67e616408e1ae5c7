"""The jail's seccomp filter against a bot that goes for the kernel (issue 21, item 1).

``tests/hostile_bots/kernel`` probes what a container runtime's default profile refuses and
uses the session keyring as a channel between seats. Each probe is built so that the kernel
itself answers something else than EPERM/ENOSYS (an id, 0, EFAULT, EINVAL): outside a jail
they all reach the kernel (``test_the_probes_reach_the_kernel_unjailed``), so a refusal in
the jail is the filter's. Collusion needs the referee to run under a session keyring, as an
SSH login (pam_keyinit) or a systemd service does; the tests start ``ttr play`` under one.
"""

# ruff: noqa: F811 (the arena fixture, imported, is what the tests take)
from __future__ import annotations

import platform
import re
import subprocess
import sys

import pytest

from tests.hosting.test_sandbox_conformance import (  # noqa: F401 (arena: a fixture)
    CLOCK,
    HOSTILE,
    LIMITS,
    ROOT,
    Arena,
    arena,
    attacks,
    check_contained,
    failed,
    gone,
    play,
    sandbox_available,
    ttr_play,
)

PROBES = HOSTILE / "kernel" / "probes.py"
#: a probe whose answer outside a jail depends on privileges (unshare of a network namespace
#: needs root or a user namespace first); every other one must reach the kernel
PRIVILEGED = {"unshare a network namespace", "unshare a user namespace"}

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "aarch64"), reason="the probes know x86-64 and arm64"
)


def test_the_probes_reach_the_kernel_unjailed() -> None:
    done = subprocess.run(
        [sys.executable, str(PROBES)], capture_output=True, text=True, timeout=60, check=True
    )
    tried = attacks(done.stdout)
    assert len(tried) == 10, done.stdout
    for what, outcome in tried.items():
        if what not in PRIVILEGED:
            assert outcome.startswith("SUCCEEDED"), (what, outcome)
    # the keyring carries a hand from one process to the next of the same session
    done = subprocess.run(
        [sys.executable, str(PROBES), "--store"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert attacks(done.stdout)["fetch"] == "hand of seat 0"


def test_the_jail_refuses_every_probe(arena: Arena) -> None:
    played = play(arena, "kernel")
    check_contained(played, hostile_may_fault=False)
    tried = played.attacks
    for what in [w for w in tried if not w.startswith("keyring")]:
        expected = "Errno 38" if what == "clone3" else "Errno 1]"
        assert failed(tried[what]) and expected in tried[what], (what, tried[what])
    assert len([w for w in tried if not w.startswith("keyring")]) == 10, tried


def _play_under_a_session_keyring(arena: Arena, *extra: str) -> tuple[dict[str, str], ...]:
    """``ttr play`` of two kernel bots, started under a session keyring of its own; each
    seat's ``ATTACK`` lines."""
    folders = [arena.hostile("kernel", {})[0] for _ in range(2)]
    join = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); import probes; "
        "probes.join_session_keyring(); "
        "os.execv(sys.executable, [sys.executable, '-m', 'ttr_arena.cli', *sys.argv[2:]])"
    )
    start = (sys.executable, "-c", join, str(PROBES.parent))
    summary, logs = ttr_play(arena, folders, *extra, start=start)
    assert [p["faults"] for p in summary["players"]] == [0, 0], summary
    seat_logs = sorted(logs.iterdir())
    assert [p.name.split("-")[0] for p in seat_logs] == ["seat0", "seat1"]
    return tuple(attacks(p.read_text("utf-8", "replace")) for p in seat_logs)


def test_seats_cannot_collude_through_the_session_keyring(arena: Arena) -> None:
    for seat, tried in enumerate(_play_under_a_session_keyring(arena)):
        other = 1 - seat
        write, read = tried[f"keyring write seat{seat}"], tried[f"keyring read seat{other}"]
        assert failed(write) and "Errno 1]" in write, write
        assert failed(read) and "Errno 1]" in read, read


def test_unjailed_the_same_bots_read_each_others_hands(arena: Arena) -> None:
    """The control: without the jail the channel is real, so the test above can fail."""
    for seat, tried in enumerate(_play_under_a_session_keyring(arena, "--no-sandbox")):
        assert tried[f"keyring write seat{seat}"].startswith("SUCCEEDED key"), tried
        read = tried[f"keyring read seat{1 - seat}"]
        assert re.fullmatch(r"SUCCEEDED \(\d+(, \d+)*\)", read), read
