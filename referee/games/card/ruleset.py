"""The Card Game's ruleset: every number and fact in one data file, loaded strictly.

Like the board games' loader (both read through referee/games/common/tables.py's strict
``Table`` and raise its ``RulesetError``), an unknown key, a missing key or a value out of range
raises :class:`RulesetError` naming the key, so a typo fails at load time instead of silently
playing a different game. The file is ``data/cardgame.toml``; PROVENANCE.md beside it says
where its facts come from.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final, TypedDict

from referee.games.common.cards import CARD_NAMES, COLOURS, LOCOMOTIVE, NUM_CARD_KINDS, NUM_COLOURS
from referee.games.common.tables import RulesetError, Table

#: Card names as the card game's data spells them: its sources call the eighth colour
#: ``purple``, the colour the board games call ``pink`` (shared/data/README.md). Same card
#: kinds, same indices (referee/games/common/cards.py): only the spelling in the data file differs.
SOURCE_CARD_NAMES: Final[tuple[str, ...]] = tuple(
    "purple" if kind == COLOURS.index("pink") else name for kind, name in enumerate(CARD_NAMES)
)

#: Tie-breaks after the most points (000:224-228).
TIE_BREAKS: Final = frozenset({"tickets_completed", "bonus_cards"})

_DATA = resources.files("referee.games.card") / "data"


@dataclass(frozen=True, slots=True)
class BigCity:
    """A Big Cities Bonus card (000:246-249): the city and the points it is worth."""

    index: int  #: position in ``CardRuleset.big_cities``
    name: str
    points: int


@dataclass(frozen=True, slots=True)
class CardTicket:
    """A Destination Ticket: two cities, its value, and the Train cards it needs."""

    index: int  #: position in ``CardRuleset.tickets`` (0-based)
    a: str
    b: str
    points: int
    #: cards needed per colour, ``NUM_COLOURS`` counts (000:202, 000:206-208)
    requires: tuple[int, ...]
    #: indices of the Big Cities the ticket names (000:221-223: a ticket naming two counts
    #: for both)
    big_cities: tuple[int, ...]

    @property
    def size(self) -> int:
        """The number of Train cards that complete it."""
        return sum(self.requires)


@dataclass(frozen=True, slots=True)
class CardRuleset:
    """The Card Game's numbers (each cited in the data file) and its tickets and bonuses."""

    name: str
    version: str
    title: str
    description: str
    min_players: int
    max_players: int
    #: the Train cards, ``NUM_CARD_KINDS`` counts in the shared card order, Locomotives last
    deck: tuple[int, ...]
    starting_locomotives: int
    hand_size: int
    face_up: int
    setup_tickets_dealt: int
    setup_tickets_keep_min: int
    cards_drawn: int
    suit_min: int
    mix_size: int
    tickets_drawn: int
    tickets_keep_min: int
    second_deck_min_players: int
    second_deck_deal: int
    owners_see_stack: bool
    big_cities: tuple[BigCity, ...]
    tie_breaks: tuple[str, ...]
    tickets: tuple[CardTicket, ...]

    @property
    def ident(self) -> str:
        """``name@version``: what a game record stores to pin the rules it was played under."""
        return f"{self.name}@{self.version}"

    @property
    def deck_size(self) -> int:
        return sum(self.deck)


def parse_card_ruleset(data: object, where: str) -> CardRuleset:
    """Build a :class:`CardRuleset` from the data file's TOML, checking every fact. One reader
    per section of the file, in the file's order, so the first problem found is the first a
    reader of the file meets."""
    top = Table(data, where)
    name, version, title = top.get_str("name"), top.get_str("version"), top.get_str("title")
    description = top.get_str("description")
    min_players = top.get_int("min_players", 2, 8)
    max_players = top.get_int("max_players", min_players, 8)
    deck_t = top.get_table("deck")
    deck = tuple(deck_t.get_int(kind, 0, 1000) for kind in SOURCE_CARD_NAMES)
    deck_t.done()
    setup = _setup_section(top.get_table("setup"))
    turn = _turn_section(top.get_table("turn"))
    end = top.get_table("end")
    second_min = end.get_int("second_deck_min_players", 2, 9)
    second_deal = end.get_int("second_deck_deal", 0, 100)
    end.done()
    options = top.get_table("options")
    owners_see_stack = options.get_bool("owners_see_stack", False)
    options.done()
    big_cities, tie_breaks = _scoring_section(top.get_table("scoring"), where)
    tickets_t = top.get_table("tickets")
    raw_tickets = tickets_t.get_list("cards")
    tickets_t.done()
    top.done()
    tickets = _tickets(raw_tickets, big_cities, where)

    locomotives, hand = setup["starting_locomotives"], setup["hand_size"]
    if deck[LOCOMOTIVE] < locomotives * max_players:
        raise RulesetError(f"{where}: too few Locomotives to give each player its starting ones")
    if sum(deck) < (locomotives + hand) * max_players + setup["face_up"]:
        raise RulesetError(f"{where}: the deck cannot deal every hand and the face-up row")
    dealt = setup["setup_tickets_dealt"]
    if dealt * max_players > len(tickets):
        raise RulesetError(f"{where}: {len(tickets)} tickets cannot deal {dealt} to each")
    if len(deck) != NUM_CARD_KINDS:  # pragma: no cover - guarded by SOURCE_CARD_NAMES
        raise RulesetError(f"{where}.deck: expected {NUM_CARD_KINDS} card kinds")
    return CardRuleset(
        name=name,
        version=version,
        title=title,
        description=description,
        min_players=min_players,
        max_players=max_players,
        deck=deck,
        **setup,
        **turn,
        second_deck_min_players=second_min,
        second_deck_deal=second_deal,
        owners_see_stack=owners_see_stack,
        big_cities=big_cities,
        tie_breaks=tie_breaks,
        tickets=tickets,
    )


class _Setup(TypedDict):
    starting_locomotives: int
    hand_size: int
    face_up: int
    setup_tickets_dealt: int
    setup_tickets_keep_min: int


class _Turn(TypedDict):
    cards_drawn: int
    suit_min: int
    mix_size: int
    tickets_drawn: int
    tickets_keep_min: int


def _setup_section(setup: Table) -> _Setup:
    """``[setup]``: the starting Locomotives, hand and row, the tickets dealt and kept."""
    section = _Setup(
        starting_locomotives=setup.get_int("starting_locomotives", 0, 100),
        hand_size=setup.get_int("hand_size", 0, 100),
        face_up=setup.get_int("face_up", 1, 20),
        setup_tickets_dealt=(dealt := setup.get_int("tickets_dealt", 1, 20)),
        setup_tickets_keep_min=setup.get_int("tickets_keep_min", 0, dealt),
    )
    setup.done()
    return section


def _turn_section(turn: Table) -> _Turn:
    """``[turn]``: the draw (its two decisions are built into the engine, as in the board
    games), the placements and the ticket draw."""
    section = _Turn(
        cards_drawn=turn.get_int("cards_drawn", 2, 2),
        suit_min=turn.get_int("suit_min", 1, 20),
        mix_size=turn.get_int("mix_size", 2, NUM_COLOURS),
        tickets_drawn=(drawn := turn.get_int("tickets_drawn", 1, 20)),
        tickets_keep_min=turn.get_int("tickets_keep_min", 0, drawn),
    )
    turn.done()
    return section


def _scoring_section(scoring: Table, where: str) -> tuple[tuple[BigCity, ...], tuple[str, ...]]:
    """``[scoring]``: the Big Cities with their bonuses, and the tie-breaks."""
    big_cities: list[BigCity] = []
    for i, raw in enumerate(scoring.get_list("big_cities")):
        t = Table(raw, f"{where}.scoring.big_cities[{i}]")
        city = BigCity(i, t.get_str("city"), t.get_int("points", 1, 1000))
        t.done()
        if any(b.name == city.name for b in big_cities):
            raise RulesetError(f"{where}.scoring.big_cities: {city.name!r} listed twice")
        big_cities.append(city)
    tie_breaks = [str(tb) for tb in scoring.get_list("tie_breaks")]
    scoring.done()
    if len(set(tie_breaks)) != len(tie_breaks) or not set(tie_breaks) <= TIE_BREAKS:
        raise RulesetError(
            f"{where}.scoring.tie_breaks: expected distinct values of {sorted(TIE_BREAKS)}, "
            f"got {tie_breaks!r}"
        )
    return tuple(big_cities), tuple(tie_breaks)


def _tickets(
    raw_tickets: list[Any], big_cities: tuple[BigCity, ...], where: str
) -> tuple[CardTicket, ...]:
    """``[tickets]``: each ticket's cities, points and circles per colour, and the Big Cities
    it names."""
    city_of = {b.name: b.index for b in big_cities}
    tickets: list[CardTicket] = []
    for i, raw in enumerate(raw_tickets):
        t = Table(raw, f"{where}.tickets.cards[{i}]")
        a, b = t.get_str("a"), t.get_str("b")
        points = t.get_int("points", 1, 1000)
        need_t = t.get_table("requires")
        requires = tuple(
            need_t.get_int(colour, 0, 100) if need_t.has(colour) else 0
            for colour in SOURCE_CARD_NAMES[:NUM_COLOURS]
        )
        need_t.done()
        t.done()
        if a == b:
            raise RulesetError(f"{where}.tickets.cards[{i}]: ticket from {a!r} to itself")
        if not any(requires):
            raise RulesetError(f"{where}.tickets.cards[{i}]: requires no card")
        touched = tuple(sorted({city_of[c] for c in (a, b) if c in city_of}))
        tickets.append(CardTicket(i, a, b, points, requires, touched))
    return tuple(tickets)


def available_card_variants() -> tuple[str, ...]:
    """The packaged card-game variants, by name (one file each in data/)."""
    names = (p.name.removesuffix(".toml") for p in _DATA.iterdir() if p.name.endswith(".toml"))
    return tuple(sorted(names))


@cache
def load_card_ruleset(name: str = "cardgame") -> CardRuleset:
    """The packaged Card Game ruleset (cached: rulesets are immutable). Not in
    the board games' ``available_variants()``: the board engine cannot play it."""
    path = _DATA / f"{name}.toml"
    if not path.is_file():
        raise RulesetError(f"no card game ruleset named {name!r} (referee/games/card/data/)")
    return parse_card_ruleset(tomllib.loads(path.read_text(encoding="utf-8")), f"{name}.toml")


def load_card_ruleset_file(path: Path) -> CardRuleset:
    """A Card Game ruleset file outside the package (a corrected ticket list, say)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise RulesetError(f"{path}: not valid TOML: {e}") from None
    return parse_card_ruleset(data, str(path))
