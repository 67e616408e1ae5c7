"""The bots' package of a Ray run (leaderboard/cluster.py: ``pack_bots``, ``unpack_bots``),
without a Ray instance: what the driver packs and what a node keeps."""

from __future__ import annotations

import os
import shutil
import warnings
import zipfile
from pathlib import Path

from leaderboard.cluster import pack_bots
from tests.leaderboard.test_tournament import RANDOM, ROOT


def test_a_bot_entered_under_two_paths_is_packed_once_without_a_warning(
    tmp_path: Path,
) -> None:
    """The validation bot (an absolute path) is also an entrant (``make demo`` enters
    ``sample_bots/random``), and two copies of a bot hash the same: each is packed once,
    so zipfile has no "Duplicate name" to warn about."""
    copy = tmp_path / "copy"
    shutil.copytree(RANDOM, copy, ignore=shutil.ignore_patterns("__pycache__", ".ttr-*"))
    relative = os.path.relpath(RANDOM, ROOT)
    package = tmp_path / "bots.zip"
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a "Duplicate name" UserWarning fails the test
            hashes = pack_bots([RANDOM, relative, str(copy)], package)
    finally:
        os.chdir(cwd)
    assert len(set(hashes.values())) == 1 and set(hashes) == {RANDOM, relative, str(copy)}
    with zipfile.ZipFile(package) as zf:
        names = zf.namelist()
    assert len(names) == len(set(names))
    assert {name.split("/")[1] for name in names} == set(hashes.values())
