"""``ttr new-bot``: a new bot folder from a starter kit, ready to play at once.

The kits are the folders of :mod:`referee.hosting.starters` (package data). A bot in Node, Go or C++
also gets its own copy of the contract, ``proto/ttr/**/*.proto``, taken from this
repository's ``proto/``: the folder then builds and runs wherever it is copied, and its build
(bot.toml's ``build``, run by the launcher: :mod:`referee.hosting.build`) never reaches outside it.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

#: the repository's contract: the one source of every kit's copy
PROTO_ROOT = Path(__file__).resolve().parents[2] / "proto"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
_PLACEHOLDER = "{{name}}"


@dataclass(frozen=True, slots=True)
class Language:
    key: str
    title: str
    needs_proto: bool
    #: executables its build and run need, for a warning when one is missing
    tools: tuple[str, ...]


LANGUAGES: dict[str, Language] = {
    lang.key: lang
    for lang in (
        Language("python", "Python", False, ()),
        Language("node", "Node.js", True, ("node",)),
        Language("go", "Go", True, ("make", "go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc")),
        Language("cpp", "C++", True, ("make", "g++", "pkg-config", "protoc", "grpc_cpp_plugin")),
    )
}


class NewBotError(Exception):
    """The bot folder cannot be made; the message is one line for the user."""


def check_name(name: str) -> None:
    """A bot name is a folder name and a leaderboard name: a letter, then letters, digits,
    ``-`` and ``_``, 40 characters at most (the log files' names keep 40)."""
    if not _NAME.match(name):
        raise NewBotError(
            f"bad bot name {name!r}: use a letter, then letters, digits, '-' or '_' "
            "(40 characters at most)"
        )


def proto_files(root: Path = PROTO_ROOT) -> list[Path]:
    """The contract's .proto files, relative to ``root``."""
    return sorted(p.relative_to(root) for p in root.glob("ttr/**/*.proto"))


def copy_protos(dest: Path, root: Path = PROTO_ROOT) -> list[Path]:
    """Copy the contract into ``dest/proto``; return the files written, relative to ``dest``."""
    files = proto_files(root)
    if not files:
        raise NewBotError(
            f"the contract's .proto files are not in {root}: `ttr new-bot` needs the TTR "
            "Arena source tree (an editable install)"
        )
    written = []
    for rel in files:
        target = dest / "proto" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, target)
        written.append(Path("proto") / rel)
    return written


def new_bot(name: str, lang: str, parent: Path) -> Path:
    """Make ``parent/name`` from the ``lang`` kit; return the new folder."""
    check_name(name)
    language = LANGUAGES.get(lang)
    if language is None:
        raise NewBotError(f"unknown language {lang!r} (choose from {', '.join(LANGUAGES)})")
    dest = parent / name
    if dest.exists():
        raise NewBotError(f"{dest} already exists: choose another name or --dir")
    if not parent.is_dir():
        raise NewBotError(f"--dir {parent}: no such directory")
    kit = resources.files("referee.hosting.starters") / lang
    try:
        dest.mkdir()
        _copy_kit(kit, dest, name)
        if language.needs_proto:
            copy_protos(dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)  # no half-made bot folder left behind
        raise
    return dest


def missing_tools(lang: str) -> list[str]:
    """The executables of :attr:`Language.tools` not on PATH."""
    return [t for t in LANGUAGES[lang].tools if shutil.which(t) is None]


def _copy_kit(kit: Traversable, dest: Path, name: str) -> None:
    for entry in kit.iterdir():
        if entry.name == "__pycache__" or entry.name.endswith(".pyc"):
            continue
        target = dest / (".gitignore" if entry.name == "gitignore" else entry.name)
        if entry.is_dir():
            target.mkdir()
            _copy_kit(entry, target, name)
        else:
            data = entry.read_bytes()
            if _PLACEHOLDER.encode() in data:
                data = data.replace(_PLACEHOLDER.encode(), name.encode())
            target.write_bytes(data)
