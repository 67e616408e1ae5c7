"""Tournaments end to end: real worker processes, real bot processes, a real SQLite store.

Covers validation (bots that never start or answer badly are left out, the rest play on), a
bot that passes validation and then crashes in every game (it finishes last with its faults
shown), and a run killed with SIGKILL in the middle and finished with ``--resume`` (no game
lost, none counted twice, no process left behind).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from leaderboard.runner import TournamentError, run
from leaderboard.schedule import games_in
from leaderboard.store import Store
from leaderboard.table import leaderboard
from referee.hosting.folder import content_hash
from referee.replay import verify
from ttr_arena.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
RANDOM = str(ROOT / "sample_bots" / "random")
GREEDY = str(ROOT / "sample_bots" / "greedy")
PLANNER = str(ROOT / "sample_bots" / "planner")
TTR = [sys.executable, "-m", "ttr_arena.cli"]


def sdk_bot(folder: Path, name: str, body: str) -> str:
    """A bot folder whose bot.py subclasses sdk.Bot with ``body`` as its class body."""
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\nversion = "0.1"\ncommand = ["{{python}}", "bot.py"]\n'
    )
    script = "import os\nfrom sdk import Bot, run\n\nclass B(Bot):\n"
    script += textwrap.indent(textwrap.dedent(body), "    ")
    script += "\nif __name__ == '__main__':\n    run(B())\n"
    (folder / "bot.py").write_text(script)
    return str(folder)


CRASH_AFTER_ITS_FIRST_GAME = """
def choose(self, view, legal):
    # Behaves in the first game it ever plays (its validation game: a tournament validates
    # every bot before it schedules a game), then dies at its first decision of every other
    # game. Nothing on the wire tells a validation game apart, so it remembers the game in a
    # file across restarts (only unsandboxed: a sandboxed bot keeps nothing between processes).
    import pathlib
    first = pathlib.Path(MARKER)
    if not first.exists():
        first.write_text(self.game.game_id)
    if first.read_text() != self.game.game_id:
        os._exit(3)
    return 0
"""

ILLEGAL_ANSWERS = """
def choose(self, view, legal):
    from referee.games.board.actions import ClaimRoute
    return ClaimRoute(route=0, colour=0, locomotives=99)
"""


def test_bots_that_fail_validation_are_left_out_and_the_rest_play(tmp_path: Path) -> None:
    never_starts = tmp_path / "never"
    never_starts.mkdir()
    (never_starts / "bot.toml").write_text(
        'name = "never"\nversion = "1"\ncommand = ["{python}", "-c", "import sys; sys.exit(4)"]\n'
    )
    illegal = sdk_bot(tmp_path / "illegal", "illegal", ILLEGAL_ANSWERS)
    with Store(tmp_path / "league.db") as store:
        outcome = run(
            store,
            bot_dirs=[RANDOM, str(never_starts), GREEDY, illegal],
            players=2,
            workers=2,
            records=str(tmp_path / "records"),
            move_ms=500,
            bank_ms=2000,
            startup_s=5.0,
        )
        left_out = {v.entrant.name: v.reason for v in outcome.rejected}
        assert set(left_out) == {"never", "illegal"}
        assert "would not start" in left_out["never"] and "status 4" in left_out["never"]
        assert "rejected" in left_out["illegal"] and "claim" in left_out["illegal"]
        assert [e.name for e in outcome.entrants] == ["greedy", "random"]
        assert outcome.complete and outcome.total == outcome.played == 2
        entries = {bot.name: (accepted, reason) for bot, _, accepted, reason in store.entries(1)}
        assert entries["never"][0] is False and entries["greedy"] == (True, "")
        games = store.games()
        assert len(games) == 2 and all(g.record_path for g in games)
        for g in games:
            assert g.record_path is not None and verify(Path(g.record_path)) is None


def test_a_bot_that_crashes_in_every_game_ends_last_with_its_faults(tmp_path: Path) -> None:
    # Against greedy and planner: the random bot would not do, since the safe default (draw
    # cards, keep the fewest tickets) out-scores random play, which fails many tickets.
    marker = repr(str(tmp_path / "first-game"))
    crasher = sdk_bot(
        tmp_path / "crasher", "crasher", CRASH_AFTER_ITS_FIRST_GAME.replace("MARKER", marker)
    )
    db = tmp_path / "league.db"
    code = cli_main(
        [
            "tournament",
            "run",
            "--db",
            str(db),
            "--players",
            "2",
            "--workers",
            "2",
            "--no-sandbox",  # the crasher's memory of its first game
            "--json",
            GREEDY,
            PLANNER,
            crasher,
        ]
    )
    assert code == 0
    with Store(db) as store:
        [(variant, players, table)] = leaderboard(store)
        assert (variant, players) == ("usa@1", 2)
        assert [s.bot.name for s in table][-1] == "crasher"
        crash_row = table[-1]
        assert crash_row.games == 4 and crash_row.wins == 0
        assert crash_row.faults >= 4  # at least one per game: its process died in each
        games = store.games()
        assert len(games) == games_in(3, 2, 1) == 6
        crasher_id = crash_row.bot.bot_id
        for game in games:
            for f in game.faults:
                assert f.seat == next(s.seat for s in game.seats if s.bot_id == crasher_id)
                assert f.kind == "disconnect"
    shown = subprocess.run(
        [*TTR, "leaderboard", "show", "--db", str(db)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    last = next(ln for ln in shown.splitlines() if ln.startswith("3 "))
    assert "crasher 0.1" in last and last.split()[-1] == str(crash_row.faults)


#: when each process _descendants found was started (/proc/PID/stat field 22, clock ticks since
#: boot): a pid is a process only together with its start. Other work on the machine can cycle
#: through all 32,768 pids during a long test, and a pid that exited may name a stranger later.
_STARTED: dict[int, str] = {}


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the command name: state, ppid, ..."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (Linux /proc): workers and the bots they started."""
    children: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = _stat(entry)
                ppid, starts[int(entry)] = int(fields[1]), fields[19]
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                _STARTED[child] = starts[child]  # the newest process of that pid
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    """Whether the process found as ``pid`` still runs (not a zombie, and not another process
    that was given the same pid since)."""
    try:
        fields = _stat(pid)
    except (OSError, IndexError):
        return False
    started = _STARTED.get(pid)
    return fields[0] != "Z" and (started is None or fields[19] == started)


def _assert_all_exit(family: set[int], within_s: float = 20.0) -> None:
    """Every process of a finished run (workers, bots, multiprocessing's resource tracker)
    exits within a few seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and any(_alive(p) for p in family):
        time.sleep(0.1)
    left = [p for p in family if _alive(p)]
    assert not left, "workers or bots outlived the run: " + "; ".join(_described(p) for p in left)


def _described(pid: int) -> str:
    """A process's pid, parent and command line, to tell which one outlived a run."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        return f"{pid} (parent {_stat(pid)[1]}): {command[:160]}"
    except (OSError, IndexError):
        return f"{pid} (gone)"


def _stored(db: Path) -> list[tuple[str, int, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT g.game_id, s.seat, json_array(s.bot_id, s.score, s.rank, s.faults) "
            "FROM games g JOIN seats s USING (game_id) ORDER BY g.game_id, s.seat"
        ).fetchall()
    return [(str(a), int(b), str(c)) for a, b, c in rows]


def _start_and_wait(
    args: list[str], db: Path, games: int
) -> tuple[subprocess.Popen[str], set[int]]:
    """Start ``ttr`` with ``args``; return once ``games`` games are stored, with every process
    seen below it by then."""
    proc = subprocess.Popen(
        [*TTR, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A background job of a non-interactive shell (as CI may be) inherits SIGINT ignored,
        # and Python then keeps ignoring it: give the run the default, as a terminal would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    family: set[int] = set()
    stored = 0
    while time.monotonic() < deadline and proc.poll() is None and stored < games:
        family |= _descendants(proc.pid)
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    stored = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            except sqlite3.OperationalError:
                stored = 0  # the schema is being created
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    return proc, family | _descendants(proc.pid)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
def test_a_run_killed_at_random_resumes_without_losing_or_doubling_games(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    args = ["tournament", "run", "--db", str(db), "--players", "2", "--workers", "2"]
    rounds = ["--rounds", "3"]  # 18 games, the kill once 5 are stored
    total = games_in(3, 2, 3)
    proc, family = _start_and_wait([*args, *rounds, RANDOM, GREEDY, PLANNER], db, 5)
    try:
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM games").fetchone()[0] < total
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    before = _stored(db)
    _assert_all_exit(family)  # orphaned workers notice, stop their bots and exit

    # Resuming takes no settings; it names what it resumes and finishes the schedule.
    resumed = subprocess.run(
        [*TTR, *args[:4], "--resume", "--json"], cwd=ROOT, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["complete"] and summary["games"] == total
    assert summary["stored_before"] + summary["played"] == total
    assert summary["stored_before"] == len({g for g, _, _ in before})
    after = _stored(db)
    assert set(before) <= set(after)  # games stored before the kill are untouched
    with sqlite3.connect(db) as conn:
        ids = [r[0] for r in conn.execute("SELECT game_id FROM games")]
        slots = [r[0] for r in conn.execute("SELECT schedule_index FROM games ORDER BY 1")]
        finished = conn.execute("SELECT finished_at FROM tournaments").fetchone()[0]
    assert len(ids) == len(set(ids)) == total
    assert slots == list(range(total))
    assert finished is not None
    again = subprocess.run([*TTR, *args[:4], "--resume"], cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 2 and "no unfinished tournament" in again.stderr


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_run_stops_soon_says_how_to_resume_and_leaves_nothing_running(
    tmp_path: Path, sig: signal.Signals
) -> None:
    db = tmp_path / "league.db"
    args = ["tournament", "run", "--db", str(db), "--players", "2", "--workers", "2"]
    # 18 games, the signal once 3 are stored
    proc, family = _start_and_wait([*args, "--rounds", "3", RANDOM, GREEDY, PLANNER], db, 3)
    interrupted = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - interrupted < 10  # the workers stop after their current game
    assert proc.returncode == 130
    assert "interrupted" in err and "--resume" in err
    _assert_all_exit(family)
    resumed = subprocess.run(
        [*TTR, *args[:4], "--resume", "--json"], cwd=ROOT, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["complete"]


def test_organiser_mistakes_get_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "l.db")
    cases = [
        (["--players", "4", RANDOM, GREEDY], "need at least 4"),
        ([RANDOM, RANDOM], "entered twice"),
        ([RANDOM, str(tmp_path / "nope")], "not a bot folder"),
        (["--resume", "--players", "3"], "keeps the settings"),
        (["--resume"], "no unfinished tournament"),
        ([], "give the bot folders"),
        (["--records", "/proc/no/such/place", RANDOM, GREEDY], "cannot write game records"),
    ]
    for extra, message in cases:
        with pytest.raises(SystemExit) as e:
            cli_main(["tournament", "run", "--db", db, *extra])
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    with pytest.raises(SystemExit):
        cli_main(["leaderboard", "show", "--db", str(tmp_path / "missing.db")])
    assert "no such results store" in capsys.readouterr().err
    assert not (tmp_path / "missing.db").exists()


def test_a_changed_bot_cannot_join_a_resumed_tournament(tmp_path: Path) -> None:
    a = sdk_bot(tmp_path / "a", "a", "def choose(self, view, legal):\n    return 0\n")
    before = content_hash(a)
    (Path(a) / "__pycache__").mkdir()
    (Path(a) / "__pycache__" / "x.pyc").write_bytes(b"cache")
    assert content_hash(a) == before  # caches are not part of a bot
    with Store(tmp_path / "l.db") as store:
        outcome = run(
            store,
            bot_dirs=[a, RANDOM],
            players=2,
            workers=1,
            records=None,
            move_ms=500,
            bank_ms=2000,
        )
        assert outcome.complete
        # Unfinish it by hand, then change the bot: resuming must refuse.
        with sqlite3.connect(tmp_path / "l.db") as conn:
            conn.execute("UPDATE tournaments SET finished_at = NULL")
        (Path(a) / "bot.py").write_text((Path(a) / "bot.py").read_text() + "\n# changed\n")
        with pytest.raises(TournamentError, match="changed since the tournament began") as e:
            run(store, bot_dirs=[], resume=True)
        assert "`ttr tournament abandon --db " in str(e.value)


def test_the_progress_display_prints_plain_lines_off_a_terminal() -> None:
    import io

    from leaderboard.progress import TournamentDisplay
    from leaderboard.ratings import Rating
    from leaderboard.store import GameResult
    from leaderboard.worker import Entrant, Validation

    out = io.StringIO()
    planner = Entrant(1, "/bots/planner", "planner", "1.0", "h1")
    crasher = Entrant(2, "/bots/crasher", "crasher", "0.1", "h2")
    game = GameResult("g", 1, 0, 1, "usa@1", 2, 7, "last_round", 90, None, 0.0, 1.0, (), ())
    with TournamentDisplay(out, live=False) as display:
        events = display.events()
        events.validating(2)
        events.validated(Validation(planner, True, ""))
        events.validated(Validation(crasher, False, "would not start: exit status 3"))
        events.playing(20, 4)
        for _ in range(16):
            events.played(game, [(planner, Rating(30.0, 4.0))])
        events.failed("t1-r1-c0-s0", "Traceback ...\nRuntimeError: boom")
    lines = out.getvalue().splitlines()
    assert lines[:3] == [
        "validating 2 bot(s): one game each against copies of a sample bot",
        "  ok    planner 1.0",
        "  LEFT OUT  crasher 0.1: would not start: exit status 3",
    ]
    assert lines[3] == "20 games in the schedule (4 already stored; 16 to play)"
    progress = [ln for ln in lines if "games (" in ln]
    assert len(progress) == 8  # a line every tenth of the schedule (2 games), not every game
    assert progress[-1].startswith("  20/20 games (100%)")
    assert "leader planner 1.0 (18.0)" in progress[-1]
    assert lines[-1] == "game t1-r1-c0-s0 FAILED (left for --resume): RuntimeError: boom"
    assert "\x1b[" not in out.getvalue()  # no terminal codes in a log


def test_a_pid_given_to_another_process_is_not_a_survivor() -> None:
    """The process checks count a process by its pid and its start: a stranger given a
    finished process's pid (other work can cycle through every pid during a long test) is
    not taken for a process that outlived its run."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in _descendants(os.getpid()) and _alive(child.pid)
        real = _STARTED[child.pid]
        _STARTED[child.pid] = str(int(real) - 1)  # as if the pid had named an older process
        assert not _alive(child.pid)
        _STARTED[child.pid] = real
        assert _alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not _alive(child.pid)
