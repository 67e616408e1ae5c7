"""A game record in a Jupyter notebook: ``Replay(record)`` as a cell's last value shows the
replay page of ``ttr replay view`` inline.

::

    from sdk.local import RandomBot, play_game
    from ttr_arena.notebook import Replay

    Replay(play_game("usa", [RandomBot(), RandomBot()], seed=1))

It lives here, above both the SDK (which makes the record, ``sdk.local``) and the pages (which
draw it, ``ttr_arena.pages.viewer``): the SDK may not import the platform, and this module
needs both. The page goes in an ``<iframe srcdoc>`` so that its script and style stay its own
and the notebook's stay the notebook's.
"""

from __future__ import annotations

import html
import json
import tempfile
from pathlib import Path
from typing import Any

from sdk.local import Record
from ttr_arena.pages.viewer import render_html

__all__ = ["Replay"]


class Replay:
    """A record (a :class:`sdk.local.Record`, its dict, or a record file's path) shown as the
    HTML replay; ``seat`` shows only what that seat saw (as ``ttr replay view --seat``)."""

    def __init__(
        self,
        record: Record | dict[str, Any] | str | Path,
        seat: int | None = None,
        height: int = 760,
    ) -> None:
        if isinstance(record, Record):
            record = record.data
        self.record = record
        self.seat = seat
        self.height = height

    def page(self) -> str:
        """The whole HTML document, as ``ttr replay view`` writes it."""
        if not isinstance(self.record, dict):
            return render_html(self.record, self.seat)
        with tempfile.TemporaryDirectory(prefix="ttr-replay-") as folder:
            path = Path(folder) / "record.json"
            path.write_text(json.dumps(self.record), encoding="utf-8")
            return render_html(path, self.seat)

    def save(self, path: str | Path) -> Path:
        """Write the page to ``path`` (to open in a browser)."""
        path = Path(path)
        path.write_text(self.page(), encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{html.escape(self.page(), quote=True)}" '
            f'style="width: 100%; height: {self.height}px; border: 0"></iframe>'
        )
