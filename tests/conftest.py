"""Test options. ``--regen-golden`` rewrites the golden files under tests/data/ from the
current engine instead of comparing against them; review the diff before committing it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from referee.hosting.seeds import KEY_FILE_ENV
from tests import soak


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-golden",
        action="store_true",
        default=False,
        help="rewrite the golden files in tests/data/ instead of comparing against them",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``soak`` run only with ``TTR_SOAK=1`` (tests/soak.py)."""
    if soak.ENABLED:
        return
    skip = pytest.mark.skip(reason=soak.REASON)
    for item in items:
        if item.get_closest_marker("soak") is not None:
            item.add_marker(skip)


@pytest.fixture
def regen_golden(request: pytest.FixtureRequest) -> bool:
    """True when the run was asked to rewrite golden files."""
    return bool(request.config.getoption("--regen-golden"))


@pytest.fixture(autouse=True, scope="session")
def _seed_key_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A sandboxed ``ttr play --seed N`` keys N with the user's seed key file: the tests use
    one of their own (``ttr`` subprocesses inherit the variable), never the user's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_FILE_ENV, str(tmp_path_factory.mktemp("seed-key") / "seed.key"))
        yield


# The real browser of the page tests (tests/browser.py): a fixture any test may ask for.
from tests.browser import browser, page  # noqa: E402, F401
