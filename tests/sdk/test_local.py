"""sdk.local: games in-process (play_game, evaluate) and ttr_arena.notebook.Replay."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from leaderboard.ratings import wilson_interval as leaderboard_wilson
from referee.games.registry import load
from referee.match import Match, SeatBot
from referee.replay import verify
from sdk import Bot, start_server
from sdk.local import (
    Evaluation,
    PlannerBot,
    RandomBot,
    Record,
    evaluate,
    play_game,
    wilson_interval,
)
from ttr_arena.notebook import Replay


class Recorder(RandomBot):
    """The random sample bot, keeping everything the SDK hands it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def on_start(self, game: Any) -> None:
        super().on_start(game)
        self.seen.append(("start", game.seat, game.num_seats, game.bot_seed, game.ruleset))

    def choose(self, view: Any, legal: Sequence[Any]) -> Any:
        g = self.game
        self.seen.append(("act", view, tuple(legal), tuple(g.new_events), g.rejection))
        return super().choose(view, legal)

    def on_end(self, outcome: Any) -> None:
        self.seen.append(("end", outcome, tuple(self.game.new_events)))


class Crasher(Bot):
    def choose(self, view: Any, legal: Sequence[Any]) -> Any:
        raise RuntimeError("boom")


class Stale(Bot):
    """Answers with an action of its previous decision that is not legal now (rejected by the
    engine, asked again), and with a legal one once told why."""

    def __init__(self) -> None:
        self.before: Sequence[Any] = ()
        self.rejections: list[tuple[str, str]] = []

    def choose(self, view: Any, legal: Sequence[Any]) -> Any:
        if self.game.rejection is not None:
            self.rejections.append(self.game.rejection)
            return 0
        stale = [a for a in self.before if a not in legal]
        self.before = legal
        return stale[0] if stale else 0


@pytest.mark.parametrize("variant", ["usa", "cardgame"])
def test_a_game_in_process_is_a_record_the_referee_verifies(variant: str, tmp_path: Path) -> None:
    record = play_game(variant, [RandomBot(), PlannerBot(), RandomBot()], seed=5)
    path = record.save(tmp_path / "game.json")
    assert verify(path) is None
    assert Record.load(path).data == record.data
    assert record.data["seats"][1]["name"] == "PlannerBot"
    assert not record.faults
    assert sorted(record.ranks)[0] == 1


@pytest.mark.parametrize("variant", ["usa", "cardgame"])
def test_the_bot_sees_what_it_sees_over_grpc(variant: str) -> None:
    """The same seed and game id, once in-process and once through a referee's Match to gRPC
    servers in this process: every bot is handed the same start, views, legal actions and
    events, and the games end alike."""
    local = [Recorder(), Recorder()]
    record = play_game(variant, local, seed=11, game_id="same-game")
    remote = [Recorder(), Recorder()]
    servers = [start_server(b) for b in remote]
    try:
        result = Match(
            load(variant),
            [SeatBot(f"r{i}", "1", s.address) for i, s in enumerate(servers)],
            seed=11,
            game_id="same-game",
        ).run()
    finally:
        for s in servers:
            s.stop(None)
    for mine, theirs in zip(local, remote, strict=True):
        assert mine.seen == theirs.seen
        assert len(mine.seen) > 10
    assert [s.total for s in result.outcome.seats] == record.scores


def test_a_crash_and_a_rejected_answer_are_the_referees_faults(tmp_path: Path) -> None:
    stale = Stale()
    record = play_game("usa", [Crasher(), stale], seed=2)
    faults = record.faults
    assert {f["kind"] for f in faults if f["seat"] == 0} == {"crash"}
    rejected = [f for f in faults if f["seat"] == 1]
    assert rejected and {f["kind"] for f in rejected} == {"rejected"}
    assert stale.rejections == [(f["rule"], f["message"]) for f in rejected]
    defaults = {a["default"] for a in record.data["actions"]}
    assert defaults == {None, "crash"}  # the stale bot's second answer is always accepted
    assert verify(record.save(tmp_path / "r.json")) is None


def test_wilson_interval_is_the_leaderboards() -> None:
    for wins, games in [(0, 0), (0, 5), (5, 5), (3, 10), (37, 100), (999, 1000)]:
        assert wilson_interval(wins, games) == pytest.approx(leaderboard_wilson(wins, games))


def test_evaluate_on_two_processes() -> None:
    fair = evaluate(RandomBot, [RandomBot], variant="usa", games=12, workers=2, seed=100)
    assert isinstance(fair, Evaluation)
    assert fair.games == 12 and 0 <= fair.wins <= 12
    lo, hi = fair.interval
    assert lo <= fair.win_rate <= hi and lo < 0.5 < hi  # random against random: fair
    strong = evaluate(PlannerBot, [RandomBot], variant="usa", games=8, workers=2, seed=100)
    assert strong.wins >= 7 and strong.mean_score > strong.mean_opponent_score
    assert strong.faults == 0
    # the same games in one process: the same numbers
    again = evaluate(PlannerBot, [RandomBot], variant="usa", games=8, workers=1, seed=100)
    assert (again.wins, again.mean_score) == (strong.wins, strong.mean_score)


def test_the_notebook_replay_is_the_replay_page(tmp_path: Path) -> None:
    record = play_game("usa", [RandomBot(), RandomBot()], seed=random.randrange(1000))
    shown = Replay(record)._repr_html_()
    assert shown.startswith("<iframe srcdoc=") and "&lt;!DOCTYPE html&gt;" in shown
    page = Replay(record).page()
    assert "RandomBot" in page and "viewer" in page
    path = record.save(tmp_path / "g.json")
    assert Replay(path).page() == page
    assert Replay(record.data, seat=1).page() != page


DOC = (Path(__file__).resolve().parents[2] / "docs" / "bot-api.md").read_text(encoding="utf-8")


def _example(name: str) -> str:
    found = re.search(rf"<!-- example: {re.escape(name)} -->\n```python\n(.*?)\n```", DOC, re.S)
    assert found, f"docs/bot-api.md has no example {name}"
    return found.group(1) + "\n"


def test_the_docs_in_process_example_runs(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(_example("in-process"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "/20 wins" in done.stdout
    assert verify(tmp_path / "game.json") is None


def test_the_docs_notebook_example_runs() -> None:
    code = _example("notebook")
    *body, last = code.strip().splitlines()
    namespace: dict[str, Any] = {}
    exec("\n".join(body), namespace)
    shown = eval(last.split("#")[0], namespace)
    assert "&lt;!DOCTYPE html&gt;" in shown._repr_html_()
