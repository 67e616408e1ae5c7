"""A record's file (referee.games.record.record_text): the same JSON value as the record,
keys in order, and each decision on a line of its own (what `grep` and `diff` of two records
want)."""

from __future__ import annotations

import json
from pathlib import Path

from referee.games.board import load_ruleset
from referee.games.record import record_text
from referee.match import Match, SeatBot
from sdk import StrategyBot
from sdk.serve import start_server
from sdk.strategies import RandomStrategy


def test_text_reads_back_as_the_same_value_whatever_it_holds() -> None:
    record = {
        "b": [{"x": 1, "a": [1, 2]}, {"y": 'é\n"q"'}],
        "a": {"z": 1, "b": 2},
        "empty": [],
        "none": None,
        "number": 1.5,
        "nested": [[1, 2], [3]],
    }
    text = record_text(record)
    assert json.loads(text) == record
    assert text.endswith("}\n")
    keys = [line.split('"')[1] for line in text.splitlines() if line.startswith(' "')]
    assert keys == sorted(record)


def test_a_played_games_record_has_a_line_per_decision(tmp_path: Path) -> None:
    running = [start_server(StrategyBot(RandomStrategy)) for _ in range(2)]
    try:
        seats = [SeatBot("random", "1", r.address) for r in running]
        path = tmp_path / "game.json"
        result = Match(load_ruleset("usa"), seats, 5, record_path=path).run()
    finally:
        for r in running:
            r.stop(0)
    text = path.read_text()
    record = json.loads(text)
    assert len(record["actions"]) == result.decisions > 0
    decision_lines = [line for line in text.splitlines() if line.startswith('  {"action"')]
    assert [json.loads(line.rstrip(","))["decision"] for line in decision_lines] == list(
        range(result.decisions)
    )
    assert text == record_text(record)  # what the referee writes is what record_text makes
