# Every target bootstraps .venv from nothing, so any target works first on a fresh clone.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
# Two stamps in the one venv: the package alone (what `make demo` needs), and the package with
# the dev tools and Ray (the tests, lint, codegen). Either may come first; the second adds to it.
PACKAGE := $(VENV)/.installed-package
STAMP  := $(VENV)/.installed
PIP    := $(BIN)/python -m pip install --quiet --disable-pip-version-check

.PHONY: demo test lint format bench clean help toolchains

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

$(PACKAGE): pyproject.toml | $(BIN)/python
	$(PIP) -e .
	@touch $(PACKAGE)

$(STAMP): pyproject.toml | $(BIN)/python
	$(PIP) -e '.[dev,ray]'
	@touch $(STAMP) $(PACKAGE)

demo: $(PACKAGE)  ## a tournament of the sample bots over gRPC, the leaderboard, its page and replays
	@rm -rf records/demo.db records/demo.db-wal records/demo.db-shm records/demo-records \
		records/demo-site
	@mkdir -p records
	$(BIN)/ttr tournament run --db records/demo.db --players 3 --rounds 4 \
		sample_bots/random sample_bots/greedy sample_bots/planner
	$(BIN)/ttr leaderboard html --db records/demo.db --out records/demo-site
	@echo
	@echo "Open in a browser (the files need no server and no network):"
	@echo "  the league page: file://$(CURDIR)/records/demo-site/index.html"
	@echo "  a replay:        file://$$(ls -d $(CURDIR)/records/demo-site/games/*.html | head -n 1)"
	@echo "Or serve the page live (it refreshes itself while a tournament writes the store):"
	@echo "  $(BIN)/ttr leaderboard serve --db records/demo.db"

# The suite in two phases (docs/testing.md): everything but the tests marked `serial` on
# TEST_WORKERS pytest-xdist workers (the Ray tests kept on one of them: --dist loadgroup), then
# the `serial` ones alone, which read figures or files any other process can move. Both run
# even when the first fails; the exit status is the first failing phase's.
# `make test TEST_WORKERS=0` runs the first phase in one process (for debugging: the plain
# `.venv/bin/python -m pytest -q` runs the whole suite in one process too).
TEST_WORKERS ?= 2

test: $(STAMP) toolchains  ## the test suite; TTR_SOAK=1 make test adds the long soaks (tests/soak.py)
	@status=0; \
	echo "$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup -m 'not serial'"; \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup -m 'not serial' || status=$$?; \
	echo "$(BIN)/python -m pytest -q -m serial"; \
	$(BIN)/python -m pytest -q -m serial || { rc=$$?; [ $$status -ne 0 ] || status=$$rc; }; \
	exit $$status

toolchains:  ## the Debian packages the Go and C++ starter kits build with (installed as root)
	@bash tools/ensure_toolchains.sh

lint: $(STAMP)  ## ruff (lint + format check), mypy --strict and the import contract (lint-imports)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

format: $(STAMP)  ## apply ruff's fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP)  ## engine benchmark: random self-play, 2 and 4 players
	$(BIN)/python bench/selfplay.py

clean:  ## remove the venv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

.PHONY: proto
proto: $(STAMP)  ## regenerate gen/python and the Node sample bot's copy of proto/; commit them
	$(BIN)/python -m tools.gen_proto
	rm -rf sample_bots/node_random/proto
	$(BIN)/python -c 'from pathlib import Path; from referee.hosting.newbot import copy_protos; \
		copy_protos(Path("sample_bots/node_random"))'
