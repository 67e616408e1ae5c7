"""The user's seed key file and the keyed derivation (referee/hosting/seeds.py): made once,
private, atomic under a race, refused when others may read it or it is not a key."""

from __future__ import annotations

import hashlib
import hmac
import stat
import threading
from pathlib import Path

import pytest

from referee.hosting.seeds import (
    KEY_FILE_ENV,
    SEED_BITS,
    SeedKeyError,
    exposed_by,
    keyed_seed,
    play_seed,
    user_key,
    user_key_path,
)


def test_the_key_file_is_made_once_private_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "data" / "ttr-arena" / "seed.key"
    key = user_key(path)
    assert len(key) == 32 and user_key(path) == key
    assert path.read_text() == key.hex() + "\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["seed.key"]  # no temporary left
    assert user_key(tmp_path / "other.key") != key


def test_commands_starting_at_once_agree_on_one_key(tmp_path: Path) -> None:
    path = tmp_path / "seed.key"
    start = threading.Barrier(16)
    keys: list[bytes] = []

    def make() -> None:
        start.wait()
        keys.append(user_key(path))

    threads = [threading.Thread(target=make) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(keys) == 16 and len(set(keys)) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["seed.key"]


def test_a_key_others_may_read_or_that_is_no_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "seed.key"
    user_key(path)
    path.chmod(0o644)
    with pytest.raises(SeedKeyError, match=r"may be read by others \(mode 0644\); `chmod 600"):
        user_key(path)
    path.chmod(0o600)
    path.write_text("not a key\n")
    with pytest.raises(SeedKeyError, match="not a seed key"):
        user_key(path)
    (tmp_path / "file").write_text("")
    with pytest.raises(SeedKeyError, match=r"cannot (read|create) the seed key"):
        user_key(tmp_path / "file" / "seed.key")


def test_where_the_key_lives() -> None:
    home = Path.home()
    assert user_key_path({}) == home / ".local" / "share" / "ttr-arena" / "seed.key"
    assert user_key_path({"XDG_DATA_HOME": "/d"}) == Path("/d/ttr-arena/seed.key")
    # a relative XDG_DATA_HOME is invalid by the spec: ignored
    assert user_key_path({"XDG_DATA_HOME": "d"}) == user_key_path({})
    assert user_key_path({KEY_FILE_ENV: "/k/key", "XDG_DATA_HOME": "/d"}) == Path("/k/key")


def test_keyed_seeds_are_hmac_sha256_and_63_bits() -> None:
    key = bytes(range(32))
    digest = hmac.new(key, b"ttr-arena/play/7", hashlib.sha256).digest()
    assert play_seed(key, 7) == int.from_bytes(digest[:8], "big") >> 1
    seeds = {play_seed(key, n) for n in range(200)}
    assert len(seeds) == 200 and all(0 <= s < 2**SEED_BITS for s in seeds)
    assert max(seeds) >= 2**62 and 7 not in seeds
    with pytest.raises(ValueError, match="32 bytes"):
        keyed_seed(b"short", "x")


def test_a_secret_inside_what_bots_read_is_found(tmp_path: Path) -> None:
    secret = tmp_path / "a" / "b" / "seed.key"
    assert exposed_by(secret, [tmp_path / "x", tmp_path / "a"]) == tmp_path / "a"
    assert exposed_by(secret, [secret]) == secret
    assert exposed_by(secret, [tmp_path / "a" / "bb", tmp_path / "x"]) is None
