"""Build steps of bot folders: bot.toml's optional ``build``, run before a bot is launched.

A bot in a compiled language (or one with packages to install) names its build in
``bot.toml``, as one argv or a list of them, run in order with the bot folder as working
directory::

    build = ["make"]
    build = [["npm", "ci", "--prefer-offline"], ["node", "check.js"]]

The launcher calls :func:`ensure_built` whenever it reads a bot.toml. It builds only when the
folder differs from what the last successful build left: the stamp ``.ttr-build`` holds a
fingerprint (relative path, size, mtime and mode of every file) taken right *after* that
build, so an edited source, a deleted binary or a removed ``node_modules/`` all bring a
rebuild, and an untouched folder launches at once. Why after and not of the sources only:
the launcher does not know which files are outputs, and a stamp that trusted a binary someone
deleted would launch nothing.

Concurrent launches of one folder (a tournament starts several copies) take the lock file
``.ttr-build.lock`` first: one builds, the others wait and then find the stamp fresh. What a
build prints goes to ``.ttr-build.log``; a failed build is a :class:`BotBuildError` (a
``LaunchError``) carrying the end of that log.

A build is the entrant's code, as hostile as its bot, run on the organiser's machine (often
as root) when a tournament loads its entrants. So, when the launch is sandboxed, the steps run
in one jail made by :func:`referee.hosting.sandbox.prepare` (``build=True``), the bots' own
code with these differences (:func:`_run_jailed`):

* the bot folder is bound **read-only** at ``/run/ttr-source`` and copied into a tmpfs of
  ``--build-mb`` mounted at ``/bot``, where its bot finds it too (so the paths a build
  writes into its outputs are the bot's, and neither sees the host's path); the steps run
  there, and what they leave comes back as a tar stream of at most that size and of at
  most a bot folder's entries (:data:`referee.hosting.folder.MAX_FILES`, counted as the
  stream is read: a build leaving more is refused before anything of it is unpacked),
  unpacked into the folder by
  :func:`_unpack` with tarfile's ``data`` filter (no absolute paths, no ``..``, no links
  leaving the folder, no devices, FIFOs or set-uid bits), never over the launcher's own files
  and never through a link already in the folder (one in the way of what comes back is
  removed first, so an earlier build's ``.ttr-cache/x -> ../.ttr-build.log`` cannot have this
  one's ``x`` written onto the log). Nothing the build does writes the host directly. ``HOME``
  and ``/tmp`` are a private tmpfs gone with the build;
* **no network** (its own namespace), unless the organiser asks for ``--online-builds``
  (``online_builds``: the host's network and its proxy variables, for ``npm ci`` from a
  registry);
* as root, a **uid of its own** (no capabilities, no_new_privs), whoever owns the folder; what
  comes back is owned by the folder's owner. Not root: a user namespace as the referee's uid,
  as for bots;
* a **build cache of the folder's own**, :data:`CACHE_DIR` (``.ttr-cache/``), which Go
  (``GOCACHE``), npm and ccache are pointed at (:data:`CACHE_ENV`). Without it every edit of a
  Go bot compiled grpc-go again (7 s jailed against 0.8 s unjailed; bench/README.md).
  It travels with the folder: copied in with it, and only its files that changed during the
  build come back (a warm Go cache of the kit is 40 MB, not packed again on every edit), through
  the same filter. Why inside the folder rather than in a cache directory of the referee's:
  a cache then belongs to one folder by construction (a ladder's versions, one folder each,
  never share one, so one entrant cannot poison another's build), and it needs no host path
  writable by the build. It is bounded by :func:`cache_bound_mb` (half of ``--build-mb``,
  which it must fit in with the build's outputs) and by a bot folder's entries (its bytes
  alone let 60,000 empty files through, which once cost the referee 335 s to unpack): over
  either, or not a plain folder, it is deleted before or after a build, with a line on
  stderr, and the next build is cold; a build bringing back more entries of it than that has
  none of them unpacked. Each is measured entry by entry and given up at the bound, so a
  cache of millions of files costs the referee no more than a bounded one. It is
  no part of what the bot is: :func:`fingerprint`, the folder's hash and uploads
  (:data:`referee.hosting.folder.SKIP_DIRS`) leave it out, and the kits' gitignore too. C++
  needs none of it: ``cp -a`` and tar keep mtimes, so make keeps ``obj/`` and an edit of
  ``bot.cc`` recompiles that one file.

Its limits are :data:`BUILD_LIMITS` (or the launch's, where larger: a compiler needs more
than a bot), by the same cgroup and rlimits. Its time is one deadline, :data:`BUILD_TIMEOUT_S`
from its start (:class:`_Deadline`), which covers all its steps and the referee's own work for
it: measuring its cache, and unpacking what it left, checked at every entry. Past it the build
is killed with every process it started, or the unpacking stops, and it fails as a build that
"did not finish in N s": no build costs the referee more time than its limit. The launcher's
own files in the folder (stamp, log, lock) are never opened through a link, whoever left one
in their place: the log and stamp are written under a new name and renamed over it, the lock
is opened with ``O_NOFOLLOW`` (a link there is removed, never followed).

Unsandboxed launches (``--no-sandbox``, trusted bots only) build in the folder itself, as the
launching user, with that user's environment, caches (Go's own ``GOCACHE``, not
``.ttr-cache/``) and file system.

A build must leave everything the bot needs inside the bot folder, because the sandboxed bot
sees only its folder (read-only) and the system's ``/usr``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import os
import posixpath
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from referee.games.protocol import ECHO_LINE_CHARS, bounded
from referee.hosting import sandbox as sandbox_mod
from referee.hosting.config import BotConfig, LaunchError
from referee.hosting.sandbox import JAIL_ENV, Limits, SandboxConfig

STAMP = ".ttr-build"
LOG = ".ttr-build.log"
LOCK = ".ttr-build.lock"
#: a build that runs longer, from its start to the referee's unpacking of the last of what it
#: left, is stopped and reported (a cold C++ build of the starter kit takes well under a minute
#: on 2 cores); :class:`_Deadline` is where it is kept
BUILD_TIMEOUT_S = 900.0
_CANCEL_POLL_S = 0.1  #: how often a build's wait looks at its ``cancel`` event
_TAIL_LINES = 15
_TAIL_BYTES = 8192  #: what of a build's output is kept in memory for its error message
#: how long to wait for a build's output once it ended (a leftover holding the pipe is killed
#: with its jail or process group first)
_READER_JOIN_S = 5.0
#: the files the launcher writes in a bot folder (not the bot's own: a hash of what the bot
#: is should leave them out, as :func:`fingerprint` does)
BUILD_FILES = frozenset({STAMP, LOG, LOCK})
#: the folder's own build cache (Go's GOCACHE, npm's and ccache's caches), written by its
#: jailed builds only: never part of what the bot is (fingerprint, hashes, uploads leave it out)
CACHE_DIR = ".ttr-cache"
#: where each tool is told to keep its cache under CACHE_DIR in a jailed build
CACHE_ENV = {"GOCACHE": "go", "npm_config_cache": "npm", "CCACHE_DIR": "ccache"}
#: folders that change without the author editing anything
_SKIP_DIRS = frozenset({".git", "__pycache__"})

#: what a jailed build may use, at least (a bot's own limits are sized for playing, not for
#: g++ on gRPC headers or a Go build cache): the larger of these and the launch's limits
BUILD_LIMITS = Limits(
    memory_mb=4096,
    processes=512,
    cpu_s=int(BUILD_TIMEOUT_S),
    open_files=4096,
    scratch_mb=2048,  # HOME and /tmp: what a compiler writes besides its cache (CACHE_DIR)
    cpus=float(min(os.cpu_count() or 1, 256)),
)
#: the referee's variables a jailed build gets besides the bots' environment: the way out to
#: a package registry on a network that has a proxy
_PASSED_ENV = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


class BotBuildError(LaunchError):
    """A bot's build failed, timed out or could not run; the message ends with its log's tail.
    ``summary`` is one line for a table of entrants: why, the first line of its output that
    names an error (a compiler's first complaint) and where the whole log is."""

    def __init__(self, message: str, summary: str = "") -> None:
        super().__init__(message)
        self.summary = summary or message.splitlines()[0]


class _TimedOut(Exception):
    """The build's deadline passed; :func:`ensure_built` turns it into the one timeout error,
    whichever part of the build (``shown``) was running, and ``during`` says what the
    referee was doing then when it was its own work."""

    def __init__(self, shown: str = "its build", during: str = "") -> None:
        super().__init__(shown)
        self.shown = shown
        self.during = during


@dataclasses.dataclass(frozen=True, slots=True)
class _Deadline:
    """A build's one time limit: :data:`BUILD_TIMEOUT_S` from its start, read by everything
    that works for it (each step's wait, the measuring of its cache, the unpacking of what it
    left, entry by entry), so that the referee's own work for a build counts against the
    build's limit rather than coming on top of it."""

    seconds: float
    at: float  #: time.monotonic() past which the build has failed
    #: set by another thread to stop the build now (a server stopping: ``ensure_built``)
    cancel: threading.Event | None = None

    @classmethod
    def start(cls, seconds: float, cancel: threading.Event | None = None) -> _Deadline:
        return cls(seconds, time.monotonic() + seconds, cancel)

    def left(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def passed(self) -> bool:
        return time.monotonic() >= self.at or self.cancelled()

    def wait(self, proc: subprocess.Popen[bytes]) -> int:
        """``proc``'s exit status; :class:`subprocess.TimeoutExpired` once the deadline has
        passed or the build is cancelled (looked at every :data:`_CANCEL_POLL_S`)."""
        while True:
            left = self.left()
            try:
                return proc.wait(timeout=left if self.cancel is None else min(left, _CANCEL_POLL_S))
            except subprocess.TimeoutExpired:
                if self.passed() or left <= _CANCEL_POLL_S:
                    raise

    def check(self, during: str) -> None:
        """Raise :class:`_TimedOut` if the deadline has passed; called at every entry of the
        referee's own work for the build (``during`` says which), a few microseconds each."""
        if self.passed():
            raise _TimedOut("its build", during)


def fingerprint(folder: Path) -> str:
    """SHA-256 over every file's relative path, size, mtime and mode (not its bytes: a
    ``node_modules/`` of a thousand files is fingerprinted in milliseconds), leaving out the
    build's own stamp, log and lock, its cache (:data:`CACHE_DIR`), ``.git`` and
    ``__pycache__``."""
    digest = hashlib.sha256()
    entries: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        if dirpath == str(folder) and CACHE_DIR in dirnames:
            dirnames.remove(CACHE_DIR)
        for name in filenames:
            if dirpath == str(folder) and name in BUILD_FILES:
                continue
            path = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):  # vanished mid-walk: it is simply not there
                st = os.lstat(path)
                rel = os.path.relpath(path, folder)
                entries.append((rel, f"{st.st_size}:{st.st_mtime_ns}:{st.st_mode:o}"))
    for rel, meta in sorted(entries):
        digest.update(f"{rel}\0{meta}\0".encode())
    return digest.hexdigest()


def build_limits(limits: Limits) -> Limits:
    """The limits of a jailed build: each the larger of the launch's and :data:`BUILD_LIMITS`'s
    (an organiser who raises the bots' limits raises the builds' too)."""
    return dataclasses.replace(
        limits,
        **{
            f.name: max(getattr(limits, f.name), getattr(BUILD_LIMITS, f.name))
            for f in dataclasses.fields(Limits)
            if f.name != "log_kb"
        },
    )


def ensure_built(
    config: BotConfig,
    sandbox: SandboxConfig | None = None,
    *,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
) -> bool:
    """Run ``config.build`` in the bot folder unless the folder is as its last successful
    build left it; return whether a build ran. Raises :class:`BotBuildError`.

    The build runs in a jail (module docstring) unless ``sandbox`` is disabled; ``None`` is
    the default sandbox, so a caller that forgets to say does not run hostile code unjailed.
    ``timeout_s``: its time limit (default :data:`BUILD_TIMEOUT_S`; a competition server's
    season sets its own). ``cancel``: once set (by another thread: a server stopping), the
    build is killed as one past its time, within a fraction of a second, and fails as
    stopped."""
    if not config.build:
        return False
    if sandbox is None:
        sandbox = SandboxConfig()
    folder = config.folder.resolve()
    stamp = folder / STAMP
    if _fresh(stamp, folder):  # the common case, and all a read-only prebuilt folder needs
        return False
    with _locked(folder, config.name):
        if _fresh(stamp, folder):  # another launch built it while this one waited
            return False
        stamp.unlink(missing_ok=True)  # a failed build must not leave an old stamp valid
        log = folder / LOG
        jailed = f" in a sandbox as {_build_uid(folder)}" if sandbox.enabled else ""
        print(
            f"ttr: building bot {config.name!r} in {folder}{jailed} (log: {log})", file=sys.stderr
        )
        started = time.monotonic()
        limit = BUILD_TIMEOUT_S if timeout_s is None else timeout_s
        deadline = _Deadline.start(limit, cancel)  # after the lock: waiting is no build
        with _create(config.name, log) as out:
            capped = BuildLog(out, sandbox.limits.log_kb * 1024)
            try:
                if sandbox.enabled:
                    # what it copies in fits, measured within the build's time
                    _bound_cache(config.name, folder, sandbox, deadline)
                    _run_jailed(config.name, folder, config.build, capped, log, sandbox, deadline)
                else:
                    for step in config.build:
                        _run_step(config.name, folder, step, capped, log, deadline)
            except _TimedOut as e:
                why = (
                    "was stopped (cancelled)"
                    if deadline.cancelled()
                    else f"did not finish in {deadline.seconds:g} s"
                )
                during = f" ({e.during})" if e.during else ""
                raise BotBuildError(
                    f"bot {config.name!r} ({folder}): {_named(e.shown)} {why}{during}"
                    + _log_tail(capped, log),
                    _summary(e.shown, why, capped, log),
                ) from None
            finally:
                capped.close()  # says what was dropped, failed or not
        with _create(config.name, stamp) as out:
            out.write((fingerprint(folder) + "\n").encode())
        elapsed = time.monotonic() - started
        print(f"ttr: built bot {config.name!r} in {elapsed:.1f} s", file=sys.stderr)
        return True


def _build_uid(folder: Path) -> str:
    """Who a jailed build runs as (sandbox.prepare's choice, for the message)."""
    return "a uid of its own" if os.geteuid() == 0 else f"uid {os.geteuid()}"


def _create(name: str, path: Path) -> IO[bytes]:
    """A new file at ``path`` in the bot folder, never through a link there: a build is the
    bot's code, and a ``.ttr-build`` it made a symlink to /etc/passwd must not have the
    referee (often root) truncate or write that. Made under a name of its own (``mkstemp``:
    ``O_CREAT | O_EXCL | O_NOFOLLOW``) and renamed over ``path``, which replaces whatever is
    there, a link included, in one step: no moment in which another name could be slipped in
    and no failure because one was."""
    try:
        fd, made = tempfile.mkstemp(prefix=f"{path.name}.", dir=path.parent)
    except OSError as e:
        raise _unwritable(name, path, e) from None
    try:
        os.fchmod(fd, 0o644)
        os.replace(made, path)
    except OSError as e:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(made)
        raise _unwritable(name, path, e) from None
    return os.fdopen(fd, "wb")


def _unwritable(name: str, path: Path, e: OSError) -> BotBuildError:
    return BotBuildError(
        f"bot {name!r} ({path.parent}): cannot build it: cannot write {path.name} in its "
        f"folder ({e.strerror or e}); a bot with a `build` needs a writable folder"
    )


def _fresh(stamp: Path, folder: Path) -> bool:
    """Whether the stamp vouches for the folder as it is. Read without following a link or
    blocking on a FIFO, whoever put one there: such a stamp vouches for nothing."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        with os.fdopen(os.open(stamp, flags), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return False
            said = f.read(256)
    except OSError:
        return False
    return said.decode("utf-8", "replace").strip() == fingerprint(folder)


@contextlib.contextmanager
def _locked(folder: Path, name: str) -> Iterator[None]:
    """The folder's build lock, never opened through a link: one in its place (which its
    author, or an older launcher's build, may have left) is removed, and the lock made anew,
    as every launch of the folder then finds it."""
    lock = folder / LOCK
    flags = os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        try:
            fd = os.open(lock, flags, 0o644)
        except OSError as e:
            if e.errno != errno.ELOOP:
                raise
            lock.unlink(missing_ok=True)
            fd = os.open(lock, flags, 0o644)  # O_NOFOLLOW still: a second link is refused
    except OSError as e:
        raise _unwritable(name, lock, e) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another launch of this folder may be building
        yield
    finally:
        os.close(fd)


class BuildLog:
    """What a build prints, kept within bounds: at most ``limit`` bytes reach the log file (the
    bots' ``--log-kb``; a note says how much was dropped), and only the last few KB stay in
    memory for the error message, so a build printing without end costs neither the disk nor
    the referee's memory."""

    def __init__(self, out: IO[bytes], limit: int) -> None:
        self.out = out
        self.limit = limit
        self.written = 0
        self.dropped = 0
        self.tail = bytearray()
        self.first_error = ""  #: the first line that says "error", bounded and escaped
        self._line = bytearray()  #: the line being read, its first ECHO_LINE_CHARS bytes

    def write(self, chunk: bytes, *, ours: bool = False) -> None:
        """Keep ``chunk`` of the build's output (``ours``: a line the referee writes, such as
        the command it runs, which is never taken for the build's first error)."""
        if not self.first_error and not ours:
            self._look_for_error(chunk)
        room = self.limit - self.written
        if room > 0:
            self.out.write(chunk[:room])
            self.out.flush()
            self.written += min(room, len(chunk))
        self.dropped += max(0, len(chunk) - max(room, 0))
        self.tail += chunk[-_TAIL_BYTES:]
        del self.tail[:-_TAIL_BYTES]

    def _look_for_error(self, chunk: bytes) -> None:
        *ended, rest = chunk.split(b"\n")
        for piece in ended:
            line = bytes(self._line + piece[: max(0, ECHO_LINE_CHARS - len(self._line))])
            self._line.clear()
            # "$ step" is the command being run (the jailed script prints it), not its output
            if b"error" in line.lower() and not line.startswith(b"$ "):
                self.first_error = bounded(line.decode("utf-8", "replace").strip())
                return
        room = max(0, ECHO_LINE_CHARS - len(self._line))
        self._line += rest[:room]

    def close(self) -> None:
        if self.dropped:
            self.out.write(
                f"\n[ttr: build log truncated: {self.dropped} more bytes dropped "
                f"(limit {self.limit // 1024} KB)]\n".encode()
            )
            self.out.flush()

    def pump(self, pipe: IO[bytes]) -> None:
        """Copy ``pipe`` into the log until it closes (the build's stdout and stderr)."""
        with contextlib.suppress(OSError, ValueError):
            fd = pipe.fileno()
            while chunk := os.read(fd, 65536):
                self.write(chunk)

    def tail_lines(self) -> list[str]:
        """The last lines printed, each bounded and escaped as bot output is."""
        text = bytes(self.tail).decode("utf-8", "replace").rstrip()
        return [bounded(ln, ECHO_LINE_CHARS) for ln in text.splitlines()[-_TAIL_LINES:]]


def _run_step(
    name: str, folder: Path, step: tuple[str, ...], out: BuildLog, log: Path, deadline: _Deadline
) -> None:
    """One step unjailed (``--no-sandbox``): in the folder, as the launching user, within what
    is left of the build's time."""
    argv = [sys.executable if a == "{python}" else a for a in step]
    shown = " ".join(step)
    out.write(f"$ {shown}\n".encode(), ours=True)
    try:
        proc = subprocess.Popen(argv, cwd=folder, **_POPEN)  # type: ignore[call-overload]
    except OSError as e:
        raise BotBuildError(
            f"bot {name!r} ({folder}): cannot run its build command `{shown}`: "
            f"{e.strerror or e}{_TOOLCHAINS}"
        ) from None
    assert proc.stdout is not None
    reader = threading.Thread(target=out.pump, args=(proc.stdout,), name="build-log", daemon=True)
    reader.start()
    try:
        _wait(name, folder, shown, proc, out, log, reader, deadline)
    finally:
        reader.join(timeout=_READER_JOIN_S)
        proc.stdout.close()


#: how a build's processes are started: no stdin, stdout and stderr into the log, and a
#: process group of its own, so that a timeout stops all of it
_POPEN: dict[str, object] = {
    "stdin": subprocess.DEVNULL,
    "stdout": subprocess.PIPE,
    "stderr": subprocess.STDOUT,
    "start_new_session": True,
}
_TOOLCHAINS = " (is the toolchain installed? tools/ensure_toolchains.sh installs the kits' ones)"

#: The jailed build, run by ``bash``: copy the folder in, run the steps, pack the result.
#: ``$1`` and ``$2`` are the fds of the status and result pipes; they move to fds bash picks
#: (``{st}``, ``{rs}``: 10 and up, never one of the two) and are closed for the steps, so
#: that nothing of the build writes a status or a result but this script. The launcher's own
#: files are never packed (no forged stamp or log). Of the cache (:data:`CACHE_DIR`, copied in
#: with the folder) only what changed since the copy comes back: a warm Go cache of a few
#: hundred MB is not tarred and unpacked again on every edit.
_JAIL_SCRIPT = """\
exec {{st}}>&"$1" {{rs}}>&"$2"
eval "exec $1>&- $2>&-"
shift 2
shopt -s dotglob nullglob
cp -a {source}/* . {{st}}>&- {{rs}}>&- || {{ echo copy >&$st; exit 1; }}
: > /tmp/.ttr-cache-since
{steps}
echo built >&$st
{{ find . \\( {skip} \\) -prune -o -print0
  if [ -d ./{cache} ] && [ ! -L ./{cache} ]; then
    find ./{cache} -newer /tmp/.ttr-cache-since -print0
  fi
}} {{st}}>&- {{rs}}>&- | tar --null --no-recursion -T - -cf - >&$rs {{st}}>&- \\
  || {{ echo pack >&$st; exit 1; }}
echo packed >&$st
"""
_JAIL_STEP = """\
printf '%s\\n' {shown}
{argv} </dev/null {{st}}>&- {{rs}}>&-
rc=$?; [ $rc -eq 0 ] || {{ echo "step {index} $rc" >&$st; exit 1; }}
"""


def _jail_script(steps: tuple[tuple[str, ...], ...]) -> str:
    body = "".join(
        _JAIL_STEP.format(
            shown=shlex.quote(f"$ {' '.join(step)}"),
            argv=shlex.join(sys.executable if a == "{python}" else a for a in step),
            index=i,
        )
        for i, step in enumerate(steps)
    )
    skip = " -o ".join(f"-path ./{shlex.quote(f)}" for f in sorted({*BUILD_FILES, CACHE_DIR}))
    return _JAIL_SCRIPT.format(
        source=sandbox_mod.BUILD_SOURCE_INSIDE, steps=body, skip=skip, cache=CACHE_DIR
    )


def _run_jailed(
    name: str,
    folder: Path,
    steps: tuple[tuple[str, ...], ...],
    out: BuildLog,
    log: Path,
    sandbox: SandboxConfig,
    deadline: _Deadline,
) -> None:
    """Every step in one jail (sandbox.prepare, ``build=True``): the folder is copied into a
    tmpfs of ``sandbox.build_mb`` at :data:`~referee.hosting.sandbox.FOLDER_INSIDE`, where
    its bot will find it too (so paths a build writes into its outputs are the bot's, and
    neither sees the host's path, which names the organiser's data folder), the steps run
    there as a uid of their own with no network (unless ``online_builds``), and what they
    leave comes back as a tar stream, at most the tmpfs's size, unpacked into the folder by
    :func:`_unpack`, which refuses links out of it, absolute paths, devices and FIFOs, and
    more entries than a bot folder's. Nothing the build does writes the host directly. All
    of it, the unpacking included, within ``deadline``."""
    for step in steps:
        # Found here, by the jail's PATH, so that a missing tool is one clear line rather
        # than a complaint of the shell's in the log.
        tool = step[0]
        if "/" not in tool and tool != "{python}" and not shutil.which(tool, path=JAIL_ENV["PATH"]):
            raise BotBuildError(
                f"bot {name!r} ({folder}): cannot run its build command "
                f"`{' '.join(step)}`: {tool!r} not found on {JAIL_ENV['PATH']}" + _TOOLCHAINS
            )
    env = dict(JAIL_ENV)
    inside = Path(sandbox_mod.FOLDER_INSIDE) / CACHE_DIR  # never the host's path
    env.update((k, str(inside / sub)) for k, sub in CACHE_ENV.items())
    if sandbox.online_builds:
        env.update((k, os.environ[k]) for k in _PASSED_ENV if k in os.environ)
    config = dataclasses.replace(sandbox, limits=build_limits(sandbox.limits))
    status_r, status_w = os.pipe()
    result_r, result_w = os.pipe()
    command = ["/bin/bash", "-c", _jail_script(steps), "ttr-build", str(status_w), str(result_w)]
    jail: sandbox_mod.Jail | None = None
    try:
        try:
            jail = sandbox_mod.prepare(command, folder, config, env, build=True)
        except sandbox_mod.SandboxError as e:
            raise BotBuildError(f"bot {name!r} ({folder}): cannot build it: {e}") from None
        # bwrap itself (the jail's PID 1, whose /proc/1/environ the build can read) gets the
        # clean environment too, not the referee's: as the launcher does for bots.
        proc = jail.popen(keep_fds=(status_w, result_w), env=env, **_POPEN)
        os.close(status_w)
        os.close(result_w)
        status_w = result_w = -1
        result = _Result(result_r, sandbox.build_mb * 1024 * 1024)
        assert proc.stdout is not None
        reader = threading.Thread(target=out.pump, args=(proc.stdout,), daemon=True)
        reader.start()
        try:
            _wait(name, folder, "its build", proc, out, log, reader, deadline, status_r, steps)
        finally:
            jail.cleanup()  # whatever it left running in its cgroup
            reader.join(timeout=_READER_JOIN_S)
            proc.stdout.close()
            result.close()
        if result.over:
            raise BotBuildError(
                f"bot {name!r} ({folder}): its build left more than its quota of "
                f"{sandbox.build_mb} MB (--build-mb)"
            )
        cache_over = _unpack(name, folder, result.data, deadline)
        why = _too_many(_max_entries()) if cache_over else ""
        _bound_cache(name, folder, sandbox, deadline, why)
    finally:
        for fd in (status_r, status_w, result_r, result_w):
            if fd != -1:
                with contextlib.suppress(OSError):
                    os.close(fd)


def cache_bound_mb(sandbox: SandboxConfig) -> int:
    """How large a folder's build cache may grow: half the build's tmpfs, which it is copied
    into with the folder, so that a full cache still leaves the build room for its outputs."""
    return max(1, sandbox.build_mb // 2)


def _max_entries() -> int:
    """The most entries a bot folder may hold, the bound of a build's result and cache too.
    Imported here, not at the top: referee.hosting.folder imports this module."""
    from referee.hosting.folder import MAX_FILES

    return MAX_FILES


def _too_many(bound: int) -> str:
    return f"holds more than {bound} entries (files, folders and links), a bot folder's bound"


def _cache_excess(cache: Path, bound_mb: int, deadline: _Deadline) -> str:
    """Why the build cache must go ("" when it may stay), read entry by entry, the folders
    found kept on a stack rather than listed whole, and given up as soon as it is over the
    entry bound: what the cache holds (its author's, or an older launcher's build's) is no
    more work for the referee than a bounded cache, however many files it has."""
    if cache.is_symlink() or (cache.exists() and not cache.is_dir()):
        return "is not a folder"
    bound = _max_entries()
    total = seen = 0
    pending = [str(cache)] if cache.is_dir() else []
    while pending:
        with contextlib.suppress(OSError), os.scandir(pending.pop()) as found:
            for entry in found:  # never follows a link
                deadline.check("measuring its build cache")
                seen += 1
                if seen > bound:
                    return _too_many(bound)
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        total += entry.stat(follow_symlinks=False).st_size
    if total > bound_mb * 1024 * 1024:
        mb = total / (1024 * 1024)
        return f"holds {mb:.0f} MB, over its bound of {bound_mb} MB (half of --build-mb)"
    return ""


def _bound_cache(
    name: str, folder: Path, sandbox: SandboxConfig, deadline: _Deadline, why: str = ""
) -> None:
    """Drop the folder's build cache when it is over :func:`cache_bound_mb` or a bot folder's
    entries (or not a plain folder; ``why``, when the caller already knows), saying so on
    stderr: the next build is cold, and no cache outgrows the build's own quota or costs the
    referee unbounded work to measure, whatever the build wrote into it."""
    cache = folder / CACHE_DIR
    if not why and not cache.is_symlink() and not cache.exists():
        return
    why = why or _cache_excess(cache, cache_bound_mb(sandbox), deadline)
    if not why:
        return
    print(
        f"ttr: bot {name!r}: its build cache {cache} {why}: dropped, its next build starts cold",
        file=sys.stderr,
    )
    if cache.is_symlink() or not cache.is_dir():
        cache.unlink(missing_ok=True)
    else:
        shutil.rmtree(cache, ignore_errors=True)


class _Result:
    """The jailed build's tar stream, read by a thread as it comes, at most ``limit`` bytes
    kept (in a temporary file past a few MB)."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.limit = limit
        self.over = False
        self.data: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115
        self._thread = threading.Thread(target=self._read, name="build-result", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        got = 0
        with contextlib.suppress(OSError):
            while chunk := os.read(self.fd, 1 << 20):
                got += len(chunk)
                if got > self.limit + (1 << 20):  # the tmpfs's size, and tar's headers
                    self.over = True
                    continue  # drain, keep nothing more
                self.data.write(chunk)

    def close(self) -> None:
        self._thread.join(timeout=_READER_JOIN_S)
        self.data.seek(0)


_UNPACKING = "the referee was unpacking what it left"


def _unpack(name: str, folder: Path, data: IO[bytes], deadline: _Deadline) -> bool:
    """Unpack the jailed build's result into ``folder`` with tarfile's ``data`` filter (no
    absolute paths, no ``..``, no links leaving the folder, no devices or FIFOs, no setuid
    bits), never the launcher's own files and never through a link already there
    (:func:`_make_way`); as root, owned by the folder's owner. Return whether the cache came
    back with more entries than a bot folder may hold: then none of it is unpacked, and the
    caller drops it.

    Its headers are read first (:func:`_scan`, which stops at the entry bound), then its
    entries unpacked, each checked against ``deadline``: a build whose result would take the
    referee longer than the build's limit fails as a build past its time does."""
    owner = folder.stat()
    root = os.geteuid() == 0
    dirs: set[str] = set()  #: folders of the result known to be real folders, not links
    files: set[str] = set()  #: regular files unpacked so far: all a hard link may link to

    def keep(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
        deadline.check(_UNPACKING)
        parts = _parts(member.name)
        if member.name.startswith("/") or ".." in parts:
            raise tarfile.FilterError(f"{bounded(member.name)!r} leaves its folder")
        if not parts or parts[0] in BUILD_FILES:  # the folder itself keeps its own mode
            return None
        rel = "/".join(parts)
        member = member.replace(name=rel, deep=False)
        if member.islnk():
            target = "/".join(_parts(member.linkname))
            if target not in files:
                raise tarfile.FilterError(
                    f"{rel!r} is a hard link to {bounded(member.linkname)!r}, a file it did "
                    "not leave"
                )
            member = member.replace(linkname=target, deep=False)
        _make_way(folder, rel, member.isdir(), dirs)
        member = tarfile.data_filter(member, dest)
        if member.isreg():
            files.add(rel)
        else:
            files.discard(rel)
        if root:
            return member.replace(uid=owner.st_uid, gid=owner.st_gid, uname="", gname="")
        return member

    try:
        with tarfile.open(fileobj=data, mode="r:") as tar:
            members, cache_over = _scan(name, folder, tar, data, deadline)
            tar.extractall(folder, members=members, filter=keep)
    except (tarfile.TarError, OSError) as e:
        raise BotBuildError(
            f"bot {name!r} ({folder}): what its build left was refused: {bounded(str(e))}"
        ) from None
    return cache_over


def _parts(name: str) -> list[str]:
    """A member's path as its components, without the empty and ``.`` ones (``./a//b``)."""
    return [part for part in name.split("/") if part not in ("", ".")]


def _scan(
    name: str, folder: Path, tar: tarfile.TarFile, data: IO[bytes], deadline: _Deadline
) -> tuple[list[tarfile.TarInfo], bool]:
    """The members of the result to unpack, read header by header (a seekable archive: the
    files' bytes are skipped, not read), counted as they come against a bot folder's entry
    bound, the folder's and the cache's apart: the folder's over it refuses the build, the
    cache's over it ends the reading there and leaves the cache out (the jail's script sends
    the folder first, then the cache). Either way the referee reads at most the bound's
    headers past what it keeps, however many the stream holds.

    The stream is cut where the reading stopped, so that nothing of tarfile's (a hard link's
    fallback reads the rest of an archive) goes on past the bound."""
    bound = _max_entries()
    members: list[tarfile.TarInfo] = []
    counts = [0, 0]  # the folder's entries, the cache's
    while (member := tar.next()) is not None:
        deadline.check(_UNPACKING)
        in_cache = _parts(member.name)[:1] == [CACHE_DIR]
        counts[in_cache] += 1
        if counts[in_cache] <= bound:
            members.append(member)
        elif not in_cache:
            raise BotBuildError(
                f"bot {name!r} ({folder}): its build left more than {bound} entries (files, "
                "folders and links) in its folder, over the bound of a bot folder: refused"
            )
        else:
            data.truncate(member.offset)
            return [m for m in members if _parts(m.name)[:1] != [CACHE_DIR]], True
    return members, False


def _make_way(folder: Path, rel: str, is_dir: bool, dirs: set[str]) -> None:
    """Clear the way for tarfile to write the entry ``rel``: every folder above it a real
    folder, and nothing at ``rel`` but a folder (for a folder). A link in the way (an earlier
    build's ``.ttr-cache/x -> ../.ttr-build.log``, or one its author left) or a hard link
    sharing its inode with another file is removed, never written through: what comes back
    is a new entry. A file where a folder now is is refused (the folder is not deleted).

    ``dirs`` remembers the folders made sure of: meanwhile only this unpacking changes the
    folder, and it never turns a folder into anything else."""
    above = []
    parent = posixpath.dirname(rel)
    while parent and parent not in dirs:
        above.append(parent)
        parent = posixpath.dirname(parent)
    for sub in reversed(above):
        path = os.path.join(folder, sub)
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                os.unlink(path)
                os.mkdir(path)
        except FileNotFoundError:
            os.mkdir(path)
        dirs.add(sub)
    path = os.path.join(folder, rel)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISDIR(mode):
            os.unlink(path)
        elif not is_dir:
            raise tarfile.FilterError(f"{rel!r} is a file where its folder has a folder")
    if is_dir:
        dirs.add(rel)


def _wait(
    name: str,
    folder: Path,
    shown: str,
    proc: subprocess.Popen[bytes],
    out: BuildLog,
    log: Path,
    reader: threading.Thread,
    deadline: _Deadline,
    status_fd: int = -1,
    steps: tuple[tuple[str, ...], ...] = (),
) -> None:
    """Wait for a build (one step, or the jailed script whose ``status_fd`` says how far it
    got) until ``deadline``; raise :class:`BotBuildError` if it failed, :class:`_TimedOut`
    once it is killed for running past the deadline."""
    try:
        code = deadline.wait(proc)
    except subprocess.TimeoutExpired:
        _kill(proc)
        reader.join(timeout=_READER_JOIN_S)
        raise _TimedOut(shown) from None
    except BaseException:  # interrupted: leave no compiler running
        _kill(proc)
        raise
    reader.join(timeout=_READER_JOIN_S)  # the last of its output, for the tail
    if status_fd != -1:
        said = _read_status(status_fd)
        shown, code = _jailed_outcome(said, steps, code)
    if code != 0:
        why = f"status {code}" if code > 0 else f"signal {-code}"
        raise BotBuildError(
            f"bot {name!r} ({folder}): {_named(shown)} failed with {why}" + _log_tail(out, log),
            _summary(shown, f"failed with {why}", out, log),
        )


def _named(shown: str) -> str:
    return shown if shown.startswith("its ") else f"its build command `{shown}`"


def _read_status(fd: int) -> list[str]:
    data = b""
    with contextlib.suppress(OSError):
        while len(data) < 4096 and (chunk := os.read(fd, 4096)):
            data += chunk
    return data.decode("ascii", "replace").split()


def _jailed_outcome(
    said: list[str], steps: tuple[tuple[str, ...], ...], code: int
) -> tuple[str, int]:
    """What failed in the jailed script, from its status words: the step and its status, or
    the copy in or out, or the jail itself (no status: killed, or bwrap failed)."""
    if "packed" in said:
        return "its build", 0
    if "step" in said:
        at = said.index("step")
        with contextlib.suppress(ValueError, IndexError):
            step, status = int(said[at + 1]), int(said[at + 2])
            status = -(status - 128) if status > 128 else status
            return " ".join(steps[step]), status
    if "copy" in said:
        return "its build (copying its folder into the build's quota: too big?)", code or 1
    if "pack" in said:
        return "its build (packing what it built)", code or 1
    return "its build", code or 1


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _summary(shown: str, why: str, out: BuildLog, log: Path) -> str:
    first = out.first_error or (out.tail_lines() or [""])[-1]
    said = f": {first}" if first else ""
    return f"its build `{bounded(shown)}` {why}{said} (log: {log})"


def _log_tail(out: BuildLog, log: Path) -> str:
    lines = out.tail_lines()
    return f"; the end of its output (all of it: {log}):\n" + "\n".join("  | " + ln for ln in lines)
