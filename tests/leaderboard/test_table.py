"""The leaderboard as text and JSON, from a small store whose figures are known by hand."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.ratings import rate_games, wilson_interval
from leaderboard.store import GameResult, SeatResult, Store, TournamentSpec
from leaderboard.table import NO_GAMES, leaderboard, render_text, to_json
from tests.helpers import stored_game


def game(index: int, seating: list[tuple[int, int, int]], variant: str = "usa@1") -> GameResult:
    """A game of tournament 1; ``seating`` is (bot_id, rank, score) per seat; the seat ranked
    last made one fault."""
    last = max(rank for _, rank, _ in seating)
    return stored_game(
        index,
        tuple(
            SeatResult(seat, bot_id, score, rank, 0, 0, int(rank == last), 0)
            for seat, (bot_id, rank, score) in enumerate(seating)
        ),
        variant,
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """usa@1, 3 players: alpha always first (100), beta second (80), gamma last (60), in all
    six seatings. usa@1, 2 players: one game, beta beats alpha. europe@1, 2 players: one game,
    alpha and gamma tie for first."""
    s = Store(tmp_path / "league.sqlite")
    s.begin_tournament(TournamentSpec("night", "usa@1", 3, 1, 0, {}))
    a = s.add_bot("alpha", "1.0", "Ann", "h1")
    b = s.add_bot("beta", "0.3", "Bo", "h2")
    c = s.add_bot("gamma", "2", "Cy", "h3")
    index = itertools.count()
    result = {a: (1, 100), b: (2, 80), c: (3, 60)}
    for seating in itertools.permutations([a, b, c]):
        s.record_game(game(next(index), [(bot, *result[bot]) for bot in seating]))
    s.record_game(game(next(index), [(a, 2, 50), (b, 1, 70)]))
    s.record_game(game(next(index), [(a, 1, 90), (c, 1, 90)], variant="europe@1"))
    yield s
    s.close()


def test_text_has_one_table_per_pool_with_rows_in_rating_order(store: Store) -> None:
    text = render_text(leaderboard(store))
    assert text.index("europe@1, 2 players — 1 game\n") < text.index("usa@1, 2 players — 1 game\n")
    usa3 = text[text.index("usa@1, 3 players — 6 games") :].splitlines()
    assert " ".join(usa3[1].split()) == (
        "# bot rating mu sigma games wins win% (95% CI) avg score faults"
    )
    rows = [line.split() for line in usa3[3:6]]
    assert [row[:3] for row in rows] == [
        ["1", "alpha", "1.0"],
        ["2", "beta", "0.3"],
        ["3", "gamma", "2"],
    ]
    ratings = rate_games(store.games("usa@1", 3))
    alpha = ratings[1]
    assert rows[0][3:6] == [f"{alpha.conservative:.1f}", f"{alpha.mu:.2f}", f"{alpha.sigma:.2f}"]
    assert rows[0][6:] == ["6", "6", "100%", "(61-100)", "100.0", "0"]  # 6/6: from 0.6097
    assert rows[1][6:] == ["6", "0", "0%", "(0-39)", "80.0", "0"]
    assert rows[2][6:] == ["6", "0", "0%", "(0-39)", "60.0", "6"]


def test_text_columns_are_aligned_without_trailing_spaces(store: Store) -> None:
    text = render_text(leaderboard(store, "usa", 3))
    lines = text.splitlines()
    header, rule, *rows = lines[1:5]
    assert all(line == line.rstrip() for line in lines)
    # Right-aligned numbers: every row's rating ends where the header's "rating" ends.
    end = header.index("rating") + len("rating")
    assert all(row[end - 1] != " " and row[end] == " " for row in rows)
    assert len(rule) == len(header)


def test_a_shared_first_place_is_a_win_for_both(store: Store) -> None:
    [(variant, players, table)] = leaderboard(store, "europe")
    assert (variant, players) == ("europe@1", 2)
    assert [(s.bot.name, s.wins, s.faults) for s in table] == [("alpha", 1, 1), ("gamma", 1, 1)]


def test_json_shape_and_values(store: Store) -> None:
    data = to_json(leaderboard(store))
    json.dumps(data)  # plain JSON values only
    assert [(p["variant"], p["players"], p["games"]) for p in data["pools"]] == [
        ("europe@1", 2, 1),
        ("usa@1", 2, 1),
        ("usa@1", 3, 6),
    ]
    usa3 = data["pools"][2]["standings"]
    assert [row["bot"] for row in usa3] == ["alpha", "beta", "gamma"]
    first = usa3[0]
    assert set(first) == {
        "rank",
        "bot",
        "version",
        "bot_id",
        "conservative",
        "mu",
        "sigma",
        "games",
        "wins",
        "win_rate",
        "win_interval",
        "avg_score",
        "faults",
        "disabled",
    }
    alpha = rate_games(store.games("usa@1", 3))[1]
    assert first == {
        "rank": 1,
        "bot": "alpha",
        "version": "1.0",
        "bot_id": 1,
        "conservative": alpha.conservative,
        "mu": alpha.mu,
        "sigma": alpha.sigma,
        "games": 6,
        "wins": 6,
        "win_rate": 1.0,
        "win_interval": list(wilson_interval(6, 6)),
        "avg_score": 100.0,
        "faults": 0,
        "disabled": [],  # disabled for its faults in none of the pool's tournaments
    }
    assert usa3[2]["faults"] == 6 and usa3[2]["avg_score"] == 60.0


@pytest.mark.parametrize(
    ("variant", "players", "pools"),
    [
        (None, None, [("europe@1", 2), ("usa@1", 2), ("usa@1", 3)]),
        ("usa", None, [("usa@1", 2), ("usa@1", 3)]),  # a bare name matches every version
        ("usa@1", 3, [("usa@1", 3)]),
        ("usa@2", None, []),
        ("us", None, []),  # names match whole, not as prefixes
        (None, 2, [("europe@1", 2), ("usa@1", 2)]),
    ],
)
def test_filtering(
    store: Store, variant: str | None, players: int | None, pools: list[tuple[str, int]]
) -> None:
    assert [(v, p) for v, p, _ in leaderboard(store, variant, players)] == pools


def test_an_empty_store_says_there_are_no_games(tmp_path: Path) -> None:
    with Store(tmp_path / "empty.sqlite") as store:
        pools = leaderboard(store)
    assert pools == []
    assert render_text(pools) == NO_GAMES + "\n"
    assert "no games" in render_text(pools)
    assert to_json(pools) == {"pools": []}


def test_two_bots_with_one_name_and_version_show_their_hashes(tmp_path: Path) -> None:
    with Store(tmp_path / "l.db") as s:
        s.begin_tournament(TournamentSpec("t", "usa@1", 2, 1, 1, {}))
        old = s.add_bot("planner", "1.0", "", "aaaaaaaaaaaa")
        new = s.add_bot("planner", "1.0", "", "bbbbbbbbbbbb")
        other = s.add_bot("greedy", "1.0", "", "cccccccccccc")
        s.record_game(game(0, [(old, 1, 90), (new, 2, 80)]))
        s.record_game(game(1, [(new, 1, 90), (other, 2, 80)]))
        text = render_text(leaderboard(s))
    assert "planner 1.0 #aaaaaaaa" in text and "planner 1.0 #bbbbbbbb" in text
    assert "greedy 1.0 " in text and "greedy 1.0 #" not in text
