"""``ttr submit`` and ``ttr submissions`` against the competition server's real app (uvicorn on
loopback) over the in-memory backend of tests/server/fake.py: packing, uploading, following a
version with ``--wait``, the exit statuses, where the token comes from (never the command
line), and that it is never printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.conftest import ANN_TOKEN, make_fake
from tests.server.fake import FakeBackend
from ttr_arena.cli import main, submit
from ttr_arena.server.app import WebSettings, make_app, running

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "sample_bots" / "random"
GREEDY = ROOT / "sample_bots" / "greedy"


@pytest.fixture
def fake(tmp_path: Path) -> FakeBackend:
    # the league page is not asked for here: the store need not exist
    return make_fake(tmp_path / "fake", tmp_path / "no-store.db")


@pytest.fixture
def url(fake: FakeBackend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    monkeypatch.setattr(submit, "POLL_S", 0.02)
    monkeypatch.setenv("TTR_TOKEN", ANN_TOKEN)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TTR_SERVER", raising=False)
    settings = WebSettings(upload_per_minute=50, login_per_minute=50)
    with running(make_app(fake, settings)) as base:
        yield base


def ttr(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``ttr argv`` in this process: (exit status, stdout, stderr), the token in neither."""
    capsys.readouterr()
    try:
        status = main(list(argv))
    except SystemExit as e:
        status = int(e.code or 0)
    out, err = capsys.readouterr()
    assert ANN_TOKEN not in out + err
    return status, out, err


def test_submit_uploads_and_waits_until_active(
    url: str, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.advance_on_poll = True
    status, out, err = ttr(capsys, "submit", str(RANDOM), "--server", url, "--wait")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("v1: uploaded random (2 files, ") and lines[0].endswith(": queued")
    assert lines[1:] == [
        "v1: building",
        "v1: validating",
        "v1: active (usa@1 2p: mu 25.0 sigma 8.3, usa@1 4p: mu 25.0 sigma 8.3)",
    ]
    # the same folder again is no new version; it is active already
    status, out, _ = ttr(capsys, "submit", str(RANDOM), "--server", url, "--wait")
    assert status == 0
    assert out.splitlines() == [
        "v1: identical to your version v1 (nothing new stored): active",
        "v1: active (usa@1 2p: mu 25.0 sigma 8.3, usa@1 4p: mu 25.0 sigma 8.3)",
    ]
    assert fake.stored() == 1


def test_a_failed_version_exits_1_with_its_reason(
    url: str, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.advance_on_poll = True
    fake.outcome = (["building", "failed"], "build failed: \x1b]0;pwned\x07 no module named x")
    status, out, _ = ttr(capsys, "submit", str(GREEDY), "--server", url, "--wait")
    assert status == 1
    assert "v1: building" in out.splitlines()
    assert "v1: failed: build failed: \\x1b]0;pwned\\x07 no module named x" in out
    assert "\x1b" not in out  # the reason is printed escaped
    assert f"{url}me/versions/1" in out


def test_wait_gives_up_after_its_timeout(
    url: str, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = ttr(
        capsys, "submit", str(RANDOM), "--server", url, "--wait", "--timeout", "0.1"
    )
    assert status == 1 and "gave up waiting after 0.1 s: v1 is still queued" in err


def test_submissions_lists_versions_as_a_table_and_as_json(
    url: str, fake: FakeBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = ttr(capsys, "submissions", "--server", url)
    assert status == 0 and "no versions yet" in out
    assert ttr(capsys, "submit", str(RANDOM), "--server", url)[0] == 0
    fake.outcome = (["failed"], "validation game 1 failed: timeout")
    assert ttr(capsys, "submit", str(GREEDY), "--server", url)[0] == 0
    ann = fake.authenticate(ANN_TOKEN)
    assert ann is not None
    for _ in range(3):
        fake.advance(ann, 1)
    fake.advance(ann, 2)

    status, out, _ = ttr(capsys, "submissions", "--server", url)
    assert status == 0
    header, v2, v1, legend = out.splitlines()
    assert header.split() == ["version", "bot", "state", "usa@1", "2p", "usa@1", "4p", "reason"]
    assert v2.split()[:3] == ["v2", "greedy", "failed"]
    assert v2.endswith("validation game 1 failed: timeout")
    assert v1.split() == [
        "v1",
        "random",
        "active",
        "25.0/8.3",
        "#1",
        "3g",
        "0f",
        "25.0/8.3",
        "#2",
        "3g",
        "0f",
    ]
    assert legend.startswith("pools: mu/sigma")

    status, out, _ = ttr(capsys, "submissions", "--server", url, "--json")
    data = json.loads(out)
    assert [v["label"] for v in data["versions"]] == ["v2", "v1"]
    assert data["versions"][1]["pools"][0]["rank"] == 1


def test_the_token_comes_from_a_file_or_the_environment_never_argv(
    url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TTR_TOKEN")
    status, _, err = ttr(capsys, "submissions", "--server", url)
    assert status == 2 and "no token: set $TTR_TOKEN, or put it in ~/.config/ttr-arena/token" in err

    default = tmp_path / "home" / ".config" / "ttr-arena" / "token"
    default.parent.mkdir(parents=True)
    default.write_text(ANN_TOKEN + "\n")
    default.chmod(0o600)
    status, out, err = ttr(capsys, "submissions", "--server", url)
    assert (status, err) == (0, "") and "no versions yet" in out

    wrong = tmp_path / "wrong-token"
    wrong.write_text("not-the-token\n")
    wrong.chmod(0o644)
    status, _, err = ttr(capsys, "submit", str(RANDOM), "--server", url, "--token-file", str(wrong))
    assert status == 2
    assert f"refused the token from {wrong} (401" in err and "not-the-token" not in err
    assert "readable by others" in err

    for argv in (["--token", ANN_TOKEN], [f"--token={ANN_TOKEN}"]):
        status, _, err = ttr(capsys, "submit", str(RANDOM), "--server", url, *argv)
        assert status == 2 and "never from the command line" in err, err


def test_refusals_exit_2_in_one_line(
    url: str, fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # refused here, before anything is sent: no bot.toml, a link, over the server's cap
    empty = tmp_path / "empty"
    empty.mkdir()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "bot.toml").write_text((RANDOM / "bot.toml").read_text())
    (linked / "bot.py").symlink_to(RANDOM / "bot.py")
    big = tmp_path / "big"
    big.mkdir()
    (big / "bot.toml").write_text((RANDOM / "bot.toml").read_text())
    (big / "weights.bin").write_bytes(os.urandom(fake.upload_bytes + 1))
    for folder, words in ((empty, "bot.toml"), (linked, "is a link"), (big, "packs to more than")):
        status, out, err = ttr(capsys, "submit", str(folder), "--server", url)
        assert status == 2 and out == "", err
        assert err.startswith("ttr: error: not uploaded: ") and words in err
        assert err.count("\n") == 1
    assert fake.submits == []

    # refused by the server: its message, its status
    fake.frozen = True
    status, _, err = ttr(capsys, "submit", str(RANDOM), "--server", url)
    assert status == 2 and "upload refused (403): the season is frozen" in err
    fake.frozen = False
    fake.per_day = 0
    status, _, err = ttr(capsys, "submit", str(RANDOM), "--server", url)
    assert status == 2 and "refused (429): at most 0 submissions a day" in err

    status, _, err = ttr(capsys, "submit", str(RANDOM), "--server", "http://127.0.0.1:1")
    assert status == 2 and err.startswith("ttr: error: cannot reach http://127.0.0.1:1/")
    status, _, err = ttr(capsys, "submit", str(RANDOM))
    assert status == 2 and "no server: pass --server URL" in err


def test_the_installed_command_uploads(url: str, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text(ANN_TOKEN)
    token.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if k != "TTR_TOKEN"}
    run = subprocess.run(
        [sys.executable, "-m", "ttr_arena.cli", "submit", str(RANDOM), "--token-file", str(token)],
        env={**env, "TTR_SERVER": url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("v1: uploaded random") and ANN_TOKEN not in run.stdout + run.stderr
