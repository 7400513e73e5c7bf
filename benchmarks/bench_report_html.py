"""`lore report --html` against the text report of the same 30 days, on a generated store.

    .venv/bin/python benchmarks/bench_report_html.py [--workdir /tmp/lore-bench-html]
        [--actions 100000] [--days 30] [--runs 5] [--json-out FILE]

A store of `--actions` actions over `--days` days from `generate_store.py` (cached under
`--workdir`), its catalog built once (`lore catalog`). Measured, fresh processes, interleaved,
medians of `--runs`:

* text   `lore report --days 30`
* html   `lore report --days 30 --html FILE` (the same report, the window's sessions, the page)

and then the html report with the catalog's day roll-ups forgotten before each run (the first
report after a sync that rolled nothing up: it rolls up every whole day of its window).

The issue's target is the HTML report of 30 days at 1,000,000 actions in at most 2 s; this
measures the size given and the ratio html/text (what the page adds to the report).
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from _common import (
    HERE,
    PYTHON,
    clean_env,
    fmt_ms,
    idle_note,
    interleaved,
    lore_script,
    machine,
    median,
    write_results,
)


def forget_rollups(root: Path) -> None:
    """Forget the catalog's day roll-ups (a catalog without the table has none to forget)."""
    conn = sqlite3.connect(root / ".lore" / "cache" / "catalog.sqlite")
    try:
        conn.execute("DELETE FROM rolled")
        conn.commit()
    except sqlite3.OperationalError:
        pass
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/lore-bench-html"))
    parser.add_argument("--actions", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json-out")
    args = parser.parse_args(argv)

    root = args.workdir / f"store-{args.actions}-{args.days}d"
    if not (root / "actionlog").exists():
        print(f"generating {args.actions} actions over {args.days} days ...", flush=True)
        subprocess.run([PYTHON, str(HERE / "generate_store.py"), str(root), "--actions",
                        str(args.actions), "--days", str(args.days)], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
    env = clean_env(LORE_ROOT=str(root))
    lore = [PYTHON, str(lore_script())]
    subprocess.run([*lore, "catalog"], env=env, check=True, capture_output=True)
    page = args.workdir / "report.html"
    window = ["report", "--days", str(args.days)]
    times = interleaved(
        {"text": [*lore, *window], "html": [*lore, *window, "--html", str(page)]},
        args.runs,
        env=env,
    )
    text, html = median(times["text"]), median(times["html"])
    # the first report after a sync that rolled nothing up (a catalog built in the background,
    # or one of a lorebook before roll-ups): it rolls up every whole day of its window itself
    first = []
    for _ in range(args.runs):
        forget_rollups(root)
        started = time.perf_counter()
        subprocess.run([*lore, *window, "--html", str(page)], env=env, check=True,
                       capture_output=True)  # fmt: skip
        first.append(time.perf_counter() - started)
    print(f"machine: {machine()}")
    print(f"{args.actions} actions, {args.days} days, medians of {args.runs} runs {idle_note()}")
    print(f"  text  {fmt_ms(text)}")
    print(f"  html  {fmt_ms(html)}  ({html / text:.2f}x the text report; page "
          f"{page.stat().st_size / 1024:.0f} KiB)")  # fmt: skip
    print(f"  html, no day rolled up yet (the report rolls them up)  {fmt_ms(median(first))}")
    write_results(args.json_out, "bench_report_html", {
        "actions": args.actions, "days": args.days, "runs": args.runs,
        "text_s": text, "html_s": html, "ratio": html / text, "page_bytes": page.stat().st_size,
        "html_rolling_up_s": median(first),
    })  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
