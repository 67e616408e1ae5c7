"""What a bot folder is made of, read one way wherever a folder is read (its content hash, the
cluster's package, a tournament's entry): regular files, folders, and links that stay inside
the folder.

A bot folder is the entrant's, as hostile as its code. Read naively it can hang the reader (a
FIFO), exhaust its memory (a 1 TiB sparse file read whole) or smuggle in what is not the
bot's (a link to the organiser's key or a rival's ``bot.py``, followed when the folder is
hashed and packed, and read by the jailed bot on a cluster node). So the walk never follows a
link, takes only regular files, reads them in chunks, and refuses, with one line naming the
path, a link that leaves the folder, a FIFO, socket or device, and a folder over the limits.
Links inside the folder are kept as links (their target is hashed, and packed as a link).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from referee.hosting.build import BUILD_FILES, CACHE_DIR
from referee.hosting.config import LaunchError

#: folders that change without the author editing anything, or hold what a build installs
#: or caches (CACHE_DIR: the jailed build's own cache, never part of what the bot is)
SKIP_DIRS = frozenset(
    {
        "__pycache__",
        ".git",
        "node_modules",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        CACHE_DIR,
    }
)
MAX_FILES = 50_000  #: entries a bot folder may hold (files and links)
MAX_FILE_BYTES = 1 << 30  #: one file (1 GiB)
MAX_TOTAL_BYTES = 4 << 30  #: all its files together (4 GiB)
_CHUNK = 1 << 20


class BotFolderError(LaunchError):
    """A bot folder holds what no bot folder may; the message names the path and the rule."""


@dataclass(frozen=True, slots=True)
class Entry:
    rel: str  #: path relative to the folder, with ``/``
    path: Path
    link: str | None  #: a link's target as written (a link to a place inside the folder)
    size: int  #: bytes (0 for a link)
    mode: int  #: permission bits


def entries(folder: str | Path) -> list[Entry]:
    """The files and links that make the bot in ``folder``, by relative path; caches, the
    build's own stamp, log and lock, and ``*.pyc`` left out (they change without the author
    editing anything). Raises :class:`BotFolderError`."""
    root = Path(folder)
    real_root = Path(os.path.realpath(root))
    found: list[Entry] = []
    total = 0
    for item in _walk(root, root):
        rel = Path(item.path).relative_to(root).as_posix()
        where = f"{root}: {rel}"
        if item.is_symlink():
            target = os.readlink(item.path)
            if not Path(os.path.realpath(item.path)).is_relative_to(real_root):
                raise BotFolderError(
                    f"{where} is a link out of the bot folder (to {target!r}); a bot folder may "
                    "link only to its own files"
                )
            found.append(Entry(rel, Path(item.path), target, 0, 0o777))
        elif item.is_file(follow_symlinks=False):
            st = item.stat(follow_symlinks=False)
            if st.st_size > MAX_FILE_BYTES:
                raise BotFolderError(
                    f"{where} is {st.st_size} bytes, over the {MAX_FILE_BYTES >> 20} MiB a file "
                    "of a bot folder may hold"
                )
            total += st.st_size
            if total > MAX_TOTAL_BYTES:
                raise BotFolderError(
                    f"{root}: its files hold more than {MAX_TOTAL_BYTES >> 30} GiB; leave data "
                    "and build outputs out of a bot folder"
                )
            found.append(Entry(rel, Path(item.path), None, st.st_size, stat.S_IMODE(st.st_mode)))
        else:
            raise BotFolderError(
                f"{where} is {_kind(item)}; a bot folder holds only files, folders and links "
                "inside it"
            )
        if len(found) > MAX_FILES:
            raise BotFolderError(f"{root}: more than {MAX_FILES} files")
    return sorted(found, key=lambda e: e.rel)


def content_hash(folder: str | Path) -> str:
    """SHA-256 over the bot's files (relative paths and bytes, in sorted order) and links
    (relative paths and targets). A bot whose files change is a new bot: its games and rating
    are kept apart from the old one's, and a resumed tournament refuses it."""
    digest = hashlib.sha256()
    for entry in entries(folder):
        digest.update(entry.rel.encode() + b"\0")
        if entry.link is not None:
            digest.update(b"\0link\0" + entry.link.encode())
        else:
            for chunk in read_chunks(entry.path):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def read_chunks(path: Path) -> Iterator[bytes]:
    """A regular file's bytes in chunks, never through a link and never blocking on a FIFO
    put in its place after the walk; a file vanishing mid-walk yields what was there."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with contextlib.suppress(OSError):
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return
            while chunk := f.read(_CHUNK):
                yield chunk


def _walk(root: Path, folder: Path) -> Iterator[os.DirEntry[str]]:
    with os.scandir(folder) as it:
        items = sorted(it, key=lambda e: e.name)
    for item in items:
        if item.is_dir(follow_symlinks=False):
            if item.name not in SKIP_DIRS:
                yield from _walk(root, Path(item.path))
            continue
        if item.is_file(follow_symlinks=False) and (
            item.name.endswith(".pyc") or (folder == root and item.name in BUILD_FILES)
        ):
            continue
        yield item


def _kind(item: os.DirEntry[str]) -> str:
    mode = item.stat(follow_symlinks=False).st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"
