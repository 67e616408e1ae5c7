"""The kernel probes of the ``kernel`` hostile bot, runnable on their own (``python probes.py``)
so that a test can show they reach the kernel outside a jail: a probe that merely failed
would prove nothing about the jail.

Each probe calls one syscall with arguments that make the kernel answer something other than
EPERM/ENOSYS when the call reaches it (an id, 0, EFAULT or EINVAL), so ``SUCCEEDED`` means
"reached the kernel" and ``OSError: [Errno 1]`` means a filter refused it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import signal
import subprocess
import sys
from collections.abc import Callable

#: syscall numbers of the two architectures the platform runs on
NR = {
    "x86_64": {
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "ptrace": 101,
        "perf_event_open": 298,
        "userfaultfd": 323,
        "unshare": 272,
        "setns": 308,
        "bpf": 321,
        "io_uring_setup": 425,
        "clone3": 435,
    },
    "aarch64": {
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "ptrace": 117,
        "perf_event_open": 241,
        "userfaultfd": 282,
        "unshare": 97,
        "setns": 268,
        "bpf": 280,
        "io_uring_setup": 425,
        "clone3": 435,
    },
}[platform.machine()]
KEY_SPEC_SESSION_KEYRING = -3
KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_READ = 11
PTRACE_ATTACH = 16
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
UFFD_USER_MODE_ONLY = 1

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def syscall(name: str, *args: object) -> int:
    """``syscall(2)``; raises OSError on -1, as the os module would."""
    rc = int(libc.syscall(ctypes.c_long(NR[name]), *args))
    if rc == -1:
        e = ctypes.get_errno()
        raise OSError(e, f"{name}: {os.strerror(e)}")
    return rc


def reached(name: str, *args: object) -> str:
    """Call ``name``; an answer of the kernel's own (not EPERM/ENOSYS) is returned as text,
    EPERM/ENOSYS is raised."""
    try:
        return f"returned {syscall(name, *args)}"
    except OSError as e:
        if e.errno in (errno.EPERM, errno.ENOSYS, errno.EACCES):
            raise
        return f"the kernel answered {errno.errorcode.get(e.errno or 0, e.errno)}"


def join_session_keyring() -> int:
    """What pam_keyinit does at a login (and systemd for a service): a session keyring of
    our own, which every process started from here possesses."""
    return syscall("keyctl", KEYCTL_JOIN_SESSION_KEYRING, None)


def store(description: str, payload: bytes) -> str:
    key = syscall(
        "add_key", b"user", description.encode(), payload, len(payload), KEY_SPEC_SESSION_KEYRING
    )
    return f"key {key}"


def fetch(description: str) -> str:
    key = syscall("request_key", b"user", description.encode(), None, 0)
    buf = ctypes.create_string_buffer(4096)
    n = syscall("keyctl", KEYCTL_READ, key, buf, len(buf))
    return buf.raw[: min(n, len(buf))].decode("utf-8", "replace")


def ptrace_child() -> str:
    """Attach to a child of ours (which unjailed the kernel allows). Reaped by hand: once
    attached, the child's stop is reported to us like an exit, and Popen would take it for
    one and never kill it, leaving it stopped forever with our stdout open."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return reached("ptrace", PTRACE_ATTACH, child.pid, None, None)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        while True:
            _, status = os.waitpid(child.pid, 0)
            if os.WIFEXITED(status) or os.WIFSIGNALED(status):
                break
        child.returncode = -signal.SIGKILL


#: what each probe calls
PROBES: dict[str, Callable[[], str]] = {
    "keyctl session keyring": lambda: reached("keyctl", 0, KEY_SPEC_SESSION_KEYRING, 0),
    "ptrace a child": ptrace_child,
    "perf_event_open": lambda: reached("perf_event_open", None, 0, -1, -1, 0),
    "userfaultfd": lambda: reached("userfaultfd", UFFD_USER_MODE_ONLY),
    "unshare a user namespace": lambda: reached("unshare", CLONE_NEWUSER),
    "unshare a network namespace": lambda: reached("unshare", CLONE_NEWNET),
    "setns": lambda: reached("setns", -1, 0),
    "bpf": lambda: reached("bpf", -1, None, 0),
    "io_uring_setup": lambda: reached("io_uring_setup", 0, None),
    "clone3": lambda: reached("clone3", None, 0),
}


def run_all(report: Callable[[str, str], None]) -> None:
    """Every probe, one ``report(what, outcome)`` line each."""
    for what, probe in PROBES.items():
        try:
            outcome = "SUCCEEDED " + probe()
        except Exception as e:
            outcome = f"{type(e).__name__}: {e}"
        report(what, outcome)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--store"]:  # store, then read back from a fresh process
        join_session_keyring()
        print("ATTACK store:", store("ttr-probe", b"hand of seat 0"), flush=True)
        read = [sys.executable, __file__, "--fetch"]
        sys.exit(subprocess.run(read, check=False).returncode)
    if sys.argv[1:2] == ["--fetch"]:
        print("ATTACK fetch:", fetch("ttr-probe"), flush=True)
        sys.exit(0)
    run_all(lambda what, outcome: print(f"ATTACK {what}: {outcome}", flush=True))
