"""A bot folder is read one way (issue 21, items 3 and 4): regular files, folders and links that
stay inside it. A FIFO, a socket or device, a file past the limits and a link out of the folder
are refused with one line naming the path, in the content hash, the cluster's package and a
tournament (which leaves the bot out and plays on); links inside are kept as links."""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import pytest

from leaderboard.cluster import pack_bots, unpack_bots
from referee.hosting.folder import MAX_FILE_BYTES, BotFolderError, content_hash, entries
from referee.hosting.launcher import load_bot_config
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
TRICKS = ROOT / "tests" / "hostile_bots" / "folder_tricks"
SECRET = "the-organisers-secret-4711"


@pytest.fixture
def bot(tmp_path: Path) -> Path:
    folder = tmp_path / "tricks"
    shutil.copytree(TRICKS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def test_a_fifo_is_refused_without_blocking_the_reader(bot: Path) -> None:
    os.mkfifo(bot / "pipe")
    with pytest.raises(BotFolderError, match=r"tricks: pipe is a FIFO; a bot folder holds only"):
        content_hash(bot)


def test_a_huge_sparse_file_is_refused_before_it_is_read(bot: Path) -> None:
    with (bot / "huge.bin").open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk, and never read
    with pytest.raises(BotFolderError, match=r"huge.bin is \d+ bytes, over the 1024 MiB"):
        content_hash(bot)


@pytest.mark.parametrize("how", ["absolute", "relative", "dangling", "through-a-folder-link"])
def test_a_link_out_of_the_folder_is_refused(bot: Path, tmp_path: Path, how: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    if how == "absolute":
        (bot / "key").symlink_to(secret)
    elif how == "relative":
        (bot / "key").symlink_to("../secret.txt")
    elif how == "dangling":
        (bot / "key").symlink_to(tmp_path / "not-there")
    else:
        (bot / "key").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(BotFolderError, match=r"key is a link out of the bot folder"):
        entries(bot)


def test_links_inside_stay_links_in_the_hash_and_the_package(
    bot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (bot / "lib").mkdir()
    (bot / "lib" / "data.txt").write_text("inside")
    (bot / "data.txt").symlink_to("lib/data.txt")
    [link] = [e for e in entries(bot) if e.rel == "data.txt"]
    assert link.link == "lib/data.txt"
    before = content_hash(bot)
    (bot / "lib" / "data.txt").write_text("changed")  # the link's target text is what is hashed
    assert content_hash(bot) != before  # ... and the file it points to is hashed itself
    package = tmp_path / "bots.zip"
    hashes = pack_bots([str(bot)], package)
    with zipfile.ZipFile(package) as zf:
        names = zf.namelist()
    assert any(n.endswith("/data.txt") for n in names)
    node = tmp_path / "node"  # the node's temporary folder, where it keeps its bots
    node.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(node))
    home, refusal = unpack_bots(package.read_bytes())
    assert refusal == ""
    copy = home / hashes[str(bot)]
    assert (copy / "data.txt").is_symlink()
    assert os.readlink(copy / "data.txt") == "lib/data.txt"
    assert (copy / "data.txt").read_text() == "changed"


def test_the_packer_never_reads_what_a_link_out_points_to(bot: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    (bot / "key").symlink_to(secret)
    with pytest.raises(BotFolderError):
        pack_bots([str(bot)], tmp_path / "bots.zip")


def test_a_tournament_leaves_the_folder_out_and_plays_on(
    bot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(bot / "pipe")
    args = ["tournament", "run", "--db", str(bot.parent / "night.db"), "--players", "2"]
    args += ["--rounds", "1", str(bot), str(ROOT / "sample_bots" / "random")]
    args += [str(ROOT / "sample_bots" / "greedy")]
    assert cli_main(args) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert f"LEFT OUT  hostile-folder-tricks 1.0.0: {bot}: pipe is a FIFO" in text
    assert "2 games in the schedule" in text


def test_an_honest_folder_hashes_as_before() -> None:
    """Regular files hash exactly as they always did: stored bots keep their identity."""
    import hashlib

    folder = ROOT / "sample_bots" / "random"
    digest = hashlib.sha256()
    for entry in entries(folder):
        assert entry.link is None
        digest.update(entry.rel.encode() + b"\0" + entry.path.read_bytes() + b"\0")
    assert content_hash(folder) == digest.hexdigest()


def test_the_same_rule_holds_when_a_bot_is_loaded_to_play(
    bot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Launch is the fourth place a folder is read (after hash, pack and build): ``ttr play``
    refuses a folder with a link out before any bot starts, naming the link."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    (bot / "key").symlink_to(secret)
    with pytest.raises(BotFolderError, match=r"key is a link out of the bot folder"):
        load_bot_config(bot)
    with pytest.raises(SystemExit) as stopped:
        cli_main(["play", str(bot), str(ROOT / "sample_bots" / "random")])
    code, err = stopped.value.code, capsys.readouterr().err
    assert code != 0 and "key is a link out of the bot folder" in err and SECRET not in err
