"""The learning model and file format: parsing, YAML pitfalls, round trips, bad input."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from lorebook import Lorebook
from lorebook.errors import LoreError, UsageError
from lorebook.knowledge.fileformat import LearningFormatError, parse_learning, render_learning
from lorebook.knowledge.ids import new_learning_id, slugify
from lorebook.knowledge.model import Learning, validate_id
from lorebook.knowledge.store import LearningStore
from lorebook.redact.sanitize import Sanitizer

REPO = Path(__file__).resolve().parents[1]

DESIGN_EXAMPLE = """---
id: 2026-11-22-rls-policy-blocks-insert
title: RLS policy blocks INSERT with the anon key
kind: pattern
category: database
severity: high
tags: [rls, supabase]
status: published
created: 2026-11-22
source: {epic: epic-012, issue: null, session: null}
anchors: [supabase/policies.sql]
supersedes: []
solutions:
  - id: s1
    text: Use the service-role key for admin mutations
prevention:
  - Check RLS policies before using the anon key for mutations
---
## Problem
Inserts fail with 403.

## Root Cause
The anon key is subject to the RLS policy.

## Solution
Use the service-role key on the server.

Never ship it to the browser.

## Key Takeaway
Check RLS before mutating with the anon key.
"""


def test_design_example_parses_into_the_model() -> None:
    learning = parse_learning(DESIGN_EXAMPLE)
    assert learning.id == "2026-11-22-rls-policy-blocks-insert"
    assert learning.kind == "pattern"
    assert learning.severity == "high"
    assert learning.created == date(2026, 11, 22)
    assert learning.source.epic == "epic-012"
    assert learning.source.issue is None
    assert learning.solutions[0].id == "s1"
    assert learning.prevention == ["Check RLS policies before using the anon key for mutations"]
    assert learning.sections()["Root Cause"] == "The anon key is subject to the RLS policy."
    assert learning.takeaway == "Check RLS before mutating with the anon key."


def test_design_example_round_trips_byte_for_byte() -> None:
    assert render_learning(parse_learning(DESIGN_EXAMPLE)) == DESIGN_EXAMPLE


def test_takeaway_falls_back_to_first_paragraph_of_solution() -> None:
    text = DESIGN_EXAMPLE.split("## Key Takeaway")[0]
    assert parse_learning(text).takeaway == "Use the service-role key on the server."


@pytest.mark.parametrize("path", sorted((REPO / "learnings").glob("*.md")), ids=lambda p: p.name)
def test_the_repositorys_own_learnings_parse_and_round_trip(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    learning = parse_learning(text, path)
    assert learning.id == path.stem
    assert learning.status == "published"
    assert learning.takeaway
    assert render_learning(learning) == text


@pytest.mark.parametrize(
    "value", ["no", "yes", "on", "2026-01-01", "1.10", "0o17", "null-ish", "1e3", "~x", "true"]
)
def test_free_text_keeps_yaml_look_alikes_as_written(value: str) -> None:
    text = (
        f"---\nid: a-1\ntitle: {value}\ntags: [{value}, b]\nstatus: draft\n"
        f"created: 2026-11-22\nprevention: [{value}]\nsolutions:\n  - id: 1.10\n"
        f"    text: {value}\n---\nbody\n"
    )
    learning = parse_learning(text)
    assert learning.title == value
    assert learning.tags == [value, "b"]
    assert learning.prevention == [value]
    assert learning.solutions[0].id == "1.10"
    assert learning.solutions[0].text == value
    # written back so that any YAML reader sees the same strings
    again = parse_learning(render_learning(learning))
    assert again.title == value and again.tags == [value, "b"]
    import yaml

    front = render_learning(learning).split("---\n")[1]
    assert yaml.safe_load(front)["title"] == value


def test_unknown_keys_survive_a_rewrite_in_order_and_as_written() -> None:
    text = (
        "---\nid: a-1\ntitle: T\nstatus: draft\ncreated: 2026-11-22\nzeta: 3\n"
        "alpha: {k: on}\nreviewers: [ann, bob]\n---\nbody\n"
    )
    learning = parse_learning(text)
    assert list(learning.extra) == ["zeta", "alpha", "reviewers"]
    learning.title = "Changed"
    out = render_learning(learning)
    assert "\nzeta: 3\n" in out  # plain as written, not '3'
    assert "k: on" in out
    again = parse_learning(out)
    assert again.extra == {"zeta": "3", "alpha": {"k": "on"}, "reviewers": ["ann", "bob"]}
    assert out.index("zeta") < out.index("alpha") < out.index("reviewers")


def test_source_and_solution_keep_unknown_keys() -> None:
    text = (
        "---\nid: a-1\ntitle: T\nstatus: draft\ncreated: 2026-11-22\n"
        "source: {epic: e-1, pr: '12'}\nsolutions:\n  - id: s1\n    text: x\n    owner: ann\n"
        "---\n"
    )
    learning = parse_learning(text)
    assert learning.source.model_extra == {"pr": "12"}
    out = parse_learning(render_learning(learning))
    assert out.source.model_extra == {"pr": "12"}
    assert out.solutions[0].model_extra == {"owner": "ann"}


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("id: a\ntitle: [\n", 3, "invalid YAML"),
        ("id: a\ntitle: t\nstatus: bogus\ncreated: 2026-11-22\n", 4, "status"),
        ("id: a\ntitle: t\nstatus: draft\ncreated: 2026-13-01\n", 5, "created"),
        ("id: a\ntitle: t\nstatus: draft\n", 1, "created: required"),
        ("id: a\ntitle: t\nstatus: draft\ncreated: 2026-11-22\nseverity: huge\n", 6, "severity"),
        ("id: ../x\ntitle: t\nstatus: draft\ncreated: 2026-11-22\n", 2, "invalid learning id"),
        ("- just\n- a list\n", 2, "mapping"),
        ("id: a\n[x]: y\n", 3, "keys must be plain text"),
        ("id: a\ntitle: t\nstatus: draft\ntitle: u\n", 5, "duplicate key 'title'"),
        ("id: a\nsource: {epic: e, epic: f}\n", 3, "duplicate key 'epic'"),
        ("id: a\ntitle: t\nstatus: draft\ncreated: 2026-11-22\ntags: [a, [b]]\n", 6, "tags"),
    ],
)
def test_malformed_front_matter_names_file_and_line(text: str, line: int, needle: str) -> None:
    with pytest.raises(LearningFormatError) as info:
        parse_learning(f"---\n{text}---\nbody\n", where="learnings/x.md")
    message = str(info.value)
    assert message.startswith(f"learnings/x.md:{line}: "), message
    assert needle in message
    assert "\n" not in message


def test_missing_or_unclosed_front_matter() -> None:
    with pytest.raises(LearningFormatError, match=r"^f.md:1: no front matter"):
        parse_learning("# just markdown\n", where="f.md")
    with pytest.raises(LearningFormatError, match=r"^f.md:1: front matter is not closed"):
        parse_learning("---\nid: a\n", where="f.md")


def test_the_front_matter_boundaries_are_lines_of_three_or_more_dashes() -> None:
    """The split the file format has always had (it was python-frontmatter's): a boundary is a
    whole line of three or more dashes, trailing blanks allowed; a BOM before the first one is
    dropped; `---` inside a line, or a dash line with text after it, is content."""
    base = "id: a\ntitle: t --- not a boundary\nstatus: draft\ncreated: 2026-01-01\n"
    for opening, closing in [("---", "---"), ("-----", "----"), ("---  ", "--- \t")]:
        learning = parse_learning(f"\ufeff{opening}\n{base}{closing}\n## Problem\n---x\n")
        assert (learning.id, learning.title) == ("a", "t --- not a boundary")
        assert learning.body == "## Problem\n---x\n"
    with pytest.raises(LearningFormatError, match=r"^f.md:1: no front matter"):
        parse_learning(f"--- x\n{base}---\n", where="f.md")
    with pytest.raises(LearningFormatError, match=r"^f.md:1: front matter is not closed"):
        parse_learning(f"---\n{base}---x\n-- \n", where="f.md")


def test_alias_bomb_is_refused_quickly() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 12)]
    text = "---\nid: a\ntitle: t\n" + "\n".join(lines) + "\n---\n"
    with pytest.raises(LearningFormatError) as info:
        parse_learning(text, where="bomb.md")
    assert str(info.value).startswith("bomb.md:5: YAML aliases are not allowed")


def test_python_tags_construct_nothing() -> None:
    text = (
        "---\nid: a\ntitle: !!python/object/apply:os.system [echo hi]\nstatus: draft\n"
        "created: 2026-11-22\n---\n"
    )
    with pytest.raises(LearningFormatError, match="title"):
        parse_learning(text)


def test_id_must_equal_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "other-name.md"
    with pytest.raises(LearningFormatError, match=r":2: id 'a-1' does not match the file name"):
        parse_learning("---\nid: a-1\ntitle: t\nstatus: draft\ncreated: 2026-11-22\n---\n", path)


@pytest.mark.parametrize("bad", ["a/b", "../x", "..", "a\\b", "", ".hidden", "a b", "x" * 161])
def test_validate_id_refuses_paths(bad: str) -> None:
    with pytest.raises(UsageError, match=r"invalid learning id|non-empty"):
        validate_id(bad)


def test_validate_id_accepts_file_names() -> None:
    assert validate_id("2026-11-22-x-abc123.md") == "2026-11-22-x-abc123"
    assert validate_id("auto-epic-12-20261122T1000") == "auto-epic-12-20261122T1000"


def test_ids_are_dated_slugs_with_a_random_suffix() -> None:
    ids = {new_learning_id("RLS policy blocks INSERT!", date(2026, 11, 22)) for _ in range(500)}
    assert len(ids) == 500  # same title, same day: never the same id
    sanitizer = Sanitizer()
    for lid in ids:
        assert lid.startswith("2026-11-22-rls-policy-blocks-insert-")
        assert validate_id(lid) == lid
        assert sanitizer.findings(f"id: {lid}") == []  # never mistaken for a secret
    assert slugify("Ünïcode — only") == "unicode-only"
    assert slugify("!!!") == "learning"
    assert len(slugify("word " * 40)) <= 48


def test_model_rejects_a_multi_line_title() -> None:
    with pytest.raises(ValueError, match="one line"):
        Learning(id="a", title="one\ntwo", status="draft", created=date(2026, 1, 1))


# -- the store -----------------------------------------------------------------------------
def _store(book: Lorebook) -> LearningStore:
    return LearningStore(book.layout, book.sanitizer)


def test_create_writes_a_sanitized_draft_named_by_its_id(book: Lorebook) -> None:
    store = _store(book)
    token = "ghp_" + "a" * 36
    learning = store.create(
        title=f"Leaked {token} in logs",
        tags=["no", "ci"],
        body=f"## Problem\nmail bob@example.com used {token}\n",
        source={"epic": "e-1"},
        extra={"reviewer": "ann"},
    )
    assert learning.path == book.layout.drafts / f"{learning.id}.md"
    text = learning.path.read_text()
    assert token not in text and token[:10] not in learning.id
    assert "bob@example.com" not in text
    assert "[REDACTED:github_token]" in text
    again = store.get(learning.id)
    assert again.status == "draft" and again.tags == ["no", "ci"]
    assert again.source.epic == "e-1" and again.extra == {"reviewer": "ann"}
    assert [x.id for x in store.all()] == [learning.id]
    assert [x.id for x in store.all(drafts=False)] == []


def test_create_published_and_refuse_an_existing_id(book: Lorebook) -> None:
    store = _store(book)
    learning = store.create(
        title="T", publish=True, learning_id="fixed-id", created=date(2026, 1, 2)
    )
    assert learning.path == book.layout.learnings / "fixed-id.md"
    assert learning.created == date(2026, 1, 2)
    before = learning.path.read_bytes()
    with pytest.raises(LoreError, match="already exists"):
        store.create(title="Other", learning_id="fixed-id")
    assert learning.path.read_bytes() == before
    assert not (book.layout.drafts / "fixed-id.md").exists()


def test_create_refuses_bad_input_and_writes_nothing(book: Lorebook) -> None:
    store = _store(book)
    for kwargs in (
        {"title": "T", "kind": "essay"},
        {"title": "T", "severity": "huge"},
        {"title": ""},
        {"title": "T", "learning_id": "../escape"},
        {"title": "T", "supersedes": ["a/b"]},
    ):
        with pytest.raises(UsageError):
            store.create(**kwargs)  # type: ignore[arg-type]
    assert list(book.layout.learnings.rglob("*.md")) == []
    assert not (book.root / "escape.md").exists()


def test_get_unknown_or_bad_id(book: Lorebook) -> None:
    store = _store(book)
    with pytest.raises(LoreError, match="no learning or draft with id 'nope'"):
        store.get("nope")
    with pytest.raises(UsageError, match="invalid learning id"):
        store.get("../../etc/passwd")


def test_write_rewrites_in_place_keeping_unknown_keys(book: Lorebook) -> None:
    store = _store(book)
    path = book.layout.drafts / "a-1.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "---\nid: a-1\ntitle: T\nstatus: draft\ncreated: 2026-11-22\n"
        "reviewed_by: [ann]\n---\n## Problem\nx\n"
    )
    learning = store.get("a-1")
    learning.tags = ["new"]
    assert store.write(learning) == path
    out = path.read_text()
    assert "reviewed_by: [ann]" not in out  # written block style, same content
    again = store.get("a-1")
    assert again.tags == ["new"] and again.extra == {"reviewed_by": ["ann"]}
    assert [p.name for p in path.parent.glob(".*")] == [".gitkeep"]  # no temp file left


def test_all_reports_bad_files_and_keeps_going(book: Lorebook) -> None:
    store = _store(book)
    good = store.create(title="Good")
    bad = book.layout.learnings / "bad.md"
    bad.write_text("---\nid: bad\ntitle: [\n---\n")
    problems: list[object] = []
    assert [x.id for x in store.all(on_problem=problems.append)] == [good.id]
    assert [str(p) for p in problems] == [
        "learnings/bad.md:3: invalid YAML front matter: did not find expected node content"
    ] or str(problems[0]).startswith("learnings/bad.md:")


def test_find_by_checksum(book: Lorebook) -> None:
    store = _store(book)
    learning = store.create(title="RCA", kind="rca", checksum="ab" * 32)
    assert store.find_by_checksum("ab" * 32) is not None
    assert store.find_by_checksum("ab" * 32).id == learning.id  # type: ignore[union-attr]
    assert store.find_by_checksum("cd" * 32) is None


def test_unwritable_directory_writes_nothing(book: Lorebook) -> None:
    store = _store(book)
    drafts = book.layout.drafts
    for child in drafts.iterdir():
        child.unlink()
    drafts.rmdir()
    drafts.write_text("not a directory\n")  # fails for root too, unlike chmod
    with pytest.raises(LoreError, match="nothing was written"):
        store.create(title="T")
    assert drafts.read_text() == "not a directory\n"
    assert sorted(p.name for p in book.layout.learnings.iterdir()) == ["drafts"]


def test_book_accessor_is_the_facade(book: Lorebook) -> None:
    learning = book.learnings.new(title="Plain body", body="It broke.")
    assert book.learnings is book.learnings
    assert learning.sections() == {
        "Problem": "It broke.",
        "Root Cause": "",
        "Solution": "",
        "Key Takeaway": "",
    }
    assert [d.id for d in book.learnings.drafts()] == [learning.id]
