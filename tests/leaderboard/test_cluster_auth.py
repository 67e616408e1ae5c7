"""A cluster with Ray's token authentication refuses a driver without its token: ``--cluster``
says so in one line at once (leaderboard/cluster.py, ``_check_token``) instead of Ray's
"ray client connection timeout" after 30 s.

The driver's side is Ray's own (its token loader, what it sends and when); the cluster is a
gRPC server answering as Ray's authentication interceptor does (UNAUTHENTICATED unless the
``authorization`` header carries the token). Against a real ``ray start --head`` with token
authentication (Ray 2.60) every message here was seen the same, within 0.2 s; see
docs/scaling.md.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from leaderboard.runner import TournamentError
from tests.leaderboard.test_tournament import GREEDY, RANDOM, ROOT, TTR

try:
    import ray._raylet
except ImportError:
    if os.environ.get("CI"):
        raise  # CI installs the extra: a missing Ray is a broken install, not a skip
    pytest.skip("Ray is not installed (pip install 'ttr-arena[ray]')", allow_module_level=True)

from leaderboard.cluster import _check_token

TOKEN = "the-heads-token"
_LOADER: Any = getattr(ray._raylet, "AuthenticationTokenLoader")  # noqa: B009 (not in its stubs)


class _Head:
    """Ray Client's port of a head with token authentication."""

    def __init__(self) -> None:
        self.seen: list[str] = []  #: the authorization header of each call ('' for none)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        handlers = {"ClusterInfo": grpc.unary_unary_rpc_method_handler(self._cluster_info)}
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("ray.rpc.RayletDriver", handlers),)
        )
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    def _cluster_info(self, request: bytes, context: Any) -> bytes:
        header = dict(context.invocation_metadata()).get("authorization", "")
        self.seen.append(header)
        if header != f"Bearer {TOKEN}":
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "Invalid or missing token")
        return b""


@pytest.fixture
def head() -> Iterator[_Head]:
    served = _Head()
    yield served
    served.server.stop(None)


@pytest.fixture
def driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A driver with no token anywhere (its home is empty) and Ray's token mode unset; Ray's
    token loader caches what it read, so it reads afresh before and after."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    _LOADER.instance().reset_cache()
    yield home
    monkeypatch.undo()
    _LOADER.instance().reset_cache()


def _refusal(head: _Head) -> str:
    with pytest.raises(TournamentError) as refused:
        _check_token(f"ray://127.0.0.1:{head.port}")
    message = str(refused.value)
    assert message.startswith(f"--cluster ray://127.0.0.1:{head.port}: ")
    assert len(message.splitlines()) == 1
    return message


def test_no_token_names_what_to_set(head: _Head, driver: Path) -> None:
    message = _refusal(head)
    assert "requires Ray's auth token and none is set" in message
    assert "RAY_AUTH_TOKEN=" in message and "RAY_AUTH_MODE=token" in message
    assert head.seen == [""]


def test_a_token_ray_would_not_send_names_the_mode(
    head: _Head, driver: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray sends the token it finds only in token mode: the file alone is not enough."""
    (driver / ".ray").mkdir()
    (driver / ".ray" / "auth_token").write_text(TOKEN)
    assert "(~/.ray/auth_token) only with RAY_AUTH_MODE=token" in _refusal(head)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    _check_token(f"ray://127.0.0.1:{head.port}")  # with it, the same token is let in
    assert head.seen == ["", f"Bearer {TOKEN}"]


def test_a_wrong_token_is_named_with_where_it_came_from(
    head: _Head, driver: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", "not-the-heads")
    message = _refusal(head)
    assert "refused this machine's Ray auth token (from RAY_AUTH_TOKEN)" in message
    assert head.seen == ["Bearer not-the-heads"]


def test_token_mode_without_a_token_is_refused_before_asking(
    head: _Head, driver: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    assert "RAY_AUTH_MODE=token, but no Ray auth token is set" in _refusal(head)
    assert head.seen == []


def test_the_command_says_it_in_one_line_and_stores_nothing(
    head: _Head, driver: Path, tmp_path: Path
) -> None:
    db = tmp_path / "league.db"
    address = f"ray://127.0.0.1:{head.port}"
    result = subprocess.run(
        [*TTR, "tournament", "run", "--db", str(db), "--cluster", address, RANDOM, GREEDY],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"ttr: error: --cluster {address}: the cluster requires")
    assert len(result.stderr.splitlines()) == 1
    assert not db.exists()
