"""Compliance kit: check a running bot answers every decision legally and in time.

Plays seeded games through the engine in this process, with the bot under test at one seat
(rotating across games) and random players at the others, calling the bot over gRPC exactly as
the referee does (StartGame, Act with a deadline, EndGame). A fault is any failed call, a late
answer, an answer with the wrong request id, or an answer that is not a legal action; the seat
then plays a random legal action and the game goes on.

    python -m sdk.compliance --address 127.0.0.1:50051 --games 20

prints the report and exits non-zero on any fault.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from referee.family import AnyRuleset, Family, family_of, load
from referee.rules import IllegalActionError, MalformedActionError
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc

#: Either rules family's values (referee/family.py): the kit plays both.
Action = Any
GameState = Any
Event = Any

__all__ = ["ComplianceReport", "Fault", "check_bot", "main", "play_game"]


@dataclass(frozen=True, slots=True)
class Fault:
    game: int  #: game number (its seed is the run's seed plus this)
    decision: int  #: the bot's decision number in that game (0 for StartGame/EndGame)
    kind: str  #: rpc, timeout, request_id, index, illegal, malformed
    message: str


@dataclass(slots=True)
class ComplianceReport:
    games: int = 0
    decisions: int = 0
    faults: list[Fault] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.faults

    @property
    def max_latency_ms(self) -> float:
        return max(self.latencies_ms, default=0.0)

    @property
    def mean_latency_ms(self) -> float:
        return statistics.fmean(self.latencies_ms) if self.latencies_ms else 0.0

    def summary(self) -> str:
        lines = [
            f"games: {self.games}",
            f"decisions: {self.decisions}",
            f"faults: {len(self.faults)}",
            f"latency ms: max {self.max_latency_ms:.1f}, mean {self.mean_latency_ms:.1f}",
        ]
        for f in self.faults[:20]:
            lines.append(f"  game {f.game} decision {f.decision}: {f.kind}: {f.message}")
        if len(self.faults) > 20:
            lines.append(f"  ... and {len(self.faults) - 20} more")
        lines.append("PASS" if self.ok else "FAIL")
        return "\n".join(lines)


def _judge(
    response: bot_service_pb2.ActResponse,
    request_id: str,
    legal: Sequence[Action],
    state: GameState,
    family: Family,
) -> tuple[Action | None, str, str]:
    """The bot's action, or None with the fault kind and message."""
    if response.request_id != request_id:
        return None, "request_id", f"answered {response.request_id!r}, expected {request_id!r}"
    answer = response.WhichOneof("answer")
    if answer == "legal_action_index":
        i = response.legal_action_index
        if i >= len(legal):
            return None, "index", f"index {i} but only {len(legal)} legal actions"
        return legal[i], "", ""
    if answer == "action":
        try:
            action = family.action_from_pb(response.action)
            family.apply(state, action)
        except MalformedActionError as e:
            return None, "malformed", str(e)
        except IllegalActionError as e:
            return None, "illegal", str(e)
        return action, "", ""
    return None, "malformed", "the answer sets neither legal_action_index nor action"


def play_game(
    stub: bot_service_pb2_grpc.BotServiceStub,
    ruleset: AnyRuleset,
    num_seats: int,
    seed: int,
    bot_seat: int,
    report: ComplianceReport,
    game_number: int = 0,
    move_limit_ms: int = 1000,
) -> GameState:
    """One game with the bot at ``bot_seat``; faults and latencies go into ``report``."""
    game_id = f"compliance-{seed}-{bot_seat}"
    limit_s = move_limit_ms / 1000
    family = family_of(ruleset)
    # The other seats, and the bot's seat when its answer is not accepted, play uniformly at
    # random from their own RNG (the deal does not depend on how they play).
    choose = random.Random(f"compliance/{seed}/{bot_seat}").choice

    def fault(decision: int, kind: str, message: str) -> None:
        report.faults.append(Fault(game_number, decision, kind, message))

    state = family.new_game(ruleset, num_seats, seed)
    report.games += 1
    started = True
    start = bot_service_pb2.StartGameRequest(
        game_id=game_id,
        variant=ruleset.ident,
        seat=bot_seat,
        num_seats=num_seats,
        clock=bot_service_pb2.ClockSettings(move_limit_ms=move_limit_ms, bank_ms=0),
    )
    family.fill_start(start, ruleset)
    try:
        stub.StartGame(start, timeout=max(limit_s, 5.0))
    except grpc.RpcError as e:
        fault(0, "rpc", f"StartGame failed: {e.code()}: {e.details()}")
        started = False

    pending: list[Event] = [family.project(e, bot_seat) for e in state.events]
    decision = 0
    while not state.is_over:
        legal = family.legal_actions(state)
        seat = state.seat
        if seat != bot_seat or not started:
            action = choose(legal)
        else:
            decision += 1
            report.decisions += 1
            request_id = f"{game_id}/{decision}"
            request = family.act_request_pb(
                family.view(state, seat),
                pending,
                legal,
                game_id,
                request_id,
                bot_service_pb2.Clock(move_limit_ms=move_limit_ms, bank_left_ms=0),
            )
            pending = []
            t0 = time.perf_counter()
            chosen: Action | None = None
            try:
                response = stub.Act(request, timeout=limit_s)
            except grpc.RpcError as e:
                kind = "timeout" if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED else "rpc"
                fault(decision, kind, f"Act failed: {e.code()}: {e.details()}")
            else:
                elapsed = time.perf_counter() - t0
                report.latencies_ms.append(elapsed * 1000)
                if elapsed > limit_s:
                    fault(decision, "timeout", f"answered in {elapsed * 1000:.0f} ms")
                else:
                    chosen, kind, message = _judge(response, request_id, legal, state, family)
                    if chosen is None:
                        fault(decision, kind, message)
            action = chosen if chosen is not None else choose(legal)
        state = family.apply(state, action)
        pending.extend(family.project(e, bot_seat) for e in state.events)

    if started:
        try:
            stub.EndGame(
                bot_service_pb2.EndGameRequest(
                    game_id=game_id,
                    outcome=family.outcome_to_pb(family.outcome(state)),
                    events=family.events_to_pb(pending),
                    view=family.view_to_pb(family.view(state, bot_seat)),
                ),
                timeout=max(limit_s, 5.0),
            )
        except grpc.RpcError as e:
            fault(0, "rpc", f"EndGame failed: {e.code()}: {e.details()}")
    return state


def check_bot(
    address: str,
    games: int = 10,
    variant: str = "usa",
    seats: int = 2,
    seed: int = 1,
    move_limit_ms: int = 1000,
) -> ComplianceReport:
    """Play ``games`` games against the bot at ``address`` and report how it answered."""
    ruleset = load(variant)
    report = ComplianceReport()
    with grpc.insecure_channel(address) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=10)
        except grpc.FutureTimeoutError:
            report.faults.append(Fault(0, 0, "rpc", f"no bot answers at {address}"))
            return report
        stub = bot_service_pb2_grpc.BotServiceStub(channel)
        for g in range(games):
            play_game(
                stub, ruleset, seats, seed + g, g % seats, report, g, move_limit_ms=move_limit_ms
            )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sdk.compliance",
        description="Check that a running bot answers legally and in time.",
    )
    parser.add_argument("--address", required=True, help="HOST:PORT of the running bot")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--variant", default="usa", help="usa (default), ..., or cardgame")
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--move-limit-ms", type=int, default=1000)
    args = parser.parse_args(argv)
    report = check_bot(
        args.address, args.games, args.variant, args.seats, args.seed, args.move_limit_ms
    )
    print(report.summary(), flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
