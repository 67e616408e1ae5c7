"""The jailed build's cache (referee/hosting/build.py, ``CACHE_DIR``): per folder, bounded,
and brought back through the same filters as the rest of what a build leaves.

The builds here are a few lines of Python (cheap); the Go kit's real cache reuse after an edit
is in tests/hosting/test_starter_kits.py, on the kit that file already built. Skipped where
bots cannot be jailed (failed where ``CI`` is set), as tests/hosting/test_build_sandbox.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from referee.hosting import build, sandbox
from referee.hosting.build import CACHE_DIR, BotBuildError
from referee.hosting.folder import content_hash
from referee.hosting.launcher import load_bot_config

SECRET = "the-organisers-secret-4711"

# A build that uses its cache as Go would: reads what an earlier build left in $GOCACHE, adds
# an entry named after its folder, and writes what it saw into the folder.
_USES_CACHE = """\
import os, pathlib, sys
cache = pathlib.Path(os.environ["GOCACHE"])
cache.mkdir(parents=True, exist_ok=True)
seen = sorted(p.name for p in cache.iterdir())
name = pathlib.Path("bot.toml").read_text().split('"')[1]  # the folder's: its cwd is /bot
(cache / ("entry-" + name)).write_text("compiled")
pathlib.Path("seen.txt").write_text(" ".join(seen))
extra = sys.argv[1:]
if extra and extra[0] == "fill":
    (cache / "big").write_bytes(b"x" * int(extra[1]) * 1024 * 1024)
"""


@pytest.fixture(autouse=True)
def _jail_available() -> None:
    reason = sandbox.unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"bots cannot be sandboxed here: {reason} (CI is set: a failure)")
    pytest.skip(f"bots cannot be sandboxed here: {reason}")


def _bot(parent: Path, name: str, script: str = _USES_CACHE, args: str = "") -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\ncommand = ["{{python}}", "bot.py"]\n'
        f'build = ["{{python}}", "build.py"{args}]\n',
        encoding="utf-8",
    )
    (folder / "build.py").write_text(script, encoding="utf-8")
    return folder


def _rebuild(folder: Path, config: sandbox.SandboxConfig | None = None) -> None:
    with (folder / "build.py").open("a", encoding="utf-8") as f:
        f.write("# a one-line edit\n")
    load_bot_config(folder, config)


def test_the_cache_survives_the_jail_belongs_to_its_folder_and_is_no_part_of_the_bot(
    tmp_path: Path,
) -> None:
    a = _bot(tmp_path, "alice")
    b = _bot(tmp_path, "bob")
    load_bot_config(a)
    assert (a / CACHE_DIR / "go" / "entry-alice").read_text() == "compiled"
    # What the bot is (the ladder's hash, the stamp's fingerprint) leaves the cache out.
    hash_before, fingerprint_before = content_hash(a), build.fingerprint(a)
    (a / CACHE_DIR / "go" / "another").write_text("x")
    assert (content_hash(a), build.fingerprint(a)) == (hash_before, fingerprint_before)
    assert build.ensure_built(load_bot_config(a)) is False  # a cache entry is not an edit
    _rebuild(a)
    assert (a / "seen.txt").read_text() == "another entry-alice"  # the edit's build found it
    load_bot_config(b)
    assert (b / "seen.txt").read_text() == ""  # not alice's cache: its own, empty
    assert sorted(p.name for p in (b / CACHE_DIR / "go").iterdir()) == ["entry-bob"]


def test_a_cache_over_its_bound_is_dropped_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``build_mb=16``: the cache may hold 8 MB; a build that leaves 10 MB there loses it,
    and the next build starts cold (it sees no entry) and says nothing."""
    folder = _bot(tmp_path, "greedy", args=', "fill", "10"')
    config = sandbox.SandboxConfig(build_mb=16)
    load_bot_config(folder, config)
    err = capsys.readouterr().err
    assert "its build cache" in err and "over its bound of 8 MB" in err
    assert "dropped, its next build starts cold" in err
    assert not (folder / CACHE_DIR).exists()
    (folder / "bot.toml").write_text(
        (folder / "bot.toml").read_text().replace(', "fill", "10"', ""), encoding="utf-8"
    )
    load_bot_config(folder, config)
    assert (folder / "seen.txt").read_text() == ""
    assert "dropped" not in capsys.readouterr().err
    assert (folder / CACHE_DIR / "go" / "entry-greedy").is_file()


_PLANTS = """\
import os, pathlib, sys
cache = pathlib.Path(os.environ["GOCACHE"])
cache.mkdir(parents=True, exist_ok=True)
kind, target = sys.argv[1:3]
if kind == "fifo":
    os.mkfifo(cache / "planted")
else:
    os.symlink(target, cache / "planted")
"""


@pytest.mark.parametrize("kind", ["absolute", "outside", "fifo"])
def test_a_cache_holding_a_link_out_or_a_fifo_is_refused(tmp_path: Path, kind: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    target = {"absolute": str(secret), "outside": "../../../secret.txt", "fifo": "-"}[kind]
    folder = _bot(tmp_path, "planter", _PLANTS, args=f', "{kind}", "{target}"')
    with pytest.raises(BotBuildError, match="what its build left was refused") as caught:
        load_bot_config(folder)
    assert SECRET not in str(caught.value)
    planted = folder / CACHE_DIR / "go" / "planted"
    assert not planted.is_symlink() and not planted.exists()


def test_a_cache_swapped_for_a_link_is_not_followed(tmp_path: Path) -> None:
    """A build that makes the cache itself a link (to a folder of the bot's own) gets it left
    behind in the jail; one already on the host is dropped, never followed, before a build."""
    folder = _bot(
        tmp_path,
        "swapper",
        "import os, shutil\nshutil.rmtree('.ttr-cache', ignore_errors=True)\n"
        "os.makedirs('gen', exist_ok=True)\nos.symlink('gen', '.ttr-cache')\n",
    )
    load_bot_config(folder)
    assert not (folder / CACHE_DIR).is_symlink()
    (folder / "elsewhere").mkdir()
    (folder / "elsewhere" / "keep").write_text("mine")
    (folder / CACHE_DIR).symlink_to("elsewhere")
    _rebuild(folder)
    assert (folder / "elsewhere" / "keep").read_text() == "mine"
    assert not (folder / CACHE_DIR).is_symlink()
