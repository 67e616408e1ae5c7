"""The timing channel benchmark still starts its two jails and prints its table.

``bench/channels.py`` drives the sandbox's own ``prepare``/``popen`` and a probe of its own
(``bench/channels/timing_probe.py``) over a line protocol, so a change to the jail (its
folder's path inside, its filter, its limits) can break it without failing anything else.
Only that it runs, measures each channel and prints a row for each is checked; its figures
are for bench/README.md and docs/security.md, and depend on the machine's load.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from referee.hosting.sandbox import unavailable_reason

ROOT = Path(__file__).resolve().parent.parent
#: the smallest run: one CPU row of 128 slots of 2 ms, and each page cache row on 64 pages
ARGS = "--channel cpu cache --slot-ms 2 --seconds 0.1 --placement spread --encoding onoff "
ARGS += "--rounds 1 --pages 64"


def test_the_channels_bench_measures_each_channel_and_prints_its_table() -> None:
    reason = unavailable_reason()
    if reason is not None:
        pytest.fail(f"the bot sandbox cannot run on this machine: {reason}")
    done = subprocess.run(
        [sys.executable, "bench/channels.py", *ARGS.split()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert any(line.startswith("| channel | method |") for line in lines), done.stdout
    rows = [line for line in lines if line.startswith(("| cpu |", "| cache |"))]
    assert len(rows) == 1 + 5, done.stdout  # one CPU row, five page cache rows
    assert all(len(row.split("|")) == 13 for row in rows), rows
