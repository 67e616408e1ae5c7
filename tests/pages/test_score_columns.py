"""The final score table's columns follow the variant's own scoring: a bonus card's column,
and the longest path's length, only where the ruleset's bonus cards score it (``ttr play``,
``ttr replay show``, the HTML replay and the human page all print ``family.columns``)."""

from __future__ import annotations

import random

import pytest

from referee.games.play import play
from referee.games.registry import family_of, load, variants
from ttr_arena.pages.scores import format_outcome


def header(variant: str) -> list[str]:
    """The header row of the final table of one quick random 2-seat game of ``variant``."""
    ruleset = load(variant)
    rng = random.Random(1)
    played = play(
        family_of(ruleset), ruleset, [lambda _v, legal: rng.choice(legal)] * 2, 1, views=False
    )
    return format_outcome(ruleset, played.outcome).splitlines()[0].split()


@pytest.mark.parametrize("variant", variants())
def test_the_columns_follow_the_rulesets_bonus_cards(variant: str) -> None:
    ruleset = load(variant)
    columns = header(variant)
    kinds = {b.kind for b in getattr(ruleset, "bonuses", ())}
    assert ("+longest" in columns) == ("longest_path" in kinds)
    assert ("path" in columns) == ("longest_path" in kinds)
    assert ("+globe" in columns) == ("globetrotter" in kinds)
    assert ("+attract" in columns) == bool(getattr(ruleset, "attraction_points", 0))
    assert ("+cities" in columns) == bool(getattr(ruleset, "big_cities", ()))


def test_the_columns_by_hand() -> None:
    """Read from the ruleset files: usa and bigcities score the longest path, usa1910 the
    Globetrotter alone, mega both, newyork neither (Tourist Attractions instead)."""
    assert header("usa")[3:] == ["routes", "tickets", "done/all", "+longest", "path"]
    assert header("usa1910")[3:] == ["routes", "tickets", "done/all", "+globe"]
    assert header("mega")[3:] == ["routes", "tickets", "done/all", "+longest", "+globe", "path"]
    assert header("newyork")[3:] == ["routes", "tickets", "done/all", "+attract"]
    assert header("cardgame")[3:] == ["tickets+", "tickets-", "done/all", "+cities"]
