"""Seeds and game ids against bots that look for them (issue 9, docs/security.md).

A bot that learns a game's seed knows every hand and the deck order. So: seeds come from the
OS's randomness unless the organiser gives one; no seed reaches a bot (its command line, its
environment, its game ids, whatever it can read of its own process tree); the ids bots are
sent are random and say nothing, and a validation game looks on the wire like a scheduled
one; a tournament's seeds stay in its store until it is finished, and are shown then.
"""

from __future__ import annotations

import json
import random
import re
import secrets
import signal
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from leaderboard.schedule import SEED_BITS, build, game_seed, secret_seed
from leaderboard.store import GameResult
from leaderboard.worker import (
    BotPool,
    Entrant,
    Play,
    Settings,
    Validate,
    Validation,
    play_game,
    validate_bot,
)
from referee.games.board import load_ruleset
from referee.hosting.sandbox import unavailable_reason
from referee.match import SeatBot
from referee.replay import verify
from tests.leaderboard.test_tournament import GREEDY, RANDOM, _start_and_wait
from tests.referee.test_match import TestBot, serve
from ttr.v1 import bot_service_pb2
from ttr_arena.cli import main as cli_main

WIRE_ID = re.compile(r"[0-9a-f]{32}")  #: what every game id sent to a bot looks like

#: A bot that prints, at each game's start, all it can learn without cheating at the rules:
#: its argv and environment, and the command line and environment of every ancestor it can
#: read in /proc (with the sandbox: only those of its own PID namespace).
SPY = """
import json, os, sys
from sdk import Bot, run


def lineage():
    found, pid = [], os.getpid()
    while pid > 0:
        entry = {"pid": pid}
        for name in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as f:
                    entry[name] = f.read().decode("utf-8", "replace")
            except OSError:
                entry[name] = None
        found.append(entry)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return found


class Spy(Bot):
    def on_start(self, game):
        seen = {"game_id": game.game_id, "seat": game.seat, "argv": sys.argv,
                "environ": dict(os.environ), "cwd": os.getcwd(), "lineage": lineage()}
        print("SPY " + json.dumps(seen), flush=True)

    def choose(self, view, legal):
        return 0


if __name__ == "__main__":
    run(Spy())
"""


def spy_bot(folder: Path, name: str = "spy") -> str:
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "1"\ncommand = ["{{python}}", "bot.py"]\n'
    )
    (folder / "bot.py").write_text(SPY)
    return str(folder)


def spied(folder: Path) -> list[dict[str, Any]]:
    """What spy bots printed, from every log file under ``folder``."""
    return [
        json.loads(line[4:])
        for log in sorted(folder.rglob("*.log"))
        for line in log.read_text(errors="replace").splitlines()
        if line.startswith("SPY ")
    ]


def spellings(seed: int) -> list[str]:
    """The ways a seed could be written down: decimal and hex."""
    return [str(seed), f"{seed:x}", f"{seed:X}"]


def assert_no_seed(seen: object, seeds: set[int]) -> None:
    text = json.dumps(seen)
    found = [s for seed in seeds for s in spellings(seed) if s in text]
    assert not found, f"a bot could read seed(s) {found}"


def sandboxes() -> list[str]:
    return ["sandbox", "no-sandbox"] if unavailable_reason() is None else ["no-sandbox"]


# ---------------------------------------------------------------------------------------------
# drawing seeds


def test_drawn_seeds_are_63_bit_and_do_not_repeat() -> None:
    drawn = [secret_seed() for _ in range(1000)]
    assert len(set(drawn)) == len(drawn)
    assert all(2**32 <= s < 2**SEED_BITS for s in drawn)  # all but 1 in 2^31 are past 32 bits
    # Derived seeds keep 63 bits too (a 32-bit deal could be found by search), and fit
    # SQLite's signed 64-bit INTEGER.
    key = secrets.token_bytes(32)
    derived = [game_seed(1, r, c, key=key) for r in range(1, 5) for c in range(10)]
    assert all(0 <= s < 2**SEED_BITS for s in derived) and max(derived) >= 2**62


# ---------------------------------------------------------------------------------------------
# ttr play


@pytest.mark.parametrize("mode", sandboxes())
def test_play_draws_a_seed_no_bot_can_read_and_names_the_record_without_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: str,
) -> None:
    monkeypatch.chdir(tmp_path)  # the default record goes to ./records
    spy = spy_bot(tmp_path / "spy")
    args = ["play", "--variant", "newyork", "--json", "--logs", str(tmp_path / "logs")]
    args += ["--no-sandbox"] if mode == "no-sandbox" else []
    assert cli_main([*args, spy, RANDOM]) == 0
    played = json.loads(capsys.readouterr().out)
    seed = played["seed"]
    assert 2**32 <= seed < 2**SEED_BITS  # from the OS, not the clock
    record = Path(played["record"])
    assert record.parent == Path("records") and record.exists()
    assert not [s for s in spellings(seed) if s in record.name]
    assert verify(record) is None  # the record keeps the seed: it replays
    assert json.loads(record.read_text())["seed"] == seed
    [seen] = spied(tmp_path / "logs")
    assert WIRE_ID.fullmatch(str(seen["game_id"]))
    assert_no_seed(seen, {seed})
    if mode == "sandbox":  # its /proc is its own PID namespace's: the jail's init is the top
        assert seen["lineage"][-1]["pid"] == 1 and "bwrap" in seen["lineage"][-1]["cmdline"]


# ---------------------------------------------------------------------------------------------
# tournaments: what the wire carries


class _SpyPool(BotPool):
    """Seats in-process recording bots in place of bot processes, by (folder, copy)."""

    def __init__(self, seats: dict[tuple[str, int], SeatBot]) -> None:
        self.by_key = seats

    def seat(
        self,
        path: str,
        name: str,
        version: str,
        copy: int = 0,
        deal: int | None = None,
    ) -> SeatBot:
        return self.by_key[(path, copy)]

    def prestart(self, seats: Sequence[tuple[str, int]], deal: int | None = None) -> None:
        pass

    def death(self, path: str, copy: int = 0) -> str:
        return ""

    def log_to(self, path: str, copy: int, log: Path | None) -> None:
        pass

    def take_lines(self, path: str, copy: int = 0) -> list[str]:
        return []

    def channel(self, path: str, copy: int = 0) -> None:
        return None  # each game opens its own to the in-process bots

    def trim(self, seated: Sequence[tuple[str, int]]) -> None:
        pass

    def close(self) -> None:
        pass


def random_legal(seed: int) -> TestBot:
    rng = random.Random(seed)
    return TestBot(
        lambda request, call: bot_service_pb2.ActResponse(
            request_id=request.request_id,
            legal_action_index=rng.randrange(len(request.legal_actions)),
        )
    )


def _static(start: bot_service_pb2.StartGameRequest) -> bytes:
    """A StartGame without its id, seat and bot seed (a hash of the game's seed and the seat,
    different in every game): what should be the same in every game."""
    copy = bot_service_pb2.StartGameRequest()
    copy.CopyFrom(start)
    copy.ClearField("game_id")
    copy.ClearField("seat")
    copy.ClearField("bot_seed")
    return copy.SerializeToString(deterministic=True)


def test_validation_and_scheduled_games_look_alike_on_the_wire(tmp_path: Path) -> None:
    players = 3
    settings = Settings("newyork", players, 1000, 10_000, 5.0, str(tmp_path / "records"))
    ruleset = load_ruleset("newyork")
    hero, others = random_legal(1), [random_legal(2), random_legal(3)]
    entrants = [Entrant(i + 1, f"/bots/{n}", n, "1", n) for i, n in enumerate("abc")]
    with serve(hero) as h, serve(others[0]) as o1, serve(others[1]) as o2:
        # Validation: the entrant and two copies of the validation bot.
        pool = _SpyPool(
            {("/bots/a", 0): h, (settings.validation_bot, 1): o1, (settings.validation_bot, 2): o2}
        )
        validations = 12
        for _ in range(validations):
            answer = validate_bot(
                Validate("/bots/a", entrants[0], secret_seed()), settings, ruleset, pool
            )
            assert isinstance(answer, Validation) and answer.key == "/bots/a"
            assert (answer.entrant, answer.ok, answer.reason) == (entrants[0], True, "")
        # Scheduled games: the three entrants, every rotation.
        pool = _SpyPool({("/bots/a", 0): h, ("/bots/b", 0): o1, ("/bots/c", 0): o2})
        base, key = secret_seed(), secrets.token_bytes(32)
        results: list[GameResult] = []
        for game in build(3, players, 1, base, tournament_id=7, key=key):
            task = Play(game.game_id, 7, game, tuple(entrants[i] for i in game.seats))
            results.append(play_game(task, settings, ruleset, pool))

    starts = hero.started
    assert len(starts) == validations + players
    ids = [s.game_id for s in starts]
    assert all(WIRE_ID.fullmatch(i) for i in ids) and len(set(ids)) == len(ids)
    # Every game goes out the same but for its id and the seat (clocks, map, rules, seats).
    assert len({_static(s) for s in starts}) == 1
    # The entrant's validation seat is drawn, as a rotation would give: not always seat 0.
    assert len({s.seat for s in starts[:validations]}) > 1  # fails 3 times in 3^12
    # Every request of a game carries its id; request ids start with it, and nothing else.
    for request in hero.requests:
        assert request.game_id in ids
        assert request.request_id.split("/")[0] == request.game_id
    first: dict[str, bot_service_pb2.ActRequest] = {}
    for request in hero.requests:
        first.setdefault(request.game_id, request)
    assert len(first) == len(ids)
    # The first decision of every game gets the same time (less what the referee spent).
    moves = [r.clock.move_limit_ms for r in first.values()]
    banks = [r.clock.bank_left_ms for r in first.values()]
    assert max(moves) - min(moves) < 50 and max(banks) - min(banks) < 50

    # The store keeps the slot as its key; the record is named after it and holds the wire
    # id and the seed, for the organiser (records are out of the bots' reach).
    for result, start in zip(results, starts[validations:], strict=True):
        assert re.fullmatch(r"t7-r1-c0-s\d", result.game_id) and result.game_id not in ids
        assert result.seed == game_seed(base, 1, 0, key=key)
        assert result.record_path is not None
        kept = json.loads(Path(result.record_path).read_text())
        assert kept["game_id"] == start.game_id and kept["seed"] == result.seed
        assert Path(result.record_path).name == f"{result.game_id}.json"
    assert_no_seed([str(m) for m in [*hero.started, *first.values()]], {base, results[0].seed})


# ---------------------------------------------------------------------------------------------
# tournaments: what the organiser's commands show


def test_a_tournament_keeps_its_seeds_secret_until_it_is_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "league.db"
    spy = spy_bot(tmp_path / "spy")
    args = ["tournament", "run", "--db", str(db), "--players", "2", "--workers", "2"]
    settings = ["--variant", "newyork", "--rounds", "3", RANDOM, GREEDY, spy]
    proc, _ = _start_and_wait([*args, *settings], db, 1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130

    with sqlite3.connect(db) as conn:
        [(tid, base, finished)] = conn.execute(
            "SELECT tournament_id, base_seed, finished_at FROM tournaments"
        ).fetchall()
        [(key,)] = conn.execute("SELECT key FROM seed_key").fetchall()
    assert finished is None and 2**32 <= base < 2**SEED_BITS
    seeds = {base} | {g.seed for g in build(3, 2, 3, base, tid, key=key)}
    assert_no_seed([out, err], seeds)
    for json_flag in ([], ["--json"]):
        assert cli_main(["leaderboard", "show", "--db", str(db), *json_flag]) == 0
        assert_no_seed(capsys.readouterr().out, seeds)

    assert cli_main([*args[:4], "--resume", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["complete"] and summary["base_seed"] == base  # finished: now it may be shown

    # What the spy saw in every scheduled game: random ids, no seed.
    seen = spied(tmp_path / "league-records")
    # In 2 of the 3 combinations, both rotations, 3 rounds; more if a game was cut short.
    assert len(seen) >= 2 * 2 * 3
    ids = [str(s["game_id"]) for s in seen]
    assert all(WIRE_ID.fullmatch(i) for i in ids) and len(set(ids)) == len(ids)
    assert_no_seed(seen, seeds)
