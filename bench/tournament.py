"""Tournament throughput: games per minute of a real `ttr tournament run`, next to what the
same games cost in the engine alone plus a bare gRPC exchange of the same messages.

    python bench/tournament.py [--rounds R] [--workers W] [--no-sandbox] [--json]

The bots are sandboxed as in every league night (no bot process plays a deal twice: a
process per rotation of a deal on each worker, leaderboard.worker.BotPool) unless
``--no-sandbox``; ``--reuse-bots`` keeps the sandbox, one process per bot for every rotation.

1. Tournament: four sample bots (random, a renamed copy of random, greedy, planner; the
   copy because a round robin needs four different bots for 4-player games) in a 4-player
   round robin of R rounds (4 rotations each) on W workers, exactly as ``ttr tournament run``
   plays it (validation games, bot processes kept alive, every game stored and recorded).
   Timed from the first game to the last (validation excluded); games per minute.
2. Engine: every game's record replayed in-process, timing only the rules engine
   (``legal_actions`` + ``apply`` for each decision).
3. Bare gRPC: the same games' calls (StartGame, each Act, EndGame), with request and response
   sizes rebuilt from the records, replayed one game after the other as the referee makes
   them (bench/wire.py, ``steps``) against four bare bytes-in/bytes-out servers.

Prints the tournament's wall time and the single-core sum engine + bare for the same games,
and that sum divided by W: what W perfect workers would need if the referee, the SDK and the
bots' own thinking cost nothing. Then where the rest goes: each bot's mean time per decision
as the referee measured it (the records' ``ms``: the call, the SDK and the bot's own thinking)
next to a bare call, and the machine's CPU time (/proc/stat: every process, jailed bots
included) over the timed games against the bare exchange's: on a machine whose cores the
games keep busy, the time ratio cannot fall much below that CPU ratio. The ratio is printed
next to :data:`BASELINE` (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from leaderboard.runner import Events, run
from leaderboard.store import GameResult, Store
from referee.games.board import apply as apply_action
from referee.games.board import legal_actions, load_ruleset, new_game
from referee.games.board import wire as referee_wire
from referee.games.board.events import Event, project
from referee.games.registry import BOARD
from referee.hosting.sandbox import NO_SANDBOX, SandboxConfig
from referee.match import act_request, action_from_json
from ttr.v1 import bot_service_pb2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: bench/ is on the path, the repository not
from bench import wire as bare_wire  # noqa: E402  (the bare servers and exchange)

PLAYERS = 4
#: tournament time / ideal before issue 25's process per rotation (commit 5f11adc, a restart
#: before every replayed deal; 2026-11-26, the 2-core machine of bench/README.md shared at a
#: load of 5 to 11, default rounds and workers), by mode: the median of 3 runs paired with the
#: new code's (bench/README.md, "A process per rotation")
BASELINE_COMMIT = "5f11adc"
BASELINE = {"fresh": 9.49, "reuse": 3.07, "unsandboxed": 3.09}


def renamed_copy(source: Path, target: Path, name: str) -> str:
    """A copy of the bot folder ``source`` at ``target`` under another ``name`` in its
    bot.toml (a tournament takes each name once); its path."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", ".ttr-build*"))
    toml = (target / "bot.toml").read_text()
    (target / "bot.toml").write_text(
        re.sub(r'(?m)^name = ".*"$', f'name = "{name}"', toml, count=1)
    )
    return str(target)


def _bots(folder: Path) -> list[str]:
    samples = ROOT / "sample_bots"
    return [
        str(samples / "random"),
        renamed_copy(samples / "random", folder / "random_b", "random-b"),
        str(samples / "greedy"),
        str(samples / "planner"),
    ]


def machine_cpu_s() -> float:
    """CPU seconds every process on the machine has used since boot, from /proc/stat (user,
    nice, system, irq, softirq; nan off Linux). A jailed bot is in its own PID namespace and
    not this process's child, so per-process accounting would miss it; the whole machine's
    does not (and counts anything else running: read it on a quiet machine)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return float("nan")
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


class _Enough(Exception):
    """Raised from the ``played`` event to end a tournament after the games timed."""


def timed_tournament(
    folder: Path,
    bot_dirs: list[str],
    *,
    players: int,
    rounds: int,
    workers: int,
    sandbox: SandboxConfig,
    stop_after: int | None = None,
    cpu: list[float] | None = None,
) -> tuple[list[GameResult], float]:
    """A real tournament (``leaderboard.runner.run``, as ``ttr tournament run`` plays it:
    builds, validation games, worker processes, every game stored and recorded) in the store
    ``folder/bench.db``, records in ``folder/records``. Returns its stored games and the
    seconds from the first game's start to the last game stored, or with ``stop_after`` to
    the ``stop_after``-th (the tournament is then cut short there: the games in flight are
    dropped). ``cpu``, when given, gets the machine's CPU seconds (:func:`machine_cpu_s`)
    over the same span, then this process's (the tournament's parent: it stores each game,
    rates and reports)."""
    started: list[float] = []
    finished: list[float] = []

    cpu_marks: list[float] = []

    own_marks: list[float] = []

    def playing(total: int, before: int) -> None:
        started.append(time.perf_counter())
        cpu_marks.append(machine_cpu_s())
        own_marks.append(time.process_time())

    def played(game: GameResult, top: object) -> None:
        finished.append(time.perf_counter())
        cpu_marks[1:] = [machine_cpu_s()]
        own_marks[1:] = [time.process_time()]
        if stop_after is not None and len(finished) >= stop_after:
            raise _Enough

    events = Events(playing=playing, played=played)
    with Store(folder / "bench.db") as store:
        try:
            outcome = run(
                store,
                bot_dirs=bot_dirs,
                players=players,
                rounds=rounds,
                workers=workers,
                records=str(folder / "records"),
                events=events,
                sandbox=sandbox,
            )
        except _Enough:
            pass
        else:
            if not outcome.complete or outcome.rejected:
                raise SystemExit(f"the bench tournament did not complete: {outcome}")
        games = store.games()
    if stop_after is not None and len(finished) < stop_after:
        raise SystemExit(f"the bench tournament played {len(finished)} of {stop_after} games")
    if cpu is not None:
        cpu += [cpu_marks[-1] - cpu_marks[0], own_marks[-1] - own_marks[0]]
    return games, finished[-1] - started[0]


def _replay(record: dict[str, Any]) -> tuple[float, list[bare_wire.Call]]:
    """Engine seconds for the game and its calls with their serialized sizes."""
    ruleset = load_ruleset(str(record["ruleset"]).split("@")[0])
    seats = int(record["num_seats"])
    state = new_game(ruleset, seats, int(record["seed"]))
    game_id = str(record["game_id"])
    start_bytes = sum(len(b) for b in referee_wire.static_bytes(ruleset))
    calls = [bare_wire.Call(s, "StartGame", start_bytes + 40, 0) for s in range(seats)]
    pending: list[list[Event]] = [[project(e, s) for e in state.events] for s in range(seats)]
    clock = bot_service_pb2.Clock(move_limit_ms=1000, bank_left_ms=60000)
    engine_s = 0.0
    for n, entry in enumerate(record["actions"]):
        t0 = time.perf_counter()
        legal = legal_actions(state)
        engine_s += time.perf_counter() - t0
        action = action_from_json(entry["action"], BOARD)
        seat = state.seat
        request_id = f"{game_id}/{n}/0"
        request = act_request(state, legal, pending[seat], game_id, request_id, clock)
        reply = bot_service_pb2.ActResponse(
            request_id=request_id, legal_action_index=legal.index(action)
        )
        calls.append(bare_wire.Call(seat, "Act", request.ByteSize(), reply.ByteSize()))
        pending[seat] = []
        t0 = time.perf_counter()
        state = apply_action(state, action)
        engine_s += time.perf_counter() - t0
        for s in range(seats):
            pending[s].extend(project(e, s) for e in state.events)
    calls += [bare_wire.Call(s, "EndGame", 600, 0) for s in range(seats)]
    return engine_s, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=8, help="round robins (default 8)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument(
        "--no-sandbox", action="store_true", help="run the bots unsandboxed (to compare)"
    )
    parser.add_argument(
        "--reuse-bots",
        action="store_true",
        help="sandboxed, one process per bot for every rotation (ttr tournament run's flag)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.rounds < 1 or args.workers < 1:
        parser.error("--rounds and --workers must be at least 1")

    with tempfile.TemporaryDirectory(prefix="ttr-bench-") as tmp:
        folder = Path(tmp)

        tournament_cpu: list[float] = []
        games, tournament_s = timed_tournament(
            folder,
            _bots(folder),
            players=PLAYERS,
            rounds=args.rounds,
            workers=args.workers,
            sandbox=NO_SANDBOX
            if args.no_sandbox
            else SandboxConfig(fresh_per_deal=not args.reuse_bots),
            cpu=tournament_cpu,
        )

        engine_s = 0.0
        replay: list[list[bare_wire.Step]] = []
        calls: list[bare_wire.Call] = []
        answer_ms: dict[str, list[float]] = {}  #: per bot: the referee-measured ms of each decision
        for game in games:
            assert game.record_path is not None
            record = json.loads(Path(game.record_path).read_text())
            names = [str(seat["name"]) for seat in record["seats"]]
            for entry in record["actions"]:
                answer_ms.setdefault(names[int(entry["seat"])], []).append(float(entry["ms"]))
            seconds, game_calls = _replay(record)
            engine_s += seconds
            calls += game_calls
            replay.append(bare_wire.steps(game_calls))
        with bare_wire._bare_servers(PLAYERS) as servers:
            addresses = [address for address, _ in servers]
            bare_wire._exchange(addresses, replay[:1])  # warm-up
            bare_runs = []
            for _ in range(2):
                cpu_before = machine_cpu_s()
                seconds = bare_wire._exchange(addresses, replay)
                bare_runs.append((seconds, machine_cpu_s() - cpu_before))
            bare_s, bare_cpu_s = min(bare_runs)

    n = len(games)
    decisions = sum(g.decisions for g in games)
    ideal_s = (engine_s + bare_s) / args.workers
    figures = {
        "python": platform.python_version(),
        "grpc": grpc.__version__,
        "cores": os.cpu_count(),
        "players": PLAYERS,
        "workers": args.workers,
        "sandbox": not args.no_sandbox,
        "fresh_per_deal": not (args.no_sandbox or args.reuse_bots),
        "games": n,
        "decisions_per_game": decisions / n,
        "tournament_s": tournament_s,
        "games_per_min": n / tournament_s * 60,
        "engine_s": engine_s,
        "bare_grpc_s": bare_s,
        "bare_calls": len(calls),
        "engine_plus_bare_s": engine_s + bare_s,
        "ideal_games_per_min": n / ideal_s * 60,
        "ratio_to_ideal": tournament_s / ideal_s,
        "baseline_ratio": BASELINE.get(
            "unsandboxed" if args.no_sandbox else "reuse" if args.reuse_bots else "fresh"
        ),
        "baseline_commit": BASELINE_COMMIT,
        "bare_call_ms": bare_s / len(calls) * 1000.0,
        "tournament_cpu_s": tournament_cpu[0],
        "bare_cpu_s": bare_cpu_s,
        "cpu_us_per_decision": tournament_cpu[0] / decisions * 1e6,
        "bare_cpu_us_per_call": bare_cpu_s / len(calls) * 1e6,
        "cpu_ratio": tournament_cpu[0] / bare_cpu_s,
        "parent_cpu_s": tournament_cpu[1],
        "decision_ms_by_bot": {
            name: sum(ms) / len(ms) for name, ms in sorted(answer_ms.items()) if ms
        },
        "decision_s_by_bot": {name: sum(ms) / 1000.0 for name, ms in sorted(answer_ms.items())},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    if not figures["sandbox"]:
        mode = "NO sandbox"
    elif figures["fresh_per_deal"]:
        mode = "sandboxed, a bot process per rotation of a deal"
    else:
        mode = "sandboxed, bots reused across deals"
    print(
        f"python {figures['python']}, grpcio {figures['grpc']}, {os.cpu_count()} cores; "
        f"{n} games of 4 players (random, random-b, greedy, planner) on {args.workers} workers, "
        f"{mode}"
    )
    print(
        f"tournament: {tournament_s:6.2f} s, {figures['games_per_min']:6.1f} games/min "
        f"({decisions / n:.0f} decisions/game)"
    )
    print(
        f"same games: engine {engine_s:.2f} s + bare gRPC {bare_s:.2f} s ({len(calls)} calls) "
        f"= {engine_s + bare_s:.2f} s on one core; / {args.workers} workers = {ideal_s:.2f} s, "
        f"{figures['ideal_games_per_min']:.1f} games/min"
    )
    by_bot = ", ".join(
        f"{name} {figures['decision_ms_by_bot'][name]:.2f} ms ({seconds:.1f} s in all)"
        for name, seconds in figures["decision_s_by_bot"].items()
    )
    print(
        f"time per decision as the referee measured it (call + SDK + thinking): {by_bot}; "
        f"a bare call {figures['bare_call_ms']:.2f} ms"
    )
    print(
        f"machine CPU: the timed games {figures['tournament_cpu_s']:.1f} s "
        f"({figures['cpu_us_per_decision']:.0f} us per decision, everything in; the parent "
        f"{figures['parent_cpu_s']:.1f} s), the bare exchange "
        f"{figures['bare_cpu_s']:.1f} s ({figures['bare_cpu_us_per_call']:.0f} us per call) on "
        f"{os.cpu_count()} cores: the CPU ratio {figures['cpu_ratio']:.2f}"
    )
    baseline = figures["baseline_ratio"]
    print(
        f"tournament time / that ideal: {figures['ratio_to_ideal']:.2f}"
        + (f" (baseline {baseline:.2f} at {BASELINE_COMMIT})" if baseline is not None else "")
    )


if __name__ == "__main__":
    main()
