"""Two cooperating jails try to pass a 64-bit secret through what the kernel lets them share
(issue 34; the inventory is in docs/security.md, "What two jails share").

One process of this script sends, another receives; ``tests/hosting/test_sandbox_channels.py``
starts both (jailed, or as plain processes for the control) and drives them over their
standard streams, since the test is of the channel, not of how the pair finds each other::

    probe.py CHANNEL send SHARED      # then, on stdin: "bits <64 0/1>" or "bit <0/1>" lines
    probe.py CHANNEL recv SHARED      # then, on stdin: "read" lines (and "base")

``SHARED`` is a folder both can read (a bot folder, a ``--read-only`` path): the test fills it
with :func:`fill` first. Every answer is one line on stdout: ``ok``, ``bits <64 0/1>`` or
``bit <0/1>``, or ``refused <errno text>`` when the kernel (the jail) said no. A receiver
that is refused answers zeros: it gets no more bits right than a guess.

*Parallel* channels carry all 64 bits at once (one file, byte or folder per bit); *serial*
ones carry a machine-wide figure, one bit per round: with the sender at rest the receiver
reads it (``base``), then the sender moves it or not and the receiver reads it again.

Only the standard library and ctypes: it must start the same in a jail and out of one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import mmap
import os
import select
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
BITS = 64
#: sizes of the shared folder's files: one page each, so reading one brings in no other
PAGE = 4096
#: byte ranges of /proc/locks's channel: far from any range a real program locks
LOCK_BASE = 0x7E570000

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.syscall.restype = ctypes.c_long


class Refused(Exception):
    """The kernel said no: the channel is closed for this process."""


def _check(ret: int) -> int:
    if ret < 0:
        e = ctypes.get_errno()
        raise Refused(f"[Errno {e}] {os.strerror(e)}")
    return ret


def _os(call: Callable[..., T], *args: Any) -> T:
    try:
        return call(*args)
    except OSError as e:
        raise Refused(f"[Errno {e.errno}] {e.strerror}") from None


def fill(shared: Path) -> None:
    """What the channels use, made by the test (the host) before either side starts: 64
    files of one page (fresh: an old access time, never read since written, not cached), a
    folder per bit for directory notification, a file whose bytes are the lock channel's."""
    shared.mkdir(parents=True, exist_ok=True)
    for i in range(BITS):
        f = shared / f"bit{i:02d}"
        f.write_bytes(bytes([i]) * PAGE)
        d = shared / f"dir{i:02d}"
        d.mkdir(exist_ok=True)
        (d / "f").write_bytes(b"x")
    (shared / "lockfile").write_bytes(b"\0" * BITS)
    for i in range(BITS):
        f = shared / f"bit{i:02d}"
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # out of the page cache
        finally:
            os.close(fd)
        os.utime(f, (1_000_000, time.time()))  # an access time older than the change time


def _files(shared: Path) -> list[Path]:
    return [shared / f"bit{i:02d}" for i in range(BITS)]


# ---------------------------------------------------------------------------------------------
# parallel channels: send(bits) holds its state until stdin closes; recv() -> bits


def _flock_struct(kind: int, start: int) -> bytes:
    # struct flock on 64-bit Linux: short l_type, l_whence; off_t l_start, l_len; pid_t l_pid
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, start, 1, 0)


class PosixLock:
    """Byte-range locks on a shared read-only inode (``F_SETLK``, read with ``F_GETLK``)."""

    set_cmd, get_cmd = fcntl.F_SETLK, fcntl.F_GETLK

    def send(self, shared: Path, bits: list[int]) -> object:
        fd = _os(os.open, shared / "lockfile", os.O_RDONLY)
        for i, b in enumerate(bits):
            if b:
                _os(fcntl.fcntl, fd, self.set_cmd, _flock_struct(fcntl.F_RDLCK, i))
        return fd

    def recv(self, shared: Path) -> list[int]:
        fd = _os(os.open, shared / "lockfile", os.O_RDONLY)
        out: list[int] = []
        for i in range(BITS):
            got = _os(fcntl.fcntl, fd, self.get_cmd, _flock_struct(fcntl.F_WRLCK, i))
            assert isinstance(got, bytes)
            out.append(int(struct.unpack("hhqqi4x", got)[0] != fcntl.F_UNLCK))
        return out


class OfdLock(PosixLock):
    """Open file description locks (``F_OFD_SETLK`` / ``F_OFD_GETLK``)."""

    set_cmd, get_cmd = fcntl.F_OFD_SETLK, fcntl.F_OFD_GETLK


class Flock:
    """Whole-file ``flock`` locks, a file per bit."""

    def send(self, shared: Path, bits: list[int]) -> object:
        fds = []
        for f, b in zip(_files(shared), bits, strict=True):
            if b:
                fd = _os(os.open, f, os.O_RDONLY)
                _os(fcntl.flock, fd, fcntl.LOCK_SH)
                fds.append(fd)
        return fds

    def recv(self, shared: Path) -> list[int]:
        out = []
        for f in _files(shared):
            fd = _os(os.open, f, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                out.append(0)
            except BlockingIOError:
                out.append(1)
            except OSError as e:
                raise Refused(f"[Errno {e.errno}] {e.strerror}") from None
            finally:
                os.close(fd)
        return out


class Lease:
    """A write lease is granted only while nobody else has the file open, so trying for one
    (``F_SETLEASE``) tells whether the other side holds it open."""

    def send(self, shared: Path, bits: list[int]) -> object:
        return [
            _os(os.open, f, os.O_RDONLY) for f, b in zip(_files(shared), bits, strict=True) if b
        ]

    def recv(self, shared: Path) -> list[int]:
        out = []
        for f in _files(shared):
            fd = _os(os.open, f, os.O_RDONLY)
            try:
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
                out.append(0)
            except OSError as e:
                if e.errno != errno.EAGAIN:
                    raise Refused(f"[Errno {e.errno}] {e.strerror}") from None
                out.append(1)
            finally:
                os.close(fd)
        return out


class _Watcher:
    """What the receivers of access notifications share: they watch first (``prepare``),
    the sender opens and reads the files of its 1 bits, then they read their events."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def send(self, shared: Path, bits: list[int]) -> object:
        for f, b in zip(_files(shared), bits, strict=True):
            if b:
                f.read_bytes()
        return None


class Inotify(_Watcher):
    """``inotify_add_watch(IN_OPEN | IN_ACCESS)`` on each shared file."""

    def prepare(self, shared: Path) -> None:
        self.fd = _check(libc.inotify_init1(os.O_NONBLOCK))
        self.wd = {}
        for i, f in enumerate(_files(shared)):
            wd = _check(libc.inotify_add_watch(self.fd, os.fsencode(f), 0x20 | 0x01))
            self.wd[wd] = i

    def recv(self, shared: Path) -> list[int]:
        time.sleep(0.05)
        seen: set[int] = set()
        while select.select([self.fd], [], [], 0.05)[0]:
            data = os.read(self.fd, 65536)
            at = 0
            while at + 16 <= len(data):
                wd, _mask, _cookie, size = struct.unpack_from("iIII", data, at)
                seen.add(self.wd.get(wd, -1))
                at += 16 + size
        return [int(i in seen) for i in range(BITS)]


class Fanotify(_Watcher):
    """``fanotify_mark(FAN_OPEN)`` on each shared file: each event holds the opened file."""

    def prepare(self, shared: Path) -> None:
        self.fd = _check(libc.syscall(300 if _X86 else 262, 0, os.O_RDONLY))  # fanotify_init
        for f in _files(shared):
            # fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, path)
            _check(libc.syscall(301 if _X86 else 263, self.fd, 1, 0x20, -100, os.fsencode(f)))
        self.names = {str(f): i for i, f in enumerate(_files(shared))}

    def recv(self, shared: Path) -> list[int]:
        time.sleep(0.05)
        seen: set[int] = set()
        while select.select([self.fd], [], [], 0.05)[0]:
            data = os.read(self.fd, 65536)
            at = 0
            while at + 24 <= len(data):
                size, _v, _r, _m, _mask, fd, _pid = struct.unpack_from("IBBHQii", data, at)
                if fd >= 0:
                    seen.add(self.names.get(os.readlink(f"/proc/self/fd/{fd}"), -1))
                    os.close(fd)
                at += size
        return [int(i in seen) for i in range(BITS)]


class Dnotify(_Watcher):
    """Directory notification: ``F_NOTIFY(DN_ACCESS)`` on a folder per bit, told by a
    real-time signal whose ``si_fd`` names the folder."""

    def prepare(self, shared: Path) -> None:
        self.sig = signal.SIGRTMIN + 1
        signal.pthread_sigmask(signal.SIG_BLOCK, {self.sig})
        self.fds = {}
        for i in range(BITS):
            fd = _os(os.open, shared / f"dir{i:02d}", os.O_RDONLY | os.O_DIRECTORY)
            _os(fcntl.fcntl, fd, 10, self.sig)  # F_SETSIG
            _os(fcntl.fcntl, fd, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)
            self.fds[fd] = i

    def send(self, shared: Path, bits: list[int]) -> object:
        for i, b in enumerate(bits):
            if b:
                (shared / f"dir{i:02d}" / "f").read_bytes()
        return None

    def recv(self, shared: Path) -> list[int]:
        time.sleep(0.05)
        mask = (ctypes.c_ulong * 16)()
        libc.sigemptyset(mask)
        libc.sigaddset(mask, self.sig)
        info = ctypes.create_string_buffer(128)
        zero = struct.pack("qq", 0, 0)
        seen: set[int] = set()
        while libc.sigtimedwait(mask, info, zero) == self.sig:
            seen.add(self.fds.get(struct.unpack_from("i", info.raw, 24)[0], -1))
        return [int(i in seen) for i in range(BITS)]


class Atime:
    """Access times: reading a file would move its ``st_atime``."""

    def send(self, shared: Path, bits: list[int]) -> object:
        for f, b in zip(_files(shared), bits, strict=True):
            if b:
                f.read_bytes()
        return None

    def recv(self, shared: Path) -> list[int]:
        return [int(f.stat().st_atime > 2_000_000) for f in _files(shared)]


class Mincore(Atime):
    """The page cache, read by ``mincore`` on a mapping of each file."""

    def recv(self, shared: Path) -> list[int]:
        out = []
        vec = ctypes.create_string_buffer(1)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
        libc.mmap.argtypes += [ctypes.c_int, ctypes.c_long]
        for f in _files(shared):
            fd = _os(os.open, f, os.O_RDONLY)
            addr = libc.mmap(None, PAGE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
            os.close(fd)
            try:
                _check(libc.mincore(ctypes.c_void_p(addr), PAGE, vec))
            finally:
                libc.munmap(ctypes.c_void_p(addr), PAGE)
            out.append(vec.raw[0] & 1)
        return out


class Cachestat(Atime):
    """The page cache, read by ``cachestat`` (Linux 6.5)."""

    def recv(self, shared: Path) -> list[int]:
        out = []
        for f in _files(shared):
            fd = _os(os.open, f, os.O_RDONLY)
            rng = struct.pack("QQ", 0, 0)
            stat = ctypes.create_string_buffer(40)
            try:
                _check(libc.syscall(451, fd, rng, stat, 0))
            finally:
                os.close(fd)
            out.append(int(struct.unpack_from("Q", stat.raw, 0)[0] > 0))
        return out


class ProcLocks:
    """``/proc/locks`` lists every lock on the machine: the sender locks byte ranges of a file
    of its own (in its private ``/tmp``), the receiver reads their offsets (a byte apart:
    the kernel merges one owner's adjacent ranges)."""

    def send(self, shared: Path, bits: list[int]) -> object:
        fd = _os(os.open, "/tmp/ttr-channel-locks", os.O_RDWR | os.O_CREAT, 0o600)
        for i, b in enumerate(bits):
            if b:
                _os(fcntl.fcntl, fd, fcntl.F_SETLK, _flock_struct(fcntl.F_WRLCK, LOCK_BASE + 2 * i))
        return fd

    def recv(self, shared: Path) -> list[int]:
        seen: set[int] = set()
        for line in _os(Path("/proc/locks").read_text).splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[-2].isdigit():
                seen.add((int(parts[-2]) - LOCK_BASE) // 2)
        return [int(i in seen) for i in range(BITS)]


# ---------------------------------------------------------------------------------------------
# serial channels: a machine-wide figure; set(bit) moves it or not, read() reports it


def _field(path: str, pick: Callable[[str], str]) -> int:
    try:
        return int(pick(Path(path).read_text()))
    except (OSError, ValueError, IndexError):
        return 0


class Threads:
    """Threads on the machine: ``/proc/loadavg``'s 4th field; the sender runs 48 more."""

    path = "/proc/loadavg"

    def __init__(self) -> None:
        self.held: list[threading.Event] = []

    def set(self, bit: int) -> None:
        for e in self.held:
            e.set()
        self.held = []
        if bit:
            for _ in range(48):
                e = threading.Event()
                threading.Thread(target=e.wait, daemon=True).start()
                self.held.append(e)
        time.sleep(0.01)

    def read(self) -> int:
        return _field(self.path, lambda t: t.split()[3].split("/")[1])

    step = 24


class Memory:
    """Free memory: ``/proc/meminfo``; the sender touches 128 MB more. Not in :data:`SERIAL`:
    the kernel folds its per-CPU counts into the figure about once a second, so a round
    takes a second; the stand-in that closes it is the one the other ``/proc`` files get."""

    def __init__(self) -> None:
        self.buf: bytearray | None = None

    def set(self, bit: int) -> None:
        self.buf = None
        if bit:
            self.buf = bytearray(128 << 20)
            for i in range(0, len(self.buf), PAGE):
                self.buf[i] = 1

    def read(self) -> int:
        return -_field("/proc/meminfo", lambda t: t.split("MemFree:")[1].split()[0]) * 1024

    step = 64 << 20


class OpenFiles:
    """Open files on the machine: ``/proc/sys/fs/file-nr``; the sender opens 150 more."""

    def __init__(self) -> None:
        self.fds: list[int] = []

    def set(self, bit: int) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(150 if bit else 0)]

    def read(self) -> int:
        return _field("/proc/sys/fs/file-nr", lambda t: t.split()[0])

    step = 75


class Ptys:
    """Terminals on the machine: ``/proc/sys/kernel/pty/nr``; the sender opens 16 more."""

    def __init__(self) -> None:
        self.fds: list[int] = []

    def set(self, bit: int) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []
        for _ in range(16 if bit else 0):
            try:
                self.fds += os.openpty()
            except OSError as e:
                raise Refused(f"[Errno {e.errno}] {e.strerror}") from None

    def read(self) -> int:
        return _field("/proc/sys/kernel/pty/nr", lambda t: t)

    step = 8


class Aio:
    """Asynchronous I/O contexts on the machine: ``/proc/sys/fs/aio-nr``."""

    def __init__(self) -> None:
        self.ctx = ctypes.c_ulong(0)

    def set(self, bit: int) -> None:
        if self.ctx.value:
            libc.syscall(207 if _X86 else 1, self.ctx)  # io_destroy
            self.ctx = ctypes.c_ulong(0)
        if bit:
            _check(libc.syscall(206 if _X86 else 0, 4096, ctypes.byref(self.ctx)))  # io_setup

    def read(self) -> int:
        return _field("/proc/sys/fs/aio-nr", lambda t: t)

    step = 2048


class Sysinfo(Threads):
    """Processes on the machine as ``sysinfo(2)`` counts them (``procs``)."""

    def read(self) -> int:
        buf = ctypes.create_string_buffer(128)
        _check(libc.sysinfo(buf))
        procs: int = struct.unpack_from("H", buf.raw, 80)[0]  # after uptime, loads, 5 ulongs
        return procs


_X86 = os.uname().machine == "x86_64"

PARALLEL = {
    "posix-lock": PosixLock,
    "ofd-lock": OfdLock,
    "flock": Flock,
    "lease": Lease,
    "dnotify": Dnotify,
    "inotify": Inotify,
    "fanotify": Fanotify,
    "atime": Atime,
    "mincore": Mincore,
    "cachestat": Cachestat,
    "proc-locks": ProcLocks,
}
SERIAL = {
    "threads": Threads,
    "open-files": OpenFiles,
    "ptys": Ptys,
    "aio": Aio,
    "sysinfo": Sysinfo,
}


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(channel: str, role: str, shared: Path) -> None:
    """The line protocol of the module's docstring, until stdin closes."""
    serial = channel in SERIAL
    impl: Any = (SERIAL if serial else PARALLEL)[channel]()
    base = 0
    refused = ""
    try:
        if role == "recv":
            if serial:
                base = impl.read()
            elif hasattr(impl, "prepare"):
                impl.prepare(shared)
    except Refused as e:
        refused = str(e)
    _say(f"refused {refused}" if refused else "ok")
    held = []
    for line in sys.stdin:
        word, *rest = line.split()
        try:
            if refused:
                raise Refused(refused)
            if role == "send" and word == "bits":
                held.append(impl.send(shared, [int(c) for c in rest[0]]))
                _say("ok")
            elif role == "send" and word == "bit":
                impl.set(int(rest[0]))
                _say("ok")
            elif serial and word == "base":
                base = impl.read()
                _say("ok")
            elif serial:
                _say(f"bit {int(impl.read() - base >= impl.step)}")
            else:
                _say("bits " + "".join(str(b) for b in impl.recv(shared)))
        except Refused as e:
            refused = str(e)
            _say(f"refused {e}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
