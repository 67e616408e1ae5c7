"""Rulesets: a variant is data (a map file, a ticket file and a ruleset file), never an if-chain.

The loader is strict on purpose: an unknown key, a missing key or a value out of range raises
:class:`RulesetError` naming the file and the key, so a typo in a variant file fails at load
time instead of silently playing a different game.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypedDict

from referee.games.common.cards import (
    CARD_NAMES,
    GRAY,
    LOCOMOTIVE,
    NUM_CARD_KINDS,
    NUM_COLOURS,
    parse_route_colour,
)
from referee.games.common.tables import RulesetError, Table


@dataclass(frozen=True, slots=True)
class City:
    index: int
    name: str
    #: position for drawing, as fractions of the board (``None`` where the data has none:
    #: shared/data/newyork/ gives no coordinates, and none are made up)
    x: float | None
    y: float | None
    #: a Tourist Attraction (001:79-81 "one point for each Tourist Attraction that is
    #: connected to one or more of the Routes they claimed"); False on maps without them
    attraction: bool = False


@dataclass(frozen=True, slots=True)
class Route:
    """One track. Each track of a double route is its own ``Route`` sharing ``double_group``."""

    index: int  #: position in ``GameMap.routes`` (0-based; the bit in claim masks)
    route_id: int  #: the id in the map file (stable across versions of the loader)
    a: int  #: city index
    b: int  #: city index
    length: int
    colour: int  #: a card colour, or ``GRAY``
    double_group: int | None
    sibling: int | None  #: index of the other track of a double route


@dataclass(frozen=True, slots=True)
class Ticket:
    index: int  #: position in ``Ruleset.tickets`` (0-based)
    ticket_id: int  #: id in the ticket file
    a: int  #: city index
    b: int  #: city index
    points: int


@dataclass(frozen=True, slots=True)
class GameMap:
    name: str
    version: str
    cities: tuple[City, ...]
    routes: tuple[Route, ...]
    city_index: Mapping[str, int] = field(repr=False, compare=False)

    @property
    def attractions(self) -> tuple[int, ...]:
        """Indices of the cities that are Tourist Attractions (001:79-81)."""
        return tuple(c.index for c in self.cities if c.attraction)

    def route_label(self, index: int) -> str:
        """``Denver-Omaha (4 red, #12)`` style label used in error messages and tables."""
        r = self.routes[index]
        colour = "gray" if r.colour == GRAY else _colour_name(r.colour)
        return (
            f"{self.cities[r.a].name}-{self.cities[r.b].name} ({r.length} {colour}, #{r.route_id})"
        )


def _colour_name(colour: int) -> str:
    from referee.games.common.cards import card_name

    return card_name(colour)


#: The bonus cards a ruleset may hand out at the end (003:107 longest path, 003:25
#: Globetrotter); a ruleset lists the ones it uses.
BONUS_KINDS = ("longest_path", "globetrotter")


@dataclass(frozen=True, slots=True)
class BonusCard:
    """One end-of-game bonus card a variant uses: which one, and what it is worth."""

    kind: str  #: one of ``BONUS_KINDS``
    points: int


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Every number the rulebooks give for one variant, plus its map and ticket deck."""

    name: str
    version: str
    title: str
    description: str  #: one line for ``ttr variants``
    game_map: GameMap
    tickets: tuple[Ticket, ...]
    min_players: int
    max_players: int
    #: the train deck: cards of each kind (``NUM_CARD_KINDS`` counts, the wild card last)
    deck: tuple[int, ...]
    # setup
    trains: int
    #: what a seat's pieces are called, singular ("train"; New York's "taxi"): the log and pages
    piece: str
    hand_size: int
    face_up: int
    setup_tickets_dealt: int
    setup_tickets_keep_min: int
    # turn
    cards_drawn: int
    tickets_drawn: int
    tickets_keep_min: int
    flush_locomotives: int
    # end
    trains_trigger: int
    # scoring
    route_points: tuple[int, ...]  #: indexed by route length (index 0 unused, = 0)
    bonuses: tuple[BonusCard, ...]  #: the bonus cards in play, in the ruleset's order
    attraction_points: int  #: per Tourist Attraction touched by a seat's routes (0 = none)
    tie_breaks: tuple[str, ...]
    # doubles
    both_tracks_min_players: int

    @property
    def ident(self) -> str:
        """``name@version``: what a game record stores to pin the rules it was played under."""
        return f"{self.name}@{self.version}"

    @property
    def deck_size(self) -> int:
        return sum(self.deck)

    @property
    def locomotives(self) -> int:
        """Wild cards in the deck (Locomotives; New York's Taxi cards, 001:120-122)."""
        return self.deck[LOCOMOTIVE]

    def initial_deck_counts(self) -> tuple[int, ...]:
        return self.deck

    def bonus_points(self, kind: str) -> int:
        """Points of the bonus card ``kind`` in this ruleset; 0 when it is not in play."""
        for bonus in self.bonuses:
            if bonus.kind == kind:
                return bonus.points
        return 0

    @property
    def longest_path_bonus(self) -> int:
        return self.bonus_points("longest_path")

    @property
    def globetrotter_bonus(self) -> int:
        return self.bonus_points("globetrotter")


TIE_BREAKS = frozenset({"tickets_completed", "longest_path", "globetrotter"})
#: Tie-breaks that only make sense while their bonus card is in play.
_TIE_BREAK_NEEDS_BONUS = {"longest_path": "longest_path", "globetrotter": "globetrotter"}

_DATA = resources.files("referee.games.board") / "data"


# ---------------------------------------------------------------------------------------------
# strict table reading


# ---------------------------------------------------------------------------------------------
# maps and tickets


def parse_map(data: object, where: str) -> GameMap:
    """Build a :class:`GameMap` from a map file's JSON, checking every fact it relies on."""
    top = Table(data, where)
    name = top.get_str("name")
    version = top.get_str("version")
    top.get_str("source")
    cities: list[City] = []
    index: dict[str, int] = {}
    for i, raw in enumerate(top.get_list("cities")):
        t = Table(raw, f"{where}.cities[{i}]")
        name = t.get_str("name")
        if t.has("x") != t.has("y"):
            raise RulesetError(f"{where}.cities[{i}]: give both x and y, or neither")
        x = t.get_float("x") if t.has("x") else None
        y = t.get_float("y") if t.has("y") else None
        city = City(i, name, x, y, t.get_bool("attraction", False))
        t.done()
        if city.name in index:
            raise RulesetError(f"{where}: city {city.name!r} listed twice")
        index[city.name] = i
        cities.append(city)
    raw_routes = top.get_list("routes")
    top.done()

    routes: list[Route] = []
    groups: dict[int, list[int]] = {}
    ids: set[int] = set()
    for i, raw in enumerate(raw_routes):
        t = Table(raw, f"{where}.routes[{i}]")
        route_id = t.get_int("id", 1, 1_000_000)
        a_name, b_name = t.get_str("a"), t.get_str("b")
        length = t.get_int("length", 1, 10)
        try:
            colour = parse_route_colour(t.get_str("colour"))
        except ValueError as e:
            raise RulesetError(f"{where}.routes[{i}]: {e}") from None
        group = t.get_optional_int("double_group")
        t.done()
        for city_name in (a_name, b_name):
            if city_name not in index:
                raise RulesetError(f"{where}.routes[{i}]: unknown city {city_name!r}")
        if a_name == b_name:
            raise RulesetError(f"{where}.routes[{i}]: route from {a_name!r} to itself")
        if route_id in ids:
            raise RulesetError(f"{where}.routes[{i}]: duplicate route id {route_id}")
        ids.add(route_id)
        if group is not None:
            groups.setdefault(group, []).append(i)
        routes.append(Route(i, route_id, index[a_name], index[b_name], length, colour, group, None))

    for group, members in groups.items():
        if len(members) != 2:
            raise RulesetError(f"{where}: double_group {group} has {len(members)} tracks, not 2")
        r1, r2 = (routes[m] for m in members)
        if {r1.a, r1.b} != {r2.a, r2.b} or r1.length != r2.length:
            raise RulesetError(f"{where}: double_group {group} tracks differ in cities or length")
        routes[r1.index] = _with_sibling(r1, r2.index)
        routes[r2.index] = _with_sibling(r2, r1.index)
    return GameMap(name, version, tuple(cities), tuple(routes), index)


def _with_sibling(r: Route, sibling: int) -> Route:
    return Route(r.index, r.route_id, r.a, r.b, r.length, r.colour, r.double_group, sibling)


def parse_tickets(
    data: object, where: str, game_map: GameMap, sets: list[str], points_key: str
) -> tuple[Ticket, ...]:
    """The tickets of ``data`` that belong to any of ``sets``, valued by ``points_key``."""
    top = Table(data, where)
    top.get_str("name")
    top.get_str("version")
    top.get_str("source")
    raw_tickets = top.get_list("tickets")
    top.done()
    wanted = set(sets)
    known_sets: set[str] = set()
    tickets: list[Ticket] = []
    seen_ids: set[int] = set()
    for i, raw in enumerate(raw_tickets):
        t = Table(raw, f"{where}.tickets[{i}]")
        ticket_id = t.get_int("id", 1, 1_000_000)
        a_name, b_name = t.get_str("a"), t.get_str("b")
        points = t.get_table("points")
        ticket_sets = t.get_list("sets")
        t.done()
        known_sets.update(ticket_sets)
        if ticket_id in seen_ids:
            raise RulesetError(f"{where}.tickets[{i}]: duplicate ticket id {ticket_id}")
        seen_ids.add(ticket_id)
        if a_name == b_name:
            raise RulesetError(f"{where}.tickets[{i}]: ticket from {a_name!r} to itself")
        if not wanted.intersection(ticket_sets):
            continue
        for city_name in (a_name, b_name):
            if city_name not in game_map.city_index:
                raise RulesetError(f"{where}.tickets[{i}]: unknown city {city_name!r}")
        value = points.get_int(points_key, 1, 100)
        tickets.append(
            Ticket(
                len(tickets),
                ticket_id,
                game_map.city_index[a_name],
                game_map.city_index[b_name],
                value,
            )
        )
    unknown = wanted - known_sets
    if unknown:
        raise RulesetError(f"{where}: no ticket belongs to set(s) {sorted(unknown)}")
    return tuple(tickets)


# ---------------------------------------------------------------------------------------------
# rulesets


def parse_ruleset(data: object, where: str, load_json: Any) -> Ruleset:
    """Build a :class:`Ruleset` from a ruleset file's TOML; ``load_json(kind, name)`` reads the
    map and ticket files it names. One reader per section of the file, in the file's order, so
    the first problem found is the first a reader of the file meets."""
    top = Table(data, where)
    name, version, title = top.get_str("name"), top.get_str("version"), top.get_str("title")
    description = top.get_str("description")
    map_name = top.get_str("map")
    min_players = top.get_int("min_players", 2, 8)
    max_players = top.get_int("max_players", min_players, 8)
    deck = _deck_section(top.get_table("deck"), where)
    ticket_file, ticket_sets, points_key = _tickets_section(top.get_table("tickets"))
    setup = _setup_section(top.get_table("setup"))
    turn = _turn_section(top.get_table("turn"), setup["face_up"])
    end = top.get_table("end")
    trains_trigger = end.get_int("trains_trigger", 0, setup["trains"])
    end.done()
    scoring = _scoring_section(top.get_table("scoring"), where)
    doubles = top.get_table("doubles")
    both_min = doubles.get_int("both_tracks_min_players", 0, 100)
    doubles.done()
    top.done()

    game_map = parse_map(load_json("maps", map_name), f"maps/{map_name}.json")
    lengths = len(scoring["route_points"]) - 1  # route_points[0] is the 0 of no route
    longest_route = max(r.length for r in game_map.routes)
    if lengths < longest_route:
        raise RulesetError(
            f"{where}.scoring.route_points: {lengths} values but the map has a route "
            f"of length {longest_route}"
        )
    tickets = parse_tickets(
        load_json("tickets", ticket_file),
        f"tickets/{ticket_file}.json",
        game_map,
        ticket_sets,
        points_key,
    )
    if scoring["attraction_points"] and not game_map.attractions:
        raise RulesetError(
            f"{where}.scoring.attraction_points: map {map_name!r} has no Tourist Attractions"
        )
    deck_total = sum(deck)
    if setup["hand_size"] * max_players + setup["face_up"] > deck_total:
        raise RulesetError(f"{where}: the deck of {deck_total} cannot deal every hand and the row")
    if setup["setup_tickets_dealt"] * max_players > len(tickets):
        raise RulesetError(
            f"{where}: {len(tickets)} tickets cannot deal {setup['setup_tickets_dealt']} to each"
        )
    assert LOCOMOTIVE == NUM_CARD_KINDS - 1
    return Ruleset(
        name=name,
        version=version,
        title=title,
        description=description,
        game_map=game_map,
        tickets=tickets,
        min_players=min_players,
        max_players=max_players,
        deck=deck,
        **setup,
        **turn,
        trains_trigger=trains_trigger,
        **scoring,
        both_tracks_min_players=both_min,
    )


class _Setup(TypedDict):
    trains: int
    piece: str
    hand_size: int
    face_up: int
    setup_tickets_dealt: int
    setup_tickets_keep_min: int


class _Turn(TypedDict):
    cards_drawn: int
    tickets_drawn: int
    tickets_keep_min: int
    flush_locomotives: int


class _Scoring(TypedDict):
    route_points: tuple[int, ...]  #: by length, from 0 (the points of no route)
    bonuses: tuple[BonusCard, ...]
    attraction_points: int
    tie_breaks: tuple[str, ...]


def _deck_section(deck_t: Table, where: str) -> tuple[int, ...]:
    """``[deck]``: every card kind, zeros included: a variant with fewer colours (New York's
    six, 001:170-175) says so instead of relying on a default."""
    deck = tuple(deck_t.get_int(kind, 0, 1000) for kind in CARD_NAMES)
    deck_t.done()
    if not any(deck[:NUM_COLOURS]):
        raise RulesetError(f"{where}.deck: no coloured cards")
    return deck


def _tickets_section(tickets_t: Table) -> tuple[str, list[str], str]:
    """``[tickets]``: the ticket file, the sets of it the variant plays, and which points."""
    ticket_file = tickets_t.get_str("file")
    ticket_sets = [str(s) for s in tickets_t.get_list("sets")]
    points_key = tickets_t.get_str("points")
    tickets_t.done()
    return ticket_file, ticket_sets, points_key


def _setup_section(setup: Table) -> _Setup:
    """``[setup]``: pieces, the starting hand and row, the tickets dealt and kept."""
    trains = setup.get_int("trains", 1, 1000)
    piece = setup.get_str("piece")
    hand_size = setup.get_int("hand_size", 0, 100)
    face_up = setup.get_int("face_up", 1, 20)
    dealt = setup.get_int("tickets_dealt", 0, 20)
    keep = setup.get_int("tickets_keep_min", min(1, dealt), dealt)
    setup.done()
    return {
        "trains": trains,
        "piece": piece,
        "hand_size": hand_size,
        "face_up": face_up,
        "setup_tickets_dealt": dealt,
        "setup_tickets_keep_min": keep,
    }


def _turn_section(turn: Table, face_up: int) -> _Turn:
    """``[turn]``: the draw (its two decisions are built into the engine), the ticket draw and
    the face-up flush."""
    cards_drawn = turn.get_int("cards_drawn", 2, 2)
    tickets_drawn = turn.get_int("tickets_drawn", 1, 20)
    tickets_keep_min = turn.get_int("tickets_keep_min", 1, tickets_drawn)
    flush_locomotives = turn.get_int("flush_locomotives", 1, face_up + 1)
    turn.done()
    return {
        "cards_drawn": cards_drawn,
        "tickets_drawn": tickets_drawn,
        "tickets_keep_min": tickets_keep_min,
        "flush_locomotives": flush_locomotives,
    }


def _scoring_section(scoring: Table, where: str) -> _Scoring:
    """``[scoring]``: route points by length, bonus cards, Tourist Attraction points and
    tie-breaks, each checked against the others."""
    raw_points = scoring.get_list("route_points")
    bonuses = _bonuses(scoring.get_list("bonuses"), where)
    attraction_points = scoring.get_int("attraction_points", 0, 1000)
    tie_breaks = scoring.get_list("tie_breaks")
    scoring.done()
    if not raw_points or not all(
        isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in raw_points
    ):
        raise RulesetError(f"{where}.scoring.route_points: expected non-negative integers")
    if len(set(map(str, tie_breaks))) != len(tie_breaks):
        raise RulesetError(f"{where}.scoring.tie_breaks: a tie-break is listed twice")
    for tb in tie_breaks:
        if tb not in TIE_BREAKS:
            raise RulesetError(
                f"{where}.scoring.tie_breaks: unknown tie-break {tb!r}; "
                f"expected one of {sorted(TIE_BREAKS)}"
            )
        needs = _TIE_BREAK_NEEDS_BONUS.get(tb)
        if needs is not None and all(b.kind != needs for b in bonuses):
            raise RulesetError(
                f"{where}.scoring.tie_breaks: {tb!r} breaks ties by a bonus card the ruleset "
                f"does not use (scoring.bonuses has no {needs!r})"
            )
    return {
        "route_points": (0, *raw_points),
        "bonuses": tuple(bonuses),
        "attraction_points": attraction_points,
        "tie_breaks": tuple(str(t) for t in tie_breaks),
    }


def _bonuses(raws: list[Any], where: str) -> list[BonusCard]:
    bonuses: list[BonusCard] = []
    for i, raw in enumerate(raws):
        b = Table(raw, f"{where}.scoring.bonuses[{i}]")
        kind = b.get_str("kind")
        if kind not in BONUS_KINDS:
            raise RulesetError(
                f"{where}.scoring.bonuses[{i}].kind: unknown bonus {kind!r}; "
                f"expected one of {list(BONUS_KINDS)}"
            )
        if any(other.kind == kind for other in bonuses):
            raise RulesetError(f"{where}.scoring.bonuses: {kind!r} listed twice")
        bonuses.append(BonusCard(kind, b.get_int("points", 1, 1000)))
        b.done()
    return bonuses


def _load_packaged_json(kind: str, name: str) -> object:
    path = _DATA / kind / f"{name}.json"
    if not path.is_file():
        raise RulesetError(f"no {kind} file named {name!r} ({kind}/{name}.json)")
    return json.loads(path.read_text(encoding="utf-8"))


def available_variants() -> tuple[str, ...]:
    """Names of the packaged rulesets: the one registry of variants."""
    folder = _DATA / "rulesets"
    return tuple(
        sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))
    )


@cache
def load_ruleset(name: str) -> Ruleset:
    """The packaged ruleset ``name`` (cached: rulesets are immutable)."""
    path = _DATA / "rulesets" / f"{name}.toml"
    if not path.is_file():
        raise RulesetError(
            f"unknown variant {name!r}; available: {', '.join(available_variants())}"
        )
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return parse_ruleset(data, f"rulesets/{name}.toml", _load_packaged_json)


def load_ruleset_file(path: Path) -> Ruleset:
    """A ruleset file outside the package (map designers); its map and tickets are looked up
    beside it (``maps/``, ``tickets/`` next to the file's folder) and then in the package."""
    root = path.resolve().parent.parent

    def load_json(kind: str, name: str) -> object:
        local = root / kind / f"{name}.json"
        if local.is_file():
            return json.loads(local.read_text(encoding="utf-8"))
        return _load_packaged_json(kind, name)

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise RulesetError(f"{path}: not valid TOML: {e}") from None
    return parse_ruleset(data, str(path), load_json)
