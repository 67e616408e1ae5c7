"""Compliance kit: check a running bot answers every decision legally and in time.

Plays seeded games through the engine in this process, with the bot under test at one seat
(rotating across games) and random players at the others, calling the bot over gRPC exactly as
the referee does (StartGame, Act with a deadline, EndGame) and under the referee's clocks: a
decision may take ``move_limit_ms``, and time beyond it comes out of the game's bank
(``bank_ms``), so the deadline of each Act is the move limit plus the bank left. A fault is
any failed call, a late answer, an answer with the wrong request id, or an answer that is not
a legal action; the seat then plays a random legal action and the game goes on. A bot that
cannot be reached any more (``disconnect``: its process is gone) is not called again, and no
further game is started.

    python -m sdk.compliance --address 127.0.0.1:50051 --games 20

prints the report and exits non-zero on any fault. ``ttr check BOT_DIR`` starts a bot folder
and runs this for every variant the bot declares.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from referee.games.protocol import DEFAULT_CALL_S, judge
from referee.games.registry import AnyRuleset, family_of, load
from referee.stream import NO_ANSWER, PlayStream
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc

#: Either rules family's values (referee/games/registry.py): the kit plays both.
Action = Any
GameState = Any
Event = Any

__all__ = ["ComplianceReport", "Fault", "check_bot", "main", "play_game"]


@dataclass(frozen=True, slots=True)
class Fault:
    game: int  #: game number (its seed is the run's seed plus this)
    decision: int  #: the bot's decision number in that game (0 for StartGame/EndGame)
    #: rpc (an error status from the bot's handler), disconnect (the bot cannot be reached),
    #: timeout, request_id, index, illegal, malformed
    kind: str
    message: str


#: How many messages of each fault kind a report shows.
SHOWN_PER_KIND = 3


@dataclass(slots=True)
class ComplianceReport:
    games: int = 0
    decisions: int = 0
    faults: list[Fault] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    variant: str = ""  #: ``name@version`` of the games played
    seats: int = 0
    move_limit_ms: int = 0
    bank_ms: int = 0  #: the bank each game starts with
    max_bank_used_ms: float = 0.0  #: the most bank any one game used
    #: why the bot stopped being called (it cannot be reached), or ''
    gone: str = ""
    #: decisions asked on the bot's Play stream (a bot that offers it; the rest over Act)
    streamed: int = 0

    @property
    def ok(self) -> bool:
        return not self.faults

    def by_kind(self) -> dict[str, list[Fault]]:
        """The faults by kind, in the order each kind first occurred."""
        kinds: dict[str, list[Fault]] = {}
        for f in self.faults:
            kinds.setdefault(f.kind, []).append(f)
        return kinds

    def details(self) -> Iterator[str]:
        """The report's lines after its counts: timing against the clock, then each kind of
        fault with its first messages."""
        yield (
            f"slowest answer {self.max_latency_ms:.1f} ms, mean {self.mean_latency_ms:.1f} ms; "
            f"clock {self.move_limit_ms} ms per move + {self.bank_ms} ms bank per game "
            f"(most bank used in a game: {self.max_bank_used_ms:.0f} ms)"
        )
        if self.gone:
            yield f"stopped: {self.gone}"
        for kind, faults in self.by_kind().items():
            yield f"{kind}: {len(faults)}"
            for f in faults[:SHOWN_PER_KIND]:
                where = f"game {f.game}" + (f" decision {f.decision}" if f.decision else "")
                yield f"  {where}: {f.message}"
            if len(faults) > SHOWN_PER_KIND:
                yield f"  ... and {len(faults) - SHOWN_PER_KIND} more"

    @property
    def max_latency_ms(self) -> float:
        return max(self.latencies_ms, default=0.0)

    @property
    def mean_latency_ms(self) -> float:
        return statistics.fmean(self.latencies_ms) if self.latencies_ms else 0.0

    def summary(self) -> str:
        lines = [
            f"variant: {self.variant}, {self.seats} seats",
            f"games: {self.games}",
            f"decisions: {self.decisions}"
            + (f" ({self.streamed} on the Play stream)" if self.streamed else ""),
            f"faults: {len(self.faults)}",
            *self.details(),
            "PASS" if self.ok else "FAIL",
        ]
        return "\n".join(lines)


def play_game(
    stub: bot_service_pb2_grpc.BotServiceStub,
    ruleset: AnyRuleset,
    num_seats: int,
    seed: int,
    bot_seat: int,
    report: ComplianceReport,
    game_number: int = 0,
    move_limit_ms: int = 1000,
    bank_ms: int = 0,
    channel: grpc.Channel | None = None,
) -> GameState:
    """One game with the bot at ``bot_seat``; faults and latencies go into ``report`` (its
    ``gone`` set when the bot cannot be reached any more). With ``channel`` (the stub's), a
    bot that offers the Play stream is asked on it, as the referee would, until the stream
    fails; then over Act."""
    game_id = f"compliance-{seed}-{bot_seat}"
    family = family_of(ruleset)
    # The other seats, and the bot's seat when its answer is not accepted, play uniformly at
    # random from their own RNG (the deal does not depend on how they play).
    choose = random.Random(f"compliance/{seed}/{bot_seat}").choice

    def fault(decision: int, kind: str, message: str) -> None:
        report.faults.append(Fault(game_number, decision, kind, message))

    def call_failed(decision: int, call: str, e: grpc.RpcError, elapsed_ms: float) -> None:
        code = e.code() if isinstance(e, grpc.Call) else None
        details = e.details() if isinstance(e, grpc.Call) else str(e)
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            fault(decision, "timeout", f"{call}: no answer in {elapsed_ms:.0f} ms")
        elif code is grpc.StatusCode.UNAVAILABLE:
            report.gone = f"the bot cannot be reached ({call}: {details})"
            fault(decision, "disconnect", f"{call} failed: {code}: {details}")
        else:
            fault(decision, "rpc", f"{call} failed: {code}: {details}")

    state = family.new_game(ruleset, num_seats, seed)
    report.games += 1
    start = bot_service_pb2.StartGameRequest(
        game_id=game_id,
        variant=ruleset.ident,
        seat=bot_seat,
        num_seats=num_seats,
        clock=bot_service_pb2.ClockSettings(move_limit_ms=move_limit_ms, bank_ms=bank_ms),
    )
    family.fill_start_for_seat(start, ruleset, seed)
    call_s = max(move_limit_ms / 1000, DEFAULT_CALL_S)
    t0 = time.perf_counter()
    stream: PlayStream | None = None
    try:
        started_pb = stub.StartGame(start, timeout=call_s)
        started = True
        if started_pb.play_stream and channel is not None:
            stream = PlayStream(channel, _PLAY_METHOD)
    except grpc.RpcError as e:
        call_failed(0, "StartGame", e, (time.perf_counter() - t0) * 1000)
        started = False

    bank_left = float(bank_ms)
    pending: list[Event] = [family.project(e, bot_seat) for e in state.events]
    decision = 0
    while not state.is_over:
        legal = family.legal_actions(state)
        seat = state.seat
        if seat != bot_seat or not started or report.gone:
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
                bot_service_pb2.Clock(move_limit_ms=move_limit_ms, bank_left_ms=int(bank_left)),
            )
            pending = []
            budget_ms = move_limit_ms + bank_left
            chosen: Action | None = None
            t0 = time.perf_counter()
            try:
                if stream is None:
                    response = stub.Act(request, timeout=budget_ms / 1000)
                else:
                    report.streamed += 1
                    response = _ask_stream(stream, request, budget_ms)
            except grpc.RpcError as e:
                elapsed_ms = (time.perf_counter() - t0) * 1000
                call_failed(decision, "Act" if stream is None else "Play", e, elapsed_ms)
                if stream is not None:  # as the referee: Act for the rest of the game
                    stream.close()
                    stream = None
            except _StreamFault as e:
                elapsed_ms = (time.perf_counter() - t0) * 1000
                fault(decision, e.kind, f"Play: {e}")
                stream.close()  # type: ignore[union-attr]
                stream = None
            else:
                elapsed_ms = (time.perf_counter() - t0) * 1000
                report.latencies_ms.append(elapsed_ms)
                if elapsed_ms > budget_ms:
                    fault(
                        decision,
                        "timeout",
                        f"answered in {elapsed_ms:.0f} ms; the limit was {move_limit_ms} ms "
                        f"+ {bank_left:.0f} ms of bank",
                    )
                else:
                    verdict = judge(response, request_id, legal, state, family)
                    if verdict.accepted:
                        chosen = verdict.action
                    else:
                        fault(decision, verdict.kind, f"{verdict.message} [{verdict.rule}]")
            # As the referee: time beyond the move limit comes out of the bank.
            bank_left = max(0.0, bank_left - max(0.0, elapsed_ms - move_limit_ms))
            report.max_bank_used_ms = max(report.max_bank_used_ms, bank_ms - bank_left)
            action = chosen if chosen is not None else choose(legal)
        state = family.apply(state, action)
        pending.extend(family.project(e, bot_seat) for e in state.events)

    if stream is not None:
        stream.close(1.0)
    if started and not report.gone:
        t0 = time.perf_counter()
        try:
            stub.EndGame(
                bot_service_pb2.EndGameRequest(
                    game_id=game_id,
                    outcome=family.outcome_to_pb(family.outcome(state)),
                    events=family.events_to_pb(pending),
                    view=family.view_to_pb(family.view(state, bot_seat)),
                ),
                timeout=call_s,
            )
        except grpc.RpcError as e:
            call_failed(0, "EndGame", e, (time.perf_counter() - t0) * 1000)
    return state


_PLAY_METHOD = f"/{bot_service_pb2.DESCRIPTOR.services_by_name['BotService'].full_name}/Play"


class _StreamFault(Exception):
    """The Play stream brought no answer: it timed out, or the bot ended it."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _ask_stream(
    stream: PlayStream, request: bot_service_pb2.ActRequest, budget_ms: float
) -> bot_service_pb2.ActResponse:
    got = stream.ask(request, budget_ms / 1000)
    if isinstance(got, grpc.RpcError):
        raise got
    if got is NO_ANSWER:
        raise _StreamFault("timeout", f"no answer in {budget_ms:.0f} ms")
    if not isinstance(got, bytes):
        raise _StreamFault("rpc", "the bot ended its Play stream without answering")
    try:
        return bot_service_pb2.ActResponse.FromString(got)
    except DecodeError as e:
        raise _StreamFault("malformed", f"the answer is not an ActResponse: {e}") from None


def check_bot(
    address: str,
    games: int = 10,
    variant: str = "usa",
    seats: int = 2,
    seed: int = 1,
    move_limit_ms: int = 1000,
    bank_ms: int = 0,
) -> ComplianceReport:
    """Play ``games`` games against the bot at ``address`` and report how it answered; game
    ``g`` is dealt from ``seed + g`` with the bot at seat ``g % seats``. Stops early when the
    bot cannot be reached."""
    ruleset = load(variant)
    report = ComplianceReport(
        variant=ruleset.ident, seats=seats, move_limit_ms=move_limit_ms, bank_ms=bank_ms
    )
    with grpc.insecure_channel(address) as channel:
        try:
            grpc.channel_ready_future(channel).result(timeout=10)
        except grpc.FutureTimeoutError:
            report.gone = f"no bot answers at {address}"
            report.faults.append(Fault(0, 0, "disconnect", report.gone))
            return report
        stub = bot_service_pb2_grpc.BotServiceStub(channel)
        for g in range(games):
            play_game(
                stub,
                ruleset,
                seats,
                seed + g,
                g % seats,
                report,
                g,
                move_limit_ms=move_limit_ms,
                bank_ms=bank_ms,
                channel=channel,
            )
            if report.gone:
                break
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
    parser.add_argument("--bank-ms", type=int, default=0, help="time bank per game (default 0)")
    args = parser.parse_args(argv)
    report = check_bot(
        args.address,
        args.games,
        args.variant,
        args.seats,
        args.seed,
        args.move_limit_ms,
        args.bank_ms,
    )
    print(report.summary(), flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
