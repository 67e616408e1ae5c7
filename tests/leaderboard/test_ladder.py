"""The competition ladder's core (leaderboard/ladder/): the season file, the store's ladder
tables, and a real ladder: real uploads (packed folders), real builds (in the jail where this
machine has one), real validation games and ladder games on worker processes.

The HTTP side is tested in tests/server/; killing the whole server is tests/cli/test_server.py.
"""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from leaderboard.faults import FaultRule
from leaderboard.ladder.model import Author, SubmissionError
from leaderboard.ladder.season import Pool, Season, SeasonError, read_season
from leaderboard.ladder.service import Ladder, LadderError
from leaderboard.ladder.store import LadderStore
from leaderboard.ratings import SIGMA, standings
from leaderboard.store import Store
from referee.hosting.sandbox import SandboxConfig, unavailable_reason
from referee.hosting.upload import UploadError, pack
from tests.leaderboard.test_disabling import first_game_only
from ttr_arena.pages.league.data import league_json

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"
UNSANDBOXED = SandboxConfig(enabled=False)
DEADLINE_S = 240.0  #: generous: a loaded machine is slow, never wrong


def wait_for(what: str, ready: Callable[[], bool], ladder: Ladder | None = None) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not ready():
        if ladder is not None and ladder.error is not None:
            raise AssertionError(f"the ladder stopped: {ladder.error!r}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def variant_of(folder: Path, tmp: Path, marker: str) -> Path:
    """A copy of a sample bot with different content (a new version, not a duplicate)."""
    out = tmp / f"{folder.name}-{marker}"
    shutil.copytree(folder, out, ignore=shutil.ignore_patterns("__pycache__", ".ttr-build*"))
    (out / "NOTES.txt").write_text(f"version {marker}\n")
    return out


def state(ladder: Ladder, author: Author, number: int) -> str:
    info = ladder.version(author, number)
    assert info is not None
    return info.state


# ---------------------------------------------------------------------------------------------
# the season file


def test_season_file_reads_pools_and_overrides_defaults(tmp_path: Path) -> None:
    path = tmp_path / "season.toml"
    path.write_text(
        'name = "Autumn"\n'
        '[[pools]]\nvariant = "usa"\nplayers = 4\nweight = 3\n'
        '[[pools]]\nvariant = "cardgame"\nplayers = 2\n'
        "[clock]\nmove_ms = 500\n"
        "[submissions]\nper_day = 3\nactive_versions = 2\nupload_mb = 8\n"
        "[ladder]\nworkers = 3\ninherit_mu = false\n"
        "[faults]\nwindow = 20\nminimum = 3\n"
    )
    season = read_season(path)
    assert season.name == "Autumn"
    assert season.pools == (Pool("usa@1", 4, 3.0), Pool("cardgame@1", 2, 1.0))
    assert (season.move_ms, season.bank_ms) == (500, Season().bank_ms)
    assert (season.per_day, season.active_versions, season.workers) == (3, 2, 3)
    assert season.upload.upload_bytes == 8 << 20
    assert season.matchmaking.inherit_mu is False
    assert season.faults == FaultRule(window=20, rate=0.1, minimum=3)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[submissions]\nper_dya = 3\n", "unknown key 'per_dya'"),
        ("[clok]\nmove_ms = 3\n", "unknown section [clok]"),
        ("[clock]\nmove_ms = '3'\n", "move_ms = '3': wrong type"),
        ('[[pools]]\nvariant = "usa"\nplayers = 9\n', "played by 2 to 5 players, not 9"),
        ('[[pools]]\nvariant = "chess"\nplayers = 2\n', "unknown variant 'chess'"),
        ('[[pools]]\nvariant = "usa"\n', "needs a variant and players"),
        (
            '[[pools]]\nvariant = "usa"\nplayers = 2\n[[pools]]\nvariant = "usa@1"\nplayers = 2\n',
            "listed twice",
        ),
        ("[ladder]\nworkers = 0\n", "workers must be positive"),
        ("[faults]\nrate = 2\n", "fault rate"),
        ("name = \n", "not valid TOML"),
    ],
)
def test_season_file_mistakes_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "season.toml"
    path.write_text(text)
    with pytest.raises(SeasonError, match=message.replace("[", r"\[").replace("(", r"\(")):
        read_season(path)


# ---------------------------------------------------------------------------------------------
# the store: authors, tokens, versions


def opened(tmp_path: Path, season: Season | None = None, **kwargs: object) -> Ladder:
    ladder = Ladder(season or Season(pools=(Pool("usa@1", 2),)), tmp_path / "data", **kwargs)  # type: ignore[arg-type]
    ladder.open()
    return ladder


def test_only_a_hash_of_each_token_is_stored(tmp_path: Path) -> None:
    ladder = opened(tmp_path, sandbox=UNSANDBOXED)
    try:
        token = ladder.store().add_author("alice")
        assert ladder.authenticate(token) == Author(
            1, "alice", ladder.store().authors()[0].created_at
        )
        assert ladder.authenticate(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
        assert ladder.authenticate("") is None
        raw = (ladder.data / "season.db").read_bytes()
        for f in ladder.data.glob("season.db*"):
            raw += f.read_bytes()
        assert token.encode() not in raw
        fresh = ladder.store().new_token("alice")
        assert ladder.authenticate(token) is None and ladder.authenticate(fresh) is not None
        with pytest.raises(Exception, match="exists already"):
            ladder.store().add_author("alice")
        with pytest.raises(Exception, match="author name"):
            ladder.store().add_author("../evil")
    finally:
        ladder.stop()


def test_one_server_per_data_folder(tmp_path: Path) -> None:
    first = opened(tmp_path, sandbox=UNSANDBOXED)
    try:
        with pytest.raises(LadderError, match="another ttr server is running"):
            opened(tmp_path, sandbox=UNSANDBOXED)
    finally:
        first.stop()


def test_a_season_needs_a_store_of_its_own(tmp_path: Path) -> None:
    from leaderboard.store import TournamentSpec

    (tmp_path / "data").mkdir()
    with Store(tmp_path / "data" / "season.db") as store:
        store.begin_tournament(TournamentSpec("night", "usa@1", 2, 1, 1, {}))
    with pytest.raises(LadderError, match="a season needs a store of its own"):
        opened(tmp_path, sandbox=UNSANDBOXED)


def test_submissions_dedupe_refuse_and_count(tmp_path: Path) -> None:
    """Identical content is the same version; a hostile archive stores nothing; the daily
    count and the freeze refuse with their own statuses."""
    season = Season(pools=(Pool("usa@1", 2),), per_day=2)
    ladder = opened(tmp_path, season, sandbox=UNSANDBOXED)
    try:
        store = ladder.store()
        alice = ladder.authenticate(store.add_author("alice"))
        bob = ladder.authenticate(store.add_author("bob"))
        assert alice is not None and bob is not None
        first = ladder.submit(alice, pack(SAMPLES / "random"))
        assert first.new and first.version.number == 1 and first.version.state == "queued"
        again = ladder.submit(alice, io.BytesIO(pack(SAMPLES / "random")))
        assert not again.new and again.version.bot_id == first.version.bot_id
        # the same files from another author are that author's own version
        assert ladder.submit(bob, pack(SAMPLES / "random")).new

        before = sorted(p.name for p in (ladder.data / "versions").iterdir())
        slip = io.BytesIO()
        with zipfile.ZipFile(slip, "w") as z:
            z.writestr("bot.toml", (SAMPLES / "random" / "bot.toml").read_text())
            z.writestr("../../escape.py", "print('out')\n")
        with pytest.raises(UploadError) as refused:
            ladder.submit(alice, slip.getvalue())
        assert refused.value.status == 422
        with pytest.raises(UploadError) as garbage:
            ladder.submit(alice, b"not an archive at all" * 10)
        assert garbage.value.status == 400
        assert sorted(p.name for p in (ladder.data / "versions").iterdir()) == before
        assert list((ladder.data / "uploads").iterdir()) == []
        assert not (tmp_path / "escape.py").exists()
        assert [v.number for v in ladder.versions(alice)] == [1]

        second = ladder.submit(alice, pack(variant_of(SAMPLES / "greedy", tmp_path, "a")))
        assert second.new and second.version.number == 2
        with pytest.raises(SubmissionError, match="2 submissions in the last 24 hours") as late:
            ladder.submit(alice, pack(variant_of(SAMPLES / "planner", tmp_path, "b")))
        assert late.value.status == 429
        # an identical upload is not a submission: it is answered, not counted
        assert not ladder.submit(alice, pack(SAMPLES / "random")).new

        store.set_frozen(True)
        with pytest.raises(SubmissionError, match="frozen") as frozen:
            ladder.submit(bob, pack(SAMPLES / "greedy"))
        assert frozen.value.status == 403
        store.set_frozen(False)
        assert ladder.submit(bob, pack(SAMPLES / "greedy")).new
        # another author's number is no version of theirs
        assert ladder.version(bob, 2) is not None and ladder.version(alice, 3) is None
    finally:
        ladder.stop()


def test_a_restart_finds_what_a_kill_left_and_puts_it_right(tmp_path: Path) -> None:
    """Debris of an upload, a folder renamed in but never committed, a build cut short, a
    record of a game never stored: the next open removes or redoes each."""
    ladder = opened(tmp_path, sandbox=UNSANDBOXED)
    store = ladder.store()
    alice = ladder.authenticate(store.add_author("alice"))
    assert alice is not None
    bot_id = ladder.submit(alice, pack(SAMPLES / "random")).version.bot_id
    store.set_state(bot_id, "building")
    data = ladder.data
    ladder.stop()
    (data / "uploads" / "half").mkdir()
    (data / "uploads" / "half" / "bot.toml").write_text("x")
    (data / "versions" / "1-deadbeef").mkdir()
    (data / "records" / "g1-orphan.json").write_text("{}")
    (data / "records" / "logs" / "g1-orphan").mkdir(parents=True)

    again = Ladder(Season(pools=(Pool("usa@1", 2),)), data, sandbox=UNSANDBOXED)
    again.open()
    try:
        assert state(again, alice, 1) == "queued"
        assert list((data / "uploads").iterdir()) == []
        assert [p.name for p in (data / "versions").iterdir()] == [
            again.store().version_row(bot_id).folder.split("/")[1]  # type: ignore[union-attr]
        ]
        assert not (data / "records" / "g1-orphan.json").exists()
        assert not (data / "records" / "logs" / "g1-orphan").exists()
        again.start()
        wait_for("the build redone", lambda: state(again, alice, 1) == "validating", again)
    finally:
        again.stop()


# ---------------------------------------------------------------------------------------------
# a real ladder


@pytest.fixture(scope="module")
def ladder_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Ladder, dict[str, Author]]]:
    """Two pools, three authors: alice with two versions at once (random and a copy), bob
    (greedy), carol (planner); played until every pool has games."""
    tmp = tmp_path_factory.mktemp("ladder")
    season = Season(
        pools=(Pool("usa@1", 2, 2.0), Pool("usa@1", 3, 1.0)),
        workers=2,
        active_versions=2,
        faults=FaultRule(window=10, rate=0.1, minimum=2),
    )
    ladder = Ladder(season, tmp / "data", sandbox=UNSANDBOXED)
    ladder.open()
    store = ladder.store()
    authors = {}
    for name in ("alice", "bob", "carol"):
        author = ladder.authenticate(store.add_author(name))
        assert author is not None
        authors[name] = author
    ladder.start()
    ladder.submit(authors["alice"], pack(SAMPLES / "random"))
    ladder.submit(authors["alice"], pack(variant_of(SAMPLES / "random", tmp, "copy")))
    ladder.submit(authors["bob"], pack(SAMPLES / "greedy"))
    ladder.submit(authors["carol"], pack(SAMPLES / "planner"))

    def done() -> bool:
        return min(len(store.games(variant="usa@1", players=n)) for n in (2, 3)) >= 8

    try:
        wait_for("games in both pools", done, ladder)
        yield ladder, authors
    finally:
        ladder.stop()


def test_versions_become_active_after_validation_in_every_pool(
    ladder_run: tuple[Ladder, dict[str, Author]],
) -> None:
    ladder, authors = ladder_run
    for name in ("alice", "bob", "carol"):
        for version in ladder.versions(authors[name]):
            assert version.state == "active", (name, version)
            checks = ladder.validations(authors[name], version.number)
            assert checks is not None
            assert sorted((v.variant, v.players, v.ok) for v in checks) == [
                ("usa@1", 2, True),
                ("usa@1", 3, True),
            ]
            assert ladder.validation_log(authors[name], version.number, 0) is not None
    assert ladder.validations(authors["alice"], 9) is None


def test_each_game_is_stored_once_in_the_order_it_was_rated(
    ladder_run: tuple[Ladder, dict[str, Author]],
) -> None:
    ladder, _ = ladder_run
    store = ladder.store()
    games = store.games(tournament_id=ladder.tournament_id)
    indexes = sorted(g.schedule_index for g in games)
    assert indexes == list(range(len(indexes)))
    assert len({g.game_id for g in games}) == len(games)
    page = league_json(store)
    assert {(p["variant"], p["players"]) for p in page["pools"]} == {("usa@1", 2), ("usa@1", 3)}


def test_never_two_versions_of_one_author_in_a_game(
    ladder_run: tuple[Ladder, dict[str, Author]],
) -> None:
    ladder, _ = ladder_run
    store = ladder.store()
    rows = {r.bot_id: r for r in store.version_rows()}
    for game in store.games():
        authors = [rows[s.bot_id].author_id for s in game.seats]
        assert len(set(authors)) == len(authors), game.game_id


def test_an_author_reads_only_their_own_logs(
    ladder_run: tuple[Ladder, dict[str, Author]],
) -> None:
    ladder, authors = ladder_run
    mine = ladder.games(authors["bob"], limit=20)
    assert mine and all(g.number == 1 for g in mine)
    game = mine[0]
    assert ladder.game_log(authors["bob"], game.game_id, game.seat) is not None
    others = [s for s in range(game.players) if s != game.seat]
    for seat in others:
        assert ladder.game_log(authors["bob"], game.game_id, seat) is None
    for name in ("alice", "carol"):
        assert ladder.game_log(authors[name], game.game_id, game.seat) is None
    assert ladder.game_log(authors["bob"], "no-such-game", 0) is None
    assert all(o.split()[0] != "bob" for o in game.opponents)


def test_a_new_version_starts_from_its_authors_mu_and_retires_the_old(
    ladder_run: tuple[Ladder, dict[str, Author]],
) -> None:
    """Submitted while the ladder runs: v2 of carol keeps v1's mu with sigma reset; with
    two active versions allowed, a third retires the oldest."""
    ladder, authors = ladder_run
    carol = authors["carol"]
    tmp = ladder.data.parent
    second = ladder.submit(carol, pack(variant_of(SAMPLES / "planner", tmp, "v2"))).version
    wait_for("carol v2 active", lambda: state(ladder, carol, 2) == "active", ladder)
    starts = ladder.store().starting_ratings("usa@1", 2)
    assert starts[second.bot_id][1] == pytest.approx(SIGMA)
    assert starts[second.bot_id][0] != pytest.approx(25.0)
    third = ladder.submit(carol, pack(variant_of(SAMPLES / "planner", tmp, "v3"))).version
    wait_for("carol v3 active", lambda: state(ladder, carol, third.number) == "active", ladder)
    [v1] = [v for v in ladder.versions(carol) if v.number == 1]
    assert v1.state == "retired" and "v3 replaced it" in v1.reason
    assert state(ladder, carol, 2) == "active"


def test_a_version_that_faults_is_disabled_with_the_reason(tmp_path: Path) -> None:
    """mallory's bot behaves in its first game only (tests/hostile_bots/first_game_only): it
    passes validation (one pool: one validation game, its process's first), then crashes in
    its later games, and the season's fault rule disables it, with the reason."""
    season = Season(
        pools=(Pool("usa@1", 2),), workers=2, faults=FaultRule(window=10, rate=0.1, minimum=2)
    )
    ladder = opened(tmp_path, season, sandbox=UNSANDBOXED)
    store = ladder.store()
    authors = {}
    for name in ("bob", "carol", "mallory"):
        author = ladder.authenticate(store.add_author(name))
        assert author is not None
        authors[name] = author
    ladder.start()
    try:
        ladder.submit(authors["bob"], pack(SAMPLES / "greedy"))
        ladder.submit(authors["carol"], pack(SAMPLES / "random"))
        ladder.submit(authors["mallory"], pack(first_game_only(tmp_path)))

        def done() -> bool:
            if state(ladder, authors["mallory"], 1) != "disabled":
                return False
            verdict = store.game(store.disabled()[0].game_id)
            assert verdict is not None
            return store.next_index(ladder.tournament_id) > verdict.schedule_index + 4

        wait_for("mallory disabled, and games after that", done, ladder)
    finally:
        ladder.stop()
    [mallory] = ladder.versions(authors["mallory"])
    assert mallory.reason.startswith("disabled after game g1-")
    assert "exited with status 1" in mallory.reason
    assert [d.bot_id for d in store.disabled()] == [mallory.bot_id]
    # it plays no more: of the games recorded after the verdict's, only those already in
    # progress then (at most one per other worker) may have it
    verdict = store.game(store.disabled()[0].game_id)
    assert verdict is not None
    later = [g for g in store.games() if g.schedule_index > verdict.schedule_index]
    with_it = [g.game_id for g in later if mallory.bot_id in {s.bot_id for s in g.seats}]
    assert len(with_it) <= season.workers - 1, with_it
    assert all(
        v.state == "active" for name in ("bob", "carol") for v in ladder.versions(authors[name])
    )


# ---------------------------------------------------------------------------------------------
# builds in the jail


needs_sandbox = pytest.mark.skipif(
    unavailable_reason() is not None, reason=f"no sandbox here: {unavailable_reason()}"
)


@needs_sandbox
def test_builds_run_in_the_jail_and_a_failure_reaches_its_author_alone(tmp_path: Path) -> None:
    good = variant_of(SAMPLES / "random", tmp_path, "built")
    config = (good / "bot.toml").read_text()
    (good / "bot.toml").write_text(
        config.replace("command =", 'build = [["sh", "-c", "echo made > built.txt"]]\ncommand =', 1)
    )
    bad = variant_of(SAMPLES / "random", tmp_path, "broken")
    (bad / "bot.toml").write_text(
        config.replace(
            "command =",
            'build = [["sh", "-c", "echo compiling; echo \'error: no such thing\' >&2; exit 3"]]'
            "\ncommand =",
            1,
        )
    )
    ladder = opened(tmp_path, Season(pools=(Pool("usa@1", 2),), workers=1), sandbox=SandboxConfig())
    try:
        store = ladder.store()
        alice = ladder.authenticate(store.add_author("alice"))
        bob = ladder.authenticate(store.add_author("bob"))
        assert alice is not None and bob is not None
        ladder.start()
        ladder.submit(alice, pack(good))
        ladder.submit(bob, pack(bad))
        wait_for("the good build validated", lambda: state(ladder, alice, 1) == "active", ladder)
        wait_for("the bad build failed", lambda: state(ladder, bob, 1) == "failed", ladder)
        [failed] = ladder.versions(bob)
        assert failed.reason.startswith("build failed")
        assert "error: no such thing" in failed.reason
        assert "error: no such thing" in (ladder.build_log(bob, 1) or "")
        built = ladder.build_folder(ladder.versions(alice)[0].bot_id)
        assert (built / "built.txt").read_text() == "made\n"
        # the uploaded files are kept as uploaded: the build ran in a copy
        assert not any(p.name == "built.txt" for p in (ladder.data / "versions").rglob("*"))
        assert ladder.build_log(alice, 2) is None
    finally:
        ladder.stop()


def test_a_worker_stops_the_bots_it_no_longer_seats() -> None:
    """A ladder's worker meets versions that retire: a bot no game seated in ``idle_games``
    games is stopped (and started again if a game needs it)."""
    from leaderboard.worker import BotPool

    pool = BotPool(10.0, UNSANDBOXED, idle_games=2)
    a, b = str(SAMPLES / "random"), str(SAMPLES / "greedy")
    try:
        pool.seat(a, "a", "1")
        pool.seat(b, "b", "1")
        first = pool.bots[(b, 0, 0)]
        assert first.process is not None
        pid = first.process.pid
        pool.trim([(a, 0), (b, 0)])
        pool.trim([(a, 0)])
        assert (b, 0, 0) in pool.bots
        pool.trim([(a, 0)])
        assert (b, 0, 0) not in pool.bots and (a, 0, 0) in pool.bots
        for thread in pool.stopping:
            thread.join(30)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # stopped and reaped
        assert not pool.seat(b, "b", "1").down  # needed again: started again
    finally:
        pool.close()


def test_the_store_of_a_ladder_is_no_tournament_to_resume(tmp_path: Path) -> None:
    from leaderboard.runner import TournamentError, run

    ladder = opened(tmp_path, sandbox=UNSANDBOXED)
    ladder.stop()
    with Store(ladder.db_path) as store:
        with pytest.raises(TournamentError, match="competition server's store"):
            run(store, bot_dirs=[str(SAMPLES / "random")], resume=True)
        with pytest.raises(TournamentError, match="competition server's store"):
            run(store, bot_dirs=[str(SAMPLES / "random"), str(SAMPLES / "greedy")], players=2)
    assert sqlite3.connect(ladder.db_path).execute("SELECT COUNT(*) FROM games").fetchone() == (0,)
    with LadderStore(ladder.db_path) as again:
        assert again.season_tournament() is not None


def test_a_restart_rates_from_the_store_as_the_ladder_did(
    ladder_run: tuple[Ladder, dict[str, Author]],
) -> None:
    """Last of the module's ladder tests: it stops the ladder. What a restart rebuilds from
    the store (ratings with the versions' starting points, recent games, the disabled) is
    what the ladder held, and the store's tables (``ttr leaderboard show``, the league page)
    agree with both."""
    ladder, _authors = ladder_run
    ladder.stop()
    again = Ladder(ladder.spec, ladder.data, sandbox=UNSANDBOXED)
    again.open()
    try:
        assert again.ratings.keys() == ladder.ratings.keys()
        for key, ratings in ladder.ratings.items():
            assert again.ratings[key].keys() == ratings.keys()
            for bot_id, rating in ratings.items():
                assert again.ratings[key][bot_id].mu == pytest.approx(rating.mu, abs=1e-9)
                assert again.ratings[key][bot_id].sigma == pytest.approx(rating.sigma, abs=1e-9)
            table = standings(again.store(), *key)
            for row in table:
                assert row.rating.mu == pytest.approx(ratings[row.bot.bot_id].mu, abs=1e-9)
            assert list(again.recent[key]) == list(ladder.recent[key])
        assert again.watch.disabled == ladder.watch.disabled
        assert again.next_index == ladder.next_index
    finally:
        again.stop()
