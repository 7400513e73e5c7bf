"""Tables keep their columns in line whatever the length of an id (one layout helper)."""

from __future__ import annotations

from pathlib import Path

from conftest import cli_run
from lorebook import Lorebook
from lorebook.render.eval import eval_text
from lorebook.render.expertise import table as expertise_table

LONG = "auto-epic-012-authentication-and-session-refresh-20261124-101500"


def test_columns_widen_to_the_longest_cell() -> None:
    from lorebook.render.table import columns

    lines = columns(("ID", "N", "NOTE"), [("a", 1, "x"), (LONG, 12, "y"), "  a note"],
                    right=(1,))  # fmt: skip
    assert lines[0].index("N") == lines[1].index("1") == lines[2].rindex("12") + 1  # right edge
    assert lines[1].index("x") == lines[2].index("y") == lines[0].index("NOTE")
    assert lines[3] == "  a note"  # a full-width line: passed through, widens nothing
    assert columns(None, []) == []


def test_learnings_and_stats_align_with_long_ids(book: Lorebook) -> None:
    book.learnings.new(title="Short one", publish=True, learning_id="rls")
    book.learnings.new(title="Long one", publish=False, learning_id=LONG)
    root = str(book.root)
    listed = cli_run(["--root", root, "learnings"])
    assert listed.code == 0, listed.err
    lines = listed.out.splitlines()
    # both titles, and both statuses, start in one column
    assert lines[0].index("Short") == lines[1].index("Long"), listed.out
    assert lines[0].index("published") == lines[1].index("draft"), listed.out
    stats = cli_run(["--root", root, "stats"])
    assert stats.code == 0, stats.err
    rows = {line.split()[0]: line for line in stats.out.splitlines()}
    # the APPLIED figures end where the header ends, however long the id
    col = rows["ID"].index("APPLIED") + len("APPLIED") - 1
    assert rows["rls"][col] == rows[LONG][col] == "0", stats.out
    assert rows["rls"].index(" -") == rows[LONG].index(" -"), stats.out


def test_expertise_and_eval_tables_align() -> None:
    rows = [
        {"domain": "a-very-long-domain-name", "exists": True, "lines": 120,
         "entries": {"core_files": 3, "learned_from_failures": 2, "effective_patterns": 1},
         "last_validated": "2026-11-20"},
        {"domain": "db", "exists": False},
    ]  # fmt: skip
    lines = expertise_table(rows).splitlines()
    assert lines[0].index("LINES") + len("LINES") == lines[1].index("120") + 3
    report = {"queries_file": "eval.yaml", "queries": 1, "per_query": [],
              "metrics": {"a-much-longer-mode": {"recall@1": 1.0, "recall@5": 1.0, "mrr@10": 1.0},
                          "bm25": {"recall@1": 0.5, "recall@5": 0.5, "mrr@10": 0.5}}}  # fmt: skip
    table = eval_text(report).splitlines()[2:]
    assert len({line.index("recall@1") + 8 for line in table[:1]} |
               {line.index(" 1.00") + 5 for line in table[1:2]} |
               {line.index(" 0.50") + 5 for line in table[2:3]}) == 1  # fmt: skip


def test_report_breakdown_aligns_long_keys(store: Path) -> None:
    book = Lorebook.open(store, env={})
    book.log("a_very_long_action_type_name_here", session="s1")
    book.log("commit", session="s1")
    out = cli_run(["--root", str(store), "report", "--group-by", "type"]).out
    rows = [line for line in out.splitlines() if " ok " in line]
    assert len(rows) == 2 and len({line.index(" ok ") for line in rows}) == 1, out
