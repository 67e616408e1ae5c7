"""Replay viewer benchmark: how long ``ttr replay view`` takes to write a large game's page,
how big the page is, and how fast it opens and steps in a real browser.

    python bench/viewer.py [--seed S] [--seats N] [--variant V] [--repeat R] [--out FILE]
                           [--strategy random|greedy|planner] [--json]

1. A record: one game of ``--variant`` (default ``mega``, the largest map and ticket set)
   between ``--seats`` in-process SDK bots (default 5, the most ``mega`` allows; random play
   makes the longest games) over real gRPC, recorded as ``ttr play`` records it.
2. Python: ``render_html`` (replay, film, page) timed, best of R; the page's size.
3. Browser (Debian's Chromium via Playwright, as the page tests use; skipped without them):
   the page opened from disk until the viewer has drawn its first frame (``TTR_READY``),
   measured inside the page from navigation start, best of R fresh pages; then every step
   from the first to the last with the Right arrow key, layout forced after each step, as
   ms per step. Target: under 1 s to open.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.games.registry import load
from referee.match import Clock, SeatBot, play_match
from sdk import StrategyBot, start_server
from sdk.strategies import CardRandomStrategy, GreedyStrategy, PlannerStrategy, RandomStrategy
from ttr_arena.pages.viewer import build_film, render_html

STRATEGIES = {"random": RandomStrategy, "greedy": GreedyStrategy, "planner": PlannerStrategy}
TARGET_OPEN_S = 1.0


def record_game(path: Path, variant: str, seats: int, seed: int, strategy: str) -> int:
    """Play one game over gRPC between in-process bots; the number of decisions."""
    bots = [StrategyBot(STRATEGIES[strategy], CardRandomStrategy) for _ in range(seats)]
    running = [start_server(b) for b in bots]
    try:
        seat_bots = [SeatBot(f"{strategy}{i}", "1", r.address) for i, r in enumerate(running)]
        play_match(
            load(variant), seat_bots, seed, Clock(move_ms=5000, bank_ms=60000), record_path=path
        )
    finally:
        for r in running:
            r.stop(grace=None)
    return len(json.loads(path.read_text(encoding="utf-8"))["actions"])


def best_of(repeat: int, fn: Any) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def browser_figures(page_path: Path, repeat: int) -> dict[str, float] | None:
    """Open and step figures in Chromium, or None (with the reason on stderr) without one."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.browser import chromium_path

    binary = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        binary = None
    if binary is None:
        print("no Chromium or Playwright: browser figures skipped", file=sys.stderr)
        return None
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    opens: list[float] = []
    walls: list[float] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary, args=args, headless=True)
        try:
            for _ in range(repeat):
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                page = context.new_page()
                t = time.perf_counter()
                page.goto(page_path.as_uri())
                page.wait_for_function("window.TTR_READY === true")
                walls.append(time.perf_counter() - t)
                opens.append(page.evaluate("window.TTR_READY_MS") / 1000)
                steps = page.evaluate("TTR.data().steps.length - 1")
                step_ms = page.evaluate(
                    """n => {
                      const t = performance.now();
                      for (let i = 0; i < n; i++) {
                        document.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowRight"}));
                        document.body.offsetHeight;  // force the layout of each step
                      }
                      return (performance.now() - t) / n;
                    }""",
                    steps,
                )
                assert page.evaluate("document.getElementById('slider').value") == str(steps)
                context.close()
        finally:
            browser.close()
    return {
        "open_s": min(opens),
        "open_wall_s": min(walls),
        "step_ms": step_ms,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", default="mega")
    parser.add_argument("--seats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--strategy", choices=sorted(STRATEGIES), default="random")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="keep the page here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ttr-bench-viewer-") as tmp:
        record = Path(tmp) / "game.json"
        decisions = record_game(record, args.variant, args.seats, args.seed, args.strategy)
        film_s = best_of(args.repeat, lambda: build_film(record))
        render_s = best_of(args.repeat, lambda: render_html(record))
        page = args.out or Path(tmp) / "game.html"
        page.write_text(render_html(record), encoding="utf-8")
        figures: dict[str, Any] = {
            "variant": args.variant,
            "seats": args.seats,
            "decisions": decisions,
            "record_bytes": record.stat().st_size,
            "page_bytes": page.stat().st_size,
            "film_s": film_s,
            "render_s": render_s,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}",
        }
        browser = browser_figures(page, args.repeat)
        if browser:
            figures.update(browser)
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    print(
        f"{args.variant}, {args.seats} seats ({args.strategy} bots, seed {args.seed}): "
        f"{decisions} decisions, record {figures['record_bytes'] / 1024:.0f} KiB"
    )
    print(f"render_html: {render_s * 1000:.0f} ms (of which the film {film_s * 1000:.0f} ms)")
    print(f"page: {figures['page_bytes'] / 1024:.0f} KiB, one file")
    if browser:
        ok = "OK" if browser["open_s"] < TARGET_OPEN_S else "OVER"
        print(
            f"open in Chromium: {browser['open_s'] * 1000:.0f} ms to the first frame "
            f"({browser['open_wall_s'] * 1000:.0f} ms as Playwright sees it); target "
            f"< {TARGET_OPEN_S * 1000:.0f} ms: {ok}"
        )
        print(f"step through all {decisions} steps: {browser['step_ms']:.2f} ms per step")
    print(figures["machine"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
