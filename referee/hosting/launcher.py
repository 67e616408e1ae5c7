"""Start bots for a game and stop them afterwards.

A bot is entered either as a folder holding a ``bot.toml`` (read by config.py, built by
build.py when the folder changed) or, when it already runs elsewhere, as an address
``host:port``.

By default the command runs in a sandbox (referee/hosting/sandbox.py, docs/security.md): it listens
on a Unix socket the launcher chose, ``TTR_BOT_ADDRESS=unix:/run/ttr/bot.sock`` inside, which
the referee reaches as ``unix:/tmp/ttr-bot-.../sock/bot.sock``. With the sandbox off (local
debugging of a bot you trust) it runs as a plain child process in its own process group,
listening on a free loopback port, ``TTR_BOT_ADDRESS=127.0.0.1:PORT``.

Either way the launcher waits until the gRPC health check answers SERVING, reads the bot's
stdout and stderr itself (:class:`BotLog`: a capped log file per game that also keeps what
it wrote while starting, the end of stderr for startup errors, and optionally each line live
to a callback), the same way sandboxed or not, and on leaving the context sends SIGTERM to
every process of the bot, then SIGKILL after a grace period, so nothing it started outlives
it::

    with launch("sample_bots/greedy") as bot:
        bot.log_to(Path("logs/game-1-seat-0.log"))
        print(bot.address, bot.name)
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.games.protocol import ECHO_LINE_CHARS, RECORD_LINES_CHARS, bounded
from referee.hosting import sandbox as sandbox_mod
from referee.hosting.build import ensure_built
from referee.hosting.config import BotConfig, LaunchError, read_bot_config
from referee.hosting.folder import entries
from referee.hosting.sandbox import JAIL_ENV, SandboxConfig

ADDRESS_ENV = "TTR_BOT_ADDRESS"
DEFAULT_STARTUP_S = 10.0
STOP_GRACE_S = 1.0
_STDERR_TAIL_LINES = 15
_STDERR_TAIL_BYTES = 8192
#: the longest line echoed to a terminal (``BotLog.echo_to``); the log file keeps it whole
#: A line without a newline is echoed in pieces of this size, so an endless line costs little
#: to hold. Far above ECHO_LINE_CHARS: a line shorter than this is always echoed whole, with its
#: true length in the cut marker, wherever the pipe reads happen to split it (a 4 KB piece once
#: cut a 5,000-character line at a read boundary under load).
_ECHO_PIECE_BYTES = 64 * 1024
#: reads of 64 KB that :meth:`BotLog.take_lines` makes of each pipe at most
_DRAIN_READS = 20
_ADDRESS = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


class BotStartError(LaunchError):
    """A bot that exited or never became healthy within the startup limit."""


def load_bot_config(folder: str | Path, sandbox: SandboxConfig | None = None) -> BotConfig:
    """Read and validate ``folder/bot.toml``, and run its build when the folder changed: in
    a jail unless ``sandbox`` is disabled (``None``: the default sandbox)."""
    config = read_bot_config(folder)
    ensure_built(config, sandbox)  # the build, when the folder changed since the last one
    # The one rule for links, here as where a folder is hashed and packed: a link that leaves
    # the folder, a FIFO or a device refuses the bot (BotFolderError, naming the path).
    entries(config.folder)
    return config


def is_address(spec: str) -> bool:
    """Whether ``spec`` names a running bot (``host:port`` or ``unix:/path``) rather than a
    folder."""
    if spec.startswith("unix:/"):
        return True
    return bool(_ADDRESS.match(spec)) and not Path(spec).exists()


#: the sample bots beside the package (the checkout's sample_bots/, as leaderboard/worker.py
#: finds its validation bot): ``random``, ``greedy`` and ``planner`` name them from anywhere
SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
SAMPLE_NAMES = ("random", "greedy", "planner")


def resolve_bot(spec: str) -> str:
    """``spec`` as a bot to enter: an address or an existing path as it is (a folder named
    ``random`` in the working directory wins over the sample), else a sample bot's name
    (:data:`SAMPLE_NAMES`) as the installed sample's folder, else ``spec`` unchanged (the
    launcher then says what is wrong with it)."""
    if spec in SAMPLE_NAMES and not Path(spec).exists():
        folder = SAMPLE_BOTS / spec
        if (folder / "bot.toml").is_file():
            return str(folder)
    return spec


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def health_status(address: str, timeout_s: float) -> str:
    """The bot's overall health: ``SERVING``, another status name, ``UNIMPLEMENTED`` (no
    health service) or ``UNREACHABLE``."""
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=timeout_s)
        except grpc.RpcError as e:
            code = e.code() if isinstance(e, grpc.Call) else None
            if code is grpc.StatusCode.UNIMPLEMENTED:
                return "UNIMPLEMENTED"
            return "UNREACHABLE"
        name: str = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        return name


class LaunchedBot:
    """One entered bot: a started subprocess (folder) or a running server (address).

    A context manager: ``__enter__`` starts the bot and waits for it to be healthy,
    ``__exit__`` stops it and all its children.
    """

    def __init__(
        self,
        spec: str | Path,
        startup_s: float = DEFAULT_STARTUP_S,
        python: str = sys.executable,
        sandbox: SandboxConfig | None = None,
    ) -> None:
        self.spec = resolve_bot(str(spec))
        self.startup_s = startup_s
        self.python = python
        self.sandbox = sandbox if sandbox is not None else SandboxConfig()
        self.config: BotConfig | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.address = ""
        self.log = BotLog(self.sandbox.limits.log_kb * 1024)
        self.log_path: Path | None = None  #: this game's log file (see :meth:`log_to`)
        self._jail: sandbox_mod.Jail | None = None
        if is_address(self.spec):
            self.address = self.spec
            self.name = self.spec
            self.version = ""
        else:
            self.config = load_bot_config(self.spec, self.sandbox)
            self.name = self.config.name
            self.version = self.config.version

    # context manager -------------------------------------------------------------------------

    def __enter__(self) -> LaunchedBot:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -----------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the bot and wait until it serves (``LaunchError`` if it does not)."""
        self.spawn()
        self.wait_ready()

    def spawn(self) -> None:
        """Start the bot's process without waiting for it: :meth:`wait_ready` does. Call it
        from the thread that will outlive the bot: the sandbox's ``--die-with-parent`` is tied
        to the spawning thread (Linux's parent-death signal), so a helper thread that spawned
        a bot and ended would take the bot with it."""
        if self.config is None:
            return
        argv = [self.python if a == "{python}" else a for a in self.config.command]
        if self.sandbox.enabled:
            try:
                self._jail = sandbox_mod.prepare(
                    argv, self.config.folder, self.sandbox, dict(JAIL_ENV)
                )
            except sandbox_mod.SandboxError as e:
                raise BotStartError(f"bot {self.name!r}: {e}") from None
            self.address = self._jail.address
        else:
            self.address = f"127.0.0.1:{free_port()}"
        pipes: dict[str, Any] = {
            "stdin": subprocess.DEVNULL,
            "stdout": subprocess.PIPE,
            "stderr": subprocess.PIPE,
            "start_new_session": True,  # its own process group (and session)
        }
        try:
            if self._jail is not None:
                self.process = self._jail.popen(env=dict(JAIL_ENV), **pipes)
            else:
                env = dict(os.environ)
                env[ADDRESS_ENV] = self.address
                node_modules = sandbox_mod.node_runtime()  # as in the jail
                if node_modules is not None:
                    env.setdefault("NODE_PATH", str(node_modules))
                env.setdefault("PYTHONUNBUFFERED", "1")
                self.process = subprocess.Popen(argv, cwd=self.config.folder, env=env, **pipes)
        except OSError as e:
            self._release()
            raise BotStartError(
                f"bot {self.name!r} ({self.config.folder}): cannot run {argv[0]!r}: "
                f"{e.strerror or e}"
            ) from None
        assert self.process.stdout is not None and self.process.stderr is not None
        self.log.attach(self.process.stdout, self.process.stderr)

    def wait_ready(self) -> None:
        """Wait until the spawned bot serves; stop it and raise ``LaunchError`` if it exits or
        does not serve within ``startup_s``."""
        if self.config is None:
            self._wait_remote()
            return
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise

    def log_to(self, path: Path | None) -> None:
        """Send what the bot writes from now on to ``path`` (a new file, capped; ``None``:
        keep only the end of stderr in memory). Called at each game's start, so each game's
        log is its own."""
        self.log.log_to(path)
        self.log_path = path

    def take_lines(self) -> list[str]:
        """What the bot wrote since the last call, line by line, for the record (see
        :meth:`BotLog.take_lines`); nothing for a bot reached by its address."""
        return self.log.take_lines()

    def echo_to(self, sink: Callable[[str], None] | None) -> None:
        """Also hand each line the bot writes to ``sink`` as it arrives (see
        :meth:`BotLog.echo_to`); set it before :meth:`start` to see the start-up output too."""
        self.log.echo_to(sink)

    def death(self) -> str:
        """Why the bot is not running: ``""`` while it runs, else its exit status, with the
        sandbox's memory limit named when the kernel killed it for that."""
        proc = self.process
        if proc is None:
            return ""
        # Asked right after its socket closed: give the kernel a moment to reap it.
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.5)
        if proc.returncode is None:
            return ""
        code = proc.returncode
        if self._jail is not None and code > 128:
            code = -(code - 128)  # bwrap passes on a signal death as 128 + the signal
        why = f"exited with status {code}" if code >= 0 else f"was killed by {_signal_name(-code)}"
        jail = self._jail
        if jail is not None and jail.cgroup is not None and jail.cgroup.oom_kills():
            why += f" (over its memory limit of {self.sandbox.limits.memory_mb} MB)"
        return why

    def _wait_remote(self) -> None:
        deadline = time.monotonic() + self.startup_s
        status = "UNREACHABLE"
        while time.monotonic() < deadline:
            status = health_status(self.address, min(1.0, max(0.05, deadline - time.monotonic())))
            # A bot without the health service is accepted once it answers at all.
            if status in ("SERVING", "UNIMPLEMENTED"):
                return
            time.sleep(0.05)
        raise BotStartError(
            f"bot at {self.address}: not healthy after {self.startup_s:g} s (last status {status})"
        )

    def _wait_healthy(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.startup_s
        status = "UNREACHABLE"
        while True:
            code = self.process.poll()
            if code is not None:
                raise BotStartError(
                    f"bot {self.name!r} exited during startup with status {code}"
                    + self.stderr_note()
                )
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotStartError(
                    f"bot {self.name!r} not healthy at {self.address} after "
                    f"{self.startup_s:g} s (last status {status})" + self.stderr_note()
                )
            status = health_status(self.address, min(0.5, max(0.05, left)))
            if status == "SERVING":
                return
            time.sleep(0.05)

    def stderr_tail(self, lines: int = _STDERR_TAIL_LINES) -> str:
        """The last lines the bot wrote to stderr (empty for a bot entered by address), each
        :func:`~referee.games.protocol.bounded` like an echoed line: they are shown on terminals and
        kept in the store."""
        text = self.log.stderr_tail().decode("utf-8", "replace")
        return "\n".join(
            bounded(line, ECHO_LINE_CHARS) for line in text.rstrip().splitlines()[-lines:]
        )

    def stderr_note(self) -> str:
        """The end of the bot's stderr, quoted, to follow a one-line reason it failed."""
        tail = self.stderr_tail()
        if not tail:
            return " (its stderr is empty)"
        return "; the end of its stderr:\n" + "\n".join("  | " + ln for ln in tail.splitlines())

    def stop(self) -> None:
        """SIGTERM to every process of the bot, SIGKILL after a grace period. Idempotent.

        Sandboxed, the processes are found in its cgroup and below bwrap, and killing bwrap
        ends the PID namespace, so a grandchild that called setsid() dies too. Unsandboxed,
        only its process group can be reached (a setsid() escapes it: one more reason for the
        sandbox)."""
        proc = self.process
        if proc is not None:
            inner = self.processes()
            for pid in inner:
                _signal(pid, signal.SIGTERM)
            if self._jail is None:
                _signal_group(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=STOP_GRACE_S)
            # Whatever is left (children that ignored SIGTERM; bwrap, whose death ends them all).
            for pid in [proc.pid, *self.processes(), *inner]:
                _signal(pid, signal.SIGKILL)
            if self._jail is None:
                _signal_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=STOP_GRACE_S)
        self._release()

    def processes(self) -> list[int]:
        """The bot's processes below the one we started (which is bwrap when sandboxed)."""
        proc = self.process
        if proc is None:
            return []
        found = set(_descendants(proc.pid))
        if self._jail is not None and self._jail.cgroup is not None:
            found |= self._jail.cgroup.pids()
        found.discard(proc.pid)
        return sorted(found)

    def _release(self) -> None:
        if self._jail is not None:
            self._jail.cleanup()
        self.log.close()
        proc, self.process = self.process, None
        if proc is not None:
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()


class BotLog:
    """A bot's stdout and stderr, read by a thread of ours so that the bot never blocks on a
    full pipe and never writes more than we keep: each game's output goes to its own file,
    capped at ``limit`` bytes (the rest is counted and a note says how much was dropped), and
    the last few KB of stderr stay in memory to explain a failed start.

    Output written before the first :meth:`log_to` (while the bot starts, or while a spare
    waits for its game) is held in memory, under the same cap, and opens the first file: a
    bot's start-up messages are never lost. :meth:`echo_to` also hands each line, made safe
    for a terminal, to a callback as it arrives (``ttr play --verbose``), under the same cap
    per game."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._early: bytearray | None = bytearray()  #: before the first log_to; None after
        self._written = 0
        self._dropped = 0
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_bytes = 0
        self._thread: threading.Thread | None = None
        self._closed = False
        self._echo: Callable[[str], None] | None = None
        self._echoed = 0  #: bytes echoed this game
        self._partial = [b"", b""]  #: per stream (stdout, stderr): the line not yet ended
        self._pipes: tuple[IO[bytes], ...] = ()
        #: this game's lines for the record since the last :meth:`take_lines` (None: not
        #: collecting, before the first log_to)
        self._lines: list[str] | None = None
        self._line_chars = 0  #: characters kept for the record this game
        self._lines_cut = 0  #: lines of this game left out of the record (over its cap)

    def attach(self, stdout: IO[bytes], stderr: IO[bytes]) -> None:
        # Non-blocking, so that take_lines can empty the pipes from the referee's thread while
        # this thread waits in select: whichever reads first, under the lock, keeps the bytes.
        for pipe in (stdout, stderr):
            os.set_blocking(pipe.fileno(), False)
        self._pipes = (stdout, stderr)
        self._thread = threading.Thread(
            target=self._pump, args=(stdout, stderr), name="bot-log", daemon=True
        )
        self._thread.start()

    def log_to(self, path: Path | None) -> None:
        with self._lock:
            early, self._early = self._early, None
            if early is None:
                self._finish_file()
            dropped = self._dropped
            self._written = self._dropped = self._echoed = 0
            self._lines, self._line_chars, self._lines_cut = [], 0, 0
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._file = path.open("wb")
                if early:
                    self._file.write(early)
                    self._file.flush()
                    self._written, self._dropped = len(early), dropped

    def echo_to(self, sink: Callable[[str], None] | None) -> None:
        """Hand every line the bot writes from now on to ``sink`` (``None``: stop). Lines are
        :func:`~referee.games.protocol.bounded` to :data:`ECHO_LINE_CHARS` characters, control
        characters escaped, so a bot cannot drive the terminal; the sink is called from the
        reading thread."""
        with self._lock:
            self._echo = sink

    def take_lines(self) -> list[str]:
        """The lines the bot wrote since the last call (or since this game's :meth:`log_to`),
        for the record: each :func:`~referee.games.protocol.bounded` to
        :data:`ECHO_LINE_CHARS` characters, control characters escaped, at most
        :data:`~referee.games.protocol.RECORD_LINES_CHARS` characters per game (then one note
        of how many more lines only the log has).

        The referee calls it right after the bot answered a request: whatever the bot wrote
        before answering is in the pipes by then (its write returned before its reply went
        out), so they are emptied here, under the lock the reading thread reads under, and
        every line lands with the decision it was written for, however late that thread
        would have woken. A line not ended yet is taken as it stands."""
        with self._lock:
            if self._lines is None:
                return []
            for stream, pipe in enumerate(self._pipes):
                with contextlib.suppress(OSError, ValueError):
                    # bounded: a thread of the bot's that never stops writing cannot keep the
                    # referee here (what a bot wrote before answering is at most a pipe's
                    # capacity, 1 MB at the most a process can set)
                    for _ in range(_DRAIN_READS):
                        chunk = os.read(pipe.fileno(), 65536)
                        if not chunk:
                            break
                        self._keep_locked(chunk, stream)
            for stream in (0, 1):
                if self._partial[stream]:
                    self._line(self._partial[stream])
                    self._partial[stream] = b""
            lines, self._lines = self._lines, []
            if self._lines_cut:
                lines.append(
                    f"[ttr: {self._lines_cut} more line(s) only in the log: the record keeps "
                    f"{RECORD_LINES_CHARS} characters of a bot's output per game]"
                )
                self._lines_cut = 0
                self._line_chars = RECORD_LINES_CHARS + 1  # said once: nothing more this game
            return lines

    def stderr_tail(self) -> bytes:
        with self._lock:
            return b"".join(self._tail)

    def close(self) -> None:
        """Stop reading (the pipes close when the bot's processes are gone) and close the file.
        Output held from before the first file is kept for a later :meth:`log_to`."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout=2.0)
        with self._lock:
            self._closed = True
            if self._early is None:
                self._finish_file()

    def _finish_file(self) -> None:
        if self._file is None:
            return
        if self._dropped:
            self._file.write(
                f"\n[ttr: log truncated: {self._dropped} more bytes dropped "
                f"(limit {self.limit // 1024} KB per game)]\n".encode()
            )
        self._file.close()
        self._file = None
        self._written = self._dropped = 0

    def _pump(self, stdout: IO[bytes], stderr: IO[bytes]) -> None:
        # The pipes may be closed under us when a process of the bot outlives stop() (only
        # possible unsandboxed); the thread then just ends.
        with contextlib.suppress(OSError, ValueError):
            self._pump_until_eof(stdout, stderr)
        with self._lock:
            for stream in (0, 1):  # a last line without its newline
                if self._partial[stream]:
                    self._line(self._partial[stream])
                    self._partial[stream] = b""

    def _pump_until_eof(self, stdout: IO[bytes], stderr: IO[bytes]) -> None:
        with selectors.DefaultSelector() as sel:
            sel.register(stdout, selectors.EVENT_READ, False)
            sel.register(stderr, selectors.EVENT_READ, True)
            open_pipes = 2
            while open_pipes:
                for key, _ in sel.select():
                    with self._lock:  # take_lines may have emptied the pipe meanwhile
                        try:
                            chunk = os.read(key.fd, 65536)
                        except BlockingIOError:
                            continue
                        except OSError:
                            chunk = b""
                        if chunk:
                            self._keep_locked(chunk, int(key.data))
                            continue
                    sel.unregister(key.fileobj)
                    open_pipes -= 1

    def _keep_locked(self, chunk: bytes, stream: int) -> None:
        """Keep what the bot wrote on ``stream`` (0 stdout, 1 stderr); the lock is held."""
        is_stderr = stream == 1
        if is_stderr:
            self._tail.append(chunk[-_STDERR_TAIL_BYTES:])
            self._tail_bytes += len(self._tail[-1])
            while self._tail_bytes > _STDERR_TAIL_BYTES and len(self._tail) > 1:
                self._tail_bytes -= len(self._tail.popleft())
        if self._echo is not None or (self._lines is not None and not self._lines_cut):
            self._split(chunk, stream)
        elif self._lines_cut and self._line_chars <= RECORD_LINES_CHARS:
            # past the record's share, lines are only counted: a flood costs no splitting
            self._lines_cut += chunk.count(b"\n")
        if self._early is not None:
            room = self.limit - len(self._early)
            self._early += chunk[: max(room, 0)]
            self._dropped += max(0, len(chunk) - max(room, 0))
            return
        if self._file is None or self._closed:
            return
        room = self.limit - self._written
        if room > 0:
            self._file.write(chunk[:room])
            self._file.flush()
            self._written += min(room, len(chunk))
        self._dropped += max(0, len(chunk) - max(room, 0))

    def _split(self, chunk: bytes, stream: int) -> None:
        """Split ``chunk`` into lines for the echo and the record; a line that never ends is
        cut into pieces of :data:`_ECHO_PIECE_BYTES`, so holding it costs little."""
        lines = (self._partial[stream] + chunk).split(b"\n")
        self._partial[stream] = lines.pop()
        while len(self._partial[stream]) > _ECHO_PIECE_BYTES:
            lines.append(self._partial[stream][:_ECHO_PIECE_BYTES])
            self._partial[stream] = self._partial[stream][_ECHO_PIECE_BYTES:]
        for line in lines:
            self._line(line)

    def _line(self, raw: bytes) -> None:
        """One whole line: to the echo, and to this game's record lines under their cap (once
        one line is over it, every later line of the game is left out too: the record never
        skips a line and keeps a later one)."""
        record = self._lines is not None and self._line_chars <= RECORD_LINES_CHARS
        echo = self._echo is not None and self._echoed <= self.limit
        if not (record or echo):
            return
        line = bounded(raw.decode("utf-8", "replace").rstrip("\r"), ECHO_LINE_CHARS)
        if record and self._lines is not None:
            if self._lines_cut == 0 and self._line_chars + len(line) <= RECORD_LINES_CHARS:
                self._lines.append(line)
                self._line_chars += len(line)
            else:
                self._lines_cut += 1
        if echo:
            self._echo_line(raw, line)

    def _echo_line(self, raw: bytes, line: str) -> None:
        sink = self._echo
        if sink is None or self._echoed > self.limit:
            return
        self._echoed += len(raw) + 1
        if self._echoed > self.limit:
            sink(
                f"[ttr: over the {self.limit // 1024} KB per game shown here: the rest of "
                "this game's output is only counted in its log]"
            )
            return
        sink(line)


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``, from the kernel's children lists (one level at a time)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in tasks:
            with contextlib.suppress(OSError), open(f"/proc/{parent}/task/{tid}/children") as f:
                for child in f.read().split():
                    found.append(int(child))
                    todo.append(int(child))
    return found


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def launch(
    spec: str | Path,
    startup_s: float = DEFAULT_STARTUP_S,
    python: str = sys.executable,
    sandbox: SandboxConfig | None = None,
) -> LaunchedBot:
    """A :class:`LaunchedBot` for a folder or an address; use it as a context manager.
    Sandboxed unless ``sandbox`` says otherwise (``referee.hosting.sandbox.NO_SANDBOX``)."""
    return LaunchedBot(spec, startup_s, python, sandbox)
