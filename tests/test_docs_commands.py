"""Every `ttr` command the README and the docs show still exists, with the options shown, and
every `make` target and bench script they name is there: the front door never lies.

A command written out in full (no placeholder such as ``RECORD`` or ``N``) must parse as it
stands, through ``ttr``'s own parser; one with placeholders must name a real command and only
options that command has. Code blocks and inline code spans are both read."""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from ttr_arena.cli.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(\.\w+)?$|^<.*>$|\.\.\.|^[A-Z][A-Z0-9_]*=")
_MAKE_TARGETS = set(re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(), re.M))


def _commands(text: str) -> list[tuple[str, bool]]:
    """(command, whole) for the ``ttr ...`` lines of code blocks (whole: a command to run as
    written) and the inline code spans that start with ``ttr`` (a command named in prose,
    often without its arguments)."""
    found = []
    in_block = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_block = not in_block
            continue
        whole = in_block or line.startswith("    ")
        candidates = [line.strip()] if whole else re.findall(r"`([^`]+)`", line)
        for candidate in candidates:
            candidate = candidate.split(" #")[0].split(" | ")[0].strip()
            candidate = re.sub(r"^(\$ )?(\.venv/bin/)?", "", candidate)
            if re.match(r"(ttr|make|python) ", candidate + " "):
                found.append((candidate, whole))
    return found


def _cases() -> list[tuple[str, str, bool]]:
    cases = []
    for doc in DOCS:
        for command, whole in _commands(doc.read_text()):
            cases.append((doc.relative_to(ROOT).as_posix(), command, whole))
    return sorted(set(cases))


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _tokens(command: str) -> list[str]:
    command = command.replace("[", " ").replace("]", " ")
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return [w.split("|")[0] for w in words if w not in ("...", "|")]


def test_the_docs_show_commands() -> None:
    assert len([c for _, c, whole in _cases() if whole and c.startswith("ttr ")]) > 20


@pytest.mark.parametrize(("doc", "command", "whole"), _cases())
def test_a_documented_command_exists(doc: str, command: str, whole: bool) -> None:
    words = _tokens(command)
    if words[0] == "make":
        for target in words[1:]:
            if not target.startswith("-") and "=" not in target:
                assert target in _MAKE_TARGETS, f"{doc}: make {target}: no such target"
        return
    if words[0] == "python":
        script = next((w for w in words[1:] if w.endswith(".py")), None)
        if script is not None and "/" in script:
            assert (ROOT / script).is_file(), f"{doc}: {script}: no such file"
        return
    parser = build_parser()
    current: argparse.ArgumentParser = parser
    i = 1
    while (subs := _subcommands(current)) and i < len(words) and words[i] in subs:
        current = subs[words[i]]
        i += 1
    rest = words[i:]
    subs = _subcommands(current)
    if subs and rest and "/" in rest[0] and not rest[0].startswith("-"):
        missing = [w for w in rest[0].split("/") if w not in subs]  # `ttr replay show/view`
        assert not missing, f"{doc}: {command!r}: no such command {missing[0]!r}"
        return
    if subs and "--help" not in rest and "-h" not in rest:
        if not rest or PLACEHOLDER.search(rest[0]):
            return  # `ttr tournament ACTION`: the command group, named as such
        raise AssertionError(f"{doc}: {command!r}: no such command {rest[0]!r}")
    options = {o for action in current._actions for o in action.option_strings}
    for word in rest:
        if word.startswith("-") and not re.fullmatch(r"-\d+", word):
            for name in word.split("=")[0].split("/"):  # `--from/--to`: both
                if name.endswith("*"):  # `--fault-*`: a family of options
                    known = any(o.startswith(name[:-1]) for o in options)
                else:
                    known = name in options
                assert known, f"{doc}: {command!r}: {name} is no option of it"
    if not whole or any(PLACEHOLDER.search(w) for w in rest) or "--help" in rest:
        return
    try:
        parser.parse_args(words[1:])
    except SystemExit as e:
        raise AssertionError(f"{doc}: {command!r} does not parse") from e


@pytest.mark.parametrize(
    "lie",
    [
        "ttr play --no-such-option a b",  # an option the command lacks
        "ttr tournament resume --db x.db",  # a command that does not exist
        "ttr play --seed seven a b",  # a whole command that does not parse
        "make no-such-target",
        "python bench/no_such_bench.py",
    ],
)
def test_a_documented_lie_is_caught(lie: str) -> None:
    with pytest.raises(AssertionError):
        test_a_documented_command_exists("README.md", lie, True)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped,
    spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_slug(m) for m in re.findall(r"^#+ (.*)$", path.read_text(), re.M)}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_link_between_the_docs_leads_somewhere(doc: Path) -> None:
    """A moved section leaves no link to where it used to be."""
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        assert file.exists(), f"{doc.name}: link to {target}: no such file"
        if anchor and file.suffix == ".md":
            assert anchor in _anchors(file), f"{doc.name}: link to {target}: no such heading"


def _installs(target: str) -> list[str]:
    """What ``make TARGET`` would pip-install on a fresh clone (``make -n -B``: printed, not
    run)."""
    made = subprocess.run(
        ["make", "-n", "-B", "-C", str(ROOT), target], capture_output=True, text=True, check=True
    )
    return [line.split(" -e ", 1)[1] for line in made.stdout.splitlines() if " -e " in line]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_installs_the_package_alone_and_make_test_the_extras() -> None:
    """The README's two commands each install what they need: the demo only the package
    (no Ray, no dev tools), the tests the dev tools and Ray."""
    assert _installs("demo") == ["."]
    assert _installs("test") == ["'.[dev,ray]'"]
