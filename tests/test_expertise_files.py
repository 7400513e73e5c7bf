"""Expertise files on disk: round-trip fidelity, refusals of bad files, redaction, pruning."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import git
from lorebook import Lorebook, LoreError
from lorebook.expertise import files as F
from lorebook.expertise.prune import enforce_limit
from lorebook.redact.sanitize import Sanitizer

HUMAN = """\
# Database expertise for orders-service. Written by the team; keep it short.
domain: database
overview: "PostgreSQL 16, migrations with alembic"   # reviewed 2026-10
# the files everybody touches
core_files:
  - db/schema.sql     # source of truth
  - 'db/migrations/'
# rules we agreed on in the design review

patterns:
  - "Always use UUID for primary keys"
  - 'JSONB for flexible metadata fields'
best_practices: [Run migrations in transactions, Add indexes for foreign keys]
learned_from_failures:
  - issue: "Windows encoding error"
    error: 'UnicodeDecodeError: ''charmap'' codec'
    solution: Always use encoding='utf-8' in open()
    sessions: [12, 15, 23]
    timestamp: "2026-11-20T10:00:00Z"
effective_patterns:
  - Read file -> Edit -> Run tests sequence works well
successful_techniques: []
custom_notes: {owner: data-team}   # a key lorebook does not know
last_validated: "2026-11-01"
# end of file: nothing below this line
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def only_insertions(before: str, after: str) -> list[str]:
    """The lines `after` adds; fails when any line of `before` changed or moved."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    added = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        assert op in ("equal", "insert"), (op, a[i1:i2], b[j1:j2])
        if op == "insert":
            added += b[j1:j2]
    return added


def test_untouched_file_round_trips_byte_for_byte(tmp_path: Path) -> None:
    path = write(tmp_path / "database.yaml", HUMAN)
    doc = F.read(path, "database.yaml", "database")
    assert F.dump(doc) == HUMAN


def test_learning_keeps_comments_order_and_quoting_outside_the_new_entries(
    store: Path,
) -> None:
    git(store, "config", "user.name", "Test")
    git(store, "config", "user.email", "test@example.invalid")
    write(store / "db" / "schema.sql", "create table orders (id uuid primary key);\n")
    write(store / "db" / "orders.py", "ORDERS = 'orders'\n")
    write(store / ".expertise" / "database.yaml", HUMAN)
    git(store, "add", "db", ".expertise/database.yaml")
    git(store, "commit", "-q", "-m", "orders schema and expertise")
    book = Lorebook.open(store, env={})
    with book.session(session_id="orders-1") as s:
        s.log("plan", context={"task": "add an index to the orders table"})
        s.log("tool_call", context={"tool": "Edit", "file_path": str(store / "db/orders.py")})
        s.log("validate", outcome="failure", error="psql: relation orders_idx already exists")
        s.log("validate", context={"description": "drop the duplicate index first"})
    result = book.expertise.learn("orders-1")
    assert result["domain"] == "database"
    after = (store / ".expertise" / "database.yaml").read_text(encoding="utf-8")
    # the one changed line outside new entries: the empty list the technique went into
    added = only_insertions(HUMAN.replace("techniques: []", "techniques:"), after)
    assert any("add an index to the orders table: plan → Edit → validate" in a for a in added)
    assert "  - db/orders.py\n" in added
    assert any("relation orders_idx already exists" in line for line in added)
    # new entries land inside their lists, not under the comment that precedes the next key
    assert after.index("  - db/orders.py") < after.index("# rules we agreed on")
    assert after.index("orders_idx") < after.index("effective_patterns:")
    assert after.rstrip().endswith("# end of file: nothing below this line")
    assert result["committed"]


def test_new_item_goes_before_a_trailing_comment_and_keeps_the_eol_comment(tmp_path: Path) -> None:
    path = write(tmp_path / "x.yaml", "core_files:\n  - a.py  # main\n# next section\nlast: 1\n")
    doc = F.read(path, "x.yaml", "general")
    F.seq_edit(doc.get_list("core_files"), lambda seq: seq.append("b.py"))
    assert F.dump(doc) == "core_files:\n  - a.py  # main\n  - b.py\n# next section\nlast: 1\n"


def test_empty_flow_list_becomes_a_block_list(tmp_path: Path) -> None:
    path = write(tmp_path / "x.yaml", "domain: api\ncore_files: []\n")
    doc = F.read(path, "x.yaml", "api")
    F.seq_edit(doc.get_list("core_files"), lambda seq: seq.append("api/app.py"))
    assert F.dump(doc) == "domain: api\ncore_files:\n  - api/app.py\n"


def test_missing_keys_are_added_before_the_closing_comment(tmp_path: Path) -> None:
    path = write(tmp_path / "x.yaml", "domain: api\n# the end\n")
    doc = F.read(path, "x.yaml", "api")
    F.seq_edit(doc.get_list("successful_techniques"), lambda seq: seq.append("t"))
    assert F.dump(doc) == "domain: api\nsuccessful_techniques:\n  - t\n# the end\n"


def test_indentation_style_of_the_file_is_kept(tmp_path: Path) -> None:
    path = write(tmp_path / "x.yaml", "core_files:\n- a.py\npatterns:\n- x\n")
    doc = F.read(path, "x.yaml", "api")
    F.seq_edit(doc.get_list("core_files"), lambda seq: seq.append("b.py"))
    assert F.dump(doc) == "core_files:\n- a.py\n- b.py\npatterns:\n- x\n"


def test_a_new_file_gets_a_header_and_every_key(tmp_path: Path) -> None:
    doc = F.read(tmp_path / "none.yaml", "none.yaml", "testing")
    assert doc.original is None
    text = F.dump(doc)
    assert text.startswith("# Expertise for the testing domain")
    for key in ("domain", "overview", "core_files", "learned_from_failures", "last_validated"):
        assert f"\n{key}:" in text


# -- refusals ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("domain: api\ncore_files:\n  - a\n bad: [\n", "x.yaml:4: invalid YAML"),
        ("domain: api\ncore_files: [a, b\n", "x.yaml:3: invalid YAML"),
        ("- a\n- b\n", "x.yaml:1: an expertise file is a mapping"),
        ("just a string\n", "not a str"),
        ("domain: api\ncore_files: src/a.py\n", "x.yaml:2: 'core_files' must be a list"),
        ("domain: api\n\tcore_files: []\n", "x.yaml:2: invalid YAML"),
    ],
)
def test_bad_files_are_refused_with_file_and_line(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path / "x.yaml", text)
    with pytest.raises(LoreError) as caught:
        F.read(path, "x.yaml", "api")
    message = str(caught.value)
    assert needle in message, message
    assert "\n" not in message


def test_alias_bomb_is_refused_without_expanding(tmp_path: Path) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    path = write(tmp_path / "bomb.yaml", "\n".join(lines) + "\ndomain: api\n")
    with pytest.raises(LoreError, match=r"bomb\.yaml: refused: its YAML aliases expand"):
        F.read(path, "bomb.yaml", "api")


def test_a_few_aliases_are_fine(tmp_path: Path) -> None:
    path = write(tmp_path / "x.yaml", "base: &b [a.py]\ncore_files: *b\n")
    assert list(F.read(path, "x.yaml", "api").data["core_files"]) == ["a.py"]


def test_non_utf8_and_huge_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_bytes(b"domain: \xff\n")
    with pytest.raises(LoreError, match=r"x\.yaml: invalid YAML: not UTF-8 at byte 9"):
        F.read(path, "x.yaml", "api")
    path.write_bytes(b"# " + b"x" * (F.MAX_FILE_BYTES + 1))
    with pytest.raises(LoreError, match="larger than"):
        F.read(path, "x.yaml", "api")


# -- redaction -----------------------------------------------------------------------------------
def test_every_string_and_comment_written_is_redacted(tmp_path: Path) -> None:
    token = "ghp_" + "a1B2c3D4" * 4 + "zzzz"
    path = write(tmp_path / "x.yaml", f'domain: api  # key {token}\noverview: "use {token}"\n')
    doc = F.read(path, "x.yaml", "api")
    entry = {"issue": "push failed", "error": f"remote: invalid token {token}"}
    F.seq_edit(doc.get_list("learned_from_failures"), lambda seq: seq.append(F.block(entry)))
    text = F.write(doc, Sanitizer())
    assert token not in path.read_text(encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")
    assert text.count("[REDACTED:github_token]") == 3
    assert 'overview: "use [REDACTED:github_token]"' in text  # the quoting style survives


# -- pruning -------------------------------------------------------------------------------------
def big_doc(tmp_path: Path) -> F.ExpertiseDoc:
    lines = ["domain: testing", "core_files:"]
    lines += [f"  - src/f{i:03}.py" for i in range(40)]
    lines += ["learned_from_failures:"]
    for i in range(30):
        lines += [f"  - issue: issue {i}", f"    error: error {i}", "    sessions: [s]"]
    lines += ["effective_patterns:"] + [f"  - pattern {i}" for i in range(25)]
    lines += ["successful_techniques:"] + [f"  - technique {i}" for i in range(20)]
    return F.read(write(tmp_path / "t.yaml", "\n".join(lines) + "\n"), "t.yaml", "testing")


def test_under_the_limit_nothing_is_pruned(tmp_path: Path) -> None:
    doc = big_doc(tmp_path)
    before = F.dump(doc)
    result = enforce_limit(doc, 1000)
    assert result.changes == [] and result.warning is None
    assert F.dump(doc) == before


def test_pruning_follows_the_seed_order_and_stops_when_under(tmp_path: Path) -> None:
    doc = big_doc(tmp_path)
    total = F.line_count(doc)  # 2 + 40 + 1 + 90 + 1 + 25 + 1 + 20 = 180
    # dropping 20 failure lessons (60 lines) is enough for a limit of total - 50
    result = enforce_limit(doc, total - 50)
    assert [c.data["key"] for c in result.changes] == ["learned_from_failures"]
    lessons = doc.data["learned_from_failures"]
    assert [e["issue"] for e in lessons] == [f"issue {i}" for i in range(20, 30)]  # the last 10
    assert len(doc.data["effective_patterns"]) == 25


def test_pruning_all_four_steps_then_warns(tmp_path: Path) -> None:
    doc = big_doc(tmp_path)
    result = enforce_limit(doc, 20)
    assert [c.data["key"] for c in result.changes] == [
        "learned_from_failures",
        "effective_patterns",
        "core_files",
        "successful_techniques",
    ]
    assert [str(p) for p in doc.data["effective_patterns"]] == [
        f"pattern {i}" for i in range(10, 25)
    ]
    assert [str(f) for f in doc.data["core_files"]] == [f"src/f{i:03}.py" for i in range(30)]
    assert [str(t) for t in doc.data["successful_techniques"]] == [
        f"technique {i}" for i in range(10, 20)
    ]
    assert result.lines == F.line_count(doc) > 20
    assert result.warning is not None and "t.yaml still has" in result.warning


def test_pruning_keeps_the_comment_after_a_shortened_list(tmp_path: Path) -> None:
    text = "core_files:\n" + "".join(f"  - f{i}.py\n" for i in range(35)) + "# below\nx: 1\n"
    doc = F.read(write(tmp_path / "c.yaml", text), "c.yaml", "api")
    enforce_limit(doc, 10)
    assert F.dump(doc).endswith("  - f29.py\n# below\nx: 1\n")


def test_the_projects_own_expertise_files_are_valid() -> None:
    """lorebook dogfoods expertise files: they parse, and every core file they name exists."""
    root = Path(__file__).resolve().parents[1]
    found = sorted((root / ".expertise").glob("*.yaml"))
    assert found
    for path in found:
        doc = F.read(path, path.name, path.stem)
        assert doc.data["domain"] == path.stem
        for rel in doc.data.get("core_files") or []:
            assert (root / str(rel)).exists(), (path.name, rel)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(st.text(max_size=80), min_size=1, max_size=4))
def test_any_text_written_reads_back_as_written(tmp_path: Path, texts: list[str]) -> None:
    """Whatever an error message holds (quotes, colons, control characters, '#', '- '), the file
    stays valid YAML and reads back to the text that was written: on one line, redacted."""
    path = write(tmp_path / "p.yaml", HUMAN)
    doc = F.read(path, "p.yaml", "database")
    entries = [{"issue": t, "error": t[::-1], "sessions": ["s"]} for t in texts]
    F.seq_edit(
        doc.get_list("learned_from_failures"), lambda seq: seq.extend(F.block(e) for e in entries)
    )
    sanitizer = Sanitizer()
    F.write(doc, sanitizer)
    back = F.read(path, "p.yaml", "database").data["learned_from_failures"][-len(texts) :]
    for entry, text in zip(back, texts, strict=True):
        assert entry["issue"] == sanitizer.redact_text(" ".join(text.split()))[0]
        assert entry["error"] == sanitizer.redact_text(" ".join(text[::-1].split()))[0]


def test_four_space_files_keep_their_indentation(tmp_path: Path) -> None:
    text = (
        "domain: api\nowner:\n    team: platform\n    chat: '#api'\ncore_files:\n"
        "    - api/app.py\npatterns:\n    - name: x\n      description: y\n"
    )
    doc = F.read(write(tmp_path / "x.yaml", text), "x.yaml", "api")
    assert F.dump(doc) == text
    F.seq_edit(doc.get_list("core_files"), lambda seq: seq.append("api/users.py"))
    assert F.dump(doc) == text.replace("app.py\n", "app.py\n    - api/users.py\n")
