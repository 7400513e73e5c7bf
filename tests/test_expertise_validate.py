"""Validate against the code, improve from the domain's globs, history from git."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import git
from lorebook import Lorebook, LoreError
from lorebook.expertise.schema import glob_regex
from lorebook.expertise.validate import MAX_PER_GLOB

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.fixture
def proj(store: Path) -> Path:
    git(store, "config", "user.name", "Test")
    git(store, "config", "user.email", "test@example.invalid")
    for rel in ("src/db/schema.sql", "src/db/models.py", "src/db/migrations/001_init.sql"):
        (store / rel).parent.mkdir(parents=True, exist_ok=True)
        (store / rel).write_text("-- x\n")
    recent = (NOW - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    (store / ".expertise" / "database.yaml").write_text(f"""\
# kept by the data team
domain: database
overview: Postgres
core_files:
  - src/db/schema.sql
  - src/db/models.py   # the ORM
  - src/db/migrations/
  - src/db/*.sql
# lessons, newest last
learned_from_failures:
  - issue: ancient
    error: old
    timestamp: "2026-09-01T00:00:00Z"
  - issue: written by hand, no date
    error: still relevant
  - issue: recent
    error: new
    timestamp: "{recent}"
  - issue: dated only
    error: a date without time
    timestamp: 2026-10-01
last_validated: "2026-11-01"
""")
    git(store, "add", "src", ".expertise/database.yaml")
    git(store, "commit", "-q", "-m", "db")
    return store


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def test_validation_after_files_are_deleted_in_a_commit(proj: Path) -> None:
    git(proj, "rm", "-q", "src/db/models.py")
    git(proj, "commit", "-q", "-m", "drop the ORM")
    book = Lorebook.open(proj, env={})
    [result] = book.expertise.validate("database", now=NOW)
    types = [c["type"] for c in result["changes"]]
    assert types == ["file_removed", "stale_failures_removed"]
    assert result["changes"][0]["data"] == "src/db/models.py"
    assert result["changes"][1]["data"] == {"count": 2, "issues": ["ancient", "dated only"]}
    content = book.expertise.get("database")
    assert content["core_files"] == ["src/db/schema.sql", "src/db/migrations/", "src/db/*.sql"]
    assert [e["issue"] for e in content["learned_from_failures"]] == [
        "written by hand, no date",
        "recent",
    ]
    assert content["last_validated"] == "2026-11-22T12:00:00Z"
    text = (proj / ".expertise" / "database.yaml").read_text()
    assert text.startswith("# kept by the data team\n")
    assert "  - src/db/schema.sql\n  - src/db/migrations/\n" in text
    assert 'last_validated: "2026-11-22T12:00:00Z"\n' in text
    assert result["committed"] == head(proj)
    body = git(proj, "log", "-1", "--format=%B")
    assert body.startswith("lore(expertise): database: 2 changes\n")
    assert "- file_removed: src/db/models.py no longer exists" in body


def test_validation_with_nothing_to_correct_commits_nothing(proj: Path) -> None:
    book = Lorebook.open(proj, env={})
    book.expertise.validate("database", now=NOW)  # removes the stale lessons
    before = head(proj)
    text = (proj / ".expertise" / "database.yaml").read_bytes()
    [again] = book.expertise.validate("database", now=NOW + timedelta(hours=1))
    assert again["changes_count"] == 0 and again["committed"] is None
    assert head(proj) == before
    assert (proj / ".expertise" / "database.yaml").read_bytes() == text


def test_failure_age_comes_from_config(proj: Path) -> None:
    (proj / ".lore" / "config.yaml").write_text("expertise:\n  failure_max_age_days: 1\n")
    book = Lorebook.open(proj, env={})
    [result] = book.expertise.validate("database", now=NOW)
    assert result["changes"][0]["data"]["count"] == 3  # the 3-day-old lesson goes too


def test_validate_all_and_domains_without_files(proj: Path) -> None:
    book = Lorebook.open(proj, env={})
    results = book.expertise.validate(now=NOW)
    assert [r["domain"] for r in results] == ["database"]
    [missing] = book.expertise.validate("api", now=NOW)
    assert missing["status"] == "no_expertise"
    assert not (proj / ".expertise" / "api.yaml").exists()


def test_improve_adds_files_matching_the_globs(proj: Path) -> None:
    (proj / ".gitignore").write_text("generated/\n")
    (proj / "generated" / "db").mkdir(parents=True)
    (proj / "generated" / "db" / "dump.sql").write_text("x")  # ignored by git: never added
    book = Lorebook.open(proj, env={})
    result = book.expertise.improve("database")
    added = [c["data"] for c in result["changes"]]
    assert added == ["src/db/migrations/001_init.sql"]
    assert result["committed"] == head(proj)
    again = book.expertise.improve("database")
    assert again["changes_count"] == 0 and again["committed"] is None


def test_improve_takes_at_most_twenty_per_glob_and_creates_the_file(proj: Path) -> None:
    for i in range(30):
        (proj / "tests" / f"test_{i:02}.py").parent.mkdir(exist_ok=True)
        (proj / "tests" / f"test_{i:02}.py").write_text("")
    book = Lorebook.open(proj, env={})
    result = book.expertise.improve("testing")
    found = [c["data"] for c in result["changes"]]
    assert found == [f"tests/test_{i:02}.py" for i in range(MAX_PER_GLOB)]
    text = (proj / ".expertise" / "testing.yaml").read_text()
    assert text.startswith("# Expertise for the testing domain")
    assert git(proj, "show", "--name-only", "--format=", "HEAD").split() == [
        ".expertise/testing.yaml"
    ]


def test_improve_outside_git_walks_the_tree(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "api").mkdir(parents=True)
    (root / "api" / "users.py").write_text("")
    (root / ".venv" / "api").mkdir(parents=True)
    (root / ".venv" / "api" / "x.py").write_text("")
    book = Lorebook.init(root, env={})
    result = book.expertise.improve("api")
    assert [c["data"] for c in result["changes"]] == ["api/users.py"]
    assert result["committed"] is None


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("**/*.sql", "a.sql", True),
        ("**/*.sql", "x/y/a.sql", True),
        ("*.sql", "x/a.sql", False),
        ("tests/**/test_*.py", "tests/test_a.py", True),
        ("tests/**/test_*.py", "tests/u/test_a.py", True),
        ("tests/**/test_*.py", "src/tests/test_a.py", False),
        ("docker-compose*.yml", "docker-compose.prod.yml", True),
        ("Dockerfile", "app/Dockerfile", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, hit: bool) -> None:
    assert bool(glob_regex(pattern).match(path)) is hit


def test_history_follows_renames_and_lists_the_changes(proj: Path) -> None:
    git(proj, "rm", "-q", "src/db/models.py")
    git(proj, "commit", "-q", "-m", "drop the ORM")
    book = Lorebook.open(proj, env={})
    book.expertise.validate("database", now=NOW)
    git(proj, "mv", ".expertise/database.yaml", ".expertise/data.yaml")
    git(proj, "commit", "-q", "-m", "rename the domain")
    entries = book.expertise.history("data")
    assert [e["subject"] for e in entries] == [
        "rename the domain",
        "lore(expertise): database: 2 changes",
        "db",
    ]
    assert entries[1]["lorebook"] is True and entries[0]["lorebook"] is False
    assert entries[1]["changes"][0] == "file_removed: src/db/models.py no longer exists"


def test_history_outside_git_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    book = Lorebook.init(root, env={})
    with pytest.raises(LoreError, match="not a git repository"):
        book.expertise.history("api")
