"""``ttr leaderboard html``: the league page as a folder of static files, to copy to any web
host (or open from disk): ``index.html`` (the page, its data inside, no polling),
``games/<game id>.html`` (the replay of each listed game whose record renders: by default
every game of the store) and, with ``logs``, ``games/<game id>/seat<N>.log``. Every link is
relative.

The folder is marked (:data:`MARKER`, listing what was written) so that writing again
replaces exactly those files; a folder that holds anything else and no marker is refused
rather than emptied: an ``--out`` typo must never delete someone's work.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from leaderboard.store import Store
from ttr_arena.pages.league import PageError
from ttr_arena.pages.league.data import league_json, records_roots, servable
from ttr_arena.pages.league.page import page_html
from ttr_arena.pages.league.server import NotFound, render_replay

MARKER = ".ttr-league-page"  #: JSON: the files this command wrote into the folder


@dataclass
class Export:
    """What :func:`export` wrote."""

    out: Path
    replays: int = 0
    logs: int = 0
    size: int = 0  #: bytes written, all files
    #: (game id, why) for each listed game with a record that did not render
    failed: list[tuple[str, str]] = field(default_factory=list)


def _previous_files(out: Path) -> list[Path]:
    """The files an earlier export wrote into ``out`` (to replace), after checking that
    ``out`` is new, empty, or such an export. Only relative paths inside ``out`` count."""
    if not out.exists():
        return []
    if not out.is_dir() or out.is_symlink():
        raise PageError(f"--out {out}: exists and is not a folder")
    marker = out / MARKER
    if not marker.is_file():
        if any(out.iterdir()):
            raise PageError(
                f"--out {out}: a folder with files in it that `ttr leaderboard html` did not "
                "write (no marker file); give a new or empty folder"
            )
        return []
    try:
        listed = json.loads(marker.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PageError(f"--out {out}: its {MARKER} file is unreadable ({e})") from None
    files = []
    for name in listed:
        relative = PurePosixPath(str(name))
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            continue  # not ours to touch
        files.append(out.joinpath(*relative.parts))
    return files


def export(
    db: Path,
    out: Path,
    *,
    recent: int | None = None,
    logs: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Export:
    """Write the static league page of ``db`` into ``out`` (see the module's docstring): every
    game of the store, or the ``recent`` newest. A night's page is its archive, so by default
    nothing is left out (the live page lists the newest 50). ``progress(done, total)`` is
    called after each game's files."""
    previous = _previous_files(out)
    with Store(db, readonly=True) as store:
        league = league_json(store, recent)
        roots = records_roots(store)
        stored = {g["id"]: store.game(g["id"]) for g in league["recent"]}
    for path in previous:
        if path.is_file() and not path.is_symlink():
            path.unlink()
    for folder in sorted({p.parent for p in previous}, key=lambda p: -len(p.parts)):
        if folder != out and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    out.mkdir(parents=True, exist_ok=True)
    result = Export(out)
    written: list[str] = []
    _write_marker(out, written)  # from the start: a half-written folder is still ours

    def write(relative: str, content: bytes) -> None:
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(relative)
        result.size += len(content)

    total = len(league["recent"])
    for done, game in enumerate(league["recent"], 1):
        stored_game = stored.get(game["id"])
        root = None if stored_game is None else roots.get(stored_game.tournament_id)
        if game["replay"] is not None and stored_game is not None:
            record = servable(stored_game.record_path, root)
            try:
                if record is None:
                    raise NotFound("its record file is gone")
                write(game["replay"], render_replay(record, output=logs).encode())
                result.replays += 1
            except NotFound as e:
                game["replay"], game["replay_error"] = None, str(e)
                result.failed.append((game["id"], str(e)))
        elif game["replay_error"]:
            result.failed.append((game["id"], game["replay_error"]))
        for seat in game["seats"]:
            log = None
            if logs and seat["log"] is not None and stored_game is not None:
                kept = [s for s in stored_game.seats if s.seat == seat["seat"]]
                log = servable(kept[0].log_path, root) if kept else None
            if log is None:
                seat["log"] = None
                continue
            with open(log, "rb") as f:
                write(seat["log"], f.read())
            result.logs += 1
        if progress is not None:
            progress(done, total)
    write("index.html", page_html(league, live=False).encode())
    _write_marker(out, written)
    return result


def _write_marker(out: Path, files: list[str]) -> None:
    body: dict[str, Any] = {"written_by": "ttr leaderboard html", "files": files}
    (out / MARKER).write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    return f"{size / 1024:.1f} KiB" if size < 1024 * 1024 else f"{size / 1024 / 1024:.1f} MiB"
