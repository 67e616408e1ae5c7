"""What a jailed build leaves costs the referee no more than the build's own limits, and the
referee never writes through a link in the bot folder (referee/hosting/build.py; issue 34,
item 4).

A build's files come back as a tar stream that the referee unpacks on the host, in its own
time: a cache of 60,000 empty files once cost it 335 s outside the build's time limit, and a
later build wrote through links an earlier one had left in its cache onto the launcher's own
``.ttr-build.log`` and ``.ttr-build.lock``. These builds are real, jailed and cheap (a shell
line or a few lines of Python); skipped where bots cannot be jailed (failed where ``CI`` is
set), as tests/hosting/test_build_sandbox.py.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest

from referee.hosting import build, sandbox
from referee.hosting import folder as folder_mod
from referee.hosting.build import CACHE_DIR, BotBuildError
from referee.hosting.folder import MAX_FILES
from referee.hosting.launcher import load_bot_config


@pytest.fixture(autouse=True)
def _jail_available() -> None:
    reason = sandbox.unavailable_reason()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"bots cannot be sandboxed here: {reason} (CI is set: a failure)")
    pytest.skip(f"bots cannot be sandboxed here: {reason}")


def _bot(parent: Path, name: str, build_line: str, script: str = "") -> Path:
    folder = parent / name
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\ncommand = ["{{python}}", "bot.py"]\n{build_line}\n',
        encoding="utf-8",
    )
    if script:
        (folder / "build.py").write_text(script, encoding="utf-8")
    return folder


def _shell(line: str) -> str:
    """A build of one shell line: no Python start-up, so making 60,000 files takes ~1 s."""
    return f'build = ["/bin/sh", "-c", "{line}"]'


@pytest.fixture
def unpacked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every regular file the referee's tarfile writes, by path."""
    written: list[str] = []
    original = tarfile.TarFile.makefile

    def makefile(self: tarfile.TarFile, tarinfo: tarfile.TarInfo, targetpath: str) -> None:
        written.append(targetpath)
        original(self, tarinfo, targetpath)

    monkeypatch.setattr(tarfile.TarFile, "makefile", makefile)
    return written


def _files(folder: Path) -> int:
    return sum(len(names) for _dir, _dirs, names in os.walk(folder))


# ---------------------------------------------------------------------------------------------
# entries: a bot folder's bound (folder.MAX_FILES), counted as the stream is read


def test_a_cache_of_60000_empty_files_is_dropped_before_the_referee_unpacks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], unpacked: list[str]
) -> None:
    """Zero bytes, so under the cache's byte bound: the entry count drops it. The referee stops
    reading the stream at entry 50,001 of the cache: it writes none of it, the build still
    succeeds (its own files unpacked)."""
    folder = _bot(
        tmp_path,
        "hoarder",
        _shell(
            "mkdir -p .ttr-cache/go && cd .ttr-cache/go && seq 60000 | xargs touch "
            "&& echo built > ../../out.txt"
        ),
    )
    load_bot_config(folder)
    err = capsys.readouterr().err
    assert f"its build cache {folder / CACHE_DIR} holds more than {MAX_FILES} entries" in err
    assert "dropped, its next build starts cold" in err
    assert (folder / "out.txt").read_text() == "built\n"
    assert not (folder / CACHE_DIR).exists()
    assert sorted(Path(p).name for p in unpacked) == ["bot.toml", "out.txt"]  # none of the cache
    assert _files(folder) < 10


def test_a_build_leaving_more_entries_than_a_bot_folder_may_hold_is_refused(
    tmp_path: Path, unpacked: list[str]
) -> None:
    """Refused on the count, before anything of it is unpacked: the folder is as it was."""
    folder = _bot(
        tmp_path, "sprawler", _shell(f"mkdir out && cd out && seq {MAX_FILES + 1} | xargs touch")
    )
    with pytest.raises(BotBuildError) as caught:
        load_bot_config(folder)
    first = str(caught.value).splitlines()[0]
    assert first == (
        f"bot 'sprawler' ({folder}): its build left more than {MAX_FILES} entries (files, "
        "folders and links) in its folder, over the bound of a bot folder: refused"
    )
    assert unpacked == [] and not (folder / "out").exists()
    assert not (folder / build.STAMP).exists()


def test_a_cache_already_over_the_entry_bound_is_measured_only_to_the_bound_and_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache on disk (as an older launcher or its author left it) of more entries than the
    bound is dropped before the build, read no further than the bound and never copied into
    the jail. The bound is lowered to 100 here (the one constant, read where it is used), so
    that 1,000 files stand for millions."""
    monkeypatch.setattr(folder_mod, "MAX_FILES", 100)
    checks: list[str] = []
    check = build._Deadline.check

    def counted(self: build._Deadline, during: str) -> None:
        checks.append(during)
        check(self, during)

    monkeypatch.setattr(build._Deadline, "check", counted)
    folder = _bot(tmp_path, "heir", _shell("ls .ttr-cache/go 2>/dev/null | wc -l > seen.txt"))
    go = folder / CACHE_DIR / "go"
    go.mkdir(parents=True)
    for i in range(1000):
        (go / str(i)).touch()
    load_bot_config(folder)
    assert "holds more than 100 entries" in capsys.readouterr().err
    assert checks.count("measuring its build cache") == 101  # one an entry, none past the bound
    assert (folder / "seen.txt").read_text().strip() == "0"  # a cold build
    assert not (folder / CACHE_DIR).exists()


# ---------------------------------------------------------------------------------------------
# time: the build's deadline covers the referee's unpacking of what it left


def test_a_deadline_passing_while_the_referee_unpacks_fails_the_build_as_a_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unpacked: list[str]
) -> None:
    """The clock is the build's own: once its deadline has passed (here: as soon as the first
    file is written, instead of a 15-minute unpacking), the referee stops unpacking and the
    build fails as a build past its time does."""
    folder = _bot(tmp_path, "slow", _shell("mkdir out && cd out && seq 20 | xargs touch"))
    monkeypatch.setattr(build._Deadline, "passed", lambda self: bool(unpacked))
    with pytest.raises(BotBuildError) as caught:
        load_bot_config(folder)
    assert str(caught.value).startswith(
        f"bot 'slow' ({folder}): its build did not finish in {build.BUILD_TIMEOUT_S:g} s "
        "(the referee was unpacking what it left)"
    )
    assert len(unpacked) == 1 and not (folder / build.STAMP).exists()


# ---------------------------------------------------------------------------------------------
# links: the referee never writes through one


# The first build leaves links in its cache: to the launcher's own files, and one standing for a
# folder of its cache that leads back to the bot folder. The next writes where they are.
_LINKS_THEN_WRITES = """\
import os, pathlib
go = pathlib.Path(".ttr-cache/go")
links = {"log": "../../.ttr-build.log", "lock": "../../.ttr-build.lock", "up": "../.."}
if not go.is_dir():
    go.mkdir(parents=True)
    for name, target in links.items():
        os.symlink(target, go / name)
else:
    for name in links:
        (go / name).unlink()
    (go / "log").write_text("forged")
    (go / "lock").write_text("forged")
    (go / "up").mkdir()
    (go / "up" / ".ttr-build.log").write_text("forged")
pathlib.Path("out.txt").write_text("built")
"""


def test_links_an_earlier_build_left_in_its_cache_are_replaced_never_written_through(
    tmp_path: Path,
) -> None:
    folder = _bot(tmp_path, "linker", 'build = ["{python}", "build.py"]', _LINKS_THEN_WRITES)
    config = load_bot_config(folder)
    go = folder / CACHE_DIR / "go"
    assert (go / "log").is_symlink() and (go / "up").is_symlink()  # inside: kept, as links
    with (folder / "build.py").open("a", encoding="utf-8") as f:
        f.write("# an edit\n")
    load_bot_config(folder)
    assert "forged" not in (folder / build.LOG).read_text(errors="replace")
    assert "forged" not in (folder / build.LOCK).read_text(errors="replace")
    for name in ("log", "lock"):
        assert not (go / name).is_symlink() and (go / name).read_text() == "forged"
    assert not (go / "up").is_symlink()
    assert (go / "up" / ".ttr-build.log").read_text() == "forged"
    assert build.ensure_built(config) is False  # the stamp vouches for this build


_WRITES_OVER_PLANTED = """\
import pathlib
go = pathlib.Path(".ttr-cache/go")
(go / "entry").unlink()
(go / "entry").write_text("forged")
(go / "sub").unlink()
(go / "sub").mkdir()
(go / "sub" / "victim.txt").write_text("forged")
pathlib.Path("out.txt").write_text("built")
"""


def test_links_planted_at_the_launchers_files_and_in_the_cache_leave_a_file_outside_untouched(
    tmp_path: Path,
) -> None:
    """Links to a file (and a folder) outside the bot folder, where the launcher writes its
    log, lock and stamp and where the build writes its cache, as an older launcher's build
    could have left them: each is replaced by the launcher's own file or the build's, the
    build succeeds, and the victim is as it was."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    victims = tmp_path / "victims"
    victims.mkdir()
    folder = _bot(tmp_path, "planted", 'build = ["{python}", "build.py"]', _WRITES_OVER_PLANTED)
    go = folder / CACHE_DIR / "go"
    go.mkdir(parents=True)
    for link in (folder / build.LOG, folder / build.LOCK, folder / build.STAMP, go / "entry"):
        link.symlink_to(victim)
    (go / "sub").symlink_to(victims)
    load_bot_config(folder)
    assert victim.read_text() == "precious" and list(victims.iterdir()) == []
    for own in (build.LOG, build.LOCK, build.STAMP):
        assert not (folder / own).is_symlink() and (folder / own).is_file()
    assert (go / "entry").read_text() == "forged" and not (go / "entry").is_symlink()
    assert (go / "sub" / "victim.txt").read_text() == "forged"
    assert (folder / "out.txt").read_text() == "built"


# ---------------------------------------------------------------------------------------------
# a stream the jail's own script never writes (a build that got hold of its pipe could)


def _tar(*members: tuple[str, bytes | str]) -> io.BytesIO:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        for name, what in members:
            info = tarfile.TarInfo(name)
            if isinstance(what, str):
                info.type, info.linkname = tarfile.LNKTYPE, what
                tar.addfile(info)
            else:
                info.size = len(what)
                tar.addfile(info, io.BytesIO(what))
    data.seek(0)
    return data


@pytest.mark.parametrize(
    ("members", "why"),
    [
        ([(".ttr-cache/../.ttr-build.log", b"forged")], "leaves its folder"),
        ([("log", build.LOG)], "a hard link to"),
    ],
    ids=["dotdot-onto-the-log", "hard-link-to-the-log"],
)
def test_a_crafted_stream_reaching_the_launchers_files_is_refused(
    tmp_path: Path, members: list[tuple[str, Any]], why: str
) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / build.LOG).write_text("the launcher's", encoding="utf-8")
    (folder / CACHE_DIR).mkdir()  # there, ``.ttr-cache/..`` is the folder itself
    deadline = build._Deadline.start(60.0)
    with pytest.raises(BotBuildError, match=f"what its build left was refused: .*{why}"):
        build._unpack("crafted", folder, _tar(*members), deadline)
    assert (folder / build.LOG).read_text() == "the launcher's"
    assert not (folder / "log").exists()
