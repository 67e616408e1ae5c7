"""``ttr replay show`` and ``ttr replay verify`` on real records.

The records come from real games over gRPC between in-process SDK bots (``play_match``), so
every field is what the referee writes. What the tests check is computed from the record and
the engine directly, never from the code that prints it: the running scores from the claim
events, a seat's hand from ``view``, a fault's place from its recorded turn.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import typing
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from referee.games.board import Ruleset
from referee.games.board import events as board_events
from referee.games.board.scoring import connected
from referee.games.card import events as card_events
from referee.games.common.cards import CARD_NAMES
from referee.games.registry import BOARD, CARD, family_of, load, variants
from referee.replay import Step, verify
from referee.replay import replay as real_replay
from tests.helpers import hide_differently, play
from ttr.v1 import cards_pb2
from ttr_arena.cli import main as cli_main
from ttr_arena.pages import show as show_module
from ttr_arena.pages.scores import format_outcome

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("records")
    return {
        "usa": play(folder / "usa.json", "usa", 2, 1),
        "newyork": play(folder / "newyork.json", "newyork", 3, 2),
        "cardgame": play(folder / "cardgame.json", "cardgame", 3, 3),
        "liar": play(folder / "liar.json", "usa", 2, 4, liar=True),
        "card-liar": play(folder / "card-liar.json", "cardgame", 2, 5, liar=True),
    }


def run_show(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    assert cli_main(["replay", "show", *args]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out.splitlines()


def record_of(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def events(data: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for entry in data["actions"]:
        for e in entry["events"]:
            yield entry, e


# ---------------------------------------------------------------------------------------------
# the whole game


@pytest.mark.parametrize("variant", ["usa", "newyork", "cardgame"])
def test_show_tells_the_game_with_names(
    variant: str, records: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = records[variant]
    data = record_of(path)
    ruleset = load(variant)
    family = family_of(ruleset)
    lines = run_show(capsys, str(path))
    text = "\n".join(lines)
    assert lines[0].startswith(f"{ruleset.ident}, {ruleset.title}: {data['num_seats']} seats")
    assert "seat 0: random 1" in lines
    # every turn has its header, in order, and the setup comes first
    turns = sorted({a["turn"] for a in data["actions"] if a["phase"] != "setup_tickets"})
    headers = [int(line.split()[1]) for line in lines if line.startswith("turn ")]
    assert headers == turns
    assert lines.index("setup") < lines.index(next(x for x in lines if x.startswith("turn ")))
    # every event has its sentence: no class name, no raw record value is printed
    for name in {e["type"] for _, e in events(data)}:
        assert name not in text
    assert "{" not in text and "'" not in text
    # tickets by name and value: every ticket kept at the setup
    kept = [e["kept"] for _, e in events(data) if e["type"] == "TicketsKept"]
    for index in kept[0]:
        if isinstance(ruleset, Ruleset):
            t = ruleset.tickets[index]
            cities = ruleset.game_map.cities
            assert f"{cities[t.a].name}-{cities[t.b].name} {t.points}" in text
        else:
            c = ruleset.tickets[index]
            assert f"{c.a}-{c.b} {c.points}" in text
    # colours are the wire's names (the card game's data says "purple" for pink)
    assert "purple" not in text
    # the final table is `ttr play`'s
    outcome = family.outcome(_final_state(data))
    names = [f"{i}:{s['name']} {s['version']}" for i, s in enumerate(data["seats"])]
    table = format_outcome(ruleset, outcome, names).splitlines()
    end = lines.index("why:")  # then why (test_the_end_says_which_tickets_...)
    assert lines[end - len(table) : end] == table


def _final_state(data: dict[str, Any]) -> Any:
    ruleset = load(data["ruleset"])
    family = family_of(ruleset)
    state = family.new_game(ruleset, data["num_seats"], data["seed"])
    from referee.match import action_from_json

    for entry in data["actions"]:
        state = family.apply(state, action_from_json(entry["action"], family))
    return state


def test_running_scores_are_the_claims_so_far(
    records: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data = record_of(records["usa"])
    lines = run_show(capsys, str(records["usa"]))
    points = [0] * data["num_seats"]
    expected: dict[int, str] = {}
    for entry in data["actions"]:
        if entry["phase"] != "setup_tickets":
            expected.setdefault(
                entry["turn"],
                ", ".join(f"{i}:random{'' if i == 0 else i + 1} {p}" for i, p in enumerate(points)),
            )
        for e in entry["events"]:
            if e["type"] == "RouteClaimed":
                points[e["seat"]] += e["points"]
    shown = {
        int(line.split()[1]): line.split("route points: ", 1)[1]
        for line in lines
        if line.startswith("turn ")
    }
    assert shown == expected


def test_from_and_to_cut_the_game(
    records: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    lines = run_show(capsys, str(records["usa"]), "--from", "3", "--to", "5")
    headers = [line.split()[1] for line in lines if line.startswith("turn ")]
    assert headers == ["3", "4", "5"]
    assert "setup" not in lines and not any(x.startswith("final scores") for x in lines)
    # the whole tail, then the table
    data = record_of(records["usa"])
    last = data["actions"][-1]["turn"]
    lines = run_show(capsys, str(records["usa"]), "--from", str(last))
    assert [x for x in lines if x.startswith("turn ")] == [
        x for x in lines if x.startswith(f"turn {last} ")
    ]
    assert any(x.startswith("final scores") for x in lines)


# ---------------------------------------------------------------------------------------------
# one seat's eyes


def _hand(counts: Sequence[int]) -> str:
    """A hand as the test expects it printed: wire colour names, card order."""
    return ", ".join(f"{n} {CARD_NAMES[k]}" for k, n in enumerate(counts) if n) or "no cards"


@pytest.mark.parametrize("variant", ["usa", "cardgame"])
def test_a_seat_sees_its_view_at_each_of_its_decisions(
    variant: str, records: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data = record_of(records[variant])
    ruleset = load(variant)
    family = family_of(ruleset)
    state = family.new_game(ruleset, data["num_seats"], data["seed"])
    hands, offers = [], []
    from referee.match import action_from_json

    for entry in data["actions"]:
        if entry["seat"] == 1:
            v = family.view(state, 1)
            hands.append(f"  | hand: {_hand(v.hand)}")
            if v.offered:
                offers.append(len(v.offered))
        state = family.apply(state, action_from_json(entry["action"], family))
    lines = run_show(capsys, str(records[variant]), "--seat", "1")
    assert [x for x in lines if x.startswith("  | hand: ")] == hands
    offered = [x for x in lines if x.startswith("  | offered: ")]
    assert [len(x.split(", ")) for x in offered] == offers
    assert len([x for x in lines if x.startswith("  -- your decision")]) == len(hands)
    assert "seat 1: random2 1 (you)" in lines
    # another seat's blind draws reach seat 1 without the card
    assert any(x.startswith("  0:random draws a card from the deck") for x in lines)
    assert not any(x.startswith("  0:random draws a card from the deck:") for x in lines)


@pytest.mark.parametrize("variant", ["usa", "newyork", "cardgame"])
def test_a_seat_sees_its_tickets_completed_so_far_as_it_goes(
    variant: str, records: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """At each of its decisions, a seat's file says which of its own tickets its routes (the
    board) or its scorings (the card game) have completed so far, as the engine's state has
    it then."""
    from referee.games.board.scoring import connected
    from referee.match import action_from_json

    data = record_of(records[variant])
    ruleset: Any = load(variant)
    family = family_of(ruleset)
    describe = family.describer(ruleset, ["a", "b", "c", "d", "e"][: data["num_seats"]])
    state = family.new_game(ruleset, data["num_seats"], data["seed"])
    expected = []
    for entry in data["actions"]:
        if entry["seat"] == 1:  # the engine's truth, from the state (not from any view)
            if family.name == "board":
                owned = state.owned[1]
                done = [
                    t
                    for t in state.tickets[1]
                    if connected(
                        ruleset.game_map, owned, ruleset.tickets[t].a, ruleset.tickets[t].b
                    )
                ]
                not_yet = [t for t in state.tickets[1] if t not in done]
            else:
                done, not_yet = list(state.completed[1]), list(state.tickets[1])
            expected.append(
                f"  | your tickets so far: completed {describe.tickets(done)}; "
                f"not yet {describe.tickets(not_yet)}"
            )
        state = family.apply(state, action_from_json(entry["action"], family))
    lines = run_show(capsys, str(records[variant]), "--seat", "1")
    shown = [x for x in lines if x.startswith("  | your tickets so far: ")]
    assert shown and shown == expected
    # the whole truth has no seat's running ticket list (it shows every seat's at the end)
    assert not any("your tickets so far" in x for x in run_show(capsys, str(records[variant])))


@pytest.mark.parametrize("variant", ["usa", "cardgame"])
def test_what_a_seat_cannot_see_never_reaches_its_output(
    variant: str,
    records: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seat 0's output is the same when seat 1's hand, stack, tickets and hidden event fields
    are different; the whole-game output is not (so the change was one that shows)."""
    path = str(records[variant])
    before = {mode: run_show(capsys, path, *mode) for mode in [("--seat", "0"), ()]}

    def other_secrets(*args: Any) -> Iterator[Step]:
        for step in real_replay(*args):
            yield dataclasses.replace(
                step,
                before=hide_differently(step.before, 1),
                after=hide_differently(step.after, 1),
            )

    monkeypatch.setattr(show_module, "replay", other_secrets)
    after = {mode: run_show(capsys, path, *mode) for mode in [("--seat", "0"), ()]}
    # up to the final scores: the end reveals every ticket to everyone
    assert _play(after[("--seat", "0")]) == _play(before[("--seat", "0")])
    assert _play(after[()]) != _play(before[()])


def _play(lines: list[str]) -> list[str]:
    end = next(i for i, x in enumerate(lines) if x.startswith("final scores"))
    assert end > 100
    return lines[:end]


# ---------------------------------------------------------------------------------------------
# faults


def _header_before(lines: list[str], index: int) -> str:
    return next(x for x in reversed(lines[:index]) if x == "setup" or x.startswith("turn "))


@pytest.mark.parametrize("record", ["liar", "card-liar"])
def test_faults_are_shown_at_their_turn_with_rule_and_message(
    record: str, records: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data = record_of(records[record])
    faults = data["faults"]
    assert [f["kind"] for f in faults] == ["rejected"] * 4
    defaults = [a for a in data["actions"] if a["default"]]
    assert [(a["seat"], a["default"]) for a in defaults] == [(1, "faults")]
    for mode in [(), ("--seat", "1")]:
        lines = run_show(capsys, str(records[record]), *mode)
        at = -1
        for f in faults:  # in the order they happened
            line = f"  !! 1:liar: answer rejected ({f['rule']}): {f['message']}"
            at = lines.index(line, at + 1)
            entry = data["actions"][f["decision"]]
            header = _header_before(lines, at)
            if entry["phase"] == "setup_tickets":
                assert header == "setup"
            else:
                assert header.startswith(f"turn {f['turn']} ")
        assert "  !! 1:liar: the safe default move is played (faults)" in lines
    # seat 0 was never told of seat 1's faults
    lines = run_show(capsys, str(records[record]), "--seat", "0")
    assert not any("!!" in x for x in lines)


# ---------------------------------------------------------------------------------------------
# verify, many files


def test_verify_takes_many_records_and_names_the_field_that_differs(
    records: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = record_of(records["usa"])
    data["outcome"]["seats"][1]["total"] += 1
    total = tmp_path / "total.json"
    total.write_text(json.dumps(data))
    data = record_of(records["cardgame"])
    n, i = next(
        (n, i)
        for n, a in enumerate(data["actions"])
        for i, e in enumerate(a["events"])
        if e["type"] == "FaceUpTaken"
    )
    data["actions"][n]["events"][i]["card"] = (data["actions"][n]["events"][i]["card"] + 1) % 9
    card = tmp_path / "card.json"
    card.write_text(json.dumps(data))
    paths = [str(records["usa"]), str(total), str(records["cardgame"]), str(card)]
    assert cli_main(["replay", "verify", *paths]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"OK: {paths[0]} replays exactly",
        f"OK: {paths[2]} replays exactly",
        "4 records: 2 replay exactly, 2 differ, 0 unreadable",
    ]
    seats = record_of(records["usa"])["outcome"]["seats"]
    last_turn = _final_state(record_of(records["usa"])).turn
    recorded = record_of(card)["actions"][n]
    errors = err.splitlines()
    assert errors == [
        f"ttr: {total}: DIFFERS at turn {last_turn}, final scores: outcome.seats[1].total: "
        f"record {seats[1]['total'] + 1}, replay {seats[1]['total']}",
        f"ttr: {card}: DIFFERS at turn {recorded['turn']}, decision {n} (seat "
        f"{recorded['seat']}): actions[{n}].events[{i}].card: record "
        f"{recorded['events'][i]['card']}, replay {(recorded['events'][i]['card'] - 1) % 9}",
    ]
    difference = verify(total)
    assert difference is not None and difference.what == "final scores"
    assert difference.field == "outcome.seats[1].total"


def test_verify_reports_a_file_that_is_no_record_and_goes_on(
    records: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("[1, 2")
    with pytest.raises(SystemExit) as e:
        cli_main(["replay", "verify", str(junk), str(records["usa"])])
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"ttr: error: {junk}: not a game record (invalid JSON")
    assert len(err.splitlines()) == 1
    assert f"OK: {records['usa']} replays exactly" in out.splitlines()


# ---------------------------------------------------------------------------------------------
# the command line's manners


def test_show_stops_quietly_when_its_reader_goes(records: dict[str, Path]) -> None:
    command = [sys.executable, "-m", "ttr_arena.cli", "replay", "show", str(records["usa"])]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(5) == b"usa@1"
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json"], "missing.json: cannot read it"),
        (["notjson.json"], "notjson.json: not a game record (invalid JSON"),
        (["other.json"], "other.json: not a game record (format is not 'ttr-record/1')"),
        (["USA", "--seat", "2"], "--seat 2: the game has seats 0-1"),
        (["USA", "--from", "100000"], "--from 100000: the game's last turn is"),
        (["USA", "--from", "3", "--to", "2"], "--to 2 is before --from 3"),
        (["USA", "--seat", "x"], "argument --seat: expected a whole number"),
    ],
)
def test_show_errors_are_one_line(
    args: list[str],
    message: str,
    records: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notjson.json").write_text("not json")
    (tmp_path / "other.json").write_text('{"format": "something-else"}')
    args = [str(records["usa"]) if a == "USA" else a for a in args]
    with pytest.raises(SystemExit) as e:
        cli_main(["replay", "show", *args])
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"ttr: error: {message}") and err.count("\n") == 1


@pytest.mark.parametrize("variant", variants())
def test_show_works_for_every_variant(
    variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = play(tmp_path / "game.json", variant, 2, 9)
    data = record_of(path)
    kinds = {e["type"] for _, e in events(data)} | {a["action"]["type"] for a in data["actions"]}
    for mode in [(), ("--seat", "0")]:
        lines = run_show(capsys, str(path), *mode)
        text = "\n".join(lines)
        assert not any(kind in text for kind in kinds)  # every event and action in words
        head = next(i for i, line in enumerate(lines) if line.startswith("rank  seat"))
        assert lines[head + 4] == "why:"  # the final table (2 seats), then why
        assert lines[0].startswith(f"{load(variant).ident}, ")


def test_every_variant_has_a_describer() -> None:
    """A new family fails here until ``ttr replay show`` can describe its games."""
    for variant in variants():
        assert family_of(load(variant)).describer(load(variant), ["a", "b"]) is not None


# ---------------------------------------------------------------------------------------------
# docs/records.md


RECORDS_MD = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")


def test_the_colour_table_matches_the_wire() -> None:
    rows = re.findall(r"^\| (\d) \| (\d) `(CARD_COLOUR_\w+)` \| (\w+)", RECORDS_MD, re.M)
    assert [(int(r), int(w), name, word) for r, w, name, word in rows] == [
        (
            kind,
            cards_pb2.CardColour.Value(f"CARD_COLOUR_{n.upper()}"),
            f"CARD_COLOUR_{n.upper()}",
            n,
        )
        for kind, n in enumerate(CARD_NAMES)
    ]


def test_the_docs_name_every_action_and_event_of_both_families() -> None:
    documented = set(re.findall(r"^\| `(\w+)` \|", RECORDS_MD, re.M))
    for family in (BOARD, CARD):
        assert set(family.action_types) <= documented
    for union in (board_events.Event, card_events.CardEvent):
        assert {cls.__name__ for cls in typing.get_args(union)} <= documented


@pytest.mark.parametrize("record", ["usa", "newyork", "cardgame"])
def test_the_end_says_which_tickets_were_completed_or_failed_and_the_bonuses(
    record: str, records: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Every seat's tickets at the end, from the engine's final state (the board: a path of
    the seat's routes joins the cities; the card game: completed at a scoring, or left in hand),
    with their signed points, and parts that add up to the total; in a seat's own eyes too
    (the outcome is sent to every seat at the end)."""
    path = records[record]
    state = engine_end(path)
    ruleset = state.ruleset
    family = family_of(ruleset)
    describe = family.describer(ruleset, [f"s{i}" for i in range(state.num_seats)])
    totals = {s.seat: s.total for s in family.outcome(state).seats}
    for mode in [(), ("--seat", "1")]:
        lines = run_show(capsys, str(path), *mode)
        why = lines[lines.index("why:") + 1 :]
        for seat in range(state.num_seats):
            at = next(i for i, line in enumerate(why) if line.startswith(f"  {seat}:"))
            assert why[at].endswith(f": {totals[seat]} points")
            if family is BOARD:
                owned = state.owned[seat]
                done = [
                    t
                    for t in state.tickets[seat]
                    if connected(
                        ruleset.game_map, owned, ruleset.tickets[t].a, ruleset.tickets[t].b
                    )
                ]
                missed = [t for t in state.tickets[seat] if t not in done]
            else:
                done, missed = sorted(state.completed[seat]), sorted(state.tickets[seat])
            assert why[at + 1] == "    completed: " + (
                ", ".join(f"{describe.ticket(t)} (+{ruleset.tickets[t].points})" for t in done)
                or "none"
            )
            assert why[at + 2] == "    failed: " + (
                ", ".join(f"{describe.ticket(t)} (-{ruleset.tickets[t].points})" for t in missed)
                or "none"
            )
            parts = re.findall(r" ([+-]\d+)(?= |$)", why[at + 3])
            assert sum(int(p) for p in parts) == totals[seat]
        assert any(
            ("Longest path" in line or "Big City" in line or "Tourist" in line) for line in why
        )


def engine_end(path: Path) -> Any:
    return _final_state(record_of(path))
