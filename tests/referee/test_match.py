"""End-to-end games over real gRPC: well-behaved and hostile bots, the launcher, the record and
its replay, and the wire-level leak check of what each seat receives."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from contextlib import ExitStack, contextmanager
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from referee.games.board import apply, legal_actions, load_ruleset, new_game, wire
from referee.games.board.events import BlindDrawn, project
from referee.hosting.config import BotConfigError
from referee.hosting.launcher import BotStartError, launch, load_bot_config
from referee.hosting.sandbox import NO_SANDBOX, SandboxConfig
from referee.hosting.seeds import play_seed, user_key
from referee.match import (
    MAX_FAULTS_PER_DECISION,
    Clock,
    MatchResult,
    SeatBot,
    act_request,
    play_match,
)
from referee.replay import verify
from ttr.v1 import actions_pb2, bot_service_pb2, bot_service_pb2_grpc
from ttr_arena.cli import main as cli_main

USA = load_ruleset("usa")
FAST = Clock(move_ms=200, bank_ms=1000)
ROOT = Path(__file__).resolve().parents[2]

Policy = Callable[[bot_service_pb2.ActRequest, int], bot_service_pb2.ActResponse]


def first_legal(request: bot_service_pb2.ActRequest, call: int) -> bot_service_pb2.ActResponse:
    return bot_service_pb2.ActResponse(request_id=request.request_id, legal_action_index=0)


def last_legal(request: bot_service_pb2.ActRequest, call: int) -> bot_service_pb2.ActResponse:
    return bot_service_pb2.ActResponse(
        request_id=request.request_id, legal_action_index=len(request.legal_actions) - 1
    )


class TestBot(bot_service_pb2_grpc.BotServiceServicer):
    """An in-process bot: ``policy(request, call_number)`` answers every Act."""

    __test__ = False

    def __init__(self, policy: Policy = first_legal) -> None:
        self.policy = policy
        self.requests: list[bot_service_pb2.ActRequest] = []
        self.started: list[bot_service_pb2.StartGameRequest] = []
        self.ended: list[bot_service_pb2.EndGameRequest] = []
        self.server: grpc.Server | None = None
        self._lock = threading.Lock()

    def StartGame(
        self, request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.StartGameResponse:
        self.started.append(request)
        return bot_service_pb2.StartGameResponse()

    def Act(
        self, request: bot_service_pb2.ActRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.ActResponse:
        with self._lock:
            self.requests.append(request)
            call = len(self.requests) - 1
        return self.policy(request, call)

    def EndGame(
        self, request: bot_service_pb2.EndGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.EndGameResponse:
        self.ended.append(request)
        return bot_service_pb2.EndGameResponse()

    def Play(
        self, request_iterator: Iterator[bot_service_pb2.ActRequest], context: grpc.ServicerContext
    ) -> Iterator[bot_service_pb2.ActResponse]:
        # Act only, as every bot before the Play stream (it never sets play_stream).
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "Act only")


@contextmanager
def serve(bot: TestBot) -> Iterator[SeatBot]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(bot, server)
    health_servicer = health.HealthServicer()
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    bot.server = server
    try:
        yield SeatBot("test", "0", f"127.0.0.1:{port}")
    finally:
        server.stop(0)


def run_game(
    bots: list[TestBot], seed: int = 7, record: Path | None = None, clock: Clock = FAST
) -> MatchResult:
    with serve_all(bots) as seats:
        return play_match(USA, seats, seed, clock, record_path=record, call_s=1.0)


@contextmanager
def serve_all(bots: list[TestBot]) -> Iterator[list[SeatBot]]:
    with ExitStack() as stack:
        yield [stack.enter_context(serve(b)) for b in bots]


def kinds(result: MatchResult, seat: int) -> list[str]:
    return [f.kind for f in result.faults if f.seat == seat]


# ---------------------------------------------------------------------------------------------
# well-behaved bots, the record and its replay


def test_game_between_good_bots_has_no_faults_and_replays(tmp_path: Path) -> None:
    record = tmp_path / "sub" / "game.json"
    bots = [TestBot(first_legal), TestBot(last_legal)]
    result = run_game(bots, record=record)
    assert result.final.is_over
    assert result.faults == []
    assert result.defaults == [0, 0]
    assert [len(b.started) for b in bots] == [1, 1]
    assert [len(b.ended) for b in bots] == [1, 1]
    assert bots[0].ended[0].events[-1].WhichOneof("kind") == "game_ended"
    data = json.loads(record.read_text())
    assert data["ruleset"] == "usa@1" and data["seed"] == 7
    assert len(data["actions"]) == result.decisions
    assert data["outcome"]["seats"][0]["total"] == result.outcome.seats[0].total
    assert [p.name for p in tmp_path.joinpath("sub").iterdir()] == ["game.json"]  # no temp left
    assert verify(record) is None


def test_tampered_record_is_detected(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    run_game([TestBot(first_legal), TestBot(last_legal)], record=record)
    data = json.loads(record.read_text())

    changed = json.loads(json.dumps(data))
    changed["outcome"]["seats"][1]["total"] += 1
    path = tmp_path / "score.json"
    path.write_text(json.dumps(changed))
    diff = verify(path)
    assert diff is not None and diff.what == "final scores"

    changed = json.loads(json.dumps(data))
    n = next(i for i, a in enumerate(changed["actions"]) if a["action"]["type"] == "DrawBlind")
    changed["actions"][n]["events"][0]["card"] = (
        changed["actions"][n]["events"][0]["card"] + 1
    ) % 9
    path = tmp_path / "event.json"
    path.write_text(json.dumps(changed))
    diff = verify(path)
    assert diff is not None and diff.decision == n and diff.what == "events"

    changed = json.loads(json.dumps(data))
    changed["seed"] += 1
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(changed))
    assert verify(path) is not None


def test_cli_replay_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "game.json"
    run_game([TestBot(first_legal), TestBot(last_legal)], record=record)
    assert cli_main(["replay", "verify", str(record)]) == 0
    assert capsys.readouterr().out.startswith("OK")
    data = json.loads(record.read_text())
    data["actions"][3]["action"] = {"type": "Pass"}
    record.write_text(json.dumps(data))
    assert cli_main(["replay", "verify", str(record)]) != 0
    assert "decision 3" in capsys.readouterr().err
    record.write_text("{")
    with pytest.raises(SystemExit) as e:
        cli_main(["replay", "verify", str(record)])
    assert e.value.code == 2
    assert capsys.readouterr().err.startswith("ttr: error: ")


def test_cli_play_by_address_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with serve_all([TestBot(first_legal), TestBot(last_legal), TestBot()]) as seats:
        args = ["play", "--seed", "4", "--json", "--move-ms", "300", "--bank-ms", "1000"]
        args += ["--record", str(tmp_path / "r.json"), *(s.address for s in seats)]
        assert cli_main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"variant", "seed", "given_seed", "players", "record"}
    # sandboxed (the default), the given seed is keyed with the user's key; the record keeps
    # the game's seed
    assert out["given_seed"] == 4 and out["seed"] == play_seed(user_key(), 4)
    assert json.loads(Path(out["record"]).read_text())["seed"] == out["seed"]
    assert len(out["players"]) == 3
    assert set(out["players"][0]) == {
        "seat",
        "bot",
        "score",
        "rank",
        "tickets_completed",
        "faults",
        "breakdown",
        "log",
    }
    assert all(p["log"] is None for p in out["players"])  # a bot at an address logs itself
    assert verify(out["record"]) is None


def test_cli_play_wrong_player_count(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli_main(["play", "127.0.0.1:1"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("ttr: error: ") and err.count("\n") == 1


# ---------------------------------------------------------------------------------------------
# hostile bots


def test_slow_bot_times_out_and_spends_its_bank() -> None:
    def slow_at_first(
        request: bot_service_pb2.ActRequest, call: int
    ) -> bot_service_pb2.ActResponse:
        if call < 2:
            time.sleep(1.5)  # past move limit + bank the first time, past the move limit next
        return first_legal(request, call)

    bots = [TestBot(slow_at_first), TestBot()]
    result = run_game(bots)
    assert result.final.is_over
    assert kinds(result, 0) == ["timeout", "timeout"]
    assert kinds(result, 1) == []
    assert result.defaults[0] == 2
    assert bots[0].requests[0].clock.bank_left_ms == 1000
    assert bots[0].requests[1].clock.bank_left_ms == 0  # the first timeout spent the bank


def test_bot_that_uses_part_of_its_bank() -> None:
    def a_bit_slow(request: bot_service_pb2.ActRequest, call: int) -> bot_service_pb2.ActResponse:
        if call == 0:
            time.sleep(0.5)
        return first_legal(request, call)

    bots = [TestBot(a_bit_slow), TestBot()]
    result = run_game(bots)
    assert result.faults == []
    left = bots[0].requests[1].clock.bank_left_ms
    assert 300 <= left <= 750


def test_crashing_bot_plays_the_default_for_the_rest_of_the_game(tmp_path: Path) -> None:
    bot = TestBot()

    def crash_later(request: bot_service_pb2.ActRequest, call: int) -> bot_service_pb2.ActResponse:
        if call == 5:
            assert bot.server is not None
            bot.server.stop(0)
            time.sleep(0.5)
        return first_legal(request, call)

    bot.policy = crash_later
    record = tmp_path / "crash.json"
    result = run_game([bot, TestBot()], record=record)
    assert result.final.is_over
    assert "disconnect" in kinds(result, 0)
    assert len(bot.requests) == 6  # never called again after the disconnect
    data = json.loads(record.read_text())
    mine = [a for a in data["actions"] if a["seat"] == 0]
    assert all(a["default"] in ("gone", "disconnect", "crash") for a in mine[5:])
    assert mine[-1]["default"] == "gone"
    assert verify(record) is None


def test_handler_exception_is_a_crash_fault() -> None:
    def raises(request: bot_service_pb2.ActRequest, call: int) -> bot_service_pb2.ActResponse:
        if call == 1:
            raise RuntimeError("boom")
        return first_legal(request, call)

    result = run_game([TestBot(raises), TestBot()])
    assert kinds(result, 0) == ["crash"]
    assert result.defaults[0] == 1


@pytest.mark.parametrize(
    ("answer", "rule"),
    [
        (lambda r: bot_service_pb2.ActResponse(request_id=r.request_id), "answer.unset"),
        (
            lambda r: bot_service_pb2.ActResponse(
                request_id=r.request_id, legal_action_index=len(r.legal_actions)
            ),
            "answer.index",
        ),
        (
            lambda r: bot_service_pb2.ActResponse(request_id="nope", legal_action_index=0),
            "answer.request_id",
        ),
        (
            lambda r: bot_service_pb2.ActResponse(
                request_id=r.request_id,
                action=actions_pb2.Action(claim_route=actions_pb2.ClaimRoute(route=0)),
            ),
            "action.colour",
        ),
    ],
)
def test_garbage_answers_are_rejected_then_defaulted(
    answer: Callable[[bot_service_pb2.ActRequest], bot_service_pb2.ActResponse], rule: str
) -> None:
    bots = [TestBot(lambda r, c: answer(r)), TestBot()]
    result = run_game(bots)
    assert result.final.is_over
    mine = [f for f in result.faults if f.seat == 0]
    assert {f.kind for f in mine} == {"rejected"} and {f.rule for f in mine} == {rule}
    assert len(mine) == MAX_FAULTS_PER_DECISION * result.defaults[0]
    assert result.defaults[0] == len([r for r in bots[0].requests if not r.HasField("rejection")])
    retried = [r for r in bots[0].requests if r.HasField("rejection")]
    assert retried and all(r.rejection.rule == rule for r in retried)


def test_illegal_actions_forever_name_the_engine_rule() -> None:
    def illegal(request: bot_service_pb2.ActRequest, call: int) -> bot_service_pb2.ActResponse:
        # Keep no ticket (setup/keep) or take face-up slot 99 (turns): always illegal.
        kind = request.legal_actions[0].WhichOneof("kind")
        action = (
            actions_pb2.Action(keep_tickets=actions_pb2.KeepTickets())
            if kind == "keep_tickets"
            else actions_pb2.Action(draw_face_up=actions_pb2.DrawFaceUp(slot=99))
        )
        return bot_service_pb2.ActResponse(request_id=request.request_id, action=action)

    result = run_game([TestBot(illegal), TestBot()])
    assert result.final.is_over
    rules = {f.rule for f in result.faults if f.seat == 0}
    assert rules and not any(r.startswith("answer.") for r in rules)
    assert all(f.kind == "rejected" for f in result.faults)


def test_rejected_answer_may_be_corrected() -> None:
    def fix_on_retry(request: bot_service_pb2.ActRequest, call: int) -> bot_service_pb2.ActResponse:
        if not request.HasField("rejection"):
            return bot_service_pb2.ActResponse(request_id=request.request_id)
        # Answer with the full action message this time.
        return bot_service_pb2.ActResponse(
            request_id=request.request_id, action=request.legal_actions[0]
        )

    bots = [TestBot(fix_on_retry), TestBot()]
    result = run_game(bots)
    assert result.defaults[0] == 0
    assert {f.rule for f in result.faults} == {"answer.unset"}
    ids = [r.request_id for r in bots[0].requests]
    assert len(ids) == len(set(ids))  # every retry has a new request id


def test_start_game_failure_is_recorded_not_fatal() -> None:
    class NoStart(TestBot):
        def StartGame(
            self, request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
        ) -> bot_service_pb2.StartGameResponse:
            raise RuntimeError("not today")

    result = run_game([NoStart(), TestBot()])
    assert result.final.is_over
    assert kinds(result, 0) == ["start_game"]


def test_start_and_end_game_go_to_every_seat_at_once_and_faults_stay_in_seat_order() -> None:
    """The referee calls every seat's StartGame before it waits for any (and EndGame alike),
    so a game waits for its slowest bot there, not for all of theirs in turn: each slow bot's
    call begins before any ends. The seats' StartGame and EndGame faults (the first bot's
    fail late, the third's at once) are recorded in seat order all the same, as one call after
    the other recorded them."""
    pause_s = 1.0

    class Slow(TestBot):
        def __init__(self, fail: bool = False) -> None:
            super().__init__()
            self.fail = fail
            self.spans: dict[str, tuple[float, float]] = {}

        def _pause(self, what: str, context: grpc.ServicerContext) -> None:
            began = time.monotonic()
            time.sleep(pause_s)
            self.spans[what] = (began, time.monotonic())
            if self.fail:
                context.abort(grpc.StatusCode.INTERNAL, f"late {what}")

        def StartGame(
            self, request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
        ) -> bot_service_pb2.StartGameResponse:
            self._pause("start", context)
            return super().StartGame(request, context)

        def EndGame(
            self, request: bot_service_pb2.EndGameRequest, context: grpc.ServicerContext
        ) -> bot_service_pb2.EndGameResponse:
            self._pause("end", context)
            return super().EndGame(request, context)

    class Fails(TestBot):
        def StartGame(
            self, request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
        ) -> bot_service_pb2.StartGameResponse:
            context.abort(grpc.StatusCode.INTERNAL, "no start")

        def EndGame(
            self, request: bot_service_pb2.EndGameRequest, context: grpc.ServicerContext
        ) -> bot_service_pb2.EndGameResponse:
            context.abort(grpc.StatusCode.INTERNAL, "no end")

    slow = [Slow(fail=True), Slow(), Slow()]
    bots: list[TestBot] = [slow[0], slow[1], Fails(), slow[2]]
    with serve_all(bots) as seats:
        result = play_match(USA, seats, 5, FAST, call_s=10.0)
    for what in ("start", "end"):
        spans = [b.spans[what] for b in slow]
        assert max(began for began, _ in spans) < min(ended for _, ended in spans), what
    assert [len(b.ended) for b in slow] == [0, 1, 1]
    edges = [(f.seat, f.kind, f.message) for f in result.faults if f.decision == -1]
    assert edges == [
        (0, "start_game", "late start"),
        (2, "start_game", "no start"),
        (0, "end_game", "late end"),
        (2, "end_game", "no end"),
    ]


# ---------------------------------------------------------------------------------------------
# what a seat receives depends only on what it may know


def test_act_request_unchanged_when_only_hidden_facts_change() -> None:
    rng = random.Random(3)
    state = new_game(USA, 3, 11)
    trail = []
    for _ in range(40):
        before = state
        state = apply(state, rng.choice(legal_actions(state)))
        trail.append((before, state))
    seat = state.seat
    others = [s for s in range(3) if s != seat]
    clock = bot_service_pb2.Clock(move_limit_ms=200, bank_left_ms=1000)

    # Hidden facts: the deck order, the other seats' hands (same sizes) and tickets.
    deck = list(state.deck)
    rng.shuffle(deck)
    hands = list(state.hands)
    for o in others:
        h = list(hands[o])
        kind = next(k for k, n in enumerate(h) if n)
        h[kind] -= 1
        h[(kind + 1) % len(h)] += 1  # same hand size, different cards
        hands[o] = tuple(h)
    tickets = list(state.tickets)
    used = {t for ts in state.tickets for t in ts} | {t for ts in state.offered for t in ts}
    spare = [t for t in range(len(USA.tickets)) if t not in used]
    for o in others:
        tickets[o] = tuple(spare[: len(tickets[o])])
        spare = spare[len(tickets[o]) :]
    perturbed = dataclasses.replace(
        state, deck=tuple(deck), hands=tuple(hands), tickets=tuple(tickets)
    )
    assert perturbed.hands != state.hands and perturbed.deck != state.deck

    events = [project(e, seat) for _, s in trail for e in s.events]
    hidden_changed = [
        BlindDrawn(e.seat, ((e.card or 0) + 1) % 9)
        if isinstance(e, BlindDrawn) and e.seat != seat
        else e
        for _, s in trail
        for e in s.events
    ]
    events_perturbed = [project(e, seat) for e in hidden_changed]
    assert hidden_changed != [e for _, s in trail for e in s.events]

    a = act_request(state, legal_actions(state), events, "g", "r", clock)
    b = act_request(perturbed, legal_actions(perturbed), events_perturbed, "g", "r", clock)
    assert a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def test_requests_over_the_wire_hide_other_seats_cards() -> None:
    bots = [TestBot(), TestBot(last_legal), TestBot()]
    run_game(bots, seed=2)
    for seat, bot in enumerate(bots):
        for request in bot.requests:
            assert request.view.seat == seat
            for msg in request.events:
                event = wire.event_from_pb(msg)
                if isinstance(event, BlindDrawn) and event.seat != seat:
                    assert event.card is None


# ---------------------------------------------------------------------------------------------
# the launcher


def write_bot(folder: Path, script: str, toml: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(textwrap.dedent(script))
    (folder / "bot.toml").write_text(
        toml
        if toml is not None
        else 'name = "t"\nversion = "1"\ncommand = ["{python}", "bot.py"]\n'
    )
    return folder


HEALTHY_BOT = """
    import os, subprocess, sys, time
    from concurrent import futures
    import grpc
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc
    child = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"])
    print("child", child.pid, flush=True)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    h = health.HealthServicer()
    h.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(h, server)
    server.add_insecure_port(os.environ["TTR_BOT_ADDRESS"])
    server.start()
    print("listening on", os.environ["TTR_BOT_ADDRESS"], flush=True)
    server.wait_for_termination()
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); look at its state.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.split(")")[-1].split()[0] != "Z"


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox", "no-sandbox"])
def test_launcher_starts_and_stops_a_bot_with_its_children(tmp_path: Path, sandboxed: bool) -> None:
    """The child ignores SIGTERM; stop() must still end it. Its pid is read from the host's
    side (the bot's own print would be a pid of its namespace when sandboxed)."""
    folder = write_bot(tmp_path / "bot", HEALTHY_BOT)
    sandbox = SandboxConfig() if sandboxed else NO_SANDBOX
    with launch(folder, startup_s=10, sandbox=sandbox) as bot:
        if sandboxed:
            assert bot.address.startswith("unix:/") and bot.address.endswith("/bot.sock")
        else:
            assert bot.address.startswith("127.0.0.1:")
        assert bot.name == "t" and bot.version == "1"
        process = bot.process
        assert process is not None
        below = bot.processes()
        # sandboxed: bwrap's init, the bot, its child (and prlimit/setpriv exec into the bot)
        assert len(below) >= (3 if sandboxed else 1)
        assert all(_alive(pid) for pid in below)
    assert process.poll() is not None
    deadline = time.monotonic() + 3
    while any(_alive(pid) for pid in below) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in below)


def test_launcher_reports_a_bot_that_exits(tmp_path: Path) -> None:
    folder = write_bot(
        tmp_path / "b",
        "import sys\nprint('no luck: missing model', file=sys.stderr)\nsys.exit(3)\n",
    )
    with pytest.raises(BotStartError) as e, launch(folder, startup_s=5):
        pass
    message = str(e.value)
    assert "'t'" in message and "status 3" in message and "no luck: missing model" in message


def test_launcher_reports_a_bot_that_never_gets_healthy(tmp_path: Path) -> None:
    folder = write_bot(
        tmp_path / "b",
        "import sys, time\nprint('warming up', file=sys.stderr, flush=True)\ntime.sleep(30)\n",
    )
    start = time.monotonic()
    with pytest.raises(BotStartError) as e, launch(folder, startup_s=1):
        pass
    assert time.monotonic() - start < 6
    assert "not healthy" in str(e.value) and "warming up" in str(e.value)


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ('version = "1"\ncommand = ["x"]\n', "name"),
        ('name = "a"\ncommand = ["x"]\n', "version"),
        ('name = "a"\nversion = "1"\n', "command"),
        ('name = "a"\nversion = "1"\ncommand = "python bot.py"\n', "command"),
        ('name = "a"\nversion = "1"\ncommand = []\n', "command"),
        ('name = 3\nversion = "1"\ncommand = ["x"]\n', "name"),
    ],
)
def test_bot_toml_errors_name_file_and_key(tmp_path: Path, toml: str, key: str) -> None:
    folder = write_bot(tmp_path / "b", "", toml)
    with pytest.raises(BotConfigError) as e:
        load_bot_config(folder)
    assert str(folder / "bot.toml") in str(e.value) and f"`{key}`" in str(e.value)


def test_bot_toml_missing_or_invalid(tmp_path: Path) -> None:
    with pytest.raises(BotConfigError, match=r"no bot\.toml"):
        load_bot_config(tmp_path)
    (tmp_path / "bot.toml").write_text("name = ")
    with pytest.raises(BotConfigError, match="not valid TOML"):
        load_bot_config(tmp_path)


def test_cli_play_with_a_bot_that_will_not_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write_bot(tmp_path / "bad", "raise SystemExit('cannot load weights')\n")
    good = write_bot(tmp_path / "good", HEALTHY_BOT)
    with pytest.raises(SystemExit) as e:
        cli_main(["play", "--startup-s", "5", str(good), str(bad)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("ttr: error: bot 't' exited") and "cannot load weights" in err


SAMPLES = [ROOT / "sample_bots" / n for n in ("random", "greedy", "planner")]


@pytest.mark.skipif(
    not all((p / "bot.toml").exists() for p in SAMPLES), reason="sample bots not present"
)
def test_sample_bots_play_through_the_launcher(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    with (
        launch(SAMPLES[0], python=sys.executable) as a,
        launch(SAMPLES[1]) as b,
        launch(SAMPLES[2]) as c,
    ):
        seats = [SeatBot(x.name, x.version, x.address) for x in (a, b, c)]
        result = play_match(USA, seats, 5, Clock(1000, 20000), record_path=record)
    assert result.final.is_over
    assert result.faults == []
    assert [s["name"] for s in json.loads(record.read_text())["seats"]] == [
        "random",
        "greedy",
        "planner",
    ]
    assert verify(record) is None
