"""Uploads (issue 22): an archive from a stranger becomes a bot folder or is refused, with one
line naming the problem and the member, an HTTP status, and nothing left behind.

Every hostile archive is built here as real zip or tar bytes, by zipfile and tarfile where
they can make it and by hand (:func:`raw_zip`, :func:`raw_tar_headers`) where they refuse to:
a NUL in a name, a header that lies about its size, a 10 GiB declaration in a 1 KB file."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import resource
import stat
import struct
import tarfile
import tracemalloc
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.games.protocol import bounded
from referee.hosting.folder import content_hash
from referee.hosting.upload import (
    REFUSED,
    TOO_LARGE,
    UNREADABLE,
    UnpackedBot,
    UploadError,
    UploadLimits,
    pack,
    unpack,
)

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "sample_bots" / "random"
BOT_TOML = b'name = "uploaded"\nversion = "1.0"\ncommand = ["{python}", "bot.py"]\n'
BOT_PY = b"print('a bot')\n"
GIB = 1 << 30
#: the two files of the smallest valid bot folder
BOT = {"bot.toml": BOT_TOML, "bot.py": BOT_PY}


# ---------------------------------------------------------------------------------------------
# archive makers


def zip_of(files: dict[str, bytes]) -> bytes:
    """A zip as zipfile writes it: each name a member (a name ending in ``/`` a folder)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 5, 1, 12, 0, 0))
            info.create_system = 3
            info.external_attr = (0o40755 if name.endswith("/") else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


@dataclass
class Raw:
    """One member of a zip written by hand: its name's bytes, what is stored, and what the
    headers say (which may be a lie)."""

    name: bytes
    stored: bytes = b""
    size: int | None = None  #: declared uncompressed size (default: len(stored))
    crc: int | None = None
    method: int = 0
    mode: int = 0o100644
    flags: int = 0
    extra: bytes = b""


def raw_zip(members: Sequence[Raw]) -> bytes:
    """A zip made byte by byte (local headers, central directory, end record), so a test can
    write what zipfile never would; a size of 4 GiB or more is declared in a zip64 extra."""
    body, central = bytearray(), bytearray()
    for m in members:
        size = len(m.stored) if m.size is None else m.size
        crc = zlib.crc32(m.stored) if m.crc is None else m.crc
        csize, extra = len(m.stored), m.extra
        size32, csize32 = size, csize
        if size >= 0xFFFFFFFF:
            size32 = csize32 = 0xFFFFFFFF
            extra += struct.pack("<HHQQ", 1, 16, size, csize)
        offset = len(body)
        body += struct.pack(
            "<4s2B4HL2L2H",
            b"PK\x03\x04",
            20,
            0,
            m.flags,
            m.method,
            0,
            0x21,
            crc,
            csize32,
            size32,
            len(m.name),
            len(extra),
        )
        body += m.name + extra + m.stored
        central += struct.pack(
            "<4s4B4HL2L5H2L",
            b"PK\x01\x02",
            20,
            3,
            20,
            0,
            m.flags,
            m.method,
            0,
            0x21,
            crc,
            csize32,
            size32,
            len(m.name),
            len(extra),
            0,
            0,
            0,
            m.mode << 16,
            offset,
        )
        central += m.name + extra
    end = struct.pack(
        "<4s4H2LH",
        b"PK\x05\x06",
        0,
        0,
        min(len(members), 0xFFFF),
        min(len(members), 0xFFFF),
        len(central),
        len(body),
        0,
    )
    return bytes(body + central + end)


@dataclass
class Member:
    """One member of a tar written by tarfile: a file unless ``type`` says otherwise."""

    name: str
    data: bytes = b""
    type: bytes = tarfile.REGTYPE
    mode: int = 0o644
    linkname: str = ""
    mtime: int = 1_700_000_000
    uid: int = 0


def tar_of(
    members: Sequence[Member] | dict[str, bytes], *, gz: bool = False, fmt: int = tarfile.PAX_FORMAT
) -> bytes:
    if isinstance(members, dict):
        members = [Member(name, data) for name, data in members.items()]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w", format=fmt) as archive:
        for m in members:
            info = tarfile.TarInfo(m.name)
            info.type, info.mode, info.linkname = m.type, m.mode, m.linkname
            info.mtime, info.uid, info.uname = m.mtime, m.uid, "someone"
            info.devmajor, info.devminor = 1, 3
            info.size = len(m.data) if m.type == tarfile.REGTYPE else 0
            if "\0" in m.name:  # a ustar name field ends at a NUL; a pax record does not
                info.pax_headers = {"path": m.name}
            archive.addfile(info, io.BytesIO(m.data) if info.size else None)
    return buffer.getvalue()


def raw_tar_headers(names: Iterator[bytes], count: int) -> bytes:
    """``count`` ustar headers of empty files, made from one template (tarfile takes seconds
    for 100,000): each name patched in and its checksum recomputed."""
    template = bytearray(tarfile.TarInfo("x" * 8).tobuf(tarfile.USTAR_FORMAT))
    template[148:156] = b" " * 8
    out = bytearray()
    for _, name in zip(range(count), names, strict=False):
        header = bytearray(template)
        header[0 : len(name)] = name
        header[148:156] = b"%06o\0 " % sum(header)
        out += header
    return bytes(out + b"\0" * 1024)


def inflating_to(nbytes: int, *, gzip_wrapped: bool = False, head: bytes = b"") -> bytes:
    """A deflate (or gzip) stream of ``head`` then ``nbytes`` zeros, a whole MiB at a time,
    made in milliseconds: after a full flush, each MiB of zeros compresses to the same 1 KB.
    No end and no trailer: whoever reads it all finds it truncated."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31 if gzip_wrapped else -15)
    start = c.compress(head) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(b"\0" * (1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    return start + block * (nbytes >> 20)


# ---------------------------------------------------------------------------------------------
# checks


@contextlib.contextmanager
def files_at_most(nbytes: int) -> Iterator[None]:
    """RLIMIT_FSIZE for the test's duration: the kernel refuses (EFBIG: Python ignores
    SIGXFSZ) any write past ``nbytes`` in one file, so a test that passes under it proves the
    unpacker never wrote more."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def refused(
    data: bytes,
    tmp_path: Path,
    match: str,
    status: int = REFUSED,
    limits: UploadLimits | None = None,
) -> UploadError:
    """Unpack ``data``, expecting a refusal whose one-line message matches ``match`` and has
    ``status``; ``dest`` and any staging folder beside it are gone afterwards."""
    home = tmp_path / "uploads"
    home.mkdir(parents=True)
    with pytest.raises(UploadError, match=match) as caught:
        unpack(data, home / "bot", limits or UploadLimits())
    error = caught.value
    assert error.status == status, str(error)
    assert "\n" not in str(error)
    assert str(tmp_path) not in str(error)  # the server's paths are not the uploader's business
    assert list(home.iterdir()) == []  # nothing left: neither dest nor staging
    return error


def accepted(data: bytes, tmp_path: Path, name: str = "bot") -> UnpackedBot:
    tmp_path.joinpath("uploads").mkdir(exist_ok=True)
    return unpack(data, tmp_path / "uploads" / name)


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# ---------------------------------------------------------------------------------------------
# what is accepted


def test_pack_then_unpack_gives_the_folders_own_hash(tmp_path: Path) -> None:
    data = pack(RANDOM)
    assert data == pack(RANDOM)  # deterministic: an unchanged folder is the same upload
    bot = accepted(data, tmp_path)
    assert bot.content_hash == content_hash(RANDOM)
    assert bot.config.name == "random" and bot.config.folder == bot.folder
    assert tree(bot.folder) == {
        "bot.py": (RANDOM / "bot.py").read_bytes(),
        "bot.toml": (RANDOM / "bot.toml").read_bytes(),
    }
    assert bot.files == 2 and bot.skipped == ()


@pytest.mark.parametrize("name", ["greedy", "planner", "node_random"])
def test_every_sample_bot_survives_the_round_trip(tmp_path: Path, name: str) -> None:
    folder = ROOT / "sample_bots" / name
    assert accepted(pack(folder), tmp_path).content_hash == content_hash(folder)


@pytest.mark.parametrize("how", ["zip", "tar", "tar.gz"])
def test_a_single_wrapping_folder_is_stripped(tmp_path: Path, how: str) -> None:
    """As ``zip -r mybot.zip mybot/`` and ``tar czf mybot.tgz mybot`` make them: the folder's
    own entry first, then its files, one of them in a subfolder."""
    files = {
        "mybot/": b"",
        "mybot/bot.toml": BOT_TOML,
        "mybot/lib/": b"",
        "mybot/lib/util.py": b"X = 1\n",
        "mybot/bot.py": BOT_PY,
    }
    if how == "zip":
        data = zip_of(files)
    else:
        members = [
            Member(n.rstrip("/"), type=tarfile.DIRTYPE, mode=0o755)
            if n.endswith("/")
            else Member(n, d)
            for n, d in files.items()
        ]
        data = tar_of(members, gz=how == "tar.gz")
    bot = accepted(data, tmp_path)
    assert tree(bot.folder) == {"bot.py": BOT_PY, "bot.toml": BOT_TOML, "lib/util.py": b"X = 1\n"}
    assert bot.config.name == "uploaded"


def test_a_flat_archive_is_the_bot_folder_and_dot_slash_names_are_fine(tmp_path: Path) -> None:
    """``tar czf bot.tgz -C mybot .`` names its members ``./bot.toml``; the root's own
    ``./`` entry is the folder itself."""
    data = tar_of(
        [
            Member(".", type=tarfile.DIRTYPE),
            Member("./bot.toml", BOT_TOML),
            Member("./bot.py", BOT_PY),
        ],
        gz=True,
    )
    assert tree(accepted(data, tmp_path).folder) == BOT


def test_the_same_files_hash_the_same_in_zip_and_tar_gz(tmp_path: Path) -> None:
    """The hash is the bot's content: not the archive's format, member order, timestamps,
    compression or wrapping folder."""
    files = {"bot.toml": BOT_TOML, "bot.py": BOT_PY, "data/weights.bin": bytes(range(256)) * 99}
    as_zip = zip_of(dict(reversed(files.items())))
    as_tgz = tar_of([Member(f"wrap/{n}", d, mtime=12345) for n, d in files.items()], gz=True)
    stored = raw_zip([Raw(n.encode(), d) for n, d in files.items()])  # no compression at all
    hashes = {
        accepted(a, tmp_path, f"b{i}").content_hash for i, a in enumerate([as_zip, as_tgz, stored])
    }
    assert len(hashes) == 1


def test_a_stream_is_read_as_well_as_bytes(tmp_path: Path) -> None:
    data = zip_of(BOT)
    bot = unpack(io.BytesIO(data), tmp_path / "from-stream")
    assert bot.content_hash == accepted(data, tmp_path).content_hash


def test_modes_are_masked_and_owners_not_kept(tmp_path: Path) -> None:
    """0644, or 0755 for anything executable; folders 0755; never set-uid, set-gid or sticky,
    nor an owner from the archive."""
    data = tar_of(
        [
            Member("bot.toml", BOT_TOML, mode=0o600),
            Member("run.sh", b"#!/bin/sh\n", mode=0o4777, uid=12345),
            Member("sgid", b"x", mode=0o2751),
            Member("locked", type=tarfile.DIRTYPE, mode=0o1700),
            Member("locked/f", b"y", mode=0o000),
        ]
    )
    folder = accepted(data, tmp_path).folder
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in [folder, *folder.rglob("*")]}
    assert modes == {
        "bot": 0o755,
        "bot.toml": 0o644,
        "run.sh": 0o755,
        "sgid": 0o755,
        "locked": 0o755,
        "f": 0o644,
    }
    assert (folder / "run.sh").stat().st_uid == os.getuid()


def test_caches_and_mac_junk_are_left_out_and_named(tmp_path: Path) -> None:
    """What the content hash leaves out is not written at all (so a folder with one hash is
    one bot), even links in ``node_modules/.bin``, and the uploader is told."""
    data = tar_of(
        [
            Member("__MACOSX", type=tarfile.DIRTYPE),
            Member("__MACOSX/mybot/._bot.py", b"resource fork"),
            Member("mybot/bot.toml", BOT_TOML),
            Member("mybot/bot.py", BOT_PY),
            Member("mybot/.ttr-build", b"a forged build stamp"),
            Member("mybot/__pycache__/bot.cpython-311.pyc", b"stale"),
            Member("mybot/helper.pyc", b"sourceless"),
            Member("mybot/node_modules/.bin/tool", type=tarfile.SYMTYPE, linkname="/etc/passwd"),
            Member("mybot/.git/HEAD", b"ref: refs/heads/main\n"),
        ]
    )
    bot = accepted(data, tmp_path)
    assert tree(bot.folder) == BOT
    assert (bot.files, bot.size) == (2, len(BOT_TOML) + len(BOT_PY))
    assert bot.content_hash == accepted(zip_of(BOT), tmp_path, "clean").content_hash
    assert bot.skipped == (
        ".git/",
        ".ttr-build",
        "__MACOSX/",
        "__pycache__/",
        "helper.pyc",
        "node_modules/",
    )


# ---------------------------------------------------------------------------------------------
# names


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("../evil", r"climbs out of the bot folder"),
        ("a/../../evil", r"climbs out of the bot folder"),
        ("a/b/../../../evil", r"climbs out of the bot folder"),
        ("/etc/cron.d/evil", r"is an absolute path"),
        ("//host/share/evil", r"is an absolute path"),
        ("..\\evil", r"a Windows path"),
        ("C:\\Windows\\evil", r"a Windows path"),
        ("C:evil", r"a Windows path"),
        ("bot.py\x00.txt", r"control character '\\x00'"),
        ("\x1b]0;pwned\x07bot.py", r"control character '\\x1b'"),
        ("bot\u202e.py", r"control character '\\u202e'"),  # right-to-left override
        ("deep/" * 300 + "f", r"a path over 1024 bytes"),
        ("x" * 256, r"a name over 255"),
    ],
)
@pytest.mark.parametrize("how", ["zip", "tar"])
def test_unsafe_names_are_refused(tmp_path: Path, name: str, problem: str, how: str) -> None:
    if how == "zip":  # by hand: zipfile cuts a name at a NUL
        data = raw_zip([Raw(b"bot.toml", BOT_TOML), Raw(name.encode(), b"evil", flags=0x800)])
    else:
        data = tar_of([Member("bot.toml", BOT_TOML), Member(name, b"evil")])
    error = refused(data, tmp_path, f"^member '.*{problem}")
    assert f"member '{bounded(name, 120)[:40]}" in str(error)  # named, escaped


def test_a_tar_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    data = raw_tar_headers(iter([b"bot\xff.py"]), 1)
    refused(data, tmp_path, r"^member 'bot.*': its name is not UTF-8")


# ---------------------------------------------------------------------------------------------
# kinds


@pytest.mark.parametrize(
    ("member", "problem"),
    [
        (Member("key", type=tarfile.SYMTYPE, linkname="/etc/shadow"), "symbolic link"),
        (Member("key", type=tarfile.SYMTYPE, linkname="../../other-bot/bot.py"), "symbolic link"),
        (Member("key", type=tarfile.SYMTYPE, linkname="bot.py"), "symbolic link"),  # in
        (Member("key", type=tarfile.LNKTYPE, linkname="/etc/shadow"), "hard link"),
        (Member("key", type=tarfile.LNKTYPE, linkname="bot.toml"), "hard link"),  # in
    ],
)
def test_links_in_a_tar_are_refused_wherever_they_point(
    tmp_path: Path, member: Member, problem: str
) -> None:
    data = tar_of([Member("bot.toml", BOT_TOML), member, Member("bot.py", BOT_PY)])
    refused(data, tmp_path, rf"^member 'key' is a {problem}; uploads take no links")


@pytest.mark.parametrize("target", [b"/etc/shadow", b"../../x", b"bot.py"])
def test_a_link_in_a_zip_is_refused(tmp_path: Path, target: bytes) -> None:
    """As ``zip -y`` stores one: the link's mode in the external attributes, its target as
    the data."""
    link = Raw(b"key", target, mode=stat.S_IFLNK | 0o777)
    data = raw_zip([Raw(b"bot.toml", BOT_TOML), link, Raw(b"bot.py", BOT_PY)])
    refused(data, tmp_path, r"^member 'key' is a symbolic link; uploads take no links")


@pytest.mark.parametrize(
    ("type_", "what"),
    [
        (tarfile.FIFOTYPE, "a FIFO"),
        (tarfile.CHRTYPE, "a device"),
        (tarfile.BLKTYPE, "a device"),
        (tarfile.GNUTYPE_SPARSE, "a sparse file"),
        (b"Z", "of tar type 'Z'"),
    ],
)
def test_special_members_in_a_tar_are_refused(tmp_path: Path, type_: bytes, what: str) -> None:
    data = tar_of(
        [Member("bot.toml", BOT_TOML), Member("thing", type=type_)], fmt=tarfile.GNU_FORMAT
    )
    refused(data, tmp_path, rf"^member 'thing' is {what}")


@pytest.mark.parametrize(
    ("mode", "what"),
    [(stat.S_IFIFO, "a FIFO"), (stat.S_IFCHR, "a device"), (stat.S_IFSOCK, "a socket")],
)
def test_special_members_in_a_zip_are_refused(tmp_path: Path, mode: int, what: str) -> None:
    data = raw_zip([Raw(b"bot.toml", BOT_TOML), Raw(b"thing", mode=mode | 0o644)])
    refused(data, tmp_path, rf"^member 'thing' is {what}")


@pytest.mark.parametrize(
    ("names", "problem"),
    [
        (["bot.py", "bot.py"], r"^member 'bot.py' appears twice"),
        (["bot.py", "./bot.py"], r"^member './bot.py' appears twice"),
        (["lib/a.py", "lib//a.py"], r"^member 'lib//a.py' appears twice"),
        (["lib", "lib/a.py"], r"^member 'lib/a.py': 'lib' is both a file and a folder"),
        (["lib/a.py", "lib"], r"^member 'lib': 'lib' is both a file and a folder"),
    ],
)
@pytest.mark.parametrize("how", ["zip", "tar"])
def test_duplicate_names_are_refused(
    tmp_path: Path, names: list[str], problem: str, how: str
) -> None:
    """A second member of one name would overwrite the first: which one is the bot's?"""
    if how == "zip":
        data = raw_zip([Raw(b"bot.toml", BOT_TOML), *(Raw(n.encode(), b"x") for n in names)])
    else:
        data = tar_of([Member("bot.toml", BOT_TOML), *(Member(n, b"x") for n in names)])
    refused(data, tmp_path, problem)


@pytest.mark.parametrize(
    ("member", "problem"),
    [
        (Raw(b"bot.py", BOT_PY, flags=0x1), r"^member 'bot.py' is encrypted"),
        # zipfile inflates bzip2 and lzma with no bound on one read: a bomb's shape
        (
            Raw(b"bot.py", BOT_PY, method=zipfile.ZIP_BZIP2),
            r"^member 'bot.py' is compressed with method 12",
        ),
        (
            Raw(b"bot.py", BOT_PY, method=zipfile.ZIP_LZMA),
            r"^member 'bot.py' is compressed with method 14",
        ),
    ],
)
def test_encrypted_and_bzip2_zip_members_are_refused(
    tmp_path: Path, member: Raw, problem: str
) -> None:
    refused(raw_zip([Raw(b"bot.toml", BOT_TOML), member]), tmp_path, problem, UNREADABLE)


# ---------------------------------------------------------------------------------------------
# sizes and bombs


def test_an_upload_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    class Endless(io.RawIOBase):
        given = 0

        def readable(self) -> bool:
            return True

        def readinto(self, b: memoryview) -> int:  # type: ignore[override]
            b[:] = bytes(len(b))
            self.given += len(b)
            return len(b)

    endless = Endless()
    home = tmp_path / "uploads"
    home.mkdir()
    with pytest.raises(UploadError, match=r"^the upload is over the 64 MiB") as caught:
        unpack(io.BufferedReader(endless), home / "bot")
    assert caught.value.status == TOO_LARGE
    assert endless.given <= (64 << 20) + (2 << 20) and list(home.iterdir()) == []
    refused(
        b"\0" * 1025,
        tmp_path / "b",
        r"^the upload is over the 1 KiB",
        TOO_LARGE,
        UploadLimits(upload_bytes=1024),
    )


def test_a_1_kb_zip_declaring_10_gib_is_refused_from_its_header(tmp_path: Path) -> None:
    bomb = raw_zip([Raw(b"bot.toml", BOT_TOML), Raw(b"zeros", b"\0" * 100, size=10 * GIB)])
    assert len(bomb) < 1024
    with files_at_most(1 << 20):
        refused(
            bomb,
            tmp_path,
            r"^member 'zeros' is 10737418240 bytes, over the 1 GiB one file "
            "may hold$",
            TOO_LARGE,
        )


def test_a_zip_inflating_to_10_gib_is_refused_from_its_header(tmp_path: Path) -> None:
    bomb = raw_zip(
        [
            Raw(b"bot.toml", BOT_TOML),
            Raw(b"zeros", inflating_to(10 * GIB), size=10 * GIB, crc=0, method=8),
        ]
    )
    assert len(bomb) < 12 << 20
    with files_at_most(1 << 20):
        refused(bomb, tmp_path, r"^member 'zeros' is 10737418240 bytes, over the 1 GiB", TOO_LARGE)


def test_many_honest_members_over_the_total_are_refused_before_writing(tmp_path: Path) -> None:
    """The 42.zip shape without nesting: each member small, together over the limit."""
    members = [
        Raw(f"z{i}".encode(), inflating_to(8 << 20), size=8 << 20, crc=0, method=8)
        for i in range(40)
    ]
    with files_at_most(1 << 20):
        refused(
            raw_zip([Raw(b"bot.toml", BOT_TOML), *members]),
            tmp_path,
            r"expand to more than 256 MiB \(at member 'z31'\)",
            TOO_LARGE,
        )


def test_a_zip_header_understating_its_data_is_cut_at_what_it_declares(tmp_path: Path) -> None:
    """10 GiB of deflate behind a header that says 1 MiB: no more than 1 MiB is ever
    inflated or written, and the checksum (of the 10 GiB) does not match: corrupt."""
    bomb = raw_zip(
        [
            Raw(b"bot.toml", BOT_TOML),
            Raw(b"zeros", inflating_to(10 * GIB), size=1 << 20, crc=1, method=8),
        ]
    )
    with files_at_most((1 << 20) + 1):
        refused(bomb, tmp_path, r"^a corrupt archive at member 'zeros': Bad CRC-32", UNREADABLE)


def test_a_reader_yielding_more_than_declared_is_cut_at_the_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the parser below does (a bug, another version), the writer counts: a member
    whose reader never ends stops at the size its header declared."""
    monkeypatch.setattr(zipfile.ZipExtFile, "read", lambda self, n=-1: b"\0" * (1 << 20))
    data = raw_zip([Raw(b"bot.toml", BOT_TOML), Raw(b"zeros", b"\0" * 4096)])
    with files_at_most(4096 + 1):
        refused(
            data,
            tmp_path,
            rf"^member 'bot.toml' holds more than the {len(BOT_TOML)} bytes "
            "its header declares",
            UNREADABLE,
        )


def _no_zipfile(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any parse by zipfile fail the test: what these archives cost zipfile (seconds and
    hundreds of MB for 100,000 entries, quadratic time for an extra-field flood) must be
    refused before zipfile sees them. Shown by structure, not by a clock."""

    def parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("zipfile parsed the archive before it was refused")

    monkeypatch.setattr(zipfile, "ZipFile", parse)


@pytest.mark.parametrize("how", ["zip", "tar", "tar.gz"])
def test_100000_tiny_files_are_refused_fast_by_count(
    tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = (b"%07x" % i for i in range(100_000))
    if how == "zip":
        data = raw_zip([Raw(b"bot.toml", BOT_TOML), *(Raw(n) for n in names)])
        _no_zipfile(monkeypatch)  # counted from the central directory: zipfile never runs
    else:
        data = raw_tar_headers(names, 100_000)
        data = gzip.compress(data, 1) if how == "tar.gz" else data
    refused(data, tmp_path, r"^the archive holds more than 10000 members", TOO_LARGE)


@pytest.mark.parametrize("how", ["zip", "tar"])
def test_folders_implied_by_paths_count_as_members(tmp_path: Path, how: str) -> None:
    """2,000 files, each 11 folders deep on a branch of its own: 24,000 files and folders
    from 2,000 members. A path may be 1024 bytes deep, so without counting them 10,000
    members could make five million folders."""
    names = [f"b{i}/" + "d/" * 10 + "f" for i in range(2000)]
    if how == "zip":
        data = raw_zip([Raw(b"bot.toml", BOT_TOML), *(Raw(n.encode()) for n in names)])
    else:
        data = tar_of([Member("bot.toml", BOT_TOML), *(Member(n) for n in names)])
    refused(
        data,
        tmp_path,
        r"^the archive's paths make more than 10000 files and folders \(at "
        r"member 'b833/d/d/d/d/d/d/d/d/d/d/f'\)",
        TOO_LARGE,
    )


def test_a_deep_path_within_the_limits_is_fine(tmp_path: Path) -> None:
    deep = "a/" * 511 + "f"  # 1023 bytes, 511 folders
    bot = accepted(zip_of({**BOT, deep: b"deep"}), tmp_path)
    assert (bot.folder / deep).read_bytes() == b"deep"


def test_a_zip_that_lies_about_its_count_is_counted_anyway(tmp_path: Path) -> None:
    data = bytearray(raw_zip([Raw(b"%07x" % i) for i in range(10_001)]))
    data[-14:-10] = struct.pack("<2H", 1, 1)  # the end record's counts: 1 member
    refused(bytes(data), tmp_path, r"^the archive holds more than 10000 members", TOO_LARGE)


def test_a_zip_extra_field_flood_is_refused_before_zipfile_decodes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """16,000 empty extra records in one entry cost zipfile ~15 ms to decode (it slices the
    field once per record); a 64 MiB upload holds a thousand such entries."""
    flood = b"\x99\x99\0\0" * 16_000
    data = raw_zip([Raw(b"bot.toml", BOT_TOML), *(Raw(b"%d" % i, extra=flood) for i in range(50))])
    _no_zipfile(monkeypatch)
    refused(
        data, tmp_path, r"^a corrupt archive: an entry with 16000 extra-field records", UNREADABLE
    )


def test_a_tar_header_declaring_10_gib_is_refused_before_reading(tmp_path: Path) -> None:
    config = tarfile.TarInfo("bot.toml")
    config.size = len(BOT_TOML)
    header = tarfile.TarInfo("zeros")
    header.size = 10 * GIB  # base-256 in GNU format
    data = config.tobuf(tarfile.GNU_FORMAT) + BOT_TOML.ljust(512, b"\0")
    data += header.tobuf(tarfile.GNU_FORMAT) + b"\0" * 4096
    refused(data, tmp_path, r"^member 'zeros' is 10737418240 bytes, over the 1 GiB", TOO_LARGE)


@pytest.mark.parametrize("type_", [tarfile.XHDTYPE, tarfile.GNUTYPE_LONGNAME])
def test_a_tar_header_record_declaring_10_gib_stops_at_the_header_limit(
    tmp_path: Path, type_: bytes
) -> None:
    """tarfile reads a pax header or a GNU long name whole into memory, however long its
    header says it is: here 10 GiB, in a gzip that inflates to 1 GiB of zeros. The reader
    below tarfile stops it after 64 KiB."""
    header = tarfile.TarInfo("././@PaxHeader" if type_ == tarfile.XHDTYPE else "././@LongLink")
    header.type, header.size = type_, 10 * GIB
    bomb = inflating_to(GIB, gzip_wrapped=True, head=header.tobuf(tarfile.GNU_FORMAT))
    assert len(bomb) < 2 << 20
    tracemalloc.start()
    try:
        refused(bomb, tmp_path, r"^the tar's headers at its start run over 64 KiB", TOO_LARGE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20  # tarfile alone would hold the header whole: 520 MB for this one


def test_a_tar_header_declaring_more_than_follows_is_corrupt(tmp_path: Path) -> None:
    data = bytearray(tar_of([Member("bot.toml", BOT_TOML), Member("bot.py", BOT_PY * 100)]))
    cut = data.index(BOT_PY * 100) + 10  # the archive ends mid-file
    refused(bytes(data[:cut]), tmp_path, r"^a corrupt archive", UNREADABLE)
    short = bytearray(tar_of([Member("bot.toml", BOT_TOML)], fmt=tarfile.USTAR_FORMAT))
    short[124:136] = b"%011o\0" % 999_999  # bot.toml's size field: a lie; checksum now wrong
    refused(bytes(short), tmp_path / "b", r"^a corrupt archive", UNREADABLE)


# ---------------------------------------------------------------------------------------------
# bot.toml


def test_a_giant_bot_toml_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    giant = BOT_TOML + b"# padding\n" * 100_000
    refused(
        zip_of({"bot.toml": giant, "bot.py": BOT_PY}),
        tmp_path,
        rf"^bot.toml is {len(giant)} bytes, over the 64 KiB a bot.toml may hold",
        TOO_LARGE,
    )


def test_a_missing_bot_toml_is_refused_with_a_hint(tmp_path: Path) -> None:
    refused(
        zip_of({"bot.py": BOT_PY, "lib/x.py": b""}),
        tmp_path,
        r"^the archive has no bot.toml at its top; upload the bot folder itself",
    )
    nested = zip_of({"outer/inner/bot.toml": BOT_TOML, "outer/inner/bot.py": BOT_PY})
    refused(
        nested,
        tmp_path / "b",
        r"^the archive has no bot.toml in the archive's one folder "
        r"outer/ \(one is at 'outer/inner/bot.toml'\)",
    )
    refused(zip_of({}), tmp_path / "c", r"^the archive has no bot.toml at its top")
    refused(zip_of({"bot.toml/x": b"", "bot.py": BOT_PY}), tmp_path / "d", r"^bot.toml is a folder")


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (b'version = "1"\ncommand = ["x"]\n', r"^bot.toml: key `name` is missing$"),
        (
            b'name = "a\\u001b[2J"\nversion = "1"\ncommand = ["x"]\n',
            r"^bot.toml: key `name` holds the control character '\\x1b'",
        ),
        (b"name = [\n", r"^bot.toml: not valid TOML"),
        (b"\xff\xfe", r"^bot.toml: not valid TOML"),
    ],
)
def test_an_invalid_bot_toml_is_refused_with_its_own_message(
    tmp_path: Path, toml: bytes, message: str
) -> None:
    """config.py's message passes through, with the server's staging path taken out."""
    refused(tar_of({"mybot/bot.toml": toml, "mybot/bot.py": BOT_PY}, gz=True), tmp_path, message)


# ---------------------------------------------------------------------------------------------
# not archives


@pytest.mark.parametrize(
    "data",
    [b"", b"hello", b"\x89PNG\r\n\x1a\n" + bytes(600), b"BZh91AY&SY" + bytes(600), bytes(1024)],
)
def test_what_is_not_a_zip_or_tar_is_refused(tmp_path: Path, data: bytes) -> None:
    refused(data, tmp_path, r"^not a zip, tar or tar.gz archive$", UNREADABLE)


def test_corrupt_archives_are_refused(tmp_path: Path) -> None:
    good_zip, good_tgz = zip_of(BOT), tar_of(BOT, gz=True)
    cases = {
        "zip cut short": good_zip[: len(good_zip) // 2],
        "zip bad checksum": raw_zip([Raw(b"bot.toml", BOT_TOML, crc=1234)]),
        "zip bad deflate": raw_zip([Raw(b"bot.toml", b"\xff" * 64, size=68, method=8)]),
        "zip names disagree": good_zip.replace(b"bot.py", b"bot.px", 1),  # the local header's
        "tar.gz cut short": good_tgz[: len(good_tgz) // 2],
        "gzip of no tar": gzip.compress(b"not a tar at all" * 100),
        "tar bad checksum": tar_of(BOT).replace(b"bot.toml\0", b"bot.tomm\0", 1),
    }
    for i, (case, data) in enumerate(cases.items()):
        error = refused(data, tmp_path / str(i), r"^a corrupt archive", UNREADABLE)
        assert len(str(error)) < 300, case


# ---------------------------------------------------------------------------------------------
# the caller's side


def test_dest_must_not_exist(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "theirs").write_text("kept")
    with pytest.raises(FileExistsError):
        unpack(zip_of(BOT), tmp_path / "bot")
    assert (tmp_path / "bot" / "theirs").read_text() == "kept"


def test_limits_stay_within_a_bot_folders() -> None:
    with pytest.raises(ValueError, match="may not exceed"):
        UploadLimits(total_bytes=8 * GIB)
    with pytest.raises(ValueError, match="must be positive"):
        UploadLimits(members=0)


def test_pack_refuses_what_the_server_would(tmp_path: Path) -> None:
    folder = tmp_path / "mybot"
    folder.mkdir()
    (folder / "bot.toml").write_bytes(BOT_TOML)
    (folder / "bot.py").write_bytes(BOT_PY)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"cache")
    (folder / ".ttr-build").write_text("stamp")
    assert zipfile.ZipFile(io.BytesIO(pack(folder))).namelist() == ["bot.py", "bot.toml"]
    (folder / "data.txt").symlink_to("bot.py")
    with pytest.raises(UploadError, match=r"'data.txt' is a link \(to 'bot.py'\); uploads take no"):
        pack(folder)
    (folder / "data.txt").unlink()
    (folder / "bad\x1bname").write_text("x")
    with pytest.raises(UploadError, match=r"file 'bad\\x1bname': its name holds the control"):
        pack(folder)
    (folder / "bad\x1bname").unlink()
    with pytest.raises(UploadError, match=rf"bot.toml is {len(BOT_TOML)} bytes, over the 64 bytes"):
        pack(folder, UploadLimits(config_bytes=64))
    (folder / "big.bin").write_bytes(b"\0" * 4096)
    with pytest.raises(UploadError, match=r"its files hold more than 2 KiB") as caught:
        pack(folder, UploadLimits(total_bytes=2048))
    assert caught.value.status == TOO_LARGE
