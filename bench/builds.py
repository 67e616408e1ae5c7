"""Seconds per build of each starter kit: cold, and after a one-line edit, jailed and not.

For each kit (``ttr new-bot``'s go, cpp, node, python) a fresh bot folder is made and built
by the launcher's own :func:`referee.hosting.build.ensure_built`, as ``ttr play`` would before
its first game: once cold, then again after each of ``--edits`` one-line edits of the kit's
main source (a comment appended), best and worst of those printed. Sandboxed (the jailed
build, with the folder's build cache) and unsandboxed (``--no-sandbox``: the user's own
environment; Go gets an empty ``GOCACHE`` of its own for the cold build, so that "cold" is
cold there too, and keeps it for the edits). Node and Python kits have no build step: their
figure is the launcher finding nothing to do.

    python bench/builds.py [--kit go ...] [--edits N] [--no-unsandboxed] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from referee.hosting.build import ensure_built
from referee.hosting.config import read_bot_config
from referee.hosting.newbot import new_bot
from referee.hosting.sandbox import NO_SANDBOX, SandboxConfig, unavailable_reason

KITS = {"go": "main.go", "cpp": "bot.cc", "node": "bot.js", "python": "bot.py"}
_COMMENT = {"go": "//", "cpp": "//", "node": "//", "python": "#"}


def _build(folder: Path, sandbox: SandboxConfig) -> float:
    started = time.monotonic()
    ensure_built(read_bot_config(folder), sandbox)
    return time.monotonic() - started


def measure(kit: str, sandboxed: bool, edits: int, parent: Path) -> dict[str, float]:
    tag = "jailed" if sandboxed else "plain"
    folder = new_bot(f"b_{kit}_{tag}", kit, parent)
    sandbox = SandboxConfig() if sandboxed else NO_SANDBOX
    saved = os.environ.get("GOCACHE")
    if not sandboxed:
        os.environ["GOCACHE"] = str(parent / f"gocache-{kit}")
    try:
        cold = _build(folder, sandbox)
        times = []
        for i in range(edits):
            with (folder / KITS[kit]).open("a") as f:
                f.write(f"{_COMMENT[kit]} edit {i}\n")
            times.append(_build(folder, sandbox))
    finally:
        if not sandboxed:
            if saved is None:
                os.environ.pop("GOCACHE", None)
            else:
                os.environ["GOCACHE"] = saved
    return {"cold": cold, "edit_best": min(times), "edit_worst": max(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kit", action="append", choices=sorted(KITS), help="default: all")
    parser.add_argument("--edits", type=int, default=3, help="one-line edits per kit (3)")
    parser.add_argument("--no-unsandboxed", action="store_true", help="jailed builds only")
    parser.add_argument("--no-sandboxed", action="store_true", help="unsandboxed builds only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    kits = args.kit or list(KITS)
    modes = []
    if not args.no_sandboxed:
        why = unavailable_reason()
        if why:
            print(f"no sandbox here ({why}): unsandboxed builds only", file=sys.stderr)
        else:
            modes.append(True)
    if not args.no_unsandboxed:
        modes.append(False)
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="ttr-bench-builds-") as tmp:
        for kit in kits:
            for sandboxed in modes:
                mode = "sandboxed" if sandboxed else "unsandboxed"
                results.setdefault(kit, {})[mode] = measure(kit, sandboxed, args.edits, Path(tmp))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'kit':8} {'mode':12} {'cold s':>8} {'edit s (best-worst)':>22}")
    for kit, modes_of in results.items():
        for mode, r in modes_of.items():
            edit = f"{r['edit_best']:.1f}-{r['edit_worst']:.1f}"
            print(f"{kit:8} {mode:12} {r['cold']:8.1f} {edit:>22}")


if __name__ == "__main__":
    main()
