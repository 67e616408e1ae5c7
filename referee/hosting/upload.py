"""An uploaded archive turned into a bot folder, or refused (issue 22: the competition server).

The archive comes from a stranger over HTTP, so everything in it is hostile: its names (``..``,
absolute paths, a Windows drive, control characters that forge a log line), its kinds (links
that point at the organiser's key once followed, devices, FIFOs), its sizes (a 1 KB zip that
declares or inflates to 10 GiB, 100,000 empty files, a tar header claiming gigabytes) and its
format (bytes that are not an archive, a truncated or lying one, tricks that make the standard
library's parsers spend minutes or gigabytes). :func:`unpack` therefore never calls
``extractall``: it reads each member's header, checks it against one set of rules, and writes
the member itself, through a path it built from the checked name, with a byte budget, into a
private staging folder; ``dest`` appears, renamed into place, only once the whole folder,
its ``bot.toml`` and its content hash are good. A refusal leaves nothing behind.

What is written is exactly what :func:`referee.hosting.folder.content_hash` hashes: members
the hash leaves out (caches such as ``__pycache__`` and ``node_modules``, ``*.pyc``, the
launcher's own ``.ttr-build*`` files, a Mac's ``__MACOSX`` folder) are not written at all, so
two uploads with one hash hold the same files, byte for byte (their modes aside: the hash
does not read them, and an upload's are only 0644 or 0755).

:func:`pack` is the other direction (``ttr submit``, tests): a bot folder, read one way by
:func:`referee.hosting.folder.entries`, as a deterministic zip that :func:`unpack` accepts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import io
import os
import re
import shutil
import stat
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from referee.games.protocol import bounded
from referee.hosting.build import BUILD_FILES
from referee.hosting.config import BotConfig, BotConfigError, LaunchError, read_bot_config
from referee.hosting.folder import (
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    SKIP_DIRS,
    BotFolderError,
    content_hash,
    entries,
    read_chunks,
)

TOO_LARGE = 413  #: an upload over a size or count limit
UNREADABLE = 400  #: not an archive we read: not a zip or tar, corrupt, encrypted, bzip2...
REFUSED = 422  #: a readable archive that is no bot folder (unsafe names, links, no bot.toml)

MAX_PATH_BYTES = 1024  #: a member's path (UTF-8): deep enough for any bot, never PATH_MAX
MAX_NAME_BYTES = 255  #: one component of it (the file systems' NAME_MAX)
#: what a tar may hold between two members' data (pax and GNU long-name headers, padding):
#: a header is parsed whole in memory by tarfile, so one declaring gigabytes is stopped here
TAR_HEADER_BYTES = 64 << 10
#: extra-field records of one zip member's central directory entry (legitimate zips have a
#: handful; zipfile decodes them in quadratic time: 16,000 empty ones cost ~15 ms an entry,
#: a thousand such entries fit in an upload)
MAX_ZIP_EXTRAS = 32
#: a folder a Mac's Finder adds at the top of the zips it makes (resource forks), never the bot's
MAC_JUNK = "__MACOSX"
_CHUNK = 1 << 20
_SPOOL_IN_MEMORY = 8 << 20
_DRIVE = re.compile(r"[A-Za-z]:")


class UploadError(LaunchError):
    """An upload refused: ``str()`` is one line naming the problem and the member (names are
    escaped and cut: they are the uploader's); ``status`` is the HTTP status a server answers
    with: :data:`TOO_LARGE` (413) over a limit, :data:`UNREADABLE` (400) not an archive we
    read, :data:`REFUSED` (422) an archive that is no acceptable bot folder."""

    def __init__(self, message: str, status: int = REFUSED) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class UploadLimits:
    """What one upload may hold. The defaults fit any real bot many times over; they are
    bounded by the bot folder's own limits (:mod:`referee.hosting.folder`), so a folder an
    upload makes is always one the rest of the platform reads."""

    upload_bytes: int = 64 << 20  #: the archive as sent (compressed)
    total_bytes: int = 256 << 20  #: its files expanded, all together
    members: int = 10_000  #: entries of the archive (files, folders, anything)
    file_bytes: int = MAX_FILE_BYTES  #: one file
    config_bytes: int = 64 << 10  #: bot.toml, checked before it is parsed

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            if getattr(self, field.name) <= 0:
                raise ValueError(f"UploadLimits.{field.name} must be positive")
        if (
            self.file_bytes > MAX_FILE_BYTES
            or self.total_bytes > MAX_TOTAL_BYTES
            or self.members > MAX_FILES
        ):
            raise ValueError("UploadLimits may not exceed a bot folder's (referee.hosting.folder)")


@dataclass(frozen=True, slots=True)
class UnpackedBot:
    folder: Path  #: ``dest``, holding exactly what is hashed
    config: BotConfig  #: its bot.toml, validated (``config.folder`` is ``folder``)
    content_hash: str  #: :func:`referee.hosting.folder.content_hash` of ``folder``
    #: what the archive held that a bot folder leaves out and so was not written (a cache
    #: folder as ``node_modules/``, a ``*.pyc``, ``.ttr-build``): for telling the uploader
    skipped: tuple[str, ...]
    files: int  #: files written
    size: int  #: their bytes


# ---------------------------------------------------------------------------------------------
# unpacking


def unpack(
    data: bytes | IO[bytes], dest: str | Path, limits: UploadLimits = UploadLimits()
) -> UnpackedBot:
    """Unpack an uploaded ``.zip``, ``.tar`` or ``.tar.gz`` (told apart by their first bytes,
    never by a name) into ``dest``, a path that must not exist (its parent must), and return
    the bot folder it makes, or raise :class:`UploadError` and leave nothing behind.

    A single folder wrapping everything (``zip -r mybot.zip mybot/``) is stripped; otherwise
    the archive's root is the bot folder. Files are written with mode 0644, or 0755 where the
    archive gave any execute bit (never set-uid, set-gid or sticky), folders 0755, owned by
    the caller, with the time of unpacking.

    Links are refused, symbolic and hard, wherever they point: a link inside the folder is
    legitimate in a checkout, but an upload that may hold one must be checked against every
    later path (a link written first, a file then written "through" it), and no bot needs
    one. The only exception are members that are never written at all (in a cache folder as
    ``node_modules/``, whose ``.bin`` holds links): they are counted, and their names
    checked, but their kind does not matter.

    Raises :class:`FileExistsError` if ``dest`` exists (the caller's bug, not the upload's)
    before reading anything, and lets an ``OSError`` of its own disk through (after
    cleaning up)."""
    dest = Path(dest)
    with _spooled(data, limits) as (source, size):
        head = source.read(512)
        source.seek(0)
        kind = _kind(head)
        os.mkdir(dest)  # claims it: a second unpack to the same place fails here
        staging: Path | None = None
        done = False
        try:
            # next to dest (one file system: the rename below), hidden, ours alone
            staging = Path(
                tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".unpack", dir=dest.parent)
            )
            out = _Extraction(staging, limits)
            if kind == "zip":
                _unpack_zip(source, size, out)
            else:
                _unpack_tar(source, kind == "tar.gz", out)
            bot = out.finish(dest)
            done = True
            return bot
        finally:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            if not done:
                shutil.rmtree(dest, ignore_errors=True)


@contextlib.contextmanager
def _spooled(data: bytes | IO[bytes], limits: UploadLimits) -> Iterator[tuple[IO[bytes], int]]:
    """The upload as a seekable file and its size, refused (413) as soon as it is over the
    limit: a stream is read only that far, spilling to an unnamed temporary file past 8 MiB."""
    over = f"the upload is over the {_size(limits.upload_bytes)} an upload may be"
    if isinstance(data, bytes | bytearray | memoryview):
        if len(data) > limits.upload_bytes:
            raise UploadError(f"{over} ({len(data)} bytes)", TOO_LARGE)
        yield io.BytesIO(data), len(data)
        return
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY) as spool:
        size = 0
        while chunk := data.read(_CHUNK):
            size += len(chunk)
            if size > limits.upload_bytes:
                raise UploadError(over, TOO_LARGE)
            spool.write(chunk)
        spool.seek(0)
        yield spool, size


def _kind(head: bytes) -> Literal["zip", "tar", "tar.gz"]:
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):  # a zip (or an empty one)
        return "zip"
    if head.startswith(b"\x1f\x8b"):  # gzip: a tar inside, or tarfile says otherwise
        return "tar.gz"
    if head[257:262] == b"ustar":  # POSIX, pax and GNU tars (not the headerless v7 tar)
        return "tar"
    raise UploadError("not a zip, tar or tar.gz archive", UNREADABLE)


@contextlib.contextmanager
def _reading(member: str = "", after: bool = False) -> Iterator[None]:
    """Whatever the standard library raises while parsing hostile bytes, as one 400 line
    naming the member read (or the one ``after`` which the next header was read). Only reads
    of the archive run under it, never writes to the disk."""
    try:
        yield
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        tarfile.TarError,
        zlib.error,
        struct.error,
        EOFError,
        OSError,  # gzip.BadGzipFile, a seek to a negative offset of a spilled upload
        ValueError,  # UnicodeDecodeError of a name flagged UTF-8, a negative seek in memory
        LookupError,
        RuntimeError,  # RecursionError of chained tar headers, NotImplementedError
        ArithmeticError,
    ) as e:
        where = f" {'after' if after else 'at'} member {_show(member)}" if member else ""
        why = bounded(str(e) or type(e).__name__, 160)
        raise UploadError(f"a corrupt archive{where}: {why}", UNREADABLE) from None


_Kind = Literal["file", "dir", "symlink", "hardlink", "special"]


class _Extraction:
    """The rules every member passes, whatever its format, and the writing of those that
    pass, into ``root`` (a fresh staging folder nobody else writes in)."""

    def __init__(self, root: Path, limits: UploadLimits, dry: bool = False) -> None:
        self.root = root
        self.dry = dry  #: checks only: nothing is written
        self.real_root = Path(os.path.realpath(root))
        self.limits = limits
        self.members = 0
        self.declared = 0  #: file bytes the headers announce
        self.written = 0  #: file bytes written
        self.files: set[str] = set()
        self.dirs: set[str] = set()  #: folders named or implied by a path
        self.made: set[str] = {""}  #: folders created (and checked to lie inside root)
        self.skipped: set[str] = set()
        self.configs: list[str] = []  #: where a bot.toml was seen, for the hint

    def admit(self, name: str, kind: _Kind, size: int, what: str = "") -> str | None:
        """Check one member from its header; its relative path to write, or None when it is
        not written (the root folder itself, a cache, a ``*.pyc``). ``what`` names a special
        member's kind (``a FIFO``)."""
        limits = self.limits
        self.members += 1
        if self.members > limits.members:
            raise UploadError(f"the archive holds more than {limits.members} members", TOO_LARGE)
        rel = _relative(name)
        shown = _show(name)
        if kind == "file":
            if size > limits.file_bytes:
                raise UploadError(
                    f"member {shown} is {size} bytes, over the {_size(limits.file_bytes)} one "
                    "file may hold",
                    TOO_LARGE,
                )
            self.declared += size  # counted even when not written: a tar must be read past it
            if self.declared > limits.total_bytes:
                raise UploadError(
                    f"the archive's files expand to more than {_size(limits.total_bytes)} "
                    f"(at member {shown})",
                    TOO_LARGE,
                )
        parts = rel.split("/") if rel else []
        if parts and parts[0] == MAC_JUNK:
            self.skipped.add(MAC_JUNK + "/")
            return None
        folders = parts if kind == "dir" else parts[:-1]
        cache = next((i for i, p in enumerate(folders) if p in SKIP_DIRS), None)
        if cache is not None:
            self.skipped.add("/".join(parts[: cache + 1]) + "/")
            return None
        if kind in ("symlink", "hardlink"):
            raise UploadError(
                f"member {shown} is a {'symbolic' if kind == 'symlink' else 'hard'} link; "
                "uploads take no links (put the file itself there)"
            )
        if kind == "special":
            raise UploadError(
                f"member {shown} is {what or 'not a file'}; a bot folder holds only files and "
                "folders"
            )
        if kind == "file" and not rel:
            raise UploadError(f"member {shown} is a file named like the bot folder itself")
        if kind == "file" and parts[-1].endswith(".pyc"):
            self.skipped.add(rel)
            return None
        for i in range(1, len(parts)):
            above = "/".join(parts[:i])
            if above in self.files:
                raise UploadError(f"member {shown}: {_show(above)} is both a file and a folder")
            self.dirs.add(above)
        if kind == "dir":
            if rel in self.files:
                raise UploadError(f"member {shown}: {_show(rel)} is both a file and a folder")
            self.dirs.add(rel)
            self._count(shown)
            return rel
        if rel in self.dirs:
            raise UploadError(f"member {shown}: {_show(rel)} is both a file and a folder")
        if rel in self.files:
            raise UploadError(
                f"member {shown} appears twice in the archive (the second would overwrite the "
                "first)"
            )
        self.files.add(rel)
        self._count(shown)
        if parts[-1] == "bot.toml" and len(self.configs) < 2:
            self.configs.append(rel)
        return rel

    def _count(self, shown: str) -> None:
        """The folders a path implies count as members: 2,000 files, each 500 folders deep
        on a branch of its own, would make a million folders from 2,000 members."""
        if len(self.files) + len(self.dirs) > self.limits.members:
            raise UploadError(
                f"the archive's paths make more than {self.limits.members} files and folders "
                f"(at member {shown})",
                TOO_LARGE,
            )

    def mkdir(self, rel: str) -> None:
        """Make ``rel`` and the folders above it, each 0755 and checked to lie in ``root``."""
        if rel in self.made:
            return
        parent, _, _ = rel.rpartition("/")
        self.mkdir(parent)
        path = self.root / rel
        os.mkdir(path, 0o700)
        os.chmod(path, 0o755)  # whatever the umask: the bots' own uid reads it
        if not Path(os.path.realpath(path)).is_relative_to(self.real_root):
            raise UploadError(f"member {_show(rel)} resolves outside the bot folder")
        self.made.add(rel)

    def write(self, rel: str, reader: IO[bytes], declared: int, executable: bool) -> None:
        """Stream one file to ``rel``, never more bytes than its header declared nor than the
        limit of all files together, whatever the reader yields."""
        parent, _, _ = rel.rpartition("/")
        self.mkdir(parent)
        shown = _show(rel)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(self.root / rel, flags, 0o600), "wb") as out:
            got = 0
            while True:
                with _reading(rel):
                    chunk = reader.read(_CHUNK)
                if not chunk:
                    break
                got += len(chunk)
                if got > declared:
                    raise UploadError(
                        f"member {shown} holds more than the {declared} bytes its header declares",
                        UNREADABLE,
                    )
                self.written += len(chunk)
                if self.written > self.limits.total_bytes:
                    raise UploadError(
                        f"the archive's files expand to more than "
                        f"{_size(self.limits.total_bytes)} (at member {shown})",
                        TOO_LARGE,
                    )
                out.write(chunk)
            if got != declared:
                raise UploadError(
                    f"member {shown} ends after {got} of the {declared} bytes its header declares",
                    UNREADABLE,
                )
            os.fchmod(out.fileno(), 0o755 if executable else 0o644)

    def finish(self, dest: Path) -> UnpackedBot:
        """The written tree as the bot folder at ``dest`` (its one wrapping folder stripped),
        once its bot.toml is read and its hash taken; ``dest`` is our empty folder and is
        replaced by the bot folder in one rename."""
        root, wrapper = self.root, ""
        with os.scandir(root) as it:
            top = list(it)
        if len(top) == 1 and top[0].is_dir(follow_symlinks=False):
            wrapper = top[0].name
            root = root / wrapper
            self.skipped = {s.removeprefix(f"{wrapper}/") for s in self.skipped}
        for name in sorted(BUILD_FILES):  # the launcher's files: never the bot's
            path = root / name
            if path.is_file() and not path.is_symlink():
                self.written -= path.stat().st_size
                self.files.discard(f"{wrapper}/{name}" if wrapper else name)
                path.unlink()
                self.skipped.add(name)
        config = self._config(root, wrapper)
        try:
            digest = content_hash(root)
        except BotFolderError as e:  # not expected: every rule of the walk was checked above
            raise UploadError(_inside(str(e), root)) from None
        os.chmod(root, 0o755)
        os.rename(root, dest)
        return UnpackedBot(
            folder=dest,
            config=dataclasses.replace(config, folder=dest),
            content_hash=digest,
            skipped=tuple(sorted(self.skipped)),
            files=len(self.files),
            size=self.written,
        )

    def _config(self, root: Path, wrapper: str) -> BotConfig:
        path = root / "bot.toml"
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            where = f"in the archive's one folder {wrapper}/" if wrapper else "at its top"
            found = [c for c in self.configs if c != f"{wrapper}/bot.toml"]
            hint = f" (one is at {_show(found[0])})" if found else ""
            raise UploadError(
                f"the archive has no bot.toml {where}{hint}; upload the bot folder itself, "
                "e.g. zip -r mybot.zip mybot/"
            ) from None
        if not stat.S_ISREG(st.st_mode):
            raise UploadError("bot.toml is a folder, not a file")
        if st.st_size > self.limits.config_bytes:
            raise UploadError(
                f"bot.toml is {st.st_size} bytes, over the {_size(self.limits.config_bytes)} "
                "a bot.toml may hold",
                TOO_LARGE,
            )
        try:
            return read_bot_config(root)
        except BotConfigError as e:  # its message, naming our staging path only as "bot.toml"
            raise UploadError(bounded(_inside(str(e), root), 400)) from None


def _inside(message: str, root: Path) -> str:
    """A message of folder.py or config.py with the staging folder's path taken out: the
    uploader is told about ``bot.toml``, never where the server keeps it."""
    return message.replace(f"{root}/", "").replace(f"{root}: ", "").replace(str(root), ".")


def _relative(name: str, label: str = "member") -> str:
    """``name`` as a path relative to the bot folder (``/``-separated, no ``.`` or empty
    parts; ``""`` for the folder itself), or :class:`UploadError` naming the rule it breaks."""
    shown = f"{label} {_show(name)}"
    if not name:
        raise UploadError(f"{label} with an empty name")
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:  # a tar's bytes read with surrogateescape
        raise UploadError(f"{shown}: its name is not UTF-8") from None
    bad = next((c for c in name if not c.isprintable()), None)
    if bad is not None:
        # a NUL ends the name for C (the zip's "bot.py\0.txt" is written as bot.py); others
        # move a terminal's cursor or forge a line of a log or page
        raise UploadError(f"{shown}: its name holds the control character {bad!r}")
    if "\\" in name or _DRIVE.match(name):
        raise UploadError(
            f"{shown}: a Windows path (a backslash or a drive); paths use / between folders"
        )
    if name.startswith("/"):
        raise UploadError(f"{shown} is an absolute path; members are paths inside the bot folder")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UploadError(f"{shown} climbs out of the bot folder (..)")
    if size > MAX_PATH_BYTES or any(len(p.encode()) > MAX_NAME_BYTES for p in parts):
        raise UploadError(
            f"{shown}: a path over {MAX_PATH_BYTES} bytes, or a name over {MAX_NAME_BYTES}"
        )
    return "/".join(parts)


def _show(name: str) -> str:
    return f"'{bounded(name, 120)}'"


def _size(n: int) -> str:
    """A limit as people write it (64 MiB, 1 GiB)."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


# ---------------------------------------------------------------------------------------------
# zip


def _unpack_zip(source: IO[bytes], size: int, out: _Extraction) -> None:
    """Check every member from the central directory first (nothing is written for an
    archive refused by its headers), then write them."""
    _scan_central_directory(source, size, out.limits.members)
    with _reading():
        archive = zipfile.ZipFile(source)
    with archive:
        infos = archive.infolist()
        if len(infos) > out.limits.members:  # the scan above counted the same records
            raise UploadError(
                f"the archive holds more than {out.limits.members} members", TOO_LARGE
            )
        plan: list[tuple[zipfile.ZipInfo, _Kind, str]] = []
        for info in infos:
            name = info.orig_filename  # .filename is cut at a NUL
            mode = info.external_attr >> 16
            kind, what = _zip_kind(info, mode)
            rel = out.admit(name, kind, info.file_size, what)
            if rel is None:
                continue
            if kind == "file":
                if info.flag_bits & 0x1:
                    raise UploadError(f"member {_show(name)} is encrypted", UNREADABLE)
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    # zipfile inflates bzip2 and lzma without a bound on what one read returns
                    raise UploadError(
                        f"member {_show(name)} is compressed with method {info.compress_type}; "
                        "an upload's zip uses deflate (or none)",
                        UNREADABLE,
                    )
            plan.append((info, kind, rel))
        for info, kind, rel in plan:
            if kind == "dir":
                out.mkdir(rel)
                continue
            with _reading(rel):
                member = archive.open(info)  # by its entry, not its (maybe repeated) name
            with member:
                out.write(rel, member, info.file_size, bool((info.external_attr >> 16) & 0o111))


def _zip_kind(info: zipfile.ZipInfo, mode: int) -> tuple[_Kind, str]:
    """A zip member's kind from its Unix mode (the high half of its external attributes,
    which Info-ZIP and zipfile write; read whatever system the zip says made it)."""
    fmt = stat.S_IFMT(mode)
    if fmt == stat.S_IFLNK:
        return "symlink", ""
    if info.is_dir() or fmt == stat.S_IFDIR:
        return "dir", ""
    if fmt in (0, stat.S_IFREG):
        return "file", ""
    return "special", _special(fmt)


def _special(fmt: int) -> str:
    if fmt == stat.S_IFIFO:
        return "a FIFO"
    if fmt == stat.S_IFSOCK:
        return "a socket"
    if fmt in (stat.S_IFCHR, stat.S_IFBLK):
        return "a device"
    return "not a file"


_EOCD = struct.Struct("<4s4H2LH")  # end of central directory
_EOCD64_LOCATOR = struct.Struct("<4sLQL")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")  # one central directory entry's fixed part


def _scan_central_directory(source: IO[bytes], size: int, limit: int) -> None:
    """Count the central directory's entries, and their extra-field records, before zipfile
    builds an object for each: it would spend seconds and hundreds of MB on the 800,000 empty
    entries 64 MiB can hold, and seconds on each entry padded with 16,000 extra records.
    Found as zipfile finds them: the end record last (or the last one in the comment), the
    directory just before it (and before a zip64 end record)."""

    def read(at: int, n: int) -> bytes:
        source.seek(at)
        return source.read(n)

    corrupt = "a corrupt archive: {}"
    tail_at = max(size - (_EOCD.size + 0xFFFF), 0)
    tail = read(tail_at, size - tail_at)
    at = len(tail) - _EOCD.size
    if not (at >= 0 and tail[at : at + 4] == b"PK\x05\x06" and tail[-2:] == b"\0\0"):
        at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < _EOCD.size:
        raise UploadError(corrupt.format("no zip end record"), UNREADABLE)
    end = tail_at + at
    fields = _EOCD.unpack_from(tail, at)
    count, cd_size = fields[4], fields[5]
    if end >= _EOCD64_LOCATOR.size + _EOCD64.size:
        locator = read(end - _EOCD64_LOCATOR.size, _EOCD64_LOCATOR.size)
        if locator[:4] == b"PK\x06\x07":
            end -= _EOCD64_LOCATOR.size + _EOCD64.size
            record = _EOCD64.unpack(read(end, _EOCD64.size))
            if record[0] != b"PK\x06\x06":
                raise UploadError(corrupt.format("a broken zip64 end record"), UNREADABLE)
            count, cd_size = record[7], record[8]
    if count > limit:
        raise UploadError(f"the archive holds more than {limit} members", TOO_LARGE)
    pos, seen = end - cd_size, 0
    if pos < 0:
        raise UploadError(corrupt.format("its central directory starts before it"), UNREADABLE)
    while pos < end:
        head = read(pos, _CENTRAL.size)
        if len(head) < _CENTRAL.size or head[:4] != b"PK\x01\x02":
            raise UploadError(corrupt.format("a broken central directory"), UNREADABLE)
        seen += 1
        if seen > limit:
            raise UploadError(f"the archive holds more than {limit} members", TOO_LARGE)
        name_len, extra_len, comment_len = struct.unpack_from("<3H", head, 28)
        extra = read(pos + _CENTRAL.size + name_len, extra_len)
        records, i = 0, 0
        while i + 4 <= len(extra):
            records += 1
            i += 4 + int.from_bytes(extra[i + 2 : i + 4], "little")
        if records > MAX_ZIP_EXTRAS:
            raise UploadError(
                corrupt.format(f"an entry with {records} extra-field records"), UNREADABLE
            )
        pos += _CENTRAL.size + name_len + extra_len + comment_len


# ---------------------------------------------------------------------------------------------
# tar


class _Metered:
    """The tar stream as tarfile reads it, refused once past a ceiling: what the member
    being read may still hold plus :data:`TAR_HEADER_BYTES`, and never more than all files
    and every member's headers together. tarfile reads a pax or GNU long-name header whole,
    however large its header says it is; here it gets no further than the ceiling."""

    def __init__(self, inner: IO[bytes] | gzip.GzipFile, limits: UploadLimits) -> None:
        self.inner = inner
        self.pulled = 0
        self.cap = limits.total_bytes + limits.members * 4096 + TAR_HEADER_BYTES
        self.ceiling = TAR_HEADER_BYTES
        self.after = ""  #: the last member seen, for the message

    def allow(self, data: int, member: str) -> None:
        """A member was read from its header: its data may follow, then the next headers."""
        self.after = member
        blocks = -(-data // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
        self.ceiling = min(self.cap, self.pulled + blocks + TAR_HEADER_BYTES)

    def read(self, size: int = -1) -> bytes:
        room = self.ceiling - self.pulled
        if room <= 0:
            where = f"after member {_show(self.after)}" if self.after else "at its start"
            raise UploadError(
                f"the tar's headers {where} run over {_size(TAR_HEADER_BYTES)} (a header "
                "declaring more than any file name or attribute needs)",
                TOO_LARGE,
            )
        with _reading(self.after, after=True):
            chunk = self.inner.read(room if size < 0 else min(size, room))
        self.pulled += len(chunk)
        return chunk

    def write(self, b: bytes, /) -> int:
        raise io.UnsupportedOperation("read only")

    def tell(self) -> int:
        return self.pulled

    def seek(self, pos: int, /) -> int:
        raise io.UnsupportedOperation("a stream")

    def close(self) -> None:
        pass


def _unpack_tar(source: IO[bytes], gz: bool, out: _Extraction) -> None:
    """Read the tar twice: its headers alone first, each checked as a zip's central directory
    is (so an archive refused by any header, the 10,001st of 100,000 empty files included,
    writes nothing), then again, writing. The second reading costs at most the limits' worth
    of inflating."""
    for extraction in (_Extraction(out.root, out.limits, dry=True), out):
        source.seek(0)
        _read_tar(source, gz, extraction)


def _read_tar(source: IO[bytes], gz: bool, out: _Extraction) -> None:
    """One reading of the tar as a stream, a member at a time, its header checked before its
    data is read; gzip is inflated here, a bounded read at a time, not by tarfile."""
    with contextlib.ExitStack() as stack:
        inner: IO[bytes] | gzip.GzipFile = source
        if gz:  # closing it leaves the source open for the second reading
            inner = stack.enter_context(gzip.GzipFile(fileobj=source, mode="rb"))
        meter = _Metered(inner, out.limits)
        with _reading():  # the first header is read here
            archive = stack.enter_context(
                tarfile.open(fileobj=meter, mode="r|", encoding="utf-8", errors="surrogateescape")
            )
        while True:
            with _reading(meter.after, after=True):
                member = archive.next()
            if member is None:
                return
            kind, what = _tar_kind(member)
            rel = out.admit(member.name, kind, member.size, what)
            # what tarfile reads past as this member's data (a file's, or an unknown type's)
            skipped = member.isreg() or member.type not in tarfile.SUPPORTED_TYPES
            meter.allow(member.size if skipped else 0, member.name)
            if rel is None or out.dry:
                continue  # its data is skipped by the next read of a header
            if kind == "dir":
                out.mkdir(rel)
                continue
            with _reading(rel):
                data = archive.extractfile(member)
            if data is None:  # tarfile gives no reader only to what is not a file
                raise UploadError(f"member {_show(member.name)} is not a file")
            with data:
                out.write(rel, data, member.size, bool(member.mode & 0o111))


def _tar_kind(member: tarfile.TarInfo) -> tuple[_Kind, str]:
    if member.issym():
        return "symlink", ""
    if member.islnk():
        return "hardlink", ""
    if member.isdir():
        return "dir", ""
    if member.issparse():  # holes read as zeros: the shape of a tar bomb, and no bot's
        return "special", "a sparse file (archive it as a plain file)"
    if member.isreg():
        return "file", ""
    if member.isfifo():
        return "special", "a FIFO"
    if member.ischr() or member.isblk():
        return "special", "a device"
    return "special", f"of tar type {member.type.decode('latin-1')!r}"


# ---------------------------------------------------------------------------------------------
# packing


def pack(folder: str | Path, limits: UploadLimits = UploadLimits()) -> bytes:
    """The zip of a bot folder that :func:`unpack` accepts and hashes as
    :func:`referee.hosting.folder.content_hash` hashes the folder: its files as
    :func:`referee.hosting.folder.entries` reads them (caches, ``*.pyc`` and the launcher's
    files left out), sorted, with fixed times and modes (0644, or 0755 for an executable),
    so an unchanged folder packs to the same bytes.

    Refuses what the server would, before anything is sent: what ``entries`` refuses
    (:class:`BotFolderError`), an invalid bot.toml (:class:`BotConfigError`), and, as
    :class:`UploadError`, a link (uploads take none), a name the server refuses, or a folder
    over ``limits``."""
    folder = Path(folder)
    found = entries(folder)  # first: bot.toml may be a FIFO, which reading it would block on
    if len(found) > limits.members:
        raise UploadError(f"{folder}: more than {limits.members} files", TOO_LARGE)
    config = next((e for e in found if e.rel == "bot.toml" and e.link is None), None)
    if config is not None and config.size > limits.config_bytes:
        raise UploadError(
            f"{folder}: bot.toml is {config.size} bytes, over the "
            f"{_size(limits.config_bytes)} a bot.toml may hold",
            TOO_LARGE,
        )
    read_bot_config(folder)
    buffer = io.BytesIO()
    total = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for entry in found:
            rel = _relative(entry.rel, f"{folder}: file")
            if entry.link is not None:
                raise UploadError(
                    f"{folder}: {_show(entry.rel)} is a link (to {_show(entry.link)}); uploads "
                    "take no links (put the file itself there)"
                )
            info = zipfile.ZipInfo(rel, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix: the mode below is read
            info.external_attr = (stat.S_IFREG | (0o755 if entry.mode & 0o111 else 0o644)) << 16
            info.file_size = entry.size
            with archive.open(info, "w") as member:
                got = 0
                for chunk in read_chunks(entry.path):  # counted: a file may grow meanwhile
                    got += len(chunk)
                    total += len(chunk)
                    if got > limits.file_bytes:
                        raise UploadError(
                            f"{folder}: {_show(rel)} holds more than the "
                            f"{_size(limits.file_bytes)} one file may hold",
                            TOO_LARGE,
                        )
                    if total > limits.total_bytes:
                        raise UploadError(
                            f"{folder}: its files hold more than {_size(limits.total_bytes)}",
                            TOO_LARGE,
                        )
                    member.write(chunk)
            if buffer.tell() > limits.upload_bytes:
                raise UploadError(
                    f"{folder}: it packs to more than the {_size(limits.upload_bytes)} an "
                    "upload may be",
                    TOO_LARGE,
                )
    return buffer.getvalue()
