"""The import contract (pyproject.toml, ``[tool.importlinter]``) holds: imports only point down,
CLI > pages > leaderboard > hosting > (match, replay, selfplay | sdk) > games, and inside the
games the shared kernel sits below both families.

``lint-imports`` is the real tool (import-linter), run here as in ``make lint``; and, so that a
contract that silently stopped checking would fail too, the same contract is first shown to
catch an arrow that climbs back up, planted in a throwaway copy of the package names.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_import_contract_is_kept() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def _contract() -> dict[str, object]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract: dict[str, object] = data["tool"]["importlinter"]
    return contract


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def test_the_contract_catches_an_import_that_climbs_back_up(tmp_path: Path) -> None:
    """Every module the layers name, as empty packages, plus one import from the pure games
    up to the CLI: the same contract must report it broken."""
    contract = _contract()
    roots = list(contract["root_packages"])  # type: ignore[call-overload]
    layered = contract["contracts"][0]  # type: ignore[index]
    assert layered["type"] == "layers"
    for layer in layered["layers"]:
        for name in layer.replace("|", ":").split(":"):
            package = tmp_path.joinpath(*name.strip().split("."))
            package.mkdir(parents=True, exist_ok=True)
            for parent in [package, *package.relative_to(tmp_path).parents]:
                init = tmp_path / parent / "__init__.py"
                if parent != Path(".") and not init.exists():
                    init.write_text("")
    (tmp_path / "referee" / "games" / "planted.py").write_text("import ttr_arena.cli\n")
    layers = _toml_list(layered["layers"])
    (tmp_path / "pyproject.toml").write_text(
        "[tool.importlinter]\n"
        f"root_packages = {_toml_list(roots)}\n"
        "[[tool.importlinter.contracts]]\n"
        'name = "layers"\n'
        'type = "layers"\n'
        f"layers = {layers}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = _lint(tmp_path, env)
    assert done.returncode != 0, done.stdout
    assert "referee.games.planted -> ttr_arena.cli" in done.stdout, done.stdout
