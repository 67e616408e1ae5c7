"""The bots' package of a Ray run (leaderboard/cluster.py: ``pack_bots``, ``unpack_bots``),
without a Ray instance: what the driver packs and what a node keeps."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import warnings
import zipfile
from pathlib import Path

import pytest

from leaderboard.cluster import GameActor, pack_bots, unpack_bots
from leaderboard.worker import Entrant, Settings, Validate, Validation
from referee.hosting.sandbox import SandboxConfig
from tests.leaderboard.test_tournament import GREEDY, PLANNER, RANDOM, ROOT

#: each build appends a line to builds.txt in the bot's folder
_COUNTS_BUILDS = """\
from pathlib import Path
with Path("builds.txt").open("a") as f:
    f.write("built\\n")
"""


@pytest.fixture
def node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The node's temporary folder (its cache of bots is ttr-bots/ there)."""
    folder = tmp_path / "node"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


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


def _compiled(parent: Path) -> str:
    """The random sample bot with a build step that counts its runs."""
    folder = parent / "compiled"
    shutil.copytree(RANDOM, folder, ignore=shutil.ignore_patterns("__pycache__", ".ttr-*"))
    with (folder / "bot.toml").open("a") as f:
        f.write('build = ["{python}", "build.py"]\n')
    (folder / "build.py").write_text(_COUNTS_BUILDS)
    return str(folder)


def test_a_compiled_bot_is_built_once_on_a_node_across_packages_of_other_entrants(
    tmp_path: Path, node: Path
) -> None:
    """Two league nights with different entrants are two packages; the bot both share is
    unpacked and built once on the node (kept by its own hash), and played both nights."""
    compiled = _compiled(tmp_path)
    settings = Settings("usa", 2, 1000, 5000, 10.0, None, sandbox=SandboxConfig(enabled=False))
    homes = []
    for night, other in enumerate((GREEDY, PLANNER)):
        package = tmp_path / f"night-{night}.zip"
        hashes = pack_bots([compiled, other, settings.validation_bot], package)
        # as RayWorkers hands it: the validation bot named by its hash in the node's cache
        packed = dataclasses.replace(settings, validation_bot=hashes[settings.validation_bot])
        actor = GameActor(packed, package.read_bytes())
        try:
            entrant = Entrant(1, compiled, "compiled", "1", hashes[compiled])
            answer, _ = actor.run(Validate(compiled, entrant, seed=night))
            assert isinstance(answer, Validation) and answer.ok, answer
            homes.append(actor._staged(entrant))
        finally:
            actor.close()
    assert homes[0] == homes[1] == node / "ttr-bots" / hashes[compiled]
    assert (homes[0] / "builds.txt").read_text() == "built\n"  # once, for both nights
    assert not (Path(compiled) / "builds.txt").exists()  # the driver's folder is not built


def test_a_bot_whose_copy_differs_is_refused_and_not_kept(tmp_path: Path, node: Path) -> None:
    package = tmp_path / "bots.zip"
    digest = pack_bots([RANDOM], package)[RANDOM]
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(package) as zf, zipfile.ZipFile(tampered, "w") as out:
        for info in zf.infolist():
            data = zf.read(info)
            out.writestr(info, data + b"\n# changed\n" if info.filename.endswith(".py") else data)
    home, refusal = unpack_bots(tampered.read_bytes())
    assert f"its copy of bot {digest[:12]} hashes" in refusal
    assert not (home / digest).exists() and not (home / f"{digest}.checked").exists()
    home, refusal = unpack_bots(package.read_bytes())  # the real one is then unpacked
    assert refusal == "" and (home / digest / "bot.py").is_file()
