"""``ttr replay view`` without a browser: the film the page draws, on real records.

The records come from real games over gRPC (tests/helpers.py ``play``). What a film must hold
is computed here from the engine directly (``view``, ``project``, ``outcome``), never from the
viewer's code: a seat's frames are its views, a seat's file holds nothing hidden from it, and
changing the other seats' secrets changes nothing in it. The page itself is tested in a real
browser by tests/pages/test_viewer_browser.py.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ttr_arena.pages.viewer as viewer_module
from referee.games.board import Ruleset, load_ruleset
from referee.games.board.scoring import connected
from referee.games.registry import family_of, load, variants
from referee.replay import Step, load_record, replay, start
from tests.helpers import hide_differently, play
from ttr_arena.cli import main as cli_main
from ttr_arena.pages.scores import format_outcome
from ttr_arena.pages.show import fault_line
from ttr_arena.pages.viewer import OWN_FIELDS, build_film, frames, render_html, schematic_layout

#: A bot name that would run a script if any part of the page treated it as markup.
HOSTILE = "</script><script>document.title='owned'</script><img src=x onerror=alert(1)>&amp;"


def make_records(folder: Path) -> dict[str, Path]:
    """One small real game per variant (2-3 seats), a liar's game, and a 5-seat mega game."""
    seats = {"usa": 2, "usa1910": 2, "mega": 3, "bigcities": 3, "newyork": 3, "cardgame": 3}
    assert set(seats) == set(variants())  # a new variant gets a replay test here
    out = {v: play(folder / f"{v}.json", v, n, 11 + i) for i, (v, n) in enumerate(seats.items())}
    out["liar"] = play(folder / "liar.json", "usa", 2, 4, liar=True)
    out["card-liar"] = play(folder / "card-liar.json", "cardgame", 2, 5, liar=True)
    out["mega5"] = play(folder / "mega5.json", "mega", 5, 3)
    return out


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_records(tmp_path_factory.mktemp("records"))


#: A 63-bit seed, 19 decimal and 16 hex digits: unlike the small seeds above, no count, id,
#: coordinate or path of a page can spell it by chance, so finding it anywhere is a leak.
SECRET_SEED = 0x6A09_E667_F3BC_C908


@pytest.fixture(scope="module")
def secret_seeded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A game of usa and of the card game dealt from :data:`SECRET_SEED`."""
    folder = tmp_path_factory.mktemp("secret-seeded")
    return {
        v: play(folder / f"{v}.json", v, n, SECRET_SEED) for v, n in (("usa", 2), ("cardgame", 3))
    }


def engine_states(path: Path) -> list[Any]:
    """The state at every step of the film: the deal, then after each decision."""
    data = load_record(path)
    game = start(data, path)
    return [game.start, *(s.after for s in replay(game, data, path))]


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def view_json(path: Path, state: Any, seat: int) -> dict[str, Any]:
    family = family_of(load(load_record(path)["ruleset"]))
    out: dict[str, Any] = as_json(dataclasses.asdict(family.view(state, seat)))
    return out


def told(film: dict[str, Any], perspective: int | str) -> list[list[str]]:
    """The words of every step in one perspective."""
    return [[film["lines"][i] for i in step] for step in film["log"][str(perspective)]]


def embedded(page: str) -> dict[str, Any]:
    """The film inside a page, read back as a browser's JSON.parse would."""
    found = re.search(r'<script id="ttr-data" type="application/json">(.*?)</script>', page, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


# ---------------------------------------------------------------------------------------------
# a seat's frames are its views


@pytest.mark.parametrize("record", ["usa", "newyork", "cardgame", "mega5"])
def test_a_seats_frames_are_its_engine_views_at_every_step(
    record: str, records: dict[str, Path]
) -> None:
    path = records[record]
    states = engine_states(path)
    film = build_film(path)
    seats = film["num_seats"]
    assert film["perspectives"] == ["truth", *range(seats)]
    assert len(film["steps"]) == len(states)
    truth = frames(film, "truth")
    for seat in range(seats):
        shown = frames(film, seat)
        alone = build_film(path, seat)
        assert frames(alone, seat) == shown  # a one-seat file shows the same frames
        assert set(alone["log"]) == {str(seat)}
        assert told(alone, seat) == told(film, seat)
        for k, state in enumerate(states):
            expected = view_json(path, state, seat)
            assert shown[k] == expected, f"seat {seat}, step {k}"
            assert truth[k]["own"][seat] == {f: v for f, v in expected.items() if f in OWN_FIELDS}
    for k, state in enumerate(states):
        public = view_json(path, state, 0)
        assert {f: v for f, v in truth[k].items() if f not in ("own", "stacks")} == {
            f: v for f, v in public.items() if f not in OWN_FIELDS
        }
        if hasattr(state, "stacks"):  # the truth shows what no view does
            assert truth[k]["stacks"] == as_json(state.stacks)
        # the chart's scores are the public view's running scores
        points = "route_points" if "route_points" in public["players"][0] else "ticket_points"
        assert film["scores"][k] == [p[points] for p in public["players"]]


def test_each_steps_words_are_the_events_as_each_seat_was_told(records: dict[str, Path]) -> None:
    path = records["cardgame"]
    data = load_record(path)
    states = engine_states(path)
    family = family_of(load(data["ruleset"]))
    names = [f"{i}:{s['name']}" for i, s in enumerate(data["seats"])]
    describe = family.describer(load(data["ruleset"]), names)
    film = build_film(path)
    for k, state in enumerate(states):
        assert told(film, "truth")[k] == [describe.event(e) for e in state.events]
        for seat in range(film["num_seats"]):
            expected = [describe.event(family.project(e, seat)) for e in state.events]
            assert told(film, seat)[k] == expected
        if k:  # who decided, and when: the record's entry
            entry = data["actions"][k - 1]
            assert film["steps"][k] == [entry["turn"], entry["seat"], entry["phase"]]


# ---------------------------------------------------------------------------------------------
# what a seat may not see


@pytest.mark.parametrize("record", ["usa", "cardgame"])
def test_what_a_seat_cannot_see_never_reaches_its_film(
    record: str, records: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seat 0's film is the same when seat 1's hand, stack, tickets and hidden event fields
    are different; the whole-truth film is not (so the change was one that shows)."""
    path = records[record]
    before = {seat: build_film(path, seat) for seat in (0, None)}

    def other_secrets(*args: Any) -> Iterator[Step]:
        for step in replay(*args):
            yield dataclasses.replace(
                step,
                before=hide_differently(step.before, 1),
                after=hide_differently(step.after, 1),
            )

    monkeypatch.setattr(viewer_module, "replay", other_secrets)
    after = {seat: build_film(path, seat) for seat in (0, None)}

    # the final scores are left out: the end shows every seat's tickets to everyone
    def play_of(film: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in film.items() if k != "outcome"}

    assert play_of(after[0]) == play_of(before[0])
    assert play_of(after[None]) != play_of(before[None])


@pytest.mark.parametrize("record", ["usa", "cardgame"])
def test_a_seats_file_holds_nothing_hidden_from_it(
    record: str, secret_seeded: dict[str, Path]
) -> None:
    path = secret_seeded[record]
    data = load_record(path)
    assert data["seed"] == SECRET_SEED
    family = family_of(load(data["ruleset"]))
    names = [f"{i}:{s['name']}" for i, s in enumerate(data["seats"])]
    describe = family.describer(load(data["ruleset"]), names)
    page = render_html(path, seat=0)
    film = embedded(page)
    assert film["perspectives"] == [0]
    assert set(film["own"]) == set(film["log"]) == {"0"}
    assert "secret" not in film and "seed" not in film  # the seed would deal every hand
    # The game is named by the record's id (random, drawn by the referee), and the seed is
    # nowhere in the page, in any spelling: not in the id, the film, the script or the markup.
    assert film["game_id"] == data["game_id"] and re.fullmatch(r"[0-9a-f]{32}", data["game_id"])
    spellings = [str(SECRET_SEED), f"{SECRET_SEED:x}", f"{SECRET_SEED:X}"]
    assert not [s for s in spellings if s in page]
    assert str(SECRET_SEED) in render_html(path)  # the whole truth's page does show it
    # every event told in full that seat 0 was told less of: its full words are nowhere
    hidden = [
        describe.event(e)
        for state in engine_states(path)
        for e in state.events
        if family.project(e, 0) != e
    ]
    assert len(hidden) > 10
    for line in hidden:
        assert line not in film["lines"]
        assert json.dumps(line)[1:-1] not in page


# ---------------------------------------------------------------------------------------------
# faults


@pytest.mark.parametrize("record", ["liar", "card-liar"])
def test_faults_are_at_the_step_of_their_decision_and_only_in_their_seats_eyes(
    record: str, records: dict[str, Path]
) -> None:
    path = records[record]
    data = load_record(path)
    film = build_film(path)
    rejected = [f for f in film["faults"] if f["kind"] == "rejected"]
    assert [(f["step"], f["seat"]) for f in rejected] == [
        (f["decision"] + 1, f["seat"]) for f in data["faults"]
    ]
    assert [f["text"] for f in rejected] == [
        fault_line(f, f"{f['seat']}:{data['seats'][f['seat']]['name']}")[3:] for f in data["faults"]
    ]
    defaults = [f for f in film["faults"] if f["kind"] == "default"]
    assert [(f["step"], f["seat"]) for f in defaults] == [
        (a["decision"] + 1, a["seat"]) for a in data["actions"] if a["default"]
    ]
    assert defaults[0]["text"] == "1:liar: the safe default move is played (faults)"
    assert build_film(path, 0)["faults"] == []
    assert build_film(path, 1)["faults"] == film["faults"]


# ---------------------------------------------------------------------------------------------
# every variant, the board, the final scores


@pytest.mark.parametrize("variant", [*variants(), "mega5"])
def test_every_variant_renders_a_self_contained_page(
    variant: str, records: dict[str, Path]
) -> None:
    path = records[variant]
    data = load_record(path)
    ruleset = load(data["ruleset"])
    family = family_of(ruleset)
    page = render_html(path)
    assert page.startswith("<!DOCTYPE html>")
    # nothing fetched: no external script, style, image or font
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(http" not in page
    assert "TTR_READY" in page  # viewer.js is inside
    film = embedded(page)
    assert film["format"] == "ttr-film/1"
    assert film["variant"] == ruleset.ident
    final = engine_states(path)[-1]
    outcome = family.outcome(final)
    names = [f"{i}:{s['name']} {s['version']}" for i, s in enumerate(data["seats"])]
    table = format_outcome(ruleset, outcome, names).splitlines()
    rows = film["outcome"]["rows"]
    assert [" ".join(r["cells"]).split() for r in rows] == [line.split() for line in table[2:]]
    assert [r["total"] for r in rows] == [
        s.total for s in sorted(outcome.seats, key=lambda s: (s.rank, s.seat))
    ]
    if not isinstance(ruleset, Ruleset):  # the card game has no board
        assert "board" not in film
        return
    board = film["board"]
    game_map = ruleset.game_map
    assert [c["name"] for c in board["cities"]] == [c.name for c in game_map.cities]
    assert [r[:5] for r in board["routes"]] == [
        [r.a, r.b, r.length, r.colour, -1 if r.sibling is None else r.sibling]
        for r in game_map.routes
    ]
    assert [c["attraction"] for c in board["cities"]] == [c.attraction for c in game_map.cities]
    if variant == "newyork":  # no coordinates in the data: a schematic, never invented
        assert board["schematic"]
        assert all(c.x is None for c in game_map.cities)
    else:
        assert not board["schematic"]
        assert [(c["x"], c["y"]) for c in board["cities"]] == [(c.x, c.y) for c in game_map.cities]


def test_the_schematic_layout_is_the_same_every_time_and_keeps_places_apart() -> None:
    game_map = load_ruleset("newyork").game_map
    first = schematic_layout(game_map)
    schematic_layout.cache_clear()
    assert schematic_layout(game_map) == first
    assert all(0 <= x <= 1 and 0 <= y <= 1 for x, y in first)
    for i, a in enumerate(first):
        for b in first[i + 1 :]:
            assert abs(a[0] - b[0]) + abs(a[1] - b[1]) > 0.05


def test_hostile_bot_names_stay_text(tmp_path: Path) -> None:
    path = play(tmp_path / "hostile.json", "usa", 2, 3, names=[HOSTILE, "b"])
    page = render_html(path)
    assert HOSTILE not in page
    assert page.count("<script") == 2  # the data and the code, nothing a name opened
    assert f"<title>{html.escape('Ticket to Ride')}" in page
    assert html.escape(HOSTILE) in page.split("</title>")[0]
    assert embedded(page)["names"][0] == f"0:{HOSTILE}"


# ---------------------------------------------------------------------------------------------
# the command line


def test_view_writes_the_page_beside_the_record(
    records: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "game.json"
    record.write_bytes(records["usa"].read_bytes())
    assert cli_main(["replay", "view", str(record)]) == 0
    out, err = capsys.readouterr()
    written = tmp_path / "game.html"
    assert out.splitlines() == [
        f"wrote {written} ({written.stat().st_size:,} bytes)",
        written.resolve().as_uri(),
    ]
    assert err == ""
    assert embedded(written.read_text(encoding="utf-8"))["perspectives"][0] == "truth"
    other = tmp_path / "deep" / "seat1.html"
    assert cli_main(["replay", "view", str(record), "--seat", "1", "--out", str(other)]) == 0
    assert embedded(other.read_text(encoding="utf-8"))["perspectives"] == [1]
    assert sorted(p.name for p in tmp_path.rglob("*")) == [
        "deep",
        "game.html",
        "game.json",
        "seat1.html",
    ]


@pytest.mark.parametrize("opens", [True, False])
def test_view_open_hands_the_page_to_a_browser_or_says_it_could_not(
    opens: bool,
    records: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    def fake_open(url: str) -> bool:  # the system's browser is not the thing under test
        asked.append(url)
        return opens

    monkeypatch.setattr("webbrowser.open", fake_open)
    out_file = tmp_path / "v.html"
    args = ["replay", "view", str(records["usa"]), "--out", str(out_file), "--open"]
    assert cli_main(args) == 0
    _, err = capsys.readouterr()
    assert asked == [out_file.resolve().as_uri()]
    assert out_file.is_file()
    assert err == ("" if opens else f"ttr: no browser could be opened; open {asked[0]} yourself\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json"], "missing.json: cannot read it"),
        (["notjson.json"], "notjson.json: not a game record (invalid JSON"),
        (["USA", "--seat", "2"], "--seat 2: the game has seats 0-1"),
        (["USA", "--seat", "x"], "argument --seat: expected a whole number"),
        (["USA", "--out", "adir"], "--out adir: cannot write it: Is a directory"),
        (["USA", "--out", "USA"], "--out USA: that is the record itself"),
        (["short.json"], "short.json: the record ends before the game does"),
    ],
)
def test_view_errors_are_one_line_and_leave_no_file(
    args: list[str],
    message: str,
    records: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notjson.json").write_text("not json")
    (tmp_path / "adir").mkdir()
    usa = tmp_path / "usa.json"
    usa.write_bytes(records["usa"].read_bytes())
    short = json.loads(usa.read_text())
    short["actions"] = short["actions"][:10]
    (tmp_path / "short.json").write_text(json.dumps(short))
    before = sorted(p.name for p in tmp_path.rglob("*"))
    args = [a.replace("USA", "usa.json") for a in args]
    message = message.replace("USA", "usa.json")
    with pytest.raises(SystemExit) as e:
        cli_main(["replay", "view", *args])
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"ttr: error: {message}") and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no page, no temp file


def test_a_record_that_differs_from_its_replay_says_so_and_a_seat_file_names_no_value(
    records: dict[str, Path], tmp_path: Path
) -> None:
    data = json.loads(records["usa"].read_text())
    n, i = next(
        (n, i)
        for n, a in enumerate(data["actions"])
        for i, e in enumerate(a["events"])
        if e["type"] == "BlindDrawn" and e["seat"] == 1
    )
    data["actions"][n]["events"][i]["card"] = (data["actions"][n]["events"][i]["card"] + 1) % 9
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(data))
    assert f"actions[{n}].events[{i}].card" in build_film(path)["differs"]
    assert build_film(path, 0)["differs"] == "the record differs from its replay"
    assert build_film(records["usa"])["differs"] is None


@pytest.mark.parametrize("record", ["usa1910", "bigcities", "newyork", "cardgame"])
def test_the_film_says_why_each_total_is_what_it_is(record: str, records: dict[str, Path]) -> None:
    """Each seat's tickets as they go (completed so far or not, at every step, as the engine
    would judge them then) in its own film, and at the end the parts of each total."""
    path = records[record]
    states = engine_states(path)
    family = family_of(states[0].ruleset)
    rules = states[0].ruleset
    film = build_film(path, 1)
    changes = film["progress"]["1"]
    assert set(film["progress"]) == {"1"}
    for k, state in enumerate(states):
        now = [c for c in changes if c[0] <= k][-1]
        if family.name == "card":
            want = [sorted(state.completed[1]), sorted(state.tickets[1])]
        else:
            done = [
                t
                for t in state.tickets[1]
                if connected(rules.game_map, state.owned[1], rules.tickets[t].a, rules.tickets[t].b)
            ]
            want = [sorted(done), sorted(set(state.tickets[1]) - set(done))]
        assert [sorted(now[1]), sorted(now[2])] == want
    for d, s in zip(film["outcome"]["details"], family.outcome(states[-1]).seats, strict=True):
        assert sum(p for _, p in d["parts"]) == s.total == d["total"]
        assert sum(p for _, p in d["completed"] + d["failed"]) in {
            p for w, p in d["parts"] if w.startswith("tickets")
        } | {sum(p for w, p in d["parts"] if w.startswith("tickets"))}


def chatty_record(records: dict[str, Path], folder: Path) -> Path:
    """The usa game with lines at every decision and after the end, as the referee records
    what bots write (tests/cli/test_bot_logs.py plays real bots that write them)."""
    data = load_record(records["usa"])
    for entry in data["actions"]:
        entry["lines"] = [f"seat {entry['seat']} at decision {entry['decision']}", HOSTILE]
    data["end_lines"] = [["bye from 0"], ["bye from 1"]]
    path = folder / "chatty.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_bots_lines_are_at_its_decision_and_only_in_its_own_seats_eyes(
    records: dict[str, Path], tmp_path: Path
) -> None:
    from ttr_arena.pages.show import show

    path = chatty_record(records, tmp_path)
    data = load_record(path)
    film = build_film(path)
    last = len(film["steps"]) - 1
    want = [
        {"step": a["decision"] + 1, "seat": a["seat"], "lines": a["lines"]} for a in data["actions"]
    ] + [{"step": last, "seat": s, "lines": [f"bye from {s}"]} for s in (0, 1)]
    assert film["output"] == want
    for seat in (0, 1):
        assert build_film(path, seat)["output"] == [o for o in want if o["seat"] == seat]
        page = render_html(path, seat=seat)
        assert f"seat {1 - seat} at decision" not in page and f"bye from {1 - seat}" not in page
        assert f"seat {seat} at decision" in page
        text = "\n".join(show(path, seat=seat))
        assert f"seat {1 - seat} at decision" not in text and f"bye from {1 - seat}" not in text
        assert f"bye from {seat}" in text
    whole = list(show(path))
    first = data["actions"][0]
    name = f"{first['seat']}:{data['seats'][first['seat']]['name']}"
    at = whole.index(f"  {name} > seat {first['seat']} at decision 0")
    assert whole[at + 1] == f"  {name} > {HOSTILE}"
    assert whole[-2:] == ["after its last decision, 1:random2 wrote:", "  1:random2 > bye from 1"]
