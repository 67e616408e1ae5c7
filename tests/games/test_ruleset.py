"""The packaged data of every variant and the strictness of the ruleset / map / ticket loaders.

The data facts are asserted as numbers (from shared/data/usa/PROVENANCE.md and
shared/data/newyork/PROVENANCE.md, which record how each was settled), so this file does not
need ``shared/`` to run. A fact that disagrees means the transcription into
referee/games/board/data/ changed. Each ruleset number is checked against its rulebook line
(``003:LINE``, ``001:LINE``: shared/seeds/).
"""

from __future__ import annotations

import copy
import heapq
import json
import re
import tomllib
from collections import Counter
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from referee.games.board import RulesetError, available_variants, load_ruleset, load_ruleset_file
from referee.games.board.ruleset import (
    BonusCard,
    GameMap,
    Ruleset,
    parse_map,
    parse_ruleset,
    parse_tickets,
)
from referee.games.common.cards import CARD_NAMES, COLOURS, GRAY
from tests.helpers import FACTS, NEW_YORK, RULESETS, USA, VARIANTS

MAP = USA.game_map
DATA = resources.files("referee.games.board") / "data"


def packaged(kind: str, name: str) -> Any:
    """A packaged data file as plain data (a fresh copy each time, to mutate freely)."""
    if kind == "rulesets":
        return tomllib.loads((DATA / kind / f"{name}.toml").read_text(encoding="utf-8"))
    return json.loads((DATA / kind / f"{name}.json").read_text(encoding="utf-8"))


def names(route_index: int) -> tuple[str, str]:
    r = MAP.routes[route_index]
    return MAP.cities[r.a].name, MAP.cities[r.b].name


# ---------------------------------------------------------------------------------------------
# The map (PROVENANCE.md "map.json")


def test_cities_and_routes() -> None:
    assert len(MAP.cities) == 36
    assert len(MAP.routes) == 100
    assert len({frozenset((r.a, r.b)) for r in MAP.routes}) == 78  # city pairs
    assert sum(r.length for r in MAP.routes) == 309  # train spaces


def test_route_ids_and_indices() -> None:
    assert [r.route_id for r in MAP.routes] == list(range(1, 101))
    assert [r.index for r in MAP.routes] == list(range(100))
    for r in MAP.routes:
        a, b = names(r.index)
        assert a < b, f"route #{r.route_id}: cities not in alphabetical order"


def test_route_lengths() -> None:
    assert Counter(r.length for r in MAP.routes) == {1: 9, 2: 36, 3: 20, 4: 16, 5: 10, 6: 9}


@pytest.mark.parametrize("colour", COLOURS)
def test_each_colour_has_seven_tracks_of_27_spaces(colour: str) -> None:
    tracks = [r for r in MAP.routes if r.colour == COLOURS.index(colour)]
    assert len(tracks) == 7
    assert sum(r.length for r in tracks) == 27


def test_gray_tracks() -> None:
    gray = [r for r in MAP.routes if r.colour == GRAY]
    assert len(gray) == 44
    assert sum(r.length for r in gray) == 93


def test_double_routes() -> None:
    groups: dict[int, list[int]] = {}
    for r in MAP.routes:
        if r.double_group is not None:
            groups.setdefault(r.double_group, []).append(r.index)
    assert sorted(groups) == list(range(1, 23))
    both_gray = 0
    for group, members in groups.items():
        assert len(members) == 2, group
        r1, r2 = (MAP.routes[i] for i in members)
        assert {r1.a, r1.b} == {r2.a, r2.b}, group
        assert r1.length == r2.length, group
        assert (r1.sibling, r2.sibling) == (r2.index, r1.index), group
        if r1.colour == GRAY:
            assert r2.colour == GRAY, group
            both_gray += 1
        else:
            assert r1.colour != r2.colour and r2.colour != GRAY, group
    assert both_gray == 10
    # A single route has no sibling, and no two single routes join the same cities.
    singles = [r for r in MAP.routes if r.double_group is None]
    assert all(r.sibling is None for r in singles)
    assert len(singles) == 100 - 44
    pairs = Counter(frozenset((r.a, r.b)) for r in MAP.routes)
    assert sum(1 for n in pairs.values() if n == 2) == 22
    assert max(pairs.values()) == 2


def test_map_is_connected() -> None:
    reached = {0}
    frontier = [0]
    while frontier:
        city = frontier.pop()
        for r in MAP.routes:
            for x, y in ((r.a, r.b), (r.b, r.a)):
                if x == city and y not in reached:
                    reached.add(y)
                    frontier.append(y)
    assert len(reached) == 36


def test_degrees() -> None:
    # Degree in tracks: 9 (Denver, Pittsburgh) down to 2 (Las Vegas).
    degree = Counter(c for r in MAP.routes for c in (r.a, r.b))
    by_name = {MAP.cities[c].name: n for c, n in degree.items()}
    assert len(by_name) == 36
    assert max(by_name.values()) == 9
    assert {n for n, d in by_name.items() if d == 9} == {"Denver", "Pittsburgh"}
    assert {n for n, d in by_name.items() if d == 2} == {"Las Vegas"}


def test_city_index_and_names() -> None:
    assert [c.index for c in MAP.cities] == list(range(36))
    for c in MAP.cities:
        assert MAP.city_index[c.name] == c.index
        assert c.x is not None and c.y is not None  # every USA city has a position
        assert 0.0 <= c.x <= 1.0 and 0.0 <= c.y <= 1.0
    for name in ("Montreal", "Sault St. Marie", "Saint Louis", "Santa Fe"):
        assert name in MAP.city_index


# ---------------------------------------------------------------------------------------------
# Tickets (PROVENANCE.md "tickets_original.json", "tickets_1910.json")


def shortest(game_map: GameMap, a: int, b: int) -> int:
    """Dijkstra in train spaces."""
    dist = {a: 0}
    heap = [(0, a)]
    while heap:
        d, city = heapq.heappop(heap)
        if city == b:
            return d
        if d > dist[city]:
            continue
        for r in game_map.routes:
            if city in (r.a, r.b):
                other = r.b if city == r.a else r.a
                if d + r.length < dist.get(other, 10**9):
                    dist[other] = d + r.length
                    heapq.heappush(heap, (d + r.length, other))
    raise AssertionError("unreachable")


def ticket_names(game_map: GameMap, tickets: tuple[Any, ...]) -> dict[frozenset[str], int]:
    return {
        frozenset((game_map.cities[t.a].name, game_map.cities[t.b].name)): t.points for t in tickets
    }


def test_original_tickets() -> None:
    assert len(USA.tickets) == 30
    assert sum(t.points for t in USA.tickets) == 349
    assert [t.index for t in USA.tickets] == list(range(30))
    assert len({frozenset((t.a, t.b)) for t in USA.tickets}) == 30
    on_tickets = {c for t in USA.tickets for c in (t.a, t.b)}
    missing = {c.name for c in MAP.cities if c.index not in on_tickets}
    assert missing == {"Charleston", "Las Vegas", "Omaha", "Raleigh", "Saint Louis", "Washington"}


def test_original_ticket_values_against_shortest_paths() -> None:
    # 25 of 30 equal the shortest path in trains; the five exceptions are these (points,
    # shortest path). This also checks the route lengths from a second angle.
    off = {
        frozenset((MAP.cities[t.a].name, MAP.cities[t.b].name)): (
            t.points,
            shortest(MAP, t.a, t.b),
        )
        for t in USA.tickets
        if shortest(MAP, t.a, t.b) != t.points
    }
    assert off == {
        frozenset(("Los Angeles", "Chicago")): (16, 15),
        frozenset(("Los Angeles", "Miami")): (20, 19),
        frozenset(("Los Angeles", "New York")): (21, 20),
        frozenset(("Sault St. Marie", "Oklahoma City")): (9, 8),
        frozenset(("Seattle", "New York")): (22, 20),
    }


def test_ticket_file_sets_and_1910_values() -> None:
    data = packaged("tickets", "usa")
    assert len(data["tickets"]) == 69
    counts = Counter(s for t in data["tickets"] for s in t["sets"])
    assert counts == {"original": 30, "1910": 35, "big_cities": 35, "mystery_train": 4}
    mega = parse_tickets(
        data, "tickets/usa.json", MAP, ["original", "1910", "mystery_train"], "usa1910"
    )
    assert len(mega) == 69
    values = ticket_names(MAP, mega)
    # The four reprints revised downward in the 1910 box.
    assert values[frozenset(("Los Angeles", "Miami"))] == 19
    assert values[frozenset(("Los Angeles", "New York"))] == 20
    assert values[frozenset(("Seattle", "New York"))] == 20
    assert values[frozenset(("Sault St. Marie", "Oklahoma City"))] == 8
    # 67 of 69 equal their shortest path, and none is worth less.
    off = {
        frozenset((MAP.cities[t.a].name, MAP.cities[t.b].name))
        for t in mega
        if shortest(MAP, t.a, t.b) != t.points
    }
    assert off == {frozenset(("Los Angeles", "Chicago")), frozenset(("Las Vegas", "Miami"))}
    assert all(t.points >= shortest(MAP, t.a, t.b) for t in mega)


# ---------------------------------------------------------------------------------------------
# The ruleset numbers (rulesets/usa.toml, each from its rulebook line)


def test_usa_ruleset_numbers() -> None:
    assert USA.ident == "usa@1"
    assert (USA.name, USA.version) == ("usa", "1")
    assert (USA.min_players, USA.max_players) == (2, 5)
    assert USA.deck_size == 110 == 12 * 8 + 14
    assert USA.initial_deck_counts() == (12,) * 8 + (14,)
    assert USA.trains == 45  # 003:9
    assert (USA.hand_size, USA.face_up) == (4, 5)  # 003:11
    assert (USA.setup_tickets_dealt, USA.setup_tickets_keep_min) == (3, 2)  # 003:15-17
    assert USA.cards_drawn == 2  # 003:45
    assert (USA.tickets_drawn, USA.tickets_keep_min) == (3, 1)  # 003:59
    assert USA.flush_locomotives == 3  # 003:73
    assert USA.trains_trigger == 2  # 003:101
    assert USA.route_points == (0, 1, 2, 4, 7, 10, 15)  # 002:89-94
    assert USA.longest_path_bonus == 10  # 003:107
    assert USA.globetrotter_bonus == 0
    assert USA.tie_breaks == ("tickets_completed", "longest_path")  # 003:109
    assert USA.both_tracks_min_players == 4  # 003:87


def test_load_ruleset_is_cached_and_equal() -> None:
    assert load_ruleset("usa") is load_ruleset("usa")
    assert load_ruleset("usa").ident == "usa@1"


def test_unknown_variant_lists_the_available_ones() -> None:
    with pytest.raises(RulesetError, match=r"'nope'.*available: .*usa"):
        load_ruleset("nope")


# ---------------------------------------------------------------------------------------------
# Loader strictness: every malformed value is a RulesetError naming the key


def loader(overrides: dict[tuple[str, str], Any] | None = None) -> Callable[[str, str], Any]:
    """``load_json`` for parse_ruleset: packaged files, some replaced by ``overrides``."""

    def load(kind: str, name: str) -> Any:
        if overrides and (kind, name) in overrides:
            return overrides[(kind, name)]
        return packaged(kind, name)

    return load


def parse_usa(change: Callable[[dict[str, Any]], None]) -> Ruleset:
    data = packaged("rulesets", "usa")
    change(data)
    return parse_ruleset(data, "rulesets/usa.toml", loader())


def test_the_unchanged_packaged_file_parses_to_the_cached_ruleset() -> None:
    assert parse_usa(lambda d: None) == USA


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    *tables, key = path.split(".")

    def change(data: dict[str, Any]) -> None:
        for t in tables:
            data = data[t]
        data[key] = value

    return change


def _delete(path: str) -> Callable[[dict[str, Any]], None]:
    *tables, key = path.split(".")

    def change(data: dict[str, Any]) -> None:
        for t in tables:
            data = data[t]
        del data[key]

    return change


RULESET_ERRORS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("unknown top-level key", _set("colour_blind", True), "colour_blind"),
    ("unknown key in a table", _set("scoring.style_bonus", 3), "style_bonus"),
    ("unknown table", _set("extras", {"a": 1}), "extras"),
    ("missing key", _delete("setup.trains"), "trains"),
    ("missing table", _delete("doubles"), "doubles"),
    ("missing top-level key", _delete("title"), "title"),
    ("wrong type: string for int", _set("setup.trains", "45"), "setup.trains"),
    ("wrong type: bool for int", _set("setup.hand_size", True), "setup.hand_size"),
    ("wrong type: float for int", _set("deck.red", 12.0), "deck.red"),
    ("wrong type: int for string", _set("name", 5), "name"),
    ("wrong type: table for list", _set("tickets.sets", {"x": 1}), "tickets.sets"),
    ("out of range: max players", _set("max_players", 9), "max_players"),
    ("out of range: max below min", _set("max_players", 1), "max_players"),
    ("out of range: keep more than dealt", _set("setup.tickets_keep_min", 4), "tickets_keep_min"),
    (
        "out of range: negative bonus",
        _set("scoring.bonuses", [{"kind": "longest_path", "points": -1}]),
        "bonuses[0].points",
    ),
    ("out of range: negative deck count", _set("deck.locomotive", -1), "deck.locomotive"),
    ("old key: deck.per_colour", _set("deck.per_colour", 12), "per_colour"),
    ("old key: longest_path_bonus", _set("scoring.longest_path_bonus", 10), "longest_path_bonus"),
    ("missing card kind", _delete("deck.white"), "white"),
    ("missing description", _delete("description"), "description"),
    ("missing attraction points", _delete("scoring.attraction_points"), "attraction_points"),
    (
        "unknown bonus card",
        _set("scoring.bonuses", [{"kind": "most_stations", "points": 10}]),
        "most_stations",
    ),
    (
        "bonus card listed twice",
        _set(
            "scoring.bonuses",
            [{"kind": "longest_path", "points": 10}, {"kind": "longest_path", "points": 5}],
        ),
        "listed twice",
    ),
    (
        "unknown key in a bonus card",
        _set("scoring.bonuses", [{"kind": "longest_path", "points": 10, "tied": "all"}]),
        "tied",
    ),
    (
        "tie-break on a bonus card not in play",
        _set("scoring.bonuses", []),
        "longest_path",
    ),
    (
        "attractions on a map without any",
        _set("scoring.attraction_points", 1),
        "attraction_points",
    ),
    ("no coloured cards", lambda d: d["deck"].update(dict.fromkeys(COLOURS, 0)), "deck"),
    ("out of range: trigger above trains", _set("end.trains_trigger", 46), "trains_trigger"),
    ("out of range: three cards drawn", _set("turn.cards_drawn", 3), "cards_drawn"),
    ("negative route points", _set("scoring.route_points", [1, 2, -4, 7, 10, 15]), "route_points"),
    ("route points too short", _set("scoring.route_points", [1, 2, 4, 7, 10]), "route_points"),
    (
        "unknown tie-break",
        _set("scoring.tie_breaks", ["tickets_completed", "coin_flip"]),
        "coin_flip",
    ),
    ("unknown ticket set", _set("tickets.sets", ["original", "bonus"]), "bonus"),
    ("unknown points key", _set("tickets.points", "deluxe"), "deluxe"),
    ("deck too small to deal", lambda d: d["deck"].update(dict.fromkeys(CARD_NAMES, 1)), "deck"),
    ("too few tickets to deal", _set("setup.tickets_dealt", 7), "tickets"),
    ("pieces without a name", _set("setup.piece", ""), "piece"),
]


@pytest.mark.parametrize(
    ("change", "key"),
    [pytest.param(change, key, id=name) for name, change, key in RULESET_ERRORS],
)
def test_parse_ruleset_rejects(change: Callable[[dict[str, Any]], None], key: str) -> None:
    with pytest.raises(RulesetError) as info:
        parse_usa(change)
    assert key in str(info.value)
    assert "usa" in str(info.value)  # the file is named too


def _route(i: int, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["routes"][i].update(fields)

    return change


def _drop_route_key(i: int, key: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        del data["routes"][i][key]

    return change


def _third_track(data: dict[str, Any]) -> None:
    # Route #4 and #5 are Atlanta-New Orleans 4 orange / yellow, double_group 1.
    extra = dict(data["routes"][3], id=101, colour="green")
    data["routes"].append(extra)


def _city_key(data: dict[str, Any]) -> None:
    data["cities"][0]["population"] = 500_000


MAP_ERRORS: list[tuple[str, Callable[[dict[str, Any]], None], list[str]]] = [
    ("unknown city", _route(3, a="Atlantis"), ["routes[3]", "Atlantis"]),
    ("unknown colour", _route(0, colour="purple"), ["routes[0]", "purple"]),
    ("unknown route key", _route(5, tunnel=True), ["routes[5]", "tunnel"]),
    ("unknown city key", _city_key, ["cities[0]", "population"]),
    ("missing route key", _drop_route_key(5, "length"), ["routes[5]", "length"]),
    ("wrong type", _route(2, length="1"), ["routes[2].length"]),
    ("length out of range", _route(2, length=0), ["routes[2].length"]),
    ("double group with 3 tracks", _third_track, ["double_group 1", "3 tracks"]),
    ("double group of one track", _route(3, double_group=None), ["double_group 1", "1 tracks"]),
    ("double group tracks differ", _route(3, length=3), ["double_group 1"]),
    ("duplicate route id", _route(1, id=1), ["routes[1]", "id"]),
    ("route to itself", _route(0, b="Atlanta"), ["routes[0]", "itself"]),
]


@pytest.mark.parametrize(
    ("change", "mentions"),
    [pytest.param(change, mentions, id=name) for name, change, mentions in MAP_ERRORS],
)
def test_parse_map_rejects(change: Callable[[dict[str, Any]], None], mentions: list[str]) -> None:
    data = packaged("maps", "usa")
    change(data)
    with pytest.raises(RulesetError) as info:
        parse_map(data, "maps/usa.json")
    for text in mentions:
        assert text in str(info.value)
    assert "maps/usa.json" in str(info.value)


def test_parse_map_accepts_the_packaged_file() -> None:
    assert parse_map(packaged("maps", "usa"), "maps/usa.json") == MAP


def test_map_errors_surface_through_parse_ruleset() -> None:
    bad_map = packaged("maps", "usa")
    bad_map["routes"][7]["colour"] = "purple"
    data = packaged("rulesets", "usa")
    with pytest.raises(RulesetError, match=re.escape("maps/usa.json.routes[7]")):
        parse_ruleset(data, "rulesets/usa.toml", loader({("maps", "usa"): bad_map}))


def test_ticket_with_an_unknown_city() -> None:
    data = packaged("tickets", "usa")
    data["tickets"][0]["b"] = "Atlantis"
    with pytest.raises(RulesetError, match=r"tickets\[0\].*Atlantis"):
        parse_tickets(data, "tickets/usa.json", MAP, ["original"], "original")


def test_ticket_with_an_unknown_key() -> None:
    data = packaged("tickets", "usa")
    data["tickets"][4]["bonus"] = 1
    with pytest.raises(RulesetError, match=r"tickets\[4\].*bonus"):
        parse_tickets(data, "tickets/usa.json", MAP, ["original"], "original")


def test_ticket_points_out_of_range() -> None:
    data = packaged("tickets", "usa")
    data["tickets"][0]["points"]["original"] = 0
    with pytest.raises(RulesetError, match=r"tickets\[0\]\.points\.original"):
        parse_tickets(data, "tickets/usa.json", MAP, ["original"], "original")


def test_top_level_must_be_a_table() -> None:
    with pytest.raises(RulesetError, match="expected a table"):
        parse_map([1, 2, 3], "maps/usa.json")


# ---------------------------------------------------------------------------------------------
# Ruleset files outside the package (map designers)


def usa_toml_text() -> str:
    return (DATA / "rulesets" / "usa.toml").read_text(encoding="utf-8")


def test_load_ruleset_file_reusing_the_packaged_map(tmp_path: Path) -> None:
    text = usa_toml_text().replace('name = "usa"', 'name = "short"', 1)
    text = text.replace("trains = 45 ", "trains = 30 ", 1)
    folder = tmp_path / "rulesets"
    folder.mkdir()
    path = folder / "short.toml"
    path.write_text(text, encoding="utf-8")
    rules = load_ruleset_file(path)
    assert rules.ident == "short@1"
    assert rules.trains == 30
    assert rules.game_map == MAP  # no maps/ folder beside it: the packaged usa map
    assert rules.tickets == USA.tickets


def test_load_ruleset_file_prefers_a_map_beside_it(tmp_path: Path) -> None:
    cities = ["Aton", "Bex", "Cor", "Dun"]
    tiny_map = {
        "name": "tiny",
        "version": "1",
        "source": "test",
        "cities": [{"name": n, "x": i / 4, "y": 0.5} for i, n in enumerate(cities)],
        "routes": [
            {"id": 1, "a": "Aton", "b": "Bex", "length": 1, "colour": "red", "double_group": 1},
            {"id": 2, "a": "Aton", "b": "Bex", "length": 1, "colour": "blue", "double_group": 1},
            {"id": 3, "a": "Bex", "b": "Cor", "length": 2, "colour": "gray", "double_group": None},
            {"id": 4, "a": "Cor", "b": "Dun", "length": 3, "colour": "pink", "double_group": None},
        ],
    }
    pairs = [(a, b) for i, a in enumerate(cities) for b in cities[i + 1 :]]
    tiny_tickets = {
        "name": "tiny",
        "version": "1",
        "source": "test",
        "tickets": [
            {"id": i + 1, "a": a, "b": b, "points": {"original": i + 1}, "sets": ["original"]}
            for i, (a, b) in enumerate(pairs)
        ],
    }
    for kind, data in (("maps", tiny_map), ("tickets", tiny_tickets)):
        (tmp_path / kind).mkdir()
        (tmp_path / kind / "tiny.json").write_text(json.dumps(data), encoding="utf-8")
    text = (
        usa_toml_text()
        .replace('name = "usa"', 'name = "tiny"', 1)
        .replace('map = "usa"', 'map = "tiny"', 1)
        .replace('file = "usa"', 'file = "tiny"', 1)
        .replace("max_players = 5", "max_players = 2", 1)
    )
    (tmp_path / "rulesets").mkdir()
    path = tmp_path / "rulesets" / "tiny.toml"
    path.write_text(text, encoding="utf-8")
    rules = load_ruleset_file(path)
    assert rules.ident == "tiny@1"
    assert [c.name for c in rules.game_map.cities] == cities
    assert len(rules.game_map.routes) == 4
    assert rules.game_map.routes[0].sibling == 1
    assert len(rules.tickets) == 6
    assert sum(t.points for t in rules.tickets) == 21


def test_load_ruleset_file_with_an_unknown_map(tmp_path: Path) -> None:
    path = tmp_path / "lost.toml"
    path.write_text(usa_toml_text().replace('map = "usa"', 'map = "atlantis"', 1), "utf-8")
    with pytest.raises(RulesetError, match="atlantis"):
        load_ruleset_file(path)


def test_load_ruleset_file_rejects_bad_toml(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("name = \n", encoding="utf-8")
    with pytest.raises(RulesetError, match="not valid TOML"):
        load_ruleset_file(path)


def test_load_ruleset_file_names_the_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "typo.toml"
    path.write_text(usa_toml_text().replace("[deck]", "[deck]\nper_color = 12", 1), "utf-8")
    with pytest.raises(RulesetError) as info:
        load_ruleset_file(path)
    assert "per_color" in str(info.value)
    assert "typo.toml" in str(info.value)


def test_packaged_data_is_not_modified_by_these_tests() -> None:
    # The helpers above hand out copies; the cached ruleset still has its numbers.
    data = packaged("rulesets", "usa")
    assert copy.deepcopy(data) == packaged("rulesets", "usa")
    assert load_ruleset("usa").trains == 45


# ---------------------------------------------------------------------------------------------
# Every variant: the ruleset numbers, each from its rulebook line


def test_the_variants_are_the_five_packaged_files() -> None:
    assert available_variants() == tuple(sorted(VARIANTS))
    assert sorted(FACTS) == sorted(VARIANTS)


@pytest.mark.parametrize("variant", VARIANTS)
def test_packaged_file_parses_to_the_cached_ruleset(variant: str) -> None:
    rules = parse_ruleset(packaged("rulesets", variant), f"rulesets/{variant}.toml", loader())
    assert rules == RULESETS[variant] == load_ruleset(variant)
    assert rules.ident == f"{variant}@1"
    assert rules.title and rules.description  # one line each for `ttr variants`


@pytest.mark.parametrize("variant", VARIANTS)
def test_ruleset_numbers_are_the_rulebooks(variant: str) -> None:
    """tests/helpers.py ``FACTS`` holds each number with its line (003:9-109 and the variant
    lines 003:21-37; 001 for New York)."""
    rules, facts = RULESETS[variant], FACTS[variant]
    assert tuple(range(rules.min_players, rules.max_players + 1)) == facts.players
    assert rules.deck == rules.initial_deck_counts() == facts.cards
    assert rules.deck_size == sum(facts.cards)
    assert rules.locomotives == facts.cards[-1]
    assert rules.trains == facts.trains
    assert (rules.hand_size, rules.face_up) == (facts.hand, facts.face_up)
    assert len(rules.tickets) == facts.tickets
    assert (rules.setup_tickets_dealt, rules.setup_tickets_keep_min) == (
        facts.setup_dealt,
        facts.setup_keep,
    )
    assert rules.cards_drawn == 2  # 003:45, 001:126-127
    assert (rules.tickets_drawn, rules.tickets_keep_min) == (facts.drawn, facts.draw_keep)
    assert rules.flush_locomotives == 3  # 003:73, 001:135-137
    assert rules.trains_trigger == facts.trigger
    assert rules.route_points == (0, *facts.route_points)
    assert rules.longest_path_bonus == facts.longest_path
    assert rules.globetrotter_bonus == facts.globetrotter
    assert rules.attraction_points == facts.attraction
    assert rules.both_tracks_min_players == facts.one_track_up_to + 1


VARIANT_NUMBERS: list[tuple[str, str, object, str]] = [
    # (variant, Ruleset attribute, value, the line that says so)
    ("usa1910", "bonuses", (BonusCard("globetrotter", 15),), "003:25"),
    ("usa1910", "tie_breaks", ("tickets_completed",), "003:109-docs"),
    ("usa1910", "setup_tickets_dealt", 3, "003:15"),
    ("usa1910", "tickets_drawn", 3, "003:59"),
    (
        "mega",
        "bonuses",
        (BonusCard("longest_path", 10), BonusCard("globetrotter", 15)),
        "003:29",
    ),
    ("mega", "setup_tickets_dealt", 5, "003:29"),
    ("mega", "setup_tickets_keep_min", 3, "003:29"),
    ("mega", "tickets_drawn", 4, "003:31"),
    ("mega", "tickets_keep_min", 1, "003:31"),
    ("mega", "tie_breaks", ("tickets_completed", "longest_path"), "003:109"),
    ("bigcities", "setup_tickets_dealt", 4, "003:35"),
    ("bigcities", "setup_tickets_keep_min", 2, "003:35"),
    ("bigcities", "tickets_drawn", 4, "003:37"),
    ("bigcities", "tickets_keep_min", 1, "003:37"),
    ("bigcities", "bonuses", (BonusCard("longest_path", 10),), "003:13-docs"),
    ("bigcities", "tie_breaks", ("tickets_completed", "longest_path"), "003:109"),
    ("newyork", "min_players", 2, "001:164-165"),
    ("newyork", "max_players", 4, "001:164-165"),
    ("newyork", "trains", 15, "001:164-165"),
    ("newyork", "deck", (6, 6, 0, 6, 6, 6, 6, 0, 8), "001:170-175"),
    ("newyork", "hand_size", 2, "001:88-89"),
    ("newyork", "face_up", 5, "001:91-92"),
    ("newyork", "setup_tickets_dealt", 2, "001:96-97"),
    ("newyork", "setup_tickets_keep_min", 1, "001:99"),
    ("newyork", "tickets_drawn", 2, "001:24-25"),
    ("newyork", "tickets_keep_min", 1, "001:25-26"),
    ("newyork", "flush_locomotives", 3, "001:135-137"),
    ("newyork", "trains_trigger", 2, "001:36-37"),
    ("newyork", "route_points", (0, 1, 2, 4, 7), "001:70-73"),
    ("newyork", "bonuses", (), "001:70-81"),
    ("newyork", "attraction_points", 1, "001:79-81"),
    ("newyork", "tie_breaks", ("tickets_completed",), "001:40-42"),
    ("newyork", "both_tracks_min_players", 3, "001:152-153"),
]


@pytest.mark.parametrize(
    ("variant", "attribute", "value"),
    [pytest.param(v, a, x, id=f"{v}-{a}-{cite}") for v, a, x, cite in VARIANT_NUMBERS],
)
def test_variant_numbers(variant: str, attribute: str, value: object) -> None:
    assert getattr(RULESETS[variant], attribute) == value


@pytest.mark.parametrize("variant", ["usa", "usa1910", "mega", "bigcities"])
def test_the_usa_variants_share_the_map_and_the_base_numbers(variant: str) -> None:
    # 003:21-37: each variant changes tickets, deal and bonus cards; the rest of 003 stands.
    rules = RULESETS[variant]
    assert rules.game_map == USA.game_map
    for name in (
        "deck",
        "trains",
        "hand_size",
        "face_up",
        "cards_drawn",
        "flush_locomotives",
        "trains_trigger",
        "route_points",
        "attraction_points",
        "both_tracks_min_players",
        "min_players",
        "max_players",
    ):
        assert getattr(rules, name) == getattr(USA, name), name


# ---------------------------------------------------------------------------------------------
# The ticket decks of the USA variants (tickets/usa.json: points.original, points.usa1910)

BIG_CITIES = {"Chicago", "Dallas", "Houston", "Los Angeles", "Miami", "New York", "Seattle"}


def pairs(rules: Ruleset) -> dict[frozenset[str], int]:
    return ticket_names(rules.game_map, rules.tickets)


def test_usa1910_tickets_are_the_35_with_the_1910_logo() -> None:
    # 003:25 "Use only the tickets with the 1910 logo": 35, none of the 30 originals.
    rules = RULESETS["usa1910"]
    data = packaged("tickets", "usa")
    logo = {t["id"] for t in data["tickets"] if "1910" in t["sets"]}
    assert len(logo) == 35
    assert {t.ticket_id for t in rules.tickets} == logo
    assert not set(pairs(rules)) & set(pairs(USA))
    assert sum(t.points for t in rules.tickets) == 391
    assert pairs(rules)[frozenset(("Las Vegas", "Miami"))] == 21
    assert pairs(rules)[frozenset(("Washington", "Atlanta"))] == 4


def test_mega_tickets_are_all_69_at_the_1910_box_values() -> None:
    # 003:29 "Shuffle all 69 tickets": every ticket of the box, the four reprinted originals at
    # their 1910-box values (shared/data/README.md).
    rules = RULESETS["mega"]
    assert len(rules.tickets) == 69
    assert len(pairs(rules)) == 69  # 69 distinct city pairs
    assert {t.ticket_id for t in rules.tickets} == set(range(1, 70))
    values = pairs(rules)
    for a, b, base, box in [
        ("Los Angeles", "New York", 21, 20),
        ("Los Angeles", "Miami", 20, 19),
        ("Seattle", "New York", 22, 20),
        ("Sault St. Marie", "Oklahoma City", 9, 8),
    ]:
        assert pairs(USA)[frozenset((a, b))] == base
        assert values[frozenset((a, b))] == box
    assert sum(t.points for t in rules.tickets) == 754


def test_big_cities_tickets_are_the_35_with_a_big_city() -> None:
    # 003:35 "the 35 tickets that feature at least 1 Big City": of the 69 tickets, exactly
    # those naming Chicago, Dallas, Houston, Los Angeles, Miami, New York or Seattle.
    rules, mega = RULESETS["bigcities"], RULESETS["mega"]
    with_big = {pair for pair in pairs(mega) if pair & BIG_CITIES}
    assert len(with_big) == 35
    assert set(pairs(rules)) == with_big
    assert len(rules.tickets) == 35
    values = pairs(rules)
    assert values[frozenset(("Los Angeles", "New York"))] == 20  # the 1910-box value
    assert all(values[pair] == v for pair, v in pairs(mega).items() if pair in with_big)


# ---------------------------------------------------------------------------------------------
# The New York map and tickets (shared/data/newyork/PROVENANCE.md)

NY_MAP = NEW_YORK.game_map
ATTRACTIONS = {
    "Central Park",
    "Times Square",
    "United Nations",
    "Empire State Building",
    "Chelsea",
    "Greenwich Village",
    "Chinatown",
    "Wall Street",
    "Brooklyn",
}


def test_new_york_locations_routes_and_attractions() -> None:
    assert len(NY_MAP.cities) == 15
    assert len(NY_MAP.routes) == 41
    assert [r.route_id for r in NY_MAP.routes] == list(range(1, 42))
    assert len({frozenset((r.a, r.b)) for r in NY_MAP.routes}) == 30  # adjacent pairs
    assert sum(r.length for r in NY_MAP.routes) == 84  # route spaces
    assert Counter(r.length for r in NY_MAP.routes) == {1: 9, 2: 22, 3: 9, 4: 1}
    colours = Counter("gray" if r.colour == GRAY else COLOURS[r.colour] for r in NY_MAP.routes)
    assert colours == {
        "blue": 6,
        "gray": 10,
        "orange": 5,
        "red": 5,
        "green": 5,
        "black": 5,
        "pink": 5,
    }
    # 001:79-81 the Tourist Attractions: 9 of the 15 locations
    assert {NY_MAP.cities[c].name for c in NY_MAP.attractions} == ATTRACTIONS
    # no board coordinates in the data, and none made up
    assert all(c.x is None and c.y is None for c in NY_MAP.cities)
    assert all(not c.attraction for c in USA.game_map.cities)


def test_new_york_double_routes() -> None:
    # 001:147-150 "Double Routes (two Routes of the same length connecting the same Locations)"
    groups: dict[int, list[int]] = {}
    for r in NY_MAP.routes:
        if r.double_group is not None:
            groups.setdefault(r.double_group, []).append(r.index)
    assert len(groups) == 11
    both_gray = 0
    for members in groups.values():
        r1, r2 = (NY_MAP.routes[i] for i in members)
        assert {r1.a, r1.b} == {r2.a, r2.b} and r1.length == r2.length
        assert (r1.sibling, r2.sibling) == (r2.index, r1.index)
        both_gray += r1.colour == GRAY
        assert r1.colour != r2.colour or r1.colour == GRAY
    assert both_gray == 2


def test_new_york_map_is_connected() -> None:
    reached = {0}
    frontier = [0]
    while frontier:
        city = frontier.pop()
        for r in NY_MAP.routes:
            for x, y in ((r.a, r.b), (r.b, r.a)):
                if x == city and y not in reached:
                    reached.add(y)
                    frontier.append(y)
    assert len(reached) == 15


def test_new_york_tickets_equal_their_shortest_paths() -> None:
    # 001:177 "18 Destination Ticket cards"; every value is the fewest taxis between its two
    # locations (PROVENANCE.md: a second check of the route lengths).
    assert len(NEW_YORK.tickets) == 18
    assert sum(t.points for t in NEW_YORK.tickets) == 92
    assert len({frozenset((t.a, t.b)) for t in NEW_YORK.tickets}) == 18
    for t in NEW_YORK.tickets:
        assert t.points == shortest(NY_MAP, t.a, t.b), (t.a, t.b)
    assert (
        ticket_names(NY_MAP, NEW_YORK.tickets)[frozenset(("Lincoln Center", "Greenwich Village"))]
        == 6
    )


def test_new_york_deck_has_six_colours_and_eight_taxis() -> None:
    # 001:170-175; the Taxi card is the wild card kind (001:120-122), the Locomotive's slot.
    deck = dict(zip(CARD_NAMES, NEW_YORK.deck, strict=True))
    assert deck == {
        "red": 6,
        "orange": 6,
        "yellow": 0,
        "green": 6,
        "blue": 6,
        "pink": 6,
        "black": 6,
        "white": 0,
        "locomotive": 8,
    }
    assert NEW_YORK.deck_size == 44
    # every route colour has cards (yellow and white routes do not exist in New York)
    route_colours = {r.colour for r in NY_MAP.routes if r.colour != GRAY}
    assert all(NEW_YORK.deck[c] == 6 for c in route_colours)
    assert len(route_colours) == 6


def test_route_points_must_cover_the_longest_route() -> None:
    # the New York table has 4 entries: enough for its routes (at most 4), not for the USA map
    data = packaged("rulesets", "usa")
    data["scoring"]["route_points"] = [1, 2, 4, 7]
    with pytest.raises(RulesetError, match="route of length 6"):
        parse_ruleset(data, "rulesets/usa.toml", loader())
