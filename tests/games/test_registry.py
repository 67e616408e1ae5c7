"""The registry owns the variant and version check, for every caller (not only the CLI):
``load("usa@7")`` is refused rather than quietly played as ``usa@1``, with the message the CLI
has always given."""

from __future__ import annotations

import pytest

from referee.games.common.tables import RulesetError
from referee.games.registry import FAMILIES, load, variants


@pytest.mark.parametrize("variant", variants())
def test_a_variant_loads_by_name_and_by_its_own_version(variant: str) -> None:
    ruleset = load(variant)
    assert load(ruleset.ident) is ruleset or load(ruleset.ident).ident == ruleset.ident


@pytest.mark.parametrize("spec", ["usa@7", "cardgame@2", "usa@", "newyork@01"])
def test_a_wrong_version_is_refused_naming_the_one_this_referee_plays(spec: str) -> None:
    name = spec.partition("@")[0]
    with pytest.raises(RulesetError) as e:
        load(spec)
    assert str(e.value) == f"unknown version {spec!r}: this referee plays {load(name).ident}"


def test_an_unknown_variant_is_refused_listing_the_variants() -> None:
    with pytest.raises(RulesetError) as e:
        load("europe@1")
    assert str(e.value) == f"unknown variant 'europe' (available: {', '.join(variants())})"


def test_every_variant_belongs_to_exactly_one_family() -> None:
    for variant in variants():
        assert sum(variant in f.variants() for f in FAMILIES) == 1
