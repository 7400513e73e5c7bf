"""RCA lessons: the pure template, idempotency by checksum, the failure subscriber, bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from conftest import assert_one_error_line, clean_env, cli_run, lore, stored_actions
from lorebook import Lorebook
from lorebook.errors import UsageError
from lorebook.knowledge.rca import RCAReport, build_lesson_content, lesson_tags, parse_report

REPORT = {
    "title": "Deploy failed on a port conflict",
    "task_id": "t-17",
    "epic_id": "epic-011",
    "project_id": "consilio",
    "rootCause": "A stale preview container held port 5000.",
    "failedStrategies": ["restart the container", "bump the port by hand"],
    "correctiveAction": "Allocate ports from the registry.",
    "preventionNotes": "Never hard-code service ports.",
    "tags": ["deploy", "ports"],
    "created_at": 1795000000000,  # Unix ms, as in the report format
}


def drafts(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "learnings" / "drafts").glob("*.md"))


def published(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "learnings").glob("*.md"))


def test_lesson_content_is_exactly_the_template() -> None:
    report = parse_report(REPORT, "r.yaml")
    assert build_lesson_content(report) == (
        "# RCA Lesson: Deploy failed on a port conflict\n\n"
        "## Root Cause\nA stale preview container held port 5000.\n\n"
        "## Failed Strategies\n- restart the container\n- bump the port by hand\n\n"
        "## Corrective Action\nAllocate ports from the registry.\n\n"
        "## Prevention Notes\nNever hard-code service ports."
    )
    assert build_lesson_content(report) == build_lesson_content(parse_report(REPORT, "again"))


def test_tags_and_snake_case_fields() -> None:
    report = parse_report(
        {
            "title": "T",
            "root_cause": "RC",
            "corrective_action": "CA",
            "failed_strategies": ["S1", "S1"],
            "tags": "a, b",
        },
        "r",
    )
    assert lesson_tags(report) == ["rca", "a", "b", "failed_strategy:S1"]
    assert build_lesson_content(report).startswith("# RCA Lesson: T\n")
    assert "- S1\n- S1" in build_lesson_content(report)


def test_add_writes_one_rca_learning_and_returns_it_again(book: Lorebook) -> None:
    first = book.knowledge.add_rca(parse_report(REPORT, "r.yaml"))
    assert first.created
    learning = first.learning
    assert (learning.kind, learning.status) == ("rca", "draft")
    assert learning.tags == [
        "rca",
        "deploy",
        "ports",
        "failed_strategy:restart the container",
        "failed_strategy:bump the port by hand",
    ]
    assert (learning.source.task, learning.source.epic) == ("t-17", "epic-011")
    text = build_lesson_content(parse_report(REPORT, "r.yaml"))
    assert learning.checksum == hashlib.sha256(text.encode()).hexdigest()
    on_disk = book.learnings.get(learning.id)
    assert on_disk.body.strip() == text and on_disk.checksum == learning.checksum
    assert str(on_disk.created) == "2026-11-18"  # from created_at (ms)
    second = book.knowledge.add_rca(parse_report(REPORT, "r.yaml"))
    assert not second.created and second.learning.id == learning.id
    assert len(drafts(book.root)) == 1
    logged = [a for a in stored_actions(book.root) if a["type"] == "learning_draft"]
    assert len(logged) == 1 and logged[0]["context"]["learning"] == learning.id


def test_publish_setting_writes_a_published_lesson(store: Path) -> None:
    (store / ".lore" / "config.yaml").write_text("rca:\n  publish: true\n")
    book = Lorebook.open(store, env={})
    result = book.knowledge.add_rca(parse_report(REPORT, "r"))
    assert result.learning.status == "published"
    assert published(store) == [f"{result.learning.id}.md"] and drafts(store) == []
    assert stored_actions(store)[-1]["type"] == "learning_promoted"


def test_secrets_never_reach_the_lesson(book: Lorebook) -> None:
    report = dict(REPORT, rootCause="The deploy used token ghp_" + "a1B2" * 9 + " from env.")
    learning = book.knowledge.add_rca(parse_report(report, "r")).learning
    text = Path(str(learning.path)).read_text()
    assert "ghp_" not in text and "[REDACTED" in text
    assert book.knowledge.add_rca(parse_report(report, "r")).learning.id == learning.id


def test_failed_action_with_rca_context_creates_the_lesson_once(book: Lorebook) -> None:
    rca = {k: v for k, v in REPORT.items() if k not in ("epic_id", "task_id")}
    first = book.log(
        "deploy",
        session="s",
        outcome="failure",
        epic="epic-4",
        context={"rca": rca, "task_id": "t-9"},
    )
    names = drafts(book.root)
    assert len(names) == 1
    learning = book.learnings.get(names[0][:-3])
    assert (learning.kind, learning.source.epic, learning.source.task) == ("rca", "epic-4", "t-9")
    book.log(
        "deploy",
        session="s",
        outcome="failure",
        epic="epic-4",
        context={"rca": rca, "task_id": "t-9"},
    )
    assert drafts(book.root) == names  # idempotent
    logged = [a for a in stored_actions(book.root) if a["type"] == "learning_draft"]
    assert len(logged) == 1 and logged[0]["context"]["trigger"] == first["id"]


def test_successful_outcome_creates_nothing(book: Lorebook) -> None:
    book.log("deploy", session="s", outcome="success", context={"rca": REPORT})
    book.log("deploy", session="s", outcome="blocked", context={"rca": REPORT})
    assert drafts(book.root) == []


def test_bad_rca_in_context_warns_and_keeps_the_action(
    book: Lorebook, capsys: pytest.CaptureFixture[str]
) -> None:
    record = book.log("deploy", session="s", outcome="failure", context={"rca": {"title": "x"}})
    err = capsys.readouterr().err
    assert "missing required field(s): rootCause, correctiveAction" in err
    actions = stored_actions(book.root)
    assert actions[0]["id"] == record["id"]
    assert (actions[1]["type"], actions[1]["outcome"]) == ("learning_draft", "failure")
    assert drafts(book.root) == []


def test_cli_rca_add_file_json_and_stdin(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "rca.json"
    path.write_text(json.dumps(REPORT))
    env = clean_env(store)
    first = lore("rca", "add", str(path), "--json", env=env)
    assert first.code == 0, first.err
    data = json.loads(first.out)
    assert data["kind"] == "rca" and data["created_now"] is True
    again = cli_run(["rca", "add", "-"], input=path.read_text(), env={"LORE_ROOT": str(store)})
    assert again.code == 0
    assert again.out.startswith(f"already present: {data['id']}")
    assert drafts(store) == [f"{data['id']}.md"]


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("title: x\nrootCause: [a\n", ["bad.yaml:2", "invalid YAML"]),
        ("title: x\n", ["bad.yaml", "missing required field(s): rootCause, correctiveAction"]),
        ("a: &a [1]\nb: *a\n", ["bad.yaml:2", "aliases"]),
        ("- just\n- a list\n", ["bad.yaml", "must be a mapping"]),
        (
            "title: x\nrootCause: r\ncorrectiveAction: c\nfailedStrategies: {a: 1}\n",
            ["bad.yaml:4", "failedStrategies", "list of strings"],
        ),
        (
            "title: x\nrootCause: r\ncorrectiveAction: c\ncreated_at: soon\n",
            ["bad.yaml:4", "created_at"],
        ),
    ],
)
def test_cli_rca_add_bad_input(store: Path, tmp_path: Path, text: str, needles: list[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    result = cli_run(["rca", "add", str(bad)], env={"LORE_ROOT": str(store)})
    assert_one_error_line(result, *needles)
    assert drafts(store) == [] and stored_actions(store) == []


def test_cli_rca_add_bad_json_and_missing_file(store: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"title": "x",\n  "rootCause": }\n')
    assert_one_error_line(
        lore("rca", "add", str(bad), env=clean_env(store)), "bad.json:2", "invalid JSON"
    )
    assert_one_error_line(
        lore("rca", "add", str(tmp_path / "nope.yaml"), env=clean_env(store)),
        "nope.yaml",
        "cannot be read",
    )
    assert drafts(store) == []


def test_parse_report_rejects_wrong_types() -> None:
    with pytest.raises(UsageError, match="'title' must be one line"):
        parse_report({"title": "a\nb", "rootCause": "r", "correctiveAction": "c"}, "r")
    with pytest.raises(UsageError, match="'rootCause' must be text"):
        parse_report({"title": "a", "rootCause": {"x": 1}, "correctiveAction": "c"}, "r")
    report = parse_report(
        {
            "title": "a",
            "rootCause": "r",
            "correctiveAction": "c",
            "preventionNotes": ["one", "two"],
            "created_at": "2026-01-02",
        },
        "r",
    )
    assert isinstance(report, RCAReport)
    assert report.prevention_notes == "- one\n- two" and str(report.created) == "2026-01-02"


def test_lore_log_fast_path_adds_the_rca_lesson_once(store: Path) -> None:
    context = json.dumps({"rca": REPORT})
    env = clean_env(store)
    for _ in range(2):
        result = lore("log", "deploy", "--outcome", "failure", "--context", context, env=env)
        assert result.code == 0 and result.err == "", result.err
    [name] = drafts(store)
    assert name.endswith(".md") and "-rca-deploy-failed-on-a-port-conflict-" in name
    types = [a["type"] for a in stored_actions(store)]
    assert types == ["deploy", "learning_draft", "deploy"]
    ok = lore("log", "deploy", "--outcome", "success", "--context", context, env=env)
    assert ok.code == 0 and drafts(store) == [name]
