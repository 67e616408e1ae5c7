"""Bot output is never swallowed: real bot processes that write to stdout and stderr, run by
``ttr play`` and ``ttr tournament run``, sandboxed and not.

Each game's log file holds what a bot wrote (its start-up lines included), ``--verbose``
streams the lines live with a ``[SEAT NAME]`` prefix and terminal codes escaped, a rejected
answer is printed while the game is still being played, the per-game cap holds for the file
and the stream, and a bot that crashes as it starts is left out of a tournament with the end
of its stderr on screen and in the store, its whole output in a log beside the records.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.store import FaultRow, GameResult, SeatResult, Store
from referee.hosting import sandbox
from referee.hosting.launcher import BotLog
from tests.leaderboard.test_tournament import sdk_bot

ROOT = Path(__file__).resolve().parents[2]
RANDOM = str(ROOT / "sample_bots" / "random")
GREEDY = str(ROOT / "sample_bots" / "greedy")
TTR = [sys.executable, "-m", "ttr_arena.cli"]
MODES = ["sandbox", "no-sandbox"]

#: Says hello on stdout and stderr as it starts (class bodies run at import), writes a line to
#: each at every decision (one with a terminal colour code), answers its first decision with an
#: illegal claim and says on stderr when it is told so. With a file ``wait`` in its folder it
#: then waits for a file ``go`` before answering again.
CHATTY = """
import sys as _sys
print("hello from stdout at start", flush=True)
print("hello from stderr at start", file=_sys.stderr, flush=True)
illegal_left = [1]

def choose(self, view, legal):
    import pathlib, sys, time
    from referee.games.board.actions import ClaimRoute
    print(f"thinking about {len(legal)} actions at turn {view.turn}", flush=True)
    print("\\x1b[31mred\\x1b[0m on stderr", file=sys.stderr, flush=True)
    if self.game.rejection:
        print(f"told {self.game.rejection[0]}", file=sys.stderr, flush=True)
        here = pathlib.Path(__file__).resolve().parent
        deadline = time.monotonic() + 60
        while (here / "wait").exists() and not (here / "go").exists():
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
    if self.illegal_left:
        self.illegal_left.pop()
        return ClaimRoute(route=0, colour=0, locomotives=99)
    return 0
"""

#: At its first decision: one 5000-character line, then 100 KB to stdout and 100 KB to stderr.
FLOOD = """
flooded = []

def choose(self, view, legal):
    import sys
    if not self.flooded:
        self.flooded.append(1)
        print("y" * 5000, flush=True)
        for i in range(100):
            print(f"out {i:03d} " + "o" * 1015, flush=True)
            print(f"err {i:03d} " + "e" * 1015, file=sys.stderr, flush=True)
    return 0
"""


@pytest.fixture(autouse=True)
def sandbox_available() -> None:
    reason = sandbox.unavailable_reason()
    if reason is not None:
        pytest.fail(f"the bot sandbox cannot run on this machine: {reason}")


def ttr(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TTR, *args], capture_output=True, text=True, cwd=ROOT, timeout=180, check=False
    )


def mode_args(mode: str) -> list[str]:
    return ["--no-sandbox"] if mode == "no-sandbox" else []


@pytest.mark.parametrize("mode", MODES)
def test_logs_hold_each_bots_lines_and_verbose_streams_them_prefixed(
    tmp_path: Path, mode: str
) -> None:
    chatty = sdk_bot(tmp_path / "chatty", "chatty", CHATTY)
    record = tmp_path / "game.json"
    done = ttr(
        "play", chatty, RANDOM, "--record", str(record), "--seed", "5", "--verbose", "--json",
        *mode_args(mode),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["record"] == str(record) and record.exists()
    logs = {p["seat"]: Path(p["log"]) for p in summary["players"]}
    assert logs == {
        0: tmp_path / "game.logs" / "seat0-chatty.log",
        1: tmp_path / "game.logs" / "seat1-random.log",
    }
    text = logs[0].read_text()
    for line in ("hello from stdout at start", "hello from stderr at start", "told turn.phase"):
        assert line in text.splitlines()
    decisions = sum(1 for a in json.loads(record.read_text())["actions"] if a["seat"] == 0)
    # each decision: one line on each stream, plus one for the rejected first answer
    assert text.count("thinking about") == decisions + 1
    assert text.count("\x1b[31mred\x1b[0m on stderr") == decisions + 1  # the file keeps bytes
    assert logs[1].exists()

    streamed = done.stderr.splitlines()
    for line in ("hello from stdout at start", "hello from stderr at start", "told turn.phase"):
        assert f"[0 chatty] {line}" in streamed
    assert streamed.count("[0 chatty] \\x1b[31mred\\x1b[0m on stderr") == decisions + 1
    assert "\x1b" not in done.stderr  # a bot cannot drive the terminal
    assert sum(1 for ln in streamed if ln.startswith("[0 chatty] thinking about")) == (
        decisions + 1
    )
    assert any(ln.startswith("[1 random] ") for ln in streamed)  # its "listening on" line
    # printed when it happened, before the bot heard of it, and said once
    [fault] = [ln for ln in streamed if ln.startswith("fault: ")]
    assert re.fullmatch(
        r"fault: turn 0, seat 0 chatty: answer rejected \(turn\.phase\): .+; asked again", fault
    )
    assert streamed.index(fault) < streamed.index("[0 chatty] told turn.phase")

    # the record holds each line with the decision its bot was answering when it wrote it
    data = json.loads(record.read_text())
    thinking = 0
    for entry in data["actions"]:
        said = entry.get("lines", [])
        if entry["seat"] == 1:
            assert not any("thinking" in line for line in said)
            continue
        mine = [line for line in said if line.startswith("thinking about")]
        assert mine and all(line.endswith(f" at turn {entry['turn']}") for line in mine), entry
        thinking += len(mine)
        assert said.count("\\x1b[31mred\\x1b[0m on stderr") == len(mine)  # escaped
    assert thinking == decisions + 1
    first = data["actions"][0]["lines"]  # since the game began: the start-up lines too
    assert first[:2] == ["hello from stdout at start", "hello from stderr at start"]
    assert "told turn.phase" in first and first.count("thinking about 4 actions at turn 0") == 2
    if mode == "sandbox":
        # at their step in `ttr replay show` and `ttr replay view`; never in another seat's
        shown = ttr("replay", "show", str(record)).stdout.splitlines()
        assert "  0:chatty > told turn.phase" in shown
        # each recorded line shown once: twice at the first decision (its rejected answer),
        # and again if the seed gives seat 0 another decision of 4 actions in turn 0 (the
        # second card of a draw); sandboxed, the seed is keyed afresh each run
        said = "thinking about 4 actions at turn 0"
        recorded = sum(e.get("lines", []).count(said) for e in data["actions"] if e["seat"] == 0)
        assert recorded >= 2 and shown.count(f"  0:chatty > {said}") == recorded
        own = ttr("replay", "show", str(record), "--seat", "0").stdout
        theirs = ttr("replay", "show", str(record), "--seat", "1").stdout
        assert "0:chatty > thinking about" in own and "thinking" not in theirs
        page = tmp_path / "seat1.html"
        assert ttr("replay", "view", str(record), "--seat", "1", "--out", str(page)).returncode == 0
        assert "thinking" not in page.read_text() and "hello from" not in page.read_text()


def test_without_verbose_the_paths_and_every_fault_are_still_printed(tmp_path: Path) -> None:
    chatty = sdk_bot(tmp_path / "chatty", "chatty", CHATTY)
    record = tmp_path / "game.json"
    done = ttr("play", chatty, RANDOM, "--record", str(record), "--seed", "5")
    assert done.returncode == 0, done.stderr
    assert "[0 chatty]" not in done.stderr
    [fault] = [ln for ln in done.stderr.splitlines() if ln.startswith("fault: ")]
    assert "seat 0 chatty: answer rejected (turn.phase): " in fault
    lines = done.stdout.splitlines()
    assert f"log: 0:chatty 0.1: {tmp_path / 'game.logs' / 'seat0-chatty.log'}" in lines
    assert any(ln.startswith("log: 1:random ") and ln.endswith("seat1-random.log") for ln in lines)
    assert lines[-1] == f"record: {record}"


def test_a_rejection_is_printed_while_the_game_is_still_on(tmp_path: Path) -> None:
    """The bot waits, after its rejection, until the test has seen the fault line: so the
    line cannot have come from the end of the game."""
    chatty = Path(sdk_bot(tmp_path / "chatty", "chatty", CHATTY))
    (chatty / "wait").write_text("")
    with subprocess.Popen(
        [*TTR, "play", str(chatty), RANDOM, "--record", str(tmp_path / "g.json"), "--seed", "5"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            while line and not line.startswith("fault: "):
                line = proc.stderr.readline()
            assert "seat 0 chatty: answer rejected (turn.phase): " in line
            assert proc.poll() is None  # the game waits for the bot, which waits for us
        finally:
            (chatty / "go").write_text("")
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert "record: " in out


@pytest.mark.parametrize("mode", MODES)
def test_the_log_cap_holds_for_the_file_and_the_stream(tmp_path: Path, mode: str) -> None:
    flood = sdk_bot(tmp_path / "flood", "flood", FLOOD)
    done = ttr(
        "play", flood, RANDOM, "--record", str(tmp_path / "g.json"), "--seed", "2",
        "--log-kb", "64", "--verbose", *mode_args(mode),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    log = tmp_path / "g.logs" / "seat0-flood.log"
    kept = re.fullmatch(
        rb"(.*)\n\[ttr: log truncated: (\d+) more bytes dropped \(limit 64 KB per game\)\]\n",
        log.read_bytes(),
        re.DOTALL,
    )
    assert kept is not None
    body, dropped = kept.group(1), int(kept.group(2))
    assert len(body) == 64 * 1024  # filled to the cap, then counted, not kept
    assert dropped >= 200 * 1024 - 64 * 1024
    assert body.count(b"\nout 000 ") == 1 and b"err 099" not in body
    shown = [ln for ln in done.stderr.splitlines() if ln.startswith("[0 flood] ")]
    long_line = next(ln for ln in shown if ln.startswith("[0 flood] yyy"))
    assert long_line.endswith("...[cut: 5000 chars]") and len(long_line) <= 10 + 1000
    over = [ln for ln in shown if ln.startswith("[0 flood] [ttr: over the 64 KB per game")]
    assert len(over) == 1 and shown[-1] == over[0]  # said once, and then nothing more
    assert sum(len(ln) - len("[0 flood] ") + 1 for ln in shown[:-1]) <= 64 * 1024


CRASHY = """\
import sys
print("crashy: loading weights", flush=True)
for i in range(20):
    print(f"crashy: stderr line {i}", file=sys.stderr, flush=True)
raise RuntimeError("no weights found")
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_bot_that_crashes_at_start_is_left_out_with_its_stderr_shown_and_stored(
    tmp_path: Path, mode: str
) -> None:
    crashy = tmp_path / "crashy"
    crashy.mkdir()
    (crashy / "bot.toml").write_text(
        'name = "crashy"\nversion = "0.1"\ncommand = ["{python}", "bot.py"]\n'
    )
    (crashy / "bot.py").write_text(CRASHY)
    db = tmp_path / "league.db"
    done = ttr(
        "tournament", "run", "--db", str(db), "--players", "2", "--workers", "2",
        "--move-ms", "500", "--bank-ms", "5000", *mode_args(mode), str(crashy), RANDOM, GREEDY,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = tmp_path / "league-records"
    whole_log = records / "logs" / "validation-1" / "seat0-crashy.log"
    reason_lines = [
        "would not start: bot 'crashy' exited during startup with status 1; the end of its stderr:",
        *(f"  | crashy: stderr line {i}" for i in range(9, 20)),
        "  | Traceback (most recent call last):",
        # a jailed bot sees its folder at /bot; unjailed, at the host's path
        f'  |   File "{"/bot" if mode == "sandbox" else crashy}/bot.py", line 5, in <module>',
        '  |     raise RuntimeError("no weights found")',
        "  | RuntimeError: no weights found",
        f"  (its whole output: {whole_log})",
    ]
    reason = "\n".join(reason_lines)
    assert f"  LEFT OUT  crashy 0.1: {reason}\n" in done.stderr  # as it happens
    assert f"left out: crashy 0.1: {reason}\n" in done.stdout  # and in the summary
    output = whole_log.read_text()
    assert output.startswith("crashy: loading weights\n")  # its stdout, before any game
    assert "crashy: stderr line 0\n" in output and "RuntimeError: no weights found" in output

    with Store(db) as store:
        entries = {bot.name: (ok, why) for bot, _, ok, why in store.entries(1)}
        assert entries["crashy"] == (False, reason)
        games = store.games()
        assert len(games) == 2  # random and greedy, each deal in both seat orders
        said: dict[int, str] = {}
        for game in games:
            for seat in game.seats:
                assert seat.log_path is not None
                log = Path(seat.log_path)
                assert log.parent == records / "logs" / game.game_id
                said[seat.bot_id] = said.get(seat.bot_id, "") + log.read_text()
        # what each said as it started (before any game) is in the log of its first game
        assert len(said) == 2 and all("listening on" in text for text in said.values())


def test_a_tournaments_records_hold_each_bots_lines_at_their_decisions(tmp_path: Path) -> None:
    """The league's path (workers, a pool of bots kept across games): each game's record has
    the lines written for each of its decisions, none from another game."""
    talker = sdk_bot(
        tmp_path / "talker",
        "talker",
        """
        def choose(self, view, legal):
            print(f"{self.game.game_id} turn {view.turn}", flush=True)
            return 0
        """,
    )
    db = tmp_path / "league.db"
    done = ttr("tournament", "run", "--db", str(db), "--players", "2", talker, RANDOM)
    assert done.returncode == 0, done.stderr
    with Store(db) as store:
        games = store.games()
    assert len(games) == 2
    for game in games:
        assert game.record_path is not None
        data = json.loads(Path(game.record_path).read_text())
        seat = next(s.seat for s in game.seats if s.bot_id == 1)
        for entry in data["actions"]:
            said = entry.get("lines", [])
            if entry["seat"] != seat:
                assert not any(" turn " in line for line in said)
                continue
            [line] = [line for line in said if " turn " in line]
            wire_id, _, turn = line.partition(" turn ")
            assert int(turn) == entry["turn"] and wire_id
        ids = {
            line.partition(" turn ")[0]
            for entry in data["actions"]
            for line in entry.get("lines", [])
            if " turn " in line
        }
        assert len(ids) == 1  # one game's lines: the game id it was sent, never another's


def test_old_stores_gain_the_log_column_and_keep_their_games(tmp_path: Path) -> None:
    db = tmp_path / "league.db"

    def game(game_id: str, index: int, log: str | None) -> GameResult:
        seats = (SeatResult(0, bot, 10, 1, 1, 0, 0, 0, log), SeatResult(1, bot, 5, 2, 0, 1, 1, 1))
        faults = (FaultRow(1, 3, 2, "timeout", "", "no answer"),)
        return GameResult(
            game_id, tid, index, 1, "usa@1", 2, 7, "last_round", 90, None, 0.0, 1.0, seats, faults
        )

    with Store(db) as store:
        from leaderboard.store import TournamentSpec

        tid = store.begin_tournament(TournamentSpec("t", "usa@1", 2, 1, 1, {})).tournament_id
        bot = store.add_bot("a", "1", "", "h")
        store.record_game(game("g1", 0, None))
    with sqlite3.connect(db) as conn:  # the store as the schema before log paths left it
        conn.execute("ALTER TABLE seats DROP COLUMN log_path")
        conn.execute("DROP TABLE seed_key")  # schema 4's
        conn.execute("PRAGMA user_version = 2")
    with Store(db) as store:
        store.record_game(game("g2", 1, "/logs/g2/seat0-a.log"))
        games = {g.game_id: g for g in store.games()}
        assert [s.log_path for s in games["g1"].seats] == [None, None]
        assert [s.log_path for s in games["g2"].seats] == ["/logs/g2/seat0-a.log", None]
        assert games["g1"].faults == game("g1", 0, None).faults


def test_the_tournament_display_names_a_faulty_seat_and_its_log() -> None:
    import io

    from leaderboard.progress import FAULT_LINES, TournamentDisplay
    from leaderboard.worker import Entrant

    out = io.StringIO()
    crasher = Entrant(2, "/bots/crasher", "crasher", "0.1", "h2")
    seats = (
        SeatResult(0, 1, 40, 1, 2, 0, 0, 0, "/r/logs/g/seat0-planner.log"),
        SeatResult(1, 2, 5, 2, 0, 1, 1, 80, "/r/logs/g/seat1-crasher.log"),
    )
    faults = (FaultRow(1, 3, 2, "disconnect", "UNAVAILABLE", "the bot exited with status 3"),)
    game = GameResult("g", 1, 0, 1, "usa@1", 2, 7, "last_round", 90, None, 0.0, 1.0, seats, faults)
    with TournamentDisplay(out, live=False) as display:
        events = display.events()
        events.playing(30, 0)
        for _ in range(FAULT_LINES + 5):
            events.faulty(game, seats[1], crasher)
    lines = [ln for ln in out.getvalue().splitlines() if "fault" in ln]
    assert lines[0] == (
        "  faults: game g, seat 1 crasher 0.1: 1 (first: disconnected (UNAVAILABLE): the bot "
        "exited with status 3); log: /r/logs/g/seat1-crasher.log"
    )
    assert len(lines) == FAULT_LINES + 1 and "not shown here" in lines[-1]


def test_a_long_line_split_across_pipe_reads_is_echoed_whole(tmp_path: Path) -> None:
    """The echo cuts a line at the same place whatever the pipe reads: here the 5,000
    characters arrive in two writes (4,500 then the rest), as a loaded machine may deliver
    them, and the echo still shows one line marked with the whole length."""
    import os
    import time

    from referee.hosting.launcher import BotLog

    shown: list[str] = []
    log = BotLog(1024 * 1024)
    log.echo_to(shown.append)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    with open(out_r, "rb", buffering=0) as out, open(err_r, "rb", buffering=0) as err:
        log.attach(out, err)
        line = b"y" * 5000
        os.write(out_w, line[:4500])
        time.sleep(0.2)  # the reader takes the first part alone
        os.write(out_w, line[4500:] + b"\nnext\n")
        os.close(out_w)
        os.close(err_w)
        deadline = time.monotonic() + 10
        while len(shown) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        log.close()
    assert shown[0].endswith("...[cut: 5000 chars]") and len(shown[0]) <= 1000
    assert shown[1] == "next"


@contextlib.contextmanager
def _piped(log: BotLog) -> Iterator[tuple[int, int]]:
    """``log`` reading two fresh pipes, as it reads a bot's stdout and stderr: yields the
    write ends, and closes both ends and the log afterwards however the test ends."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    with open(out_r, "rb", buffering=0) as out, open(err_r, "rb", buffering=0) as err:
        log.attach(out, err)
        try:
            yield out_w, err_w
        finally:
            os.close(out_w)
            os.close(err_w)
            log.close()


def test_each_line_goes_with_the_answer_it_was_written_before() -> None:
    """What a bot wrote before it answered is taken with that answer, however late the
    reading thread wakes: 300 rounds of "write, then take" never see a line early, late or
    twice, and a line not ended yet is taken as it stands."""
    log = BotLog(1024 * 1024)
    log.log_to(None)
    with _piped(log) as (out_w, err_w):
        for i in range(300):
            os.write(out_w, f"decision {i}\n".encode())
            if i % 3 == 0:
                os.write(err_w, f"err {i}\nno newline {i}".encode())
            taken = log.take_lines()
            want = [f"decision {i}"] + ([f"err {i}", f"no newline {i}"] if i % 3 == 0 else [])
            assert sorted(taken) == sorted(want), (i, taken)


def test_the_record_keeps_a_bounded_escaped_share_of_the_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from referee.hosting import launcher

    monkeypatch.setattr(launcher, "RECORD_LINES_CHARS", 100)
    log = BotLog(1024 * 1024)
    assert log.take_lines() == []  # not collecting before a game's log_to
    log.log_to(None)
    with _piped(log) as (out_w, _):
        os.write(out_w, b"\x1b[31mred\x1b[0m\r\n" + b"z" * 3000 + b"\n")
        assert log.take_lines() == [
            "\\x1b[31mred\\x1b[0m",  # a terminal code stays text
            "[ttr: 1 more line(s) only in the log: the record keeps 100 characters of a "
            "bot's output per game]",
        ]
        os.write(out_w, b"later\n")
        assert log.take_lines() == []  # said once; the rest of the game is the log's
        log.log_to(None)  # the next game starts afresh
        monkeypatch.setattr(launcher, "RECORD_LINES_CHARS", 5000)
        os.write(out_w, b"z" * 3000 + b"\n")
        [long] = log.take_lines()
        assert long.endswith("...[cut: 3000 chars]") and len(long) <= 1000
        os.write(out_w, b"".join(b"line %02d..\n" % i for i in range(20)))
        assert log.take_lines() == [f"line {i:02d}.." for i in range(20)]
        log.log_to(None)
        monkeypatch.setattr(launcher, "RECORD_LINES_CHARS", 100)
        os.write(out_w, b"".join(b"line %02d...\n" % i for i in range(12)))
        taken = log.take_lines()
        assert taken[:10] == [f"line {i:02d}..." for i in range(10)]  # 10 x 10 chars fit in 100
        assert taken[10:] == [
            "[ttr: 2 more line(s) only in the log: the record keeps 100 characters of a "
            "bot's output per game]"
        ]
