"""Long soaks, opt in: ``TTR_SOAK=1``.

A test marked ``soak`` (thousands of random games, hundreds of kills) runs only where
``TTR_SOAK=1`` is set; otherwise tests/conftest.py skips it with a reason naming the variable.
Every soak has a smaller version in the default suite that checks the same property on fewer
games or moments, so ``make test`` (and CI, which runs it) loses no kind of check, only
repetitions. :func:`seeds` splits a test's seeds between the two: the soak adds the rest, so
``TTR_SOAK=1`` plays every seed once.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

ENV = "TTR_SOAK"
#: whether this run includes the soaks
ENABLED = os.environ.get(ENV, "") not in ("", "0")
REASON = f"a long soak: set {ENV}=1 to run it (a smaller version runs by default)"


def seeds(total: int, default: int, start: int = 0) -> list[Any]:
    """``range(start, start + total)`` as two ``pytest.param``: its first ``default`` seeds in
    the default suite, the rest marked ``soak``."""
    split = start + default
    return [
        pytest.param(range(start, split), id=f"seeds{start}-{split - 1}"),
        pytest.param(
            range(split, start + total),
            id=f"soak-seeds{split}-{start + total - 1}",
            marks=pytest.mark.soak,
        ),
    ]
