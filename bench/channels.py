"""Bits per decision that two cooperating jails get across through CPU and cache contention
and the page cache: what the sandbox cannot close (issue 34, item 3).

Two real jails (``referee.hosting.sandbox.prepare`` with the default limits: one core's worth
of CPU each), a sender and a receiver, run ``bench/channels/timing_probe.py`` and are driven
over their standard streams, as ``tests/hosting/test_sandbox_channels.py`` drives its probes.
The bench tells both sides what a pair would agree on in its code (the slot length, a
preamble of known bits) and tells the sender the bits; the receiver's figures are decoded
here: a threshold fitted on the preamble, the error rate ``p`` on the rest, and the capacity
of that binary symmetric channel, ``C = bits/s x (1 - H(p))``, times the clock's move time
(``referee.games.protocol.DEFAULT_MOVE_MS``) as bits per decision.

* ``cpu`` (and ``memory``): slots of T ms on CLOCK_MONOTONIC, which every jail reads alike.
  In a 1 slot the sender's workers spin (or copy memory through the shared cache), in a 0
  slot they sleep; the receiver counts the work it gets done in each slot.
* ``cache``: pages of a file both jails can read, out of the page cache at first. The sender
  reads the pages of its 1 bits; the receiver reads every page once and decides by what that
  shows: ``timing`` (a cached read takes a microsecond, an uncached one a disk read),
  ``nowait`` (``preadv2(RWF_NOWAIT)``) or ``majflt`` (major faults counted by
  ``getrusage``), the last two no timing at all. A page carries a bit until read; between
  rounds the host evicts the file (``posix_fadvise(DONTNEED)``, outside any jail), or the
  receiver asks for that in its jail (which the jail's filter makes a no-op), or nobody does
  and each round uses pages not yet read (``fresh``: what a pair has in a game).

    python bench/channels.py [--channel cpu memory cache] [--slot-ms 1 5 20] [--seconds S]
        [--workers W] [--placement spread free] [--encoding onoff manchester]
        [--rounds R] [--pages P] [--pin] [--load N] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from referee.games.protocol import DEFAULT_MOVE_MS
from referee.hosting import sandbox
from referee.hosting.sandbox import JAIL_ENV, SandboxConfig, unavailable_reason

ROOT = Path(__file__).resolve().parent.parent
PROBE_DIR = ROOT / "bench" / "channels"
PAGE = 4096
#: what the hand a pair would pass needs: up to about 12 cards of 9 colours (the tickets more)
HAND_BITS = 35
#: decisions in a short game (2 players, 50 to 300 decisions a game)
SHORT_GAME = 50


class Side:
    """One probe in a jail of its own, and its line protocol."""

    def __init__(self, role: str, folder: Path, shared: Path, cpu: int | None) -> None:
        command = [sys.executable, "timing_probe.py", role]
        command += [] if cpu is None else ["--cpu", str(cpu)]
        config = SandboxConfig(read_only=(str(shared),))  # the default limits: 1 core, 1 GB
        self.jail = sandbox.prepare(command, folder, config, dict(JAIL_ENV))
        self.proc = self.jail.popen(
            env=dict(JAIL_ENV),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        first = self.line()
        if first != "ok":
            raise RuntimeError(f"the {role} probe said {first!r}")

    def tell(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def line(self) -> str:
        assert self.proc.stdout is not None
        out = self.proc.stdout.readline().decode().strip()
        if not out:
            self.proc.kill()
            err = self.proc.stderr.read().decode() if self.proc.stderr else ""
            raise RuntimeError(f"the probe said nothing: {err[-2000:]}")
        return out

    def ask(self, line: str) -> str:
        self.tell(line)
        return self.line()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        self.jail.cleanup()


@contextlib.contextmanager
def pair(tmp: Path, pin: bool) -> Iterator[tuple[Side, Side, Path]]:
    """A receiver and a sender, each in a jail of its own with a folder of its own (two
    bots), and a folder both may read (``--read-only``, as the runtime is): the page cache
    channel's file lives there, on a disk (not a tmpfs: its pages must be able to leave
    the cache). ``pin``: the receiver on core 0, the sender on core 1."""
    folders = [tmp / "bot-recv", tmp / "bot-send"]
    for f in folders:
        shutil.copytree(PROBE_DIR, f, ignore=shutil.ignore_patterns("__pycache__"))
    shared = tmp / "shared"
    shared.mkdir()
    for p in [tmp, *folders, *(q for f in folders for q in f.rglob("*")), shared]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    sides: list[Side] = []
    try:
        sides.append(Side("recv", folders[0], shared, 0 if pin else None))
        sides.append(Side("send", folders[1], shared, 1 if pin else None))
        yield sides[0], sides[1], shared
    finally:
        for side in reversed(sides):
            side.close()


# ---------------------------------------------------------------------------------------------
# decoding


def entropy(p: float) -> float:
    """H(p) in bits."""
    if p <= 0 or p >= 1:
        return 0.0
    return -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def fit(values: Sequence[float], bits: Sequence[int]) -> tuple[float, bool]:
    """The threshold (and its side: ``True`` when a 1 reads below it) that gets the most of
    the preamble's bits right: all a receiver knows before the message."""
    pairs = sorted(zip(values, bits, strict=True))
    ones, zeros = sum(bits), len(bits) - sum(bits)
    best = (zeros, float("-inf"), True)  # everything above the threshold: all read as 0
    ones_below = zeros_below = 0
    for i, (value, bit) in enumerate(pairs):
        ones_below += bit
        zeros_below += 1 - bit
        if i + 1 < len(pairs) and pairs[i + 1][0] == value:
            continue
        cut = value if i + 1 == len(pairs) else (value + pairs[i + 1][0]) / 2
        below_is_one = zeros_below + (ones - ones_below)
        below_is_zero = ones_below + (zeros - zeros_below)
        for errors, side in ((below_is_one, True), (below_is_zero, False)):
            if errors < best[0]:
                best = (errors, cut, side)
    return best[1], best[2]


def decode(values: Sequence[float], threshold: float, one_below: bool) -> list[int]:
    return [int((v <= threshold) == one_below) for v in values]


def beats_chance(wrong: int, n: int) -> bool:
    """Whether ``n - wrong`` bits right is more than a guess gets one time in 100 (the normal
    bound of the binomial): below that the error rate's distance from 1/2 is noise, and
    ``1 - H(p)`` of it, times a fast slot, would be a capacity that is not there."""
    return n - wrong > n / 2 + 2.33 * math.sqrt(n) / 2


def correlation(values: Sequence[float], bits: Sequence[int]) -> float:
    """|Pearson r| between the bits sent and what the receiver measured: the figure of the
    issue's crude timing check."""
    n = len(values)
    mv, mb = sum(values) / n, sum(bits) / n
    cov = sum((v - mv) * (b - mb) for v, b in zip(values, bits, strict=True))
    sv = math.sqrt(sum((v - mv) ** 2 for v in values))
    sb = math.sqrt(sum((b - mb) ** 2 for b in bits))
    return abs(cov / (sv * sb)) if sv and sb else 0.0


def balanced(n: int, rng: random.Random) -> list[int]:
    """``n`` bits, as many ones as zeros (give or take one), in a random order: a receiver
    that learns nothing gets half of them right whatever it answers."""
    bits = [1] * (n // 2) + [0] * (n - n // 2)
    rng.shuffle(bits)
    return bits


@dataclass
class Row:
    """One channel measured under one condition."""

    channel: str
    method: str
    condition: str
    slot_ms: float  #: time per bit: the slot, or the round's time over its bits
    bits: int  #: payload bits decoded (the preamble not counted)
    error_rate: float
    r: float
    #: capacity, C = (1 / slot) x (1 - H(p)); 0 where the receiver did no better than chance
    bits_per_s: float

    @property
    def bits_per_decision(self) -> float:
        return self.bits_per_s * DEFAULT_MOVE_MS / 1000

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "bits_per_decision": self.bits_per_decision}


def _row(
    channel: str,
    method: str,
    condition: str,
    seconds_per_bit: float,
    values: Sequence[float],
    bits: Sequence[int],
    preamble: Sequence[int],
) -> Row:
    """Fit on the preamble's indices, decode the rest."""
    at = set(preamble)
    threshold, one_below = fit([values[i] for i in preamble], [bits[i] for i in preamble])
    rest = [i for i in range(len(bits)) if i not in at]
    got = decode([values[i] for i in rest], threshold, one_below)
    wrong = sum(g != bits[i] for g, i in zip(got, rest, strict=True))
    p = wrong / len(rest)
    capacity = (1 - entropy(p)) / seconds_per_bit if beats_chance(wrong, len(rest)) else 0.0
    r = correlation([values[i] for i in rest], [bits[i] for i in rest])
    return Row(channel, method, condition, seconds_per_bit * 1000, len(rest), p, r, capacity)


# ---------------------------------------------------------------------------------------------
# the channels


def measure_cpu(
    recv: Side,
    send: Side,
    kind: str,
    slot_ms: float,
    seconds: float,
    workers: int,
    placement: str,
    encoding: str,
    condition: str,
    rng: random.Random,
) -> Row:
    """``seconds`` of slots, the first quarter of the bits (at least 32) the preamble; both
    sides start at one CLOCK_MONOTONIC instant told to them, and find the slots' ends from it
    alone. ``placement``: ``spread``, the sender's workers each pinned to a core in turn (a
    jail may call ``sched_setaffinity``), or ``free``, where the scheduler puts them.
    ``encoding``: ``onoff``, a slot per bit, busy for a 1, read against the preamble's
    threshold; ``manchester``, two slots per bit, busy then idle for a 1 and idle then busy
    for a 0, read by which half got less work done: no threshold to drift with the machine's
    load, and the sender busy exactly half the time, within its CPU quota."""
    slot_ns = round(slot_ms * 1e6)
    halves = 2 if encoding == "manchester" else 1
    n = max(128, round(seconds * 1000 / slot_ms / halves))
    bits = balanced(n, rng)
    chips = [c for b in bits for c in ((b, 1 - b) if halves == 2 else (b,))]
    t0 = time.monotonic_ns() + 300_000_000
    send.tell(f"cpu {t0} {slot_ns} {workers} {placement} {kind} {''.join(map(str, chips))}")
    counts = [float(c) for c in recv.ask(f"cpu {t0} {slot_ns} {len(chips)} {kind}").split()[1:]]
    done = send.line()
    assert done == "done", done
    values = (
        counts if halves == 1 else [a - b for a, b in zip(counts[::2], counts[1::2], strict=True)]
    )
    method = f"{encoding}, {workers} workers {placement}"
    seconds_per_bit = halves * slot_ms / 1000
    return _row(kind, method, condition, seconds_per_bit, values, bits, range(max(32, n // 4)))


def _evict_here(path: Path) -> float:
    started = time.monotonic()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return time.monotonic() - started


#: how the pages get out of the cache between rounds, in words
EVICTORS = {
    "host": "the host evicts",
    "jail": "the receiver asks to evict",
    "fresh": "fresh pages",
}


def measure_cache(
    recv: Side,
    send: Side,
    shared: Path,
    method: str,
    evictor: str,
    rounds: int,
    pages: int,
    condition: str,
    rng: random.Random,
) -> Row:
    """``rounds`` of ``pages`` bits, the first 32 of each round its preamble. The bit rate
    is the pages over the rounds' whole time: sending, receiving and evicting. ``evictor``:
    ``host``, the bench drops the file's pages between rounds; ``jail``, the receiver asks
    for it in its jail (``posix_fadvise(DONTNEED)``), and only the rounds after such an
    eviction count; ``fresh``, nobody does, each round uses pages never read before (what a
    pair has in a game: the runtime's pages that nothing has read since the machine
    started)."""
    path = shared / f"pages-{method}-{evictor}"
    size = pages * (rounds if evictor == "fresh" else 1)
    with path.open("wb") as f:
        f.write(os.urandom(size * PAGE))
        f.flush()
        os.fsync(f.fileno())
    path.chmod(0o644)
    _evict_here(path)
    values: list[float] = []
    bits: list[int] = []
    preamble: list[int] = []
    seconds = 0.0
    for r in range(rounds + (evictor == "jail")):
        first = r * pages if evictor == "fresh" else 0
        took = 0.0
        if r and evictor == "host":
            took += _evict_here(path)
        elif r and evictor == "jail":
            said = recv.ask(f"evict {path}")
            if not said.startswith("evicted "):
                raise RuntimeError(f"the receiver could not evict: {said}")
            took += float(said.split()[1])
        sent = balanced(pages, rng)
        said = send.ask(f"cache {path} {first} {''.join(map(str, sent))}")
        took += float(said.split()[1])
        got = recv.ask(f"cache {path} {first} {pages} {method}").split()[1:]
        took += float(got[-1])
        if evictor == "jail" and r == 0:
            continue  # the file was out of the cache: no eviction of the jail's tried yet
        seconds += took
        preamble += range(len(bits), len(bits) + 32)
        values += [float(v) for v in got[:-1]]
        bits += sent
    path.unlink()
    return _row(
        "cache",
        f"{method}, {EVICTORS[evictor]}",
        condition,
        seconds / len(bits),
        values,
        bits,
        preamble,
    )


# ---------------------------------------------------------------------------------------------
# the run


@contextlib.contextmanager
def load(n: int) -> Iterator[None]:
    """``n`` busy loops outside any jail (other games' bots, the referee): the noise a pair
    meets on a busy worker."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def run(args: argparse.Namespace) -> list[Row]:
    rng = random.Random(args.seed)
    condition = ("pinned" if args.pin else "shared cores") + (
        f", {args.load} busy loops" if args.load else ", no added load"
    )
    rows: list[Row] = []
    with (
        # on the disk: the page cache channel's file must be able to leave the cache, which
        # a file in a tmpfs /tmp never does
        tempfile.TemporaryDirectory(prefix="ttr-channels-", dir="/var/tmp") as tmp,
        pair(Path(tmp), args.pin) as (recv, send, shared),
        load(args.load),
    ):
        for kind in ("cpu", "memory"):
            for placement in args.placement if kind in args.channel else ():
                for encoding in args.encoding:
                    for slot in args.slot_ms:
                        rows.append(
                            measure_cpu(
                                recv,
                                send,
                                kind,
                                slot,
                                args.seconds,
                                args.workers,
                                placement,
                                encoding,
                                condition,
                                rng,
                            )
                        )
                        _progress(rows[-1], args.json)
        if "cache" in args.channel:
            for method, evictor in (
                ("timing", "host"),
                ("timing", "fresh"),
                ("timing", "jail"),
                ("nowait", "fresh"),
                ("majflt", "fresh"),
            ):
                rows.append(
                    measure_cache(
                        recv,
                        send,
                        shared,
                        method,
                        evictor,
                        args.rounds,
                        args.pages,
                        condition,
                        rng,
                    )
                )
                _progress(rows[-1], args.json)
    return rows


def _progress(row: Row, quiet: bool) -> None:
    if not quiet:
        print(
            f"  {row.channel} {row.method} {row.slot_ms:.3g} ms: p = {row.error_rate:.3f}",
            file=sys.stderr,
            flush=True,
        )


def table(rows: Sequence[Row]) -> str:
    head = (
        "| channel | method | condition | ms per bit | bits | error rate | abs(r) | bits/s "
        f"| bits/decision ({DEFAULT_MOVE_MS} ms) | decisions per {HAND_BITS}-bit hand "
        f"| bits in a {SHORT_GAME}-decision game |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        per = r.bits_per_decision
        hand = f"{HAND_BITS / per:.2g}" if per > 0 else "never (chance)"
        lines.append(
            f"| {r.channel} | {r.method} | {r.condition} | {r.slot_ms:.3g} | {r.bits} "
            f"| {r.error_rate:.3f} | {r.r:.2f} | {r.bits_per_s:.3g} | {per:.3g} | {hand} "
            f"| {per * SHORT_GAME:.3g} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--channel",
        nargs="+",
        choices=("cpu", "memory", "cache"),
        default=["cpu", "memory", "cache"],
        help="channels to measure (default: all three)",
    )
    parser.add_argument(
        "--slot-ms", nargs="+", type=float, default=[1, 5, 20], help="slot lengths (1 5 20)"
    )
    parser.add_argument("--seconds", type=float, default=4, help="per CPU row (4)")
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="the sender's busy processes (default: one per core)",
    )
    parser.add_argument(
        "--placement",
        nargs="+",
        choices=("spread", "free"),
        default=["spread", "free"],
        help="the sender's workers each pinned to a core in turn, or left to the scheduler",
    )
    parser.add_argument(
        "--encoding",
        nargs="+",
        choices=("onoff", "manchester"),
        default=["onoff", "manchester"],
        help="a busy or idle slot per bit, or busy-idle / idle-busy pairs (both)",
    )
    parser.add_argument("--rounds", type=int, default=4, help="page cache rounds (4)")
    parser.add_argument("--pages", type=int, default=512, help="pages (bits) per round (512)")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="each jail on a core of its own (what a cpuset would give)",
    )
    parser.add_argument("--load", type=int, default=0, help="busy loops beside the pair (0)")
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--json", action="store_true", help="one JSON object, no table")
    args = parser.parse_args()
    why = unavailable_reason()
    if why:
        sys.exit(f"the bot sandbox cannot run here: {why}")
    if args.pin and (os.cpu_count() or 1) < 2:
        sys.exit("--pin needs two cores")
    started = time.monotonic()
    load_before = os.getloadavg()[0]
    rows = run(args)
    info = {
        "move_ms": DEFAULT_MOVE_MS,
        "cores": os.cpu_count(),
        "load_average_before": load_before,
        "seconds": round(time.monotonic() - started, 1),
    }
    if args.json:
        print(json.dumps({**info, "rows": [r.as_dict() for r in rows]}, indent=2))
        return
    print(
        f"{info['cores']} cores, load average {load_before:.2f} before, "
        f"{info['seconds']} s; a decision is the clock's {DEFAULT_MOVE_MS} ms"
    )
    print(table(rows))


if __name__ == "__main__":
    main()
