"""The season files the docs show are seasons this program reads: the example file, and the
TOML block of docs/server.md (every key with its default, as documented)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from leaderboard.ladder.season import Pool, Season, read_season, season_from

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_season_reads() -> None:
    season = read_season(ROOT / "docs" / "season.example.toml")
    assert season.name == "Example league"
    assert season.pools == (Pool("usa@1", 4, 3.0), Pool("usa@1", 2, 1.0))


def test_the_documented_defaults_are_the_defaults() -> None:
    """docs/server.md's season block writes each key with the default it names in its
    comment ("default N"); read as a season, its figures are Season()'s own."""
    text = (ROOT / "docs" / "server.md").read_text()
    [block] = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[faults]" in b]
    season = season_from(tomllib.loads(block))
    default = Season()
    section = ""
    for line in block.splitlines():
        if line.startswith("["):
            section = line.split("#")[0].strip()
        found = re.match(r"(\w+) = ([^#]+?)\s+# .*\(default ([^)]+)\)", line)
        if not found or section in ("", "[[pools]]"):
            continue  # the name and the pools are an example, not the defaults
        _key, written, said = found.groups()
        assert written.strip() == said.strip(), line
    assert (season.move_ms, season.bank_ms, season.startup_s) == (
        default.move_ms,
        default.bank_ms,
        default.startup_s,
    )
    assert (season.per_day, season.active_versions, season.workers, season.builds) == (
        default.per_day,
        default.active_versions,
        default.workers,
        default.builds,
    )
    assert season.upload == default.upload
    assert season.recent_games == default.recent_games and season.build_mb == default.build_mb
    assert season.matchmaking == default.matchmaking and season.faults == default.faults
