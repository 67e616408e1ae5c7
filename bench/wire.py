"""Wire benchmark: referee games over gRPC against a bare gRPC ping-pong of the same traffic.

    python bench/wire.py [--games N] [--repeat R] [--variant V] [--no-sandbox] [--unary] [--json]

The bots run in the sandbox as in every league night (referee/hosting/sandbox.py) unless
``--no-sandbox``; run it both ways to see what the sandbox costs. Each bot's start-up time
(from starting the process to its first SERVING health check) is printed too.

1. Referee: N four-player games (seeds 1..N) against four random sample bots, each its own
   process started by the launcher (sample_bots/random), as ``ttr match`` plays them. A first,
   untimed pass records every call's seat and serialized request and response sizes (a client
   interceptor, over Act); the timed passes run the plain referee, which drives the SDK bots
   through their Play stream (``--unary``: through Act, as a bot without the stream). The game
   ids are fixed, so every pass plays the same games.
2. Bare: four minimal gRPC servers (one process per seat, a generic bytes-in/bytes-out unary
   handler) answer each request with a payload of the recorded response size. The client
   replays the recorded calls in order as the referee makes them (every seat's StartGame at
   once, each Act in turn, every seat's EndGame at once), each to its seat's server, with
   requests of the recorded sizes, opening one channel per server per game as the referee
   does for a single game (a tournament's worker keeps its channels across games).

The referee's runs and the bare runs alternate (R of each), so that a machine that gets
busier or quieter during the benchmark affects both alike. Prints the best of R runs of each
and the referee's overhead over the bare exchange, ``referee time / bare time - 1``, next to
the target (at most 30%). On Linux it also prints the CPU time per call of the client side
(the referee, or the bare client) and of the four servers together (the bots, or the bare
servers), read from /proc: where the overhead is spent, and the referee's own time per Act
between its calls (measured in the untimed first pass): what the rest of each call costs is
the bots' side and the transport.

Every ratio is printed next to the baseline of :data:`BASELINE` (bench/README.md, "Wire
overhead (issue 25)"), the figures the referee had before the Play stream, so a change shows as
a before and after on the same machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
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
from referee.games.board import Ruleset, load_ruleset
from referee.hosting.launcher import free_port, launch
from referee.hosting.sandbox import NO_SANDBOX, SandboxConfig
from referee.match import Match, SeatBot
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "random"
PLAYERS = 4
TARGET_OVERHEAD = 0.30
#: The overhead before the Play stream (commit 5f11adc, 2026-11-26, the 2-core machine of
#: bench/README.md at load 7-10, best of 4 paired runs of 3 x 10 games), by sandboxing: what
#: each run is compared with (issue 13's baseline at 9b3840d was 0.53 and 0.62, load ~2).
BASELINE_COMMIT = "5f11adc"
BASELINE = {"sandboxed": 0.75, "unsandboxed": 0.50}
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
        # Act's reply arrives as raw bytes (referee.match parses it itself); the others parsed.
        size = len(response) if isinstance(response, bytes) else response.ByteSize()
        self.log.append(Call(self.seat, name, request.ByteSize(), size))
        return call


@dataclass(slots=True)
class Recorded:
    """The untimed first pass: each game's calls and decisions, and the referee's own time."""

    games: list[list[Call]]
    decisions: list[int]
    acts: int = 0  #: Act calls made
    between_s: float = 0.0  #: the referee's time from each Act's answer to its next call


def _record_sizes(ruleset: Ruleset, bots: list[SeatBot], seeds: range) -> Recorded:
    """Play the games once with a sizing interceptor on every seat: the calls of each game,
    its number of decisions, and how long the referee works between one Act's answer and the
    next call (the game loop, the engine, the request; not the interceptor, which runs inside
    the call)."""
    log: list[Call] = []
    seat_of = {b.address: i for i, b in enumerate(bots)}
    recorded = Recorded([], [])
    last_answer: list[float] = []  #: when the last Act's answer came back (none yet per game)

    class SizedSeat(referee.match._Seat):
        def __init__(self, bot: SeatBot, kept: grpc.Channel | None = None) -> None:
            super().__init__(bot, kept)
            assert self.channel is not None  # every bench seat has a running bot
            channel = grpc.intercept_channel(self.channel, _Sizer(seat_of[bot.address], log))
            self.stub = bot_service_pb2_grpc.BotServiceStub(channel)
            act = channel.unary_unary(
                referee.match._ACT_METHOD,
                request_serializer=bot_service_pb2.ActRequest.SerializeToString,
                response_deserializer=None,
            )

            def timed_act(request: bot_service_pb2.ActRequest, timeout: float) -> bytes:
                called = time.perf_counter()
                if last_answer:
                    recorded.acts += 1
                    recorded.between_s += called - last_answer[0]
                answer: bytes = act(request, timeout=timeout)
                last_answer[:] = [time.perf_counter()]
                return answer

            self.act = timed_act  # type: ignore[assignment]

    with mock.patch.object(referee.match, "_Seat", SizedSeat):
        for seed in seeds:
            log.clear()
            last_answer.clear()
            # Over Act: the interceptor sees unary calls only; the stream carries the same bytes.
            result = _match(ruleset, bots, seed, streams=False).run()
            recorded.games.append(list(log))
            recorded.decisions.append(result.decisions)
    return recorded


def _match(ruleset: Ruleset, bots: list[SeatBot], seed: int, streams: bool = True) -> Match:
    return Match(ruleset, bots, seed, game_id=f"bench-wire-{seed}", streams=streams)


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    client_cpu_s: float  #: CPU time of this process (the referee or the bare client)
    servers_cpu_s: float  #: CPU time of the four server processes together (nan off Linux)


def _cpu_of(pids: list[int]) -> float:
    """User + system CPU seconds of the processes (Linux /proc; nan elsewhere)."""
    total = 0.0
    try:
        for pid in pids:
            with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
    except (OSError, IndexError, ValueError):
        return float("nan")
    return total / os.sysconf("SC_CLK_TCK")


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def _measured(pids: list[int], into: list[Run]) -> Iterator[None]:
    servers, client, start = _cpu_of(pids), _self_cpu(), time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    into.append(Run(seconds, _self_cpu() - client, _cpu_of(pids) - servers))


def _play(ruleset: Ruleset, bots: list[SeatBot], seeds: range, streams: bool) -> tuple[int, int]:
    """The games' decisions and faults."""
    decisions = faults = 0
    for seed in seeds:
        result = _match(ruleset, bots, seed, streams).run()
        decisions += result.decisions
        faults += len(result.faults)
    return decisions, faults


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
def _bare_servers(count: int) -> Iterator[list[tuple[str, int]]]:
    """``count`` bare servers, each its own process: (address, pid) of each."""
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
        yield [(address, proc.pid) for address, proc in zip(addresses, procs, strict=True)]
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


#: calls made at once: (seat, request payload) of each
Step = tuple[tuple[int, bytes], ...]


def steps(calls: list[Call]) -> list[Step]:
    """A game's calls as the referee makes them: every seat's StartGame at once, then each
    Act on its own, then every seat's EndGame at once (referee.match)."""
    out: list[Step] = []
    kinds: list[str] = []
    for call in calls:
        sent = (call.seat, _payload(call))
        if call.method != "Act" and kinds and kinds[-1] == call.method:
            out[-1] += (sent,)
        else:
            out.append((sent,))
            kinds.append(call.method)
    return out


def _exchange(addresses: list[str], games: list[list[Step]]) -> float:
    """Seconds to replay the games' calls (:func:`steps`), one channel per server per game
    like the referee."""
    start = time.perf_counter()
    for game in games:
        channels = [grpc.insecure_channel(a) for a in addresses]
        try:
            echo = [c.unary_unary(BARE_METHOD, None, None) for c in channels]
            for step in game:
                if len(step) == 1:
                    seat, payload = step[0]
                    echo[seat](payload, timeout=5.0)
                    continue
                calls = [echo[seat].future(payload, timeout=5.0) for seat, payload in step]
                for call in calls:
                    call.result()
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
    parser.add_argument(
        "--no-sandbox", action="store_true", help="run the bots unsandboxed (to compare)"
    )
    parser.add_argument(
        "--unary",
        action="store_true",
        help="call Act for every decision, as for a bot that does not offer the Play stream",
    )
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
    referee_runs: list[Run] = []
    bare_runs: list[Run] = []
    with contextlib.ExitStack() as stack:
        sandbox = NO_SANDBOX if args.no_sandbox else SandboxConfig()
        launched = []
        startup_s: list[float] = []
        for _ in range(PLAYERS):
            t0 = time.perf_counter()
            launched.append(stack.enter_context(launch(RANDOM_BOT, sandbox=sandbox)))
            startup_s.append(time.perf_counter() - t0)
        bots = [SeatBot(b.name, b.version, b.address) for b in launched]
        # Every process of each bot (sandboxed: bwrap, its init and the bot below them).
        bot_pids = [pid for b in launched if b.process for pid in [b.process.pid, *b.processes()]]
        first = _record_sizes(ruleset, bots, seeds)  # also a warm-up
        decisions_per_game = first.decisions
        calls = [c for game in first.games for c in game]
        replay = [steps(game) for game in first.games]
        servers = stack.enter_context(_bare_servers(PLAYERS))
        addresses = [address for address, _ in servers]
        server_pids = [pid for _, pid in servers]
        _exchange(addresses, replay[:1])  # warm-up
        for _ in range(args.repeat):
            with _measured(bot_pids, referee_runs):
                decisions, faults = _play(ruleset, bots, seeds, not args.unary)
            if decisions != sum(decisions_per_game):
                print("warning: the timed games differ from the recorded ones", file=sys.stderr)
            with _measured(server_pids, bare_runs):
                _exchange(addresses, replay)
    referee = min(referee_runs, key=lambda r: r.seconds)
    bare = min(bare_runs, key=lambda r: r.seconds)
    referee_s, bare_s = referee.seconds, bare.seconds

    acts = [c for c in calls if c.method == "Act"]
    games = args.games
    overhead = referee_s / bare_s - 1.0
    baseline = BASELINE["unsandboxed" if args.no_sandbox else "sandboxed"]
    between_us = first.between_s / max(first.acts, 1) * 1e6
    figures: dict[str, Any] = {
        "python": platform.python_version(),
        "grpc": grpc.__version__,
        "variant": ruleset.ident,
        "players": PLAYERS,
        "sandbox": not args.no_sandbox,
        "play_stream": not args.unary,
        "bot_startup_ms": {
            "mean": statistics.fmean(startup_s) * 1000.0,
            "max": max(startup_s) * 1000.0,
        },
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
            "referee_cpu_us_per_call": referee.client_cpu_s / len(calls) * 1e6,
            "bots_cpu_us_per_call": referee.servers_cpu_s / len(calls) * 1e6,
            "call_us": referee_s / len(calls) * 1e6,
            "between_calls_us": between_us,
        },
        "bare": {
            "messages_per_s": len(calls) / bare_s,
            "game_ms": bare_s / games * 1000.0,
            "request_bytes": _mean([c.request_bytes for c in calls]),
            "response_bytes": _mean([c.response_bytes for c in calls]),
            "client_cpu_us_per_call": bare.client_cpu_s / len(calls) * 1e6,
            "servers_cpu_us_per_call": bare.servers_cpu_s / len(calls) * 1e6,
        },
        "overhead": overhead,
        "target_overhead": TARGET_OVERHEAD,
        "baseline_overhead": baseline,
        "baseline_commit": BASELINE_COMMIT,
        "calls": {m: sum(c.method == m for c in calls) for m in ("StartGame", "Act", "EndGame")},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return

    r, b = figures["referee"], figures["bare"]
    print(
        f"python {figures['python']}, grpcio {figures['grpc']}, {ruleset.ident}, "
        f"{PLAYERS} random bots ({'sandboxed' if figures['sandbox'] else 'NO sandbox'}, "
        f"{'Act only' if args.unary else 'Play stream'}), "
        f"best of {args.repeat} x {games} games"
    )
    startup = figures["bot_startup_ms"]
    print(f"bot start-up: mean {startup['mean']:.0f} ms, max {startup['max']:.0f} ms")
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
    print(
        f"CPU per call: referee {r['referee_cpu_us_per_call']:.0f} us vs bare client "
        f"{b['client_cpu_us_per_call']:.0f} us; bots {r['bots_cpu_us_per_call']:.0f} us vs bare "
        f"servers {b['servers_cpu_us_per_call']:.0f} us (the four together)"
    )
    bare_call_us = bare_s / len(calls) * 1e6
    print(
        f"time per call: referee {r['call_us']:.0f} us = {between_us:.0f} us in the referee "
        f"between calls + {r['call_us'] - between_us:.0f} us in the call (transport and bot); "
        f"bare {bare_call_us:.0f} us"
    )
    verdict = "met" if overhead <= TARGET_OVERHEAD else "NOT met"
    print(
        f"overhead: {overhead * 100:.0f}% (referee game / bare exchange - 1 = ratio "
        f"{1 + overhead:.2f}; baseline {baseline * 100:.0f}% = {1 + baseline:.2f} at "
        f"{BASELINE_COMMIT}; target at most {TARGET_OVERHEAD * 100:.0f}%: {verdict})"
    )


if __name__ == "__main__":
    main()
