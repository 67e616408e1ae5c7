"""One side of a cooperating pair of jails that signal through what cannot be refused: the
CPU they share and the page cache of the files they can both read (issue 34, item 3).

``bench/channels.py`` starts two of these, each in a real jail, and drives them over their
standard streams; it is the benchmark of the channels, so it tells both sides what a pair
would have agreed on beforehand (when the message starts, the slot length, the bits)::

    timing_probe.py send|recv [--cpu N]

``--cpu N`` pins the process (and what it forks) to core N before anything else, standing in
for a host that gives each jail cores of its own (a cpuset): a bot can undo its own
``sched_setaffinity``, but not a cpuset.

Lines on stdin, one answer line each on stdout:

* ``send``, ``cpu T0_NS SLOT_NS WORKERS SPREAD KIND BITS``: from CLOCK_MONOTONIC ``T0_NS`` on,
  slot ``i`` lasts ``SLOT_NS``; in a 1 slot ``WORKERS`` processes keep the CPU busy (``KIND``
  ``cpu``: an interpreter loop; ``memory``: copying 1 MB blocks of a 32 MB buffer, which
  fills the shared last-level cache), in a 0 slot they sleep. Answers ``done``.
* ``recv``, ``cpu T0_NS SLOT_NS SLOTS KIND``: how much work one process gets done in each
  slot (``cpu``: turns of a loop that reads the clock; ``memory``: 64 KB blocks copied
  out of a 16 MB buffer). Answers ``counts C1 C2 ...``.
* ``send``, ``cache FILE FIRST BITS``: reads one byte of page ``FIRST + i`` of FILE for
  each 1 bit. Answers ``done SECONDS``.
* ``recv``, ``cache FILE FIRST N METHOD``: what each of the N pages from ``FIRST`` on
  tells: ``timing``, the nanoseconds one ``pread`` of a byte takes; ``nowait``, 1 when
  ``preadv2(RWF_NOWAIT)`` finds the page cached (it never reads the disk); ``majflt``, the
  major faults (``getrusage``) that touching the page through a mapping costs. Answers
  ``values V1 V2 ... SECONDS``. ``evict FILE``: ``posix_fadvise(DONTNEED)`` of the whole
  file, as any reader of it may ask (a jail's filter answers success and does nothing);
  answers ``evicted SECONDS`` or ``refused ERROR``.

Both sides read a clock that every jail shares (CLOCK_MONOTONIC: no time namespace), so slot
boundaries need no message between them; only the start is given, which a pair would find
by a preamble. Only the standard library: it runs as a jailed bot would.
"""

from __future__ import annotations

import mmap
import os
import resource
import sys
import time

PAGE = 4096
#: the sender's memory load: more than the machine's last-level cache (32 MB here)
SEND_BUFFER = 32 << 20
SEND_BLOCK = 1 << 20
#: the receiver's working set: half the cache, so that the sender's traffic evicts it
RECV_BUFFER = 16 << 20
RECV_BLOCK = 64 << 10


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _sleep_until(deadline_ns: int) -> None:
    left = deadline_ns - time.monotonic_ns()
    if left > 0:
        time.sleep(left / 1e9)


def _blocks(size: int, block: int) -> tuple[memoryview, list[memoryview]]:
    """A buffer of ``size`` bytes (every page touched, so none is a first-touch fault in a
    slot) and views of its ``block``-sized pieces, to be copied one after another."""
    buf = bytearray(os.urandom(1 << 16) * (size >> 16))
    view = memoryview(buf)
    return memoryview(bytearray(block)), [view[i : i + block] for i in range(0, size, block)]


def drive(t0: int, slot: int, kind: str, bits: str) -> None:
    """One sending process: busy in the 1 slots, asleep in the 0 slots."""
    clock = time.monotonic_ns
    dst, blocks = _blocks(SEND_BUFFER, SEND_BLOCK) if kind == "memory" else (memoryview(b""), [])
    at = 0
    _sleep_until(t0)
    for i, bit in enumerate(bits):
        end = t0 + (i + 1) * slot
        if bit == "1":
            if blocks:
                while clock() < end:
                    dst[:] = blocks[at]
                    at = (at + 1) % len(blocks)
            else:
                while clock() < end:
                    pass
        else:
            _sleep_until(end)


def send_cpu(t0: int, slot: int, workers: int, kind: str, bits: str, spread: bool) -> None:
    """``workers`` processes (forked: one interpreter's threads share a lock and would run
    one at a time) each drive the schedule. ``spread``: each on a core of its own, in turn
    over the cores this process may use; left to itself the scheduler, which balances the
    jails' cgroups by weight, soon gives the sender one core and the receiver the other, and
    they stop meeting."""
    cores = sorted(os.sched_getaffinity(0))
    children = []
    for k in range(workers):
        pid = os.fork() if k < workers - 1 else 0
        if pid == 0:
            try:
                if spread:
                    os.sched_setaffinity(0, {cores[k % len(cores)]})
                drive(t0, slot, kind, bits)
            finally:
                if k < workers - 1:
                    os._exit(0)
        else:
            children.append(pid)
    os.sched_setaffinity(0, set(cores))
    for pid in children:
        os.waitpid(pid, 0)


def receive_cpu(t0: int, slot: int, slots: int, kind: str) -> list[int]:
    """Work done in each slot: fewer turns (or copies) when the sender takes the CPU or the
    cache from under it."""
    clock = time.monotonic_ns
    counts = [0] * slots
    dst, blocks = _blocks(RECV_BUFFER, RECV_BLOCK) if kind == "memory" else (memoryview(b""), [])
    at = 0
    _sleep_until(t0 - 2_000_000)
    while clock() < t0:
        pass
    for i in range(slots):
        end = t0 + (i + 1) * slot
        n = 0
        if blocks:
            while clock() < end:
                dst[:] = blocks[at]
                at = (at + 1) % len(blocks)
                n += 1
        else:
            while clock() < end:
                n += 1
        counts[i] = n
    return counts


def _open_random(path: str) -> int:
    """The shared file, read page by page: no readahead, which would bring in the pages
    beside the one read (and set or spoil their bits)."""
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    return fd


def send_cache(path: str, first: int, bits: str) -> float:
    started = time.monotonic()
    fd = _open_random(path)
    try:
        for i, bit in enumerate(bits):
            if bit == "1":
                os.pread(fd, 1, (first + i) * PAGE)
    finally:
        os.close(fd)
    return time.monotonic() - started


def receive_cache(path: str, first: int, n: int, method: str) -> tuple[list[int], float]:
    started = time.monotonic()
    fd = _open_random(path)
    values: list[int] = []
    try:
        if method == "timing":
            clock = time.perf_counter_ns
            for i in range(n):
                at = clock()
                os.pread(fd, 1, (first + i) * PAGE)
                values.append(clock() - at)
        elif method == "nowait":
            buf = bytearray(1)
            for i in range(n):
                try:
                    values.append(int(os.preadv(fd, [buf], (first + i) * PAGE, os.RWF_NOWAIT) > 0))
                except BlockingIOError:
                    values.append(0)
        elif method == "majflt":
            size = (first + n) * PAGE
            with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
                m.madvise(mmap.MADV_RANDOM)
                usage = resource.getrusage
                for i in range(n):
                    before = usage(resource.RUSAGE_SELF).ru_majflt
                    m[(first + i) * PAGE]
                    values.append(usage(resource.RUSAGE_SELF).ru_majflt - before)
        else:
            raise ValueError(f"no method {method!r}")
    finally:
        os.close(fd)
    return values, time.monotonic() - started


def evict(path: str) -> str:
    started = time.monotonic()
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    except OSError as e:
        return f"refused {e}"
    return f"evicted {time.monotonic() - started:.6f}"


def main(argv: list[str]) -> None:
    """The line protocol of the module's docstring, until stdin closes."""
    role = argv[0]
    if "--cpu" in argv:
        os.sched_setaffinity(0, {int(argv[argv.index("--cpu") + 1])})
    _say("ok")
    for line in sys.stdin:
        word, *rest = line.split()
        if role == "send" and word == "cpu":
            t0, slot, workers = int(rest[0]), int(rest[1]), int(rest[2])
            send_cpu(t0, slot, workers, rest[4], rest[5], spread=rest[3] == "spread")
            _say("done")
        elif role == "recv" and word == "cpu":
            counts = receive_cpu(int(rest[0]), int(rest[1]), int(rest[2]), rest[3])
            _say("counts " + " ".join(map(str, counts)))
        elif role == "send" and word == "cache":
            _say(f"done {send_cache(rest[0], int(rest[1]), rest[2]):.6f}")
        elif role == "recv" and word == "cache":
            values, seconds = receive_cache(rest[0], int(rest[1]), int(rest[2]), rest[3])
            _say("values " + " ".join(map(str, values)) + f" {seconds:.6f}")
        elif word == "evict":
            _say(evict(rest[0]))
        else:
            _say(f"unknown {line.strip()}")


if __name__ == "__main__":
    main(sys.argv[1:])
