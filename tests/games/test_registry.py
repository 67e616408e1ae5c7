"""The registry owns the variant and version check, for every caller (not only the CLI):
``load("usa@7")`` is refused rather than quietly played as ``usa@1``, with the message the CLI
has always given."""

from __future__ import annotations

import pytest

from referee.games.common.tables import RulesetError
from referee.games.registry import load, variants


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
