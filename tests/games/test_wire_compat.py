"""An old board-game bot still plays: ttr.v1 grew the card game additively.

tests/data/proto_v1_board/ holds the contract as it was before the card game was added (a
verbatim copy of proto/ttr/v1 at that commit). Here those files are compiled with
grpc_tools.protoc, and a minimal board bot built on the old stubs runs in a subprocess whose
PYTHONPATH puts them first. It plays a real ``usa`` game against the current referee with no
fault, every request it gets parses with no unknown field, and the current referee's board
StartGame, Act and EndGame requests re-serialize with the old stubs to the very bytes sent: a
board game's messages hold nothing but the old fields, byte for byte. The other
way round, the current stubs read what the old stubs write.
"""

from __future__ import annotations

import json
import os
import random
import selectors
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path

import pytest
from google.protobuf.unknown_fields import UnknownFieldSet

from referee.games.board import (
    Action,
    SeatView,
    apply,
    legal_actions,
    load_ruleset,
    new_game,
    outcome,
    view,
    wire,
)
from referee.games.board.events import project
from referee.match import Clock, SeatBot, play_match
from sdk import Bot
from sdk.serve import start_server
from ttr.v1 import actions_pb2, bot_service_pb2

OLD_PROTOS = Path(__file__).resolve().parents[1] / "data" / "proto_v1_board"
USA = load_ruleset("usa")

#: The old bot: the old stubs only (it checks that they are the ones imported), stateless
#: answers (an index, or every third time the legal action itself), and a JSON report of what
#: it saw (unknown fields counted), rewritten after every EndGame. ``check IN OUT`` instead
#: reads requests the current referee wrote and writes answers the old stubs make.
OLD_BOT = '''
import json, os, random, sys, threading
from concurrent import futures

import grpc
from google.protobuf.unknown_fields import UnknownFieldSet
from ttr.v1 import actions_pb2, bot_service_pb2, bot_service_pb2_grpc

OLD = os.environ["OLD_STUBS"]
assert actions_pb2.__file__.startswith(OLD), actions_pb2.__file__
assert "place_suit" not in actions_pb2.Action.DESCRIPTOR.fields_by_name
assert "card_game" not in bot_service_pb2.StartGameRequest.DESCRIPTOR.fields_by_name


def unknown(msg):
    """Unknown fields anywhere in msg."""
    n = len(UnknownFieldSet(msg))
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        for item in value if field.is_repeated else [value]:
            n += unknown(item)
    return n


class OldBot(bot_service_pb2_grpc.BotServiceServicer):
    def __init__(self, report):
        self.report = report
        self.lock = threading.Lock()
        self.rng = random.Random(int(os.environ.get("OLD_BOT_SEED", "0")))
        self.seen = {"start": 0, "act": 0, "end": 0, "unknown": 0, "by_action": 0}

    def note(self, kind, request):
        with self.lock:
            self.seen[kind] += 1
            self.seen["unknown"] += unknown(request)

    def StartGame(self, request, context):
        assert request.HasField("game_map") and request.HasField("rules")
        # StartGameRequest.bot_seed (10) came after these stubs: the one field they may not know
        assert [f.field_number for f in UnknownFieldSet(request)] == [10]
        request.DiscardUnknownFields()
        self.note("start", request)
        return bot_service_pb2.StartGameResponse()

    def Act(self, request, context):
        self.note("act", request)
        with self.lock:
            index = self.rng.randrange(len(request.legal_actions))
            whole = self.seen["act"] % 3 == 0
            self.seen["by_action"] += whole
        if whole:
            return bot_service_pb2.ActResponse(
                request_id=request.request_id, action=request.legal_actions[index]
            )
        return bot_service_pb2.ActResponse(request_id=request.request_id, legal_action_index=index)

    def EndGame(self, request, context):
        assert request.events[-1].WhichOneof("kind") == "game_ended"
        self.note("end", request)
        with self.lock:
            tmp = self.report + ".tmp"
            with open(tmp, "w") as f:
                json.dump(self.seen, f)
            os.replace(tmp, self.report)
        return bot_service_pb2.EndGameResponse()


def check(src, out):
    """Parse the current referee's board messages with the old stubs; write old answers."""
    result = {}
    for name, cls in (
        ("start", bot_service_pb2.StartGameRequest),
        ("act", bot_service_pb2.ActRequest),
        ("end", bot_service_pb2.EndGameRequest),
    ):
        data = open(os.path.join(src, name + ".bin"), "rb").read()
        msg = cls.FromString(data)
        result[name] = {"unknown": unknown(msg), "same_bytes": msg.SerializeToString() == data}
    act = bot_service_pb2.ActRequest.FromString(open(os.path.join(src, "act.bin"), "rb").read())
    result["act_legal"] = len(act.legal_actions)
    by_index = bot_service_pb2.ActResponse(request_id=act.request_id, legal_action_index=1)
    by_action = bot_service_pb2.ActResponse(
        request_id=act.request_id, action=act.legal_actions[1]
    )
    open(os.path.join(out, "by_index.bin"), "wb").write(by_index.SerializeToString())
    open(os.path.join(out, "by_action.bin"), "wb").write(by_action.SerializeToString())
    print(json.dumps(result))


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3])
        sys.exit(0)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(OldBot(sys.argv[2]), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    server.wait_for_termination()
'''


def _protoc(args: list[str]) -> int:
    from grpc_tools import protoc  # dev dependency, as in tools/gen_proto.py

    code: int = protoc.main(["grpc_tools.protoc", *args])
    return code


@pytest.fixture(scope="module")
def old_stubs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pre-card-game contract compiled into a fresh folder (messages and gRPC stubs)."""
    out = tmp_path_factory.mktemp("old_stubs")
    files = sorted(str(p) for p in (OLD_PROTOS / "ttr" / "v1").glob("*.proto"))
    assert len(files) == 7
    well_known = resources.files("grpc_tools") / "_proto"
    code = _protoc(
        [
            f"--proto_path={OLD_PROTOS}",
            f"--proto_path={well_known}",
            f"--python_out={out}",
            f"--grpc_python_out={out}",
            *files,
        ]
    )
    assert code == 0
    (out / "ttr" / "__init__.py").write_text("")
    (out / "ttr" / "v1" / "__init__.py").write_text("")
    return out


def _env(old_stubs: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(old_stubs)  # before the installed (current) ttr package
    env["OLD_STUBS"] = str(old_stubs)
    env.pop("TTR_BOT_ADDRESS", None)
    return env


def test_the_snapshot_is_the_board_contract_without_the_card_game() -> None:
    text = "\n".join(p.read_text() for p in sorted((OLD_PROTOS / "ttr" / "v1").glob("*.proto")))
    assert "package ttr.v1;" in text and "message ClaimRoute" in text
    assert "PlaceSuit" not in text and "card_game" not in text and "CardGame" not in text


def test_old_stubs_read_current_board_messages_exactly_and_current_stubs_read_old_answers(
    old_stubs: Path, tmp_path: Path
) -> None:
    # Current board messages of a real game, as the referee builds them.
    state = new_game(USA, 3, 4)
    rng = random.Random(4)
    pending = [project(e, 0) for e in state.events]
    while state.seat != 0 or state.turn < 6:
        state = apply(state, rng.choice(legal_actions(state)))
        pending.extend(project(e, 0) for e in state.events)
    legal = legal_actions(state)
    assert len(legal) > 2
    act = wire.act_request_pb(
        view(state, 0),
        pending,
        legal,
        "g",
        "r7",
        bot_service_pb2.Clock(move_limit_ms=1000, bank_left_ms=5000),
        bot_service_pb2.Rejection(rule="claim.taken", message="taken"),
    )
    start = bot_service_pb2.StartGameRequest(game_id="g", variant=USA.ident, seat=0, num_seats=3)
    game_map, rules = wire.static_bytes(USA)
    start.game_map.MergeFromString(game_map)
    start.rules.MergeFromString(rules)
    end = bot_service_pb2.EndGameRequest(
        game_id="g",
        outcome=wire.outcome_to_pb(outcome(state)),
        events=wire.events_to_pb(pending),
        view=wire.view_to_pb(view(state, 0)),
    )
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    for name, msg in (("start", start), ("act", act), ("end", end)):
        (src / f"{name}.bin").write_bytes(msg.SerializeToString())
    script = tmp_path / "old_bot.py"
    script.write_text(textwrap.dedent(OLD_BOT))
    done = subprocess.run(
        [sys.executable, str(script), "check", str(src), str(out)],
        cwd=tmp_path,
        env=_env(old_stubs),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    for name in ("start", "act", "end"):
        assert seen[name] == {"unknown": 0, "same_bytes": True}, name
    assert seen["act_legal"] == len(legal)

    # The old answers, read by the current stubs and converter.
    for name in ("by_index", "by_action"):
        response = bot_service_pb2.ActResponse.FromString((out / f"{name}.bin").read_bytes())
        assert len(UnknownFieldSet(response)) == 0 and response.request_id == "r7"
        if name == "by_index":
            assert response.WhichOneof("answer") == "legal_action_index"
            assert response.legal_action_index == 1
        else:
            assert response.WhichOneof("answer") == "action"
            assert isinstance(response.action, actions_pb2.Action)
            assert wire.action_from_pb(response.action) == legal[1]


class RandomIndexBot(Bot):
    """A current SDK bot beside the old ones."""

    def __init__(self) -> None:
        self.rng = random.Random(1)
        self.decisions = 0

    def choose(self, view: SeatView, legal: Sequence[Action]) -> int:
        self.decisions += 1
        return self.rng.randrange(len(legal))


@pytest.fixture
def old_bot(old_stubs: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The old bot serving in a subprocess: (address, report path)."""
    script = tmp_path / "old_bot.py"
    script.write_text(textwrap.dedent(OLD_BOT))
    report = tmp_path / "report.json"
    proc = subprocess.Popen(
        [sys.executable, str(script), "serve", str(report)],
        cwd=tmp_path,
        env=_env(old_stubs),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 30
        line = ""
        while not line.startswith("listening on ") and time.monotonic() < deadline:
            if selector.select(timeout=max(0.0, deadline - time.monotonic())):
                line = proc.stdout.readline()
                if not line:
                    break
        selector.close()
        if not line.startswith("listening on "):
            proc.kill()
            _, err = proc.communicate(timeout=10)
            pytest.fail(f"the old bot did not start: {err}")
        yield line.removeprefix("listening on ").strip(), report
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def test_an_old_board_bot_plays_a_usa_game_with_no_fault(old_bot: tuple[str, Path]) -> None:
    address, report = old_bot
    current = RandomIndexBot()
    running = start_server(current, "127.0.0.1:0")
    try:
        seats = [
            SeatBot("old", "1", address),
            SeatBot("current", "1", running.address),
            SeatBot("old", "1", address),
        ]
        result = play_match(USA, seats, 8, Clock(1000, 20_000), call_s=5.0)
    finally:
        running.stop(grace=0)
    assert result.final.is_over
    assert result.faults == []
    assert result.defaults == [0, 0, 0]
    seen = json.loads(report.read_text())
    assert seen["start"] == 2 and seen["end"] == 2
    assert seen["act"] + current.decisions == result.decisions
    assert seen["by_action"] > 0  # answers sent as whole old-stub Actions were accepted too
    assert seen["unknown"] == 0  # no request held a field the old stubs do not know
