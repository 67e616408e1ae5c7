"""Start bots for a game and stop them afterwards.

A bot is entered either as a folder holding a ``bot.toml`` or, when it already runs
elsewhere, as an address ``host:port``. ``bot.toml``::

    name = "greedy"
    version = "1.0"
    author = "..."
    description = "..."
    command = ["{python}", "bot.py"]   # run with the folder as cwd; {python} = our interpreter

The launcher picks a free loopback port, starts the command in its own process group with
``TTR_BOT_ADDRESS=127.0.0.1:PORT`` in its environment, and waits until the gRPC health check
answers SERVING. Leaving the context sends SIGTERM to the whole group, then SIGKILL after a
grace period, so a bot's children go too::

    with launch("sample_bots/greedy") as bot:
        print(bot.address, bot.name)
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

ADDRESS_ENV = "TTR_BOT_ADDRESS"
DEFAULT_STARTUP_S = 10.0
STOP_GRACE_S = 2.0
_STDERR_TAIL_LINES = 15
_ADDRESS = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


class LaunchError(Exception):
    """A bot could not be entered; the message is one line (plus an stderr tail) for users."""


class BotConfigError(LaunchError):
    """A ``bot.toml`` that is missing or invalid; the message names the file and the key."""


class BotStartError(LaunchError):
    """A bot that exited or never became healthy within the startup limit."""


@dataclass(frozen=True, slots=True)
class BotConfig:
    folder: Path
    name: str
    version: str
    author: str
    description: str
    command: tuple[str, ...]


def load_bot_config(folder: str | Path) -> BotConfig:
    """Read and validate ``folder/bot.toml``."""
    folder = Path(folder)
    path = folder / "bot.toml"
    if not folder.is_dir():
        raise BotConfigError(f"{folder}: not a bot folder (no such directory)")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BotConfigError(f"{path}: no bot.toml in the bot folder") from None
    except OSError as e:
        raise BotConfigError(f"{path}: cannot read it: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise BotConfigError(f"{path}: not valid TOML: {e}") from None

    def text(key: str, required: bool) -> str:
        value = data.get(key)
        if value is None:
            if required:
                raise BotConfigError(f"{path}: key `{key}` is missing")
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            raise BotConfigError(f"{path}: key `{key}` must be a non-empty string")
        return value

    name = text("name", True)
    version = text("version", True)
    author = text("author", False)
    description = text("description", False)
    command = data.get("command")
    if command is None:
        raise BotConfigError(f"{path}: key `command` is missing")
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(a, str) and a for a in command)
    ):
        raise BotConfigError(
            f"{path}: key `command` must be a non-empty list of non-empty strings "
            '(e.g. ["{python}", "bot.py"])'
        )
    return BotConfig(folder, name, version, author, description, tuple(command))


def is_address(spec: str) -> bool:
    """Whether ``spec`` names a running bot (``host:port``) rather than a folder."""
    return bool(_ADDRESS.match(spec)) and not Path(spec).exists()


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
    ) -> None:
        self.spec = str(spec)
        self.startup_s = startup_s
        self.python = python
        self.config: BotConfig | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.address = ""
        self._stderr: IO[bytes] | None = None
        self._stdout: IO[bytes] | None = None
        if is_address(self.spec):
            self.address = self.spec
            self.name = self.spec
            self.version = ""
        else:
            self.config = load_bot_config(self.spec)
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
        if self.config is None:
            self._wait_remote()
            return
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        argv = [self.python if a == "{python}" else a for a in self.config.command]
        env = dict(os.environ)
        env[ADDRESS_ENV] = self.address
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop())
        self._stdout = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            self.process = subprocess.Popen(
                argv,
                cwd=self.config.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=self._stdout,
                stderr=self._stderr,
                start_new_session=True,  # its own process group (and session)
            )
        except OSError as e:
            self._close_logs()
            raise BotStartError(
                f"bot {self.name!r} ({self.config.folder}): cannot run {argv[0]!r}: "
                f"{e.strerror or e}"
            ) from None
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise

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
                    + self._stderr_tail()
                )
            left = deadline - time.monotonic()
            if left <= 0:
                raise BotStartError(
                    f"bot {self.name!r} not healthy at {self.address} after "
                    f"{self.startup_s:g} s (last status {status})" + self._stderr_tail()
                )
            status = health_status(self.address, min(0.5, max(0.05, left)))
            if status == "SERVING":
                return
            time.sleep(0.05)

    def stderr_tail(self, lines: int = _STDERR_TAIL_LINES) -> str:
        """The last lines the bot wrote to stderr (empty for a bot entered by address)."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - 8192))
        text = self._stderr.read().decode("utf-8", "replace")
        return "\n".join(text.rstrip().splitlines()[-lines:])

    def _stderr_tail(self) -> str:
        tail = self.stderr_tail()
        if not tail:
            return " (its stderr is empty)"
        return "; the end of its stderr:\n" + "\n".join("  | " + ln for ln in tail.splitlines())

    def stop(self) -> None:
        """SIGTERM to the bot's process group, SIGKILL after a grace period. Idempotent."""
        proc = self.process
        if proc is not None:
            pgid = proc.pid  # start_new_session: the leader's pid is the group id
            _signal_group(pgid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=STOP_GRACE_S)
            # Whatever is left of the group (the leader or children that ignored SIGTERM).
            _signal_group(pgid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=STOP_GRACE_S)
            self.process = None
        self._close_logs()

    def _close_logs(self) -> None:
        for f in (self._stdout, self._stderr):
            if f is not None:
                f.close()
        self._stdout = self._stderr = None


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def launch(
    spec: str | Path, startup_s: float = DEFAULT_STARTUP_S, python: str = sys.executable
) -> LaunchedBot:
    """A :class:`LaunchedBot` for a folder or an address; use it as a context manager."""
    return LaunchedBot(spec, startup_s, python)
