"""Wire benchmark: referee games over gRPC against a bare gRPC ping-pong of the same traffic.

    python bench/wire.py [--games N] [--repeat R] [--variant V] [--json]

1. Referee: N four-player games (seeds 1..N) against four random sample bots, each its own
   process started by the launcher (sample_bots/random), as ``ttr match`` plays them. A first,
   untimed pass records every call's seat and serialized request and response sizes (a client
   interceptor); the timed passes run the plain referee. The game ids are fixed, so every pass
   plays the same games.
2. Bare: four minimal gRPC servers (one process per seat, a generic bytes-in/bytes-out unary
   handler) answer each request with a payload of the recorded response size. The client
   replays the recorded calls (StartGame, Act and EndGame alike) in order, sequentially, each
   to its seat's server, with requests of the recorded sizes, opening one channel per server
   per game as the referee does.

Prints the best of R runs of each and the referee's overhead over the bare exchange,
``referee time / bare time - 1``, next to the target (at most 30%).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import signal
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import grpc
from google.protobuf.message import Message

import referee.match
from referee.launcher import free_port, launch
from referee.match import Match, SeatBot
from referee.rules import Ruleset, load_ruleset
from ttr.v1 import bot_service_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "random"
PLAYERS = 4
TARGET_OVERHEAD = 0.30
BARE_METHOD = "/bench.Bare/Echo"
_HEADER = struct.Struct("<I")  # the bare request's first bytes: the response size wanted


@dataclass(frozen=True, slots=True)
class Call:
    """One recorded RPC: the seat (= server) it went to and its serialized sizes."""

    seat: int
    method: str
    request_bytes: int
    response_bytes: int


# ---------------------------------------------------------------------------------------------
# referee


class _Sizer(grpc.UnaryUnaryClientInterceptor):  # type: ignore[type-arg]
    """Records each call's serialized request and response sizes."""

    def __init__(self, seat: int, log: list[Call]) -> None:
        self.seat = seat
        self.log = log

    def intercept_unary_unary(
        self,
        continuation: Callable[[grpc.ClientCallDetails, Message], grpc.CallFuture[Message]],
        client_call_details: grpc.ClientCallDetails,
        request: Message,
    ) -> grpc.CallFuture[Message]:
        call = continuation(client_call_details, request)
        response = call.result()
        method = client_call_details.method
        name = method.rsplit("/", 1)[-1] if isinstance(method, str) else str(method)
        self.log.append(Call(self.seat, name, request.ByteSize(), response.ByteSize()))
        return call


def _record_sizes(
    ruleset: Ruleset, bots: list[SeatBot], seeds: range
) -> tuple[list[list[Call]], list[int]]:
    """Play the games once with a sizing interceptor on every seat: the calls of each game
    and its number of decisions."""
    log: list[Call] = []
    seat_of = {b.address: i for i, b in enumerate(bots)}

    class SizedSeat(referee.match._Seat):
        def __init__(self, bot: SeatBot) -> None:
            super().__init__(bot)
            channel = grpc.intercept_channel(self.channel, _Sizer(seat_of[bot.address], log))
            self.stub = bot_service_pb2_grpc.BotServiceStub(channel)

    games: list[list[Call]] = []
    decisions: list[int] = []
    with mock.patch.object(referee.match, "_Seat", SizedSeat):
        for seed in seeds:
            log.clear()
            result = _match(ruleset, bots, seed).run()
            games.append(list(log))
            decisions.append(result.decisions)
    return games, decisions


def _match(ruleset: Ruleset, bots: list[SeatBot], seed: int) -> Match:
    return Match(ruleset, bots, seed, game_id=f"bench-wire-{seed}")


def _play(ruleset: Ruleset, bots: list[SeatBot], seeds: range) -> tuple[float, int, int]:
    """Seconds for the games, their decisions and faults."""
    decisions = faults = 0
    start = time.perf_counter()
    for seed in seeds:
        result = _match(ruleset, bots, seed).run()
        decisions += result.decisions
        faults += len(result.faults)
    return time.perf_counter() - start, decisions, faults


# ---------------------------------------------------------------------------------------------
# bare gRPC


def serve_bare(address: str) -> None:
    """The bare server: answers each request with as many zero bytes as its header asks."""
    cache: dict[int, bytes] = {}

    def echo(request: bytes, context: grpc.ServicerContext) -> bytes:
        (size,) = _HEADER.unpack_from(request)
        reply = cache.get(size)
        if reply is None:
            reply = cache[size] = bytes(size)
        return reply

    handler = grpc.method_handlers_generic_handler(
        "bench.Bare", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    server.add_generic_rpc_handlers((handler,))
    if server.add_insecure_port(address) == 0:
        raise SystemExit(f"cannot listen on {address}")
    server.start()
    signal.signal(signal.SIGTERM, lambda signum, frame: server.stop(0))
    print(f"listening on {address}", flush=True)
    server.wait_for_termination()


@contextlib.contextmanager
def _bare_servers(count: int) -> Iterator[list[str]]:
    procs: list[subprocess.Popen[bytes]] = []
    addresses: list[str] = []
    try:
        for _ in range(count):
            address = f"127.0.0.1:{free_port()}"
            procs.append(
                subprocess.Popen(
                    [sys.executable, __file__, "--serve-bare", address],
                    cwd=ROOT,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                )
            )
            addresses.append(address)
        for address in addresses:
            with grpc.insecure_channel(address) as channel:
                grpc.channel_ready_future(channel).result(timeout=10.0)
        yield addresses
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _payload(call: Call) -> bytes:
    return _HEADER.pack(call.response_bytes) + bytes(max(0, call.request_bytes - _HEADER.size))


def _exchange(addresses: list[str], games: list[list[bytes | int]]) -> float:
    """Seconds to replay the games' calls, one channel per server per game like the referee.
    ``games``: per game, alternating seat numbers and request payloads."""
    start = time.perf_counter()
    for game in games:
        channels = [grpc.insecure_channel(a) for a in addresses]
        try:
            echo = [c.unary_unary(BARE_METHOD, None, None) for c in channels]
            for i in range(0, len(game), 2):
                seat = game[i]
                payload = game[i + 1]
                assert isinstance(seat, int) and isinstance(payload, bytes)
                echo[seat](payload, timeout=5.0)
        finally:
            for c in channels:
                c.close()
    return time.perf_counter() - start


# ---------------------------------------------------------------------------------------------


def _mean(values: list[int]) -> float:
    return statistics.fmean(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=20, help="games per run (default 20)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (default 3)")
    parser.add_argument("--variant", default="usa")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--serve-bare", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare(args.serve_bare)
        return
    if args.games < 1 or args.repeat < 1:
        parser.error("--games and --repeat must be at least 1")

    ruleset = load_ruleset(args.variant)
    seeds = range(1, args.games + 1)
    with contextlib.ExitStack() as stack:
        launched = [stack.enter_context(launch(RANDOM_BOT)) for _ in range(PLAYERS)]
        bots = [SeatBot(b.name, b.version, b.address) for b in launched]
        recorded, decisions_per_game = _record_sizes(ruleset, bots, seeds)  # also a warm-up
        runs = [_play(ruleset, bots, seeds) for _ in range(args.repeat)]
    referee_s, decisions, faults = min(runs)
    if decisions != sum(decisions_per_game):
        print("warning: the timed games differ from the recorded ones", file=sys.stderr)

    calls = [c for game in recorded for c in game]
    acts = [c for c in calls if c.method == "Act"]
    replay: list[list[bytes | int]] = [
        [x for c in game for x in (c.seat, _payload(c))] for game in recorded
    ]
    with _bare_servers(PLAYERS) as addresses:
        _exchange(addresses, replay[:1])  # warm-up
        bare_s = min(_exchange(addresses, replay) for _ in range(args.repeat))

    games = args.games
    overhead = referee_s / bare_s - 1.0
    figures: dict[str, Any] = {
        "python": platform.python_version(),
        "grpc": grpc.__version__,
        "variant": ruleset.ident,
        "players": PLAYERS,
        "games": games,
        "repeat": args.repeat,
        "referee": {
            "games_per_s": games / referee_s,
            "game_ms": referee_s / games * 1000.0,
            "decisions_per_game": decisions / games,
            "decision_ms": referee_s / decisions * 1000.0,
            "act_request_bytes": _mean([c.request_bytes for c in acts]),
            "act_response_bytes": _mean([c.response_bytes for c in acts]),
            "calls_per_game": len(calls) / games,
            "faults": faults,
        },
        "bare": {
            "messages_per_s": len(calls) / bare_s,
            "game_ms": bare_s / games * 1000.0,
            "request_bytes": _mean([c.request_bytes for c in calls]),
            "response_bytes": _mean([c.response_bytes for c in calls]),
        },
        "overhead": overhead,
        "target_overhead": TARGET_OVERHEAD,
        "calls": {m: sum(c.method == m for c in calls) for m in ("StartGame", "Act", "EndGame")},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return

    r, b = figures["referee"], figures["bare"]
    print(
        f"python {figures['python']}, grpcio {figures['grpc']}, {ruleset.ident}, "
        f"{PLAYERS} random bots, best of {args.repeat} x {games} games"
    )
    print(
        f"referee: {r['games_per_s']:7.2f} games/s, {r['game_ms']:7.1f} ms/game, "
        f"{r['decisions_per_game']:.1f} decisions/game, {r['decision_ms']:.3f} ms/decision, "
        f"Act request {r['act_request_bytes']:.0f} B, response {r['act_response_bytes']:.1f} B"
        + (f", {faults} faults" if faults else "")
    )
    print(
        f"bare:    {b['messages_per_s']:7.0f} messages/s, {b['game_ms']:7.1f} ms for one game's "
        f"{r['calls_per_game']:.1f} calls (StartGame + Act + EndGame)"
    )
    verdict = "met" if overhead <= TARGET_OVERHEAD else "NOT met"
    print(
        f"overhead: {overhead * 100:.0f}% (referee game / bare exchange - 1; "
        f"target at most {TARGET_OVERHEAD * 100:.0f}%: {verdict})"
    )


if __name__ == "__main__":
    main()
