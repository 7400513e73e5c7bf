"""`lore export`: training records in csv/json/jsonl, manifest, re-sanitized context, bad input."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, git, lore
from lorebook import Lorebook

NOW = datetime.now(UTC).replace(microsecond=0)
SECRET = "ghp_" + "Z9y8X7w6" * 5


@pytest.fixture
def logged(store: Path) -> Path:
    book = Lorebook.open(store, env={})
    s = book.start_session(
        session_id="s-1", agent="PS", project="consilio", now=NOW - timedelta(days=5)
    )
    s.log(
        "spawn",
        epic="epic-3",
        context={"task_description": "Implement JWT auth", "agent_id": "a1"},
        duration_s=12.5,
        now=NOW - timedelta(days=5),
    )
    s.log("commit", epic="epic-3", context={"files": ["a.py"]}, now=NOW - timedelta(days=2))
    o = book.start_session(
        session_id="o-1", agent="MS", project="odin", now=NOW - timedelta(days=1)
    )
    o.log(
        "deploy",
        outcome="failure",
        context={"service": "api"},
        error="port in use",
        now=NOW - timedelta(days=1),
    )
    # an agent's own line: a secret the writer never redacted
    shard = next((store / "actionlog").rglob("o-1.jsonl"))
    raw = json.loads(shard.read_text().splitlines()[-1])
    raw.update(
        id=raw["id"][:-4] + "ZZZZ",
        type="tool_call",
        outcome="success",
        context={"task": f"call api with {SECRET}", "token": SECRET},
    )
    with shard.open("a") as handle:
        handle.write(json.dumps(raw, separators=(",", ":"), sort_keys=True) + "\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "log")
    return store


def run_export(root: Path, *args: str) -> dict[str, Any]:
    result = cli_run(["--root", str(root), "export", "--json", *args])
    assert result.code == 0, result.err
    return dict(json.loads(result.out))


def test_jsonl_records_and_manifest(logged: Path) -> None:
    info = run_export(logged, "--format", "jsonl")
    path = logged / info["path"]
    assert info["path"].startswith("docs/training-data/training-data-")
    assert info["path"].endswith(".jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert info["record_count"] == len(records) == 4
    spawn = records[0]
    assert spawn == {
        "input": {
            "task": "Implement JWT auth",
            "epic_id": "epic-3",
            "context": {"task_description": "Implement JWT auth", "agent_id": "a1"},
        },
        "output": {"action_taken": "spawn", "outcome": "success", "duration_seconds": 12.5},
        "metadata": {
            "timestamp": spawn["metadata"]["timestamp"],
            "project": "consilio",
            "supervisor_type": "PS",
            "action_id": spawn["metadata"]["action_id"],
        },
    }
    assert [r["metadata"]["timestamp"] for r in records] == sorted(
        r["metadata"]["timestamp"] for r in records
    )
    assert records[1]["input"]["task"] == "commit"  # no task in the context: the type
    text = path.read_text()
    assert SECRET not in text and "[REDACTED" in text
    manifest = json.loads((logged / info["manifest"]).read_text())
    assert manifest["record_count"] == 4 and manifest["format"] == "jsonl"
    assert manifest["source_commit"] == git(logged, "rev-parse", "HEAD").strip()
    assert manifest["redactions"]["records"] == 1 and manifest["redactions"]["values"] >= 2
    assert manifest["filters"] == {
        "since": None,
        "until": None,
        "project": None,
        "type": None,
        "outcome": None,
        "agent": None,
        "include_context": True,
        "include_archive": False,
    }


def test_json_is_one_streamed_array(logged: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.json"
    info = run_export(logged, "--format", "json", "-o", str(out))
    data = json.loads(out.read_text())
    assert isinstance(data, list) and len(data) == info["record_count"] == 4
    empty = tmp_path / "none.json"
    run_export(logged, "--format", "json", "--project", "nothing", "-o", str(empty))
    assert json.loads(empty.read_text()) == []


def test_csv_flattens_context_as_json(logged: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.csv"
    run_export(logged, "--format", "csv", "-o", str(out))
    rows = list(csv.DictReader(out.open(newline="")))
    assert len(rows) == 4
    assert rows[0]["input.task"] == "Implement JWT auth"
    assert json.loads(rows[0]["input.context"]) == {
        "task_description": "Implement JWT auth",
        "agent_id": "a1",
    }
    assert rows[0]["output.duration_seconds"] == "12.5"
    assert rows[1]["output.duration_seconds"] == ""
    assert SECRET not in out.read_text()


def test_filters_and_no_context(logged: Path, tmp_path: Path) -> None:
    out = tmp_path / "f.jsonl"
    info = run_export(logged, "--project", "odin", "--no-context", "-o", str(out))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert info["record_count"] == 2
    assert {r["metadata"]["project"] for r in records} == {"odin"}
    assert all("context" not in r["input"] for r in records)
    assert info["redactions"]["values"] >= 1  # the task still came from the context
    window = run_export(logged, "--since", "3d", "--until", "36h", "-o", str(out))
    assert window["record_count"] == 1
    assert window["filters"]["since"] and window["filters"]["until"]


def test_export_through_the_entry_point(logged: Path) -> None:
    result = lore("export", "--format", "csv", env=clean_env(logged))
    assert result.code == 0, result.err
    assert result.out.startswith("exported 4 record(s) to docs/training-data/")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--since", "1d", "--until", "3d"], ["is not before --until"]),
        (["--since", "2999-01-01"], ["in the future"]),
        (["--since", "whenever"], ["--since", "7d"]),
        (["--format", "xml"], ["xml"]),
    ],
)
def test_bad_export_input(logged: Path, args: list[str], needles: list[str]) -> None:
    assert_one_error_line(cli_run(["--root", str(logged), "export", *args]), *needles)
    assert not (logged / "docs" / "training-data").exists()


def test_unwritable_output(logged: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = cli_run(["--root", str(logged), "export", "-o", str(blocker / "out.jsonl")])
    assert_one_error_line(result, "cannot write the export")
    assert blocker.read_text() == "x"
    assert not (logged / "docs" / "training-data").exists()


def test_failed_actions_keep_their_error(logged: Path, tmp_path: Path) -> None:
    out = tmp_path / "e.jsonl"
    run_export(logged, "-o", str(out))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    failed = [r for r in records if r["output"]["outcome"] == "failure"]
    assert [r["output"]["error"] for r in failed] == ["port in use"]
    # the agent-written tool_call line carries an error of its own; the others have none
    plain = [r for r in records if r["output"]["action_taken"] in ("spawn", "commit")]
    assert plain and all("error" not in r["output"] for r in plain)
    csv_out = tmp_path / "e.csv"
    run_export(logged, "--format", "csv", "-o", str(csv_out))
    rows = list(csv.DictReader(csv_out.read_text().splitlines()))
    assert [r["output.error"] for r in rows if r["output.outcome"] == "failure"] == ["port in use"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--type", "deploy"], {("deploy", "failure", "MS")}),
        (["--outcome", "failure"], {("deploy", "failure", "MS")}),
        (["--agent", "PS"], {("spawn", "success", "PS"), ("commit", "success", "PS")}),
        (["--agent", "MS", "--outcome", "success"], {("tool_call", "success", "MS")}),
    ],
)
def test_export_filters_by_type_outcome_agent(
    logged: Path, tmp_path: Path, args: list[str], expected: set[tuple[str, str, str]]
) -> None:
    out = tmp_path / "f.jsonl"
    info = run_export(logged, *args, "-o", str(out))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    got = {
        (r["output"]["action_taken"], r["output"]["outcome"], r["metadata"]["supervisor_type"])
        for r in records
    }
    assert got == expected and info["record_count"] == len(records)
    for flag, value in zip(args[::2], args[1::2], strict=True):
        assert info["filters"][flag.lstrip("-")] == value


def test_export_filter_values_are_redacted_and_checked(logged: Path, tmp_path: Path) -> None:
    info = run_export(logged, "--agent", SECRET, "-o", str(tmp_path / "s.jsonl"))
    assert info["record_count"] == 0 and SECRET not in json.dumps(info)
    assert_one_error_line(
        cli_run(["--root", str(logged), "export", "--outcome", "meh"]), "outcome", "meh"
    )
