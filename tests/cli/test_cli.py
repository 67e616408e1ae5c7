"""The ``ttr`` command line: ``selfplay`` output, user errors, determinism, the entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from ttr_arena.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["selfplay", *args, "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    data = json.loads(lines[0])
    assert isinstance(data, dict)
    return data


def test_selfplay_json_is_one_consistent_object(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "--games", "3", "--players", "2", "--seed", "5")
    for key in ("games", "games_per_s", "turns_per_game", "mean_score"):
        assert key in data
    assert data["games"] == 3
    assert data["players"] == 2
    assert data["variant"] == "usa@1"
    assert data["turns_per_game"] > 0
    assert data["decisions_per_game"] >= data["turns_per_game"]
    assert data["games_per_s"] > 0
    assert data["min_score"] <= data["mean_score"] <= data["max_score"]
    assert data["mean_score"] <= data["mean_winning_score"] <= data["max_score"]
    assert sum(data["end_reasons"].values()) == 3


def test_selfplay_json_same_seed_same_scores(capsys: pytest.CaptureFixture[str]) -> None:
    timing = {"seconds", "games_per_s"}
    first = run_json(capsys, "--games", "3", "--players", "3", "--seed", "11")
    second = run_json(capsys, "--games", "3", "--players", "3", "--seed", "11")
    assert {k: v for k, v in first.items() if k not in timing} == {
        k: v for k, v in second.items() if k not in timing
    }


def test_selfplay_different_seeds_differ(capsys: pytest.CaptureFixture[str]) -> None:
    # Guards the determinism test: the seed does reach the games.
    a = run_json(capsys, "--games", "3", "--players", "3", "--seed", "11")
    b = run_json(capsys, "--games", "3", "--players", "3", "--seed", "12")
    keys = ("mean_score", "stdev_score", "turns_per_game", "decisions_per_game")
    assert [a[k] for k in keys] != [b[k] for k in keys]


def score_table(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert main(["selfplay", "--games", "1", *args]) == 0
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("rank"))
    assert set(lines[header + 1]) == {"-"}
    rows = []
    for line in lines[header + 2 :]:
        if not line.strip():
            break
        rows.append(line)
    return rows


def test_selfplay_text_prints_a_score_table_with_a_row_per_player(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = score_table(capsys, "--players", "4", "--seed", "3")
    assert len(rows) == 4
    seats = sorted(row.split()[2] for row in rows)  # "rank seat N total ..."
    assert seats == ["0", "1", "2", "3"]
    ranks = [int(row.split()[0]) for row in rows]
    assert ranks == sorted(ranks) and ranks[0] == 1


def test_selfplay_text_same_seed_same_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert score_table(capsys, "--players", "2", "--seed", "9") == score_table(
        capsys, "--players", "2", "--seed", "9"
    )


@pytest.mark.parametrize(
    ("args", "mentions"),
    [
        (["--variant", "nope"], "nope"),
        (["--players", "7"], "7"),
        (["--players", "1"], "1"),
        (["--games", "0"], "--games"),
        (["--games", "many"], "many"),
    ],
)
def test_user_errors_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], mentions: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["selfplay", "--games", "1", *args])
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert "Traceback" not in err + out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ttr: error: "), err
    assert mentions in lines[0]


def test_unknown_variant_error_lists_available(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["selfplay", "--variant", "nope"])
    _, err = capsys.readouterr()
    assert "usa" in err


def run_cli(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_module_entry_point_in_a_subprocess() -> None:
    done = run_cli([sys.executable, "-m", "ttr_arena.cli", "selfplay", "--games", "2", "--json"])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 2


def test_ttr_console_script() -> None:
    # pyproject.toml [project.scripts]: ttr = "ttr_arena.cli:main", installed by `make`.
    scripts = metadata.entry_points(group="console_scripts", name="ttr")
    assert [ep.value for ep in scripts] == ["ttr_arena.cli:main"]
    ttr = Path(sys.executable).parent / "ttr"
    assert ttr.is_file(), f"{ttr} missing: is the package installed (pip install -e .)?"
    done = run_cli([str(ttr), "selfplay", "--games", "2", "--json"])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["games"] == 2


def test_ttr_console_script_user_error() -> None:
    done = run_cli([sys.executable, "-m", "ttr_arena.cli", "selfplay", "--players", "9"])
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("ttr: error: ")
    assert "Traceback" not in done.stderr
