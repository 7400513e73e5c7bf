"""`lore tui`: time to first paint, cold, on the `lore demo` store (or any `--store`).

    .venv/bin/python benchmarks/bench_tui.py [--store DIR] [--runs 7] [--json-out F]

Each run is a fresh `python` process that imports the TUI, opens the store, builds the app with
`make_app` and runs it headless at 80x24 until the first screen is composed, mounted and
painted (the sessions table filled); the figure is the wall time from spawning the process to
that moment, so it includes the interpreter, the imports of textual and lorebook and the first
queries. Target: under 1.5 s.

`--session-actions 10000` also times opening a session of that many actions as a timeline tree
(Enter on the sessions tab until the first page of its rows is painted), in-process;
`--pages 500` pages through the actions tab (`n`) of `--store` and reports the resident memory
every 100 pages (it should stay flat: the table holds one page and each page is its own short
keyset query; the open catalog cursor of the first version grew SQLite's page cache with every
page).

`--filters` times the Sessions tab's filtered queries on `--store` once its catalog exists, as
the tab makes them through the library (`Lorebook.sessions` with `parse_session_filters`'s
arguments, the first page of 200 and one more; a sort reads every match and orders it with
the tab's `sort_value`), in-process after the store is opened (that first read is timed once),
each the median of `--runs`. Target: 0.5 s each.
`--session-pages 50` moves through the Sessions tab's pages (`n`, and `p` back from the last
page) 50 times and reports the resident memory after the first page and every 10 moves.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import fmt_ms, machine, median, pct, verdict, write_results  # noqa: E402

TARGET = 1.5

CHILD = """
import asyncio, sys, time
from lorebook import Lorebook
from lorebook.tui.app import make_app

async def main():
    app = make_app(Lorebook.open(sys.argv[1]), load_model=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        print("painted", time.perf_counter(), flush=True)
        while not app.query_one("#sessions-table").row_count:
            await pilot.pause(0.01)
        print("sessions", time.perf_counter(), flush=True)
        print("cpu", time.process_time(), flush=True)  # less sensitive to a shared machine
        if len(sys.argv) > 2:  # --no-catalog: then the whole table, once the build is done
            print("building", int(app.book.catalog_building), flush=True)
            await asyncio.to_thread(app.book.wait_for_catalog)
            status = app.query_one("#sessions-status")
            while app.book.catalog_building or "Building" in str(status.render()):
                await pilot.pause(0.05)  # the table is filled again once the build is done
            print("built", time.perf_counter(), flush=True)

asyncio.run(main())
"""


def first_paint(store: Path) -> tuple[float, float, float]:
    """Seconds from spawning to the first paint and to the sessions table filled, and the
    CPU seconds the process had used by then (all threads)."""
    marks = run_child(store)
    return marks["painted"], marks["sessions"], marks["cpu"]


def run_child(store: Path, *extra: str) -> dict[str, float]:
    """The child's marks, times in seconds from spawning it."""
    started = time.perf_counter()  # perf_counter is CLOCK_MONOTONIC: comparable across processes
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(store), *extra],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    lines = (line.split() for line in done.stdout.splitlines())
    marks = {key: float(value) for key, value in lines}
    for key in ("painted", "sessions", "built"):
        if key in marks:
            marks[key] -= started
    return marks


def without_catalog(store: Path) -> dict[str, float]:
    """A fresh clone's first screen: the catalog removed, the TUI shows the last days at once
    and builds it in the background; sessions shown, and the whole table once built."""
    for path in (store / ".lore" / "cache").glob("catalog.sqlite*"):
        path.unlink()
    return run_child(store, "--no-catalog")


def rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def open_session(tmp: Path, count: int) -> dict[str, float]:
    """Enter on a session of `count` actions (tracked steps of 50 tool calls each, one call in
    ten failing) until its timeline tree is painted: seconds, the rows on screen and the
    widgets of the screen (a page of lines in one table, not a widget per record)."""
    import asyncio

    from lorebook import Lorebook
    from lorebook.tui.app import make_app

    root = tmp / "session"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    book = Lorebook.init(root, env={})
    session = book.start_session(agent="bench", project="bench")
    written = 0
    while written < count:
        step = session.log("build", outcome="in_progress", context={"description": "a step"})
        written += 1
        for n in range(min(48, count - written - 1)):
            failed = n % 10 == 9
            session.log(
                "tool_call",
                parent=step["id"],
                duration_s=0.2 + n / 100,
                outcome="failure" if failed else "success",
                context={"tool": "Bash", "command": f"pytest tests/test_{n}.py"},
            )
            written += 1
        if written < count:
            session.log("build", outcome="success", parent=step["id"])
            written += 1

    async def run() -> dict[str, float]:
        app = make_app(book, load_model=False)
        async with app.run_test(size=(80, 24)) as pilot:
            while not app.query_one("#sessions-table").row_count:
                await pilot.pause(0.01)
            started = time.perf_counter()
            await pilot.press("enter")
            while not (found := app.screen.query("#timeline")) or not found.first().row_count:
                await pilot.pause(0.01)
            await pilot.pause()  # painted
            took = time.perf_counter() - started
            return {
                "seconds": took,
                "rows": app.screen.query_one("#timeline").row_count,
                "widgets": len(list(app.screen.walk_children())),
            }

    return asyncio.run(run())


def page_through(store: Path, pages: int) -> list[tuple[int, float]]:
    """(page, resident MiB) every 100 pages of the actions tab."""
    import asyncio

    from lorebook import Lorebook
    from lorebook.tui.app import make_app

    async def run() -> list[tuple[int, float]]:
        app = make_app(Lorebook.open(store), load_model=False)
        seen = [(0, rss_mib())]
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("2", "f")
            await pilot.pause()
            for page in range(1, pages + 1):
                await pilot.press("n")
                if page % 100 == 0:
                    await pilot.pause()
                    seen.append((page, rss_mib()))
        return seen

    return asyncio.run(run())


FILTER_TARGET = 0.5


def filtered_queries(store: Path, runs: int) -> dict[str, float]:
    """Seconds (median of `runs`) of each of the Sessions tab's queries, named by what was
    typed in its filter (`sort <column>`: every match, ordered by that column)."""
    from lorebook import Lorebook
    from lorebook.tui.data import parse_session_filters
    from lorebook.tui.sessions import COLUMNS, FIRST_DESCENDING, SESSIONS_PAGE, sort_value

    subprocess.run([sys.executable, "-m", "lorebook", "catalog"], check=True, capture_output=True,
                   env={**os.environ, "LORE_ROOT": str(store)})  # fmt: skip
    started = time.perf_counter()
    book = Lorebook.open(store)
    first = book.sessions(limit=SESSIONS_PAGE + 1)  # the first screen: the catalog is synced
    opened = time.perf_counter() - started
    some = next((s for s in first if s.project and s.agent), first[0] if first else None)
    project = some.project if some and some.project else "-"
    agent = some.agent if some and some.agent else "-"
    word = (some.id[:8] if some else "x").lower()
    typed = [
        "", f"project={project}", f"agent={agent}", "status=ended", "status=disconnected",
        "status=active", "since=7d",
        f"until={time.strftime('%Y-%m-%d', time.gmtime(time.time() - 86400 * 3))}",
        word, f"project={project} agent={agent} since=14d", "nothing-matches-this",
    ]  # fmt: skip

    def query(text: str, column: int | None) -> None:
        """What the tab does with a filter typed, and with a sort by `column`."""
        args = parse_session_filters(text)
        if column is None:
            book.sessions(limit=SESSIONS_PAGE + 1, **args)
        else:
            down = COLUMNS[column] in FIRST_DESCENDING
            sorted(book.sessions(**args), key=lambda s: sort_value(s, column), reverse=down)

    def timed(text: str, column: int | None = None) -> float:
        took = []
        for _ in range(runs):
            started = time.perf_counter()
            query(text, column)
            took.append(time.perf_counter() - started)
        return median(took)

    out: dict[str, float] = {"(open the store, first page)": opened}
    for text in typed:
        out[text or "(none)"] = timed(text)
    for column, name in enumerate(COLUMNS):
        out[f"sort {name}"] = timed("", column)
    out[f"agent={agent} since=14d, sort actions"] = timed(f"agent={agent} since=14d", 4)
    book.close()
    return out


def page_sessions(store: Path, moves: int) -> list[tuple[int, float]]:
    """(moves, resident MiB) after the Sessions tab's first page and every 10 page moves (`n`
    to the last page, then `p` back to the first, and so on), in the running app."""
    import asyncio

    from lorebook import Lorebook
    from lorebook.tui.app import make_app

    async def run() -> list[tuple[int, float]]:
        app = make_app(Lorebook.open(store), load_model=False)
        async with app.run_test(size=(80, 24)) as pilot:
            table = app.query_one("#sessions-table")
            while not table.row_count:
                await pilot.pause(0.01)
            seen = [(0, rss_mib())]
            pane = table.parent
            forward = True
            for move in range(1, moves + 1):
                at = getattr(pane, "page", 0)
                # all read: the key moves the page at once (or there is no page that way)
                read = getattr(pane, "complete", False)
                await pilot.press("n" if forward else "p")
                for _ in range(1 if read else 500):  # else `n` reads them off the UI thread
                    await pilot.pause(0.01)
                    if getattr(pane, "page", 0) != at:
                        break
                else:  # no page further that way: turn back
                    forward = not forward
                if move % 10 == 0:
                    seen.append((move, rss_mib()))
        return seen

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, help="an existing store (default: a fresh demo)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--session-actions", type=int, default=0)
    parser.add_argument("--pages", type=int, default=0)
    parser.add_argument(
        "--filters",
        action="store_true",
        help="time the Sessions tab's filtered queries on --store (catalog built)",
    )
    parser.add_argument("--session-pages", type=int, default=0)
    parser.add_argument(
        "--no-catalog",
        action="store_true",
        help="also time the first screen of --store with its catalog removed",
    )
    parser.add_argument("--json-out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store
        if store is None:
            store = Path(tmp) / "demo"
            subprocess.run(
                [sys.executable, "-m", "lorebook", "demo", str(store)],
                check=True,
                capture_output=True,
            )
        first_paint(store)  # warm the OS file cache and bytecode once
        both = [first_paint(store) for _ in range(args.runs)]
        times = [paint for paint, _, _ in both]
        filled = [shown for _, shown, _ in both]
        cpu = [used for _, _, used in both]
        results: dict[str, object] = {
            "store": str(args.store or "lore demo"),
            "runs": args.runs,
            "first_paint_p50_s": median(times),
            "first_paint_p95_s": pct(times, 0.95),
            "sessions_shown_p50_s": median(filled),
            "cpu_to_sessions_p50_s": median(cpu),
        }
        print(
            f"sessions table filled p50 {fmt_ms(median(filled))}, CPU by then p50 "
            f"{fmt_ms(median(cpu))} ({fmt_ms(min(cpu))}-{fmt_ms(max(cpu))})"
        )
        if args.session_actions:
            opened = open_session(Path(tmp), args.session_actions)
            results["session_open_s"] = opened["seconds"]
            print(
                f"open a {args.session_actions}-action session's timeline tree: "
                f"{fmt_ms(opened['seconds'])} to first paint, {opened['rows']:.0f} rows in "
                f"its table, {opened['widgets']:.0f} widgets on the screen"
            )
        if args.filters:
            queries = filtered_queries(store, args.runs)
            results["filtered_s"] = queries
            worst = max(queries.values())
            print(
                f"sessions tab queries (median of {args.runs}), slowest "
                f"{fmt_ms(worst)} {verdict(worst, FILTER_TARGET)}:"
            )
            for text, took in queries.items():
                print(f"  {fmt_ms(took):>10}  {text}")
        if args.session_pages:
            moves = page_sessions(store, args.session_pages)
            results["sessions_rss_mib_by_move"] = moves
            print(
                "sessions tab, resident MiB by page move: "
                + ", ".join(f"{m}: {r:.0f}" for m, r in moves)
            )
        if args.no_catalog:
            fresh = [without_catalog(store) for _ in range(max(1, args.runs // 2))]
            results["no_catalog_sessions_p50_s"] = median([m["sessions"] for m in fresh])
            results["no_catalog_built_p50_s"] = median([m["built"] for m in fresh])
            results["no_catalog_building_at_first_paint"] = all(m["building"] for m in fresh)
            print(
                f"without a catalog: sessions shown p50 "
                f"{fmt_ms(results['no_catalog_sessions_p50_s'])} (building in the background: "
                f"{results['no_catalog_building_at_first_paint']}), whole table p50 "
                f"{fmt_ms(results['no_catalog_built_p50_s'])} ({len(fresh)} runs)"
            )
        if args.pages:
            memory = page_through(store, args.pages)
            results["rss_mib_by_page"] = memory
            print("resident MiB by page: " + ", ".join(f"{p}: {m:.0f}" for p, m in memory))
    print(f"machine: {machine()}")
    print(
        f"first paint p50 {fmt_ms(median(times))}, p95 {fmt_ms(pct(times, 0.95))} "
        f"({args.runs} runs) {verdict(median(times), TARGET)}"
    )
    write_results(args.json_out, "tui", results)


if __name__ == "__main__":
    main()
