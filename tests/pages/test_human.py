"""The human seat's page server (ttr_arena/pages/human) without a browser: only its secret
address answers (anything else 404s), it listens on 127.0.0.1 only (the page and the seat's
gRPC server), an answer that names no legal action or a decision that is over is refused with
the reason and the decision stays open, and a decision whose time runs out is given up. And
``ttr play``'s reading of where the human sits."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.games.registry import family_of, load
from referee.replay import load_record, verify
from sdk.bot import Game
from ttr_arena.cli.options import BANK_MS, MOVE_MS, UserError
from ttr_arena.cli.play import _seat_human
from ttr_arena.pages.human import PAGE_POLICY, HumanHost, HumanSeat, Table, hosting
from ttr_arena.pages.web import asset


def fetch(url: str, body: Any = None, content_type: str = "application/json") -> tuple[int, str]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    if body is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


@pytest.fixture
def host() -> Iterator[HumanHost]:
    with hosting(["human", "random"], "game.json") as running:
        yield running


def open_decision(table: Table) -> tuple[int, int]:
    """Start a usa game on the table and put its first decision to it, as the seat's bot
    does: (the decision's number, how many legal actions it has)."""
    ruleset = load("usa")
    family = family_of(ruleset)
    state = family.new_game(ruleset, 2, 7)
    table.start(Game("g", ruleset.ident, 0, 2, ruleset, 1000, 60000, family=family.name))
    legal = family.legal_actions(state)
    number = table.ask(family.view(state, 0), legal, state.events, None, (1000, 60000))
    return number, len(legal)


def test_only_the_secret_address_answers(host: HumanHost) -> None:
    base = host.url.rsplit("/", 2)[0]  # http://127.0.0.1:PORT
    key = host.url.rstrip("/").rsplit("/", 1)[1]
    status, page = fetch(host.url)
    assert status == 200 and "ttr-human/1" in page
    with urllib.request.urlopen(host.url, timeout=10) as answer:
        assert answer.headers["Content-Security-Policy"] == PAGE_POLICY
        assert answer.headers["Referrer-Policy"] == "no-referrer"
    assert fetch(host.url + "state?since=-1")[0] == 200  # before the game: answers at once
    wrong = key[:-1] + ("A" if key[-1] != "A" else "B")
    for path in (
        f"/{wrong}/",
        f"/{wrong}/state?since=0",
        f"/{key[:-1]}/",
        f"/{key}",  # no redirect to the page either
        "/",
        "/state",
        f"/{key}/../{key}/x",
        f"/{key}x/",
    ):
        assert fetch(base + path)[0] == 404, path
    assert fetch(f"{base}/{wrong}/act", {"decision": 1, "action": 0})[0] == 404


def _listening(port: int) -> list[str]:
    """The local addresses of the TCP sockets listening on ``port`` (/proc/net/tcp{,6})."""
    found = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        lines = Path(name).read_text().splitlines()[1:] if Path(name).exists() else []
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if int(hex_port, 16) == port and fields[3] == "0A":  # LISTEN
                found.append(address)
    return found


def test_the_page_and_the_seat_listen_on_loopback_only(host: HumanHost) -> None:
    assert host.url.startswith(f"http://127.0.0.1:{host.port}/")
    assert host.address.startswith("127.0.0.1:")
    for port in (host.port, int(host.address.rsplit(":", 1)[1])):
        # 127.0.0.1 (gRPC's is IPv4 in IPv6's form), and nothing else
        assert _listening(port) in (["0100007F"], ["0000000000000000FFFF00000100007F"]), port


def test_an_answer_out_of_range_or_too_late_is_refused_and_the_decision_stays(
    host: HumanHost,
) -> None:
    number, count = open_decision(host.table)
    act = host.url + "act"
    status, body = fetch(act, {"decision": number, "action": count})
    assert status == 200
    assert json.loads(body) == {
        "ok": False,
        "error": f"there is no legal action {count}: this decision has {count} (0-{count - 1})",
    }
    assert not json.loads(fetch(act, {"decision": number - 1, "action": 0})[1])["ok"]
    assert not json.loads(fetch(act, {"decision": number, "action": "0"})[1])["ok"]
    assert fetch(act, {"decision": number, "action": 0}, "text/plain")[0] == 415
    state = json.loads(fetch(host.url + "state?since=0&game=0")[1])
    assert state["decision"] == number and len(state["legal"]) == count
    assert "game" not in state
    got: list[int | None] = []
    waiter = threading.Thread(target=lambda: got.append(host.table.wait_answer(number, 10)))
    waiter.start()
    assert json.loads(fetch(act, {"decision": number, "action": count - 1})[1]) == {
        "ok": True,
        "error": None,
    }
    waiter.join(10)
    assert got == [count - 1]
    assert json.loads(fetch(host.url + "state?since=0")[1])["decision"] is None


def test_a_decision_whose_time_runs_out_is_given_up_and_the_page_told() -> None:
    table = Table(["human", "random"])
    number, _ = open_decision(table)
    assert table.wait_answer(number, 0.05) is None
    state = table.state(0, False, 0)
    assert state["decision"] is None and state["missed"] == 1
    assert table.answer(number, 0) is not None  # too late: refused


def test_the_seat_plays_its_own_game_only() -> None:
    """Another process that finds the seat's port cannot start a game of its own on the
    page: a StartGame for another game id, or another seat, is refused."""
    ruleset = load("usa")
    table = Table(["human", "random"])
    seat = HumanSeat(table, "the-game", 1)
    for game_id, at in (("another", 1), ("the-game", 0)):
        with pytest.raises(ValueError, match="another game"):
            seat.on_start(Game(game_id, ruleset.ident, at, 2, ruleset, 1000, 60000))
        assert not table.state(-1, True, 0)["started"]
    seat.on_start(Game("the-game", ruleset.ident, 1, 2, ruleset, 1000, 60000))
    assert table.state(-1, True, 0)["game"]["seat"] == 1


def test_a_rejection_by_the_referee_reaches_the_page() -> None:
    table = Table(["human", "random"])
    ruleset = load("usa")
    family = family_of(ruleset)
    state = family.new_game(ruleset, 2, 7)
    table.start(Game("g", ruleset.ident, 0, 2, ruleset, 1000, 60000, family=family.name))
    why = ("answer.index", "index 99: there are 4 legal actions")
    table.ask(family.view(state, 0), family.legal_actions(state), (), why, (1000, 500))
    sent = table.state(0, False, 0)
    assert sent["rejection"] == list(why) and sent["clock"] == [1000, 500]


def test_the_page_is_sent_only_the_tickets_it_was_shown() -> None:
    table = Table(["human", "random"])
    open_decision(table)
    state = table.state(0, True, 0)
    assert sorted(int(t) for t in state["tickets"]) == sorted(state["view"]["offered"])
    assert "tickets" not in json.dumps(state["game"])


def _args(*bots: str, human: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(bots=list(bots), human=human)


def test_where_the_human_sits() -> None:
    args = _args("random", "greedy", human="1")
    assert _seat_human(args) == 1 and args.bots == ["random", "human", "greedy"]
    args = _args("greedy", human="random")  # `--human random greedy`: SEAT left out
    assert _seat_human(args) == 0 and args.bots == ["human", "random", "greedy"]
    args = _args("random", human="0")
    assert _seat_human(args) == 0 and args.bots == ["human", "random"]
    args = _args("random", "human")
    assert _seat_human(args) == 1 and args.bots == ["random", "human"]
    assert _seat_human(_args("random", "greedy")) is None
    with pytest.raises(UserError, match="seats are 0-1"):
        _seat_human(_args("random", human="2"))
    with pytest.raises(UserError, match="once"):
        _seat_human(_args("random", "human", human="0"))
    with pytest.raises(UserError, match="more than once"):
        _seat_human(_args("human", "human"))


def test_ttr_play_json_with_a_human_played_over_http(tmp_path: Path) -> None:
    """The word ``human`` seats the human; with --json the page's address goes to stderr and
    stdout holds the one JSON object; the clock, not given, is the largest; the record
    replays. The human answers through the page's own routes (the first legal action)."""
    record = tmp_path / "game.json"
    command = [str(Path(sys.executable).parent / "ttr"), "play", "--variant", "cardgame"]
    command += ["--seed", "4", "--no-sandbox", "--no-open", "--json", "--record", str(record)]
    proc = subprocess.Popen(
        [*command, "human", "random"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = proc.stderr.readline()
        while line and not line.startswith("your seat's page: "):
            line = proc.stderr.readline()
        url = line.split(": ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:")
        version, answered, clock = -1, 0, None
        while True:
            state = json.loads(fetch(f"{url}state?since={version}&game={int(clock is None)}")[1])
            if clock is None and state["started"]:
                clock = state["game"]["clock"]
            version = state["version"]
            if state["outcome"] is not None or state["closed"]:
                break
            if state["decision"] is not None:
                sent = fetch(url + "act", {"decision": state["decision"], "action": 0})
                assert json.loads(sent[1])["ok"]
                answered += 1
        out, err = proc.communicate(timeout=60)
    except BaseException:
        proc.kill()
        raise
    assert proc.returncode == 0, err
    assert clock == [MOVE_MS[1], BANK_MS[1]]
    result = json.loads(out)
    assert [p["bot"] for p in sorted(result["players"], key=lambda p: p["seat"])] == [
        "human",
        "random",
    ]
    data = load_record(record)
    assert data["clock"]["move_ms"] == MOVE_MS[1]
    assert len([a for a in data["actions"] if a["seat"] == 0]) == answered
    assert verify(record) is None


def test_the_page_sets_text_never_markup() -> None:
    """Names, tickets and events are set with textContent: the page's script has no way to
    write markup (a bot named ``<img onerror=...>`` stays text)."""
    script = asset("human.js", "ttr_arena.pages.human")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script


def test_a_refused_command_opens_no_page(tmp_path: Path) -> None:
    """A bot folder that cannot be entered is refused before the page is served: one line,
    status 2, no address printed."""
    ttr = str(Path(sys.executable).parent / "ttr")
    done = subprocess.run(
        [ttr, "play", "--human", "0", "no-such-bot", "--no-sandbox", "--no-open"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "your seat's page" not in done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("ttr: error: ")
