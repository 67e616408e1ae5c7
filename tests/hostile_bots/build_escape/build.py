"""Hostile build: what an entrant's build step tries on the organiser's machine (issue 21,
item 3). ``targets.json`` beside it says what to try; one ``ATTACK <what>: <outcome>`` line
per attempt goes to the build log.

* ``tcp``: [host, port] of a listener on the host's loopback; ``abstract``: the name of an
  abstract Unix socket of the host (both reachable from a build with the host's network);
* ``fill_mb``: MB to write into its own folder (the build's quota must stop it);
* ``link_out``: a path outside the folder to leave a link to (``leak``);
* always: its uid (never 0) and whether it can see the referee's environment.
"""

import json
import os
import socket
from pathlib import Path

targets = json.loads(Path("targets.json").read_text()) if Path("targets.json").exists() else {}


def report(what: str, outcome: str) -> None:
    print(f"ATTACK {what}: {outcome}", flush=True)


def attempt(what: str, action) -> None:  # type: ignore[no-untyped-def]
    try:
        detail = action()
    except Exception as e:
        report(what, f"{type(e).__name__}: {e}")
    else:
        report(what, "SUCCEEDED" + ("" if detail is None else f" {detail}"))


def tcp() -> str:
    with socket.create_connection(tuple(targets["tcp"]), timeout=2) as s:
        return f"connected to {s.getpeername()}"


def abstract() -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect("\0" + targets["abstract"])
        return "connected"


def fill() -> str:
    written = 0
    chunk = b"\xa5" * (1 << 20)
    try:
        with open("fill.bin", "wb") as f:
            while written < int(targets["fill_mb"]):
                f.write(chunk)
                f.flush()
                written += 1
    except OSError as e:
        raise OSError(f"stopped at {written} MB: {e}") from None
    return f"{written} MB"


report("uid", str(os.getuid()))
attempt(
    "environ of pid 1",
    lambda: (
        "the referee's"
        if b"TTR_BUILD_HOST_SECRET" in Path("/proc/1/environ").read_bytes()
        else "clean"
    ),
)
if "tcp" in targets:
    attempt("tcp", tcp)
if "abstract" in targets:
    attempt("abstract", abstract)
if "fill_mb" in targets:
    attempt("fill", fill)
if "link_out" in targets:
    os.symlink(targets["link_out"], "leak")
Path("bot.py").write_text("built\n")
