"""The machine's faults under the ladder (issue 35, item 8). A full disk, on a real full file
system: a small tmpfs mounted as the data folder (root only; skipped elsewhere) and filled up.

An upload meeting the full disk is refused with :class:`DiskFull` (507), nothing of it stored,
rather than a bare 500; the ladder pauses on it (``SeasonInfo.state``, what ``/api/season``
shows), refuses every upload meanwhile, and goes on by itself once there is room. Any other
error ends the ladder thread and is handed to ``on_death`` (the server exits on it). The whole
server on a full disk, and exiting, is tests/cli/test_server_ladder_faults.py's.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.ladder.model import PAUSED, RUNNING, STOPPED, DiskFull, SubmissionError
from leaderboard.ladder.season import Pool, Season
from leaderboard.ladder.service import Ladder
from referee.hosting.sandbox import SandboxConfig
from referee.hosting.upload import pack
from tests.leaderboard.test_ladder import SAMPLES, variant_of, wait_for


@contextlib.contextmanager
def small_disk(path: Path, mb: int) -> Iterator[Path]:
    """A tmpfs of ``mb`` MB mounted at ``path`` (root only), unmounted afterwards."""
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={mb}m,mode=0700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(folder: Path) -> Path:
    """A file taking every free byte of ``folder``'s disk."""
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as f:
        for size in (1 << 20, 4096, 1):
            chunk = bytes(size)
            try:
                while True:
                    f.write(chunk)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
    return filler


def test_an_upload_on_a_full_disk_is_a_507_and_the_ladder_pauses_until_there_is_room(
    tmp_path: Path,
) -> None:
    with small_disk(tmp_path / "data", 8) as data:
        ladder = Ladder(Season(pools=(Pool("usa@1", 2),)), data, sandbox=SandboxConfig(False))
        ladder.retry_s = 0.2
        ladder.open()
        try:
            store = ladder.store()
            alice = ladder.authenticate(store.add_author("alice"))
            assert alice is not None
            ladder.start()
            assert ladder.season().state == RUNNING
            filler = fill(data)

            with pytest.raises(DiskFull, match="disk is full") as refused:
                ladder.submit(alice, pack(SAMPLES / "random"))
            assert refused.value.status == 507
            assert ladder.versions(alice) == []
            assert list((data / "versions").iterdir()) == []
            assert list((data / "uploads").iterdir()) == []

            wait_for("the ladder paused", lambda: ladder.season().state == PAUSED, ladder)
            paused = ladder.season()
            assert "disk is full" in paused.reason and paused.since is not None
            with pytest.raises(DiskFull, match="uploads are refused until it has room"):
                ladder.submit(alice, pack(variant_of(SAMPLES / "greedy", tmp_path, "x")))

            filler.unlink()
            wait_for("the ladder going on", lambda: ladder.season().state == RUNNING, ladder)
            assert ladder.season().reason == ""
            submitted = ladder.submit(alice, pack(SAMPLES / "random"))
            assert submitted.new and submitted.version.number == 1
            assert ladder.error is None
        finally:
            ladder.stop()


def test_a_ladder_thread_that_dies_tells_on_death_and_takes_no_more_uploads(
    tmp_path: Path,
) -> None:
    deaths: list[BaseException] = []
    ladder = Ladder(
        Season(pools=(Pool("usa@1", 2),)),
        tmp_path / "data",
        sandbox=SandboxConfig(False),
        on_death=deaths.append,
    )
    ladder.open()
    try:
        alice = ladder.authenticate(ladder.store().add_author("alice"))
        assert alice is not None
        with sqlite3.connect(ladder.db_path) as db:
            db.execute("DROP TABLE validations")  # a store of something else now
        ladder.start()
        wait_for("the ladder's death", lambda: bool(deaths))
        assert "missing tables: validations" in str(deaths[0])
        assert ladder.error is deaths[0] and not ladder.alive()
        info = ladder.season()
        assert info.state == STOPPED and "missing tables: validations" in info.reason
        with pytest.raises(SubmissionError, match="the ladder has stopped") as refused:
            ladder.submit(alice, pack(SAMPLES / "random"))
        assert refused.value.status == 503
    finally:
        ladder.stop()
