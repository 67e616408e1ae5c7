"""Fixtures of the web layer's tests: a results store with one real game (its record and
its seat logs kept), a fake backend over it with two authors, and the app served on a free
loopback port by a real uvicorn server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from leaderboard.ladder.model import Author
from leaderboard.store import GameResult, SeatResult, Store, TournamentSpec
from tests.helpers import play
from tests.server.fake import FakeBackend
from ttr_arena.server.app import WebSettings, make_app, running

ANN_TOKEN = "ann-token-0123456789abcdef0123456789abcdef"
BO_TOKEN = "bo-token-0123456789abcdef0123456789abcdef"
GAME = "L1-g1"  #: the stored game's id
#: a bot author may name a bot anything
HOSTILE = "<b>never</b></script>"


@pytest.fixture(scope="session")
def league_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of one finished tournament with one real usa 2-player game, its record and
    both seats' logs kept in the records folder."""
    folder = tmp_path_factory.mktemp("ladder")
    records = folder / "records"
    records.mkdir()
    record = play(records / f"{GAME}.json", "usa", 2, 7, names=["ann-bot", HOSTILE])
    # what the bots wrote, as the referee records it beside their decisions: as private as
    # their logs
    data = json.loads(record.read_text())
    for entry in data["actions"]:
        entry["lines"] = [f"seat {entry['seat']} private thoughts"]
    record.write_text(json.dumps(data))
    logs = []
    for seat in (0, 1):
        log = records / f"{GAME}-seat{seat}.log"
        log.write_text(f"seat {seat} private thoughts\n")
        logs.append(str(log))
    db = folder / "ladder.db"
    with Store(db) as store:
        a = store.add_bot("ann-bot", "v1", "ann", "sha256:aa")
        b = store.add_bot(HOSTILE, "v1", "bo", "sha256:bb")
        spec = TournamentSpec("ladder", "usa@1", 2, 1, 1, {"records": str(records)})
        t = store.begin_tournament(spec).tournament_id
        store.enter(t, a, "/bots/a", True)
        store.enter(t, b, "/bots/b", True)
        store.record_game(
            GameResult(
                game_id=GAME,
                tournament_id=t,
                schedule_index=0,
                round=0,
                variant="usa@1",
                num_seats=2,
                seed=7,
                end_reason="last_round",
                decisions=100,
                record_path=str(record),
                started_at=1700000000.0,
                finished_at=1700000100.0,
                seats=(
                    SeatResult(0, a, 120, 1, 3, 0, 0, 0, logs[0]),
                    SeatResult(1, b, 80, 2, 1, 1, 0, 0, logs[1]),
                ),
                faults=(),
            )
        )
        store.finish_tournament(t)
    return db


@dataclass
class Served:
    url: str  #: the base URL, ending in /
    fake: FakeBackend

    @property
    def ann(self) -> Author:
        author = self.fake.authenticate(ANN_TOKEN)
        assert author is not None
        return author

    @property
    def bo(self) -> Author:
        author = self.fake.authenticate(BO_TOKEN)
        assert author is not None
        return author


def make_fake(root: Path, store: Path) -> FakeBackend:
    fake = FakeBackend(root, store, upload_bytes=256 << 10)
    fake.add_author("ann", ANN_TOKEN)
    fake.add_author("bo", BO_TOKEN)
    return fake


@pytest.fixture
def fake(tmp_path: Path, league_store: Path) -> FakeBackend:
    return make_fake(tmp_path / "fake", league_store)


@pytest.fixture
def settings() -> WebSettings:
    return WebSettings(upload_per_minute=50, login_per_minute=50)


@pytest.fixture
def served(fake: FakeBackend, settings: WebSettings) -> Iterator[Served]:
    with running(make_app(fake, settings)) as url:
        yield Served(url, fake)
