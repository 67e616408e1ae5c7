"""The season file: everything an organiser decides about a ladder, in one TOML file.

Why a file. A competition runs for weeks and is restarted (an upgrade, a crash, a SIGKILL);
its rules must be the same after every start, and written where the organiser can read them
back. ``ttr server run --config season.toml`` reads this; flags override single values
(``--data``, ``--workers``, ``--port``), and without a file the flags alone make a season of
one pool. Unknown keys are refused, naming the key: a misspelt ``per_dya`` must not silently
leave the default in force for a season.

Every figure has a default that suits a small competition on one machine (docs/server.md
lists them); the file only needs what differs::

    name = "Autumn league"

    [[pools]]            # one rating pool per variant and seat count
    variant = "usa"
    players = 4
    weight = 3           # the share of games this pool gets

    [[pools]]
    variant = "usa"
    players = 2
    weight = 1

    [submissions]
    per_day = 10         # versions an author may submit per 24 hours
    active_versions = 1  # versions of an author that play at once (older ones retire)

Why the store keeps it too. A season runs for weeks and is restarted; a restart that left the
file off once made a default season of one pool while the league page showed the stored one.
So the store keeps the season as :func:`season_data` writes it (the file's own shape, read
back by :func:`season_from`), a start without a file runs that, and a file that changes the
pools or the clocks of a running season (:func:`season_changes`, ``guarded``) is refused unless
the organiser says ``--reconfigure``: games of one pool under one clock are what its ratings
compare.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leaderboard.faults import FaultRule
from leaderboard.matchmaking import MatchSettings
from referee.games.common.tables import RulesetError
from referee.games.registry import load
from referee.hosting.upload import UploadLimits


class SeasonError(Exception):
    """The season file (or a flag) cannot be used; one line naming the key and the problem."""


@dataclass(frozen=True, slots=True)
class Pool:
    variant: str  #: ruleset ident (``usa@1``): the store's pools are keyed by it
    players: int
    weight: float = 1.0  #: relative share of the ladder's games

    @property
    def label(self) -> str:
        return f"{self.variant} {self.players}p"


@dataclass(frozen=True, slots=True)
class Season:
    name: str = "ladder"
    pools: tuple[Pool, ...] = (Pool("usa@1", 4),)
    # clocks (as `ttr tournament run`)
    move_ms: int = 1000
    bank_ms: int = 10_000
    startup_s: float = 10.0
    # submissions
    per_day: int = 10  #: versions an author may submit in any 24 hours
    active_versions: int = 1  #: versions of one author on the ladder at once
    upload: UploadLimits = field(default_factory=UploadLimits)
    # the ladder
    workers: int = 2  #: games (and validation games) played at once
    builds: int = 1  #: builds run at once
    #: each version's games are counted over its pool's last this-many games for the seed
    #: draw (leaderboard/matchmaking.py, rule 2): a version entered late catches up on these,
    #: not on the whole history
    recent_games: int = 500
    matchmaking: MatchSettings = field(default_factory=MatchSettings)
    faults: FaultRule = field(default_factory=FaultRule)
    build_mb: int = 1024  #: what a build may leave (the jail's tmpfs)
    build_timeout_s: float = 900.0

    def __post_init__(self) -> None:
        if not self.pools:
            raise SeasonError("a season needs at least one pool")
        seen = set()
        for pool in self.pools:
            key = (pool.variant, pool.players)
            if key in seen:
                raise SeasonError(f"pool {pool.label} is listed twice")
            seen.add(key)
            if not (math.isfinite(pool.weight) and pool.weight > 0):
                raise SeasonError(f"pool {pool.label}: weight must be > 0, not {pool.weight}")
        for name in ("move_ms", "bank_ms", "per_day", "active_versions", "workers", "builds"):
            if getattr(self, name) < (0 if name == "bank_ms" else 1):
                raise SeasonError(f"{name} must be positive, not {getattr(self, name)}")
        if self.recent_games < 10:
            raise SeasonError(f"recent_games must be at least 10, not {self.recent_games}")
        if not (math.isfinite(self.build_timeout_s) and self.build_timeout_s > 0):
            raise SeasonError(f"build_timeout_s must be positive, not {self.build_timeout_s}")


# ---------------------------------------------------------------------------------------------
# reading


_SECTIONS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "": {"name": str, "pools": list},
    "clock": {"move_ms": int, "bank_ms": int, "startup_s": (int, float)},
    "submissions": {
        "per_day": int,
        "active_versions": int,
        "upload_mb": (int, float),
        "expanded_mb": (int, float),
        "files": int,
    },
    "ladder": {
        "workers": int,
        "builds": int,
        "recent_games": int,
        "inherit_mu": bool,
        "window_min": int,
        "window_max": int,
        "uniform_seed_share": (int, float),
        "build_mb": int,
        "build_timeout_s": (int, float),
    },
    "faults": {"window": int, "rate": (int, float), "minimum": int},
}
_POOL_KEYS: dict[str, type | tuple[type, ...]] = {
    "variant": str,
    "players": int,
    "weight": (int, float),
}


def read_season(path: str | Path) -> Season:
    """The season in a TOML file; :class:`SeasonError` naming the file, the key and why."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SeasonError(f"{path}: cannot read ({e.strerror or e})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise SeasonError(f"{path}: not valid TOML ({e})") from None
    try:
        return season_from(data)
    except SeasonError as e:
        raise SeasonError(f"{path}: {e}") from None


def season_from(data: dict[str, Any]) -> Season:
    """A season from the parsed file (or from flags shaped the same way)."""
    top = {k: v for k, v in data.items() if not isinstance(v, dict)}
    _check("", top, _SECTIONS[""])
    for section, value in data.items():
        if isinstance(value, dict):
            if section not in _SECTIONS or not section:
                known = ", ".join(f"[{s}]" for s in _SECTIONS if s)
                raise SeasonError(f"unknown section [{section}] (known: {known}, [[pools]])")
            _check(section, value, _SECTIONS[section])
    clock = data.get("clock", {})
    subs = data.get("submissions", {})
    ladder = data.get("ladder", {})
    faults = data.get("faults", {})
    kwargs: dict[str, Any] = {}
    if "name" in top:
        if not top["name"].strip() or len(top["name"]) > 100:
            raise SeasonError("name must be 1 to 100 characters")
        kwargs["name"] = top["name"].strip()
    if "pools" in top:
        kwargs["pools"] = tuple(_pool(i, p) for i, p in enumerate(top["pools"], start=1))
    for key in ("move_ms", "bank_ms", "startup_s"):
        if key in clock:
            kwargs[key] = clock[key]
    for key in ("per_day", "active_versions"):
        if key in subs:
            kwargs[key] = subs[key]
    limits: dict[str, int] = {}
    for key, field_name, scale in (
        ("upload_mb", "upload_bytes", 1 << 20),
        ("expanded_mb", "total_bytes", 1 << 20),
        ("files", "members", 1),
    ):
        if key in subs:
            limits[field_name] = int(subs[key] * scale)
    if limits:
        try:
            kwargs["upload"] = UploadLimits(**limits)
        except ValueError as e:
            raise SeasonError(f"[submissions]: {e}") from None
    for key in ("workers", "builds", "recent_games", "build_mb", "build_timeout_s"):
        if key in ladder:
            kwargs[key] = ladder[key]
    match = {
        k: ladder[k]
        for k in ("inherit_mu", "window_min", "window_max", "uniform_seed_share")
        if k in ladder
    }
    try:
        if match:
            kwargs["matchmaking"] = MatchSettings(**match)
        if faults:
            kwargs["faults"] = FaultRule(**faults)
    except ValueError as e:
        raise SeasonError(str(e)) from None
    return Season(**kwargs)


def _pool(number: int, value: Any) -> Pool:
    if not isinstance(value, dict):
        raise SeasonError(f"pools[{number}] must be a table ([[pools]])")
    _check(f"pools[{number}]", value, _POOL_KEYS)
    if "variant" not in value or "players" not in value:
        raise SeasonError(f"pools[{number}] needs a variant and players")
    try:
        ruleset = load(value["variant"])
    except RulesetError as e:
        raise SeasonError(f"pools[{number}]: {e}") from None
    players = value["players"]
    low, high = ruleset.min_players, ruleset.max_players
    if not low <= players <= high:
        raise SeasonError(
            f"pools[{number}]: {ruleset.ident} is played by {low} to {high} players, not {players}"
        )
    return Pool(ruleset.ident, players, float(value.get("weight", 1.0)))


def _check(section: str, table: dict[str, Any], keys: dict[str, type | tuple[type, ...]]) -> None:
    where = f"[{section}] " if section and not section.startswith("pools") else ""
    where = f"{section}: " if section.startswith("pools") else where
    for key, value in table.items():
        if key not in keys:
            known = ", ".join(sorted(keys))
            raise SeasonError(f"{where}unknown key {key!r} (known: {known})")
        want = keys[key]
        ok = isinstance(value, want) and not (
            isinstance(value, bool) and want in (int, (int, float))
        )
        if not ok:
            raise SeasonError(f"{where}{key} = {value!r}: wrong type")


def with_overrides(season: Season, **values: Any) -> Season:
    """``season`` with the flags that were given (None: not given) put in."""
    given = {k: v for k, v in values.items() if v is not None}
    try:
        return dataclasses.replace(season, **given)
    except SeasonError:
        raise
    except (TypeError, ValueError) as e:
        raise SeasonError(str(e)) from None


# ---------------------------------------------------------------------------------------------
# kept in the store, and compared at a restart


def season_data(season: Season) -> dict[str, Any]:
    """``season`` in the season file's shape, every key written: what the store keeps, so that
    :func:`season_from` reads back the same season (``season_from(season_data(s)) == s`` for a
    season a file or flags made)."""
    m, f, u = season.matchmaking, season.faults, season.upload
    return {
        "name": season.name,
        "pools": [
            {"variant": p.variant, "players": p.players, "weight": p.weight} for p in season.pools
        ],
        "clock": {
            "move_ms": season.move_ms,
            "bank_ms": season.bank_ms,
            "startup_s": season.startup_s,
        },
        "submissions": {
            "per_day": season.per_day,
            "active_versions": season.active_versions,
            "upload_mb": u.upload_bytes / (1 << 20),
            "expanded_mb": u.total_bytes / (1 << 20),
            "files": u.members,
        },
        "ladder": {
            "workers": season.workers,
            "builds": season.builds,
            "recent_games": season.recent_games,
            "inherit_mu": m.inherit_mu,
            "window_min": m.window_min,
            "window_max": m.window_max,
            "uniform_seed_share": m.uniform_seed_share,
            "build_mb": season.build_mb,
            "build_timeout_s": season.build_timeout_s,
        },
        "faults": f.to_json(),
    }


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the stored season and the one a start asks for."""

    key: str  #: as the file names it: ``pools``, ``clock.move_ms``, ``submissions.per_day``...
    old: str
    new: str
    #: a change of what the ratings compare (the pools, the clocks): refused without
    #: ``--reconfigure``; the others (limits, workers, weights, the name) are only logged
    guarded: bool

    def __str__(self) -> str:
        return f"{self.key}: {self.old} -> {self.new}"


def season_changes(old: Season, new: Season) -> list[Change]:
    """What starting ``new`` on a store that ran ``old`` changes, key by key, pools first."""
    changes = []
    before = {(p.variant, p.players): p for p in old.pools}
    after = {(p.variant, p.players): p for p in new.pools}
    if before.keys() != after.keys():
        changes.append(Change("pools", _labels(old.pools), _labels(new.pools), True))
    for key, pool in before.items():
        if key in after and pool.weight != after[key].weight:
            weights = f"{pool.weight:g}", f"{after[key].weight:g}"
            changes.append(Change(f"pools[{pool.label}].weight", *weights, False))
    was, now = season_data(old), season_data(new)
    if was["name"] != now["name"]:
        changes.append(Change("name", repr(was["name"]), repr(now["name"]), False))
    for section in ("clock", "submissions", "ladder", "faults"):
        for key, value in was[section].items():
            if now[section][key] != value:
                shown = (_shown(value), _shown(now[section][key]))
                changes.append(Change(f"{section}.{key}", *shown, section == "clock"))
    return changes


def _labels(pools: tuple[Pool, ...]) -> str:
    return ", ".join(p.label for p in pools)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)
