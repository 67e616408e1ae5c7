"""Keyed seeds: how a seed a person gives becomes a game seed no bot can work out.

A bot that learns a game's seed knows every hand, every ticket and the order of the deck.
Drawn from the OS (63 bits), a seed is beyond search. But a seed a person gives is usually a
small number (``--seed 7``, ``--seed 123456``), and the engine and the wire are public: a bot
that tries seeds one after another against what it was dealt (or against its ``bot_seed``,
a public hash of the seed and its seat) finds a small one in seconds of its time bank, and a
tournament's game seeds, if they were a public hash of the organiser's base seed, fall with it.

So a given seed reaches the engine only through HMAC-SHA256 under a key of 32 random bytes
that bots cannot read (:func:`keyed_seed`): the same number and the same key give the same
game again, and without the key the number says nothing about the game. A tournament's key
lives in its results store (``leaderboard.store.Store.seed_key``); ``ttr play``'s lives in a
file of the user's (:func:`user_key`), out of every sandboxed bot's reach. The game seed
itself is kept in the record, so a record replays anywhere without the key.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

#: bits of every seed we draw or derive: beyond search, and within SQLite's signed INTEGER
SEED_BITS = 63
KEY_BYTES = 32  #: the size of every seed key: HMAC-SHA256's block of entropy
#: the environment variable that names the user's seed key file (tests, several keys)
KEY_FILE_ENV = "TTR_SEED_KEY_FILE"


class SeedKeyError(Exception):
    """The user's seed key file cannot be read or created; one line naming it."""


def keyed_seed(key: bytes, message: str) -> int:
    """A 63-bit game seed from ``message`` under ``key``: the first 8 bytes of
    HMAC-SHA256(key, message), big-endian, less one bit. Deterministic on every machine; with
    a secret key, knowing the message (a seed somebody typed) tells nothing about the result,
    and 63 bits are beyond a search against a dealt hand."""
    if len(key) != KEY_BYTES:
        raise ValueError(f"a seed key is {KEY_BYTES} bytes, not {len(key)}")
    digest = hmac.new(key, message.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def play_seed(key: bytes, given: int) -> int:
    """The seed of the game ``ttr play --seed GIVEN`` deals when its bots are untrusted (the
    sandbox is on): keyed, so that the same number on the same key deals the same game, and
    a bot cannot search for the number."""
    return keyed_seed(key, f"ttr-arena/play/{given}")


def user_key_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where this user's seed key lives: ``$TTR_SEED_KEY_FILE`` if set, else
    ``$XDG_DATA_HOME/ttr-arena/seed.key``, else ``~/.local/share/ttr-arena/seed.key``: in the
    user's home, which no sandboxed bot sees (only its folder and the runtime are mounted)."""
    env = os.environ if environ is None else environ
    named = env.get(KEY_FILE_ENV)
    if named:
        return Path(named).expanduser()
    data = env.get("XDG_DATA_HOME")
    base = Path(data) if data and Path(data).is_absolute() else Path.home() / ".local" / "share"
    return base / "ttr-arena" / "seed.key"


def user_key(path: Path | None = None) -> bytes:
    """This user's seed key, created on first use: 32 bytes from ``secrets``, written as one
    line of hex to a file of mode 0600 (its folder 0700). Creation is atomic: the key is
    written to a private temporary file and linked into place, so two commands starting at
    once agree on one key and neither reads a half-written file. A key file that others may
    read is refused, as ssh refuses such a private key: whoever reads it can work out the
    games of every ``--seed`` given on this machine."""
    path = user_key_path() if path is None else path
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_bytes(KEY_BYTES).hex() + "\n")
                f.flush()
                os.fsync(f.fileno())
            # fails if another process linked its key first: then that key is the user's
            with contextlib.suppress(FileExistsError):
                os.link(temp, path)
        finally:
            temp.unlink(missing_ok=True)
    except OSError as e:
        raise SeedKeyError(f"{path}: cannot create the seed key ({e.strerror or e})") from None
    try:
        return _read_key(path)
    except FileNotFoundError:
        raise SeedKeyError(f"{path}: the seed key vanished as it was created") from None


def _read_key(path: Path) -> bytes:
    """The key in ``path``; FileNotFoundError if there is none yet, SeedKeyError if the file
    is not a key or others may read it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise SeedKeyError(f"{path}: cannot read the seed key ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SeedKeyError(f"{path}: the seed key is not a regular file")
        if info.st_mode & 0o077:
            raise SeedKeyError(
                f"{path}: the seed key may be read by others (mode "
                f"{stat.S_IMODE(info.st_mode):04o}); `chmod 600 {path}`"
            )
        text = f.read(4 * KEY_BYTES)
    try:
        key = bytes.fromhex(text.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise SeedKeyError(
            f"{path}: not a seed key (one line of {2 * KEY_BYTES} hex digits); remove it to "
            "make a new one (the games of earlier --seed numbers then change)"
        )
    return key


def exposed_by(secret: Path, readable: list[Path]) -> Path | None:
    """The first of ``readable`` (folders or files a bot can read: its folder, the
    ``--read-only`` paths) that is ``secret`` or holds it, or None. A seed key under such a
    path would be in the bots' reach, and with it every keyed seed."""
    target = secret.resolve()
    for path in readable:
        if target.is_relative_to(path.resolve()):
            return path
    return None
