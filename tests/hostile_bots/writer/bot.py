"""Hostile bot: writes outside its scratch /tmp at StartGame, then fills the scratch.

Targets: ``create`` -- files to create (in another bot's folder, the records, the SDK's
packages, site-packages, the host's /tmp); ``append`` -- existing files to append to (another
bot's code, a record, the results store). It also tries its own folder. Writing its scratch
(``/tmp``, ``$HOME``) must work; ``fill_mb`` says how much it then writes there, to find the
scratch's size limit, and into each other writable folder it can find (its socket's, where
the referee reaches it), whose size must be bounded too.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HERE, HostileBot, attempt, main, report, targets
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HERE, HostileBot, attempt, main, report, targets

TAG = b"\n# written by a hostile bot\n"


def create(path: str) -> str:
    with open(path, "xb") as f:
        f.write(TAG)
    return "created"


def append(path: str) -> str:
    with open(path, "ab") as f:
        f.write(TAG)
    return "appended"


def scratch(folder: str) -> str:
    """Write and read back 1 MB in a writable place: what a bot may do."""
    data = os.urandom(1 << 20)
    with tempfile.NamedTemporaryFile(dir=folder) as f:
        f.write(data)
        f.flush()
        f.seek(0)
        if f.read() != data:
            raise OSError("read back something else")
    return f"1 MB in {folder}"


def fill(folder: str, megabytes: int) -> None:
    """Write up to ``megabytes`` MB into ``folder``, reporting where it stopped."""
    chunk = b"\xa5" * (1 << 20)
    path = os.path.join(folder, "fill.bin")
    written = 0
    try:
        with open(path, "wb") as f:
            while written < megabytes:
                f.write(chunk)
                f.flush()
                written += 1
            os.fsync(f.fileno())
    except OSError as e:
        report(f"fill {folder} with {megabytes} MB", f"stopped at {written} MB: {e}")
    else:
        report(f"fill {folder} with {megabytes} MB", f"SUCCEEDED {written} MB")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


class WriterBot(HostileBot):
    def attack_at_start(self, game: Game) -> None:
        t = targets()
        for path in [str(HERE / "pwned.txt"), *t.get("create", [])]:
            attempt(f"create {path}", create, path)
        for path in [str(HERE / "bot.py"), *t.get("append", [])]:
            attempt(f"append {path}", append, path)
        attempt("scratch /tmp", scratch, "/tmp")
        home = os.environ.get("HOME", "")
        if home:
            attempt(f"scratch $HOME={home}", scratch, home)
        fill(tempfile.gettempdir(), int(t.get("fill_mb", 0)))
        socket_dir = os.path.dirname(os.environ.get("TTR_BOT_ADDRESS", "unix:").split(":", 1)[1])
        if socket_dir and os.access(socket_dir, os.W_OK):
            fill(socket_dir, int(t.get("fill_mb", 0)))


if __name__ == "__main__":
    main(WriterBot())
