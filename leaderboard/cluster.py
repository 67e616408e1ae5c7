"""League nights on a Ray cluster: the same schedule, played by Ray actors (docs/scaling.md).

``ttr tournament run --cluster ADDRESS`` connects (:func:`connect`) and hands the run a crew of
:class:`RayWorkers` instead of local worker processes; everything else (validation, the
schedule, the store, ``--resume``) is the runner's, unchanged.

One actor per worker slot, each like a local worker: it keeps its bots alive across games in a
``BotPool`` and plays tasks with ``run_task``, both from leaderboard/worker.py, the half of a
tournament that local workers and actors share. The driver hands each actor one task at a
time, so an interrupted run stops after the games in play.

Bots. The driver packs every bot folder (the files and links its content hash covers:
``referee.hosting.folder.entries``; links stay links) into one zip as ``bots/<content hash>/``,
puts it in Ray's object store and passes it to each actor; the first actor on a node to need
a bot unpacks it into the node's cache of bots, ``<temporary folder>/ttr-bots/<content
hash>/``, and hashes it again (:func:`unpack_bots`): a bot that differs is refused. A bot's
build (bot.toml ``build``) then runs on the node when the launcher first reads it, as on a
local machine, and is kept with it: a package with other entrants reuses it. Why not a runtime
environment's ``working_dir``: below the job level Ray takes only a URI there (no local folder),
and the job's runtime environment is fixed when the driver connects, before the run knows its
bots (``--resume`` reads them from the store).

Records and logs. An actor plays with records under a node-local scratch folder, then sends
the record's and logs' bytes back with the answer; the driver writes them where a local run
would (``<records>/<game id>.json``, ``<records>/logs/<game id>/...``) before the store takes
the game. Paths in the answer (record, logs, reasons, fault messages) are the driver's. So a
cluster needs no shared file system.

Failures. The store has one writer, the driver, which stores a game only once its answer is
back: a game whose actor dies (killed, out of memory, its node lost) never reached the store
and is given to a fresh actor once; if that one dies too, the game is reported failed and left
for ``--resume``, as in a local run. Ray's own task and actor retries are off, so no game is
played twice behind the driver's back.

Ray is imported only here, and only when a cluster is asked for: the package works without
the ``ray`` extra.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import fcntl
import importlib
import io
import os
import re
import shutil
import signal
import socket
import stat
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from leaderboard.runner import TournamentError
from leaderboard.store import GameResult
from leaderboard.worker import (
    Answer,
    BotPool,
    Entrant,
    Failed,
    Settings,
    Task,
    Validate,
    Validation,
    run_task,
)
from referee.games.registry import load
from referee.hosting.folder import content_hash, entries, read_chunks
from referee.match import write_text_atomic

if TYPE_CHECKING:
    from ray.actor import ActorHandle

#: what ``--cluster`` takes (its help and its error say it)
ADDRESS_HELP = (
    "ray://HOST:PORT (Ray Client), auto (the cluster this machine belongs to, started with "
    "`ray start`) or local (a fresh Ray on this machine with --workers CPUs)"
)
_POLL_S = 0.5  #: how often a waiting driver looks up from ``ray.wait`` (Ctrl-C, dead actors)
_CLOSE_S = 10.0  #: how long closing actors may finish their games before they are killed
_MAX_STILLBORN = 3  #: actors dying before their first answer: then stop instead of respawning
#: the largest package of bots: each node holds it in memory as it unpacks it, and Ray's own
#: limit for a job's working_dir is the same (one gRPC message, ``GCS_STORAGE_MAX_SIZE``)
_PACKAGE_LIMIT = 512 * 2**20
_PACKAGE_NAME = "ttr-bots.zip"


def _ray() -> Any:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise TournamentError(
            "--cluster needs Ray, which is not installed: pip install 'ttr-arena[ray]' "
            "(the same version on every node)"
        ) from None
    return ray


class Cluster:
    """A connection to Ray for one run; closing it disconnects (and stops a ``local`` Ray)."""

    def __init__(self, address: str, slots: int, owned: bool = True) -> None:
        self.address = address
        self.slots = slots  #: actors (parallel games) its crews grow to
        self.owned = owned  #: connected by :func:`connect` (not by its caller): closed by it

    def crew(self, count: int, settings: Settings) -> RayWorkers:
        """The runner's crew factory (``run(crews=...)``). ``count`` is what the runner
        would start locally (no more workers than its first tasks); a cluster's crew grows
        to :attr:`slots` as tasks come instead, so a tournament that validated three bots
        still plays its games on every slot."""
        return RayWorkers(max(count, self.slots), settings)

    def close(self) -> None:
        ray = _ray()
        if self.owned and ray.is_initialized():
            ray.shutdown()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def connect(address: str, workers: int | None = None) -> Cluster:
    """Connect to the Ray cluster at ``address`` (see :data:`ADDRESS_HELP`); ``workers`` is
    the number of actors to run, by default one per CPU of the cluster. A failure is a
    :class:`TournamentError` of one line, raised before anything is stored; a cluster that
    wants Ray's auth token and does not get it is named at once (:func:`_check_token`)."""
    # Not HOST:PORT (the head's GCS): Ray retries an unanswered one for ever, where Ray Client
    # and ``auto`` fail within seconds.
    if not (address in ("auto", "local") or re.fullmatch(r"ray://[^\s/:]+:\d{1,5}/?", address)):
        raise TournamentError(f"--cluster {address}: expected {ADDRESS_HELP}")
    ray = _ray()
    if ray.is_initialized():  # a caller (a test, a notebook) connected already: use that
        return Cluster(address, workers or _cpus(ray), owned=False)
    import logging

    options: dict[str, Any] = {
        "logging_level": logging.WARNING,  # no banner in the middle of the progress display
        "log_to_driver": False,  # bots' and actors' output goes to the game logs, not here
    }
    if address == "local":
        options.update(
            address="local",
            num_cpus=workers or os.cpu_count() or 1,
            include_dashboard=False,
            # a private instance: not Ray's advice on securing a cluster
            logging_level=logging.ERROR,
        )
    else:
        options["address"] = address
        _check_token(address)
    # ray.init installs its own SIGTERM handler (exit at once); the caller's (a `kill` stops a
    # run as Ctrl-C does) stays.
    previous_term = signal.getsignal(signal.SIGTERM)
    try:
        with warnings.catch_warnings():  # the error below says it in one line
            warnings.simplefilter("ignore")
            ray.init(**options)
    except Exception as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise TournamentError(f"--cluster {address}: cannot connect to Ray: {first}") from None
    finally:
        with contextlib.suppress(ValueError, TypeError):  # not the main thread; no handler
            signal.signal(signal.SIGTERM, previous_term)
    return Cluster(address, workers or _cpus(ray))


#: what a probe of the cluster's gRPC port may take (it answers in milliseconds when up)
_PROBE_S = 5.0
#: a cheap call each port answers, whose refusal for want of a token is UNAUTHENTICATED: Ray
#: Client's (``ray://``), and the head's GCS (``auto``)
_PROBE_CLIENT = "/ray.rpc.RayletDriver/ClusterInfo"
_PROBE_GCS = "/ray.rpc.NodeInfoGcsService/GetClusterId"


def _check_token(address: str) -> None:
    """Fail in one line when the cluster refuses this driver for its token (Ray's token
    authentication: docs/scaling.md). Ray itself retries a refused driver until it times out
    (Ray Client after 30 s, "ray client connection timeout"; ``auto`` after some 20 s of
    ``InvalidAuthToken`` log lines, "Failed to connect"), so one call of the cluster's gRPC
    port, with the token Ray would send, asks first. Anything but a refusal (no answer, no
    token authentication, an older Ray) leaves the verdict to ``ray.init``."""
    import grpc

    try:
        from ray._private import services

        loader = importlib.import_module("ray._raylet").AuthenticationTokenLoader.instance()
    except (ImportError, AttributeError):  # a Ray without token authentication
        return
    target, method = address.removeprefix("ray://").rstrip("/"), _PROBE_CLIENT
    if address == "auto":
        named = os.environ.get("RAY_ADDRESS", "")
        if named.startswith("ray://"):
            target = named.removeprefix("ray://").rstrip("/")
        else:
            try:
                found = services.canonicalize_bootstrap_address("auto")
            except Exception:
                return  # no cluster here: ray.init says so
            if not found:
                return
            target, method = found, _PROBE_GCS
    token_mode = os.environ.get("RAY_AUTH_MODE", "").lower() == "token"
    try:
        found_token = loader.has_token(ignore_auth_mode=True)
        # what Ray's own gRPC clients send: the token, in token mode only
        sent = token_mode and found_token
        metadata = tuple(loader.get_token_for_http_header().items()) if sent else ()
    except Exception:
        return
    if token_mode and not found_token:  # Ray would say so in a paragraph
        raise TournamentError(f"--cluster {address}: {_token_advice(False)}")
    try:
        with grpc.insecure_channel(target) as channel:
            probe = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
            probe(b"", timeout=_PROBE_S, metadata=metadata)
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.UNAUTHENTICATED:
            raise TournamentError(f"--cluster {address}: {_token_advice(sent)}") from None
    except Exception:
        return


def _token_advice(sent: bool) -> str:
    """Why the cluster refused this driver, and what to set: one line."""
    head = "the head's ~/.ray/auth_token"
    if sent:
        source = (
            "RAY_AUTH_TOKEN"
            if os.environ.get("RAY_AUTH_TOKEN")
            else os.environ.get("RAY_AUTH_TOKEN_PATH") or "~/.ray/auth_token"
        )
        return (
            f"the cluster refused this machine's Ray auth token (from {source}): "
            f"use {head} (RAY_AUTH_TOKEN=... or that file in ~/.ray/auth_token)"
        )
    mode = os.environ.get("RAY_AUTH_MODE", "")
    has = [
        name
        for name, there in (
            ("RAY_AUTH_TOKEN", bool(os.environ.get("RAY_AUTH_TOKEN"))),
            ("RAY_AUTH_TOKEN_PATH", bool(os.environ.get("RAY_AUTH_TOKEN_PATH"))),
            ("~/.ray/auth_token", (Path.home() / ".ray" / "auth_token").is_file()),
        )
        if there
    ]
    if has and mode.lower() != "token":
        return (
            f"the cluster requires Ray's auth token, and Ray sends this machine's "
            f"({has[0]}) only with RAY_AUTH_MODE=token: export RAY_AUTH_MODE=token"
        )
    if mode.lower() == "token":
        return (
            "RAY_AUTH_MODE=token, but no Ray auth token is set: export "
            f"RAY_AUTH_TOKEN=<{head}> (or copy that file to ~/.ray/auth_token)"
        )
    return (
        "the cluster requires Ray's auth token and none is set: export "
        f"RAY_AUTH_TOKEN=<{head}> (or copy that file to ~/.ray/auth_token) and "
        "RAY_AUTH_MODE=token"
    )


def _cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


# ---------------------------------------------------------------------------------------------
# the actor


class GameActor:
    """One worker slot on a node: a ``BotPool`` kept across games, tasks played with the
    worker's ``run_task``. Made a Ray actor by :class:`RayWorkers` (``ray.remote``), so this
    module imports without Ray."""

    def __init__(self, settings: Settings, package: bytes) -> None:
        #: the node's cache of bots, <hash>/ each, and why the package may not be played
        self.home, self.refusal = unpack_bots(package)
        self.records = settings.records  #: the driver's records folder (paths in answers)
        self.scratch = Path(tempfile.mkdtemp(prefix="ttr-ray-"))
        self.settings = dataclasses.replace(
            settings,
            records=None if settings.records is None else str(self.scratch),
            validation_bot=str(self.home / settings.validation_bot),
        )
        self.ruleset = load(settings.variant)
        self.pool = BotPool(settings.startup_s, settings.sandbox, settings.idle_games)
        #: bots of one content hash, by bot id: the first plays from the package's copy,
        #: the others (two authors' identical versions, two copies in a league) from copies
        #: of their own, so that each is a process of its own in a game where both sit
        self.holders: dict[str, int] = {}
        self.copies = Path(tempfile.mkdtemp(prefix="ttr-ray-copies-"))

    def _staged(self, entrant: Entrant) -> Path:
        shared = self.home / entrant.content_hash
        if self.holders.setdefault(entrant.content_hash, entrant.bot_id) == entrant.bot_id:
            return shared
        own = self.copies / f"{entrant.content_hash}-{entrant.bot_id}"
        if not own.exists():
            partial = own.with_suffix(".partial")
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(shared, partial, symlinks=True)
            partial.rename(own)
        return own

    def run(self, task: Task) -> tuple[Answer, dict[str, bytes]]:
        """Play ``task``; the answer with the driver's paths, and the files it wrote under
        records (path relative to the records folder -> bytes)."""
        if self.refusal:
            return Failed(task.key, self.refusal), {}
        entrants = [task.entrant] if isinstance(task, Validate) else list(task.seats)
        bots = {e.path: self._staged(e) for e in entrants}
        local: Task
        if isinstance(task, Validate):
            local = dataclasses.replace(
                task, entrant=dataclasses.replace(task.entrant, path=str(bots[task.entrant.path]))
            )
        else:
            local = dataclasses.replace(
                task,
                seats=tuple(dataclasses.replace(e, path=str(bots[e.path])) for e in task.seats),
            )
        answer = run_task(local, self.settings, self.ruleset, self.pool)
        self.pool.end_logs()  # finish this game's log files
        files = self._collect()
        swaps = [(str(self.scratch), self.records or "")]
        swaps += [(str(staged), driver) for driver, staged in bots.items()]

        def fix(text: str) -> str:
            for old, new in swaps:
                text = text.replace(old, new)
            return text

        if isinstance(answer, Validation):
            assert isinstance(task, Validate)
            return dataclasses.replace(
                answer,
                entrant=task.entrant,
                reason=fix(answer.reason),
                log=None if answer.log is None else fix(answer.log),
            ), files
        if isinstance(answer, GameResult):
            return dataclasses.replace(
                answer,
                record_path=None if answer.record_path is None else fix(answer.record_path),
                seats=tuple(
                    dataclasses.replace(s, log_path=None if s.log_path is None else fix(s.log_path))
                    for s in answer.seats
                ),
                faults=tuple(dataclasses.replace(f, message=fix(f.message)) for f in answer.faults),
            ), files
        return Failed(answer.key, fix(answer.error)), files

    def _collect(self) -> dict[str, bytes]:
        """The files the task wrote under the scratch records folder, removed from it."""
        files = {}
        for dirpath, _, names in os.walk(self.scratch):
            for name in names:
                path = Path(dirpath) / name
                files[path.relative_to(self.scratch).as_posix()] = path.read_bytes()
                path.unlink()
        return files

    def close(self) -> None:
        """Stop the bots (after the game in play: an actor runs one call at a time)."""
        self.pool.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
        shutil.rmtree(self.copies, ignore_errors=True)


def unpack_bots(package: bytes) -> tuple[Path, str]:
    """The node's cache of bots, where each bot of a package (:func:`pack_bots`) is kept by
    its own content hash as ``<temporary folder>/ttr-bots/<hash>/``, and why the package may
    not be played ('' if it may). A bot is unpacked there once per node, whatever package
    brings it, and hashed again under its lock before any build runs in its folder (its
    outputs would change the hash): a bot that differs is refused and not kept. So a bot's
    build is kept across packages: a league night whose entrants changed rebuilds only the
    bots that did."""
    home = Path(tempfile.gettempdir()) / "ttr-bots"
    home.mkdir(mode=0o755, exist_ok=True)  # readable by the bots' own uid, as a checkout
    members: dict[str, list[tuple[str, zipfile.ZipInfo]]] = collections.defaultdict(list)
    with zipfile.ZipFile(io.BytesIO(package)) as zf:
        for info in zf.infolist():
            top, digest, rel = [*info.filename.split("/", 2), "", ""][:3]
            if top == "bots" and re.fullmatch(r"[0-9a-f]{64}", digest) and rel:
                members[digest].append((rel, info))
        refusals = [_unpack_bot(zf, home, digest, found) for digest, found in members.items()]
    return home, next((r for r in refusals if r), "")


def _unpack_bot(
    zf: zipfile.ZipFile, home: Path, digest: str, members: list[tuple[str, zipfile.ZipInfo]]
) -> str:
    """Unpack one bot into ``home/<digest>/`` unless a checked copy is there already (a
    ``<digest>.checked`` beside it); why it may not be played, or ''."""
    bot, checked = home / digest, home / f"{digest}.checked"
    with (home / f"{digest}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if checked.exists() and bot.is_dir():
            return ""
        partial = Path(tempfile.mkdtemp(prefix=f"{digest}.", dir=home))
        partial.chmod(0o755)
        for rel, info in members:
            target = partial / rel
            if not target.resolve().is_relative_to(partial.resolve()):
                continue  # we made the zip; never write outside the folder regardless
            target.parent.mkdir(parents=True, exist_ok=True)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                link = zf.read(info).decode()
                inside = Path(os.path.normpath(target.parent / link))
                if os.path.isabs(link) or not inside.is_relative_to(partial):
                    continue  # the driver packs only links inside a folder
                target.symlink_to(link)
                continue
            with zf.open(info) as member, target.open("wb") as out:
                shutil.copyfileobj(member, out, 1 << 20)
            target.chmod(mode & 0o777 or 0o644)
        found = content_hash(partial)
        if found != digest:
            shutil.rmtree(partial, ignore_errors=True)
            return (
                f"node {socket.gethostname()}: its copy of bot {digest[:12]} hashes "
                f"{found[:12]}; refusing to play a bot other than the one entered"
            )
        checked.unlink(missing_ok=True)
        shutil.rmtree(bot, ignore_errors=True)
        partial.rename(bot)
        checked.touch()
    return ""


# ---------------------------------------------------------------------------------------------
# the driver's side


def pack_bots(folders: Sequence[str], out: Path) -> dict[str, str]:
    """Write the zip of ``folders`` as ``bots/<content hash>/...`` to ``out``; each folder's
    hash by its path. A node keeps each bot by that hash (:func:`unpack_bots`), with its
    build, for the next package that holds it."""
    hashes: dict[str, str] = {}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for folder in sorted(set(folders)):
            digest = content_hash(folder)
            packed = digest in hashes.values()
            hashes[folder] = digest
            if packed:  # two folders of the same files (two spellings of one path, two
                continue  # copies of a bot, the validation bot entered): packed once
            for entry in entries(folder):
                info = zipfile.ZipInfo(
                    f"bots/{digest}/{entry.rel}", date_time=(1980, 1, 1, 0, 0, 0)
                )
                info.compress_type = zipfile.ZIP_DEFLATED
                if entry.link is not None:  # a link inside the folder stays a link
                    info.external_attr = (stat.S_IFLNK | 0o777) << 16
                    zf.writestr(info, entry.link)
                    continue
                info.external_attr = (entry.mode | stat.S_IFREG) << 16
                with zf.open(info, "w", force_zip64=True) as member:
                    for chunk in read_chunks(entry.path):
                        member.write(chunk)
    size = out.stat().st_size
    if size >= _PACKAGE_LIMIT:
        raise TournamentError(
            f"the bots' folders pack to {size // 2**20} MiB, more than a cluster takes "
            f"({_PACKAGE_LIMIT // 2**20} MiB): leave build outputs and data out of bot folders "
            "(their build makes them on each node)"
        )
    return hashes


@dataclasses.dataclass
class _Slot:
    actor: ActorHandle[Any]
    answered: bool = False  #: once: a death after that is not a failure to start


class RayWorkers:
    """The runner's crew on a Ray cluster (see the module's docstring): ``submit``,
    ``results``, ``close`` as the local ``_Workers``."""

    def __init__(self, slots: int, settings: Settings) -> None:
        self.ray = _ray()
        self.slots = max(1, slots)
        self.settings = settings
        self.folder = Path(tempfile.mkdtemp(prefix="ttr-cluster-"))
        self.package: Path | None = None
        self.package_ref: Any = None  #: the zip in Ray's object store
        self.hashes: dict[str, str] = {}  #: bot folder -> content hash, of the package
        self.pending: collections.deque[Task] = collections.deque()
        self.idle: list[_Slot] = []
        self.running: dict[Any, tuple[_Slot, Task]] = {}  #: ObjectRef -> who plays what
        self.retried: set[str] = set()
        self.withdrawn = 0  #: tasks taken back by :meth:`withdraw`, in all
        self.stillborn = 0
        self.remote = self.ray.remote(GameActor)

    # the package ------------------------------------------------------------------------------

    def _stage(self, tasks: Sequence[Task]) -> None:
        """Pack every bot the tasks name (and the validation bot) unless the package holds
        them already; actors made before a new package finish and are let go."""
        folders = {self.settings.validation_bot}
        for task in tasks:
            entrants = [task.entrant] if isinstance(task, Validate) else task.seats
            folders |= {e.path for e in entrants}
        if self.package is not None and folders <= self.hashes.keys():
            return
        folders |= self.hashes.keys()
        package = self.folder / f"{len(list(self.folder.iterdir()))}-{_PACKAGE_NAME}"
        self.hashes = pack_bots(sorted(folders), package)
        self.package = package
        self.package_ref = self.ray.put(package.read_bytes())
        for slot in self.idle:
            self._release(slot)
        self.idle.clear()

    def _actor_settings(self) -> Settings:
        return dataclasses.replace(
            self.settings, validation_bot=self.hashes[self.settings.validation_bot]
        )

    # tasks ------------------------------------------------------------------------------------

    def submit(self, tasks: Sequence[Task]) -> None:
        self._stage(tasks)
        self.pending.extend(tasks)
        self._dispatch()

    def withdraw(self, which: Callable[[Task], bool]) -> list[Task]:
        """Take back the pending tasks ``which`` picks: an actor is handed one task at a
        time, so a pending task has not begun."""
        taken = [task for task in self.pending if which(task)]
        if taken:
            self.pending = collections.deque(t for t in self.pending if not which(t))
            self.withdrawn += len(taken)
        return taken

    def _dispatch(self) -> None:
        """Give each idle actor a task, starting actors up to :attr:`slots`."""
        while self.pending:
            if self.idle:
                slot = self.idle.pop()
            elif len(self.running) < self.slots:
                slot = self._start()
            else:
                return
            task = self.pending.popleft()
            self.running[slot.actor.run.remote(self._as_packed(task))] = (slot, task)

    def _as_packed(self, task: Task) -> Task:
        """``task`` with each bot's hash as the package has it (the node's copy is named by
        it): the hash of the folder as packed, after any build, which is not always the one
        the driver's entrant carries (a ladder names a version by its upload)."""
        if isinstance(task, Validate):
            entrant = task.entrant
            return dataclasses.replace(
                task, entrant=dataclasses.replace(entrant, content_hash=self.hashes[entrant.path])
            )
        return dataclasses.replace(
            task,
            seats=tuple(
                dataclasses.replace(e, content_hash=self.hashes[e.path]) for e in task.seats
            ),
        )

    def _start(self) -> _Slot:
        assert self.package is not None
        actor = self.remote.options(
            num_cpus=1, max_restarts=0, max_task_retries=0, scheduling_strategy="SPREAD"
        ).remote(self._actor_settings(), self.package_ref)
        return _Slot(actor)

    def results(self, expected: int) -> Iterator[Answer]:
        """Answers as they come, ``expected`` of them less any withdrawn meanwhile, each
        game's files written first; a task whose actor died is given to a fresh actor once,
        and answered failed if that one dies too."""
        done = 0
        withdrawn_before = self.withdrawn
        while done + self.withdrawn - withdrawn_before < expected:
            self._dispatch()
            if not self.running:
                raise RuntimeError("no task is running and none is pending")
            ready, _ = self.ray.wait(list(self.running), num_returns=1, timeout=_POLL_S)
            answers = [self._answer(ref, *self.running.pop(ref)) for ref in ready]
            self._dispatch()  # the actors play on while the store takes these
            for answer in answers:
                if answer is not None:  # None: handed to another actor
                    done += 1
                    yield answer

    def _answer(self, ref: Any, slot: _Slot, task: Task) -> Answer | None:
        ray = self.ray
        try:
            answer, files = ray.get(ref)
        except ray.exceptions.RayTaskError as e:  # raised out of run(): a bug, reported
            self.idle.append(slot)
            return Failed(task.key, str(e))
        except ray.exceptions.RayError as e:  # the actor is gone: killed, OOM, node lost
            self._release(slot)
            why = _one_line(e)
            if not slot.answered:
                self.stillborn += 1
                if self.stillborn >= _MAX_STILLBORN:
                    raise TournamentError(f"Ray workers die as they start: {why}") from None
            if task.key in self.retried:
                return Failed(task.key, f"its Ray worker died twice (last: {why})")
            self.retried.add(task.key)
            self.pending.appendleft(task)
            return None
        slot.answered = True
        self.stillborn = 0
        self.idle.append(slot)
        if self.settings.records is not None:
            self._write(files)
        if isinstance(answer, Validation) and isinstance(task, Validate):
            return dataclasses.replace(answer, entrant=task.entrant)  # the driver's own
        return answer  # type: ignore[no-any-return]

    def _write(self, files: dict[str, bytes]) -> None:
        """The game's record and logs, where a local run writes them; the record atomically
        (readers of the records folder never see half of one)."""
        assert self.settings.records is not None
        root = Path(self.settings.records)
        for rel, data in files.items():
            path = root / rel
            if not path.resolve().is_relative_to(root.resolve()):
                continue  # never outside the records folder, whatever the name says
            if rel.endswith(".json") and "/" not in rel:
                write_text_atomic(path, data.decode())
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)

    # the end ----------------------------------------------------------------------------------

    def _release(self, slot: _Slot) -> None:
        with contextlib.suppress(Exception):
            self.ray.kill(slot.actor, no_restart=True)

    def close(self) -> None:
        """Stop every actor and its bots: after its current game (within :data:`_CLOSE_S`),
        then by force."""
        ray = self.ray
        slots = [s for s, _ in self.running.values()] + self.idle
        self.pending.clear()
        self.running.clear()
        self.idle.clear()
        closing: list[Any] = []
        for slot in slots:
            with contextlib.suppress(Exception):
                closing.append(slot.actor.close.remote())
        if closing:
            with contextlib.suppress(Exception):
                ray.wait(closing, num_returns=len(closing), timeout=_CLOSE_S)
        for slot in slots:
            self._release(slot)
        shutil.rmtree(self.folder, ignore_errors=True)


def _one_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__
