"""The season a store keeps (issue 35, item 11): a restart without the season file runs the
stored season, and a start that changes the pools or clocks of a running season is refused,
naming the changes, unless the organiser says ``reconfigure``. The ladder is opened in this
process (nothing plays); the command line's side is tests/cli/test_server_ladder_faults.py's.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from leaderboard.faults import FaultRule
from leaderboard.ladder.season import (
    Pool,
    Season,
    SeasonError,
    read_season,
    season_changes,
    season_data,
    season_from,
)
from leaderboard.ladder.service import Ladder, LadderError, stored_season
from leaderboard.ladder.store import LadderStore
from leaderboard.matchmaking import MatchSettings
from referee.hosting.sandbox import SandboxConfig

ROOT = Path(__file__).resolve().parents[2]
UNSANDBOXED = SandboxConfig(enabled=False)
#: the issue's season: two pools, usa 4p and 2p
TWO_POOLS = Season(
    name="Two pools",
    pools=(Pool("usa@1", 4, 1.0), Pool("usa@1", 2, 3.0)),
    move_ms=1500,
    per_day=4,
    faults=FaultRule(window=20, rate=0.2, minimum=3),
    matchmaking=MatchSettings(window_min=2, inherit_mu=False),
    build_timeout_s=120.0,
)


def run_once(data: Path, season: Season, **kwargs: object) -> tuple[Ladder, list[str]]:
    """Open (and close again) a ladder on ``data``: what a start does to the store."""
    lines: list[str] = []
    ladder = Ladder(season, data, sandbox=UNSANDBOXED, log=lines.append, **kwargs)  # type: ignore[arg-type]
    try:
        ladder.open()
    finally:
        ladder.stop()
    return ladder, lines


@pytest.mark.parametrize(
    "season", [Season(), TWO_POOLS, read_season(ROOT / "docs" / "season.example.toml")]
)
def test_a_season_is_kept_in_the_season_files_shape_and_reads_back_whole(season: Season) -> None:
    assert season_from(season_data(season)) == season
    assert season_from(json.loads(json.dumps(season_data(season)))) == season


def test_a_restart_without_the_file_runs_the_stored_season(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert stored_season(data) is None  # a new folder: the defaults (or the flags) make one
    run_once(data, TWO_POOLS)
    assert stored_season(data) == TWO_POOLS
    with LadderStore(data / "season.db") as store:
        tournament = store.season_tournament()
        assert tournament is not None
        assert tournament.spec.config["pools"] == [["usa@1", 4, 1.0], ["usa@1", 2, 3.0]]
    _, lines = run_once(data, TWO_POOLS)
    assert not [line for line in lines if "changes" in line]


def test_a_start_that_changes_pools_or_clocks_is_refused_naming_the_changes(
    tmp_path: Path,
) -> None:
    """What the issue's restart did (the default season, usa 4p alone, over a store of two
    pools) is refused, as is a clock changed by a flag; ``reconfigure`` makes both the
    season, kept for the next start; a change of anything else is only logged."""
    data = tmp_path / "data"
    run_once(data, TWO_POOLS)
    with pytest.raises(LadderError) as refused:
        run_once(data, Season())
    message = str(refused.value)
    assert "pools: usa@1 4p, usa@1 2p -> usa@1 4p" in message
    assert "clock.move_ms: 1500 -> 1000" in message and "--reconfigure" in message
    assert "per_day" not in message  # not guarded: named in the log when applied
    with pytest.raises(LadderError, match=r"clock\.bank_ms: 10000 -> 20000"):
        run_once(data, dataclasses.replace(TWO_POOLS, bank_ms=20_000))
    assert stored_season(data) == TWO_POOLS  # a refused start wrote nothing

    looser = dataclasses.replace(TWO_POOLS, per_day=9, name="Renamed")
    _, lines = run_once(data, looser)
    assert stored_season(data) == looser
    assert any("submissions.per_day: 4 -> 9" in line for line in lines), lines

    one_pool = dataclasses.replace(looser, pools=(Pool("usa@1", 3),), move_ms=800)
    run_once(data, one_pool, reconfigure=True)
    assert stored_season(data) == one_pool
    with LadderStore(data / "season.db") as store:
        tournament = store.season_tournament()
        assert tournament is not None
        spec = tournament.spec
        assert (spec.name, spec.variant, spec.players) == ("Renamed", "usa@1", 3)


def test_a_store_of_an_older_server_gives_the_season_it_kept(tmp_path: Path) -> None:
    """A store written before the season was kept whole (the issue's own store) held the
    pools, clocks, daily count, active versions and fault rule: a start without the file runs
    those."""
    data = tmp_path / "data"
    run_once(data, TWO_POOLS)
    with sqlite3.connect(data / "season.db") as db:
        [(config,)] = db.execute("SELECT config FROM tournaments").fetchall()
        old = {k: v for k, v in json.loads(config).items() if k != "season"}
        db.execute("UPDATE tournaments SET config = ?", (json.dumps(old),))
    stored = stored_season(data)
    assert stored is not None
    assert stored.pools == TWO_POOLS.pools and stored.name == TWO_POOLS.name
    assert (stored.move_ms, stored.per_day, stored.faults) == (1500, 4, TWO_POOLS.faults)
    assert stored.matchmaking == MatchSettings()  # not kept then: the defaults


def test_the_changes_are_named_key_by_key() -> None:
    new = dataclasses.replace(
        TWO_POOLS, pools=(Pool("usa@1", 4, 2.0), Pool("usa@1", 2, 3.0)), startup_s=20.0
    )
    assert [(str(c), c.guarded) for c in season_changes(TWO_POOLS, new)] == [
        ("pools[usa@1 4p].weight: 1 -> 2", False),
        ("clock.startup_s: 10 -> 20", True),
    ]
    with pytest.raises(SeasonError, match="build_timeout_s must be positive"):
        dataclasses.replace(TWO_POOLS, build_timeout_s=0)
