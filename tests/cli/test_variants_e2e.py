"""Every board variant end to end: over real gRPC with the sample bots (``ttr play``), in a
tournament with real worker and bot processes, and in the CLI's listings and score tables.

The rules of each variant are tested in-process elsewhere (tests/games/test_variants.py and the
rule tests); here the point is that nothing between the engine and a bot (the wire, the
referee loop, records, replay, the store, rating pools) assumes the usa variant.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from leaderboard.runner import run
from leaderboard.store import Store
from leaderboard.table import leaderboard
from referee.games.board import available_variants, load_ruleset
from referee.games.board.scoring import Outcome, SeatScore
from referee.hosting.launcher import LaunchedBot, launch
from referee.replay import verify
from ttr_arena.cli import main as cli_main
from ttr_arena.pages.scores import format_outcome

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = [str(ROOT / "sample_bots" / name) for name in ("random", "greedy", "planner")]
BOARD_VARIANTS = ("usa", "usa1910", "mega", "bigcities", "newyork")


def test_every_board_variant_is_packaged() -> None:
    assert set(BOARD_VARIANTS) <= set(available_variants())


@pytest.fixture(scope="module")
def sample_bots() -> Iterator[list[LaunchedBot]]:
    """The three sample bots as real processes, started once: a bot serves game after game."""
    with ExitStack() as stack:
        yield [stack.enter_context(launch(folder, python=sys.executable)) for folder in SAMPLES]


@pytest.mark.parametrize("variant", BOARD_VARIANTS)
def test_ttr_play_plays_every_variant_over_grpc_and_the_record_replays(
    variant: str,
    sample_bots: list[LaunchedBot],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ruleset = load_ruleset(variant)
    record = tmp_path / "game.json"
    args = ["play", "--variant", variant, "--seed", "11", "--json", "--record", str(record)]
    assert cli_main([*args, *(b.address for b in sample_bots)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variant"] == ruleset.ident == f"{variant}@{ruleset.version}"
    data = json.loads(record.read_text())
    assert data["ruleset"] == ruleset.ident
    assert verify(record) is None
    for player in out["players"]:
        assert player["faults"] == 0  # the sample bots play every variant legally
        parts = player["breakdown"]
        assert set(parts["bonuses"]) == {b.kind for b in ruleset.bonuses}
        # the breakdown adds up: a bot author can see why the score is what it is
        assert player["score"] == (
            parts["route_points"]
            + parts["ticket_points"]
            + sum(parts["bonuses"].values())
            + parts["attraction_points"]
        )
        assert parts["attraction_points"] == len(parts["attractions"]) * ruleset.attraction_points
    recorded = data["outcome"]["seats"]
    assert all("attractions" in s and "attraction_points" in s for s in recorded)
    if ruleset.attraction_points:
        # three bots on a 15-location map touch Tourist Attractions in any game
        assert any(s["attractions"] for s in recorded)


def test_a_tournament_keeps_one_rating_pool_per_variant_and_player_count(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    with Store(db) as store:
        for variant, players in (("newyork", 2), ("usa1910", 3)):
            done = run(
                store,
                bot_dirs=SAMPLES,
                variant=variant,
                players=players,
                rounds=1,
                workers=2,
                records=str(tmp_path / "records"),
            )
            assert done.complete and not done.failed
        pools = {(v, p): table for v, p, table in leaderboard(store)}
    assert set(pools) == {("newyork@1", 2), ("usa1910@1", 3)}
    # 2 players: 3 pairs x 2 seatings; 3 players: 1 trio x 3 seatings
    assert sum(s.games for s in pools[("newyork@1", 2)]) == 6 * 2
    assert sum(s.games for s in pools[("usa1910@1", 3)]) == 3 * 3
    records = sorted((tmp_path / "records").rglob("*.json"))
    idents = {json.loads(p.read_text())["ruleset"] for p in records}
    assert {"newyork@1", "usa1910@1"} <= idents
    assert all(verify(p) is None for p in records)


def test_ttr_variants_lists_every_variant(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["variants", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [v["name"] for v in listed] == [*available_variants(), "cardgame"]
    newyork = next(v for v in listed if v["name"] == "newyork")
    assert (newyork["min_players"], newyork["max_players"]) == (2, 4)
    cardgame = next(v for v in listed if v["name"] == "cardgame")
    assert (cardgame["min_players"], cardgame["max_players"]) == (2, 4)
    assert newyork["ident"] == "newyork@1" and newyork["description"]
    assert cli_main(["variants"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split()[:3] == ["variant", "players", "title"]
    assert any(line.startswith("newyork@1") and " 2-4 " in line for line in text)
    assert len(text) == 1 + len(listed)


def _score(seat: int, **parts: int) -> SeatScore:
    return SeatScore(
        seat=seat,
        route_points=parts.get("routes", 0),
        tickets_completed=(),
        tickets_failed=(),
        ticket_points=0,
        longest_path=0,
        longest_path_bonus=parts.get("longest", 0),
        globetrotter_bonus=parts.get("globe", 0),
        attractions=tuple(range(parts.get("attract", 0))),
        attraction_points=parts.get("attract", 0),
        total=sum(parts.values()),
        rank=seat + 1,
    )


@pytest.mark.parametrize(
    ("variant", "columns"),
    [
        ("usa", ["+longest"]),
        ("usa1910", ["+globe"]),
        ("mega", ["+longest", "+globe"]),
        ("bigcities", ["+longest"]),
        ("newyork", ["+attract"]),
    ],
)
def test_the_score_table_shows_the_components_the_variant_scores(
    variant: str, columns: list[str]
) -> None:
    result = Outcome(True, "last_round", (_score(0, routes=9, globe=15, longest=10, attract=3),))
    header = format_outcome(load_ruleset(variant), result).splitlines()[0].split()
    extra = [h for h in header if h.startswith("+")]
    assert extra == columns


def test_a_record_from_before_attractions_still_verifies_and_a_missing_attraction_does_not(
    sample_bots: list[LaunchedBot], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records written before the attraction fields existed (usa) replay as before; dropping
    the fields from a New York record, where they are not empty, is a difference."""
    for variant in ("usa", "newyork"):
        record = tmp_path / f"{variant}.json"
        args = ["play", "--variant", variant, "--seed", "3", "--json", "--record", str(record)]
        assert cli_main([*args, *(b.address for b in sample_bots)]) == 0
        capsys.readouterr()
        data = json.loads(record.read_text())
        for seat in data["outcome"]["seats"]:
            del seat["attractions"], seat["attraction_points"]
        record.write_text(json.dumps(data))
        difference = verify(record)
        if variant == "usa":
            assert difference is None
        else:
            assert difference is not None and difference.what == "final scores"
