"""`lore export --format csv`: no cell can become a spreadsheet formula (OWASP CSV injection)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from conftest import cli_run
from lorebook import Lorebook


@pytest.mark.parametrize("lead", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cells_cannot_start_a_formula(store: Path, tmp_path: Path, lead: str) -> None:
    book = Lorebook.open(store, env={})
    formula = f'{lead}HYPERLINK("http://evil.example","x")'
    s = book.start_session(session_id="s-csv", agent=f"{lead}agent", project=f"{lead}proj")
    s.log(
        "deploy",
        outcome="failure",
        epic=f"{lead}epic",
        error=formula,
        context={"task": f"{lead}cmd|' /C calc'!A0"},
    )
    out = tmp_path / "out.csv"
    result = cli_run(["--root", str(store), "export", "--format", "csv", "-o", str(out)])
    assert result.code == 0, result.err
    (row,) = [
        r
        for r in csv.DictReader(out.open(newline="", encoding="utf-8"))
        if r["output.action_taken"] == "deploy"
    ]
    for field in (
        "output.error",
        "input.epic_id",
        "metadata.supervisor_type",
        "metadata.project",
        "input.task",
    ):
        assert row[field].startswith("'" + lead), (field, row[field])
    assert row["output.error"] == "'" + formula  # only the quote added: nothing else lost
    assert row["output.outcome"] == "failure"  # safe cells are written as they are
    raw = out.read_text(encoding="utf-8")
    assert "\n\"'" in raw or ",\"'" in raw  # the neutralised cells are quoted fields
