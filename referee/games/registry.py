"""The rules families by name: the one list (:data:`FAMILIES`) that everything above the games
goes through, and the variant lookup, version check included, for every caller.

Two families exist: the board games (``usa``, ``usa1910``, ``mega``, ``bigcities``,
``newyork``), one engine with variants as data (``referee.games.board``), and Ticket to Ride:
The Card Game (``referee.games.card``). Each builds its own typed
:class:`~referee.games.common.family.Family` in its ``family.py``; the machinery around the
rules is written once against that record and never asks which game it runs.
"""

from __future__ import annotations

from referee.games.board.family import BOARD
from referee.games.board.ruleset import Ruleset
from referee.games.card.family import CARD
from referee.games.card.ruleset import CardRuleset
from referee.games.common.family import AnyFamily, Column, Family
from referee.games.common.tables import RulesetError

__all__ = [
    "BOARD",
    "CARD",
    "FAMILIES",
    "AnyFamily",
    "AnyRuleset",
    "Column",
    "Family",
    "family_named",
    "family_of",
    "family_of_variant",
    "load",
    "matches_variant",
    "variant_name",
    "variants",
]

#: a ruleset of either family
AnyRuleset = Ruleset | CardRuleset


#: Every rules family, board games first. A third family is one more entry here.
FAMILIES: tuple[AnyFamily, ...] = (BOARD, CARD)


def variants() -> tuple[str, ...]:
    """Every variant a game can be played in, board games first."""
    return tuple(v for f in FAMILIES for v in f.variants())


def variant_name(variant: str) -> str:
    """``usa`` for ``usa@1`` (and for ``usa``): the part of a variant spec that names the
    rules, without the version."""
    return variant.partition("@")[0]


def matches_variant(spec: str, ident: str) -> bool:
    """Whether a user's ``--variant`` (a bare name, matching every version, or a full
    ``name@version``) selects the ruleset ``ident`` (``usa@1``)."""
    return spec == ident or spec == variant_name(ident)


def family_of_variant(variant: str) -> AnyFamily:
    """The family that plays ``variant`` (a name, or ``name@version``); ``RulesetError``
    listing the variants if none does."""
    name = variant_name(variant)
    for family in FAMILIES:
        if name in family.variants():
            return family
    raise RulesetError(f"unknown variant {name!r} (available: {', '.join(variants())})")


def load(variant: str) -> AnyRuleset:
    """The ruleset of ``variant`` (a name, or ``name@version``) from either family;
    ``RulesetError`` naming the problem. A version is checked here, once for every caller:
    ``usa@7`` is refused rather than quietly played as the ``usa@1`` this referee has."""
    spec = variant
    ruleset: AnyRuleset = family_of_variant(spec).load(variant_name(spec))
    if "@" in spec and ruleset.ident != spec:
        raise RulesetError(f"unknown version {spec!r}: this referee plays {ruleset.ident}")
    return ruleset


def family_of(ruleset: AnyRuleset) -> AnyFamily:
    """The family whose engine plays ``ruleset``."""
    for family in FAMILIES:
        if isinstance(ruleset, family.ruleset_type):
            return family
    raise TypeError(f"no rules family plays a {type(ruleset).__name__}")


def family_named(name: str) -> AnyFamily:
    """The family called ``name`` (``Family.name``: what records and bots call it)."""
    for family in FAMILIES:
        if family.name == name:
            return family
    raise KeyError(f"no rules family named {name!r}")
